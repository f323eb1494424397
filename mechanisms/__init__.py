"""Differentially private mean estimation: PLAN, IOME and their building blocks.

Every mechanism is a plain function ``f(x, *, rho, bounds, rng, **options)`` that returns
an :class:`Estimate` with ``.mean``, ``.ledger`` and ``.diagnostics``; budgets are in
rho-zCDP (DESIGN.md sections 4 and 5). ``plan_binary`` takes a sparse binary matrix and no
bounds (its universe is {0, 1}).
"""
from ._layout import SharedSample
from .accounting import (
    Estimate,
    LedgerEntry,
    PureLedgerEntry,
    approx_dp_to_zcdp,
    gaussian_sigma,
    ledger_total,
    split_budget,
    zcdp_to_approx_dp,
)
from .baselines import empirical_mean
from .hadamard import fwht, random_signs, rotate, unrotate
from .iome import iome
from .plan import coordinate_median, gaussian_clipped_mean, plan_gaussian, plan_noscale, plan_oracle
from .plan_binary import plan_binary
from .quantiles import binary_search_quantile, exponential_quantile
from .registry import REGISTRY, call_arguments, make_mechanism, mechanism_options
from .variance import variance_direct, variance_general

__all__ = [
    "REGISTRY",
    "Estimate",
    "LedgerEntry",
    "PureLedgerEntry",
    "SharedSample",
    "approx_dp_to_zcdp",
    "binary_search_quantile",
    "call_arguments",
    "coordinate_median",
    "empirical_mean",
    "exponential_quantile",
    "fwht",
    "gaussian_clipped_mean",
    "gaussian_sigma",
    "iome",
    "ledger_total",
    "make_mechanism",
    "mechanism_options",
    "plan_binary",
    "plan_gaussian",
    "plan_noscale",
    "plan_oracle",
    "random_signs",
    "rotate",
    "split_budget",
    "unrotate",
    "variance_direct",
    "variance_general",
    "zcdp_to_approx_dp",
]
