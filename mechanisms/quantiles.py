"""PrivQuantile (DESIGN.md 5.1): exponential-mechanism quantile and private binary search.

Both are vectorised over columns: one call answers an independent quantile query per
column, each column's answer costing ``rho`` (zCDP). Internally the work runs on a
row-per-query layout (k queries x m values, C-contiguous) in cache-sized blocks; all
randomness is drawn before the blocked loops, so results do not depend on block size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import (
    check_bounds,
    check_data,
    check_fraction,
    check_generator,
    check_positive,
    check_search_steps,
    check_work_size,
)
from ._layout import Workspace, transposed_copy
from .accounting import check_rho

_MAX_BLOCK_ROWS = 32
_BLOCK_BYTES = 5 << 20  # a block's rows stay in cache through sort, weights and sampling (DESIGN.md 8)
_SAMPLE_BLOCK = 64  # intervals per first-level bucket of the two-level sampler
_MIN_WIDTH = 1e-30  # DESIGN.md 5.1: max(width_i, 1e-30) keeps empty intervals selectable


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
    max(width_i, 1e-30) * exp(eps / (2 s) * -|i - q m|)  (DESIGN.md 5.1). ``columns``
    (>= m + 1) pads the result with zero weights, as the two-level sampler wants; ``out``
    is an optional (k x columns) buffer; ``factors`` the :func:`utility_factors` of these
    parameters if the caller already has them.
    """
    k, m = edges.shape[0], edges.shape[1] - 2
    weights = np.empty((k, columns or m + 1)) if out is None else out
    weights[:, m + 1:] = 0.0
    widths = weights[:, : m + 1]
    np.subtract(edges[:, 1:], edges[:, :-1], out=widths)
    np.maximum(widths, _MIN_WIDTH, out=widths)
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


# ---------------------------------------------------------------- exact sampling by regions
#
# Weighing all m + 1 intervals costs a pass over them, and the published stack must be merged
# (sorted) first. When eps / (2 s) is small the utility factor barely changes over many
# consecutive intervals, so the sampler below weighs regions of them by an upper bound (their
# total width times their largest factor), proposes a region from the bounds, weighs only its
# intervals, and accepts the proposal with probability (its true weight) / (its bound)
# (rejection sampling). An accepted interval i has probability proportional to its exact
# weight max(width_i, 1e-30) * factor_i, as in DESIGN.md 5.1; only the work changes.

_ATTEMPTS = 4  # proposals drawn up front per query; a query that needs more draws them from its own seed
_REGION_UTILITY = 1.0  # eps / (2 s) * intervals per region: factors in a region differ by at most e (measured best)
_STACK_REGION_UTILITY = 2.0  # the stack's regions: twice as long, as locating their ends in the shifted copies costs more than rejections (measured)
_MIN_REGION = 16  # with fewer intervals per region, weighing every interval is cheaper
_BOUND_SLACK = 1.0 + 1e-9  # covers the rounding of the summed weights (about 1e-16 per term)
_MIN_STACK_ROW = 3000  # values per copy below which merging the stack is faster than its regions' Python loop
_STACK_BLOCK_ROWS = 256  # rows sampled together: the regions' tables, not the rows, must fit in memory


@dataclass(frozen=True)
class EMDraws:
    """The randomness of k exponential-mechanism queries, drawn before any blocked work:
    ``uniforms`` (attempts x 4 x k: region, acceptance, interval, point) and one ``seeds``
    entry per query for the rare query whose pre-drawn proposals are all rejected."""

    uniforms: np.ndarray
    seeds: np.ndarray

    @classmethod
    def draw(cls, rng: np.random.Generator, queries: int) -> "EMDraws":
        return cls(rng.random((_ATTEMPTS, 4, queries)), rng.integers(0, 2**63 - 1, size=queries))

    def __getitem__(self, queries) -> "EMDraws":
        return EMDraws(self.uniforms[:, :, queries], self.seeds[queries])

    def further_proposal(self, query: int, more: dict) -> np.ndarray:
        """The 4 uniforms of the next proposal of ``query`` once its pre-drawn ones are used up,
        from the query's own generator, kept in ``more``."""
        if query not in more:
            more[query] = np.random.default_rng(int(self.seeds[query]))
        return more[query].random(4)


