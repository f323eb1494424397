"""Names the workflow configs use for the mechanisms, and variants built from them.

A config entry ``PLAN-binsearch: {algorithm: plan_gaussian, quantile: binary_search}``
becomes ``make_mechanism("plan_gaussian", quantile="binary_search")`` (docs/design.md §4).
"""
from __future__ import annotations

import functools
import inspect
from types import MappingProxyType

from .baselines import empirical_mean
from .coinpress import coinpress_mean, coinpress_oracle
from .iome import iome
from .libraries import diffprivlib_mean, opendp_mean, pydp_mean
from .plan import coordinate_median, plan_gaussian, plan_noscale, plan_oracle
from .plan_binary import plan_binary
from .userlevel import akmv, laplace, opt_worst_case
from .variance import std_direct, std_general, variance_direct, variance_general

REGISTRY = MappingProxyType({
    "plan_gaussian": plan_gaussian,
    "plan_noscale": plan_noscale,
    "plan_oracle": plan_oracle,
    "coordinate_median": coordinate_median,
    "iome": iome,
    "plan_binary": plan_binary,
    "empirical_mean": empirical_mean,
    "variance_direct": variance_direct,
    "variance_general": variance_general,
    # the authors' Table 2 standard-deviation estimators (PLAN Appendix D.2)
    "std_direct": std_direct,
    "std_general": std_general,
    # user-level clipping, pure eps-DP (docs/design.md §5.7)
    "laplace": laplace,
    "opt_worst_case": opt_worst_case,
    "akmv": akmv,
    # the private means of three DP libraries, rho-zCDP under replace-one (docs/design.md §5.10)
    "opendp_mean": opendp_mean,
    "diffprivlib_mean": diffprivlib_mean,
    "pydp_mean": pydp_mean,
    # CoinPress with a prior ball and covariance from public knowledge, and its oracle (docs/design.md §5.9)
    "coinpress_mean": coinpress_mean,
    "coinpress_oracle": coinpress_oracle,
})

# What the engine passes: the data, the budget (zCDP rho or pure-DP eps), the universe, the
# randomness, for the user-level family (docs/design.md §5.7) the user index and batching, and the
# public knowledge a data source may state beyond the universe (CoinPress's prior ball and
# sigma_max, docs/design.md §5.9).
_CALL_ARGUMENTS = ("x", "samples", "rho", "eps", "bounds", "bound", "users", "rng", "batched", "prior_ball",
                   "max_std")
BUDGET_NAMES = ("rho", "eps")


def call_arguments(algorithm: str) -> tuple[str, ...]:
    """Which of the engine's arguments the algorithm takes (binary mechanisms have no bounds:
    their universe is {0, 1})."""
    parameters = inspect.signature(_lookup(algorithm)).parameters
    return tuple(name for name in _CALL_ARGUMENTS if name in parameters)


def budget_name(algorithm: str) -> str:
    """The budget a mechanism family spends: ``rho`` (zCDP, PLAN and IOME) or ``eps`` (pure
    DP, the user-level mechanisms); its ledger is in the same unit."""
    names = [name for name in BUDGET_NAMES if name in call_arguments(algorithm)]
    if len(names) != 1:
        raise ValueError(f"algorithm {algorithm!r} takes budgets {names}; expected exactly one of {BUDGET_NAMES}")
    return names[0]


def mechanism_options(algorithm: str) -> dict:
    """The options an algorithm accepts besides the engine's arguments, with their defaults
    (``inspect.Parameter.empty`` where the option is required, e.g. ``std`` of plan_oracle)."""
    function = _lookup(algorithm)
    return {
        name: parameter.default
        for name, parameter in inspect.signature(function).parameters.items()
        if name not in _CALL_ARGUMENTS
    }


def make_mechanism(algorithm: str, **options):
    """A callable ``f(x, *, rho, bounds, rng, **more)`` with ``options`` fixed.

    Raises ValueError naming an unknown algorithm or option, so a bad config fails before
    any data is drawn.
    """
    accepted = mechanism_options(algorithm)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(
            f"unknown option {unknown[0]!r} for algorithm {algorithm!r}; accepted options: {sorted(accepted)}"
        )
    return functools.partial(REGISTRY[algorithm], **options)


def _lookup(algorithm: str):
    if algorithm not in REGISTRY:
        raise ValueError(f"unknown algorithm {algorithm!r}; known algorithms: {sorted(REGISTRY)}")
    return REGISTRY[algorithm]
