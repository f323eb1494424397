"""The local model's range counting (CKS19's hierarchical histogram in zCDP form) and the IOME
paper's three-round local Shifted-CM (docs/design.md §5.13): the tree's layout and counts, the
per-user randomizer against the exact aggregate, consistency against least squares, the quantile
walk, and iome_local's budget, noise scales, steps replayed by hand, accuracy and errors."""
import math

import numpy as np
import pytest
import scipy.linalg

from mechanisms import approx_dp_to_zcdp, iome_local, make_mechanism, zcdp_to_approx_dp
from mechanisms.local import (
    aggregate_range_counts,
    cells_of,
    clipped_noise_std,
    clipped_report,
    consistent_counts,
    local_clip_rank,
    node_count,
    prefix_count,
    range_report,
    report_noise_std,
    round_budgets,
    tree_quantile,
    true_node_counts,
)

LEVELS = 4


# ---------------------------------------------------------------- range counting


def test_the_cells_cut_the_domain_evenly_and_values_outside_go_to_the_end_cells():
    values = np.array([-5.0, -1.0, -0.76, -0.74, 0.0, 0.99, 1.0, 7.0])
    assert cells_of(values, lo=-1.0, hi=1.0, levels=3).tolist() == [0, 0, 0, 1, 4, 7, 7, 7]


def test_every_level_of_the_tree_counts_the_users_below_each_node():
    cells = np.array([0, 0, 3, 5, 15, 15, 15, 8])
    counts = true_node_counts(cells, levels=LEVELS)
    assert counts.shape == (node_count(LEVELS),) == (30,)
    leaves = counts[14:30]
    assert leaves.tolist() == np.bincount(cells, minlength=16).tolist()
    assert counts[0:2].tolist() == [4, 4]  # level 1: cells 0-7, 8-15
    assert counts[2:6].tolist() == [3, 1, 1, 3]  # level 2: four cells each
    two_trees = true_node_counts(np.column_stack([cells, 15 - cells]), levels=LEVELS)
    assert np.array_equal(two_trees[0], counts) and two_trees[1, 0:2].tolist() == [4, 4]


def test_one_report_is_the_users_one_hot_nodes_plus_noise_of_the_stated_scale():
    rng = np.random.default_rng(1)
    users = 20_000
    reports = range_report(np.full(users, 9), levels=LEVELS, rho=0.5, rng=rng)
    expected = true_node_counts(np.array([9]), levels=LEVELS)
    sigma = report_noise_std(levels=LEVELS, rho=0.5)
    assert sigma == pytest.approx(math.sqrt(LEVELS / 0.5))
    assert np.allclose(reports.mean(axis=0), expected, atol=5 * sigma / math.sqrt(users))
    assert np.allclose(reports.std(axis=0), sigma, rtol=0.05)
    # two users' noiseless reports differ in 2 entries per level: l2 sensitivity sqrt(2 T)
    other = true_node_counts(np.array([6]), levels=LEVELS)
    assert np.linalg.norm(expected - other) == pytest.approx(math.sqrt(2 * LEVELS))
    assert report_noise_std(levels=LEVELS, rho=0.5, trees=3) == pytest.approx(math.sqrt(2 * LEVELS * 3))


def test_the_exact_aggregate_has_the_distribution_of_the_sum_of_the_users_reports():
    cells = np.array([[0, 3], [5, 3], [5, 15], [12, 1]])
    repetitions = 4000
    rng_sum, rng_aggregate = np.random.default_rng(2), np.random.default_rng(3)
    summed = np.stack([range_report(cells, levels=LEVELS, rho=0.3, rng=rng_sum, trees=2).sum(axis=0)
                       for _ in range(repetitions)])
    drawn = np.stack([aggregate_range_counts(cells, levels=LEVELS, rho=0.3, rng=rng_aggregate)
                      for _ in range(repetitions)])
    sigma = report_noise_std(levels=LEVELS, rho=0.3, trees=2) * math.sqrt(len(cells))
    error_of_mean = sigma / math.sqrt(repetitions)
    for sample in (summed, drawn):
        assert np.allclose(sample.mean(axis=0), true_node_counts(cells, levels=LEVELS), atol=5 * error_of_mean)
        assert np.allclose(sample.std(axis=0), sigma, rtol=0.06)


