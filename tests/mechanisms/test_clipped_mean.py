"""CM, the clipped mean of IOME Section 3.1 with the private threshold of Section 3.2 (Theorem
3.2), its exact-threshold study (IOME Figure 9) and its batched sampler (docs/design.md §5.11);
and IOME with the IOME paper's own settings (config variant Shifted-CM, docs/design.md §5.5),
replayed against a hand computation of the IOME authors' steps."""
import math
import sys

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse

import mechanisms
from mechanisms import SharedSample, batched_clipped_mean, clipped_mean, iome, make_mechanism
from mechanisms.baselines import NON_PRIVATE

CM_MODULE = sys.modules["mechanisms.clipped_mean"]  # the module (the package's name is the function)
BOUNDS = (-4.0, 4.0)
# The config variant Shifted-CM (config/config.yaml): IOME as the IOME paper's experiments ran it.
IOME_PAPER = {"search_steps": 10, "clip_share": 0.25, "offset_factor": 1.0}


def gaussian_rows(n, d, seed, mean=0.0):
    return np.random.default_rng(seed).standard_normal((n, d)) + mean


def norms_of(x):
    return np.linalg.norm(x, axis=1)


def hand_search(values, *, target_rank, rho, lo, hi, steps, noise):
    """The private binary search as the IOME authors wrote it (quantile_binary_search): count the
    values <= mid, add N(0, T / (2 rho)), go right while the noisy count is <= the target rank."""
    left, right = lo, hi
    for step in range(steps):
        mid = (left + right) / 2.0
        noisy = np.sum(values <= mid) + math.sqrt(steps / (2.0 * rho)) * noise[step]
        if noisy <= target_rank:
            left = mid
        else:
            right = mid
    return (left + right) / 2.0


def hand_clipped_mean(x, *, rho, hi, noise, steps=10, share=0.25):
    """CM step by step (the authors' clipped_mean with our rank without int(), below): returns
    the estimate, C and the target rank. ``noise``: the T threshold normals, then the d noise normals."""
    n, d = x.shape
    p1, p2 = share * rho, (1.0 - share) * rho
    target = n - 2.0 * math.sqrt(d / (2.0 * p2)) - math.sqrt(steps / (2.0 * p1))
    norms = norms_of(x)
    clip = hand_search(norms, target_rank=target, rho=p1, lo=0.0, hi=hi, steps=steps, noise=noise[:steps])
    clipped = np.array([row * min(clip / norm, 1.0) for row, norm in zip(x, norms)])
    return clipped.mean(axis=0) + 2.0 * clip / math.sqrt(2.0 * p2) / n * noise[steps:], clip, target


# ---------------------------------------------------------------- the steps, replayed


@pytest.mark.parametrize("n,d,rho,mean", [(200, 3, 0.5, 0.0), (500, 16, 2.0, 1.5), (60, 1, 0.1, -0.5)])
def test_the_private_clipped_mean_is_the_steps_of_theorem_3_2_with_its_own_draws(n, d, rho, mean):
    x = gaussian_rows(n, d, 1, mean)
    estimate = clipped_mean(x, rho=rho, bounds=BOUNDS, rng=np.random.default_rng(5))
    noise = np.random.default_rng(5).standard_normal(10 + d)  # the search's T normals, then the noise's d
    expected, clip, target = hand_clipped_mean(x, rho=rho, hi=BOUNDS[1], noise=noise)
    assert estimate.diagnostics["clip_threshold"] == clip
    assert estimate.diagnostics["clip_target_rank"] == pytest.approx(target, rel=1e-14)
    np.testing.assert_allclose(estimate.mean, expected, rtol=1e-12, atol=1e-14)
    assert estimate.diagnostics["fraction_clipped"] == np.mean(norms_of(x) > clip)
    assert estimate.diagnostics["noise_std"] == pytest.approx(2.0 * clip / math.sqrt(1.5 * rho) / n, rel=1e-14)


