"""Differentially private mean estimation: PLAN, IOME, user-level clipping and their building blocks.

Every mechanism is a plain function returning an :class:`Estimate` with ``.mean``,
``.ledger`` and ``.diagnostics``. PLAN and IOME are ``f(x, *, rho, bounds, rng, **options)``
with budgets in rho-zCDP (docs/design.md §4, §5; ``plan_binary`` takes a sparse binary
matrix and no bounds, its universe being {0, 1}). The user-level mechanisms of
:mod:`.userlevel` (``laplace``, ``opt_worst_case``, ``akmv``; docs/design.md §5.7) are
``f(samples, *, users, eps, bound, rng, batched=False, average_users=False)`` with budgets in
pure eps-DP: their ledgers hold ``PureLedgerEntry`` items (``Estimate.unit == "eps"``).
:func:`coinpress` (docs/design.md §5.9) is ``f(x, *, rho, centre, radius, rng, **options)``: a prior
ball instead of bounds, rho-zCDP; the registry's :func:`coinpress_mean` and :func:`coinpress_oracle`
take the engine's arguments and the public prior ball and sigma_max a data source may state.
:func:`coinpress_covariance` (docs/design.md §5.12) releases a d x d private covariance (MVCRec);
:func:`coinpress_whitened_mean` is the IOME paper's MVCRec-MVMRec mean built on it.
:func:`opendp_mean`, :func:`diffprivlib_mean` and :func:`pydp_mean` (docs/design.md §5.10) are the
private means of three DP libraries in PLAN's signature, rho-zCDP under replace-one.
:func:`clipped_mean` (docs/design.md §5.11) is IOME's clipped mean CM without its rotation and shift.
The local model (:mod:`.local`, docs/design.md §5.13): :func:`iome_local`, the IOME paper's three-round
Shifted-CM, and GRS's KnownVar and UnkVar, ``f(x, *, eps, bounds, rng, ...)`` with (eps, delta)-DP per
user: their ledgers hold ``ApproxLedgerEntry`` items (``Estimate.unit == "eps"``, ``.delta_total``).
Estimators of one's own enter the registry's functions as plug-ins, ``"package.module:function"``
or ``"path/to/file.py:function"`` (:mod:`.plugins`, docs/design.md §4).
"""
from ._layout import SharedSample
from .accounting import (
    ApproxLedgerEntry,
    Estimate,
    LedgerEntry,
    MechanismRefusal,
    PureLedgerEntry,
    advanced_composition,
    approx_dp_to_zcdp,
    gaussian_sigma,
    ledger_total,
    per_step_budget,
    split_budget,
    zcdp_to_approx_dp,
)
from .baselines import empirical_mean, empirical_mean_eps
from .clipped_mean import batched_clipped_mean, clipped_mean
from .coinpress import (
    CoinPressStep,
    ball_projection,
    coinpress,
    coinpress_budget_shares,
    coinpress_mean,
    coinpress_oracle,
    coinpress_schedule,
    gaussian_tail_radius,
)
from .coinpress_covariance import (
    batched_coinpress_covariance,
    coinpress_covariance,
    coinpress_whitened_mean,
    covariance_schedule,
    empirical_covariance,
)
from .hadamard import fwht, random_signs, rotate, unrotate
from .iome import iome
from .libraries import DENSE_LIMIT_BYTES, diffprivlib_mean, opendp_mean, pydp_mean
from .local import grs_known_var, grs_unknown_var, iome_local
from .plan import coordinate_median, gaussian_clipped_mean, plan_gaussian, plan_noscale, plan_oracle
from .plan_binary import plan_binary
from .plugins import PluginContractError, PluginError, is_plugin
from .quantiles import binary_search_quantile, exponential_quantile
from .registry import (
    BUDGET_NAMES,
    REGISTRY,
    budget_name,
    call_arguments,
    make_mechanism,
    mechanism_options,
    plugin_file,
    source_digest,
    unknown_options,
)
from .scaling import (
    expected_noise_moment,
    moment_optimal_gamma,
    noise_std,
    optimal_noise_moment,
    power_scaling,
    sample_noise,
)
from .userlevel import (
    akmv,
    akmv_statistic,
    annulus_projection,
    clipping_intervals,
    jump_points,
    l1_projection,
    laplace,
    opt_worst_case,
    threshold,
    threshold_weights,
    true_mean,
    worst_case_error,
    worst_case_error_laplace,
    worst_case_error_opt,
)
from .variance import shuffled_groups, std_direct, std_general, variance_direct, variance_general

__all__ = [
    "BUDGET_NAMES",
    "CoinPressStep",
    "DENSE_LIMIT_BYTES",
    "Estimate",
    "LedgerEntry",
    "MechanismRefusal",
    "PluginContractError",
    "PluginError",
    "PureLedgerEntry",
    "REGISTRY",
    "SharedSample",
    "akmv",
    "akmv_statistic",
    "annulus_projection",
    "approx_dp_to_zcdp",
    "ball_projection",
    "batched_clipped_mean",
    "binary_search_quantile",
    "budget_name",
    "call_arguments",
    "clipped_mean",
    "clipping_intervals",
    "coinpress",
    "coinpress_budget_shares",
    "coinpress_mean",
    "coinpress_oracle",
    "coinpress_schedule",
    "coordinate_median",
    "diffprivlib_mean",
    "empirical_mean",
    "empirical_mean_eps",
    "expected_noise_moment",
    "exponential_quantile",
    "fwht",
    "gaussian_clipped_mean",
    "gaussian_sigma",
    "gaussian_tail_radius",
    "iome",
    "is_plugin",
    "jump_points",
    "l1_projection",
    "laplace",
    "ledger_total",
    "make_mechanism",
    "mechanism_options",
    "moment_optimal_gamma",
    "noise_std",
    "opendp_mean",
    "opt_worst_case",
    "optimal_noise_moment",
    "plan_binary",
    "plan_gaussian",
    "plan_noscale",
    "plan_oracle",
    "plugin_file",
    "power_scaling",
    "pydp_mean",
    "random_signs",
    "rotate",
    "sample_noise",
    "shuffled_groups",
    "source_digest",
    "split_budget",
    "std_direct",
    "std_general",
    "threshold",
    "threshold_weights",
    "true_mean",
    "unknown_options",
    "unrotate",
    "variance_direct",
    "variance_general",
    "worst_case_error",
    "worst_case_error_laplace",
    "worst_case_error_opt",
    "zcdp_to_approx_dp",
    # CoinPress's private covariance and the MVCRec-MVMRec mean (docs/design.md §5.12)
    "batched_coinpress_covariance",
    "coinpress_covariance",
    "coinpress_whitened_mean",
    "covariance_schedule",
    "empirical_covariance",
    # the local model (docs/design.md §5.13; its building blocks in mechanisms.local)
    "ApproxLedgerEntry",
    "advanced_composition",
    "grs_known_var",
    "grs_unknown_var",
    "iome_local",
    "per_step_budget",
]
