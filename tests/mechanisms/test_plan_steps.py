"""PLAN's per-coordinate building blocks (docs/design.md §5.2 steps 1-3) against direct formulas, and the
batched Gaussian step (the privacy audit's sampler) against the Gaussian step."""
import numpy as np
import pytest

from mechanisms import gaussian_clipped_mean
from mechanisms._fast.pairs import group_pairs, group_sums, stack_members
from mechanisms.plan_transcript import batched_gaussian_clipped_mean

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("groups", [1, 3])
def test_group_sums_are_half_the_summed_squared_pair_differences_also_in_views(groups):
    rows = RNG.standard_normal((4, 61))
    first, second = group_pairs(np.random.default_rng(0), 61, groups)
    expected = (((rows[:, first] - rows[:, second]) ** 2) / 2).reshape(4, -1, groups).sum(axis=2)
    assert np.allclose(group_sums(rows, first, second, groups=groups), expected, rtol=1e-14, atol=0)
    # The rows inside padded edges, the sums into padded edges: neither view is contiguous.
    padded = np.zeros((4, 63))
    padded[:, 1:-1] = rows
    out = np.full((4, first.size // groups + 2), -1.0)
    group_sums(padded[:, 1:-1], first, second, groups=groups, out=out[:, 1:-1])
    assert np.array_equal(out[:, 1:-1], group_sums(rows, first, second, groups=groups))
    assert np.all(out[:, [0, -1]] == -1.0)  # the padding is left alone


SHIFTS = (0.5, 0.0, -0.5)


def _published_stack(block, spread, lo, hi):
    return np.concatenate([np.clip(block + spread, lo, hi), block, np.clip(block - spread, lo, hi)], axis=1)


def test_published_pairs_come_from_the_three_shifted_copies_clipped_to_the_universe():
    block = RNG.uniform(-1.0, 1.0, size=(3, 50))
    block[1, 7], block[2, 9] = 2.0, -2.0  # at the universe's edges: their shifted copies leave it
    stack = _published_stack(block, 0.5, -2.0, 2.0)
    assert stack[1, 7] == 2.0 and stack[2, 100 + 9] == -2.0
    first, second = group_pairs(np.random.default_rng(1), 150, 1)
    (first_at, first_shift), (second_at, second_shift) = (stack_members(i, 50, SHIFTS) for i in (first, second))
    sums = group_sums(block, first_at, second_at, groups=1, first_shift=first_shift, second_shift=second_shift,
                      bounds=(-2.0, 2.0))
    assert np.array_equal(sums, (stack[:, first] - stack[:, second]) ** 2 / 2)
    # Without the clip the pairs that involve a copy outside the universe differ.
    unclipped = group_sums(block, first_at, second_at, groups=1, first_shift=first_shift, second_shift=second_shift)
    assert not np.array_equal(unclipped, sums)


def test_published_pairs_well_inside_the_universe_need_no_clip():
    block = RNG.uniform(-1.0, 1.0, size=(3, 50))
    stack = _published_stack(block, 0.5, -1.5, 1.5)
    assert np.array_equal(stack, np.concatenate([block + 0.5, block, block - 0.5], axis=1))
    first, second = group_pairs(np.random.default_rng(2), 150, 3)
    (first_at, first_shift), (second_at, second_shift) = (stack_members(i, 50, SHIFTS) for i in (first, second))
    sums = group_sums(block, first_at, second_at, groups=3, first_shift=first_shift, second_shift=second_shift)
    expected = ((stack[:, first] - stack[:, second]) ** 2 / 2).reshape(3, -1, 3).sum(axis=2)
    assert np.allclose(sums, expected, rtol=1e-14, atol=0)


def test_stack_members_of_one_unshifted_copy_are_the_positions_themselves():
    index = np.arange(7)
    assert stack_members(index, 7, (0.0,)) == (index, None)


def test_batched_gaussian_step_draws_exactly_what_gaussian_clipped_mean_draws():
    zt = np.zeros((1, 10))  # the audit's pair (experiments/audit/audits.py): one person at -C
    zt[0, 0] = -1.0
    for rows in (zt, RNG.standard_normal((3, 40))):
        first, second = np.random.default_rng(14), np.random.default_rng(14)
        one_by_one = np.array([gaussian_clipped_mean(rows, clip=1.0, rho=0.3, rng=first)[0] for _ in range(500)])
        batched = batched_gaussian_clipped_mean(rows, clip=1.0, rho=0.3, rng=second, runs=500)
        np.testing.assert_array_equal(batched, one_by_one)