def test_the_target_rank_is_the_optimal_quantile_less_the_rank_error_allowance_times_the_offset_factor():
    n, d, rho, steps = 1000, 9, 0.8, 12
    for factor in (1.0, 2.0, 0.5):
        estimate = clipped_mean(gaussian_rows(n, d, 2), rho=rho, bounds=BOUNDS, rng=np.random.default_rng(0),
                                clip_share=0.1, search_steps=steps, offset_factor=factor)
        p1, p2 = 0.1 * rho, 0.9 * rho
        assert estimate.diagnostics["clip_target_rank"] == pytest.approx(
            n - factor * (2.0 * math.sqrt(d / (2.0 * p2)) + math.sqrt(steps / (2.0 * p1))), rel=1e-14)


@pytest.mark.parametrize("threshold", ["private", "exact"])
def test_a_fixed_quantile_q_targets_rank_q_n(threshold):
    estimate = clipped_mean(gaussian_rows(300, 4, 3), rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(0),
                            quantile=0.85, threshold=threshold)
    assert estimate.diagnostics["clip_target_rank"] == 0.85 * 300
    assert estimate.diagnostics["quantile"] == 0.85


@pytest.mark.parametrize("quantile", [0.1, 0.5, 0.9])
def test_with_an_ample_budget_the_private_threshold_lies_between_the_order_statistics_around_its_target(quantile):
    """Noise of std sqrt(T / (2 p1)) ~ 0.003 ranks: the search ends where the count of norms below C
    passes the target rank, so exactly floor(q n) norms lie at or below C."""
    x = gaussian_rows(200, 5, 4)
    estimate = clipped_mean(x, rho=1e7, bounds=BOUNDS, rng=np.random.default_rng(1), quantile=quantile,
                            search_steps=45)
    assert np.sum(norms_of(x) <= estimate.diagnostics["clip_threshold"]) == math.floor(quantile * 200)


def test_every_row_is_clipped_to_norm_c_around_the_origin_and_no_row_below_c_moves():
    x = gaussian_rows(400, 6, 5, mean=2.0)
    estimate = clipped_mean(x, rho=1e12, bounds=(-50.0, 50.0), rng=np.random.default_rng(2), quantile=0.5)
    clip = estimate.diagnostics["clip_threshold"]
    norms = norms_of(x)
    expected = np.where((norms > clip)[:, None], x * (clip / norms)[:, None], x).mean(axis=0)
    np.testing.assert_allclose(estimate.mean, expected, atol=1e-4)  # the noise's std: 2C / sqrt(1.5e12) / 400
    assert estimate.diagnostics["fraction_clipped"] == pytest.approx(0.5, abs=0.01)


# ---------------------------------------------------------------- ledger and noise


@pytest.mark.parametrize("rho,share", [(0.01, 0.25), (0.5, 0.25), (3.0, 0.6), (1e-5, 0.01)])
def test_the_private_ledger_books_p1_for_the_threshold_and_the_rest_for_the_noise_and_sums_to_rho(rho, share):
    estimate = clipped_mean(gaussian_rows(50, 3, 6), rho=rho, bounds=BOUNDS, rng=np.random.default_rng(0),
                            clip_share=share)
    assert [entry.step for entry in estimate.ledger] == ["clip_threshold", "gaussian_noise"]
    assert dict(estimate.ledger) == pytest.approx({"clip_threshold": share * rho, "gaussian_noise": (1 - share) * rho})
    assert estimate.total == pytest.approx(rho, rel=1e-12)
    assert estimate.diagnostics["true_rho"] == estimate.diagnostics["ledger_total"] == estimate.total
    assert estimate.diagnostics["accounting"] == "exact" and estimate.diagnostics["private"] is True


