"""The compiled machinery of IOME's sparse path (mechanisms/_rotation_kernels.py,
mechanisms/_sparse_rotation.py) against the plain versions: its transform against ``fwht``, its
rotated rows against ``rotate``, its counts against counting the rotated values directly."""
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse
from scipy.linalg import hadamard

from mechanisms import fwht, random_signs, rotate
from mechanisms._sparse_rotation import (
    arithmetic_bins_are_exact,
    check_histogram_size,
    kernels,
    rotated_cumulative_counts,
)
from mechanisms.hadamard import rotation_scale
from mechanisms.quantiles import cumulative_counts, search_grid

K = kernels()
# Below, at and above one L1 block (levels across blocks), and below the 64-value columns.
SIZES = [1, 2, 4, 8, 16, 64, 256, K.L1_BLOCK, 2 * K.L1_BLOCK, 8 * K.L1_BLOCK]


def integer_rows(seed, shape, density, high=3):
    """Sparse-looking integer rows: exact in every summation order."""
    rng = np.random.default_rng(seed)
    return (rng.random(shape) < density) * rng.integers(-high, high + 1, shape).astype(np.float64)


def csr_parts(matrix):
    return matrix.indptr.astype(np.int64), matrix.indices.astype(np.int32), matrix.data


def kernel_rotation(matrix, signs):
    """Every row of ``matrix`` rotated by the kernel, scaled as :func:`rotate` scales."""
    size = signs.shape[1]
    out = np.empty((matrix.shape[0], size))
    for row in range(matrix.shape[0]):
        K.rotate_row(*csr_parts(matrix), row, signs, out[row])
    return out * rotation_scale(size, signs.shape[0])


def padded(dense, size):
    out = np.zeros((dense.shape[0], size))
    out[:, :dense.shape[1]] = dense
    return out


# ---------------------------------------------------------------- the transform


@pytest.mark.parametrize("size", [s for s in SIZES if s <= 4096])
def test_kernel_transform_of_integers_equals_the_explicit_hadamard_matrix_exactly(size):
    x = integer_rows(size, size, 0.5, high=1000)
    signs = np.where(np.random.default_rng(size).random(size) < 0.5, -1.0, 1.0)
    out = x.copy()
    K.signed_fwht(out, signs)
    np.testing.assert_array_equal(out, hadamard(size) @ (signs * x))


@pytest.mark.parametrize("size", SIZES)
def test_kernel_transform_equals_fwht_up_to_the_normalisation(size):
    x = np.random.default_rng(size).standard_normal(size)
    out = x.copy()
    K.signed_fwht(out, np.ones(size))
    np.testing.assert_allclose(out / math.sqrt(size), fwht(x), rtol=0, atol=1e-12 * math.sqrt(size))


# ---------------------------------------------------------------- rotated rows

ROW_CASES = [
    # (n, d, density): d below 64 (no columns), one block, several blocks, blocks with many
    # nonzeros (transformed) and with few (their columns added), empty rows.
    (6, 1, 1.0), (9, 5, 0.5), (7, 64, 0.1), (9, 100, 0.3), (6, 2000, 0.002), (5, 2048, 0.05),
    (4, 5000, 0.001), (3, 3 * K.L1_BLOCK + 7, 0.004), (5, 40, 0.0),
]


@pytest.mark.parametrize("rotations", [1, 3])
@pytest.mark.parametrize(("n", "d", "density"), ROW_CASES)
def test_kernel_rotated_integer_rows_are_bit_identical_to_rotate(n, d, density, rotations):
    dense = integer_rows(n * d, (n, d), density)
    size = 1 << (d - 1).bit_length()
    signs = random_signs(np.random.default_rng(d), rotations=rotations, size=size)
    expected = rotate(padded(dense, size), signs)
    np.testing.assert_array_equal(kernel_rotation(scipy.sparse.csr_matrix(dense), signs), expected)


