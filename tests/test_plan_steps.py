"""PLAN's per-coordinate building blocks (DESIGN.md 5.2 steps 1-3) against direct formulas."""
import numpy as np
import pytest

from mechanisms.plan import _coordinate_rows, group_pairs, group_sums

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


def test_published_rows_are_the_three_shifted_copies_clipped_to_the_universe():
    block = RNG.uniform(-1.0, 1.0, size=(3, 50))
    block[1, 7], block[2, 9] = 2.0, -2.0  # at the universe's edges: their shifted copies leave it
    out = np.empty((3, 150))
    _coordinate_rows(block, published=True, spread=0.5, lo=-2.0, hi=2.0, out=out)
    expected = np.concatenate([np.clip(block + 0.5, -2, 2), block, np.clip(block - 0.5, -2, 2)], axis=1)
    assert np.array_equal(out, expected)
    assert out[1, 7] == 2.0 and out[2, 100 + 9] == -2.0


def test_published_rows_well_inside_the_universe_are_not_clipped():
    block = RNG.uniform(-1.0, 1.0, size=(3, 50))
    out = np.empty((3, 150))
    _coordinate_rows(block, published=True, spread=0.5, lo=-1.5, hi=1.5, out=out)
    assert np.array_equal(out, np.concatenate([block + 0.5, block, block - 0.5], axis=1))
