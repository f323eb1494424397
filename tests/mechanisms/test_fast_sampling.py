"""The fast samplers behind PLAN's quantiles (mechanisms._fast, docs/design.md §5.1, §8)
change the work, never the distribution or a result: the region and stack samplers against the
exact exponential mechanism, and PLAN's results against the block and batch sizes."""
import math

import numpy as np
import pytest

from mechanisms import exponential_quantile, plan_gaussian, quantiles
from mechanisms._fast import coordinates, regions, stack
from mechanisms.quantiles import interval_weights, padded_sorted


@pytest.mark.parametrize(("accounting", "stack_sampler"), [("exact", False), ("published", False), ("published", True)])
def test_results_do_not_depend_on_the_block_size(monkeypatch, accounting, stack_sampler):
    """All randomness is drawn before the blocked loops (docs/design.md §8), so one row per block
    (sorting, batches of queries and the stack sampler's blocks) and the defaults give the same bytes."""
    x = np.random.default_rng(3).standard_normal((500, 70))
    if stack_sampler:  # 500 values per row would otherwise merge the stack
        monkeypatch.setattr(stack, "MIN_STACK_ROW", 1)
    builds = []
    build = stack.StackRegions.build.__func__
    monkeypatch.setattr(stack.StackRegions, "build",
                        classmethod(lambda cls, *args, **kwargs: builds.append(1) or build(cls, *args, **kwargs)))

    def run():
        plan = plan_gaussian(x, rho=0.5, bounds=(-20, 20), rng=np.random.default_rng(4), accounting=accounting)
        median = exponential_quantile(x, q=0.5, rho=0.5, bounds=(-20, 20), rng=np.random.default_rng(5))
        return plan.mean.tobytes() + plan.diagnostics["std_estimate"].tobytes() + median.tobytes()

    default = run()
    monkeypatch.setattr(quantiles, "_BLOCK_BYTES", 1)
    monkeypatch.setattr(coordinates, "_SELECT_BATCH_BYTES", 1)
    monkeypatch.setattr(stack, "_STACK_BLOCK_ROWS", 1)
    assert quantiles.block_rows(x.shape[0]) == 1
    assert run() == default
    assert bool(builds) == stack_sampler


# ---------------------------------------------------------------- exact sampling by regions


def exact_output_cdf(edges, weights, points):
    """The CDF of the exponential mechanism's output at ``points``: interval i has probability
    weights[i] / sum, and the output is uniform inside it."""
    probabilities = weights / weights.sum()
    before = np.concatenate([[0.0], np.cumsum(probabilities)])
    chosen = np.clip(np.searchsorted(edges, points, side="right") - 1, 0, probabilities.size - 1)
    width = edges[chosen + 1] - edges[chosen]
    inside = np.divide(points - edges[chosen], width, out=np.zeros_like(points), where=width > 0)
    return before[chosen] + probabilities[chosen] * np.clip(inside, 0.0, 1.0)


def kolmogorov_distance(outputs, edges, weights):
    cdf = np.sort(exact_output_cdf(edges, weights, outputs))
    count = cdf.size
    return max(np.max(np.arange(1, count + 1) / count - cdf), np.max(cdf - np.arange(count) / count))


# 1.95 / sqrt(draws) is the Kolmogorov-Smirnov critical value at level 0.001.
KS_DRAWS = 20_000
KS_CRITICAL = 1.95 / math.sqrt(KS_DRAWS)

SAMPLER_CASES = {
    # values, bounds, q, eps, sensitivity
    "gaussian": (np.random.default_rng(30).standard_normal(400), (-3.0, 3.0), 0.5, 0.01, 0.5),
    "ties_and_clipped": (np.round(np.random.default_rng(31).normal(0.5, 2.0, 400), 0), (-2.0, 2.5), 0.3, 0.004, 1.0),
    "one_value_repeated": (np.full(400, 0.7), (0.0, 1.0), 0.5, 0.01, 0.5),
}


@pytest.mark.parametrize("force_more_proposals", [False, True])
@pytest.mark.parametrize("case", SAMPLER_CASES.values(), ids=SAMPLER_CASES.keys())
def test_region_sampler_draws_from_the_exponential_mechanism(case, force_more_proposals):
    """Rejection sampling by regions changes the work, not the distribution: 20000 draws pass a
    Kolmogorov-Smirnov test against the exact output CDF (docs/design.md §5.1), also when every
    pre-drawn proposal is rejected and the queries draw more from their own seeds."""
    values, (lo, hi), q, eps, sensitivity = case
    edges = padded_sorted(values[None, :], lo=lo, hi=hi)
    assert regions.region_size(values.size, eps=eps, sensitivity=sensitivity) > 0  # the region path runs
    draws = regions.EMDraws.draw(np.random.default_rng(32), KS_DRAWS)
    if force_more_proposals:
        draws.uniforms[:, 1] = 1.0  # u * bound < weight never holds: every pre-drawn proposal fails
    outputs = regions.em_select_regions(np.tile(edges, (KS_DRAWS, 1)), q=q, eps=eps, sensitivity=sensitivity,
                                          draws=draws)
    weights = interval_weights(edges, q=q, eps=eps, sensitivity=sensitivity)[0]
    assert kolmogorov_distance(outputs, edges[0], weights) < KS_CRITICAL


