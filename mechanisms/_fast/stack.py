"""The exponential-mechanism median of the published stack without merging it (docs/design.md §5.0,
§5.2 step 1, §8).

The published PLAN code stacked three shifted copies (x + spread, x, x - spread) of every
coordinate's values, clipped to the universe. :func:`em_select_stack` draws from the
exponential mechanism on that merged stack, by the regions of :mod:`.regions`, without ever
merging it; :func:`stacked_sorted` merges it, for the rows where that is faster
(:func:`stack_is_merged`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._layout import Workspace
from ..quantiles import MIN_INTERVAL_WIDTH, MIN_STACK_ROW, sort_padded
from .regions import (
    BOUND_SLACK,
    MIN_REGION,
    cached_utility_factors,
    inverse_cdf,
    largest_factors,
    last_positive,
    region_size,
    until_accepted,
    weigh_proposals,
)

# the stack's regions: twice as long, as locating their ends in the shifted copies costs more
# than rejections (measured)
_STACK_REGION_UTILITY = 2.0
_STACK_BLOCK_ROWS = 256  # rows sampled together: the regions' tables, not the rows, must fit in memory


def em_select_stack(sorted_rows, shifts, *, lo, hi, q, eps, sensitivity, draws, workspace=None):
    """Exponential-mechanism q-quantile of each row's stack: the copies clip(x + shift, lo, hi)
    of its values x for every shift (the published PLAN code's (x + spread, x, x - spread)),
    padded with lo and hi (docs/design.md §5.0, §5.2 step 1). ``sorted_rows`` (k x n) hold each row's
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
    per_copy = stack_region_per_copy(n, copies, eps=eps, sensitivity=sensitivity)
    if per_copy < MIN_REGION:
        raise ValueError(f"the stack's regions would hold {per_copy} values per copy (eps={eps}, n={n}), fewer than "
                         f"{MIN_REGION}: merge the stack (stacked_sorted) and use em_select_regions")
    factors = cached_utility_factors(workspace, m, q=q, eps=eps, sensitivity=sensitivity)
    picks = np.arange(0, n, per_copy)
    out = np.empty(k)
    for start in range(0, k, _STACK_BLOCK_ROWS):
        block = slice(start, min(start + _STACK_BLOCK_ROWS, k))
        table = StackRegions.build(sorted_rows[block], shifts, picks=picks, lo=lo, hi=hi, factors=factors, target=q * m)
        out[block] = until_accepted(table.propose, draws[block], block.stop - block.start)
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
            below_by_copy[:, copy, 1:-1] = count_below(
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
        bounds = (right - left + (ends - starts) * MIN_INTERVAL_WIDTH) * BOUND_SLACK
        bounds *= largest_factors(factors, starts, ends, target)
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
        region = inverse_cdf(cumulative, u[0], last_positive(self.bounds[pending]))
        edges, intervals = self.edges(pending, region)
        return weigh_proposals(edges, self.starts[pending, region], intervals, self.bounds[pending, region],
                                self.factors, u)


def count_below(rows, shift, values, *, lo, hi, guess=None):
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
    return stack_region_per_copy(n, copies, eps=eps, sensitivity=sensitivity) < MIN_REGION or n < MIN_STACK_ROW


def stack_region_per_copy(n, copies, *, eps, sensitivity):
    """Values of each copy per region of :func:`em_select_stack`."""
    return region_size(copies * n, eps=eps, sensitivity=sensitivity, utility=_STACK_REGION_UTILITY) // copies
