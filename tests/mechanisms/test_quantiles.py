"""PrivQuantile (docs/design.md §5.1): exponential-mechanism quantile and private binary search.

Statistical tests run many independent queries in one vectorised call (one query per
column) with a fixed seed, and compare against bounds derived from the algorithms, so
they are deterministic and their tolerances are wide.
"""
import math

import numpy as np
import pytest

from mechanisms import binary_search_quantile, exponential_quantile, quantiles
from mechanisms.quantiles import (
    batched_binary_search_quantile,
    batched_exponential_quantile,
    binary_search_counts,
    binary_search_sorted,
    count_at_most,
    cumulative_counts,
    em_epsilon,
    em_select_sorted,
    grid_bins,
    interval_weights,
    padded_sorted,
    search_grid,
)

QUANTILE_FUNCTIONS = {"exponential": exponential_quantile, "binary_search": binary_search_quantile}
BETA = 0.05
M = 1000
COLUMNS = 2000


def identical_columns(values, columns):
    """``columns`` copies of ``values`` side by side: one independent query per column."""
    return np.tile(np.asarray(values, dtype=float)[:, None], (1, columns))


def rank(values, outputs):
    """Number of ``values`` strictly below each output."""
    return np.searchsorted(np.sort(values), outputs, side="left")


def most_values_in_a_window(values, width):
    """The largest number of ``values`` inside any half-open interval (a, a + width]."""
    ordered = np.sort(values)
    # The maximum is reached with the window's right end on a value.
    return int(np.max(np.arange(1, ordered.size + 1) - np.searchsorted(ordered, ordered - width, side="right")))


# ---------------------------------------------------------------- accuracy


@pytest.mark.parametrize(
    ("rho", "q", "sensitivity"),
    [(0.001, 0.5, 1.0), (0.1, 0.25, 1.0), (1.0, 0.9, 1.0), (0.1, 0.5, 0.5)],
)
def test_exponential_quantile_rank_error_is_within_the_exponential_mechanism_bound(rho, q, sensitivity):
    """With probability >= 1 - beta the rank error is <= (2 s / eps) ln((m + 1) / beta).

    Data: the values 0..m-1 in bounds [0, m]. Interval i (i = 0..m) of the padded sorted
    values is [i - 1, i] (width 1) for i >= 1 and [0, 0] (width 0, weight 1e-30) for i = 0,
    and almost surely every point drawn from interval i has exactly i values below it. The
    interval i = q m (an integer here) has width 1 and utility factor 1, so the total
    weight is >= 1; each of the at most m + 1 intervals with |i - q m| > t has weight
    <= exp(-eps t / (2 s)). Hence P(rank error > t) <= (m + 1) exp(-eps t / (2 s)), which is
    beta at the bound. eps = sqrt(8 rho).
    """
    values = np.arange(M, dtype=float)
    assert float(q * M).is_integer()
    outputs = exponential_quantile(
        identical_columns(values, COLUMNS), q=q, rho=rho, bounds=(0.0, M), rng=np.random.default_rng(20),
        sensitivity=sensitivity,
    )
    bound = 2.0 * sensitivity / math.sqrt(8.0 * rho) * math.log((M + 1) / BETA)
    errors = np.abs(rank(values, outputs) - q * M)
    assert np.mean(errors > bound) <= BETA