def least_squares_consistent(noisy, *, levels, total):
    """The plain version: minimise ||leaves-tree - noisy||^2 over leaf counts summing to ``total``
    (every node the sum of its leaves), by a constrained least-squares solve."""
    leaves = 1 << levels
    design = np.zeros((node_count(levels), leaves))
    for leaf in range(leaves):
        design[:, leaf] = true_node_counts(np.array([leaf]), levels=levels)
    # KKT system of min ||A z - y||^2 s.t. 1^T z = total
    kkt = np.block([[2 * design.T @ design, np.ones((leaves, 1))], [np.ones((1, leaves)), np.zeros((1, 1))]])
    solution = np.linalg.solve(kkt, np.concatenate([2 * design.T @ noisy, [total]]))
    return design @ solution[:leaves]


def test_consistency_is_the_least_squares_tree_with_the_public_total():
    rng = np.random.default_rng(4)
    cells = rng.integers(0, 16, size=50)
    truth = true_node_counts(cells, levels=LEVELS)
    assert np.allclose(consistent_counts(truth, levels=LEVELS, total=50), truth)
    noisy = aggregate_range_counts(cells, levels=LEVELS, rho=0.2, rng=rng)
    fast = consistent_counts(noisy, levels=LEVELS, total=50)
    assert np.allclose(fast, least_squares_consistent(noisy, levels=LEVELS, total=50), atol=1e-9)
    assert fast[0] + fast[1] == pytest.approx(50)
    assert np.allclose(fast[2:6:2] + fast[3:6:2], fast[0:2])


def test_consistency_reduces_the_error_of_the_counts():
    rng = np.random.default_rng(5)
    cells = rng.integers(0, 16, size=(200, 1))
    truth = true_node_counts(cells, levels=LEVELS)[0]
    raw_error, consistent_error = 0.0, 0.0
    for _ in range(200):
        noisy = aggregate_range_counts(cells, levels=LEVELS, rho=0.1, rng=rng)[0]
        raw_error += np.sum((noisy - truth) ** 2)
        consistent_error += np.sum((consistent_counts(noisy, levels=LEVELS, total=200) - truth) ** 2)
    assert consistent_error < 0.6 * raw_error


def test_prefix_counts_and_the_quantile_walk_are_exact_on_true_counts():
    rng = np.random.default_rng(6)
    cells = rng.integers(0, 16, size=(101, 3))
    counts = true_node_counts(cells, levels=LEVELS)
    for cell in range(17):
        assert prefix_count(counts, cell, levels=LEVELS).tolist() == np.sum(cells < cell, axis=0).tolist()
    midpoints = tree_quantile(counts, levels=LEVELS, target_rank=51, lo=0.0, hi=16.0)
    median_cells = np.sort(cells, axis=0)[50]
    assert midpoints.tolist() == (median_cells + 0.5).tolist()
    # a target per tree, and the lowest and highest cells at the extremes
    assert tree_quantile(counts, levels=LEVELS, target_rank=[-5.0, 1.0, 1e9], lo=0.0, hi=16.0).tolist() == [
        0.5, np.sort(cells[:, 1])[0] + 0.5, 15.5]


# ---------------------------------------------------------------- iome_local


def gaussian_users(n, d, seed, mean=0.0):
    return np.random.default_rng(seed).standard_normal((n, d)) + mean


def test_the_ledger_books_eps_and_delta_and_the_rounds_sum_to_the_converted_rho():
    x = gaussian_users(5000, 5, 0)
    estimate = iome_local(x, eps=1.5, delta=1e-6, bounds=(-40.0, 40.0), rng=np.random.default_rng(1))
    assert estimate.unit == "eps" and estimate.total == 1.5 and estimate.delta_total == 1e-6
    rho = approx_dp_to_zcdp(1.5, delta=1e-6)
    rounds = estimate.diagnostics["rho_ledger"]
    assert [entry.step for entry in rounds] == ["round_1_medians", "round_2_threshold", "round_3_noise"]
    assert math.fsum(entry.rho for entry in rounds) == pytest.approx(rho, rel=1e-15)
    assert [entry.rho for entry in rounds] == pytest.approx([rho / 4, 3 * rho / 16, 9 * rho / 16], rel=1e-15)
    assert zcdp_to_approx_dp(rho, delta=1e-6) == pytest.approx(1.5, rel=1e-12)
    clip = estimate.diagnostics["clip_threshold"]
    assert estimate.diagnostics["noise_std"] == pytest.approx(2 * clip / math.sqrt(2 * 9 * rho / 16), rel=1e-15)
    assert clipped_noise_std(clip, rho=rounds[2].rho) == estimate.diagnostics["noise_std"]


