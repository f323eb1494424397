"""Exact sampling of the exponential mechanism by regions (docs/design.md §5.1, §8).

Weighing all m + 1 intervals costs a pass over them. When eps / (2 s) is small the utility
factor barely changes over many consecutive intervals, so :func:`em_select_regions` weighs
regions of them by an upper bound (their total width times their largest factor), proposes a
region from the bounds, weighs only its intervals, and accepts the proposal with probability
(its true weight) / (its bound) (rejection sampling). An accepted interval i has probability
proportional to its exact weight max(width_i, 1e-30) * factor_i, as in docs/design.md §5.1; only the
work changes. tests/mechanisms/test_fast_sampling.py checks the distribution against the exact one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._layout import Workspace
from ..quantiles import MIN_INTERVAL_WIDTH, em_select_sorted, utility_factors

_ATTEMPTS = 4  # proposals drawn up front per query; a query that needs more draws them from its own seed
_REGION_UTILITY = 1.0  # eps / (2 s) * intervals per region: factors in a region differ by at most e (measured best)
MIN_REGION = 16  # with fewer intervals per region, weighing every interval is cheaper
BOUND_SLACK = 1.0 + 1e-9  # covers the rounding of the summed weights (about 1e-16 per term)


@dataclass(frozen=True)
class EMDraws:
    """The randomness of k exponential-mechanism queries, drawn before any blocked work:
    ``uniforms`` (attempts x 4 x k: region, acceptance, interval, point) and one ``seeds``
    entry per query for the rare query whose pre-drawn proposals are all rejected."""

    uniforms: np.ndarray
    seeds: np.ndarray

    @classmethod
    def draw(cls, rng: np.random.Generator, queries: int) -> EMDraws:
        return cls(rng.random((_ATTEMPTS, 4, queries)), rng.integers(0, 2**63 - 1, size=queries))

    def __getitem__(self, queries) -> EMDraws:
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
    return size if size >= MIN_REGION else 0


def largest_factors(factors, starts, ends, target):
    """The largest of ``factors[starts:ends]`` for each region (0 if it is empty): the factors
    peak at the interval nearest ``target`` (q m), so it is at one of the two clipped candidates."""
    last = np.maximum(ends - 1, starts)
    top = np.minimum(factors.size - 1, last)
    below = factors[np.clip(math.floor(target), starts, top)]
    above = factors[np.clip(math.ceil(target), starts, top)]
    return np.where(ends > starts, np.maximum(below, above), 0.0)


def last_positive(weights):
    """Index of each row's last positive entry (rows of ``weights`` with at least one)."""
    return weights.shape[1] - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)


def inverse_cdf(cumulative, uniforms, last):
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
    factors = cached_utility_factors(workspace, m, q=q, eps=eps, sensitivity=sensitivity)
    starts = np.arange(0, m + 1, size)
    ends = np.minimum(starts + size, m + 1)
    bounds = (edges[:, ends] - edges[:, starts] + (ends - starts) * MIN_INTERVAL_WIDTH) * BOUND_SLACK
    bounds *= largest_factors(factors, starts, ends, q * m)
    cumulative = np.cumsum(bounds, axis=1)
    last_region = last_positive(bounds)
    columns = np.arange(size + 1)

    def propose(pending, u):
        region = inverse_cdf(cumulative[pending], u[0], last_region[pending])
        window = edges[pending[:, None], np.minimum(starts[region][:, None] + columns, m + 1)]
        return weigh_proposals(window, starts[region], (ends - starts)[region], bounds[pending, region], factors, u)

    return until_accepted(propose, draws, k)


def weigh_proposals(window, first, intervals, bounds, factors, u):
    """Accept or reject one proposed region per row and draw a point in it. ``window`` holds
    each region's edges from its first interval (index ``first``) on, ``intervals`` of them,
    anything finite after; ``bounds`` the regions' weight bounds; ``u`` the proposal's
    uniforms (4 x rows). Returns (accepted, point)."""
    columns = np.arange(window.shape[1] - 1)
    index = np.minimum(first[:, None] + columns, factors.size - 1)
    weights = np.maximum(window[:, 1:] - window[:, :-1], MIN_INTERVAL_WIDTH) * factors[index]
    weights[columns >= intervals[:, None]] = 0.0
    cumulative = np.cumsum(weights, axis=1)
    accepted = u[1] * bounds < cumulative[:, -1]
    chosen = inverse_cdf(cumulative, u[2], last_positive(weights))
    rows = np.arange(window.shape[0])
    left, right = window[rows, chosen], window[rows, chosen + 1]
    return accepted, left + u[3] * (right - left)


def until_accepted(propose, draws, k):
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


def cached_utility_factors(workspace, m, *, q, eps, sensitivity):
    workspace = workspace or Workspace()
    return workspace.computed(
        ("utility_factors", m, q, eps, sensitivity), lambda: utility_factors(m, q=q, eps=eps, sensitivity=sensitivity)
    )
