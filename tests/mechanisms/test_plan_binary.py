"""PLAN, binary instantiation (docs/design.md §5.4): ledger, noise scales, sparse-only work, a
dense reference implementation, the published ranking of the variants, and bad input."""
import math
import re

import numpy as np
import pytest
import scipy.sparse

from mechanisms.accounting import UNSPENT
from mechanisms.plan_binary import VARIANTS, plan_binary
from testkit.sparse import NoDensifying

RHOS = [1 / 16, 0.5, 3.0]


def bernoulli_csr(probabilities, n, seed):
    """n rows with item j present with probability probabilities[j], a plain numpy draw as CSR."""
    present = np.random.default_rng(seed).random((n, len(probabilities))) < probabilities
    return scipy.sparse.csr_matrix(present, dtype=np.float64)


@pytest.fixture(scope="module")
def small():
    """A small skewed binary matrix with a few empty rows (their clip weight is 1)."""
    probabilities = np.concatenate([np.full(8, 0.5), np.full(24, 0.05)])
    x = bernoulli_csr(probabilities, 300, seed=11).tolil()
    x[[3, 77, 150], :] = 0.0
    return x.tocsr()


def run(x, variant="paper", rho=0.5, seed=0, **options):
    return plan_binary(x, rho=rho, rng=np.random.default_rng(seed), variant=variant, **options)


def shows(name, value):
    """Regex for ``name=<repr of value>`` as the messages print it."""
    return rf"\b{re.escape(name)}={re.escape(repr(value))}"


# ---------------------------------------------------------------- ledger


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_ledger_sums_to_the_requested_rho(small, variant, rho):
    estimate = run(small, variant, rho)
    assert math.isclose(math.fsum(entry.rho for entry in estimate.ledger), rho, rel_tol=1e-12)
    assert estimate.diagnostics["ledger_total"] == estimate.rho_total
    assert estimate.diagnostics["requested_rho"] == rho


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_ledger_entries_are_the_published_split(small, variant):
    rho, d = 0.5, small.shape[1]
    rho_1 = 0.1 * rho
    rest = rho - rho_1
    first = "variance" if variant == "paper" else UNSPENT
    assert run(small, variant, rho).ledger == (
        (first, rho_1), ("clip_threshold", rest / d), ("gaussian_noise", rest - rest / d)
    )


@pytest.mark.parametrize("variant", ["oracle", "noscale"])
def test_oracle_and_noscale_hold_the_variance_share_back_as_unspent(small, variant):
    estimate = run(small, variant, 2.0, variance_share=0.25)
    assert dict(estimate.ledger)[UNSPENT] == 0.5
    assert estimate.diagnostics["true_rho"] == estimate.rho_spent
    assert math.isclose(estimate.rho_spent, 1.5, rel_tol=1e-12)


def test_the_paper_variant_spends_the_whole_budget(small):
    estimate = run(small, "paper", 2.0)
    assert UNSPENT not in dict(estimate.ledger)
    assert math.isclose(estimate.diagnostics["true_rho"], 2.0, rel_tol=1e-12)


@pytest.mark.parametrize("steps", [1, 10, 17])
def test_the_clip_target_rank_follows_the_formula(small, steps):
    n, d = small.shape
    rho_2 = (0.5 - 0.1 * 0.5) / d
    expected = n - math.sqrt(n) - math.sqrt(steps * math.log(steps) / rho_2)
    assert run(small, search_steps=steps).diagnostics["clip_target_rank"] == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------- noise scales

NOISE_N, NOISE_D = 1000, 4096


@pytest.fixture(scope="module")
def wide():
    """Many items, so that the D noise values of one call give a tight variance estimate."""
    probabilities = np.random.default_rng(5).uniform(0.005, 0.2, NOISE_D)
    return bernoulli_csr(probabilities, NOISE_N, seed=6)


def chi_square_bound(count, sigmas=6.0):
    """Deviation of mean(z^2) from 1 for ``count`` standard normals that ``sigmas`` standard
    deviations allow (var of chi-square_k / k is 2 / k)."""
    return sigmas * math.sqrt(2.0 / count)