def hand_iome_local(x, *, eps, delta, bounds, seed, levels=10, rotations=3):
    """iome_local's steps written plainly, with a dense Hadamard matrix, np.histogram counts, a loop
    over coordinates and the same draws in the same order from the same seed."""
    rng = np.random.default_rng(seed)
    n, d = x.shape
    size = 1 << max(d - 1, 0).bit_length()
    lo, hi = bounds
    rho = approx_dp_to_zcdp(eps, delta=delta)
    p0, p1, p2 = rho / 4, 3 * rho / 16, 9 * rho / 16
    signs = rng.integers(0, 2, size=(rotations, size)) * 2.0 - 1.0
    hadamard = scipy.linalg.hadamard(size) / math.sqrt(size)
    rotation = np.eye(size)
    for diagonal in signs:  # R = (H D_1)...(H D_t): D_t acts first
        rotation = rotation @ hadamard @ np.diag(diagonal)
    padded = np.zeros((n, size))
    padded[:, :d] = x
    rotated = padded @ rotation.T
    half = 1 / math.sqrt(size)
    grid = np.linspace(lo * half, hi * half, (1 << levels) + 1)
    noise = rng.standard_normal((size, node_count(levels)))
    sigma = math.sqrt(2 * levels * size / (2 * p0)) * math.sqrt(n)
    centre = np.empty(size)
    for j in range(size):
        column = np.clip(rotated[:, j], grid[0], np.nextafter(grid[-1], -np.inf))
        leaves, _ = np.histogram(column, bins=grid)
        counts = true_node_counts(np.repeat(np.arange(1 << levels), leaves), levels=levels) + sigma * noise[j]
        centre[j] = tree_quantile(consistent_counts(counts, levels=levels, total=n), levels=levels,
                                  target_rank=n / 2, lo=lo * half, hi=hi * half)[0]
    shifted = rotated - centre
    norms = np.linalg.norm(shifted, axis=1)
    target = n - 2 * math.sqrt(n * size / (2 * p2)) - math.sqrt(n * levels) * math.sqrt(2 * levels / (2 * p1))
    norm_counts = true_node_counts(cells_of(norms, lo=0.0, hi=hi, levels=levels), levels=levels)
    norm_counts = norm_counts + math.sqrt(2 * levels / (2 * p1)) * math.sqrt(n) * rng.standard_normal(
        node_count(levels))
    clip = tree_quantile(consistent_counts(norm_counts, levels=levels, total=n), levels=levels, target_rank=target,
                         lo=0.0, hi=hi)[0]
    clipped = np.array([row * min(1.0, clip / norm) for row, norm in zip(shifted, norms)])
    mean = (clipped.sum(axis=0) + rng.standard_normal(size) * 2 * clip / math.sqrt(2 * p2) * math.sqrt(n)) / n
    return (rotation.T @ (mean + centre))[:d], centre, clip, target


@pytest.mark.parametrize("n,d,eps,mean", [(3000, 3, 2.0, 0.5), (2000, 8, 4.0, -3.0), (500, 1, 8.0, 1.0)])
def test_the_steps_replayed_by_hand_give_the_same_centre_threshold_and_estimate(n, d, eps, mean):
    x = gaussian_users(n, d, n + d, mean)
    bounds = (-12.0 * math.sqrt(d), 12.0 * math.sqrt(d))
    estimate = iome_local(x, eps=eps, delta=1e-7, bounds=bounds, rng=np.random.default_rng(7))
    by_hand, centre, clip, target = hand_iome_local(x, eps=eps, delta=1e-7, bounds=bounds, seed=7)
    assert estimate.diagnostics["clip_target_rank"] == pytest.approx(target, rel=1e-12)
    assert np.allclose(estimate.diagnostics["rotated_centre"], centre, rtol=0, atol=1e-12)
    assert estimate.diagnostics["clip_threshold"] == pytest.approx(clip, rel=1e-12)
    assert np.allclose(estimate.mean, by_hand, rtol=0, atol=1e-9)


