"""CoinPress's private covariance and the MVCRec-MVMRec mean (mechanisms/coinpress_covariance.py,
docs/design.md §5.12): the public schedule, the ledger, every step replayed from the mechanism's own
normals, the noise's spread and symmetry, clipping at gamma, the sensitivity bound on worst-case
pairs, both PSD projections and whitening orders, centring, the batched sampler, the sample
covariance, the whitened mean against CoinPress run by hand on whitened rows, the prior ball's
mapping, bad arguments, determinism and d = 784."""
import math

import numpy as np
import pytest

import mechanisms
from mechanisms import (
    batched_coinpress_covariance,
    coinpress,
    coinpress_covariance,
    coinpress_whitened_mean,
    covariance_schedule,
    empirical_covariance,
    gaussian_tail_radius,
)
from mechanisms.coinpress_covariance import clipped_gram, psd_values, symmetric_noise, whitenings

D, N, U = 10, 3000, 10.0 * math.sqrt(10.0)  # the CoinPress covariance headline's d, smallest n and bound


def gaussian_rows(seed, n=N, d=D):
    return np.random.default_rng(seed).standard_normal((n, d))


def axis_rows(n, d, spread):
    """n rows at +-spread on the coordinate axes in turn: a Gram matrix (spread^2 / d) I when n is a
    multiple of 2 d, well inside the PSD cone, so no projection acts on small noise."""
    axes = np.vstack([np.eye(d), -np.eye(d)]) * spread
    return axes[np.arange(n) % (2 * d)]


def replay(rows, *, rho, bound, steps, seed, psd="clip", update="consistent", beta=0.1):
    """Steps 1-6 of docs/design.md §5.12 written out with explicit inverses and matrix square roots (not
    the module's code path), from the normals the mechanism draws: rng.standard_normal((t, d, d))."""
    n, d = rows.shape
    noise = np.random.default_rng(seed).standard_normal((steps, d, d))
    gamma = gaussian_tail_radius(d, beta)
    eta = (2 * math.sqrt(d / n) + d / n) / 2
    shares = mechanisms.coinpress_budget_shares(steps)
    a = np.eye(d) / math.sqrt(bound)
    for i in range(steps):
        w = rows @ a
        norms = np.linalg.norm(w, axis=1)
        w[norms > gamma] *= (gamma / norms[norms > gamma])[:, None]
        upper = np.triu(noise[i])
        e = (upper + np.triu(noise[i], 1).T) * gamma**2 / (math.sqrt(rho * shares[i]) * n)
        values, vectors = np.linalg.eigh(w.T @ w / n + e)
        values = np.maximum(values, 0) if psd == "clip" else np.abs(values)
        z = vectors @ np.diag(values) @ vectors.T
        if i == steps - 1:
            inverse = np.linalg.inv(a)
            return inverse.T @ z @ inverse if update == "consistent" else inverse @ z @ inverse
        root_inverse = vectors @ np.diag((values + eta) ** -0.5) @ vectors.T
        a = a @ root_inverse if update == "consistent" else root_inverse @ a
    raise AssertionError("unreachable")


# ---------------------------------------------------------------- schedule and ledger


def test_the_schedule_is_the_formulas_of_the_authors_code():
    schedule = covariance_schedule(N, D, rho=0.5, covariance_bound=U, steps=3)
    gamma = math.sqrt(D + 2 * math.sqrt(D * math.log(10)) + 2 * math.log(10))  # G(10, 0.1) = 4.920
    assert schedule.clip_radius == pytest.approx(gamma, rel=1e-14) and gamma == pytest.approx(4.9196, abs=1e-4)
    assert schedule.regulariser == pytest.approx(0.5 * (2 * math.sqrt(D / N) + D / N), rel=1e-14)
    assert [step.rho for step in schedule.steps] == pytest.approx([0.0625, 0.0625, 0.375])
    for step in schedule.steps:  # sigma = gamma^2 / (sqrt(rho_i) n): sensitivity sqrt(2) gamma^2 / n over sqrt(2 rho_i)
        assert step.noise_std == pytest.approx((math.sqrt(2) * gamma**2 / N) / math.sqrt(2 * step.rho), rel=1e-14)
    assert schedule.rows == N and schedule.covariance_bound == U


