"""PrivQuantile (docs/design.md §5.1): exponential-mechanism quantile and private binary search.

Both are vectorised over columns: one call answers an independent quantile query per
column, each column's answer costing ``rho`` (zCDP). Internally the work runs on a
row-per-query layout (k queries x m values, C-contiguous) in cache-sized blocks; all
randomness is drawn before the blocked loops, so results do not depend on block size.

PLAN's own calls sample the same exponential mechanism by regions (rejection sampling) and
read the published stack without merging it: those samplers live in :mod:`mechanisms._fast`.
"""
from __future__ import annotations

import math

import numpy as np

from ._layout import Workspace, transposed_copy
from ._validation import (
    check_bounds,
    check_data,
    check_fraction,
    check_generator,
    check_positive,
    check_search_steps,
    check_work_size,
)
from .accounting import check_rho

_MAX_BLOCK_ROWS = 32
_BLOCK_BYTES = 5 << 20  # a block's rows stay in cache through sort, weights and sampling (docs/design.md §8)
_SAMPLE_BLOCK = 64  # intervals per first-level bucket of the two-level sampler
MIN_INTERVAL_WIDTH = 1e-30  # docs/design.md §5.1: max(width_i, 1e-30) keeps empty intervals selectable
# Values per copy below which PLAN's published stack is merged (sorted) rather than sampled by
# regions (mechanisms._fast.stack): the regions' Python loop then costs more than the sort.
MIN_STACK_ROW = 3000