@pytest.mark.parametrize(
    ("rho", "q", "steps"),
    [(0.01, 0.5, 20), (0.1, 0.5, 20), (10.0, 0.25, 20), (1.0, 0.9, 10)],
)
def test_binary_search_quantile_rank_error_is_within_the_union_bound_over_its_steps(rho, q, steps):
    """With probability >= 1 - beta the rank error is <= a + (most values in a window of the
    final width w = (hi - lo) / 2^T), where a = sqrt(2 sigma^2 ln(2 T / beta)) and
    sigma^2 = T / (2 rho) is the variance of each step's noise.

    Union bound: P(|N(0, sigma^2)| > a) <= 2 exp(-a^2 / (2 sigma^2)), so with probability
    >= 1 - 2 T exp(-a^2 / (2 sigma^2)) = 1 - beta all T noises are within a of 0. Then, with
    c(t) = #values <= t: every midpoint where the search went right has c <= target + a,
    every one where it went left has c > target - a. The final interval (L, R] has L = lo
    (c(lo) = 0 here) or a right-turn midpoint, and R = hi (c(hi) = m) or a left-turn one,
    so c(L) <= target + a and c(R) >= target - a. The output y lies in (L, R), so its rank
    #values < y is between c(R) - #values in (L, R] and c(L) + #values in (L, R].

    Data: the values 0..m-1 in bounds [-0.5, m - 0.5], so that no value is <= lo.
    """
    values = np.arange(M, dtype=float)
    lo, hi = -0.5, M - 0.5
    outputs = binary_search_quantile(
        identical_columns(values, COLUMNS), q=q, rho=rho, bounds=(lo, hi), rng=np.random.default_rng(21), steps=steps
    )
    variance = steps / (2.0 * rho)
    a = math.sqrt(2.0 * variance * math.log(2.0 * steps / BETA))
    bound = a + most_values_in_a_window(values, (hi - lo) / 2.0**steps)
    errors = np.abs(rank(values, outputs) - q * M)
    assert np.mean(errors > bound) <= BETA


@pytest.mark.parametrize(("rho", "steps"), [(0.02, 1), (0.02, 4), (0.5, 20), (0.25, 10)])
def test_binary_search_first_step_noise_has_variance_steps_over_two_rho(rho, steps):
    """The first step goes right iff c(mid) + N(0, T / (2 rho)) <= target, i.e. with probability
    Phi((target - c(mid)) / sqrt(T / (2 rho))), and then the output is above mid. Checked on
    20000 queries within 5 standard errors.

    Data: the values 0..99 in bounds [-0.5, 99.5], so mid = 49.5 and c(mid) = 50; q = 0.45
    gives the target rank 45.
    """
    values, columns = np.arange(100, dtype=float), 20_000
    outputs = binary_search_quantile(
        identical_columns(values, columns), q=0.45, rho=rho, bounds=(-0.5, 99.5), rng=np.random.default_rng(35),
        steps=steps,
    )
    z = (45.0 - 50.0) / math.sqrt(steps / (2.0 * rho))
    expected = 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))
    observed = np.mean(outputs > 49.5)
    assert abs(observed - expected) <= 5.0 * math.sqrt(expected * (1.0 - expected) / columns)


@pytest.mark.parametrize("target_rank", [0, 1, 250, 500, 999])
def test_noiseless_binary_search_converges_to_the_value_whose_count_first_exceeds_the_target(target_rank):
    """Going right when count(<= mid) <= target rank ends next to sorted value number target + 1."""
    values = np.arange(M, dtype=float)
    lo, hi, steps = -0.5, M - 0.5, 20
    output = binary_search_sorted(
        values[None, :], target_rank=target_rank, rho=1.0, lo=lo, hi=hi, steps=steps, noise=np.zeros((steps, 1))
    )
    assert abs(output[0] - values[target_rank]) <= (hi - lo) / 2.0**steps


# ---------------------------------------------------------------- the exponential mechanism's sampler


@pytest.mark.parametrize(("q", "rho", "sensitivity"), [(0.5, 0.5, 1.0), (0.2, 0.1, 1.0), (0.8, 2.0, 0.8)])
def test_exponential_quantile_draws_intervals_with_the_exponential_mechanism_probabilities(q, rho, sensitivity):
    """200000 identical queries on 5 values: each interval's frequency is within 5 standard
    errors of its normalised weight."""
    values = np.array([6.5, 0.3, 1.2, 4.0, 1.0])
    lo, hi, draws = 0.0, 10.0, 200_000
    outputs = exponential_quantile(
        identical_columns(values, draws), q=q, rho=rho, bounds=(lo, hi), rng=np.random.default_rng(22),
        sensitivity=sensitivity,
    )
    edges = padded_sorted(values[None, :], lo=lo, hi=hi)
    weights = interval_weights(edges, q=q, eps=em_epsilon(rho), sensitivity=sensitivity)[0]
    expected = weights / weights.sum()
    chosen = np.searchsorted(edges[0], outputs, side="right") - 1
    observed = np.bincount(chosen, minlength=values.size + 1) / draws
    standard_error = np.sqrt(expected * (1.0 - expected) / draws)
    assert observed.size == values.size + 1
    assert np.all(np.abs(observed - expected) <= 5.0 * standard_error)