@pytest.mark.parametrize("steps", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("rho", [0.5, 1e-3, 7.0])
def test_the_ledger_is_the_coinpress_split_and_sums_to_rho(steps, rho):
    estimate = coinpress_covariance(gaussian_rows(0, 200, 3), rho=rho, rng=np.random.default_rng(1),
                                    covariance_bound=4.0, steps=steps, centre=0.0)
    shares = [1.0] if steps == 1 else [0.25 / (steps - 1)] * (steps - 1) + [0.75]
    assert [entry.step for entry in estimate.ledger] == [f"step_{i}" for i in range(1, steps + 1)]
    assert [entry.rho for entry in estimate.ledger] == pytest.approx([rho * s for s in shares], rel=1e-14)
    assert estimate.total == pytest.approx(rho, rel=1e-14)
    assert estimate.diagnostics["true_rho"] == estimate.total


def test_budget_shares_of_the_caller_are_normalised_to_rho():
    estimate = coinpress_covariance(gaussian_rows(0, 200, 3), rho=0.3, rng=np.random.default_rng(1),
                                    covariance_bound=4.0, steps=3, budget_shares=[1, 2, 7], centre=0.0)
    assert [entry.rho for entry in estimate.ledger] == pytest.approx([0.03, 0.06, 0.21], rel=1e-14)
    assert estimate.total == pytest.approx(0.3, rel=1e-14)


@pytest.mark.parametrize(("covariance_steps", "mean_steps", "share"), [(1, 10, 0.5), (3, 2, 0.2), (2, 1, 0.9)])
def test_the_whitened_mean_books_its_covariance_and_mean_steps_summing_to_rho(covariance_steps, mean_steps, share):
    estimate = coinpress_whitened_mean(gaussian_rows(2, 500, 4), rho=0.4, bounds=(-5.0, 5.0),
                                       rng=np.random.default_rng(3), covariance_steps=covariance_steps,
                                       mean_steps=mean_steps, covariance_share=share)
    names = [entry.step for entry in estimate.ledger]
    assert names == ([f"covariance_step_{i}" for i in range(1, covariance_steps + 1)]
                     + [f"mean_step_{i}" for i in range(1, mean_steps + 1)])
    covariance = math.fsum(entry.rho for entry in estimate.ledger[:covariance_steps])
    assert covariance == pytest.approx(0.4 * share, rel=1e-13)
    assert estimate.total == pytest.approx(0.4, rel=1e-13)


# ---------------------------------------------------------------- the steps


@pytest.mark.parametrize("steps", [1, 2, 3, 5])
@pytest.mark.parametrize(("psd", "update"), [("clip", "consistent"), ("absolute", "code"), ("absolute", "consistent"),
                                             ("clip", "code")])
def test_every_step_is_replayed_from_the_mechanisms_own_normals(steps, psd, update):
    x = gaussian_rows(4, 400, 4) * np.array([1.0, 2.0, 0.5, 3.0])
    x[:7] *= 20.0  # rows outside gamma in the first steps: clipping acts
    estimate = coinpress_covariance(x, rho=0.3, rng=np.random.default_rng(5), covariance_bound=9.0, steps=steps,
                                    centre=0.0, psd=psd, update=update)
    expected = replay(x, rho=0.3, bound=9.0, steps=steps, seed=5, psd=psd, update=update)
    assert np.allclose(estimate.mean, expected, rtol=1e-9, atol=1e-12)
    assert estimate.diagnostics["step_fraction_clipped"][0] > 0


def test_the_two_whitening_orders_agree_up_to_two_steps_and_differ_from_three():
    x = gaussian_rows(6, 600, 5)
    runs = {(update, steps): coinpress_covariance(x, rho=0.05, rng=np.random.default_rng(7), covariance_bound=9.0,
                                                  steps=steps, centre=0.0, update=update).mean
            for update in ("consistent", "code") for steps in (1, 2, 3)}
    for steps in (1, 2):  # A_1 = U_1^(-1/2) / sqrt(u) is symmetric: both orders are the same arithmetic
        assert np.allclose(runs[("consistent", steps)], runs[("code", steps)], rtol=1e-10, atol=1e-13)
    consistent, code = runs[("consistent", 3)], runs[("code", 3)]
    assert not np.allclose(consistent, code, rtol=1e-3)
    assert np.array_equal(consistent, consistent.T)  # symmetrised
    assert not np.allclose(code, code.T, rtol=1e-6)  # the code's A^(-1) Z A^(-1) with a non-symmetric A


def test_the_regularised_estimate_adds_eta_times_the_inverse_whitening_and_is_positive_definite():
    x = np.zeros((300, 4))  # no spread: Sigma_hat is mostly projected noise, with zero eigenvalues
    estimate = coinpress_covariance(x, rho=0.5, rng=np.random.default_rng(8), covariance_bound=2.0, steps=1,
                                    centre=0.0)
    eta = estimate.diagnostics["regulariser"]
    assert estimate.diagnostics["step_negative_eigenvalues"][0] > 0
    assert np.min(np.linalg.eigvalsh(estimate.mean)) == pytest.approx(0.0, abs=1e-12)
    # t = 1: A^(-1) = sqrt(u) I, so Sigma_hat_eta = Sigma_hat + eta u I
    assert np.allclose(estimate.diagnostics["regularised_estimate"], estimate.mean + eta * 2.0 * np.eye(4))
    assert np.min(np.linalg.eigvalsh(estimate.diagnostics["regularised_estimate"])) >= eta * 2.0 * (1 - 1e-12)


def test_one_eigendecomposition_per_step_and_no_explicit_inverse(monkeypatch):
    calls = []
    eigh = np.linalg.eigh
    monkeypatch.setattr(np.linalg, "eigh", lambda matrix: calls.append(matrix.shape) or eigh(matrix))
    monkeypatch.setattr(np.linalg, "inv", lambda matrix: pytest.fail("an explicit inverse"))
    coinpress_covariance(gaussian_rows(9, 300, 6), rho=0.5, rng=np.random.default_rng(1), covariance_bound=4.0,
                         steps=4, centre=0.0)
    assert calls == [(6, 6)] * 4


def test_the_noise_has_the_stated_variance_on_every_upper_entry_and_is_mirrored():
    # Gram matrix (spread^2 / d) I = 2.25 I, far inside the PSD cone against noise std 0.0136: Z = G + E
    # exactly, and E is the release minus G. 3000 runs x 6 upper entries.
    d, n, spread = 3, 300, math.sqrt(6.75)
    x = axis_rows(n, d, spread)
    runs = batched_coinpress_covariance(x, rho=2.0, rng=np.random.default_rng(10), runs=3000, covariance_bound=1.0,
                                        steps=1)
    assert not runs.diagnostics["step_negative_eigenvalues"].any()
    noise = runs.diagnostics["step_estimates"][:, 0] - 2.25 * np.eye(d)
    sigma = runs.diagnostics["step_noise_stds"][0]
    gamma = gaussian_tail_radius(d, 0.1)
    assert sigma == pytest.approx(gamma**2 / (math.sqrt(2.0) * n), rel=1e-14)
    assert np.allclose(noise, np.swapaxes(noise, 1, 2), atol=1e-13)
    upper = noise[:, *np.triu_indices(d)] / sigma  # 18000 standard normals if the scale is right
    assert abs(upper.mean()) < 0.03
    for entries in (upper[:, [0, 3, 5]], upper[:, [1, 2, 4]]):  # the diagonal, and the off-diagonal entries
        variance = entries.var()
        assert 0.95 < variance < 1.05  # 9000 values: the variance's sd is 0.015
    # the release is u Z: u = 1 here
    assert np.allclose(runs.mean, runs.diagnostics["step_estimates"][:, 0])


def test_symmetric_noise_keeps_the_upper_triangle_and_mirrors_it():
    standard = np.random.default_rng(11).standard_normal((2, 4, 4))
    noise = symmetric_noise(standard)
    for k in range(2):
        assert np.array_equal(np.triu(noise[k]), np.triu(standard[k]))
        assert np.array_equal(noise[k], noise[k].T)


def test_rows_beyond_gamma_are_scaled_to_gamma_and_the_others_kept():
    rows = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0], [-30.0, 40.0]])
    gram, fraction = clipped_gram(rows, 2.5)
    clipped = np.array([[1.5, 2.0], [0.3, 0.4], [0.0, 0.0], [-1.5, 2.0]])
    assert np.allclose(gram, clipped.T @ clipped / 4, rtol=1e-15)
    assert fraction == 0.5
    huge = np.array([[1e200, 1e200], [0.0, 1.0]])  # a squared norm that overflows: still scaled onto the sphere
    gram, fraction = clipped_gram(huge, 2.0)
    assert np.allclose(gram, np.array([[2.0, 2.0], [2.0, 2.0 + 1.0]]) / 2, rtol=1e-12) and fraction == 0.5


