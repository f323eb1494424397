"""User-level clipping (docs/design.md §5.7; Rameshwar and Tandon): T_eps and the intervals of
Theorem III.1, the l1 projection (Lemma III.1, Appendix A), sensitivities on worst-case
neighbours, the worst-case error of equation (7) by Monte Carlo, pure-DP ledgers, the exact
privacy of AKMV's threshold, the batched random stream, noise scales and bad input."""
import math
import re

import numpy as np
import pytest
import scipy.optimize
import scipy.stats

from mechanisms import PureLedgerEntry
from mechanisms.userlevel import (
    akmv,
    akmv_statistic,
    clipping_intervals,
    jump_points,
    l1_projection,
    laplace,
    opt_worst_case,
    threshold,
    threshold_weights,
    true_mean,
    worst_case_error,
    worst_case_error_laplace,
    worst_case_error_opt,
)

MECHANISMS = {"laplace": laplace, "opt_worst_case": opt_worst_case, "akmv": akmv}
SMALL = np.array([1, 2, 2, 5])  # L = 4, sum m = 10, m* = 5


def geometric(M):
    """docs/design.md §5.7: for i = 0..M, 2^i users with 2^(M-i) samples (L = 2^(M+1) - 1)."""
    return np.concatenate([np.full(2**i, 2 ** (M - i)) for i in range(M + 1)])


def users_of(counts):
    return np.repeat(np.arange(len(counts)), counts)


def simplex_points(rng, shape, d, bound):
    """Points of {x >= 0, ||x||_1 <= bound}: the first d coordinates of a Dirichlet(1, ..., 1) in d + 1."""
    return rng.dirichlet(np.ones(d + 1), size=shape)[..., :d] * bound


def domain_samples(rng, shape, d, bound):
    return rng.uniform(0.0, bound, size=shape) if d == 1 else simplex_points(rng, shape, d, bound)


def kth_largest(values, k):
    return np.sort(values)[::-1][k - 1] if k <= len(values) else 0.0


# ---------------------------------------------------------------- T_eps (Theorem III.1)


@pytest.mark.parametrize("eps,d,bound,expected", [
    (2.0, 1, 1.0, 5.0),    # k = 1: the largest U m_l
    (1.0, 1, 1.0, 2.0),    # k = 2
    (0.7, 1, 1.0, 2.0),    # k = ceil(2.86) = 3: the 2 twice
    (0.6, 1, 1.0, 1.0),    # k = ceil(3.33) = 4 = L
    (0.45, 1, 1.0, 0.0),   # k = 5 > L
    (4.0, 2, 3.0, 15.0),   # d = 2: k = ceil(4 / 4) = 1
    (2.0, 2, 3.0, 6.0),    # k = 2
    (1.0, 2, 3.0, 3.0),    # k = 4
    (0.9, 2, 3.0, 0.0),    # k = 5 > L
    (1.5, 3, 3.0, 3.0),    # d = 3: k = 4
])
def test_threshold_is_the_ceil_2d_over_eps_th_largest_U_m_by_hand(eps, d, bound, expected):
    assert threshold(SMALL, eps=eps, bound=bound, d=d) == expected


@pytest.mark.parametrize("d", [1, 2, 5])
def test_threshold_at_eps_2d_over_49_uses_rank_49_not_50(d):
    counts = np.arange(1, 61)  # the k-th largest is 61 - k
    eps = 2 * d / 49
    assert threshold(counts, eps=eps, bound=1.0, d=d) == 12.0
    assert threshold(counts, eps=eps * (1 - 1e-7), bound=1.0, d=d) == 11.0  # just left of the jump: k = 50


@pytest.mark.parametrize("d", [1, 3])
def test_threshold_matches_a_sort_of_the_counts_on_an_eps_grid(d):
    counts = np.random.default_rng(1).integers(1, 40, size=25)
    for eps in np.geomspace(0.05, 10.0, 57):
        k = math.ceil(2 * d / eps)
        assert threshold(counts, eps=eps, bound=2.5, d=d) == 2.5 * kth_largest(counts, k)


def test_threshold_is_zero_when_k_exceeds_the_number_of_users():
    assert threshold(geometric(3), eps=2 / 16, bound=65.0, d=1) == 0.0  # k = 16 > L = 15
    assert threshold(geometric(3), eps=2 / 15, bound=65.0, d=1) == 65.0  # k = 15 = L: the smallest U m_l


@pytest.mark.parametrize("d", [1, 2, 8])
def test_jump_points_are_2d_over_k_in_range_and_each_starts_rank_k(d):
    counts = np.arange(1, 400)
    points = jump_points(d=d, eps_low=0.05, eps_high=5.0)
    ks = np.arange(math.ceil(2 * d / 5.0), math.floor(2 * d / 0.05) + 1)
    assert np.allclose(points, np.sort(2 * d / ks), rtol=0, atol=0)
    assert np.all(np.diff(points) > 0)
    for eps, k in zip(points, ks[::-1]):
        assert threshold(counts, eps=eps, bound=1.0, d=d) == kth_largest(counts, k)
        assert threshold(counts, eps=eps * (1 - 1e-7), bound=1.0, d=d) == kth_largest(counts, k + 1)


def test_jump_points_include_both_ends_of_the_range_when_they_are_jumps():
    points = jump_points(d=1, eps_low=2 / 40, eps_high=2.0)
    assert points[0] == 2 / 40 and points[-1] == 2.0 and points.size == 40