@pytest.mark.parametrize(("n", "d", "density"), [(5, 100, 0.3), (4, 5000, 0.003)])
def test_kernel_rotated_real_rows_equal_rotate_to_rounding(n, d, density):
    rng = np.random.default_rng(d)
    dense = (rng.random((n, d)) < density) * rng.standard_normal((n, d))
    size = 1 << (d - 1).bit_length()
    signs = random_signs(rng, rotations=3, size=size)
    np.testing.assert_allclose(kernel_rotation(scipy.sparse.csr_matrix(dense), signs),
                               rotate(padded(dense, size), signs), rtol=0, atol=1e-13)


# ---------------------------------------------------------------- counts on the search grid

# (lo, hi): the binary figures' [0, 1] (bins found by arithmetic) and intervals whose grid is not
# lo + k (hi - lo) / 2^T in floating point (bins found by searching the grid).
INTERVALS = [(0.0, 1.0), (-0.37, 0.52), (0.1, 0.3)]


def test_the_interval_cases_take_both_binning_routes():
    routes = []
    for lo, hi in INTERVALS:
        grid = search_grid(lo, hi, 10)
        routes.append(arithmetic_bins_are_exact(grid, lo, (hi - lo) / 1024, 1024 / (hi - lo)))
    assert routes[0] and not all(routes)


@pytest.mark.parametrize("interval", INTERVALS)
@pytest.mark.parametrize(("n", "d", "steps", "rotations"), [(300, 37, 10, 3), (200, 600, 6, 1), (50, 3000, 8, 3),
                                                            (40, 1, 4, 2)])
def test_counts_equal_direct_counts_of_the_rotated_binary_rows(n, d, steps, rotations, interval):
    dense = (np.random.default_rng(n + d).random((n, d)) < 0.05).astype(np.float64)
    size = 1 << (d - 1).bit_length()
    signs = random_signs(np.random.default_rng(steps), rotations=rotations, size=size)
    lo, hi = interval
    expected = cumulative_counts(rotate(padded(dense, size), signs).T, search_grid(lo, hi, steps))
    counts = rotated_cumulative_counts(scipy.sparse.csr_matrix(dense), signs, lo=lo, hi=hi, steps=steps)
    assert counts.dtype == np.int32 and counts.shape == (size, 1 << steps)
    np.testing.assert_array_equal(counts, expected)


def test_values_on_grid_points_and_outside_the_interval_are_counted_as_the_direct_comparison_counts_them():
    """Rows with one entry rotate to +-v / sqrt(D) per coordinate (one rotation): choose v so
    those land on midpoints of [0, 1], outside it, and on its ends."""
    size, steps = 4, 3
    grid = search_grid(0.0, 1.0, steps)
    values = np.array([0.5, 0.25, 0.375, 1.0, 0.0, 1.5, 0.125, 0.875]) * math.sqrt(size)
    dense = np.zeros((values.size, size))
    dense[:, 0] = values
    signs = np.ones((1, size))
    rotated = rotate(dense, signs)
    assert np.isin(rotated, grid).sum() > values.size  # many values sit exactly on grid points
    counts = rotated_cumulative_counts(scipy.sparse.csr_matrix(dense), signs, lo=0.0, hi=1.0, steps=steps)
    np.testing.assert_array_equal(counts, cumulative_counts(rotated.T, grid))
    np.testing.assert_array_equal(counts[:, :-1], (rotated.T[:, :, None] <= grid[None, None, 1:-1]).sum(axis=1))


def test_a_histogram_above_the_limit_is_refused_naming_search_steps():
    check_histogram_size(32768, 14)  # 2 GiB: the limit itself is allowed
    with pytest.raises(ValueError, match=r"search_steps=15\b.*use search_steps <= 14"):
        check_histogram_size(32768, 15)


def test_the_dense_path_never_imports_numba():
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import mechanisms
        mechanisms.iome(np.random.default_rng(0).normal(size=(50, 3)), rho=1.0, bounds=(-5, 5),
                        rng=np.random.default_rng(1))
        print(sorted(name for name in ("numba", "llvmlite") if name in sys.modules))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