def test_the_sensitivity_of_the_upper_triangle_is_at_most_sqrt_2_gamma_squared_over_n():
    """Random pairs of neighbouring datasets (one row replaced; rows inside and far outside gamma),
    and the worst case: orthogonal rows of norm gamma attain the bound."""
    g = np.random.default_rng(12)
    gamma, n = 2.0, 50
    bound = math.sqrt(2.0) * gamma**2 / n
    worst = 0.0
    for d in (1, 2, 3, 6):
        upper = np.triu_indices(d)
        for _ in range(400):
            rows = g.standard_normal((n, d)) * g.choice([0.5, 2.0, 50.0])
            neighbour = rows.copy()
            neighbour[g.integers(n)] = g.standard_normal(d) * g.choice([0.5, 2.0, 50.0])
            shift = (clipped_gram(rows, gamma)[0] - clipped_gram(neighbour, gamma)[0])[upper]
            worst = max(worst, float(np.linalg.norm(shift)) / bound)
    assert worst <= 1.0 + 1e-12
    rows = np.zeros((n, 2))
    rows[0] = [100.0, 0.0]
    neighbour = np.zeros((n, 2))
    neighbour[0] = [0.0, -100.0]
    shift = (clipped_gram(rows, gamma)[0] - clipped_gram(neighbour, gamma)[0])[np.triu_indices(2)]
    assert float(np.linalg.norm(shift)) == pytest.approx(bound, rel=1e-14)
    # d = 1 cannot attain it: w^2 - w'^2 moves by at most gamma^2 / n
    assert worst > 0.9


