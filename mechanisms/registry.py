"""Names the workflow configs use for the mechanisms, and variants built from them.

A config entry ``PLAN-binsearch: {algorithm: plan_gaussian, quantile: binary_search}``
becomes ``make_mechanism("plan_gaussian", quantile="binary_search")`` (docs/design.md §4). An
algorithm may also be a plug-in, ``"package.module:function"`` or ``"path/to/file.py:function"``
(:mod:`.plugins`): every function here takes it as it takes a registered name.
"""
from __future__ import annotations

import functools
import inspect
from types import MappingProxyType

from . import plugins
from .baselines import empirical_mean, empirical_mean_eps
from .clipped_mean import clipped_mean
from .coinpress import coinpress_mean, coinpress_oracle
from .coinpress_covariance import coinpress_covariance, coinpress_whitened_mean, empirical_covariance
from .iome import iome
from .libraries import diffprivlib_mean, opendp_mean, pydp_mean
from .local import grs_known_var, grs_unknown_var, iome_local
from .plan import coordinate_median, plan_gaussian, plan_noscale, plan_oracle
from .plan_binary import plan_binary
from .plugins import BUDGET_NAMES, CALL_ARGUMENTS, is_plugin, load_plugin
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
    # the sample mean beside mechanisms spending eps (the local model, docs/design.md §5.13)
    "empirical_mean_eps": empirical_mean_eps,
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
    # IOME's clipped mean CM without rotation or shift, and its exact-threshold study (docs/design.md §5.11)
    "clipped_mean": clipped_mean,
    # CoinPress's private covariance (its release is a d x d matrix), the sample covariance, and the
    # MVCRec-MVMRec mean of the IOME paper (docs/design.md §5.12)
    "coinpress_covariance": coinpress_covariance,
    "empirical_covariance": empirical_covariance,
    "coinpress_whitened_mean": coinpress_whitened_mean,
    # the local model (docs/design.md §5.13): the IOME paper's three-round Shifted-CM, (eps, delta)-DP per user
    "iome_local": iome_local,
    # Gaboardi, Rogers and Sheffet's KnownVar and UnkVar, coordinate by coordinate (docs/design.md §5.13)
    "grs_known_var": grs_known_var,
    "grs_unknown_var": grs_unknown_var,
})


def call_arguments(algorithm: str) -> tuple[str, ...]:
    """Which of the engine's arguments (``CALL_ARGUMENTS``: the data, the budget, the universe,
    the randomness, and for the user-level family of docs/design.md §5.7 the user index and
    batching) the algorithm takes (binary mechanisms have no bounds: their universe is {0, 1})."""
    parameters = _parameters(_lookup(algorithm))
    return tuple(name for name in CALL_ARGUMENTS if name in parameters)


def budget_name(algorithm: str) -> str:
    """The budget a mechanism family spends: ``rho`` (zCDP, PLAN and IOME) or ``eps`` (pure
    DP, the user-level mechanisms); its ledger is in the same unit."""
    names = [name for name in BUDGET_NAMES if name in call_arguments(algorithm)]
    if len(names) != 1:
        raise ValueError(f"algorithm {algorithm!r} takes budgets {names}; expected exactly one of {BUDGET_NAMES}")
    return names[0]


def mechanism_options(algorithm: str) -> dict:
    """The options an algorithm accepts besides the data (its first parameter) and the engine's
    arguments, with their defaults (``inspect.Parameter.empty`` where the option is required,
    e.g. ``std`` of plan_oracle). A plug-in's ``**kwargs`` is no option (see :func:`unknown_options`)."""
    parameters = list(_parameters(_lookup(algorithm)).values())
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name: p.default for p in parameters[1:] if p.kind in named and p.name not in CALL_ARGUMENTS}


def unknown_options(algorithm: str, options) -> list[str]:
    """The names among ``options`` that the algorithm does not accept, sorted: those not in
    :func:`mechanism_options`, or for a function with ``**kwargs`` those that name the data or an
    engine argument (the engine passes those itself)."""
    parameters = list(_parameters(_lookup(algorithm)).values())
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return sorted(name for name in options if name in CALL_ARGUMENTS or name == parameters[0].name)
    return sorted(set(options) - set(mechanism_options(algorithm)))


def make_mechanism(algorithm: str, **options):
    """A callable ``f(x, *, rho, bounds, rng, **more)`` with ``options`` fixed. For a plug-in,
    the callable also gives it plain read-only data and checks what it returns
    (:meth:`.plugins.Plugin.mechanism`).

    Raises ValueError naming an unknown algorithm or option, so a bad config fails before
    any data is drawn.
    """
    unknown = unknown_options(algorithm, options)
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r} for algorithm {algorithm!r}; accepted options: "
                         f"{sorted(mechanism_options(algorithm))}")
    if is_plugin(algorithm):
        return load_plugin(algorithm).mechanism(options)
    return functools.partial(REGISTRY[algorithm], **options)


def source_digest(algorithm: str) -> str | None:
    """The SHA-256 of a plug-in's source file (for the cells' fingerprints); None for a
    registered algorithm, whose code is the project's."""
    return plugins.source_digest(algorithm) if is_plugin(algorithm) else None


def plugin_file(algorithm: str) -> str | None:
    """The file a file plug-in names (relative to the working directory); None otherwise."""
    return plugins.plugin_file(algorithm) if is_plugin(algorithm) else None


@functools.cache
def _parameters(function):
    """inspect.signature(function).parameters (read-only), computed once: the config checks ask
    several hundred times, 0.03 s of every Snakefile parse and cell job."""
    return inspect.signature(function).parameters


def _lookup(algorithm: str):
    if is_plugin(algorithm):
        return load_plugin(algorithm).function
    if algorithm not in REGISTRY:
        raise ValueError(f"unknown algorithm {algorithm!r}; known algorithms: {sorted(REGISTRY)}, or a plug-in "
                         "'package.module:function' or 'path/to/file.py:function'")
    return REGISTRY[algorithm]
