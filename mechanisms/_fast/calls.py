"""PrivQuantile calls as PLAN makes them (docs/design.md §5.1): randomness drawn before any blocked
work, then answered from padded sorted rows.

``rule`` is PLAN's quantile rule (:class:`mechanisms.plan.QuantileRule`): ``rule.method`` is
"exponential" (eps = sqrt(8 rho), utility sensitivity ``rule.assumed_sensitivity(q)``, sampled
by regions: :func:`.regions.em_select_regions`) or "binary_search" (``rule.steps`` steps,
:func:`mechanisms.quantiles.binary_search_sorted`).
"""
from __future__ import annotations

import numpy as np

from ..quantiles import binary_search_sorted, em_epsilon, padded_sorted
from .regions import EMDraws, em_select_regions
from .stack import em_select_stack, stack_is_merged


def private_quantile(values, *, q, rho, lo, hi, rule, rng) -> float:
    """The private q-quantile of the 1-D ``values`` (clipped to [lo, hi]) with budget ``rho``,
    by ``rule``; its randomness is drawn from ``rng`` first."""
    draws = draw(rule, rng, 1)
    return float(select(rule, values[None, :], q=q, rho=rho, lo=lo, hi=hi, draws=draws)[0])


def draw(rule, rng: np.random.Generator, queries: int):
    """The randomness of ``queries`` calls."""
    if rule.method == "exponential":
        return EMDraws.draw(rng, queries)
    return rng.standard_normal((rule.steps, queries))


def part(rule, draws, queries):
    """The draws of some of the queries (a slice)."""
    return draws[queries] if rule.method == "exponential" else draws[:, queries]


def select(rule, rows, *, q, rho, lo, hi, draws):
    """The private q-quantile of every row of ``rows`` (clipped to [lo, hi]), rho per row."""
    return select_sorted(rule, padded_sorted(rows, lo=lo, hi=hi), q=q, rho=rho, lo=lo, hi=hi, draws=draws)


def select_sorted(rule, edges, *, q, rho, lo, hi, draws, workspace=None):
    """:func:`select` given the rows' padded sorted values (:func:`mechanisms.quantiles.padded_sorted`)."""
    if rule.method == "exponential":
        return em_select_regions(
            edges, q=q, eps=em_epsilon(rho), sensitivity=rule.assumed_sensitivity(q), draws=draws,
            workspace=workspace,
        )
    return binary_search_sorted(
        edges[:, 1:-1], target_rank=q * (edges.shape[1] - 2), rho=rho, lo=lo, hi=hi, steps=rule.steps, noise=draws
    )


def merges_stack(rule, n: int, *, copies: int, rho: float) -> bool:
    """Whether the median of a stack of ``copies`` x n values needs it merged; if not, it is
    drawn by :func:`select_stack` from the sorted rows."""
    if rule.method != "exponential":
        return True
    return stack_is_merged(n, copies, eps=em_epsilon(rho), sensitivity=rule.assumed_sensitivity(0.5))


def select_stack(rule, sorted_rows, shifts, *, q, rho, lo, hi, draws, workspace):
    """:func:`select` on the rows' stacked copies clip(x + shift, lo, hi), given the rows
    sorted (not clipped), where :func:`merges_stack` is False."""
    return em_select_stack(
        sorted_rows, shifts, lo=lo, hi=hi, q=q, eps=em_epsilon(rho), sensitivity=rule.assumed_sensitivity(q),
        draws=draws, workspace=workspace,
    )