def region_size(m: int, *, eps: float, sensitivity: float, utility: float = _REGION_UTILITY) -> int:
    """Intervals per region for m values, or 0 if every interval should be weighed: at most
    ``utility`` / (eps / (2 s)) (so a proposal is accepted with probability >= exp(-utility))
    and 4 sqrt(m + 1) (bounds and proposals then cost about the same)."""
    rate = eps / (2.0 * sensitivity)
    size = min(4 * math.isqrt(m + 1), math.floor(utility / rate) if rate > 0 else m + 1)
    return size if size >= _MIN_REGION else 0


def _largest_factors(factors, starts, ends, target):
    """The largest of ``factors[starts:ends]`` for each region (0 if it is empty): the factors
    peak at the interval nearest ``target`` (q m), so it is at one of the two clipped candidates."""
    last = np.maximum(ends - 1, starts)
    top = np.minimum(factors.size - 1, last)
    below = factors[np.clip(math.floor(target), starts, top)]
    above = factors[np.clip(math.ceil(target), starts, top)]
    return np.where(ends > starts, np.maximum(below, above), 0.0)


def _last_positive(weights):
    """Index of each row's last positive entry (rows of ``weights`` with at least one)."""
    return weights.shape[1] - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)


def _pick(cumulative, uniforms, last):
    """Inverse CDF per row: the first entry whose cumulative weight exceeds u * total (rounding
    can point past the last positive weight: clipped to ``last``)."""
    chosen = (cumulative <= (uniforms * cumulative[:, -1])[:, None]).sum(axis=1)
    return np.minimum(chosen, last)


def em_select_regions(edges, *, q, eps, sensitivity, draws, workspace=None):
    """:func:`em_select_sorted` with :class:`EMDraws`: by regions (rejection sampling) when
    eps / (2 s) is small enough (:func:`region_size`), else by weighing every interval. The
    same distribution either way."""
    k, m = edges.shape[0], edges.shape[1] - 2
    size = region_size(m, eps=eps, sensitivity=sensitivity)
    if not size:
        return em_select_sorted(edges, q=q, eps=eps, sensitivity=sensitivity, uniforms=draws.uniforms[0, :2],
                                workspace=workspace)
    factors = _factors(workspace, m, q=q, eps=eps, sensitivity=sensitivity)
    starts = np.arange(0, m + 1, size)
    ends = np.minimum(starts + size, m + 1)
    bounds = (edges[:, ends] - edges[:, starts] + (ends - starts) * _MIN_WIDTH) * _BOUND_SLACK
    bounds *= _largest_factors(factors, starts, ends, q * m)
    cumulative = np.cumsum(bounds, axis=1)
    last_region = _last_positive(bounds)
    columns = np.arange(size + 1)

    def propose(pending, u):
        region = _pick(cumulative[pending], u[0], last_region[pending])
        window = edges[pending[:, None], np.minimum(starts[region][:, None] + columns, m + 1)]
        return _weigh_proposals(window, starts[region], (ends - starts)[region], bounds[pending, region], factors, u)

    return _until_accepted(propose, draws, k)


def _weigh_proposals(window, first, intervals, bounds, factors, u):
    """Accept or reject one proposed region per row and draw a point in it. ``window`` holds
    each region's edges from its first interval (index ``first``) on, ``intervals`` of them,
    anything finite after; ``bounds`` the regions' weight bounds; ``u`` the proposal's
    uniforms (4 x rows). Returns (accepted, point)."""
    columns = np.arange(window.shape[1] - 1)
    index = np.minimum(first[:, None] + columns, factors.size - 1)
    weights = np.maximum(window[:, 1:] - window[:, :-1], _MIN_WIDTH) * factors[index]
    weights[columns >= intervals[:, None]] = 0.0
    cumulative = np.cumsum(weights, axis=1)
    accepted = u[1] * bounds < cumulative[:, -1]
    chosen = _pick(cumulative, u[2], _last_positive(weights))
    rows = np.arange(window.shape[0])
    left, right = window[rows, chosen], window[rows, chosen + 1]
    return accepted, left + u[3] * (right - left)