def test_the_exact_threshold_is_booked_as_a_non_private_release_so_the_ledger_total_is_infinite():
    estimate = clipped_mean(gaussian_rows(50, 3, 6), rho=0.4, bounds=BOUNDS, rng=np.random.default_rng(0),
                            threshold="exact")
    assert estimate.ledger == (mechanisms.LedgerEntry(NON_PRIVATE, math.inf),
                               mechanisms.LedgerEntry("gaussian_noise", 0.75 * 0.4))
    assert estimate.total == estimate.diagnostics["true_rho"] == math.inf
    assert estimate.diagnostics["private"] is False and estimate.diagnostics["accounting"] == "none"


@pytest.mark.parametrize("threshold", ["private", "exact"])
def test_the_noise_is_gaussian_with_std_2c_over_n_sqrt_2_p2(threshold):
    """Residuals of 4000 runs x 6 coordinates against the clipped mean at each run's own C,
    divided by the formula's std: mean 0 and std 1 (standard errors 0.006 and 0.005; tolerances
    of 5 standard errors and more)."""
    x = gaussian_rows(80, 6, 7, mean=0.5)
    rho = 0.3
    runs = batched_clipped_mean(x, rho=rho, bounds=BOUNDS, rng=np.random.default_rng(8), runs=4000,
                                threshold=threshold, quantile=0.7)
    clip = runs.diagnostics["clip_threshold"]
    norms = norms_of(x)
    clipped = np.minimum(1.0, clip[:, None] / norms) @ x / x.shape[0]
    formula = 2.0 * clip / (x.shape[0] * math.sqrt(2.0 * 0.75 * rho))
    np.testing.assert_allclose(runs.diagnostics["noise_std"], formula, rtol=1e-14)
    standardised = (runs.mean - clipped) / formula[:, None]
    assert abs(standardised.mean()) < 0.04
    assert standardised.std() == pytest.approx(1.0, abs=0.03)
    if threshold == "private":
        assert np.unique(clip).size > 5  # the thresholds vary from run to run
    else:
        assert np.unique(clip).size == 1


# ---------------------------------------------------------------- the exact-threshold study (IOME Figure 9)


def test_the_exact_threshold_is_the_order_statistic_at_floor_of_the_rank_zero_below_and_the_largest_above():
    norms = np.array([1.0, 4.0, 9.0, 16.0, 25.0])
    exact = CM_MODULE.exact_threshold
    assert exact(norms, 0.0) == 1.0
    assert exact(norms, 2.99) == 9.0
    assert exact(norms, 3.0) == 16.0
    assert exact(norms, 4.5) == 25.0
    assert exact(norms, 5.0) == exact(norms, 1e9) == 25.0
    assert exact(norms, -0.01) == exact(norms, -1.0) == exact(norms, -434.8) == 0.0


def ramp(n, d):
    """IOME Figure 9's rows i^2 1_d (datasets.quadratic_ramp), norms i^2 sqrt(d)."""
    return np.arange(1, n + 1, dtype=float)[:, None] ** 2 * np.ones((1, d))


@pytest.mark.parametrize("quantile,index", [(0.5, 250), (0.75, 375), (0.85, 425), (0.95, 475)])
def test_figure_9s_fixed_quantiles_clip_at_the_norm_of_row_int_q_n(quantile, index):
    """The authors' C = sorted(norms)[int(q n)] (0-based): row index + 1, norm (index + 1)^2 sqrt(d)."""
    estimate = clipped_mean(ramp(500, 4), rho=0.1, bounds=(-1e6, 1e6), rng=np.random.default_rng(0),
                            threshold="exact", quantile=quantile)
    assert estimate.diagnostics["clip_threshold"] == (index + 1) ** 2 * 2.0
    assert estimate.diagnostics["fraction_clipped"] == (500 - index - 1) / 500


def test_figure_9s_own_rank_has_no_rank_error_allowance():
    n, d, rho = 500, 128, 0.1
    estimate = clipped_mean(ramp(n, d), rho=rho, bounds=(-1e7, 1e7), rng=np.random.default_rng(0), threshold="exact")
    rank = n - 2.0 * math.sqrt(d / (2.0 * 0.75 * rho))  # 441.6: index 441, row 442
    assert estimate.diagnostics["clip_target_rank"] == pytest.approx(rank, rel=1e-14)
    assert estimate.diagnostics["clip_threshold"] == pytest.approx(442**2 * math.sqrt(d), rel=1e-15)


