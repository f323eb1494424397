"""PLAN, Gaussian instantiation, and its relatives (docs/design.md §5.0, §5.2, §5.3).

Aumüller, Lebeda, Nelson, Pagh, "PLAN: Variance-Aware Private Mean Estimation", Algorithm 1
with the parameters of the published Gaussian figures. Accounting:

* ``accounting="exact"`` (default): swap neighbours, exponential-mechanism sensitivity 1,
  no stacked copies. The ledger sums to rho.
* ``accounting="published"``: reproduces the published code's budget use: the centre and
  variance steps run on three shifted copies of every row with rho / 3 each, and the
  exponential mechanism is calibrated for sensitivity max(q, 1 - q). The ledger records
  what each step really costs, (used rho) * (true sensitivity / assumed sensitivity)^2,
  so it sums to more than rho (about 3.75 rho with the defaults); ``diagnostics["true_rho"]``
  is that sum.

Read top-down: :class:`PlanOptions` (every option, its default and its check, once), the public
mechanisms (each builds the options and calls :func:`run_plan`), :func:`run_plan` (Algorithm 1 as
the numbered steps of docs/design.md §5.2), the steps' formulas in the order of the steps, and
last the checks of a request. The per-coordinate quantiles (steps 1-3) run in
:mod:`mechanisms._fast`, which states what it computes and does it in one blocked pass. The
privacy audit's samplers, PLAN's whole transcript and the batched twins of its steps, are in
:mod:`mechanisms.plan_transcript` (docs/design.md §5.8).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._fast import centre_and_variance, private_quantile
from ._layout import WORK_ARRAY, sample_data, transposed_of
from ._validation import (
    MAX_MAGNITUDE,
    check_bounds,
    check_choice,
    check_data,
    check_fraction,
    check_generator,
    check_positive,
    check_positive_int,
    check_search_steps,
    check_step_budgets,
    check_work_size,
)
from .accounting import UNSPENT, Estimate, LedgerEntry, check_rho, ledger_total

ACCOUNTINGS = ("exact", "published")
QUANTILES = ("exponential", "binary_search")
MODES = ("estimated", "oracle", "noscale")  # how step 3 gets the std: estimated, known, or no scaling at all
TINY = 1e-30  # the floor of Delta, of the norms a clip divides by and of the clip search's upper end
_MIN_BETA = 1e-300


# ------------------------------------------------------------------ the options


@dataclass(frozen=True)
class PlanOptions:
    """PLAN's options, with their defaults (the published Gaussian parameters) and their checks,
    once: every public PLAN mechanism builds one from its keywords and passes it whole.

    ``p``: the l_p error the scaling targets (step 4, step 5's U). ``accounting``: "exact" or
    "published" (the module docstring). ``quantile``: PrivQuantile by the exponential mechanism or
    private binary search of ``search_steps`` steps (docs/design.md §5.1). Step 1's budget split:
    ``pre_share`` of rho for centre and variance, ``centre_share`` of that for the centre,
    ``topk_share`` of the rest for the clip threshold. ``groups``: pairs k per variance statistic
    (step 3), ``wilson_hilferty``: its median-to-mean correction. ``max_std_distance`` and
    ``regularise``: Delta of step 4. ``beta``: step 5's failure probability. ``spread``: the shift of
    the published stack (published accounting only).

    A bad option raises one ValueError naming it when the object is built. Every share here may be
    1 for the centre (all of rho_pre on it); PLAN with estimated variances needs ``centre_share`` < 1,
    which :func:`run_plan` checks with the request.
    """

    p: float = 2.0
    accounting: str = "exact"
    quantile: str = "exponential"
    pre_share: float = 0.25
    centre_share: float = 0.25
    topk_share: float = 0.25
    groups: int = 1
    max_std_distance: float = 2.0
    beta: float = 0.1
    wilson_hilferty: bool = True
    regularise: bool = True
    spread: float = 0.1
    search_steps: int = 20

    def __post_init__(self):
        checked = {
            "groups": check_positive_int(self.groups, "groups"),
            "quantile": check_choice(self.quantile, "quantile", QUANTILES),
            "accounting": check_choice(self.accounting, "accounting", ACCOUNTINGS),
            "search_steps": check_search_steps(self.search_steps, "search_steps"),
            "spread": check_positive(self.spread, "spread"),
            "p": check_positive(self.p, "p"),
            "pre_share": check_fraction(self.pre_share, "pre_share", closed_high=False),
            "centre_share": check_fraction(self.centre_share, "centre_share"),
            "topk_share": check_fraction(self.topk_share, "topk_share", closed_high=False),
            "max_std_distance": check_positive(self.max_std_distance, "max_std_distance"),
            "beta": check_fraction(self.beta, "beta", closed_high=False),
        }
        if checked["beta"] < _MIN_BETA:  # ln(1 / beta) and ln(T / beta) of the clip threshold must stay finite
            raise ValueError(f"beta must be at least {_MIN_BETA:g} (1 / beta overflows float64 below), "
                             f"got beta={self.beta!r}")
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def rule(self) -> QuantileRule:
        """How the PrivQuantile calls are made and what they cost (:class:`QuantileRule`)."""
        return QuantileRule(method=self.quantile, published=self.accounting == "published", steps=self.search_steps)

    @property
    def shifts(self) -> tuple[float, ...]:
        """Step 1: the shifts of the copies of x the centre and variance quantiles see: x itself,
        or under published accounting the stack (x + spread, x, x - spread) (docs/design.md §5.0)."""
        return (self.spread, 0.0, -self.spread) if self.accounting == "published" else (0.0,)


@dataclass(frozen=True)
class QuantileRule:
    """How PLAN's PrivQuantile calls are made (docs/design.md §5.1) and what they truly cost under
    swap neighbours (§5.0). :mod:`mechanisms._fast.calls` makes the calls."""

    method: str  # "exponential" or "binary_search"
    published: bool  # published accounting
    steps: int  # binary-search steps

    def assumed_sensitivity(self, q: float) -> float:
        """The utility sensitivity the call is calibrated for: 1 (swap), or max(q, 1 - q) as published."""
        if self.published and self.method == "exponential":
            return max(q, 1.0 - q)
        return 1.0

    def true_cost(self, used_rho: float, *, q: float, copies: int) -> float:
        """rho spent by a call calibrated for ``assumed_sensitivity`` when one person moves
        the utility (or count) by ``copies``: zCDP cost scales with the sensitivity squared."""
        return used_rho * (copies / self.assumed_sensitivity(q)) ** 2


# ------------------------------------------------------------------ the mechanisms


def plan_gaussian(x, *, rho, bounds, rng, p=2.0, accounting="exact", quantile="exponential", pre_share=0.25,
                  centre_share=0.25, topk_share=0.25, groups=1, max_std_distance=2.0, beta=0.1,
                  wilson_hilferty=True, regularise=True, spread=0.1, search_steps=20) -> Estimate:
    """PLAN for l_p error with privately estimated variances (docs/design.md §5.2, Algorithm 1).

    ``x`` (n x d) with every coordinate in ``bounds=(lo, hi)`` (values outside are clipped
    by the quantile steps; the clipping of step 6 bounds the sensitivity whatever the
    data). Defaults are the published Gaussian parameters: a quarter of rho for centre and
    variance (a quarter of that for the centre), a quarter of the rest for the clip
    threshold, groups k = 1, max_std_distance 2, beta 0.1, Wilson-Hilferty correction and
    regularisation on. ``quantile`` picks the exponential mechanism or private binary search
    (``search_steps`` steps); ``accounting`` is "exact" (rho-zCDP) or "published" (the
    paper's budget use, see the module docstring). ``spread`` only applies to published
    accounting. The options are :class:`PlanOptions`'.
    """
    options = PlanOptions(p=p, accounting=accounting, quantile=quantile, pre_share=pre_share,
                          centre_share=centre_share, topk_share=topk_share, groups=groups,
                          max_std_distance=max_std_distance, beta=beta, wilson_hilferty=wilson_hilferty,
                          regularise=regularise, spread=spread, search_steps=search_steps)
    return run_plan(x, rho=rho, bounds=bounds, rng=rng, options=options)


def plan_noscale(x, *, rho, bounds, rng, accounting="exact", quantile="exponential", pre_share=0.25,
                 topk_share=0.25, beta=0.1, spread=0.1, search_steps=20) -> Estimate:
    """PLAN without scaling (docs/design.md §5.3): all of rho_pre on the centre, b = 1, and the
    clip threshold searched over the whole universe [0, (hi - lo) sqrt(d)]."""
    options = PlanOptions(accounting=accounting, quantile=quantile, pre_share=pre_share, topk_share=topk_share,
                          beta=beta, spread=spread, search_steps=search_steps)
    return run_plan(x, rho=rho, bounds=bounds, rng=rng, options=options, mode="noscale")


def plan_oracle(x, *, rho, bounds, rng, std, p=2.0, accounting="exact", quantile="exponential", pre_share=0.25,
                centre_share=0.25, topk_share=0.25, max_std_distance=2.0, beta=0.1, regularise=True, spread=0.1,
                search_steps=20) -> Estimate:
    """PLAN with known per-coordinate standard deviations ``std`` (docs/design.md §5.3).

    The variance share of rho_pre is left unspent, as published; the ledger records it as
    "unspent", so it still sums to rho under exact accounting.
    """
    options = PlanOptions(p=p, accounting=accounting, quantile=quantile, pre_share=pre_share,
                          centre_share=centre_share, topk_share=topk_share, max_std_distance=max_std_distance,
                          beta=beta, regularise=regularise, spread=spread, search_steps=search_steps)
    return run_plan(x, rho=rho, bounds=bounds, rng=rng, options=options, mode="oracle", std=std)


def coordinate_median(x, *, rho, bounds, rng, budget_share=1.0, accounting="exact", quantile="exponential",
                      spread=0.1, search_steps=20) -> Estimate:
    """Private coordinate-wise median (5.2 step 2 alone) spending ``budget_share * rho``.

    With ``budget_share=0.25, accounting="published"`` it reproduces the published
    "PLAN-NOSCALE" Gaussian curve (docs/design.md §5.3 errata).
    """
    options = PlanOptions(accounting=accounting, quantile=quantile, spread=spread, search_steps=search_steps)
    data, rho, (lo, hi), rng = check_arguments(x, rho=rho, bounds=bounds, rng=rng, options=options)
    budget_share = check_fraction(budget_share, "budget_share")
    d = data.shape[1]
    rule, shifts = options.rule, options.shifts
    copies = len(shifts)
    # Budget: budget_share rho, rho / d per coordinate; the rows as in 5.2 step 1.
    centre_rho = budget_share * rho / d
    check_step_budgets(f"rho={rho!r} with budget_share={budget_share!r} and d={d}", centre=centre_rho / copies)
    # 5.2 step 2: the private median of every coordinate.
    centre, _ = centre_and_variance(
        x, lambda: transposed_of(x, data), shape=data.shape, lo=lo, hi=hi, shifts=shifts, rule=rule, rng=rng,
        centre_rho=centre_rho / copies, variance_rho=None, groups=1,
    )
    ledger = [LedgerEntry("centre", d * rule.true_cost(centre_rho / copies, q=0.5, copies=copies))]
    if budget_share < 1.0:
        ledger.append(LedgerEntry(UNSPENT, (1.0 - budget_share) * rho))
    ledger = tuple(ledger)
    diagnostics = {
        "accounting": accounting,
        "requested_rho": rho,
        "true_rho": ledger[0].rho,
        "ledger_total": ledger_total(ledger),
    }
    return Estimate(mean=centre, ledger=ledger, diagnostics=diagnostics)


# ------------------------------------------------------------------ Algorithm 1


def run_plan(x, *, rho, bounds, rng, options: PlanOptions | None = None, mode="estimated", std=None) -> Estimate:
    """PLAN (docs/design.md §5.2 steps 1-6) with ``options`` (a :class:`PlanOptions`). ``mode``:
    "estimated" (5.2), "oracle" (the known per-coordinate ``std`` replaces step 3) or "noscale" (no
    variance step, b = 1, all of rho_pre on the centre), both 5.3. ``options=None``: the defaults."""
    options = PlanOptions() if options is None else options
    data, rho, (lo, hi), rng, std = check_request(x, rho=rho, bounds=bounds, rng=rng, options=options, mode=mode,
                                                  std=std)
    n, d = data.shape
    rule, shifts = options.rule, options.shifts
    copies = len(shifts)
    xt = transposed_of(x, data)  # first: kept before the sorted coordinates check whether they still fit

    # Step 1: budgets. rho_pre = pre_share rho for centre and variance, rho_pre / d per coordinate,
    # split by centre_share (noscale: all on the centre); the rest, rho_main, for the clip
    # threshold (rho_k, step 5) and the noise (rho_3, step 6).
    centre_rho, variance_rho, rho_k, rho_3 = step_budgets(rho, d=d, options=options, mode=mode)

    # Step 1: the quantiles of steps 2-3 see the rows of x, or under published accounting the
    # stack of ``copies`` shifted copies (``shifts``), each call with 1 / copies of its budget (5.0).
    centre_call_rho, variance_call_rho = centre_rho / copies, variance_rho / copies

    # Steps 2-3: private median of every coordinate, and of its pair statistics (a - b)^2 / 2.
    centre, raw_variance = centre_and_variance(
        x, lambda: xt, shape=(n, d), lo=lo, hi=hi, shifts=shifts, rule=rule, rng=rng, centre_rho=centre_call_rho,
        variance_rho=variance_call_rho if mode == "estimated" else None, groups=options.groups,
    )
    ledger = [LedgerEntry("centre", d * rule.true_cost(centre_call_rho, q=0.5, copies=copies))]

    # Step 3 (end): std = sqrt(var / (1 - 2/(9k))^3); the oracle's std; none without scaling.
    if mode == "estimated":
        if options.wilson_hilferty:
            raw_variance = raw_variance / wilson_hilferty_factor(options.groups)
        std = np.sqrt(raw_variance)
        ledger.append(LedgerEntry("variance", d * rule.true_cost(variance_call_rho, q=0.5, copies=copies)))
    elif mode == "oracle" and variance_rho > 0:
        ledger.append(LedgerEntry(UNSPENT, d * variance_rho))  # published: the oracle leaves it unused

    # Step 4: scale b = Delta^(-2/(p+2)) (Delta^(-1/2) for p = 2) and z = (x - centre) * b.
    scale = np.ones(d) if std is None else coordinate_scale(std, p=options.p, max_std_distance=options.max_std_distance,
                                                            regularise=options.regularise)
    zt = _scaled_rows(x, xt, centre=centre, scale=scale)

    # Step 5: clip threshold C, a private (1 - k)-quantile of the norms ||z_i|| on [0, U].
    norm_hi = norm_search_upper(std, p=options.p, beta=options.beta, universe=(hi - lo) * math.sqrt(d))
    q_norm = 1.0 - clip_threshold_fraction(n=n, hi_minus_lo=hi - lo, rho_k=rho_k, beta=options.beta)
    norms = column_norms(zt)
    clip = private_quantile(norms, q=q_norm, rho=rho_k, lo=0.0, hi=norm_hi, rule=rule, rng=rng)
    ledger.append(LedgerEntry("clip_threshold", rule.true_cost(rho_k, q=q_norm, copies=1)))

    # Step 6: clip every z_i to norm C, average, add N(0, 2 C^2 / rho_3) / n; undo b, add the centre.
    noisy, noise_std, fraction_clipped = gaussian_clipped_mean(zt, clip=clip, rho=rho_3, rng=rng, norms=norms)
    ledger.append(LedgerEntry("gaussian_noise", rho_3))
    mean = noisy / scale + centre

    ledger = tuple(ledger)
    true_rho = ledger_total(ledger) - sum(e.rho for e in ledger if e.step == UNSPENT)
    diagnostics = {
        "accounting": options.accounting,
        "requested_rho": rho,
        "true_rho": true_rho,
        "ledger_total": ledger_total(ledger),
        "clip_threshold": clip,
        "clip_search_upper": norm_hi,
        "fraction_clipped": fraction_clipped,
        "noise_std": noise_std,
        "centre": centre,
        "scale": scale,
    }
    if std is not None:
        diagnostics["std_estimate"] = std
    return Estimate(mean=mean, ledger=ledger, diagnostics=diagnostics)


# ------------------------------------------------------------------ the steps, in order


def step_budgets(rho, *, d, options: PlanOptions, mode="estimated"):
    """5.2 step 1: (centre rho and variance rho per coordinate, rho_k, rho_3). Without scaling all
    of rho_pre goes to the centre (5.3)."""
    centre_share = 1.0 if mode == "noscale" else options.centre_share
    rho_pre = options.pre_share * rho
    rho_main = rho - rho_pre
    rho_k = options.topk_share * rho_main
    return centre_share * rho_pre / d, (1.0 - centre_share) * rho_pre / d, rho_k, rho_main - rho_k


def wilson_hilferty_factor(groups: int) -> float:
    """(1 - 2/(9k))^3: median of chi-square_k / k by Wilson-Hilferty (PLAN Section 7, Appendix D.2).

    A sum of k terms (a - b)^2 / 2 of Gaussian data is sigma^2 chi-square_k, so dividing its
    median by k and by this factor estimates sigma^2 (5.2 step 3).
    """
    return (1.0 - 2.0 / (9.0 * groups)) ** 3


def coordinate_scale(std, *, p, max_std_distance, regularise):
    """5.2 step 4: Delta = max_std_distance * std (floored at 1e-30), plus ||Delta||_1 / d if
    ``regularise``; b = Delta^(-2/(p+2)). ``std`` is (d,), or (runs, d) for one b per run."""
    delta = np.maximum(max_std_distance * std, TINY)
    if regularise:
        delta = delta + delta.sum(axis=-1, keepdims=True) / std.shape[-1]
    return delta ** (-2.0 / (p + 2.0))


def _scaled_rows(x, xt, *, centre, scale):
    """5.2 step 4: z = (x - centre) * b, transposed (d x n): in place in ``xt``, or in the shared
    sample's work array if ``xt`` is its kept (read-only) copy."""
    zt = np.subtract(xt, centre[:, None], out=xt if xt.flags.writeable else x.scratch(WORK_ARRAY, xt.shape))
    zt *= scale[:, None]
    return zt


def norm_search_upper(std, *, p, beta, universe):
    """U of 5.2 step 5: sqrt(ln(max(d, 2)) ln(1/beta) sum_j std_j^(2p/(p+2))) (||std||_1 for
    p = 2) from the raw std of step 3; without scaling (5.3), the whole ``universe``
    (hi - lo) sqrt(d) (Algorithm 1, line 6). Floored at 1e-30."""
    if std is None:
        upper = universe
    else:
        upper = math.sqrt(math.log(max(std.size, 2)) * math.log(1.0 / beta) * np.sum(std ** (2.0 * p / (p + 2.0))))
    return max(upper, TINY)


def clip_threshold_fraction(*, n, hi_minus_lo, rho_k, beta):
    """k of 5.2 step 5: the share of rows allowed above the clip threshold, in (0, 1)."""
    # T = ln(universe width); floored at 1 so that ln(T / beta) stays defined for tiny universes.
    t = max(math.log(hi_minus_lo), 1.0)
    k = (math.sqrt(n) + math.sqrt(t / 2.0 * math.log(t / beta) / rho_k)) / n
    return min(max(k, 1.0 / (2.0 * n)), 1.0 - 1.0 / (2.0 * n))


def gaussian_clipped_mean(zt, *, clip, rho, rng, norms=None):
    """Clip every column of ``zt`` (d x n) to l2 norm ``clip``, average, add Gaussian noise.

    Replacing one column moves the clipped sum by at most 2 C, so the noise on the mean is
    N(0, 2 C^2 / rho) / n per coordinate (5.2 step 6). ``norms``: the columns' norms, if the
    caller has them. Returns (noisy mean, noise std, fraction of columns clipped).
    """
    norms = column_norms(zt) if norms is None else norms
    noise_std = clipped_mean_noise_std(clip=clip, rho=rho, n=zt.shape[1])
    noisy = clipped_mean(zt, clip=clip, norms=norms) + noise_std * rng.standard_normal(zt.shape[0])
    return noisy, noise_std, float(np.mean(norms > clip))


def clipped_mean(zt, *, clip, norms):
    """The mean of the columns of ``zt`` (d x n) clipped to l2 norm ``clip`` (``norms``: theirs)."""
    return zt @ clip_factors(norms, clip) / zt.shape[1]


def clip_factors(norms, clip):
    """min(1, C / ||z_i||): the factor that clips a column of norm ``norms`` to norm ``clip`` (norms
    floored at 1e-30); ``clip`` may be one threshold per row of ``norms`` (as a column)."""
    return np.minimum(1.0, clip / np.maximum(norms, TINY))


def clipped_mean_noise_std(*, clip, rho, n):
    """The Gaussian step's noise std on the mean of n clipped columns: sqrt(2 C^2 / rho) / n."""
    return math.sqrt(2.0 * clip * clip / rho) / n


def column_norms(zt):
    """The l2 norm of every column of ``zt`` (d x n)."""
    return np.sqrt(np.einsum("ij,ij->j", zt, zt))


# ------------------------------------------------------------------ the checks of a request


def check_arguments(x, *, rho, bounds, rng, options: PlanOptions):
    """The data, rho, bounds and rng of a call with ``options``, checked: (data, rho, (lo, hi), rng)."""
    data = check_data(sample_data(x))
    if options.quantile == "binary_search":  # the centre and variance steps draw (steps x d) normals each
        check_work_size(2 * 8 * options.search_steps * data.shape[1], f"search_steps={options.search_steps!r}",
                        f"the noise of {options.search_steps} search steps for each of d={data.shape[1]} coordinates")
    return data, check_rho(rho), check_bounds(bounds), check_generator(rng)


def check_request(x, *, rho, bounds, rng, options: PlanOptions, mode="estimated", std=None):
    """A call of :func:`run_plan`, checked: (data, rho, (lo, hi), rng, std), ``std`` the oracle's
    as float64 (None unless ``mode`` is "oracle"). ValueError unless every step's budget is a normal
    float64 and steps 4-6 stay finite on any data (:func:`_check_ranges`), computed as
    :func:`run_plan` computes them."""
    mode = check_choice(mode, "mode", MODES)
    data, rho, (lo, hi), rng = check_arguments(x, rho=rho, bounds=bounds, rng=rng, options=options)
    n, d = data.shape
    std = _check_std(std, d) if mode == "oracle" else None
    copies = len(options.shifts)
    if mode == "estimated":
        if not options.centre_share < 1.0:  # some budget must be left for the variance step
            raise ValueError(f"centre_share must be in (0, 1) when the variances are estimated (the variance step "
                             f"spends 1 - centre_share of rho_pre), got centre_share={options.centre_share!r}")
        if copies * n < 2 * options.groups:
            raise ValueError(f"x needs at least {2 * options.groups} rows for the variance step with "
                             f"groups={options.groups}, got n={n}")
    centre_rho, variance_rho, rho_k, rho_3 = step_budgets(rho, d=d, options=options, mode=mode)
    shares = {"pre_share": options.pre_share, "topk_share": options.topk_share} | (
        {} if mode == "noscale" else {"centre_share": options.centre_share})
    check_step_budgets(
        f"rho={rho!r} with {', '.join(f'{k}={v!r}' for k, v in shares.items())} and d={d}",
        centre=centre_rho / copies, **({"variance": variance_rho / copies} if mode == "estimated" else {}),
        clip_threshold=rho_k, gaussian_noise=rho_3,
    )
    if mode == "estimated":  # the variance search runs on [0, groups (hi - lo)^2 / 2], then / groups, / factor
        factor = wilson_hilferty_factor(options.groups) if options.wilson_hilferty else 1.0
        std_max = (hi - lo) * math.sqrt(0.5 / factor)
    else:
        std_max = float(np.max(std)) if mode == "oracle" else 0.0
    _check_ranges(mode=mode, lo=lo, hi=hi, d=d, n=n, rho=rho, rho_3=rho_3, p=options.p,
                  beta=options.beta, max_std_distance=options.max_std_distance, std_max=std_max)
    return data, rho, (lo, hi), rng, std


def _check_std(std, d):
    """The oracle's per-coordinate std: d finite values in [0, MAX_MAGNITUDE], as float64."""
    std_arr = np.asarray(std, dtype=np.float64)
    if std_arr.shape != (d,):
        raise ValueError(f"std must have one value per column of x ({d}), got std with shape {std_arr.shape}")
    bad = np.flatnonzero(~np.isfinite(std_arr) | (std_arr < 0))
    if bad.size:
        raise ValueError(f"std must be finite and >= 0, got std[{bad[0]}]={std_arr[bad[0]]}")
    bad = np.flatnonzero(std_arr > MAX_MAGNITUDE)
    if bad.size:
        raise ValueError(f"std must be at most {MAX_MAGNITUDE:g} (as values and bounds: beyond, the scaling overflows "
                         f"float64), got std[{bad[0]}]={std_arr[bad[0]]!r}; rescale the data")
    return std_arr


def _check_ranges(*, mode, lo, hi, d, n, rho, rho_3, p, beta, max_std_distance, std_max):
    """ValueError when steps 4-6 could leave float64 on some data: the clip threshold C is at most
    the search's upper end (noscale: (hi - lo) sqrt(d); else sqrt(ln d ln(1 / beta) sum std^e),
    e = 2p / (p + 2), std <= ``std_max``), step 6 computes its noise std as sqrt(2 C^2 / rho_3),
    and the estimate is centre + (clipped mean + noise) / b with the scale b >=
    (2 max_std_distance std_max)^(-2 / (p + 2)). Checked in logarithms, on the request alone (no
    data), so that every call that passes stays finite and nothing in the mechanism changes."""
    if mode == "noscale":
        log_c, log_inverse_scale, blame = math.log(hi - lo) + 0.5 * math.log(d), 0.0, ""
    else:
        log_std = math.log(max(std_max, TINY))
        # C^2 as the body computes it (finite: std <= 1e100, e < 2), floored as there; ln(1 / beta) may be 0
        squared = math.log(max(d, 2)) * math.log(1.0 / beta) * d * math.exp(2.0 * p / (p + 2.0) * log_std)
        log_c = 0.5 * math.log(max(squared, TINY * TINY))
        log_delta = math.log(2.0) + math.log(max_std_distance) + log_std  # delta + its mean (regularise)
        log_inverse_scale = 2.0 / (p + 2.0) * max(log_delta, math.log(TINY))
        blame = f", p={p!r}, max_std_distance={max_std_distance!r}, beta={beta!r} and std up to {std_max:.3g}"
    log_variance = math.log(2.0) + 2.0 * log_c - math.log(rho_3)  # 2 C^2 / rho_3
    # |estimate - centre| <= (C + 40 noise std) / b, the noise std being sqrt(2 C^2 / rho_3) / n
    log_error = max(log_c, math.log(40.0) + 0.5 * log_variance - math.log(n)) + math.log(2.0) + log_inverse_scale
    parts = {
        "max_std_distance * std (delta)": log_delta if mode != "noscale" else -math.inf,
        "the noise variance 2 C^2 / rho_3 of step 6": log_variance,
        "the estimate": log_error,
    }
    too_large = [f"{name} up to 1e+{value / math.log(10.0):.0f}" for name, value in parts.items()
                 if value > math.log(1e300)]
    if too_large:
        raise ValueError(
            f"rho={rho!r} with bounds=({lo!r}, {hi!r}), d={d}{blame}: {'; '.join(too_large)} would leave float64 "
            f"(the clip threshold C reaches 1e+{log_c / math.log(10.0):.0f}); use a larger rho or rescale the data"
        )