def _until_accepted(propose, draws, k):
    """Rejection sampling for k queries: ``propose(pending, u)`` makes one proposal for each
    pending query from its uniforms u (4 x pending) and returns (accepted, value); rejected
    queries propose again, from their next pre-drawn uniforms and then from their own seeds."""
    out = np.empty(k)
    pending, attempt, more = np.arange(k), 0, {}
    while pending.size:
        if attempt < draws.uniforms.shape[0]:
            u = draws.uniforms[attempt][:, pending]
        else:
            u = np.stack([draws.further_proposal(query, more) for query in pending], axis=1)
        accepted, values = propose(pending, u)
        out[pending[accepted]] = values[accepted]
        pending = pending[~accepted]
        attempt += 1
    return out


def _factors(workspace, m, *, q, eps, sensitivity):
    workspace = workspace or Workspace()
    return workspace.computed(
        ("utility_factors", m, q, eps, sensitivity), lambda: utility_factors(m, q=q, eps=eps, sensitivity=sensitivity)
    )


def em_select_stack(sorted_rows, shifts, *, lo, hi, q, eps, sensitivity, draws, workspace=None):
    """Exponential-mechanism q-quantile of each row's stack: the copies clip(x + shift, lo, hi)
    of its values x for every shift (the published PLAN code's (x + spread, x, x - spread)),
    padded with lo and hi (DESIGN.md 5.0, 5.2 step 1). ``sorted_rows`` (k x n) hold each row's
    values sorted, not clipped; shifting and clipping keep each copy sorted. The stacked values
    are never merged: regions run between every few values of one copy, the other copies are
    binary-searched for them, and only a proposed region is merged (rejection sampling as in
    :func:`em_select_regions`). Regions need at least 16 values per copy; where they would be
    smaller (:func:`stack_is_merged`), merge the stack with :func:`stacked_sorted` and call
    :func:`em_select_regions`, as PLAN does."""
    workspace = workspace or Workspace()
    k, n = sorted_rows.shape
    copies = len(shifts)
    m = copies * n
    per_copy = _stack_region_per_copy(n, copies, eps=eps, sensitivity=sensitivity)
    if per_copy < _MIN_REGION:
        raise ValueError(f"the stack's regions would hold {per_copy} values per copy (eps={eps}, n={n}), fewer than "
                         f"{_MIN_REGION}: merge the stack (stacked_sorted) and use em_select_regions")
    factors = _factors(workspace, m, q=q, eps=eps, sensitivity=sensitivity)
    picks = np.arange(0, n, per_copy)
    out = np.empty(k)
    for start in range(0, k, _STACK_BLOCK_ROWS):
        block = slice(start, min(start + _STACK_BLOCK_ROWS, k))
        table = StackRegions.build(sorted_rows[block], shifts, picks=picks, lo=lo, hi=hi, factors=factors, target=q * m)
        out[block] = _until_accepted(table.propose, draws[block], block.stop - block.start)
    return out