def item_frequencies(x):
    return np.asarray(x.sum(axis=0)).ravel() / x.shape[0]


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_noise_on_the_clipped_sum_has_variance_two_c_squared_over_rho_3(wide, variant):
    rho = 0.25
    estimate = run(wide, variant, rho, seed=21)
    diagnostics = estimate.diagnostics
    rest = rho - 0.1 * rho
    rho_3 = rest - rest / NOISE_D
    clip = diagnostics["clip_threshold"]
    assert diagnostics["noise_std"] == pytest.approx(math.sqrt(2.0 * clip**2 / rho_3), rel=1e-12)
    # The unclipped diagnostic is p + noise / (b n): the noise itself, without clipping error.
    noise = (diagnostics["unclipped_mean"] - item_frequencies(wide)) * diagnostics["scale"] * NOISE_N
    standardised = noise / math.sqrt(2.0 * clip**2 / rho_3)
    assert abs(np.mean(standardised**2) - 1.0) < chi_square_bound(NOISE_D)
    assert abs(np.mean(standardised)) < 6.0 / math.sqrt(NOISE_D)


def test_the_noisy_frequencies_have_variance_d_over_two_rho_1_n_squared(wide):
    rho = 0.25
    noisy = run(wide, "paper", rho, seed=22).diagnostics["noisy_frequencies"]
    standardised = (noisy - item_frequencies(wide)) / math.sqrt(NOISE_D / (2.0 * 0.1 * rho * NOISE_N**2))
    assert abs(np.mean(standardised**2) - 1.0) < chi_square_bound(NOISE_D)
    assert abs(np.mean(standardised)) < 6.0 / math.sqrt(NOISE_D)


def test_the_clipped_and_unclipped_estimates_differ_only_by_the_clipping(small):
    """Both carry the same noise: their difference is sum_i (w_i - 1) x_i / n, noise-free."""
    estimate = run(small, "paper", 0.05)
    diagnostics = estimate.diagnostics
    norms = np.sqrt(small @ diagnostics["scale"] ** 2)
    weights = np.minimum(1.0, diagnostics["clip_threshold"] / np.maximum(norms, 1e-300))
    assert np.any(weights < 1.0)
    clipping = small.T @ (weights - 1.0) / small.shape[0]
    np.testing.assert_allclose(estimate.mean - diagnostics["unclipped_mean"], clipping, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- sparse work only



@pytest.mark.parametrize("variant", VARIANTS)
def test_plan_binary_never_densifies_its_input(small, variant):
    guarded = NoDensifying(small)
    with pytest.raises(AssertionError):
        np.asarray(guarded)  # the guard works
    estimate = run(guarded, variant)
    np.testing.assert_array_equal(estimate.mean, run(small, variant).mean)


@pytest.mark.parametrize("variant", VARIANTS)
def test_plan_binary_leaves_its_input_unchanged(small, variant):
    x = small.copy()
    run(x, variant)
    for part in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(x, part), getattr(small, part))


def test_plan_binary_takes_any_sparse_format_with_the_same_result(small):
    np.testing.assert_array_equal(run(small.tocoo()).mean, run(small).mean)
    np.testing.assert_array_equal(run(small.tocsc()).mean, run(small).mean)


# ---------------------------------------------------------------- randomness


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_same_seed_gives_the_same_bytes(small, variant):
    first, second = run(small, variant, seed=3), run(small, variant, seed=3)
    assert first.mean.tobytes() == second.mean.tobytes()
    assert first.diagnostics["clip_threshold"] == second.diagnostics["clip_threshold"]


def test_every_variant_draws_the_same_amount_of_randomness(small):
    """D + T + D standard normals whatever the variant, so the stream after a call never
    depends on it."""
    n, d = small.shape
    after = set()
    for variant in VARIANTS:
        rng = np.random.default_rng(9)
        plan_binary(small, rho=0.5, rng=rng, variant=variant, search_steps=7)
        after.add(rng.standard_normal())
    rng = np.random.default_rng(9)
    rng.standard_normal(d + 7 + d)
    assert after == {rng.standard_normal()}


# ---------------------------------------------------------------- the dense reference