def test_the_projections_zero_or_flip_negative_eigenvalues():
    values = np.array([-2.0, -0.0, 0.5, 3.0])
    assert np.array_equal(psd_values(values, "clip"), [0.0, 0.0, 0.5, 3.0])
    assert np.array_equal(psd_values(values, "absolute"), [2.0, 0.0, 0.5, 3.0])
    x = np.zeros((200, 5))  # the release is projected noise: negative eigenvalues in every run
    clip = coinpress_covariance(x, rho=0.2, rng=np.random.default_rng(13), covariance_bound=1.0, steps=1, centre=0.0)
    flip = coinpress_covariance(x, rho=0.2, rng=np.random.default_rng(13), covariance_bound=1.0, steps=1, centre=0.0,
                                psd="absolute")
    noisy = clip.diagnostics["step_noise_stds"][0] * symmetric_noise(
        np.random.default_rng(13).standard_normal((1, 5, 5))[0])
    eigenvalues = np.linalg.eigvalsh(noisy)
    assert (eigenvalues < 0).any()
    assert np.allclose(np.linalg.eigvalsh(clip.mean), np.sort(np.maximum(eigenvalues, 0)), atol=1e-12)
    assert np.allclose(np.linalg.eigvalsh(flip.mean), np.sort(np.abs(eigenvalues)), atol=1e-12)