def test_exponential_quantile_draws_the_point_uniformly_inside_the_chosen_interval():
    """The relative position of each output in its interval falls in each tenth with
    frequency 0.1, within 5 standard errors."""
    values = np.array([6.5, 0.3, 1.2, 4.0, 1.0])
    lo, hi, draws = 0.0, 10.0, 200_000
    outputs = exponential_quantile(
        identical_columns(values, draws), q=0.5, rho=0.5, bounds=(lo, hi), rng=np.random.default_rng(23)
    )
    edges = padded_sorted(values[None, :], lo=lo, hi=hi)[0]
    chosen = np.searchsorted(edges, outputs, side="right") - 1
    position = (outputs - edges[chosen]) / (edges[chosen + 1] - edges[chosen])
    observed = np.bincount(np.minimum((position * 10).astype(int), 9), minlength=10) / draws
    assert np.all(np.abs(observed - 0.1) <= 5.0 * math.sqrt(0.1 * 0.9 / draws))


def test_interval_weights_follow_the_design_formula_including_empty_intervals():
    """max(width_i, 1e-30) * exp(eps / (2 s) * -|i - q m|) up to a common factor (docs/design.md §5.1),
    on values with a tie and values clipped at both bounds."""
    values = np.array([-3.0, 0.5, 2.0, 2.0, 7.5, 12.0])
    lo, hi, q, eps, s = 0.0, 10.0, 0.4, 1.3, 0.7
    edges = padded_sorted(values[None, :], lo=lo, hi=hi)
    np.testing.assert_array_equal(edges[0], [0.0, 0.0, 0.5, 2.0, 2.0, 7.5, 10.0, 10.0])
    m = values.size
    widths = np.maximum(np.diff(edges[0]), 1e-30)
    formula = widths * np.exp(eps / (2 * s) * -np.abs(np.arange(m + 1) - q * m))
    weights = interval_weights(edges, q=q, eps=eps, sensitivity=s)[0]
    np.testing.assert_allclose(weights / weights.sum(), formula / formula.sum(), rtol=1e-12, atol=0)


def test_exponential_mechanism_sampler_is_the_inverse_cdf_across_several_buckets():
    """With the interval uniform fixed at a grid of points u, the chosen interval of 151
    intervals (three buckets of the two-level sampler) is the first one whose cumulative
    probability exceeds u; the point uniform 0.5 returns the interval's midpoint."""
    rng = np.random.default_rng(24)
    m, lo, hi, q, rho = 150, 0.0, 1.0, 0.3, 1e-4
    values = np.sort(rng.uniform(lo, hi, size=m))
    edges = padded_sorted(values[None, :], lo=lo, hi=hi)
    weights = interval_weights(edges, q=q, eps=em_epsilon(rho), sensitivity=1.0)[0]
    cdf = np.cumsum(weights) / weights.sum()
    grid = (np.arange(4096) + 0.5) / 4096
    uniforms = np.vstack([grid, np.full(grid.size, 0.5)])
    outputs = em_select_sorted(np.tile(edges, (grid.size, 1)), q=q, eps=em_epsilon(rho), sensitivity=1.0,
                               uniforms=uniforms)
    expected = np.minimum(np.searchsorted(cdf, grid, side="right"), m)
    assert np.unique(expected).size > 130  # the grid reaches intervals in every bucket
    np.testing.assert_allclose(outputs, (edges[0, expected] + edges[0, expected + 1]) / 2.0, rtol=0, atol=1e-15)


# ---------------------------------------------------------------- outputs, seeds and inputs