def reference_plan_binary(x, *, rho, seed, variant, variance_share=0.1, steps=10):
    """docs/design.md §5.4 on a dense 0/1 array, step by step (the readable version)."""
    rng = np.random.default_rng(seed)
    n, d = x.shape
    variance_noise = rng.standard_normal(d)
    threshold_noise = rng.standard_normal(steps)
    final_noise = rng.standard_normal(d)

    rho_1 = variance_share * rho
    rest = rho - rho_1
    rho_2 = rest / d
    rho_3 = rest - rho_2

    p = x.mean(axis=0)
    if variant == "paper":
        noisy = p + math.sqrt((1.0 / n) ** 2 / (2.0 * rho_1 / d)) * variance_noise
        clipped = np.clip(noisy, d**-0.4, 1.0 - d**-0.4)
        b = (clipped * (1.0 - clipped)) ** (-1.0 / 3.0)
    elif variant == "oracle":
        std = np.sqrt(p * (1.0 - p))
        std = std + std.sum() / d
        b = (std**2) ** (-1.0 / 3.0)
    else:
        b = np.ones(d)

    scaled = x * b
    norms = np.sqrt((scaled**2).sum(axis=1))

    target = n - math.sqrt(n) - math.sqrt(steps * math.log(steps) / rho_2)
    left, right = 0.0, math.sqrt(np.sum(b**2))
    for step in range(steps):
        mid = (left + right) / 2.0
        noisy_count = np.sum(norms <= mid) + math.sqrt(steps / (2.0 * rho_2)) * threshold_noise[step]
        if noisy_count <= target:
            left = mid
        else:
            right = mid
    clip = (left + right) / 2.0

    with np.errstate(divide="ignore"):
        weights = np.minimum(1.0, clip / norms)  # an empty row: clip / 0 = inf, weight 1
    clipped_sum = (scaled * weights[:, None]).sum(axis=0)
    noise = math.sqrt(2.0 * clip**2 / rho_3) * final_noise
    return (clipped_sum + noise) / (b * n), clip


@pytest.mark.parametrize("rho", [0.05, 1.0])
@pytest.mark.parametrize("variant", VARIANTS)
def test_plan_binary_equals_the_dense_reference(small, variant, rho):
    expected_mean, expected_clip = reference_plan_binary(small.toarray(), rho=rho, seed=4, variant=variant)
    estimate = run(small, variant, rho, seed=4)
    assert estimate.diagnostics["clip_threshold"] == expected_clip
    np.testing.assert_allclose(estimate.mean, expected_mean, rtol=1e-12, atol=1e-15)


def test_the_dense_reference_comparison_sees_clipping(small):
    """The reference test must exercise clipping: at rho = 0.05 some rows are clipped."""
    assert 0.0 < run(small, "paper", 0.05, seed=4).diagnostics["fraction_clipped"] < 1.0


# ---------------------------------------------------------------- edge cases


@pytest.mark.parametrize("d", [2, 5])
def test_few_items_give_a_constant_scale_and_a_finite_estimate(d):
    """For D <= 5 the clip interval [D^-0.4, 1 - D^-0.4] is empty: every frequency is 1/2."""
    x = bernoulli_csr(np.full(d, 0.3), 50, seed=2)
    estimate = run(x, "paper")
    assert np.all(estimate.diagnostics["scale"] == 0.25 ** (-1.0 / 3.0))
    assert np.all(np.isfinite(estimate.mean))


def test_plan_binary_rejects_a_single_item_that_leaves_no_budget_for_the_noise():
    """rho_2 = r / D takes all of r when D = 1."""
    with pytest.raises(ValueError, match=r"\bx\b.*2 columns.*x\.shape=\(50, 1\)"):
        run(bernoulli_csr(np.full(1, 0.3), 50, seed=2))


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_all_empty_matrix_gives_a_finite_estimate(variant):
    estimate = run(scipy.sparse.csr_matrix((40, 6)), variant)
    assert np.all(np.isfinite(estimate.mean))
    assert estimate.diagnostics["fraction_clipped"] == 0.0


def test_explicit_zeros_in_the_sparse_data_count_as_absent(small):
    with_zeros = small.copy()
    with_zeros.data[::5] = 0.0  # stored, but zero
    cleaned = with_zeros.copy()
    cleaned.eliminate_zeros()
    for variant in VARIANTS:
        np.testing.assert_array_equal(run(with_zeros, variant).mean, run(cleaned, variant).mean)


# ---------------------------------------------------------------- the published ranking

RANK_D, RANK_N, RANK_RHO = 1024, 4096, 1 / 16
RANK_SEEDS = range(15)
# PLAN paper Figure 5a / 9a at D = 1024, rho = 1/16: published medians of ||p - estimate||_1 / 2.
PUBLISHED_MEDIANS = {
    0.0: {"paper": 2.31, "oracle": 2.25, "noscale": 2.30},
    0.5: {"paper": 8.56, "oracle": 8.47, "noscale": 10.08},
    1.0: {"paper": 13.93, "oracle": 14.06, "noscale": 13.89},
}


def synthetic_probabilities(ratio):
    """The "Binary" experiment: the first ceil(ratio D) items with p = 0.5, the rest 0.01."""
    probabilities = np.full(RANK_D, 0.01)
    probabilities[: math.ceil(ratio * RANK_D)] = 0.5
    return probabilities