def test_whitenings_recover_the_whitening_of_every_step_from_the_release():
    x = gaussian_rows(14, 800, 3) * np.array([1.0, 3.0, 0.3])
    for update in ("consistent", "code"):
        estimate = coinpress_covariance(x, rho=1.0, rng=np.random.default_rng(15), covariance_bound=16.0, steps=3,
                                        centre=0.0, update=update)
        schedule = covariance_schedule(800, 3, rho=1.0, covariance_bound=16.0)
        steps = whitenings(estimate.diagnostics["step_estimates"], covariance_bound=16.0,
                           regulariser=schedule.regulariser, update=update)
        last = steps[-1]
        inverse = np.linalg.inv(last)
        z = estimate.diagnostics["step_estimates"][-1]
        expected = inverse.T @ z @ inverse if update == "consistent" else inverse @ z @ inverse
        assert np.allclose(estimate.mean, expected, rtol=1e-9)


def test_a_whitened_sample_has_covariance_near_the_identity_after_the_steps():
    x = gaussian_rows(16, 8000, 4) * np.array([1.0, 2.0, 4.0, 0.5])
    estimate = coinpress_covariance(x, rho=2.0, rng=np.random.default_rng(17), covariance_bound=64.0, steps=3,
                                    centre=0.0)
    inverse_root = np.diag(1.0 / np.array([1.0, 2.0, 4.0, 0.5]))  # Sigma^(-1/2) of the true diag(1, 4, 16, 1/4)
    assert np.linalg.norm(inverse_root @ estimate.mean @ inverse_root - np.eye(4)) < 0.15


# ---------------------------------------------------------------- centring and covariance bounds


def test_prior_centre_centring_subtracts_the_public_centre():
    x = np.random.default_rng(18).integers(-4, 5, (400, 3)).astype(float)  # integers: shifts are exact
    centre = np.array([100.0, -7.0, 3.0])
    shifted = coinpress_covariance(x + centre, rho=0.5, rng=np.random.default_rng(19), covariance_bound=8.0,
                                   centre=centre)
    plain = coinpress_covariance(x, rho=0.5, rng=np.random.default_rng(19), covariance_bound=8.0, centre=0.0)
    assert np.array_equal(shifted.mean, plain.mean)
    # without a centre: the prior ball's, else the box's
    ball = coinpress_covariance(x + centre, rho=0.5, rng=np.random.default_rng(19), covariance_bound=8.0,
                                prior_ball=(centre, 5.0), bounds=(-1.0, 1.0))
    assert np.array_equal(ball.mean, plain.mean) and ball.diagnostics["prior"] == "source"
    box = coinpress_covariance(x, rho=0.5, rng=np.random.default_rng(19), covariance_bound=8.0, bounds=(-3.0, 3.0))
    assert np.array_equal(box.mean, plain.mean) and box.diagnostics["prior"] == "box"


def test_pairs_centring_uses_the_differences_of_consecutive_rows_whatever_the_mean():
    x = np.random.default_rng(20).integers(-4, 5, (401, 3)).astype(float)
    estimate = coinpress_covariance(x, rho=0.5, rng=np.random.default_rng(21), covariance_bound=8.0,
                                    centring="pairs")
    moved = coinpress_covariance(x + 1000.0, rho=0.5, rng=np.random.default_rng(21), covariance_bound=8.0,
                                 centring="pairs")
    assert np.array_equal(estimate.mean, moved.mean)
    pairs = (x[1:400:2] - x[0:400:2]) / math.sqrt(2)
    by_hand = coinpress_covariance(pairs, rho=0.5, rng=np.random.default_rng(21), covariance_bound=8.0, centre=0.0)
    assert np.allclose(estimate.mean, by_hand.mean, rtol=1e-12)
    assert estimate.diagnostics["rows"] == 200


