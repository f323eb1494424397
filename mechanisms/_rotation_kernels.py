"""Compiled kernels of IOME's sparse path (docs/design.md §5.5 cost notes, §8): rotate sparse
rows one at a time and count their rotated coordinates on the 2^T-bin grid of the median searches.

Imported only by :mod:`mechanisms._sparse_rotation`, when IOME runs on sparse input, so only
those jobs pay numba's import and compilation. Single-threaded (the workflow runs jobs in
parallel); compiled code is cached on disk (``cache=True``), so later processes load it.

Why compiled: one Kosarak-shaped trial rotates 75,462 rows of 32,768 coordinates and bins
every rotated coordinate (2.5e9 values). numpy needs a BLAS rotation of a few rows at a time
plus a binning and a bincount pass over memory for each block; here each row is rotated where
it stays in cache and binned as it leaves (docs/performance.md#iome-on-sparse-data has the numbers).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .hadamard import hadamard_factor

# Doubles (16 KiB) per block whose butterflies of strides < L1_BLOCK run together while the
# block sits in L1 cache; the few remaining levels then pass over the whole row (in L2).
L1_BLOCK = 2048
# Coordinates whose histogram rows are filled together: their bins of a block of rows are
# stored contiguously, and their counts stay in cache while the block's rows are added.
TILE = 256
# The first transform of a row meets its few nonzeros: a block holding at most this many gets
# their Hadamard columns added (block / 64 runs of 64 values each) instead of a transform.
COLUMN_NONZEROS = 8
COLUMN = 64  # length of the columns tabulated in SYLVESTER_64
# Counts (int32) after each coordinate's histogram row: rows a multiple of 4 KiB apart would
# fall into the same L1 cache sets and evict each other while a tile is filled.
HISTOGRAM_PAD = 16


# H_64 (32 KiB). Sylvester matrices nest (H_2^(m+6) = H_2^m (x) H_64, and H_2^m is the top-left
# corner of H_64 for m <= 6), so any column of a block's H_block (block <= 4096) is a product of
# entries of this table, never the D' x D' matrix.
SYLVESTER_64 = hadamard_factor(COLUMN, 1.0)


@njit(cache=True)
def _first_levels(x, start, length):
    """The butterflies of strides 1, 2 and 4 on x[start:start + length], eight values at a time
    in registers (strides this short do not vectorise as loops)."""
    for i in range(start, start + length, 8):
        a0, a1, a2, a3 = x[i], x[i + 1], x[i + 2], x[i + 3]
        a4, a5, a6, a7 = x[i + 4], x[i + 5], x[i + 6], x[i + 7]
        b0, b1, b2, b3 = a0 + a1, a0 - a1, a2 + a3, a2 - a3
        b4, b5, b6, b7 = a4 + a5, a4 - a5, a6 + a7, a6 - a7
        c0, c1, c2, c3 = b0 + b2, b1 + b3, b0 - b2, b1 - b3
        c4, c5, c6, c7 = b4 + b6, b5 + b7, b4 - b6, b5 - b7
        x[i], x[i + 1], x[i + 2], x[i + 3] = c0 + c4, c1 + c5, c2 + c6, c3 + c7
        x[i + 4], x[i + 5], x[i + 6], x[i + 7] = c0 - c4, c1 - c5, c2 - c6, c3 - c7


@njit(cache=True)
def _levels(x, start, length, stride, end):
    """The butterflies of strides stride, 2 stride, ... < end on x[start:start + length]: two
    levels per pass (radix 4), one radix-2 pass if their number is odd. Slices of x give the
    compiler separate arrays, so the inner loops vectorise."""
    while 4 * stride <= end:
        for i in range(start, start + length, 4 * stride):
            v0 = x[i:i + stride]
            v1 = x[i + stride:i + 2 * stride]
            v2 = x[i + 2 * stride:i + 3 * stride]
            v3 = x[i + 3 * stride:i + 4 * stride]
            for j in range(stride):
                a0, a1, a2, a3 = v0[j], v1[j], v2[j], v3[j]
                b0, b1, b2, b3 = a0 + a1, a0 - a1, a2 + a3, a2 - a3
                v0[j], v1[j], v2[j], v3[j] = b0 + b2, b1 + b3, b0 - b2, b1 - b3
        stride *= 4
    if stride < end:
        for i in range(start, start + length, 2 * stride):
            low = x[i:i + stride]
            high = x[i + stride:i + 2 * stride]
            for j in range(stride):
                a, b = low[j], high[j]
                low[j], high[j] = a + b, a - b


@njit(cache=True)
def signed_fwht(x, signs):
    """x <- H diag(signs) x in place, H the unnormalised Sylvester Hadamard matrix of size
    len(x), a power of two. Cache-blocked: the levels of strides < L1_BLOCK block by block,
    then the rest over the whole row."""
    n = x.size
    for j in range(n):  # a pass of its own: it vectorises, inside _first_levels it would not
        x[j] *= signs[j]
    block = min(n, L1_BLOCK)
    for start in range(0, n, block):
        if block >= 8:
            _first_levels(x, start, block)
            _levels(x, start, block, 8, block)
        else:
            _levels(x, start, block, 1, block)
    _levels(x, 0, n, block, n)


@njit(cache=True)
def sparse_signed_fwht(indptr, indices, data, row, signs, out):
    """out <- H diag(signs) x for the CSR row ``row`` (indices sorted) zero-padded to len(out): the
    transform of :func:`signed_fwht`, whose blockwise levels act on blocks that are mostly zero.
    A block with few nonzeros gets their columns of H_block, sign times value, added instead
    (on integer data the same exact sums); the levels across blocks then run as usual."""
    n = out.size
    block = min(n, L1_BLOCK)
    out[:] = 0.0
    first, stop = indptr[row], indptr[row + 1]
    if block < COLUMN:
        for position in range(first, stop):
            out[indices[position]] = data[position]
        signed_fwht(out, signs)
        return
    while first < stop:
        base = indices[first] // block * block
        last = first
        while last < stop and indices[last] < base + block:
            last += 1
        if last - first <= COLUMN_NONZEROS:
            for position in range(first, last):
                column = indices[position] - base
                high, low = column // COLUMN, column % COLUMN
                value = data[position] * signs[indices[position]]
                pattern = SYLVESTER_64[low]
                for run in range(block // COLUMN):
                    # H_block[run * 64 + t, column] = H_64[run, high] * H_64[t, low]
                    scaled = value * SYLVESTER_64[run, high]
                    target = out[base + run * COLUMN:base + (run + 1) * COLUMN]
                    for t in range(COLUMN):
                        target[t] += scaled * pattern[t]
        else:
            for position in range(first, last):
                out[indices[position]] = data[position] * signs[indices[position]]
            _first_levels(out, base, block)
            _levels(out, base, block, 8, block)
        first = last
    _levels(out, 0, n, block, n)


@njit(cache=True)
def rotate_row(indptr, indices, data, row, signs, out):
    """out <- (H D_1)...(H D_t) x (D_t first), unnormalised, for the CSR row ``row`` zero-padded
    to len(out): docs/design.md §5.5 step 1 without the final scaling (see mechanisms.hadamard)."""
    last = signs.shape[0] - 1
    sparse_signed_fwht(indptr, indices, data, row, signs[last], out)
    for rotation in range(last - 1, -1, -1):
        signed_fwht(out, signs[rotation])


@njit(cache=True)
def bin_row(row, scale, grid, lo, step, inverse, arithmetic, bins, slot):
    """bins[t, slot, c] <- the grid bin of row[j] * scale, j = t * tile + c (tile = bins.shape[2]):
    bin b holds grid[b] < v <= grid[b + 1], bin 0 all v <= grid[1], the last bin all v above
    grid[-2] (as mechanisms.quantiles.grid_bins). First guess floor((v - lo) * inverse), then
    corrected by comparisons with the grid's values, so the bins are exact. ``arithmetic``
    (checked by the caller): grid[k] == lo + k * step for every k and the guess is never more
    than one bin off, so one comparison each way, computed without a table, suffices (and
    vectorises); otherwise the grid itself is searched from the guess."""
    tile = bins.shape[2]
    top = grid.size - 2
    last = float(top)
    for t in range(bins.shape[0]):
        values = row[t * tile:(t + 1) * tile]
        out = bins[t, slot]
        if arithmetic:
            for c in range(tile):
                v = values[c] * scale
                guess = (v - lo) * inverse
                guess = guess if guess > 0.0 else 0.0  # also maps NaN (from overflow) to bin 0
                k = np.floor(guess if guess < last else last)
                k -= 1.0 if k > 0.0 and v <= lo + k * step else 0.0
                k += 1.0 if k < last and v > lo + (k + 1.0) * step else 0.0
                out[c] = k
        else:
            for c in range(tile):
                v = values[c] * scale
                guess = (v - lo) * inverse
                guess = guess if guess > 0.0 else 0.0
                k = int(guess if guess < last else last)
                while k > 0 and v <= grid[k]:
                    k -= 1
                while k < top and v > grid[k + 1]:
                    k += 1
                out[c] = k


@njit(cache=True)
def add_bins(bins, rows, counts):
    """counts[j, b] += 1 for every bin b of coordinate j among the first ``rows`` slots of
    ``bins`` (tiles x slots x tile), a tile of coordinates at a time."""
    tile = bins.shape[2]
    for t in range(bins.shape[0]):
        first = t * tile
        for slot in range(rows):
            block = bins[t, slot]
            for c in range(tile):
                counts[first + c, block[c]] += 1


@njit(cache=True)
def rotated_histogram(indptr, indices, data, signs, scale, grid, lo, step, inverse, arithmetic, row, bins, counts):
    """counts[j, b] += the number of rows whose rotated coordinate j (scaled by ``scale``) falls
    in bin b of ``grid``. One pass over the rows: each is rotated in ``row`` (its whole length
    stays in cache through the transforms) and binned into ``bins`` (tiles x block rows x tile),
    whose block is added to ``counts`` (size x at least 2^T) when full."""
    n = indptr.size - 1
    block_rows = bins.shape[1]
    for first in range(0, n, block_rows):
        rows = min(block_rows, n - first)
        for slot in range(rows):
            rotate_row(indptr, indices, data, first + slot, signs, row)
            bin_row(row, scale, grid, lo, step, inverse, arithmetic, bins, slot)
        add_bins(bins, rows, counts)


@njit(cache=True)
def cumulate(counts, out):
    """out[j, b] <- counts[j, 0] + ... + counts[j, b] for the columns of ``out``."""
    for j in range(out.shape[0]):
        total = 0
        for b in range(out.shape[1]):
            total += counts[j, b]
            out[j, b] = total