DATA_CASES = {
    "inside": lambda rng: rng.uniform(-1.0, 1.0, size=(50, 40)),
    "above_the_bounds": lambda rng: rng.uniform(5.0, 9.0, size=(50, 40)),
    "below_the_bounds": lambda rng: rng.uniform(-9.0, -5.0, size=(50, 40)),
    "straddling": lambda rng: rng.normal(0.0, 10.0, size=(50, 40)),
    "at_the_bounds": lambda rng: rng.choice([-2.0, 2.0], size=(50, 40)),
}


@pytest.mark.parametrize("q", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("data", DATA_CASES.values(), ids=DATA_CASES.keys())
@pytest.mark.parametrize("function", QUANTILE_FUNCTIONS.values(), ids=QUANTILE_FUNCTIONS.keys())
def test_quantile_outputs_are_always_inside_the_bounds(function, data, q):
    x = data(np.random.default_rng(25))
    outputs = function(x, q=q, rho=0.01, bounds=(-2.0, 2.0), rng=np.random.default_rng(26))
    assert outputs.shape == (x.shape[1],)
    assert np.all((outputs >= -2.0) & (outputs <= 2.0))


@pytest.mark.parametrize("function", QUANTILE_FUNCTIONS.values(), ids=QUANTILE_FUNCTIONS.keys())
def test_quantile_outputs_are_identical_for_the_same_seed(function):
    x = np.random.default_rng(27).normal(size=(100, 30))
    first = function(x, q=0.5, rho=0.5, bounds=(-5.0, 5.0), rng=np.random.default_rng(28))
    second = function(x, q=0.5, rho=0.5, bounds=(-5.0, 5.0), rng=np.random.default_rng(28))
    assert first.tobytes() == second.tobytes()


@pytest.mark.parametrize("function", QUANTILE_FUNCTIONS.values(), ids=QUANTILE_FUNCTIONS.keys())
def test_quantile_outputs_differ_for_a_different_seed(function):
    x = np.random.default_rng(27).normal(size=(100, 30))
    first = function(x, q=0.5, rho=0.5, bounds=(-5.0, 5.0), rng=np.random.default_rng(28))
    second = function(x, q=0.5, rho=0.5, bounds=(-5.0, 5.0), rng=np.random.default_rng(29))
    assert not np.array_equal(first, second)


LAYOUTS = {
    "c_order": lambda a: np.ascontiguousarray(a),
    "fortran_order": lambda a: np.asfortranarray(a),
    "one_column": lambda a: np.ascontiguousarray(a[:, 0]),
}


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("function", QUANTILE_FUNCTIONS.values(), ids=QUANTILE_FUNCTIONS.keys())
def test_quantile_functions_do_not_modify_their_input(function, layout):
    x = layout(np.random.default_rng(30).normal(0.0, 3.0, size=(60, 5)))
    original = x.copy()
    function(x, q=0.5, rho=0.5, bounds=(-2.0, 2.0), rng=np.random.default_rng(31))
    np.testing.assert_array_equal(x, original)


@pytest.mark.parametrize("function", QUANTILE_FUNCTIONS.values(), ids=QUANTILE_FUNCTIONS.keys())
def test_quantile_of_a_1d_array_is_the_quantile_of_it_as_one_column(function):
    x = np.random.default_rng(32).normal(size=80)
    flat = function(x, q=0.3, rho=0.5, bounds=(-5.0, 5.0), rng=np.random.default_rng(33))
    column = function(x[:, None], q=0.3, rho=0.5, bounds=(-5.0, 5.0), rng=np.random.default_rng(33))
    assert flat.shape == (1,)
    assert flat.tobytes() == column.tobytes()


# ---------------------------------------------------------------- count_at_most


@pytest.mark.parametrize("m", [0, 1, 2, 7, 64, 100])
def test_count_at_most_equals_the_brute_force_count_with_ties_and_thresholds_on_entries(m):
    rng = np.random.default_rng(34 + m)
    k = 300
    sorted_rows = np.sort(rng.integers(0, 8, size=(k, m)).astype(float), axis=1)
    candidates = np.concatenate([sorted_rows, np.full((k, 1), -1.0), np.full((k, 1), 9.0),
                                 rng.uniform(-1.0, 9.0, size=(k, 1))], axis=1)
    thresholds = candidates[np.arange(k), rng.integers(0, candidates.shape[1], size=k)]
    expected = (sorted_rows <= thresholds[:, None]).sum(axis=1)
    np.testing.assert_array_equal(count_at_most(sorted_rows, thresholds), expected)


@pytest.mark.parametrize("m", [1, 7, 100])
def test_count_at_most_reads_strided_and_broadcast_rows_without_copying_them(m):
    """PLAN passes the inside of padded rows (strided), the batched binary search one row
    broadcast to every run: both must count as their contiguous copies do."""
    rng = np.random.default_rng(35 + m)
    padded = np.sort(rng.integers(0, 8, size=(300, m + 2)).astype(float), axis=1)
    thresholds = rng.uniform(-1.0, 9.0, size=300)
    for rows in (padded[:, 1:-1], np.broadcast_to(padded[0, 1:-1], (300, m))):
        assert not rows.flags.c_contiguous
        expected = (rows <= thresholds[:, None]).sum(axis=1)
        np.testing.assert_array_equal(count_at_most(rows, thresholds), expected)


# ---------------------------------------------------------------- binary search from counts on the grid

# (lo, hi, steps): dyadic and general intervals, one whose grid points are not lo + k (hi - lo) / 2^T
# in floating point, a far-from-zero one whose grid has repeated points, and T = 1.
GRIDS = [(0.0, 1.0, 10), (-1.3, 2.7, 7), (0.1, 0.3, 12), (-5.0, -2.0, 3), (1e6, 1e6 + 1e-9, 8), (0.0, 1.0, 1)]


def grid_values(rng, lo, hi, steps, shape):
    """Values drawn to hit every case: inside, outside [lo, hi], exactly on grid points, ties."""
    grid = search_grid(lo, hi, steps)
    width = hi - lo
    pools = [rng.uniform(lo - 0.3 * width, hi + 0.3 * width, shape), grid[rng.integers(0, grid.size, shape)],
             np.round(rng.uniform(lo, hi, shape), 1)]
    return np.choose(rng.integers(0, 3, shape), pools)


@pytest.mark.parametrize(("lo", "hi", "steps"), GRIDS)
def test_the_grid_holds_every_midpoint_the_direct_search_visits_bit_for_bit(lo, hi, steps):
    grid = search_grid(lo, hi, steps)
    assert np.all(np.diff(grid) >= 0) and grid[0] == lo and grid[-1] == hi
    rng = np.random.default_rng(steps)
    left, right = np.full(200, lo), np.full(200, hi)
    for _ in range(steps):
        mid = (left + right) / 2.0
        assert np.all(np.isin(mid, grid))
        go_right = rng.random(200) < 0.5
        left, right = np.where(go_right, mid, left), np.where(go_right, right, mid)


@pytest.mark.parametrize(("lo", "hi", "steps"), GRIDS)
def test_cumulative_counts_are_the_direct_counts_of_values_at_most_each_inner_grid_point(lo, hi, steps):
    grid = search_grid(lo, hi, steps)
    rows = grid_values(np.random.default_rng(steps + 1), lo, hi, steps, (20, 150))
    counts = cumulative_counts(rows, grid)
    np.testing.assert_array_equal(counts[:, :-1], (rows[:, :, None] <= grid[None, None, 1:-1]).sum(axis=1))
    np.testing.assert_array_equal(counts[:, -1], 150)
    assert np.all(np.isin(grid_bins(rows, grid), np.arange(1 << steps)))


@pytest.mark.parametrize("target_rank", [0.0, 37.5, 75.0, 149.0])
@pytest.mark.parametrize(("lo", "hi", "steps"), GRIDS)
def test_binary_search_from_counts_equals_the_direct_search_exactly(lo, hi, steps, target_rank):
    rng = np.random.default_rng(steps + int(target_rank))
    rows = grid_values(rng, lo, hi, steps, (300, 150))
    for rho in (0.01, 1.0, 1e6):  # noise that dominates, moderate noise, almost none
        noise = rng.standard_normal((steps, 300))
        direct = binary_search_sorted(np.sort(rows, axis=1), target_rank=target_rank, rho=rho, lo=lo, hi=hi,
                                      steps=steps, noise=noise)
        counted = binary_search_counts(cumulative_counts(rows, search_grid(lo, hi, steps)), target_rank=target_rank,
                                       rho=rho, lo=lo, hi=hi, steps=steps, noise=noise)
        np.testing.assert_array_equal(counted, direct)


def test_binary_search_from_counts_refuses_counts_of_another_grid():
    with pytest.raises(ValueError, match=r"2\^steps = 16 columns, got 8"):
        binary_search_counts(np.zeros((3, 8), dtype=np.int32), target_rank=1, rho=1.0, lo=0.0, hi=1.0, steps=4,
                             noise=np.zeros((4, 3)))


def test_block_rows_keep_a_block_near_five_mebibytes_and_between_one_and_32_rows():
    assert quantiles.block_rows(10) == 32
    assert quantiles.block_rows(30_000) == 21  # PLAN's published stack at n = 10000
    assert quantiles.block_rows(300_000) == 2  # ... at n = 100000
    assert quantiles.block_rows(10**8) == 1


def test_utility_factors_are_computed_once_per_workspace_not_per_block(monkeypatch):
    calls = []
    original = quantiles.utility_factors

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(quantiles, "utility_factors", counting)
    monkeypatch.setattr(quantiles, "_BLOCK_BYTES", 1)  # one row per block: 5 blocks
    edges = padded_sorted(np.random.default_rng(0).standard_normal((5, 100)), lo=-9, hi=9)
    workspace = quantiles.Workspace()
    for _ in range(2):
        em_select_sorted(edges, q=0.5, eps=1.0, sensitivity=1.0, uniforms=np.full((2, 5), 0.5), workspace=workspace)
    assert len(calls) == 1


# ----------------------------------------------------------------------------- batched twins (the audit's samplers)

EM_PAIR_BOUNDS = (-1.0, 10.05)  # the audit's pair (experiments/audit/audits.py)
EM_PAIR = (np.array([0.0] * 5 + [10.0, 10.01, 10.02, 10.03, 10.04]),
           np.array([0.0] * 4 + [10.0, 10.01, 10.02, 10.03, 10.04, 10.045]))


@pytest.mark.parametrize("values,bounds,sensitivity", [
    (EM_PAIR[0], EM_PAIR_BOUNDS, 1.0),
    (EM_PAIR[1], EM_PAIR_BOUNDS, 0.5),
    (np.random.default_rng(8).normal(size=300), (-4.0, 4.0), 1.0),  # 301 intervals: several buckets
])
def test_batched_exponential_quantile_draws_exactly_what_exponential_quantile_draws(values, bounds, sensitivity):
    first, second = np.random.default_rng(9), np.random.default_rng(9)
    one_by_one = np.array([exponential_quantile(values, q=0.5, rho=0.5, bounds=bounds, rng=first,
                                                sensitivity=sensitivity)[0] for _ in range(3000)])
    batched = batched_exponential_quantile(values, q=0.5, rho=0.5, bounds=bounds, rng=second, runs=3000,
                                           sensitivity=sensitivity)
    np.testing.assert_array_equal(batched, one_by_one)


def test_batched_binary_search_draws_exactly_what_binary_search_quantile_draws():
    first, second = np.random.default_rng(12), np.random.default_rng(12)
    for data in (np.array([0.0] * 6 + [1.0] * 5), np.random.default_rng(13).random(30)):
        one_by_one = np.array([binary_search_quantile(data, q=0.5, rho=1.0, bounds=(0.0, 1.0), rng=first,
                                                      steps=20)[0] for _ in range(300)])
        batched = batched_binary_search_quantile(data, q=0.5, rho=1.0, bounds=(0.0, 1.0), rng=second,
                                                 runs=300, steps=20)
        np.testing.assert_array_equal(batched, one_by_one)