# ---------------------------------------------------------------- intervals (Theorem III.1)


@pytest.mark.parametrize("eps,lower,upper", [
    (1.0, [0, 0, 0, 0.3], [1, 1, 1, 0.7]),                   # T = 2
    (0.6, [0, 0.25, 0.25, 0.4], [1, 0.75, 0.75, 0.6]),       # T = 1
    (0.45, [0.5] * 4, [0.5] * 4),                            # T = 0: every sample to U/2
    (2.0, [0] * 4, [1] * 4),                                 # T = 5 = U m*: nothing clipped
])
def test_clipping_intervals_for_d_1_by_hand(eps, lower, upper):
    a, b = clipping_intervals(SMALL, eps=eps, bound=1.0, d=1)
    assert np.allclose(a, lower, rtol=0, atol=1e-15) and np.allclose(b, upper, rtol=0, atol=1e-15)


@pytest.mark.parametrize("eps,upper", [
    (2.0, [1, 1, 1, 0.4]),       # T = 2
    (1.0, [1, 0.5, 0.5, 0.2]),   # T = 1
    (0.9, [0, 0, 0, 0]),         # T = 0
])
def test_clipping_intervals_for_d_2_by_hand(eps, upper):
    a, b = clipping_intervals(SMALL, eps=eps, bound=1.0, d=2)
    assert np.array_equal(a, np.zeros(4)) and np.allclose(b, upper, rtol=0, atol=1e-15)


@pytest.mark.parametrize("eps", [0.05, 0.3, 1.0, 4.0])
def test_d_1_intervals_are_symmetric_about_U_over_2_with_width_min_of_U_m_and_T(eps):
    """Lemma III.4 (a_l + b_l = U) and m_l (b_l - a_l) = min(U m_l, T_eps)."""
    counts = geometric(5)
    a, b = clipping_intervals(counts, eps=eps, bound=65.0, d=1)
    T = threshold(counts, eps=eps, bound=65.0, d=1)
    assert np.allclose(a + b, 65.0, rtol=1e-15)
    assert np.allclose(counts * (b - a), np.minimum(65.0 * counts, T), rtol=1e-13)


# ---------------------------------------------------------------- worst-case errors


@pytest.mark.parametrize("d,eps,opt,vanilla", [
    (1, 1.0, (1.5 + 2.0) / 10, 5 / 10),           # (7): T = 2; Laplace U m* / (eps sum m)
    (1, 0.45, 0.5, 5 / 4.5),                      # T = 0: U / 2
    (2, 1.0, (6.0 + 4.0) / 10, 2 * 2 * 5 / 10),   # (8): T = 1; Laplace 2 d U m* / (eps sum m)
    (2, 0.9, 1.0, 2 * 2 * 5 / 9),                 # T = 0: U
])
def test_worst_case_errors_by_hand(d, eps, opt, vanilla):
    assert worst_case_error_opt(SMALL, eps=eps, bound=1.0, d=d) == pytest.approx(opt, rel=1e-14)
    assert worst_case_error_laplace(SMALL, eps=eps, bound=1.0, d=d) == pytest.approx(vanilla, rel=1e-14)


@pytest.mark.parametrize("d", [1, 2, 4])
def test_equations_7_and_8_are_proposition_III_1_at_the_theorem_intervals(d):
    counts = geometric(6)
    for eps in np.geomspace(0.02, 20.0, 40):
        a, b = clipping_intervals(counts, eps=eps, bound=65.0, d=d)
        general = worst_case_error(counts, lower=a, upper=b, eps=eps, bound=65.0, d=d)
        assert worst_case_error_opt(counts, eps=eps, bound=65.0, d=d) == pytest.approx(general, rel=1e-12)
        no_clipping = worst_case_error(counts, lower=0.0, upper=65.0, eps=eps, bound=65.0, d=d)
        assert worst_case_error_laplace(counts, eps=eps, bound=65.0, d=d) == pytest.approx(no_clipping, rel=1e-12)


@pytest.mark.parametrize("d", [1, 3])
def test_theorem_intervals_beat_random_per_user_intervals_in_proposition_III_1(d):
    rng = np.random.default_rng(3)
    counts = np.array([1, 1, 2, 3, 3, 7, 12])
    for eps in [0.1, 0.5, 1.0, 3.0]:
        best = worst_case_error_opt(counts, eps=eps, bound=1.0, d=d)
        for _ in range(2000):
            ends = np.sort(rng.random((2, counts.size)), axis=0)
            lower = ends[0] if d == 1 else np.zeros(counts.size)
            value = worst_case_error(counts, lower=lower, upper=ends[1], eps=eps, bound=1.0, d=d)
            assert value >= best * (1 - 1e-12)


def test_opt_worst_case_error_tends_to_the_noise_free_bias_as_eps_falls():
    assert worst_case_error_opt(geometric(6), eps=1e-3, bound=65.0, d=1) == 32.5
    assert worst_case_error_opt(geometric(6), eps=1e-3, bound=65.0, d=8) == 65.0


# ---------------------------------------------------------------- the l1 projection (Lemma III.1)


