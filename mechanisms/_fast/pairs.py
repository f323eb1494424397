"""The pair statistics of PLAN's variance step (docs/design.md §5.2 step 3; PLAN Appendix D,
Algorithm 2, steps 3-4), also from the published stack's shifted copies."""
from __future__ import annotations

import numpy as np

from .._layout import Workspace


def stack_members(index, n: int, shifts):
    """Positions ``index`` of the stacked copies x + shift (copy c at c n .. c n + n - 1) as
    (position in x, shift added, or None when there is one unshifted copy)."""
    if len(shifts) == 1 and shifts[0] == 0.0:
        return index, None
    return np.ascontiguousarray(index % n), np.asarray(shifts, dtype=np.float64)[index // n]



def group_pairs(rng, rows: int, groups: int):
    """Algorithm 2, step 3: shuffle ``rows`` row indices into floor(rows / 2k) groups of 2k
    (a leftover is dropped), k consecutive pairs (a, b) per group. Returns the index arrays
    (first, second) of the pairs, group by group."""
    n_groups = rows // (2 * groups)
    pairs = rng.permutation(rows)[: n_groups * 2 * groups].reshape(-1, 2)
    return np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])


def group_sums(rows, first, second, *, groups, first_shift=None, second_shift=None, bounds=None, out=None,
               workspace=None):
    """Algorithm 2, step 4, for every row of ``rows`` (coordinates x values): per group,
    y = sum over its k pairs (a, b) of (a - b)^2 / 2, where a = clip(row[first] + first_shift)
    and b likewise (:func:`stack_members`; no shift if None, no clip unless ``bounds`` =
    (lo, hi)). Values in [lo, hi] give y in [0, k (hi - lo)^2 / 2]. ``rows`` and ``out`` may be
    views whose rows are not adjacent (padded edges); without ``out`` the result may live in
    ``workspace``."""
    workspace = workspace or Workspace()
    width, pairs = rows.shape[0], first.size
    out = workspace.get("sums", (width, pairs // groups)) if out is None else out
    terms = out if groups == 1 else workspace.get("terms", (width, pairs))
    other = workspace.get("second", (pairs,))
    # Row by row: np.take along an axis of a view copies it first. The indices come from
    # group_pairs, so they are in range: mode="clip" spares numpy the buffered copy it makes
    # of ``out`` under the default mode="raise".
    for row, target in zip(rows, terms):
        for values, index, shift in ((target, first, first_shift), (other, second, second_shift)):
            np.take(row, index, out=values, mode="clip")
            if shift is not None:
                values += shift
            if bounds is not None:
                np.clip(values, *bounds, out=values)
        target -= other
    np.square(terms, out=terms)
    if groups > 1:
        terms.reshape(width, -1, groups).sum(axis=2, out=out)
    out *= 0.5
    return out
