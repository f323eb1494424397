"""PLAN's per-coordinate quantiles (docs/design.md §5.2 steps 1-3), computed in one blocked pass."""
from __future__ import annotations

import math

import numpy as np

from .._layout import SharedSample, Workspace
from ..quantiles import block_rows, sort_padded
from .calls import draw, merges_stack, part, select_sorted, select_stack
from .pairs import group_pairs, group_sums, stack_members
from .stack import stacked_sorted

_SELECT_BATCH_BYTES = 32 << 20  # rows answered together by one sampler call


def centre_and_variance(x, transposed, *, shape, lo, hi, shifts, rule, rng, centre_rho, variance_rho, groups):
    """Private centre and raw variance of every coordinate (docs/design.md §5.2 steps 1-3).

    What it computes. The quantiles see the rows of ``x`` (n x d, ``shape``) when ``shifts`` is
    (0.0,), else the stack of the copies clip(x + shift, lo, hi), one per shift (published
    accounting, 5.2 step 1). For every coordinate j, with PrivQuantile the call of ``rule``
    (:mod:`.calls`):

    * centre_j = PrivQuantile(rows[:, j], q=0.5) on [lo, hi], budget ``centre_rho`` (step 2);
    * if ``variance_rho`` is not None, variance_j = PrivQuantile(y[:, j], q=0.5) on
      [0, k (hi - lo)^2 / 2] with budget ``variance_rho``, divided by k = ``groups`` (step 3),
      where the rows are shuffled into groups of 2k (a leftover is dropped) and y is, per group,
      the sum over its k pairs (a, b) of (a - b)^2 / 2 (:func:`.pairs.group_pairs`,
      :func:`.pairs.group_sums`).

    Randomness from ``rng``, in this order: the draws of the d centre queries, the shuffle, the
    draws of the d variance queries. Returns (centre, raw variance or None).

    How (none of it changes a result, and none depends on block or batch sizes): the
    coordinates are sorted once, a cache block at a time, from the transposed data
    (``transposed()``, called only if something must be sorted); the samplers answer a batch of
    coordinates per call. The pairs are taken from the sorted values: the shuffle is a uniformly
    random matching of the rows, so this gives the same distribution as the data's order. A
    :class:`SharedSample` keeps the sorted coordinates (padded with lo and hi, not clipped) for
    every PLAN variant, and the merged published stack when it is merged. The stack is merged
    only where that is faster (:func:`.calls.merges_stack`); elsewhere its median is sampled
    without merging it (:func:`.stack.em_select_stack`).
    """
    shared = x if isinstance(x, SharedSample) else None
    n, d = shape
    copies = len(shifts)
    stacked = copies > 1
    merge = stacked and merges_stack(rule, n, copies=copies, rho=centre_rho)
    # the published stack is (x + spread, x, x - spread): kept under its spread
    stack_key, coordinates_key = ("merged_stack", shifts[0], lo, hi), ("sorted_coordinates", lo, hi)
    stack = shared.kept(stack_key) if merge and shared is not None else None
    coordinates, coordinates_record = (None, None)
    if variance_rho is not None or stack is None:
        coordinates, coordinates_record = _recall(shared, coordinates_key, (d, n + 2))
    stack_record = _recall(shared, stack_key, (d, copies * n + 2))[1] if merge and stack is None else None
    xt = transposed() if (variance_rho is not None or stack is None) and coordinates is None else None

    centre_draws = draw(rule, rng, d)
    if variance_rho is not None:
        first, second = group_pairs(rng, copies * n, groups)
        variance_draws = draw(rule, rng, d)
        (first, first_shift), (second, second_shift) = (stack_members(i, n, shifts) for i in (first, second))
        # (a - b)^2 / 2 of values inside [lo, hi] never leaves [0, (hi - lo)^2 / 2]
        variance_hi = groups * (hi - lo) ** 2 / 2.0
    centre = np.empty(d)
    variance = np.empty(d) if variance_rho is not None else None
    centre_space, variance_space = Workspace(), Workspace()
    pairs = first.size // groups if variance_rho is not None else 0
    step = block_rows(copies * n)
    # Rows are sorted a cache block at a time, but answered a batch at a time: the samplers'
    # per-call work is then shared by many rows (about 13x fewer calls at n = 100000).
    batch = max(step, _SELECT_BATCH_BYTES // (8 * (max(copies * n if merge else n, pairs) + 2)))
    for batch_start in range(0, d, batch):
        rows = slice(batch_start, min(batch_start + batch, d))
        count = rows.stop - rows.start
        edges = coordinates[rows] if coordinates is not None else None
        if edges is None and xt is not None:
            edges = coordinates_record[rows] if coordinates_record is not None else centre_space.get(
                "sorted", (count, n + 2))
        stack_edges = None
        if merge:
            stack_edges = stack[rows] if stack is not None else (
                stack_record[rows] if stack_record is not None else centre_space.get("stack", (count, copies * n + 2)))
        sums = variance_space.get("edges", (count, pairs + 2)) if variance_rho is not None else None
        for start in range(0, count, step):
            block = slice(start, min(start + step, count))
            if coordinates is None and xt is not None:
                edges[block, 1:-1] = xt[rows.start + block.start:rows.start + block.stop]
                sort_padded(edges[block], lo=lo, hi=hi)
            if merge and stack is None:
                stacked_sorted(edges[block, 1:-1], shifts, lo=lo, hi=hi, out=stack_edges[block])
            if variance_rho is not None:
                values = edges[block, 1:-1]  # sorted, not clipped
                # Rounding is monotone: if the shifted extremes stay inside, nothing needs clipping.
                inside = lo <= values[:, 0].min() + min(shifts) and values[:, -1].max() + max(shifts) <= hi
                group_sums(values, first, second, groups=groups, first_shift=first_shift, second_shift=second_shift,
                           bounds=None if inside else (lo, hi), out=sums[block, 1:-1], workspace=variance_space)
                sort_padded(sums[block], lo=0.0, hi=variance_hi)
        centre_draws_batch = part(rule, centre_draws, rows)
        if merge:
            centre[rows] = select_sorted(rule, stack_edges, q=0.5, rho=centre_rho, lo=lo, hi=hi,
                                         draws=centre_draws_batch, workspace=centre_space)
        elif stacked:
            centre[rows] = select_stack(rule, edges[:, 1:-1], shifts, q=0.5, rho=centre_rho, lo=lo, hi=hi,
                                        draws=centre_draws_batch, workspace=centre_space)
        else:
            centre[rows] = select_sorted(rule, _clipped(edges, lo=lo, hi=hi, workspace=centre_space), q=0.5,
                                         rho=centre_rho, lo=lo, hi=hi, draws=centre_draws_batch,
                                         workspace=centre_space)
        if variance_rho is not None:
            variance[rows] = select_sorted(
                rule, sums, q=0.5, rho=variance_rho, lo=0.0, hi=variance_hi,
                draws=part(rule, variance_draws, rows), workspace=variance_space,
            ) / groups
    for key, record in ((coordinates_key, coordinates_record), (stack_key, stack_record)):
        if record is not None:
            shared.keep(key, record)
    return centre, variance


def _recall(shared, key, shape):
    """(the array the :class:`SharedSample` ``shared`` keeps under ``key``, else None; if none is
    kept, an empty array of ``shape`` to record it into when it is worth recording
    (:meth:`SharedSample.worth_recording`) and fits, else None). (None, None) without a sample."""
    if shared is None:
        return None, None
    kept = shared.kept(key)
    if kept is not None:
        return kept, None
    worth = shared.worth_recording(key) and shared.has_room(8 * math.prod(shape))
    return None, (shared.buffer(shape) if worth else None)


def _clipped(edges, *, lo, hi, workspace):
    """Padded sorted rows clipped to [lo, hi] (:func:`mechanisms.quantiles.padded_sorted`):
    ``edges`` itself if their ends are inside, else a clipped copy (clipping keeps them sorted)."""
    if edges[:, 1].min() >= lo and edges[:, -2].max() <= hi:
        return edges
    return np.clip(edges, lo, hi, out=workspace.get("clipped", edges.shape))