def test_the_clip_rank_is_the_central_offset_scaled_to_the_local_model():
    budgets = round_budgets(0.4, centre_share=0.25, clip_share=0.25)
    rank = local_clip_rank(10_000, 8, levels=10, budgets=budgets)
    expected = 10_000 - 2 * math.sqrt(10_000 * 8 / (2 * budgets.noise)) - 10 * math.sqrt(10_000 / budgets.threshold)
    assert rank == pytest.approx(expected, rel=1e-12)


def test_the_per_user_clipped_report_is_clipped_to_norm_c_with_the_stated_noise():
    rng = np.random.default_rng(8)
    rows = np.tile([[3.0, 4.0], [0.3, 0.4]], (20_000, 1))
    reports = clipped_report(rows, clip=1.0, rho=0.5, rng=rng)
    assert np.allclose(reports[0::2].mean(axis=0), [0.6, 0.8], atol=0.04)
    assert np.allclose(reports[1::2].mean(axis=0), [0.3, 0.4], atol=0.04)
    assert np.allclose(reports[0::2].std(axis=0), 2.0 / math.sqrt(1.0), rtol=0.03)


@pytest.mark.parametrize("mean", [0.0, 10.0])
def test_accurate_where_the_budget_allows_and_translation_invariant(mean):
    """n = 10^5 users in d = 4 at eps = 2.5 (rho = 0.09): the threshold lands near the norms'
    bulk and the l2 error is a small fraction of the per-user spread sqrt(d) = 2, at mean 0 and 10."""
    d = 4
    radius = 20 * math.sqrt(d)
    errors = []
    for seed in range(3):
        x = gaussian_users(100_000, d, seed, mean)
        estimate = iome_local(x, eps=2.5, bounds=(-2 * radius, 2 * radius), rng=np.random.default_rng(seed + 10))
        errors.append(np.linalg.norm(estimate.mean - mean))
    assert max(errors) < 0.5


def test_the_same_seed_gives_the_same_estimate_and_a_shared_rotation_generator_is_used():
    x = gaussian_users(2000, 6, 9)
    call = dict(eps=3.0, bounds=(-20.0, 20.0))
    first = iome_local(x, rng=np.random.default_rng(1), **call)
    assert np.array_equal(first.mean, iome_local(x, rng=np.random.default_rng(1), **call).mean)
    assert not np.array_equal(first.mean, iome_local(x, rng=np.random.default_rng(2), **call).mean)
    shared = [iome_local(x, rng=np.random.default_rng(seed), rotation_rng=np.random.default_rng(5), **call)
              for seed in (1, 2)]
    assert np.array_equal(shared[0].diagnostics["rotation_signs"], shared[1].diagnostics["rotation_signs"])


def test_the_registry_variant_runs_with_the_engine_arguments():
    estimate = make_mechanism("iome_local", search_steps=8)(gaussian_users(1000, 2, 3), eps=2.0, bounds=(-9.0, 9.0),
                                                           rng=np.random.default_rng(0))
    assert estimate.mean.shape == (2,) and estimate.total == 2.0


@pytest.mark.parametrize(("changes", "named"), [
    ({"eps": 0.0}, "eps"), ({"eps": "1"}, "eps"), ({"delta": 1.0}, "delta"), ({"delta": 0.0}, "delta"),
    ({"bounds": (1.0, -1.0)}, "bounds"), ({"rng": 3}, "rng"), ({"rotations": 0}, "rotations"),
    ({"search_steps": 0}, "search_steps"), ({"centre_share": 1.0}, "centre_share"),
    ({"clip_share": 0.0}, "clip_share"), ({"rotation_rng": "seed"}, "rng"),
])
def test_bad_arguments_raise_one_value_error_naming_them(changes, named):
    arguments = dict(eps=1.0, bounds=(-5.0, 5.0), rng=np.random.default_rng(0)) | changes
    with pytest.raises(ValueError, match=named):
        iome_local(gaussian_users(100, 2, 0), **arguments)