@pytest.fixture(scope="module")
def ranking_medians():
    """Median error per (ratio, variant) over RANK_SEEDS; data and mechanism seeds separate."""
    medians = {}
    for ratio in PUBLISHED_MEDIANS:
        truth = synthetic_probabilities(ratio)
        errors = {variant: [] for variant in VARIANTS}
        for seed in RANK_SEEDS:
            x = bernoulli_csr(truth, RANK_N, seed=1000 + seed)
            for variant in VARIANTS:
                estimate = plan_binary(x, rho=RANK_RHO, rng=np.random.default_rng(seed), variant=variant)
                errors[variant].append(np.abs(truth - estimate.mean).sum() / 2.0)
        medians[ratio] = {variant: float(np.median(values)) for variant, values in errors.items()}
    return medians


def test_paper_and_oracle_are_close_and_beat_noscale_at_ratio_one_half(ranking_medians):
    medians = ranking_medians[0.5]
    assert medians["paper"] == pytest.approx(medians["oracle"], rel=0.05)
    assert medians["paper"] <= 0.9 * medians["noscale"]
    assert medians["oracle"] <= 0.9 * medians["noscale"]


@pytest.mark.parametrize("ratio", [0.0, 1.0])
def test_the_variants_tie_when_every_item_has_the_same_variance(ranking_medians, ratio):
    medians = ranking_medians[ratio]
    assert max(medians.values()) <= 1.05 * min(medians.values())


@pytest.mark.parametrize("ratio", sorted(PUBLISHED_MEDIANS))
@pytest.mark.parametrize("variant", VARIANTS)
def test_median_errors_are_within_15_percent_of_the_published_medians(ranking_medians, ratio, variant):
    assert ranking_medians[ratio][variant] == pytest.approx(PUBLISHED_MEDIANS[ratio][variant], rel=0.15)


# ---------------------------------------------------------------- bad input


def test_plan_binary_rejects_dense_input_saying_x_must_be_sparse(small):
    with pytest.raises(ValueError, match=r"\bx\b must be a scipy\.sparse matrix.*ndarray of shape \(300, 32\)"):
        run(small.toarray())


def test_plan_binary_rejects_non_binary_entries_and_shows_the_entry():
    x = scipy.sparse.csr_matrix(np.array([[0.0, 1.0], [0.0, 2.0]]))
    with pytest.raises(ValueError, match=r"\bx\b must be binary.*x\[1, 1\]=2"):
        run(x)


def test_plan_binary_rejects_non_finite_entries_and_shows_the_entry():
    x = scipy.sparse.csr_matrix(np.array([[0.0, 1.0], [math.nan, 0.0]]))
    with pytest.raises(ValueError, match=r"\bx\b must be finite, got x\[1, 0\]=nan"):
        run(x)


def test_plan_binary_rejects_empty_data_and_shows_its_shape():
    with pytest.raises(ValueError, match=r"\bx\b.*x\.shape=\(0, 4\)"):
        run(scipy.sparse.csr_matrix((0, 4)))


@pytest.mark.parametrize("rho", [-1, 0, -0.5, math.nan, math.inf, "abc", None],
                         ids=["-1", "0", "-0.5", "nan", "inf", "string", "None"])
def test_plan_binary_rejects_a_rho_that_is_not_a_finite_positive_number_and_shows_it(small, rho):
    with pytest.raises(ValueError, match=shows("rho", rho)):
        run(small, rho=rho)


@pytest.mark.parametrize("variant", ["Paper", "bogus", None])
def test_plan_binary_rejects_an_unknown_variant_and_shows_it(small, variant):
    with pytest.raises(ValueError, match=shows("variant", variant)):
        run(small, variant)


@pytest.mark.parametrize("share", [0, 1, -0.1, 1.5, math.nan, "half"])
def test_plan_binary_rejects_a_variance_share_outside_0_1_and_shows_it(small, share):
    with pytest.raises(ValueError, match=shows("variance_share", share)):
        run(small, variance_share=share)


@pytest.mark.parametrize("steps", [0, -1, 2.5, True])
def test_plan_binary_rejects_search_steps_that_are_not_a_positive_integer_and_shows_them(small, steps):
    with pytest.raises(ValueError, match=shows("search_steps", steps)):
        run(small, search_steps=steps)


@pytest.mark.parametrize(("rng", "pattern"), [(np.random.RandomState(0), r"\brng=RandomState\b"),
                                               (0, r"\brng=int\b"), (None, r"\brng=NoneType\b")],
                         ids=["RandomState", "int_seed", "None"])
def test_plan_binary_rejects_an_rng_that_is_not_a_generator_and_shows_its_type(small, rng, pattern):
    with pytest.raises(ValueError, match=pattern):
        plan_binary(small, rho=0.5, rng=rng)