@dataclass
class StackRegions:
    """The regions of :func:`em_select_stack` for a block of sorted ``rows`` (k x n): region r
    of a row holds the stack's intervals starts[r] .. ends[r] - 1 (indices in its padded merged
    stack), and the weight of those intervals is at most bounds[r]."""

    rows: np.ndarray
    shifts: tuple
    below_by_copy: np.ndarray  # (k, copies, regions + 1): values of each copy before each region
    starts: np.ndarray  # (k, regions)
    ends: np.ndarray
    right: np.ndarray  # (k, regions): each region's last edge
    bounds: np.ndarray  # (k, regions)
    factors: np.ndarray
    lo: float
    hi: float

    @classmethod
    def build(cls, rows, shifts, *, picks, lo, hi, factors, target):
        """Regions that end at the values ``picks`` (sorted positions) of the middle copy."""
        k, n = rows.shape
        copies = len(shifts)
        regions = picks.size + 1
        boundary = np.clip(rows[:, picks] + shifts[copies // 2], lo, hi)
        below_by_copy = np.empty((k, copies, regions + 1), dtype=np.int64)
        below_by_copy[:, :, 0] = 0
        below_by_copy[:, :, -1] = n
        for copy, shift in enumerate(shifts):
            below_by_copy[:, copy, 1:-1] = _count_below(
                rows, shift, boundary, lo=lo, hi=hi, guess=picks if copy == copies // 2 else None
            )
        # Region r >= 1 starts at the first stacked value equal to boundary r - 1; region 0 at lo.
        starts = below_by_copy[:, :, :-1].sum(axis=1) + 1
        starts[:, 0] = 0
        ends = np.empty_like(starts)
        ends[:, :-1] = starts[:, 1:]
        ends[:, -1] = copies * n + 1
        left = np.empty((k, regions))
        left[:, 0], left[:, 1:] = lo, boundary
        right = np.empty((k, regions))
        right[:, :-1], right[:, -1] = boundary, hi
        # Widths add up to right - left; each interval's width is floored at 1e-30.
        bounds = (right - left + (ends - starts) * _MIN_WIDTH) * _BOUND_SLACK
        bounds *= _largest_factors(factors, starts, ends, target)
        return cls(rows, tuple(shifts), below_by_copy, starts, ends, right, bounds, factors, lo, hi)

    def edges(self, pending, region):
        """The edges of ``region`` of each ``pending`` row, padded on the right with its last
        edge (p x w), and the number of intervals each holds."""
        n = self.rows.shape[1]
        copies = len(self.shifts)
        lower = self.below_by_copy[pending[:, None], np.arange(copies), region[:, None]]
        sizes = self.below_by_copy[pending[:, None], np.arange(copies), region[:, None] + 1] - lower
        pieces = []
        for copy, shift in enumerate(self.shifts):
            offsets = np.arange(sizes[:, copy].max())
            values = self.rows[pending[:, None], np.minimum(lower[:, copy:copy + 1] + offsets, n - 1)] + shift
            np.clip(values, self.lo, self.hi, out=values)
            values[offsets >= sizes[:, copy:copy + 1]] = np.inf  # padding: sorts last
            pieces.append(values)
        inner = np.sort(np.concatenate(pieces, axis=1), axis=1)
        intervals = self.ends[pending, region] - self.starts[pending, region]
        first_region = region == 0
        edges = np.empty((pending.size, inner.shape[1] + 2))
        edges[first_region, 0] = self.lo
        edges[first_region, 1:-1] = inner[first_region]
        edges[~first_region, :-2] = inner[~first_region]
        last_edge = self.right[pending, region]
        return np.where(np.arange(edges.shape[1]) >= intervals[:, None], last_edge[:, None], edges), intervals

    def propose(self, pending, u):
        """One proposal per ``pending`` row from its uniforms ``u`` (4 x p): a region drawn by
        its bound, weighed exactly and accepted with probability weight / bound, and a point
        drawn in it. Returns (accepted, point)."""
        cumulative = np.cumsum(self.bounds[pending], axis=1)
        region = _pick(cumulative, u[0], _last_positive(self.bounds[pending]))
        edges, intervals = self.edges(pending, region)
        return _weigh_proposals(edges, self.starts[pending, region], intervals, self.bounds[pending, region],
                                self.factors, u)


def _count_below(rows, shift, values, *, lo, hi, guess=None):
    """#{j : clip(row_j + shift, lo, hi) < v} for each v of ``values`` (k x t, in [lo, hi]) and
    the sorted ``rows`` (k x n). For lo < v <= hi the clip changes nothing, and rounding is
    monotone, so the count is the first j with fl(row_j + shift) >= v: taken from ``guess``
    (for every row) or by searching v - shift in the row, and checked exactly at that index
    (a row is shifted and searched only where a check fails)."""
    k, n = rows.shape
    if guess is None:
        count = np.empty(values.shape, dtype=np.int64)
        for row, target, wanted in zip(rows, count, values - shift):
            target[:] = np.searchsorted(row, wanted, side="left")
    else:
        count = np.broadcast_to(guess, values.shape).copy()
    index = np.arange(k)[:, None]
    reaches = (count == n) | (rows[index, np.minimum(count, n - 1)] + shift >= values)
    before = (count == 0) | (rows[index, np.maximum(count - 1, 0)] + shift < values)
    for row in np.flatnonzero(~(reaches & before).all(axis=1)):
        count[row] = np.searchsorted(rows[row] + shift, values[row], side="left")
    return np.where(values > lo, count, 0)


def stacked_sorted(sorted_rows, shifts, *, lo, hi, out=None):
    """The padded sorted stack of :func:`em_select_stack`, merged: (k x (len(shifts) n + 2))."""
    k, n = sorted_rows.shape
    edges = np.empty((k, len(shifts) * n + 2)) if out is None else out
    for copy, shift in enumerate(shifts):
        np.add(sorted_rows, shift, out=edges[:, 1 + copy * n:1 + (copy + 1) * n])
    np.clip(edges[:, 1:-1], lo, hi, out=edges[:, 1:-1])
    return sort_padded(edges, lo=lo, hi=hi)


def stack_is_merged(n: int, copies: int, *, eps: float, sensitivity: float) -> bool:
    """Whether the stack of ``copies`` x n values should be merged (sorted) rather than sampled
    by :func:`em_select_stack`: when its regions would hold fewer than 16 values per copy (which
    that sampler refuses), or the rows are short (then the regions' per-row work costs more than
    sorting)."""
    return _stack_region_per_copy(n, copies, eps=eps, sensitivity=sensitivity) < _MIN_REGION or n < _MIN_STACK_ROW


def _stack_region_per_copy(n, copies, *, eps, sensitivity):
    """Values of each copy per region of :func:`em_select_stack`."""
    return region_size(copies * n, eps=eps, sensitivity=sensitivity, utility=_STACK_REGION_UTILITY) // copies


def em_quantile_rows(rows, *, q, rho, lo, hi, rng, sensitivity=1.0):
    """Exponential-mechanism quantile per row of ``rows`` (k x m); each row costs rho.

    ``sensitivity`` is the utility sensitivity the mechanism is calibrated for: 1 is exact
    under swap neighbours; max(q, 1 - q) reproduces the published code (DESIGN.md 5.0).
    """
    uniforms = rng.random((2, rows.shape[0]))
    return em_select_sorted(
        padded_sorted(rows, lo=lo, hi=hi), q=q, eps=em_epsilon(rho), sensitivity=sensitivity, uniforms=uniforms
    )


def count_at_most(sorted_rows, thresholds):
    """Number of entries <= threshold in each sorted row (vectorised bisection)."""
    k, m = sorted_rows.shape
    low = np.zeros(k, dtype=np.int64)
    high = np.full(k, m, dtype=np.int64)
    rows = np.arange(k)
    while True:
        active = low < high
        if not active.any():
            return low
        mid = (low + high) // 2
        probe = sorted_rows[rows, np.minimum(mid, m - 1)]
        go_right = active & (probe <= thresholds)
        low = np.where(go_right, mid + 1, low)
        high = np.where(active & ~go_right, mid, high)


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
    can visit (DESIGN.md 5.5 cost notes), bit-identical to the midpoints :func:`binary_search_sorted`
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
    the branching and the result are exactly those of the direct search (DESIGN.md 5.1, 5.5)."""
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