SHIFTS = (0.1, 0.0, -0.1)


@pytest.mark.parametrize("force_more_proposals", [False, True])
@pytest.mark.parametrize("case", SAMPLER_CASES.values(), ids=SAMPLER_CASES.keys())
def test_stack_sampler_draws_from_the_exponential_mechanism_on_the_merged_stack(case, force_more_proposals):
    """The published stack is never merged, yet the draws follow the exponential mechanism on
    the merged, clipped stack (x + 0.1, x, x - 0.1), ties and values outside the universe included."""
    values, (lo, hi), q, eps, sensitivity = case
    rows = np.tile(np.sort(values), (KS_DRAWS, 1))
    per_copy = stack.stack_region_per_copy(values.size, 3, eps=eps, sensitivity=sensitivity)
    assert regions.MIN_REGION <= per_copy < values.size // 4  # several regions per row
    draws = regions.EMDraws.draw(np.random.default_rng(33), KS_DRAWS)
    if force_more_proposals:
        draws.uniforms[:, 1] = 1.0
    outputs = stack.em_select_stack(rows, SHIFTS, lo=lo, hi=hi, q=q, eps=eps, sensitivity=sensitivity,
                                        draws=draws)
    edges = stack.stacked_sorted(np.sort(values)[None, :], SHIFTS, lo=lo, hi=hi)
    weights = interval_weights(edges, q=q, eps=eps, sensitivity=sensitivity)[0]
    assert kolmogorov_distance(outputs, edges[0], weights) < KS_CRITICAL


@pytest.mark.parametrize("case", SAMPLER_CASES.values(), ids=SAMPLER_CASES.keys())
def test_stack_regions_are_slices_of_the_merged_stack_and_their_bounds_cover_their_weights(case):
    """Every region's edges are exactly the merged stack's edges starts..ends, and its exact
    weight never exceeds its bound (which rejection sampling needs to be exact)."""
    values, (lo, hi), q, eps, sensitivity = case
    rows = np.sort(np.stack([values, np.random.default_rng(34).permutation(values) * 1.5]), axis=1)
    merged = stack.stacked_sorted(rows, SHIFTS, lo=lo, hi=hi)
    m = merged.shape[1] - 2
    factors = quantiles.utility_factors(m, q=q, eps=eps, sensitivity=sensitivity)
    table = stack.StackRegions.build(rows, SHIFTS, picks=np.arange(0, rows.shape[1], 37), lo=lo, hi=hi,
                                         factors=factors, target=q * m)
    for row in range(rows.shape[0]):
        assert table.starts[row, 0] == 0 and table.ends[row, -1] == m + 1
        assert np.array_equal(table.starts[row, 1:], table.ends[row, :-1])
        for region in range(table.starts.shape[1]):
            start, end = table.starts[row, region], table.ends[row, region]
            edges, intervals = table.edges(np.array([row]), np.array([region]))
            assert intervals[0] == end - start
            assert np.array_equal(edges[0, :intervals[0] + 1], merged[row, start:end + 1])
            weight = np.sum(np.maximum(np.diff(merged[row, start:end + 1]), 1e-30) * factors[start:end])
            assert weight <= table.bounds[row, region]


def test_stack_sampler_refuses_regions_too_small_to_pay():
    rows = np.sort(np.random.default_rng(36).standard_normal((2, 400)), axis=1)
    draws = regions.EMDraws.draw(np.random.default_rng(37), 2)
    assert stack.stack_is_merged(400, 3, eps=1.0, sensitivity=0.5)
    with pytest.raises(ValueError, match="values per copy .* merge the stack"):
        stack.em_select_stack(rows, SHIFTS, lo=-5.0, hi=5.0, q=0.5, eps=1.0, sensitivity=0.5, draws=draws)


def test_counts_below_boundaries_equal_brute_force_counts_with_ties_and_clipping():
    rng = np.random.default_rng(35)
    for _ in range(50):
        rows = np.sort(np.round(rng.normal(0.0, rng.choice([0.2, 1.0, 3.0]), (4, 300)), rng.integers(0, 3)), axis=1)
        lo, hi = np.sort(rng.uniform(-3.0, 3.0, 2))
        picks = np.arange(0, 300, rng.integers(1, 40))
        boundary = np.clip(rows[:, picks], lo, hi)
        for shift in SHIFTS:
            counts = stack.count_below(rows, shift, boundary, lo=lo, hi=hi, guess=picks if shift == 0.0 else None)
            brute = (np.clip(rows[:, None, :] + shift, lo, hi) < boundary[:, :, None]).sum(axis=2)
            assert np.array_equal(counts, brute)


def test_region_size_is_zero_when_regions_would_be_too_small_to_pay():
    assert regions.region_size(10_000, eps=1.0, sensitivity=0.5) == 0
    assert regions.region_size(10_000, eps=0.001, sensitivity=1.0) == 4 * math.isqrt(10_001)
    assert regions.region_size(10_000, eps=0.05, sensitivity=1.0) == 40  # 1 / (eps / 2)
    assert regions.region_size(10_000, eps=0.05, sensitivity=1.0, utility=2.0) == 80  # the stack's longer regions