def l1_distance_to_simplex(point, radius):
    """min ||point - z||_1 over z >= 0, sum z <= radius, as a linear program (no clipping rule)."""
    d = point.size
    # variables (z, t): minimise sum t with -t <= point - z <= t
    cost = np.r_[np.zeros(d), np.ones(d)]
    eye = np.eye(d)
    inequalities = np.block([[-eye, -eye], [eye, -eye], [np.ones((1, d)), np.zeros((1, d))]])
    right = np.r_[-point, point, radius]
    bounds = [(0, None)] * d + [(None, None)] * d
    result = scipy.optimize.linprog(cost, A_ub=inequalities, b_ub=right, bounds=bounds, method="highs")
    assert result.status == 0
    return result.fun


@pytest.mark.parametrize("d", [2, 3, 6])
def test_l1_projection_keeps_points_inside_and_scales_outside_ones_to_the_radius(d):
    rng = np.random.default_rng(d)
    points = simplex_points(rng, 400, d, 5.0)
    radius = rng.uniform(0.0, 5.0, size=400)
    projected = l1_projection(points, radius)
    norms = points.sum(axis=1)
    inside = norms <= radius
    assert inside.any() and (~inside).any()
    assert np.array_equal(projected[inside], points[inside])
    assert np.allclose(projected[~inside].sum(axis=1), radius[~inside], rtol=1e-13)
    direction = points[~inside] / norms[~inside, None]
    assert np.allclose(projected[~inside], direction * radius[~inside, None], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_l1_projection_meets_lemma_III_1_and_is_a_nearest_point_by_linear_programming(d):
    """Lemma III.1: ||y||_1 = r and 0 <= y <= a; Proposition A.1: then ||a - y||_1 = ||a||_1 - r,
    the l1 distance from a to the simplex of radius r (computed independently by an LP)."""
    rng = np.random.default_rng(10 + d)
    for _ in range(30):
        point = simplex_points(rng, (), d, 4.0)
        radius = rng.uniform(0.0, point.sum())
        y = l1_projection(point, radius)
        assert y.sum() == pytest.approx(radius, rel=1e-13, abs=1e-15)
        assert np.all(y >= 0) and np.all(y <= point)
        assert np.abs(point - y).sum() == pytest.approx(point.sum() - radius, rel=1e-12, abs=1e-13)
        assert np.abs(point - y).sum() == pytest.approx(l1_distance_to_simplex(point, radius), rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("average_users", [False, True])
@pytest.mark.parametrize("d", [2, 4])
def test_opt_worst_case_statistic_is_the_mean_of_projected_samples_or_averages(d, average_users):
    rng = np.random.default_rng(20 + d)
    counts = geometric(3)
    users = users_of(counts)
    x = simplex_points(rng, (5, users.size), d, 2.0)
    eps = 0.9
    _, b = clipping_intervals(counts, eps=eps, bound=2.0, d=d)
    estimate = opt_worst_case(x, users=users, eps=eps, bound=2.0, rng=rng, batched=True, average_users=average_users)
    if average_users:
        sums = np.stack([np.stack([run[users == user].sum(axis=0) for user in range(counts.size)]) for run in x])
        expected = (l1_projection(sums / counts[:, None], b) * counts[:, None]).sum(axis=1) / users.size
    else:
        expected = l1_projection(x, b[users]).mean(axis=1)
    assert np.allclose(estimate.diagnostics["statistic"], expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("average_users", [False, True])
def test_opt_worst_case_statistic_for_d_1_clips_samples_or_averages_to_the_intervals(average_users):
    rng = np.random.default_rng(30)
    users = users_of(SMALL)
    x = rng.uniform(0.0, 1.0, size=(6, users.size))
    estimate = opt_worst_case(x, users=users, eps=0.6, bound=1.0, rng=rng, batched=True, average_users=average_users)
    a, b = clipping_intervals(SMALL, eps=0.6, bound=1.0, d=1)
    if average_users:
        averages = np.stack([np.bincount(users, weights=run) for run in x]) / SMALL
        expected = (np.clip(averages, a, b) * SMALL).sum(axis=1) / 10
    else:
        expected = np.clip(x, a[users], b[users]).mean(axis=1)
    assert np.allclose(estimate.diagnostics["statistic"][:, 0], expected, rtol=1e-13)


# ---------------------------------------------------------------- sensitivity on worst-case neighbours


def worst_neighbours(counts, d, bound, seed):
    """Pairs (first, second) of batched datasets: run j of both differs only in user l's samples,
    for every user l and each worst-case replacement: all 0 -> all U for d = 1; for d >= 2 all
    U e_1 -> all U e_2 (the proof of Lemma III.3) and all 0 -> all U e_1; then a random
    replacement. The other users' samples are random points of the domain."""
    rng = np.random.default_rng(seed)
    users = users_of(counts)
    corner = np.eye(d) * bound
    replacements = [(np.zeros(d), corner[0])]
    if d >= 2:
        replacements.append((corner[0], corner[1]))
    first, second = [], []
    for user in range(len(counts)):
        mask = users == user
        for one, other in replacements + [(None, None)]:
            base = domain_samples(rng, users.size, d, bound).reshape(users.size, d)
            a, b = base.copy(), base.copy()
            if one is None:
                b[mask] = domain_samples(rng, mask.sum(), d, bound).reshape(-1, d)
            else:
                a[mask], b[mask] = one, other
            first.append(a)
            second.append(b)
    return users, np.stack(first), np.stack(second)


def moved(first, second):
    return np.abs(first - second).sum(axis=-1)


SENSITIVITY_CASES = [(SMALL, 1), (SMALL, 2), (geometric(3), 1), (geometric(3), 3)]
SENSITIVITY_EPS = [0.1, 0.5, 1.0, 3.0, 8.0]


@pytest.mark.parametrize("average_users", [False, True])
@pytest.mark.parametrize("name", ["laplace", "opt_worst_case"])
@pytest.mark.parametrize("counts,d", SENSITIVITY_CASES)
def test_one_user_moves_the_clipped_statistic_by_at_most_and_up_to_the_sensitivity(counts, d, name, average_users):
    users, first, second = worst_neighbours(counts, d, 2.0, seed=len(counts) + d)
    for eps in SENSITIVITY_EPS:
        runs = [MECHANISMS[name](x, users=users, eps=eps, bound=2.0, rng=np.random.default_rng(0), batched=True,
                                 average_users=average_users) for x in (first, second)]
        sensitivity = runs[0].diagnostics["sensitivity"]
        change = moved(runs[0].diagnostics["statistic"], runs[1].diagnostics["statistic"])
        assert np.all(change <= sensitivity * (1 + 1e-12) + 1e-15)
        assert change.max() == pytest.approx(sensitivity, rel=1e-12, abs=1e-15)  # the worst pair attains it


@pytest.mark.parametrize("counts,d", SENSITIVITY_CASES)
def test_one_user_moves_akmv_clipped_statistic_by_at_most_its_sensitivity_at_the_chosen_threshold(counts, d):
    users, first, second = worst_neighbours(counts, d, 2.0, seed=40 + d)
    factor = 1.0 if d == 1 else 2.0
    for eps in SENSITIVITY_EPS:
        for data in (first, second):
            run = akmv(data, users=users, eps=eps, bound=2.0, rng=np.random.default_rng(1), batched=True)
            T = run.diagnostics["T_eps"]
            assert np.allclose(run.diagnostics["sensitivity"], factor * T / users.size, rtol=1e-15)
            assert np.allclose(run.diagnostics["statistic"],
                               akmv_statistic(data, users=users, threshold=T, bound=2.0, batched=True), rtol=1e-13)
            change = moved(akmv_statistic(first, users=users, threshold=T, bound=2.0, batched=True),
                           akmv_statistic(second, users=users, threshold=T, bound=2.0, batched=True))
            assert np.all(change <= run.diagnostics["sensitivity"] * (1 + 1e-12) + 1e-15)


def test_akmv_statistic_at_a_threshold_below_every_user_moves_by_exactly_the_sensitivity():
    users, first, second = worst_neighbours(SMALL, 2, 2.0, seed=50)
    T = np.full(first.shape[0], 0.5)  # every worst-case user sum (>= 2) is clipped
    change = moved(akmv_statistic(first, users=users, threshold=T, bound=2.0, batched=True),
                   akmv_statistic(second, users=users, threshold=T, bound=2.0, batched=True))
    assert change.max() == pytest.approx(2 * 0.5 / 10, rel=1e-13)


# ---------------------------------------------------------------- worst-case error (7) by Monte Carlo


RUNS = 100_000
SE = 4  # Monte-Carlo tolerance in standard errors: about a dozen comparisons share this file's seeds


@pytest.mark.parametrize("counts,eps,bound,runs", [(SMALL, 1.5, 1.0, RUNS), (geometric(6), 0.5, 65.0, RUNS // 5)])
@pytest.mark.parametrize("value", ["zero", "bound"])
def test_opt_worst_case_error_on_the_adversarial_datasets_is_equation_7_as_bias_plus_noise(counts, eps, bound, runs,
                                                                                          value):
    """The bias of Lemma III.2 is attained when every sample sits at 0 (error a_l each) or every
    sample at U (error U - b_l = a_l each): same sign, so they add up. Metric (1) = that bias +
    E|Z|, which is equation (7). The expected error E|bias + Z| of the release on that dataset is
    smaller: beta + b exp(-beta / b) for Z ~ Lap(b) (metric (1) is its triangle-inequality bound)."""
    users = users_of(counts)
    sample = 0.0 if value == "zero" else bound
    x = np.broadcast_to(np.full(users.size, sample), (runs, users.size))
    estimate = opt_worst_case(x, users=users, eps=eps, bound=bound, rng=np.random.default_rng(60), batched=True)
    f = true_mean(x, users=users, batched=True)
    bias = np.abs(estimate.diagnostics["statistic"] - f)[:, 0]
    T = threshold(counts, eps=eps, bound=bound, d=1)
    beta = np.sum(np.maximum((bound * counts - T) / 2, 0)) / counts.sum()
    assert beta > 0 and np.allclose(bias, beta, rtol=1e-12)
    noise = np.abs(estimate.mean - estimate.diagnostics["statistic"])[:, 0]
    metric = bias + noise
    equation_7 = worst_case_error_opt(counts, eps=eps, bound=bound, d=1)
    assert abs(metric.mean() - equation_7) <= SE * metric.std() / math.sqrt(runs)
    error = np.abs(estimate.mean - f)[:, 0]
    b = estimate.diagnostics["noise_scale"]
    exact = beta + b * math.exp(-beta / b)
    assert abs(error.mean() - exact) <= SE * error.std() / math.sqrt(runs)
    assert error.mean() < equation_7 - 20 * error.std() / math.sqrt(runs)


def test_opt_worst_case_error_is_equation_7_exactly_when_T_eps_is_zero():
    users = users_of(SMALL)
    x = np.zeros((1000, users.size))
    estimate = opt_worst_case(x, users=users, eps=0.45, bound=1.0, rng=np.random.default_rng(61), batched=True)
    error = np.abs(estimate.mean - true_mean(x, users=users, batched=True))
    assert np.all(error == worst_case_error_opt(SMALL, eps=0.45, bound=1.0, d=1)) and np.all(error == 0.5)


def test_laplace_mean_absolute_error_is_its_worst_case_error_on_any_dataset():
    counts = geometric(4)
    users = users_of(counts)
    rng = np.random.default_rng(62)
    x = rng.uniform(0, 65.0, size=(RUNS, users.size))
    estimate = laplace(x, users=users, eps=0.3, bound=65.0, rng=rng, batched=True)
    error = np.abs(estimate.mean - true_mean(x, users=users, batched=True))[:, 0]
    expected = worst_case_error_laplace(counts, eps=0.3, bound=65.0, d=1)
    assert abs(error.mean() - expected) <= SE * error.std() / math.sqrt(RUNS)


# ---------------------------------------------------------------- ledgers


@pytest.mark.parametrize("eps", [0.05, 2 / 49, 0.1 + 0.2, 1.0, 5.0, 7e-3])
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_ledger_holds_pure_dp_entries_summing_exactly_to_eps(name, eps):
    users = users_of(SMALL)
    x = np.random.default_rng(70).uniform(0, 1, size=users.size)
    estimate = MECHANISMS[name](x, users=users, eps=eps, bound=1.0, rng=np.random.default_rng(71))
    assert all(isinstance(entry, PureLedgerEntry) for entry in estimate.ledger)
    assert estimate.unit == "eps" and estimate.total == eps and math.fsum(e.eps for e in estimate.ledger) == eps
    expected = [("quantile", eps / 2), ("laplace", eps - eps / 2)] if name == "akmv" else [("laplace", eps)]
    assert [tuple(entry) for entry in estimate.ledger] == expected


# ---------------------------------------------------------------- AKMV's threshold is eps/2-DP


def exact_threshold_density(user_sums, *, eps_quantile, k, hi, points):
    """Density of AKMV's T from first principles (docs/design.md §5.7): intervals between the sorted
    sums padded with 0 and hi; interval i has weight width_i exp(eps_q / 2 * -|i - t|), t = max(L - k, 0),
    and T is uniform inside the chosen interval, so density = exp(eps_q / 2 * -|i - t|) / sum(weights)."""
    edges = np.r_[0.0, np.sort(np.clip(user_sums, 0, hi)), hi]
    L = len(user_sums)
    factors = np.exp(-eps_quantile / 2 * np.abs(np.arange(L + 1) - max(L - k, 0)))
    total = np.sum(np.diff(edges) * factors)
    interval = np.clip(np.searchsorted(edges, points, side="right") - 1, 0, L)
    return factors[interval] / total, edges, np.diff(edges) * factors


def user_sum_norms(x, users):
    return np.bincount(users, weights=np.abs(x).reshape(users.size, -1).sum(axis=1))


@pytest.mark.parametrize("eps", [0.2, 1.0, 1.5, 4.0])
@pytest.mark.parametrize("d", [1, 2])
def test_akmv_threshold_density_ratio_on_neighbours_is_at_most_exp_eps_over_2(eps, d):
    rng = np.random.default_rng(80 + d)
    users = users_of(SMALL)
    hi = 1.0 * SMALL.max()
    points = np.linspace(0.0, hi, 40001)[1:-1]
    k = math.ceil(2 / eps)
    worst = 0.0
    for _ in range(40):
        x = domain_samples(rng, users.size, d, 1.0).reshape(users.size, d)
        user = rng.integers(SMALL.size)
        neighbour = x.copy()
        choice = rng.integers(3)
        mask = users == user
        neighbour[mask] = [np.zeros(d), np.eye(d)[0], None][choice] if choice < 2 else \
            domain_samples(rng, mask.sum(), d, 1.0).reshape(-1, d)
        densities = []
        for data in (x, neighbour):
            density, edges, weights = exact_threshold_density(user_sum_norms(data, users), eps_quantile=eps / 2, k=k,
                                                              hi=hi, points=points)
            ours_edges, ours = threshold_weights(user_sum_norms(data, users)[None], eps=eps / 2, hi=hi, rank=k)
            assert np.allclose(ours_edges[0], edges) and np.allclose(ours[0] / ours.sum(), weights / weights.sum())
            densities.append(density)
        ratio = np.max(np.abs(np.log(densities[0]) - np.log(densities[1])))
        assert ratio <= eps / 2 * (1 + 1e-9)
        worst = max(worst, ratio)
    assert worst > 0.25 * eps / 2  # the pairs do move the density: the check is not vacuous


@pytest.mark.parametrize("eps", [0.4, 1.0, 3.0])
@pytest.mark.parametrize("d", [1, 3])
def test_akmv_threshold_samples_follow_the_exact_density(eps, d):
    rng = np.random.default_rng(90 + d)
    counts = geometric(3)
    users = users_of(counts)
    x = domain_samples(rng, users.size, d, 1.0).reshape(users.size, d)
    runs = 20_000
    batch = np.broadcast_to(x, (runs, users.size, d))
    T = akmv(batch, users=users, eps=eps, bound=1.0, rng=rng, batched=True).diagnostics["T_eps"]
    hi = float(counts.max())
    _, edges, weights = exact_threshold_density(user_sum_norms(x, users), eps_quantile=eps / 2,
                                                k=math.ceil(2 / eps), hi=hi, points=np.array([]))
    cumulative = np.r_[0.0, np.cumsum(weights)] / weights.sum()

    def cdf(t):
        return np.interp(t, edges, cumulative)

    assert scipy.stats.kstest(T, cdf).pvalue > 1e-3


# ---------------------------------------------------------------- batches and the random stream


def batch_data(d, runs=6, seed=100):
    rng = np.random.default_rng(seed)
    users = users_of(geometric(3))
    x = domain_samples(rng, (runs, users.size), d, 3.0)
    return users, x


@pytest.mark.parametrize("average_users", [False, True])
@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_a_batched_call_equals_unbatched_calls_in_a_row_on_the_same_generator(name, d, average_users):
    users, x = batch_data(d)
    together = MECHANISMS[name](x, users=users, eps=0.7, bound=3.0, rng=np.random.default_rng(5), batched=True,
                                average_users=average_users)
    rng = np.random.default_rng(5)
    alone = [MECHANISMS[name](run, users=users, eps=0.7, bound=3.0, rng=rng, average_users=average_users)
             for run in x]
    assert together.mean.shape == (x.shape[0], d) and alone[0].mean.shape == (d,)
    assert np.array_equal(together.mean, np.stack([a.mean for a in alone]))
    for key in ("T_eps", "noise_scale", "fraction_clipped"):
        if key in alone[0].diagnostics:
            expected = np.stack([np.asarray(a.diagnostics[key]) for a in alone])
            assert np.array_equal(np.broadcast_to(together.diagnostics[key], expected.shape), expected)
            assert np.isscalar(alone[0].diagnostics[key]) or isinstance(alone[0].diagnostics[key], float)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_an_unbatched_call_is_the_batched_call_with_one_run(name):
    users, x = batch_data(2)
    one = MECHANISMS[name](x[0], users=users, eps=1.2, bound=3.0, rng=np.random.default_rng(8))
    batch = MECHANISMS[name](x[:1], users=users, eps=1.2, bound=3.0, rng=np.random.default_rng(8), batched=True)
    assert np.array_equal(one.mean, batch.mean[0]) and one.ledger == batch.ledger


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_d_1_samples_may_come_with_or_without_a_last_axis_of_length_1(name):
    users, x = batch_data(1)
    flat = MECHANISMS[name](x, users=users, eps=1.0, bound=3.0, rng=np.random.default_rng(9), batched=True)
    column = MECHANISMS[name](x[..., None], users=users, eps=1.0, bound=3.0, rng=np.random.default_rng(9), batched=True)
    assert np.array_equal(flat.mean, column.mean) and flat.mean.shape == (x.shape[0], 1)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_the_same_seed_gives_the_same_release_and_another_seed_another(name):
    users, x = batch_data(3)
    first, again, other = (MECHANISMS[name](x, users=users, eps=1.0, bound=3.0, rng=np.random.default_rng(seed),
                                            batched=True) for seed in (3, 3, 4))
    assert np.array_equal(first.mean, again.mean) and not np.array_equal(first.mean, other.mean)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_the_stream_use_depends_on_neither_data_nor_eps(name):
    users, x = batch_data(2)
    states = []
    for eps, data in [(0.01, x), (5.0, np.zeros_like(x))]:  # T_eps = 0 (noise-free for OPT-wc) and large eps
        rng = np.random.default_rng(11)
        MECHANISMS[name](data, users=users, eps=eps, bound=3.0, rng=rng, batched=True)
        states.append(rng.random())
    assert states[0] == states[1]


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_users_in_any_order_give_the_same_statistic(name):
    users, x = batch_data(2)
    order = np.random.default_rng(12).permutation(users.size)
    sorted_run, shuffled_run = (
        MECHANISMS[name](data, users=ids, eps=0.8, bound=3.0, rng=np.random.default_rng(13), batched=True,
                         average_users=True)
        for data, ids in [(x, users), (x[:, order], users[order])]
    )
    assert np.allclose(sorted_run.diagnostics["statistic"], shuffled_run.diagnostics["statistic"], rtol=1e-12)
    assert np.allclose(sorted_run.mean, shuffled_run.mean, rtol=1e-12)


def test_averaging_users_changes_only_opt_worst_case():
    users, x = batch_data(1)
    for name, mechanism in MECHANISMS.items():
        plain, averaged = (mechanism(x, users=users, eps=0.8, bound=3.0, rng=np.random.default_rng(14), batched=True,
                                     average_users=flag) for flag in (False, True))
        same = np.allclose(plain.mean, averaged.mean, rtol=1e-12)
        assert same == (name != "opt_worst_case")


# ---------------------------------------------------------------- noise scales


@pytest.mark.parametrize("d", [1, 3])
def test_noise_scales_match_the_formulas(d):
    counts = geometric(4)  # sum m = 5 * 16 = 80, m* = 16
    users = users_of(counts)
    rng = np.random.default_rng(110)
    x = domain_samples(rng, (4, users.size), d, 65.0)
    eps = 0.5
    factor = 1.0 if d == 1 else 2.0
    vanilla = laplace(x, users=users, eps=eps, bound=65.0, rng=rng, batched=True).diagnostics
    assert vanilla["sensitivity"] == pytest.approx(factor * 65.0 * 16 / 80, rel=1e-14)
    assert vanilla["noise_scale"] == pytest.approx(factor * 65.0 * 16 / (80 * eps), rel=1e-14)
    opt = opt_worst_case(x, users=users, eps=eps, bound=65.0, rng=rng, batched=True).diagnostics
    T = 65.0 * kth_largest(counts, math.ceil(2 * d / eps))  # k = 4 (d = 1) or 12 (d = 3)
    assert opt["T_eps"] == T and opt["sensitivity"] == pytest.approx(factor * T / 80, rel=1e-14)
    assert opt["noise_scale"] == pytest.approx(factor * T / (80 * eps), rel=1e-14)
    ak = akmv(x, users=users, eps=eps, bound=65.0, rng=rng, batched=True).diagnostics
    assert np.allclose(ak["noise_scale"], factor * ak["T_eps"] / (80 * eps / 2), rtol=1e-14)
    assert np.all((0 <= ak["T_eps"]) & (ak["T_eps"] <= 65.0 * 16))


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_noise_is_laplace_with_the_reported_scale(name, d):
    counts = SMALL
    users = users_of(counts)
    rng = np.random.default_rng(120 + d)
    runs = 200_000
    x = np.broadcast_to(domain_samples(rng, users.size, d, 1.0).reshape(users.size, d), (runs, users.size, d))
    estimate = MECHANISMS[name](x, users=users, eps=1.3, bound=1.0, rng=rng, batched=True)
    scale = np.broadcast_to(estimate.diagnostics["noise_scale"], (runs,))
    standard = (estimate.mean - estimate.diagnostics["statistic"]) / scale[:, None]
    assert scipy.stats.kstest(standard[:, 0], scipy.stats.laplace.cdf).pvalue > 1e-3
    assert standard.std() == pytest.approx(math.sqrt(2), rel=0.01)  # Lap(b) has std sqrt(2) b
    assert np.abs(standard).mean() == pytest.approx(1.0, rel=0.01)  # and E|Lap(b)| = b
    if d == 2:
        assert abs(np.corrcoef(standard[:, 0], standard[:, 1])[0, 1]) < 0.01  # independent coordinates


def test_opt_worst_case_with_T_zero_releases_U_over_2_or_the_zero_vector_without_noise():
    users = users_of(SMALL)
    rng = np.random.default_rng(130)
    one = opt_worst_case(rng.uniform(0, 1, users.size), users=users, eps=0.45, bound=1.0, rng=rng)
    assert one.diagnostics["T_eps"] == 0.0 and one.diagnostics["noise_scale"] == 0.0
    assert np.array_equal(one.mean, [0.5])
    two = opt_worst_case(simplex_points(rng, users.size, 2, 1.0), users=users, eps=0.9, bound=1.0, rng=rng)
    assert np.array_equal(two.mean, [0.0, 0.0])


@pytest.mark.parametrize("d", [1, 2])
def test_opt_worst_case_equals_vanilla_laplace_when_nothing_is_clipped(d):
    """eps >= 2d / (number of users with the largest m_l): T_eps = U m*, nothing is clipped."""
    counts = np.array([3, 5, 5, 1])
    users = users_of(counts)
    x = domain_samples(np.random.default_rng(140), (3, users.size), d, 2.0)
    opt, vanilla = (mechanism(x, users=users, eps=float(d), bound=2.0, rng=np.random.default_rng(141), batched=True)
                    for mechanism in (opt_worst_case, laplace))
    assert opt.diagnostics["T_eps"] == 10.0 and np.all(opt.diagnostics["fraction_clipped"] == 0)
    assert opt.diagnostics["noise_scale"] == pytest.approx(vanilla.diagnostics["noise_scale"], rel=1e-14)
    assert np.allclose(opt.mean, vanilla.mean, rtol=1e-12)


# ---------------------------------------------------------------- inputs and bad input


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_inputs_are_never_modified(name):
    rng = np.random.default_rng(150)
    users = users_of(SMALL)[::-1].copy()  # unsorted: the path that reorders samples
    for x in (rng.uniform(0, 1, (3, users.size)), simplex_points(rng, (3, users.size), 3, 1.0) * (1 + 5e-13)):
        originals = x.copy(), users.copy()
        x.flags.writeable = False  # any write would raise
        users.flags.writeable = False
        for average_users in (False, True):
            MECHANISMS[name](x, users=users, eps=0.5, bound=1.0, rng=rng, batched=True, average_users=average_users)
        assert np.array_equal(x, originals[0]) and np.array_equal(users, originals[1])
        users = users.copy()


def test_samples_within_a_relative_1e_12_of_the_bound_are_accepted_and_moved_inside():
    users = users_of(SMALL)
    x = np.full((users.size, 2), 0.5) * (1 + 5e-13)
    estimate = laplace(x, users=users, eps=1.0, bound=1.0, rng=np.random.default_rng(0))
    assert estimate.diagnostics["statistic"].sum() <= 1.0
    with pytest.raises(ValueError, match=re.escape("||samples[0]||_1=1.00000000")):
        laplace(x / (1 + 5e-13) * (1 + 1e-9), users=users, eps=1.0, bound=1.0, rng=np.random.default_rng(0))


def test_true_mean_is_the_sum_over_all_samples_divided_by_their_number():
    users = users_of(SMALL)
    x = np.arange(20.0).reshape(10, 2)
    assert np.array_equal(true_mean(x, users=users), [9.0, 10.0])
    assert true_mean(x[:, 0], users=users).shape == (1,)
    assert np.array_equal(true_mean(np.stack([x, 2 * x]), users=users, batched=True), [[9.0, 10.0], [18.0, 20.0]])


def valid_call(**changes):
    arguments = {
        "samples": np.random.default_rng(160).uniform(0, 1, 10), "users": users_of(SMALL), "eps": 1.0,
        "bound": 1.0, "rng": np.random.default_rng(161),
    } | changes
    return arguments


def with_value(index, value, d=None):
    x = np.random.default_rng(160).uniform(0, 1, 10) if d is None else np.full((10, d), 0.1)
    x[index] = value
    return x


BAD_INPUT = [
    ({"samples": with_value(3, np.nan)}, r"finite.*samples\[3\]=nan"),
    ({"samples": with_value(6, np.inf)}, r"finite.*samples\[6\]=inf"),
    ({"samples": with_value(2, -0.5)}, r">= 0.*samples\[2\]=-0.5"),
    ({"samples": with_value(4, 1.5)}, r"\[0, 1\.0\].*samples\[4\]=1.5"),
    ({"samples": with_value((4, 1), 1.2, d=2)}, r"simplex.*\|\|samples\[4\]\|\|_1=1\.3"),
    ({"samples": with_value((5, 0), -0.1, d=3)}, r">= 0.*samples\[5, 0\]=-0.1"),
    ({"samples": with_value((7, 2), np.nan, d=3)}, r"finite.*samples\[7, 2\]=nan"),
    ({"samples": [[0.1, 0.2], [0.3]]}, r"samples must be a real numeric array"),
    ({"samples": np.array([0.1j] * 10)}, r"samples.*complex"),
    ({"samples": np.zeros((2, 10, 1))}, r"samples.shape=\(2, 10, 1\)"),
    ({"samples": np.zeros((0,)), "users": np.zeros(0, dtype=int)}, r"samples.shape=\(0,\)"),
    ({"samples": np.zeros(10), "batched": True}, r"\(B, n\).*samples.shape=\(10,\)"),
    ({"samples": np.zeros((3, 9)), "batched": True}, r"n=9.*users.shape=\(10,\)"),
    ({"samples": np.zeros((3, 10, 2, 1)), "batched": True}, r"samples.shape=\(3, 10, 2, 1\)"),
    ({"users": users_of(SMALL)[:-1]}, r"n=10.*users.shape=\(9,\)"),
    ({"users": users_of(SMALL).astype(float)}, r"users.*dtype=float64"),
    ({"users": users_of(SMALL) > 0}, r"users.*dtype=bool"),
    ({"users": users_of(SMALL).reshape(2, 5)}, r"users.shape=\(2, 5\)"),
    ({"users": users_of(SMALL) - 1}, r"users\[0\]=-1"),
    ({"users": np.r_[0, 0, 2, 2, 2, 2, 3, 3, 3, 3]}, r"no samples for user 1"),
    ({"users": np.r_[0, 1, 2, 3, 4, 5, 6, 7, 8, 12]}, r"no samples for user 9"),
    ({"eps": 0.0}, r"eps=0.0"),
    ({"eps": -1}, r"eps=-1"),
    ({"eps": math.nan}, r"eps=nan"),
    ({"eps": math.inf}, r"eps=inf"),
    ({"eps": "1"}, r"eps='1'"),
    ({"bound": 0.0}, r"bound=0.0"),
    ({"bound": -2}, r"bound=-2"),
    ({"bound": math.inf}, r"bound=inf"),
    ({"rng": 7}, r"rng=int"),
    ({"batched": "yes"}, r"batched='yes'"),
    ({"average_users": 1}, r"average_users=1"),
]


@pytest.mark.parametrize("changes,message", BAD_INPUT, ids=[str(i) for i in range(len(BAD_INPUT))])
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_bad_input_raises_one_value_error_naming_the_value(name, changes, message):
    arguments = valid_call(**changes)
    samples = arguments.pop("samples")
    with pytest.raises(ValueError, match=message):
        MECHANISMS[name](samples, **arguments)


def test_a_valid_call_of_every_mechanism_passes():
    for mechanism in MECHANISMS.values():
        arguments = valid_call()
        samples = arguments.pop("samples")
        assert mechanism(samples, **arguments).mean.shape == (1,)


@pytest.mark.parametrize("function", [threshold, clipping_intervals, worst_case_error_opt, worst_case_error_laplace])
@pytest.mark.parametrize("changes,message", [
    ({"counts": [1, 0, 3]}, r"counts\[1\]=0"),
    ({"counts": [1.0, 2.0]}, r"counts=\[1.0, 2.0\]"),
    ({"counts": []}, r"counts"),
    ({"eps": 0}, r"eps=0"),
    ({"bound": -1.0}, r"bound=-1.0"),
    ({"d": 0}, r"d=0"),
    ({"d": 1.5}, r"d=1.5"),
])
def test_bad_counts_eps_bound_or_d_raise_naming_the_value(function, changes, message):
    arguments = {"counts": [1, 2, 2, 5], "eps": 1.0, "bound": 1.0, "d": 1} | changes
    counts = arguments.pop("counts")
    with pytest.raises(ValueError, match=message):
        function(counts, **arguments)


def test_bad_jump_point_range_raises_naming_the_values():
    with pytest.raises(ValueError, match=r"eps_low=2.0, eps_high=1.0"):
        jump_points(d=1, eps_low=2.0, eps_high=1.0)
    with pytest.raises(ValueError, match=r"eps_low=0"):
        jump_points(d=1, eps_low=0, eps_high=1.0)