def test_a_negative_rank_clips_everything_to_zero_where_the_authors_code_wrapped_around():
    """Figure 9 at d = 32768 (n = 500, rho = 0.1) has the rank 500 - 934.8 < 0: the lower end of
    the norm universe, C = 0, so the release is exactly 0 (no signal, no noise). A smaller copy:
    n = 10, d = 64 (rank 10 - 41.3)."""
    estimate = clipped_mean(ramp(10, 64), rho=0.1, bounds=(-1e4, 1e4), rng=np.random.default_rng(0),
                            threshold="exact")
    assert estimate.diagnostics["clip_target_rank"] < -30
    assert estimate.diagnostics["clip_threshold"] == 0.0 and estimate.diagnostics["noise_std"] == 0.0
    np.testing.assert_array_equal(estimate.mean, np.zeros(64))
    assert estimate.diagnostics["fraction_clipped"] == 1.0


def test_a_rank_past_the_last_row_clips_nothing_and_adds_the_noise_of_the_largest_norm():
    x = ramp(20, 3)
    estimate = clipped_mean(x, rho=0.5, bounds=(-1e4, 1e4), rng=np.random.default_rng(3), threshold="exact",
                            quantile=1.0)
    largest = 400.0 * math.sqrt(3)
    assert estimate.diagnostics["clip_threshold"] == largest
    assert estimate.diagnostics["fraction_clipped"] == 0.0
    noise = np.random.default_rng(3).standard_normal(3)  # no search: the noise's d normals only
    np.testing.assert_allclose(estimate.mean, x.mean(axis=0) + 2.0 * largest / math.sqrt(0.75) / 20 * noise,
                               rtol=1e-13)


# ---------------------------------------------------------------- batched, shared, sparse, determinism

BATCHED_CASES = {
    "private d1": (gaussian_rows(100, 1, 9), {}),
    "private d7 options": (gaussian_rows(150, 7, 10, 1.0), {"clip_share": 0.4, "search_steps": 14,
                                                            "offset_factor": 2.0}),
    "private quantile": (gaussian_rows(90, 3, 11), {"quantile": 0.6}),
    "exact": (gaussian_rows(120, 5, 12), {"threshold": "exact"}),
    "exact quantile": (gaussian_rows(120, 5, 12), {"threshold": "exact", "quantile": 0.3}),
    # 1000 rows: chunks of 262 runs, so the 600 runs take three chunks
    "private chunks": (gaussian_rows(1000, 2, 13), {}),
}


@pytest.mark.parametrize("case", BATCHED_CASES)
def test_batched_runs_are_the_calls_of_clipped_mean_in_a_row_bit_for_bit(case):
    x, options = BATCHED_CASES[case]
    runs = 600 if case == "private chunks" else 40
    batched = batched_clipped_mean(x, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(3), runs=runs, **options)
    rng = np.random.default_rng(3)
    calls = [clipped_mean(x, rho=0.5, bounds=BOUNDS, rng=rng, **options) for _ in range(runs)]
    np.testing.assert_array_equal(batched.mean, np.array([call.mean for call in calls]), strict=True)
    for name in ("clip_threshold", "fraction_clipped", "noise_std"):
        np.testing.assert_array_equal(batched.diagnostics[name], [call.diagnostics[name] for call in calls])
    assert batched.ledger == calls[0].ledger
    assert len({call.mean.tobytes() for call in calls}) == runs  # independent runs