def test_covariance_bounds_from_the_prior_radius_or_max_std():
    x = gaussian_rows(22, 300, 4)
    kwargs = dict(rho=0.5, centre=0.0)
    radius = coinpress_covariance(x, rng=np.random.default_rng(1), covariance_bound="prior_radius",
                                  prior_ball=(0.0, 6.0), **kwargs)
    assert radius.diagnostics["covariance_bound"] == 3.0  # R / sqrt(d)
    box = coinpress_covariance(x, rng=np.random.default_rng(1), covariance_bound="prior_radius", bounds=(-2.0, 2.0),
                               **kwargs)
    assert box.diagnostics["covariance_bound"] == pytest.approx(2.0)  # (hi - lo) / 2 sqrt(d) / sqrt(d)
    std = coinpress_covariance(x, rng=np.random.default_rng(1), covariance_bound="max_std", max_std=1.5, **kwargs)
    assert std.diagnostics["covariance_bound"] == 2.25
    number = coinpress_covariance(x, rng=np.random.default_rng(1), covariance_bound=2.25, **kwargs)
    assert np.array_equal(std.mean, number.mean)


# ---------------------------------------------------------------- batched, empirical, determinism


def test_the_batched_sampler_is_the_calls_in_a_row():
    x = gaussian_rows(23, 150, 3)
    options = dict(rho=0.7, covariance_bound=4.0, steps=3)
    batched = batched_coinpress_covariance(x, rng=np.random.default_rng(24), runs=5, **options)
    rng = np.random.default_rng(24)
    calls = [coinpress_covariance(x, rng=rng, centre=0.0, **options) for _ in range(5)]
    assert batched.mean.shape == (5, 3, 3)
    for k, call in enumerate(calls):
        assert np.allclose(batched.mean[k], call.mean, rtol=1e-11, atol=1e-14)
        assert np.allclose(batched.diagnostics["step_estimates"][k], call.diagnostics["step_estimates"], rtol=1e-11,
                           atol=1e-14)
    assert batched.ledger == calls[0].ledger


def test_the_sample_covariance_is_centred_and_divided_by_n_and_booked_as_not_private():
    x = gaussian_rows(25, 50, 4) + 3.0
    estimate = empirical_covariance(x, rho=0.5, bounds=(-1.0, 1.0), rng=np.random.default_rng(0))
    assert np.allclose(estimate.mean, np.cov(x, rowvar=False, bias=True), rtol=1e-12)
    assert [entry.step for entry in estimate.ledger] == ["non_private_release"] and estimate.total == math.inf
    assert estimate.diagnostics["private"] is False


def test_a_seed_gives_the_same_bytes_and_the_data_are_left_unchanged():
    x = gaussian_rows(26, 400, 5)
    copy = x.copy()
    first = coinpress_whitened_mean(x, rho=0.5, bounds=(-5.0, 5.0), rng=np.random.default_rng(27), covariance_steps=2)
    second = coinpress_whitened_mean(mechanisms.SharedSample(x), rho=0.5, bounds=(-5.0, 5.0),
                                     rng=np.random.default_rng(27), covariance_steps=2)
    assert np.array_equal(first.mean, second.mean)
    a = coinpress_covariance(x, rho=0.5, rng=np.random.default_rng(28), covariance_bound=4.0, centring="pairs")
    b = coinpress_covariance(x, rho=0.5, rng=np.random.default_rng(28), covariance_bound=4.0, centring="pairs")
    assert np.array_equal(a.mean, b.mean)
    assert np.array_equal(x, copy)