def block_rows(row_length: int) -> int:
    """Queries per block for rows of ``row_length`` values: about 5 MiB per block (measured
    best from n = 4000 to n = 300000 values per row), at most 32 rows."""
    return max(1, min(_MAX_BLOCK_ROWS, _BLOCK_BYTES // (8 * max(row_length, 1))))


def em_epsilon(rho: float) -> float:
    """The exponential mechanism with parameter eps is eps^2/8-zCDP, so eps = sqrt(8 rho)."""
    return math.sqrt(8.0 * rho)


def utility_factors(m: int, *, q: float, eps: float, sensitivity: float) -> np.ndarray:
    """exp(eps / (2 s) * -|i - q m|) for intervals i = 0..m, scaled so the largest is 1.

    The utility depends on the interval's rank only, not on the data, so one vector
    serves every query of a call.
    """
    distance = np.abs(np.arange(m + 1) - q * m)
    return np.exp(-(eps / (2.0 * sensitivity)) * (distance - distance.min()))


def padded_sorted(rows, *, lo, hi, out=None, inside=False):
    """Each row clipped to [lo, hi], sorted, and padded with lo and hi: the interval edges.

    ``inside=True`` promises the rows already lie in [lo, hi] (a copy replaces the clip);
    ``out`` is an optional (k x (m + 2)) buffer.
    """
    k, m = rows.shape
    edges = np.empty((k, m + 2)) if out is None else out
    if inside:
        edges[:, 1:-1] = rows
    else:
        np.clip(rows, lo, hi, out=edges[:, 1:-1])
    return sort_padded(edges, lo=lo, hi=hi)


def sort_padded(edges, *, lo, hi):
    """:func:`padded_sorted` in place, for rows already written into ``edges[:, 1:-1]``
    (inside [lo, hi]): saves the copy when the rows can be built there."""
    edges[:, 0] = lo
    edges[:, -1] = hi
    edges[:, 1:-1].sort(axis=1)
    return edges


def interval_weights(edges, *, q, eps, sensitivity, columns=None, out=None, factors=None):
    """Unnormalised exponential-mechanism weights of the intervals of each row of ``edges``.

    ``edges`` (k x (m + 2)) are the padded sorted values (:func:`padded_sorted`). Interval
    i = 0..m lies between edges i and i + 1 and has i values below it; its weight is
    max(width_i, 1e-30) * exp(eps / (2 s) * -|i - q m|)  (docs/design.md §5.1). ``columns``
    (>= m + 1) pads the result with zero weights, as the two-level sampler wants; ``out``
    is an optional (k x columns) buffer; ``factors`` the :func:`utility_factors` of these
    parameters if the caller already has them.
    """
    k, m = edges.shape[0], edges.shape[1] - 2
    weights = np.empty((k, columns or m + 1)) if out is None else out
    weights[:, m + 1:] = 0.0
    widths = weights[:, : m + 1]
    np.subtract(edges[:, 1:], edges[:, :-1], out=widths)
    np.maximum(widths, MIN_INTERVAL_WIDTH, out=widths)
    widths *= utility_factors(m, q=q, eps=eps, sensitivity=sensitivity) if factors is None else factors
    return weights


def _sample_indices(weights, size, uniforms):
    """Inverse-CDF sampling of one index per row, in two levels (buckets, then within).

    ``weights`` has a multiple of the bucket size as columns, zero past ``size``. Bucket
    totals locate the bucket, and only that bucket's weights are accumulated.
    """
    k = weights.shape[0]
    n_buckets = weights.shape[1] // _SAMPLE_BLOCK
    buckets = weights.reshape(k, n_buckets, _SAMPLE_BLOCK)
    bucket_cum = np.cumsum(buckets.sum(axis=2), axis=1)
    target = uniforms * bucket_cum[:, -1]
    chosen = np.minimum((bucket_cum <= target[:, None]).sum(axis=1), n_buckets - 1)
    rows = np.arange(k)
    before = np.where(chosen > 0, bucket_cum[rows, chosen - 1], 0.0)
    within_cum = np.cumsum(buckets[rows, chosen], axis=1)
    offset = np.minimum((within_cum <= (target - before)[:, None]).sum(axis=1), _SAMPLE_BLOCK - 1)
    # Rounding between the two levels can point one step past a bucket's last weight.
    return np.minimum(chosen * _SAMPLE_BLOCK + offset, size - 1)


def em_select_sorted(edges, *, q, eps, sensitivity, uniforms, workspace=None):
    """Exponential-mechanism quantile of each row, given its padded sorted values ``edges``.

    ``uniforms`` (2 x k) are the pre-drawn uniforms: one picks the interval, one the
    point inside it.
    """
    k, size = edges.shape[0], edges.shape[1] - 1
    columns = -(-size // _SAMPLE_BLOCK) * _SAMPLE_BLOCK
    workspace = workspace or Workspace()
    out = np.empty(k)
    factors = workspace.computed(
        ("utility_factors", size - 1, q, eps, sensitivity),
        lambda: utility_factors(size - 1, q=q, eps=eps, sensitivity=sensitivity),
    )
    step = block_rows(size)
    for start in range(0, k, step):
        block = slice(start, min(start + step, k))
        block_edges = edges[block]
        weights = interval_weights(
            block_edges, q=q, eps=eps, sensitivity=sensitivity, columns=columns, factors=factors,
            out=workspace.get("weights", (block_edges.shape[0], columns)),
        )
        index = _sample_indices(weights, size, uniforms[0, block])
        rows = np.arange(index.size)
        left, right = block_edges[rows, index], block_edges[rows, index + 1]
        out[block] = left + uniforms[1, block] * (right - left)
    return out


def em_interval_draws(edges, *, q, eps, sensitivity, uniforms):
    """Outputs of the exponential-mechanism quantile on one dataset, one per pair of uniforms.

    ``edges``: the padded sorted values (m + 2,) (:func:`padded_sorted` or
    :func:`~mechanisms._fast.stack.stacked_sorted`); ``uniforms`` (runs x 2): the first picks the
    interval by inverse CDF over :func:`interval_weights`, the second the point inside it
    (docs/design.md §5.1). The weights are the dataset's, computed once; the inverse CDF is the two-level
    search of :func:`em_select_sorted` (buckets of 64 intervals, then within the bucket), with its
    arithmetic, so with the uniforms :func:`exponential_quantile` would draw, the outputs are the
    same bit for bit (the privacy audit's sampler, docs/design.md §5.8).
    """
    edges = np.asarray(edges, dtype=float)[None, :]
    size = edges.shape[1] - 1  # intervals
    columns = -(-size // _SAMPLE_BLOCK) * _SAMPLE_BLOCK
    factors = utility_factors(size - 1, q=q, eps=eps, sensitivity=sensitivity)
    weights = interval_weights(edges, q=q, eps=eps, sensitivity=sensitivity, columns=columns, factors=factors)
    buckets = weights.reshape(1, columns // _SAMPLE_BLOCK, _SAMPLE_BLOCK)
    bucket_cum = np.cumsum(buckets.sum(axis=2), axis=1)[0]
    within_cum = np.cumsum(buckets[0], axis=1)
    target = uniforms[:, 0] * bucket_cum[-1]
    chosen = np.minimum(np.searchsorted(bucket_cum, target, side="right"), bucket_cum.size - 1)
    residual = target - np.where(chosen > 0, bucket_cum[np.maximum(chosen - 1, 0)], 0.0)
    offset = np.empty(chosen.size, dtype=np.int64)
    for bucket in np.unique(chosen):  # at most a few buckets for the small datasets audited
        rows = chosen == bucket
        offset[rows] = np.searchsorted(within_cum[bucket], residual[rows], side="right")
    index = np.minimum(chosen * _SAMPLE_BLOCK + np.minimum(offset, _SAMPLE_BLOCK - 1), size - 1)
    left, right = edges[0, index], edges[0, index + 1]
    return left + uniforms[:, 1] * (right - left)


def em_quantile_rows(rows, *, q, rho, lo, hi, rng, sensitivity=1.0):
    """Exponential-mechanism quantile per row of ``rows`` (k x m); each row costs rho.

    ``sensitivity`` is the utility sensitivity the mechanism is calibrated for: 1 is exact
    under swap neighbours; max(q, 1 - q) reproduces the published code (docs/design.md §5.0).
    """
    uniforms = rng.random((2, rows.shape[0]))
    return em_select_sorted(
        padded_sorted(rows, lo=lo, hi=hi), q=q, eps=em_epsilon(rho), sensitivity=sensitivity, uniforms=uniforms
    )


def count_at_most(sorted_rows, thresholds):
    """Number of entries <= threshold in each sorted row (vectorised bisection).

    The count is built bit by bit, from the highest power of two <= m down: it grows by a step
    where the entry that many places further is still <= the threshold, ceil(log2(m + 1)) probes
    per row without branches. C-contiguous rows are read through one flat index; strided or
    broadcast rows (never copied) by row and column."""
    k, m = sorted_rows.shape
    count = np.zeros(k, dtype=np.int64)
    if sorted_rows.flags.c_contiguous:
        flat, before_row = sorted_rows.reshape(-1), np.arange(k) * m - 1
        def entry(position):  # row i's entry position[i] - 1, for 1 <= position <= m
            return flat.take(before_row + position)
    else:
        rows = np.arange(k)
        def entry(position):
            return sorted_rows[rows, position - 1]
    step = 1 << (m.bit_length() - 1) if m else 0
    while step:
        longer = count + step
        count += step * ((longer <= m) & (entry(np.minimum(longer, m)) <= thresholds))
        step >>= 1
    return count


def binary_search_sorted(sorted_rows, *, target_rank, rho, lo, hi, steps, noise):
    """Private binary search (Huang et al. 2021) on each sorted row; ``noise`` is (steps x k)
    standard normal, drawn up front.

    Each of the T steps counts values <= mid and adds N(0, T / (2 rho)) (the count has
    sensitivity 1 under swap, and T steps of rho / T compose to rho); it goes right if the
    noisy count is <= the target rank. Returns the midpoint of the final interval.
    """
    k = sorted_rows.shape[0]
    left = np.full(k, lo, dtype=float)
    right = np.full(k, hi, dtype=float)
    scale = math.sqrt(steps / (2.0 * rho))
    for step in range(steps):
        mid = (left + right) / 2.0
        noisy = count_at_most(sorted_rows, mid) + scale * noise[step]
        go_right = noisy <= target_rank
        left = np.where(go_right, mid, left)
        right = np.where(go_right, right, mid)
    return (left + right) / 2.0


def search_grid(lo, hi, steps) -> np.ndarray:
    """The 2^T + 1 points g_0 = lo, ..., g_{2^T} = hi that a T-step binary search on [lo, hi]
    can visit (docs/design.md §5.5 cost notes), bit-identical to the midpoints :func:`binary_search_sorted`
    computes: every inner point is (left + right) / 2 of the two points around it, by the same
    recursion, so it is exact even where (left + right) / 2 differs from lo + k (hi - lo) / 2^T."""
    grid = np.empty((1 << steps) + 1)
    grid[0], grid[-1] = lo, hi
    stride = 1 << steps
    while stride > 1:
        half = stride // 2
        grid[half::stride] = (grid[:-1:stride] + grid[stride::stride]) / 2.0
        stride = half
    return grid


def grid_bins(values, grid) -> np.ndarray:
    """The bin of each value on ``grid`` (:func:`search_grid`), right-closed: bin b holds
    grid[b] < v <= grid[b + 1] for 0 < b < 2^T - 1; bin 0 everything <= grid[1] and bin 2^T - 1
    everything > grid[2^T - 1], so a value equal to a midpoint counts as <= it."""
    return np.searchsorted(grid[1:-1], values, side="left")


def cumulative_counts(rows, grid, out=None) -> np.ndarray:
    """Per row of ``rows`` (k x m), the number of its values <= each inner grid point:
    out[i, b] = #{v in rows[i] : v <= grid[b + 1]} for b < 2^T - 1, and out[i, 2^T - 1] = m
    (k x 2^T, int32). The plain version of the compiled histogram of IOME's sparse path."""
    bins = grid.size - 1
    out = np.empty((rows.shape[0], bins), dtype=np.int32) if out is None else out
    for i, row in enumerate(rows):
        np.cumsum(np.bincount(grid_bins(row, grid), minlength=bins), out=out[i])
    return out


def binary_search_counts(cumulative, *, target_rank, rho, lo, hi, steps, noise):
    """:func:`binary_search_sorted` with every count read off ``cumulative`` (k x 2^T, as
    :func:`cumulative_counts` of the values on ``search_grid(lo, hi, steps)``) instead of the
    sorted values. Every midpoint the T steps visit is a grid point, so the counts, the noise,
    the branching and the result are exactly those of the direct search (docs/design.md §5.1, §5.5)."""
    k, bins = cumulative.shape
    if bins != 1 << steps:
        raise ValueError(f"cumulative counts need 2^steps = {1 << steps} columns, got {bins}")
    grid = search_grid(lo, hi, steps)
    left = np.zeros(k, dtype=np.int64)  # grid indices of the interval's ends
    right = np.full(k, bins, dtype=np.int64)
    rows = np.arange(k)
    scale = math.sqrt(steps / (2.0 * rho))
    for step in range(steps):
        mid = (left + right) // 2
        noisy = cumulative[rows, mid - 1] + scale * noise[step]
        go_right = noisy <= target_rank
        left = np.where(go_right, mid, left)
        right = np.where(go_right, right, mid)
    return (grid[left] + grid[right]) / 2.0


def binary_search_rows(rows, *, target_rank, rho, lo, hi, rng, steps):
    """Private binary-search quantile per row of ``rows`` (k x m); each row costs rho."""
    noise = rng.standard_normal((steps, rows.shape[0]))
    return binary_search_sorted(
        np.sort(rows, axis=1), target_rank=target_rank, rho=rho, lo=lo, hi=hi, steps=steps, noise=noise
    )


def _columns_as_rows(x):
    arr = np.asarray(x)
    if arr.ndim not in (1, 2):
        raise ValueError(f"x must be a 1-D or 2-D array, got x.shape={arr.shape}")
    return transposed_copy(check_data(arr[:, None] if arr.ndim == 1 else arr))


def exponential_quantile(x, *, q, rho, bounds, rng, sensitivity=1.0):
    """Private q-quantile of every column of ``x`` with the exponential mechanism (5.1).

    Each column's answer is rho-zCDP under swap neighbours with the default
    ``sensitivity=1`` (eps = sqrt(8 rho)); a 1-D ``x`` is one column. Returns an array of
    one value per column, inside ``bounds``.
    """
    q = check_fraction(q, "q", open_low=False)
    rho = check_rho(rho)
    lo, hi = check_bounds(bounds)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if not math.isfinite(em_epsilon(rho) / (2.0 * sensitivity)):
        raise ValueError(
            f"sensitivity={sensitivity!r} is too small for rho={rho!r}: the exponential mechanism's factor "
            "sqrt(8 rho) / (2 sensitivity) overflows float64"
        )
    rows = _columns_as_rows(x)
    return em_quantile_rows(rows, q=q, rho=rho, lo=lo, hi=hi, rng=check_generator(rng), sensitivity=sensitivity)


def batched_exponential_quantile(x, *, q, rho, bounds, rng, runs, sensitivity=1.0) -> np.ndarray:
    """``runs`` draws of ``exponential_quantile(x, q=q, rho=rho, bounds=bounds, rng=rng,
    sensitivity=sensitivity)`` for a 1-D ``x``, with one vectorised inverse CDF: the same
    mechanism, and the same outputs bit for bit as ``runs`` calls in a row on ``rng`` (each call
    draws its two uniforms as ``rng.random((2, 1))``; here ``rng.random((runs, 2))``)."""
    lo, hi = (float(v) for v in bounds)
    values = np.asarray(x, dtype=float).reshape(1, -1)
    edges = padded_sorted(values, lo=lo, hi=hi)[0]
    return em_interval_draws(edges, q=q, eps=em_epsilon(rho), sensitivity=sensitivity,
                             uniforms=rng.random((runs, 2)))


def binary_search_quantile(x, *, q, rho, bounds, rng, steps=20):
    """Private q-quantile of every column of ``x`` by private binary search (5.1).

    Target rank q m over [lo, hi]; each column's answer is rho-zCDP under swap neighbours.
    """
    q = check_fraction(q, "q", open_low=False)
    rho = check_rho(rho)
    lo, hi = check_bounds(bounds)
    steps = check_search_steps(steps, "steps")
    rows = _columns_as_rows(x)
    check_work_size(8 * steps * rows.shape[0], f"steps={steps!r}",
                    f"the noise of {steps} search steps for {rows.shape[0]} columns")
    return binary_search_rows(
        rows, target_rank=q * rows.shape[1], rho=rho, lo=lo, hi=hi, rng=check_generator(rng), steps=steps
    )


def batched_binary_search_quantile(x, *, q, rho, bounds, rng, runs, steps=20) -> np.ndarray:
    """``runs`` draws of ``binary_search_quantile(x, q=q, rho=rho, bounds=bounds, rng=rng,
    steps=steps)`` for a 1-D ``x``: the same T steps (:func:`binary_search_sorted`) on the one
    sorted row, with the normals ``runs`` calls in a row would draw (each call draws
    ``rng.standard_normal((steps, 1))``; here ``rng.standard_normal((runs, steps))``), so the same
    outputs bit for bit (the privacy audit's sampler, docs/design.md §5.8)."""
    lo, hi = (float(v) for v in bounds)
    values = np.sort(np.asarray(x, dtype=float))
    noise = rng.standard_normal((runs, steps))
    return binary_search_sorted(np.broadcast_to(values, (runs, values.size)), target_rank=q * values.size, rho=rho,
                                lo=lo, hi=hi, steps=steps, noise=noise.T)