@pytest.mark.parametrize("threshold", ["private", "exact"])
def test_a_shared_sample_gives_the_same_bytes_and_the_input_is_not_modified(threshold):
    x = gaussian_rows(100, 4, 14)
    before = x.copy()
    plain = clipped_mean(x, rho=0.7, bounds=BOUNDS, rng=np.random.default_rng(1), threshold=threshold)
    shared = clipped_mean(SharedSample(x), rho=0.7, bounds=BOUNDS, rng=np.random.default_rng(1), threshold=threshold)
    again = clipped_mean(x, rho=0.7, bounds=BOUNDS, rng=np.random.default_rng(1), threshold=threshold)
    assert plain.mean.tobytes() == shared.mean.tobytes() == again.mean.tobytes()
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("threshold", ["private", "exact"])
def test_sparse_rows_give_the_dense_result_without_densifying(threshold):
    dense = np.where(np.random.default_rng(15).random((200, 30)) < 0.1, gaussian_rows(200, 30, 16), 0.0)
    sparse = scipy.sparse.csr_matrix(dense)
    results = [clipped_mean(data, rho=0.6, bounds=BOUNDS, rng=np.random.default_rng(2), threshold=threshold)
               for data in (dense, sparse, SharedSample(sparse))]
    for result in results[1:]:
        assert result.diagnostics["clip_threshold"] == results[0].diagnostics["clip_threshold"]
        np.testing.assert_allclose(result.mean, results[0].mean, rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("change,message", [
    ({"bounds": (-5.0, 0.0)}, r"bounds=\(-5\.0, 0\.0\).*\[0, hi\].*hi must be > 0"),
    ({"bounds": (-5.0, -1.0)}, r"bounds=\(-5\.0, -1\.0\)"),
    ({"threshold": "Exact"}, r"threshold must be one of \['exact', 'private'\], got threshold='Exact'"),
    ({"quantile": 1.5}, r"quantile must be in \[0, 1\], got quantile=1\.5"),
    ({"quantile": "median"}, r"quantile=.median."),
    ({"clip_share": 1.0}, r"clip_share must be in \(0, 1\), got clip_share=1\.0"),
    ({"search_steps": 0}, r"search_steps must be a positive integer, got search_steps=0"),
    ({"offset_factor": -1.0}, r"offset_factor must be finite and > 0, got offset_factor=-1\.0"),
    ({"rho": 0.0}, r"rho must be finite and > 0, got rho=0\.0"),
    ({"rng": 3}, r"rng must be a numpy\.random\.Generator, got rng=int"),
    ({"rho": 1e-300, "clip_share": 1e-10}, r"rho=1e-300 with clip_share=1e-10.*clip threshold"),
])
def test_bad_arguments_raise_one_value_error_naming_the_value(change, message):
    arguments = {"rho": 1.0, "bounds": BOUNDS, "rng": np.random.default_rng(0)} | change
    with pytest.raises(ValueError, match=message):
        clipped_mean(gaussian_rows(20, 3, 0), **arguments)


def test_the_batched_sampler_takes_dense_data_and_a_positive_number_of_runs():
    x = gaussian_rows(20, 3, 0)
    with pytest.raises(ValueError, match=r"runs must be a positive integer, got runs=0"):
        batched_clipped_mean(x, rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(0), runs=0)
    with pytest.raises(ValueError, match=r"\bx\b is a sparse csr_matrix.*dense"):
        batched_clipped_mean(scipy.sparse.csr_matrix(x), rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(0), runs=2)


def test_clipped_mean_is_registered_and_its_options_are_config_options():
    assert mechanisms.REGISTRY["clipped_mean"] is clipped_mean
    assert mechanisms.mechanism_options("clipped_mean") == {
        "clip_share": 0.25, "search_steps": 10, "offset_factor": 1.0, "threshold": "private", "quantile": None}
    figure_9 = make_mechanism("clipped_mean", threshold="exact", quantile=0.95)
    assert figure_9(ramp(100, 2), rho=0.1, bounds=(-1e5, 1e5), rng=np.random.default_rng(0)).diagnostics[
        "clip_threshold"] == pytest.approx(96**2 * math.sqrt(2), rel=1e-15)


# ---------------------------------------------------------------- IOME as the IOME paper ran it


def authors_shifted_cm(x, *, rho, u, signs, normals, steps=10, prop=0.25):
    """The IOME authors' random_rotation_mean, step by step (quantile_binary_search/method.py; the
    facts in docs/design.md §5.5), with our draws: rotation (H D_1)(H D_2)(H D_3) as a dense
    matrix, per rotated coordinate a binary-search median with 0.25 rho / d over
    [-u / sqrt(d), u / sqrt(d)] (the centre's T x d normals, step by step), then their clipped_mean
    with rho' = 0.75 rho on the shifted rows over [0, u] (the next T and d normals), rotated back.
    One difference, on purpose: their rank int(n - ...) is our n - ... (docs/design.md §5.5)."""
    n, d = x.shape
    hadamard = scipy.linalg.hadamard(d) / math.sqrt(d)
    rotation = np.eye(d)
    for diagonal in signs:
        rotation = rotation @ hadamard @ np.diag(diagonal)
    rotated = x @ rotation.T
    centre_noise = normals[:steps * d].reshape(steps, d)
    half = u / math.sqrt(d)
    centre = np.array([hand_search(rotated[:, j], target_rank=0.5 * n, rho=prop * rho / d, lo=-half, hi=half,
                                   steps=steps, noise=centre_noise[:, j]) for j in range(d)])
    shifted_mean, clip, _ = hand_clipped_mean(rotated - centre, rho=(1.0 - prop) * rho, hi=u,
                                              noise=normals[steps * d:])
    return rotation.T @ (shifted_mean + centre), clip, centre


@pytest.mark.parametrize("n,d,rho,seed", [(400, 8, 0.5, 1), (1000, 16, 0.125, 2), (300, 2, 1.0, 3)])
def test_iome_with_the_paper_settings_is_the_authors_shifted_clipped_mean(n, d, rho, seed):
    """IOME Section 6.1's data: N(mean 1_d, I) with R = 50 sqrt(d) and bounds (-2R, 2R) = (-u, u)."""
    u = 2.0 * 50.0 * math.sqrt(d)
    x = gaussian_rows(n, d, seed, mean=5.0)
    estimate = iome(x, rho=rho, bounds=(-u, u), rng=np.random.default_rng(seed), **IOME_PAPER)
    replay = np.random.default_rng(seed)
    signs = replay.integers(0, 2, size=(3, d)) * 2.0 - 1.0  # iome draws its rotation first
    np.testing.assert_array_equal(estimate.diagnostics["rotation_signs"], signs)
    expected, clip, centre = authors_shifted_cm(x, rho=rho, u=u, signs=signs,
                                                normals=replay.standard_normal(10 * d + 10 + d))
    np.testing.assert_array_equal(estimate.diagnostics["rotated_centre"], centre)
    assert estimate.diagnostics["clip_threshold"] == clip
    np.testing.assert_allclose(estimate.mean, expected, rtol=1e-10, atol=1e-12)
    assert dict(estimate.ledger) == pytest.approx({"centre": 0.25 * rho, "clip_threshold": 0.25 * 0.75 * rho,
                                                   "gaussian_noise": 0.75 * 0.75 * rho})


def test_cm_is_the_authors_clipped_mean_on_the_raw_rows_with_the_whole_budget():
    """The authors' CM (clipped_mean(X, n, d, u, p): no rotation, no shift, p1 = rho / 4 over
    [0, u], T = 10) against ours with its defaults and bounds (-u, u)."""
    n, d, rho = 500, 16, 0.5
    u = 2.0 * 50.0 * math.sqrt(d)
    x = gaussian_rows(n, d, 4, mean=5.0)
    estimate = clipped_mean(x, rho=rho, bounds=(-u, u), rng=np.random.default_rng(9))
    expected, clip, _ = hand_clipped_mean(x, rho=rho, hi=u, noise=np.random.default_rng(9).standard_normal(10 + d))
    assert estimate.diagnostics["clip_threshold"] == clip
    np.testing.assert_allclose(estimate.mean, expected, rtol=1e-12)