def test_d_784_and_n_6000_works():
    x = gaussian_rows(29, 6000, 784)
    estimate = coinpress_covariance(x, rho=0.5, rng=np.random.default_rng(30), covariance_bound=1.0, steps=1,
                                    centre=0.0)
    assert estimate.mean.shape == (784, 784) and np.array_equal(estimate.mean, estimate.mean.T)
    assert np.min(np.linalg.eigvalsh(estimate.mean)) > -1e-9
    assert estimate.total == 0.5


# ---------------------------------------------------------------- the whitened mean


@pytest.mark.parametrize("prior_mapping", ["whitened", "unchanged"])
def test_the_whitened_mean_is_coinpress_on_rows_whitened_by_the_regularised_estimate(prior_mapping):
    x = gaussian_rows(31, 2000, 3) * np.array([1.0, 5.0, 0.2]) + np.array([2.0, -1.0, 0.5])
    estimate = coinpress_whitened_mean(x, rho=0.6, bounds=(-20.0, 20.0), rng=np.random.default_rng(32),
                                       covariance_steps=2, mean_steps=3, prior_mapping=prior_mapping)
    rng = np.random.default_rng(32)
    # by hand: the covariance with half of rho from the same generator, then CoinPress on S^(-1/2) x
    covariance = coinpress_covariance(x, rho=0.3, rng=rng, covariance_bound="prior_radius", bounds=(-20.0, 20.0),
                                      steps=2)
    s = covariance.diagnostics["regularised_estimate"]
    assert np.array_equal(estimate.diagnostics["whitening_covariance"], s)
    values, vectors = np.linalg.eigh(s)
    inverse_root = vectors @ np.diag(values**-0.5) @ vectors.T
    radius = 20.0 * math.sqrt(3)  # the box's ball: centre 0
    whitened_radius = radius / math.sqrt(values[0]) if prior_mapping == "whitened" else radius
    mean = coinpress(x @ inverse_root, rho=0.3, centre=np.zeros(3), radius=whitened_radius, rng=rng, steps=3)
    root = vectors @ np.diag(values**0.5) @ vectors.T
    assert np.allclose(estimate.mean, root @ mean.mean, rtol=1e-9)
    assert estimate.diagnostics["whitened_prior_radius"] == pytest.approx(whitened_radius, rel=1e-12)
    assert np.allclose(estimate.diagnostics["mean_step_centres"], mean.diagnostics["step_centres"], rtol=1e-9)


def test_the_prior_ball_is_mapped_to_the_whitened_space():
    x = gaussian_rows(33, 1000, 2) * np.array([4.0, 0.5]) + 3.0
    estimate = coinpress_whitened_mean(x, rho=0.5, bounds=(-50.0, 50.0), rng=np.random.default_rng(34),
                                       prior_ball=(np.array([3.0, 2.0]), 4.0))
    s = estimate.diagnostics["whitening_covariance"]
    values, vectors = np.linalg.eigh(s)
    assert estimate.diagnostics["whitened_prior_radius"] == pytest.approx(4.0 / math.sqrt(values[0]), rel=1e-12)
    centre = vectors @ np.diag(values**-0.5) @ vectors.T @ np.array([3.0, 2.0])
    assert np.allclose(estimate.diagnostics["whitened_prior_centre"], centre, rtol=1e-12)
    # the image of B(c, R) under S^(-1/2) lies inside the whitened ball: its farthest points along the
    # eigenvector of lambda_min are at R / sqrt(lambda_min)
    far = np.array([3.0, 2.0]) + 4.0 * vectors[:, 0]
    whitened = vectors @ np.diag(values**-0.5) @ vectors.T @ far
    assert np.linalg.norm(whitened - centre) == pytest.approx(estimate.diagnostics["whitened_prior_radius"], rel=1e-12)
    assert np.linalg.norm(estimate.mean - 3.0) < 0.5


