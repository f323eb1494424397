"""IOME's median searches on sparse rows (docs/design.md §5.5 cost notes): the rotated coordinates of
every row, counted on the 2^T-bin grid of the binary searches, in one blocked pass that never
holds more than one row's rotated coordinates (and never a dense n x D' matrix).

The counts depend on the data, the rotation's signs, T and the search interval, not on rho, so
a :class:`SharedSample` keeps them for IOME's calls with other budgets on the same rotation.
The compiled kernels (:mod:`mechanisms._rotation_kernels`) are imported on first use, so a
process that never runs IOME on sparse input never imports numba.
"""
from __future__ import annotations

import hashlib
import os
import tempfile

import numpy as np

from ._layout import SharedSample
from .hadamard import rotation_scale
from .quantiles import search_grid

HISTOGRAM_LIMIT = 2 << 30  # bytes of int32 counts (D' x 2^T): beyond this, search_steps is refused
_BLOCK_BYTES = 64 << 20  # the bins of a block of rows (uint16): more rows per block, less traffic adding counts


def kernels():
    """The compiled kernels' module, imported on first use. numba caches compiled code next to
    the source, else in the user's cache directory; where neither is writable (a read-only
    install and home) it refuses to define cached functions, and the cache goes to the
    temporary directory instead of failing."""
    try:
        from . import _rotation_kernels
    except RuntimeError as error:
        if "cannot cache function" not in str(error):
            raise
        import numba

        numba.config.CACHE_DIR = os.path.join(tempfile.gettempdir(), f"numba-cache-{os.getuid()}")
        from . import _rotation_kernels
    return _rotation_kernels


def histogram_bytes(size: int, steps: int) -> int:
    return 4 * size << steps


def check_histogram_size(size: int, steps: int) -> None:
    """ValueError naming ``search_steps`` when D' x 2^T int32 counts would exceed HISTOGRAM_LIMIT."""
    nbytes = histogram_bytes(size, steps)
    if nbytes > HISTOGRAM_LIMIT:
        largest = (HISTOGRAM_LIMIT // (4 * size)).bit_length() - 1
        raise ValueError(
            f"search_steps={steps} is too large for sparse input: the median searches read a histogram of "
            f"{size} rotated coordinates x 2^{steps} bins ({nbytes / 2**30:.1f} GiB, limit "
            f"{HISTOGRAM_LIMIT / 2**30:.0f} GiB); "
            + (f"use search_steps <= {largest} (the binary figures use 10)" if largest >= 1 else "d is too large")
        )


def arithmetic_bins_are_exact(grid: np.ndarray, lo: float, step: float, inverse: float) -> bool:
    """Whether the kernel may bin without reading the grid (``bin_row``'s ``arithmetic``): every
    grid point equals lo + k step in floating point, and the first guess floor((v - lo) inverse),
    clamped, is at most one bin off for every v. Both are monotone in v, so checking the guess
    at each inner grid point and just above it covers all values."""
    bins = grid.size - 1
    k = np.arange(bins + 1, dtype=np.float64)
    if not np.array_equal(lo + k * step, grid):
        return False

    def guess(values):  # as in bin_row
        return np.floor(np.clip((values - lo) * inverse, 0.0, bins - 1.0))

    inner, index = grid[1:-1], k[1:-1]
    return bool(np.all(guess(inner) <= index) and np.all(guess(np.nextafter(inner, np.inf)) >= index - 1))


def rotated_cumulative_counts(csr, signs, *, lo: float, hi: float, steps: int, out=None) -> np.ndarray:
    """For the rotation R with sign diagonals ``signs`` (rotations x D') of the zero-padded rows of
    ``csr`` (n x d): out[j, b] = #{i : (R x_i)_j <= g[b + 1]} for the grid g = search_grid(lo, hi,
    steps), out[j, 2^T - 1] = n (D' x 2^T, int32; into ``out`` if given). These are
    :func:`mechanisms.quantiles.cumulative_counts` of the rotated coordinates, which on integer
    data equal those of :func:`mechanisms.hadamard.rotate` bit for bit."""
    compiled = kernels()
    rotations, size = signs.shape
    check_histogram_size(size, steps)
    bins = 1 << steps
    grid = search_grid(lo, hi, steps)
    step, inverse = (hi - lo) / bins, bins / (hi - lo)
    arithmetic = arithmetic_bins_are_exact(grid, lo, step, inverse)
    tile = min(compiled.TILE, size)
    block_rows = max(1, min(csr.shape[0], _BLOCK_BYTES // (2 * size)))
    block_bins = np.empty((size // tile, block_rows, tile), dtype=np.uint16 if bins <= 1 << 16 else np.uint32)
    counts = np.zeros((size, bins + compiled.HISTOGRAM_PAD), dtype=np.int32)
    compiled.rotated_histogram(
        csr.indptr.astype(np.int64, copy=False), csr.indices.astype(np.int32, copy=False), csr.data,
        np.ascontiguousarray(signs, dtype=np.float64), rotation_scale(size, rotations), grid, lo, step, inverse,
        arithmetic, np.empty(size), block_bins, counts,
    )
    out = np.empty((size, bins), dtype=np.int32) if out is None else out
    compiled.cumulate(counts, out)
    return out


def shared_rotated_counts(x, csr, signs, *, lo: float, hi: float, steps: int) -> np.ndarray:
    """:func:`rotated_cumulative_counts`, kept in ``x`` if it is a :class:`SharedSample` (under a
    digest of the signs, T and the interval: IOME's calls with other budgets on the same rotation
    find it there) and the cache has room; the same array either way."""
    def compute(out=None):
        return rotated_cumulative_counts(csr, signs, lo=lo, hi=hi, steps=steps, out=out)

    if isinstance(x, SharedSample):
        key = ("iome_rotated_counts", hashlib.sha256(signs.tobytes()).hexdigest(), signs.shape, steps, lo, hi)
        kept = x.derived(key, (signs.shape[1], 1 << steps), compute, dtype=np.int32)
        if kept is not None:
            return kept
    return compute()