def test_the_whitened_mean_is_accurate_on_an_anisotropic_gaussian():
    x = gaussian_rows(35, 5000, 5) * np.array([10.0, 1.0, 1.0, 0.1, 3.0]) + 1.0
    estimate = coinpress_whitened_mean(x, rho=1.0, bounds=(-100.0, 100.0), rng=np.random.default_rng(36),
                                       covariance_bound=100.0, covariance_steps=2)
    assert np.linalg.norm(estimate.mean - 1.0) < 0.5
    assert estimate.diagnostics["fraction_clipped"] < 0.01


# ---------------------------------------------------------------- bad arguments


GOOD = dict(rho=0.5, rng=None, covariance_bound=4.0, centre=0.0)


@pytest.mark.parametrize(("changes", "message"), [
    ({"rho": -1.0}, "rho must be finite and > 0"),
    ({"covariance_bound": 0.0}, "covariance_bound must be finite and > 0"),
    ({"covariance_bound": 1e101}, "covariance_bound must be at most"),
    ({"covariance_bound": "median"}, "covariance_bound must be one of"),
    ({"covariance_bound": "max_std"}, "covariance_bound='max_std' needs max_std"),
    ({"covariance_bound": "prior_radius", "centre": 0.0}, "needs a prior ball"),
    ({"steps": 0}, "steps must be a positive integer"),
    ({"steps": 3, "budget_shares": [1, 2]}, "budget_shares must have one share per step"),
    ({"beta": 1.0}, r"beta must be in \(0, 1\)"),
    ({"psd": "zero"}, "psd must be one of"),
    ({"update": "left"}, "update must be one of"),
    ({"centring": "mean"}, "centring must be one of"),
    ({"centring": "pairs"}, "centre applies to centring='prior_centre' only"),
    ({"centre": [1.0, 2.0]}, "centre must be a number or one value per column"),
    ({"rng": 3}, "rng must be a numpy.random.Generator"),
    ({"rho": 1e-250}, "rho=1e-250 with n=50"),
    ({"covariance_bound": 1e-199, "steps": 3}, "covariance_bound=1e-199 with steps=3"),
])
def test_a_bad_argument_raises_a_value_error_naming_it(changes, message):
    arguments = {**GOOD, "rng": np.random.default_rng(0), **changes}
    with pytest.raises(ValueError, match=message):
        coinpress_covariance(gaussian_rows(37, 50, 3), **arguments)


def test_bad_data_and_whitened_mean_arguments_are_refused_naming_them():
    with pytest.raises(ValueError, match="x must be finite"):
        coinpress_covariance(np.array([[1.0, np.nan]]), **{**GOOD, "rng": np.random.default_rng(0)})
    with pytest.raises(ValueError, match="centring='pairs' needs at least 2 rows"):
        coinpress_covariance(np.ones((1, 2)), rho=0.5, rng=np.random.default_rng(0), covariance_bound=1.0,
                             centring="pairs")
    with pytest.raises(ValueError, match="covariance_bound=1e-80 with steps=3: the rows"):
        coinpress_covariance(np.full((5, 2), 1e70), rho=0.5, rng=np.random.default_rng(0), covariance_bound=1e-80,
                             centre=0.0)
    x = gaussian_rows(38, 100, 2)
    for changes, message in [({"covariance_share": 1.0}, r"covariance_share must be in \(0, 1\)"),
                             ({"prior_mapping": "as_is"}, "prior_mapping must be one of"),
                             ({"bounds": (1.0, 0.0)}, "bounds must be finite with lo < hi"),
                             ({"mean_steps": 0}, "steps must be a positive integer")]:
        with pytest.raises(ValueError, match=message):
            coinpress_whitened_mean(x, **{"rho": 0.5, "bounds": (-3.0, 3.0), "rng": np.random.default_rng(0),
                                          **changes})
