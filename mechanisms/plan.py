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

:func:`_plan` is Algorithm 1 as the numbered steps of docs/design.md §5.2. Its per-coordinate
quantiles (steps 1-3) run in :mod:`mechanisms._fast`, which states what it computes and does it
in one blocked pass. :func:`plan_transcripts` runs it many times at once and keeps everything
each run releases (the privacy audit's sampler, docs/design.md §5.8).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse

from ._fast import centre_and_variance, private_quantile
from ._fast.calls import draw, part, select_sorted
from ._fast.regions import region_size
from ._fast.stack import stacked_sorted
from ._layout import WORK_ARRAY, SharedSample, sample_data, transposed_of
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
from .quantiles import em_epsilon, em_interval_draws, sort_padded

ACCOUNTINGS = ("exact", "published")
QUANTILES = ("exponential", "binary_search")
_TINY = 1e-30
_MIN_BETA = 1e-300


def _plan(x, *, rho, bounds, rng, mode, oracle_std, p, accounting, quantile, pre_share, centre_share,
          topk_share, groups, max_std_distance, beta, wilson_hilferty, regularise, spread, search_steps):
    """PLAN (docs/design.md §5.2 steps 1-6). ``mode``: "estimated" (5.2), "oracle" (the known std
    ``oracle_std`` replaces step 3) or "noscale" (no variance step, b = 1), both 5.3."""
    groups = check_positive_int(groups, "groups")
    data, rho, (lo, hi), rng, rule = _check_common(x, rho, bounds, rng, accounting, quantile, search_steps, spread)
    p, pre_share, centre_share, topk_share, max_std_distance, beta = _check_options(
        mode, p=p, pre_share=pre_share, centre_share=centre_share, topk_share=topk_share,
        max_std_distance=max_std_distance, beta=beta)
    n, d = data.shape
    shifts = _stack_shifts(rule, spread)
    copies = len(shifts)
    if mode == "estimated" and copies * n < 2 * groups:
        raise ValueError(f"x needs at least {2 * groups} rows for the variance step with groups={groups}, got n={n}")
    _check_plan_request(mode=mode, rho=rho, lo=lo, hi=hi, n=n, d=d, copies=copies, p=p, pre_share=pre_share,
                        centre_share=centre_share, topk_share=topk_share, groups=groups, beta=beta,
                        max_std_distance=max_std_distance, wilson_hilferty=wilson_hilferty, oracle_std=oracle_std)
    xt = transposed_of(x, data)  # first: kept before the sorted coordinates check whether they still fit

    # Step 1: budgets. rho_pre = pre_share rho for centre and variance, rho_pre / d per coordinate,
    # split by centre_share (noscale: all on the centre); the rest, rho_main, for the clip
    # threshold (rho_k, step 5) and the noise (rho_3, step 6).
    if mode == "noscale":
        centre_share = 1.0
    centre_rho, variance_rho, rho_k, rho_3 = _budgets(rho, d=d, pre_share=pre_share, centre_share=centre_share,
                                                      topk_share=topk_share)

    # Step 1: the quantiles of steps 2-3 see the rows of x, or under published accounting the
    # stack of ``copies`` shifted copies (``shifts``), each call with 1 / copies of its budget (5.0).
    centre_call_rho, variance_call_rho = centre_rho / copies, variance_rho / copies

    # Steps 2-3: private median of every coordinate, and of its pair statistics (a - b)^2 / 2.
    centre, raw_variance = centre_and_variance(
        x, lambda: xt, shape=(n, d), lo=lo, hi=hi, shifts=shifts, rule=rule, rng=rng, centre_rho=centre_call_rho,
        variance_rho=variance_call_rho if mode == "estimated" else None, groups=groups,
    )
    ledger = [LedgerEntry("centre", d * rule.true_cost(centre_call_rho, q=0.5, copies=copies))]

    # Step 3 (end): std = sqrt(var / (1 - 2/(9k))^3); the oracle's std; none without scaling.
    if mode == "estimated":
        if wilson_hilferty:
            raw_variance = raw_variance / wilson_hilferty_factor(groups)
        std = np.sqrt(raw_variance)
        ledger.append(LedgerEntry("variance", d * rule.true_cost(variance_call_rho, q=0.5, copies=copies)))
    elif mode == "oracle":
        std = oracle_std
        if variance_rho > 0:
            ledger.append(LedgerEntry(UNSPENT, d * variance_rho))  # published: the oracle leaves it unused
    else:
        std = None

    # Step 4: scale b = Delta^(-2/(p+2)) (Delta^(-1/2) for p = 2) and z = (x - centre) * b.
    scale = np.ones(d) if std is None else _scale(std, p=p, max_std_distance=max_std_distance, regularise=regularise)
    zt = _scaled_rows(x, xt, centre=centre, scale=scale)

    # Step 5: clip threshold C, a private (1 - k)-quantile of the norms ||z_i|| on [0, U].
    norm_hi = _norm_search_upper(std, p=p, beta=beta, universe=(hi - lo) * math.sqrt(d))
    q_norm = 1.0 - _clip_threshold_fraction(n=n, hi_minus_lo=hi - lo, rho_k=rho_k, beta=beta)
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
        "accounting": accounting,
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
    accounting.
    """
    return _plan(x, rho=rho, bounds=bounds, rng=rng, mode="estimated", oracle_std=None, p=p, accounting=accounting,
                 quantile=quantile, pre_share=pre_share, centre_share=centre_share, topk_share=topk_share,
                 groups=groups, max_std_distance=max_std_distance, beta=beta, wilson_hilferty=wilson_hilferty,
                 regularise=regularise, spread=spread, search_steps=search_steps)


def plan_noscale(x, *, rho, bounds, rng, accounting="exact", quantile="exponential", pre_share=0.25,
                 topk_share=0.25, beta=0.1, spread=0.1, search_steps=20) -> Estimate:
    """PLAN without scaling (docs/design.md §5.3): all of rho_pre on the centre, b = 1, and the
    clip threshold searched over the whole universe [0, (hi - lo) sqrt(d)]."""
    return _plan(x, rho=rho, bounds=bounds, rng=rng, mode="noscale", oracle_std=None, p=2.0, accounting=accounting,
                 quantile=quantile, pre_share=pre_share, centre_share=1.0, topk_share=topk_share, groups=1,
                 max_std_distance=1.0, beta=beta, wilson_hilferty=False, regularise=False, spread=spread,
                 search_steps=search_steps)


def plan_oracle(x, *, rho, bounds, rng, std, p=2.0, accounting="exact", quantile="exponential", pre_share=0.25,
                centre_share=0.25, topk_share=0.25, max_std_distance=2.0, beta=0.1, regularise=True, spread=0.1,
                search_steps=20) -> Estimate:
    """PLAN with known per-coordinate standard deviations ``std`` (docs/design.md §5.3).

    The variance share of rho_pre is left unspent, as published; the ledger records it as
    "unspent", so it still sums to rho under exact accounting.
    """
    data = check_data(sample_data(x))
    std_arr = np.asarray(std, dtype=np.float64)
    if std_arr.shape != (data.shape[1],):
        raise ValueError(f"std must have one value per column of x ({data.shape[1]}), "
                         f"got std with shape {std_arr.shape}")
    bad = np.flatnonzero(~np.isfinite(std_arr) | (std_arr < 0))
    if bad.size:
        raise ValueError(f"std must be finite and >= 0, got std[{bad[0]}]={std_arr[bad[0]]}")
    bad = np.flatnonzero(std_arr > MAX_MAGNITUDE)
    if bad.size:
        raise ValueError(f"std must be at most {MAX_MAGNITUDE:g} (as values and bounds: beyond, the scaling overflows "
                         f"float64), got std[{bad[0]}]={std_arr[bad[0]]!r}; rescale the data")
    return _plan(x, rho=rho, bounds=bounds, rng=rng, mode="oracle", oracle_std=std_arr, p=p,
                 accounting=accounting, quantile=quantile, pre_share=pre_share, centre_share=centre_share,
                 topk_share=topk_share, groups=1, max_std_distance=max_std_distance, beta=beta,
                 wilson_hilferty=False, regularise=regularise, spread=spread, search_steps=search_steps)


def coordinate_median(x, *, rho, bounds, rng, budget_share=1.0, accounting="exact", quantile="exponential",
                      spread=0.1, search_steps=20) -> Estimate:
    """Private coordinate-wise median (5.2 step 2 alone) spending ``budget_share * rho``.

    With ``budget_share=0.25, accounting="published"`` it reproduces the published
    "PLAN-NOSCALE" Gaussian curve (docs/design.md §5.3 errata).
    """
    data, rho, (lo, hi), rng, rule = _check_common(x, rho, bounds, rng, accounting, quantile, search_steps, spread)
    budget_share = check_fraction(budget_share, "budget_share")
    d = data.shape[1]
    # Budget: budget_share rho, rho / d per coordinate; the rows as in 5.2 step 1.
    centre_rho = budget_share * rho / d
    shifts = _stack_shifts(rule, spread)
    copies = len(shifts)
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


# ------------------------------------------------------------------ the whole transcript, batched

_TRANSCRIPT_CHUNK_VALUES = 1 << 21  # about this many stacked values per chunk of runs (each array of it: 16 MiB)


@dataclass(frozen=True)
class PlanSteps:
    """How one run of :func:`plan_gaussian` on n rows of d coordinates calls its steps (docs/design.md
    §5.2), with the options of a :func:`plan_transcripts` call: everything the distributions of its
    releases depend on besides the data (the privacy audit's likelihood ratio, docs/design.md §5.8).

    Every quantile is the exponential mechanism of docs/design.md §5.1 with parameter ``*_eps`` and the
    utility sensitivity ``*_sensitivity`` it is calibrated for (1, or under published accounting
    max(q, 1 - q): not what one person moves, docs/design.md §5.0). The centre (step 2) is the median of
    :meth:`centre_edges` on ``bounds``; the variance (step 3) the median of :meth:`pair_statistics`
    on [0, ``variance_upper``], divided by ``groups``, and std = sqrt(variance / ``variance_divisor``);
    the clip threshold (step 5) the ``clip_q``-quantile of the norms of the scaled rows on
    [0, :meth:`clip_upper`]; the noise of step 6 has std :meth:`noise_std` on the scaled mean.
    """

    n: int
    d: int
    bounds: tuple[float, float]
    shifts: tuple[float, ...]  # the shifted copies steps 2-3 see: (0.0,), or the published stack
    groups: int
    centre_eps: float
    centre_sensitivity: float
    variance_eps: float
    variance_sensitivity: float
    variance_upper: float
    variance_divisor: float
    clip_q: float
    clip_eps: float
    clip_sensitivity: float
    noise_rho: float
    p: float
    max_std_distance: float
    beta: float
    regularise: bool

    def centre_edges(self, data) -> np.ndarray:
        """(d, copies n + 2): per coordinate of ``data`` (n x d) the padded sorted values the centre
        quantile sees (step 1: the rows, or the stacked copies clip(x + shift, lo, hi))."""
        lo, hi = self.bounds
        return stacked_sorted(np.sort(np.asarray(data, dtype=float).T, axis=1), self.shifts, lo=lo, hi=hi)

    def permutations(self, rng, runs: int) -> np.ndarray:
        """(runs, copies n): step 3's shuffle for each of ``runs`` runs, the permutations that
        ``runs`` calls ``rng.permutation(copies n)`` in a row would draw."""
        rows = len(self.shifts) * self.n
        return rng.permuted(np.broadcast_to(np.arange(rows), (runs, rows)), axis=1)

    def pair_statistics(self, data, permutations) -> np.ndarray:
        """(runs, d, pairs / groups): step 3's statistics for each run's shuffle (``permutations``,
        as :meth:`permutations`): per group of k = ``groups`` consecutive pairs the sum of
        (a - b)^2 / 2, with a and b clip(value + shift, lo, hi) of the stacked copies (position i
        of the shuffle is copy i // n of sorted value i % n). The pairs are taken from each
        coordinate's sorted values, as :func:`plan_gaussian` takes them, with its arithmetic."""
        lo, hi = self.bounds
        runs, n, k = permutations.shape[0], self.n, self.groups
        kept = permutations.shape[1] // (2 * k) * 2 * k  # a leftover is dropped
        pairs = permutations[:, :kept].reshape(runs, -1, 2)
        shifts = np.asarray(self.shifts, dtype=float)
        members = [(np.ascontiguousarray(pairs[..., side] % n), shifts[pairs[..., side] // n]) for side in (0, 1)]
        values = np.sort(np.asarray(data, dtype=float).T, axis=1)  # sorted, not clipped
        out = np.empty((runs, self.d, kept // (2 * k)))
        for j in range(self.d):
            (first, first_shift), (second, second_shift) = members
            a, b = values[j][first], values[j][second]
            a += first_shift
            b += second_shift
            np.clip(a, lo, hi, out=a)
            np.clip(b, lo, hi, out=b)
            a -= b
            np.square(a, out=a)
            sums = a.reshape(runs, -1, k).sum(axis=2) if k > 1 else a
            sums *= 0.5
            out[:, j] = sums
        return out

    def scale(self, std) -> np.ndarray:
        """Step 4's scale b of each run's std (runs x d)."""
        return _scale(std, p=self.p, max_std_distance=self.max_std_distance, regularise=self.regularise)

    def clip_upper(self, std) -> np.ndarray:
        """Step 5's search upper end U of each run's std (runs x d): (runs,)."""
        return _norm_search_uppers(std, p=self.p, beta=self.beta)

    def noise_std(self, clip) -> np.ndarray:
        """Step 6's noise std on the scaled mean for each run's clip threshold: sqrt(2 C^2 / rho_3) / n."""
        return np.sqrt(2.0 * clip * clip / self.noise_rho) / self.n


@dataclass(frozen=True)
class PlanTranscript:
    """Everything ``runs`` runs of PLAN release (docs/design.md §5.2), one row per run: ``centre``
    (runs x d, step 2), ``variance`` (runs x d, step 3's median divided by the groups k),
    ``std`` (runs x d, its std estimate), ``clip`` (runs,, step 5) and ``mean`` (runs x d, the
    estimate). ``ledger`` is one run's (as :func:`plan_gaussian`'s), ``steps`` how the run calls
    its steps."""

    centre: np.ndarray
    variance: np.ndarray
    std: np.ndarray
    clip: np.ndarray
    mean: np.ndarray
    ledger: tuple
    steps: PlanSteps

    @property
    def runs(self) -> int:
        return self.clip.shape[0]


def plan_transcripts(x, *, rho, bounds, rng, runs, accounting="exact", chunk=None, p=2.0, pre_share=0.25,
                     centre_share=0.25, topk_share=0.25, groups=1, max_std_distance=2.0, beta=0.1,
                     wilson_hilferty=True, regularise=True, spread=0.1) -> PlanTranscript:
    """``runs`` runs of :func:`plan_gaussian` (exponential-mechanism quantiles) on the dense n x d
    array ``x``, each with everything it releases: the centre, the variance and std estimates,
    the clip threshold and the estimate (docs/design.md §5.2 steps 1-6; the privacy audit's
    sampler, docs/design.md §5.8). Vectorised across runs, ``chunk`` runs at a time (default: about
    2^21 stacked values per chunk, so memory stays bounded): 10^6 runs on n = 100 rows, d = 1 take
    13 s under exact and 23 s under published accounting (medians of 3, 2 shared cores).

    The options are :func:`plan_gaussian`'s, with its default quantile (the exponential
    mechanism; the binary search is not offered). Randomness, chunk by chunk, in plan_gaussian's
    order: the centre quantiles' draws of every run, the shuffles of step 3, the variance
    quantiles' draws, the clip threshold's draws, the noise. A chunk of one run draws exactly what
    one plan_gaussian call draws, so with ``chunk=1`` the transcripts are those of ``runs``
    plan_gaussian calls in a row on ``rng`` (its diagnostics "centre", "std_estimate" and
    "clip_threshold", and its estimate up to the rounding of the clipped sum), wherever
    plan_gaussian merges the published stack (n < 3000; beyond, it samples the same distribution
    without merging). With more runs per chunk each release has plan_gaussian's distribution,
    run by run (tests/mechanisms/test_plan_transcript.py).
    """
    if isinstance(x, SharedSample) or scipy.sparse.issparse(x):
        raise ValueError(f"plan_transcripts needs x as a dense n x d array, got {type(x).__name__}")
    groups = check_positive_int(groups, "groups")
    runs = check_positive_int(runs, "runs")
    data, rho, (lo, hi), rng, rule = _check_common(x, rho, bounds, rng, accounting, "exponential", 20, spread)
    p, pre_share, centre_share, topk_share, max_std_distance, beta = _check_options(
        "estimated", p=p, pre_share=pre_share, centre_share=centre_share, topk_share=topk_share,
        max_std_distance=max_std_distance, beta=beta)
    n, d = data.shape
    shifts = _stack_shifts(rule, spread)
    copies = len(shifts)
    if copies * n < 2 * groups:
        raise ValueError(f"x needs at least {2 * groups} rows for the variance step with groups={groups}, got n={n}")
    _check_plan_request(mode="estimated", rho=rho, lo=lo, hi=hi, n=n, d=d, copies=copies, p=p, pre_share=pre_share,
                        centre_share=centre_share, topk_share=topk_share, groups=groups, beta=beta,
                        max_std_distance=max_std_distance, wilson_hilferty=wilson_hilferty, oracle_std=None)
    chunk = max(1, _TRANSCRIPT_CHUNK_VALUES // (copies * n * d)) if chunk is None else check_positive_int(
        chunk, "chunk")

    # Step 1: budgets, and the rows steps 2-3 see (as _plan).
    centre_rho, variance_rho, rho_k, rho_3 = _budgets(rho, d=d, pre_share=pre_share, centre_share=centre_share,
                                                      topk_share=topk_share)
    centre_call_rho, variance_call_rho = centre_rho / copies, variance_rho / copies
    q_norm = 1.0 - _clip_threshold_fraction(n=n, hi_minus_lo=hi - lo, rho_k=rho_k, beta=beta)
    steps = PlanSteps(
        n=n, d=d, bounds=(lo, hi), shifts=shifts, groups=groups,
        centre_eps=em_epsilon(centre_call_rho), centre_sensitivity=rule.assumed_sensitivity(0.5),
        variance_eps=em_epsilon(variance_call_rho), variance_sensitivity=rule.assumed_sensitivity(0.5),
        variance_upper=groups * (hi - lo) ** 2 / 2.0,
        variance_divisor=wilson_hilferty_factor(groups) if wilson_hilferty else 1.0,
        clip_q=q_norm, clip_eps=em_epsilon(rho_k), clip_sensitivity=rule.assumed_sensitivity(q_norm),
        noise_rho=rho_3, p=p, max_std_distance=max_std_distance, beta=beta, regularise=regularise,
    )
    ledger = (LedgerEntry("centre", d * rule.true_cost(centre_call_rho, q=0.5, copies=copies)),
              LedgerEntry("variance", d * rule.true_cost(variance_call_rho, q=0.5, copies=copies)),
              LedgerEntry("clip_threshold", rule.true_cost(rho_k, q=q_norm, copies=1)),
              LedgerEntry("gaussian_noise", rho_3))
    centre_edges = steps.centre_edges(data)
    xt = np.ascontiguousarray(data.T)
    out = {name: np.empty((runs, d)) for name in ("centre", "variance", "std", "mean")}
    out["clip"] = np.empty(runs)
    for start in range(0, runs, chunk):
        k = min(chunk, runs - start)
        done = _transcript_chunk(data, xt, centre_edges, steps, rule, rng, k, centre_rho=centre_call_rho,
                                 variance_rho=variance_call_rho, rho_k=rho_k)
        for name, values in done.items():
            out[name][start:start + k] = values
    return PlanTranscript(ledger=ledger, steps=steps, **out)


def _transcript_chunk(data, xt, centre_edges, steps, rule, rng, k, *, centre_rho, variance_rho, rho_k):
    """Steps 2-6 of ``k`` runs of :func:`plan_transcripts`, vectorised across the runs."""
    d, (lo, hi) = steps.d, steps.bounds
    queries = np.arange(k * d).reshape(k, d)  # the quantile call of run r and coordinate j
    centre_draws = draw(rule, rng, k * d)
    permutations = steps.permutations(rng, k)
    variance_draws = draw(rule, rng, k * d)
    clip_draws = draw(rule, rng, k)
    noise = rng.standard_normal((k, d))

    # Step 2: the median of every coordinate (the same sorted values in every run).
    centre = np.empty((k, d))
    for j in range(d):
        centre[:, j] = _same_rows_quantile(rule, centre_edges[j], k, q=0.5, rho=centre_rho, lo=lo, hi=hi,
                                           draws=part(rule, centre_draws, queries[:, j]))

    # Step 3: the median of each run's pair statistics; std = sqrt(var / (1 - 2/(9k))^3).
    sums = steps.pair_statistics(data, permutations)
    variance = np.empty((k, d))
    edges = np.empty((k, sums.shape[2] + 2))
    for j in range(d):
        edges[:, 1:-1] = sums[:, j]
        sort_padded(edges, lo=0.0, hi=steps.variance_upper)
        variance[:, j] = select_sorted(rule, edges, q=0.5, rho=variance_rho, lo=0.0, hi=steps.variance_upper,
                                       draws=part(rule, variance_draws, queries[:, j])) / steps.groups
    std = np.sqrt(variance / steps.variance_divisor)

    # Step 4: b and z = (x - centre) * b, per run (runs x d x n).
    scale = steps.scale(std)
    zt = np.subtract(xt[None], centre[:, :, None])
    zt *= scale[:, :, None]
    norms = np.sqrt(np.einsum("rij,rij->rj", zt, zt))

    # Step 5: the clip threshold, the clip_q-quantile of each run's norms on [0, U].
    upper = steps.clip_upper(std)
    edges = np.empty((k, steps.n + 2))
    np.clip(norms, 0.0, upper[:, None], out=edges[:, 1:-1])
    edges[:, 1:-1].sort(axis=1)
    edges[:, 0], edges[:, -1] = 0.0, upper
    clip = select_sorted(rule, edges, q=steps.clip_q, rho=rho_k, lo=0.0, hi=upper, draws=clip_draws)

    # Step 6: the clipped mean plus N(0, 2 C^2 / rho_3) / n; undo b, add the centre.
    weights = np.minimum(1.0, clip[:, None] / np.maximum(norms, _TINY))
    clipped = np.einsum("rjn,rn->rj", zt, weights) / steps.n
    noisy = clipped + steps.noise_std(clip)[:, None] * noise
    mean = noisy / scale + centre
    return {"centre": centre, "variance": variance, "std": std, "clip": clip, "mean": mean}


def _same_rows_quantile(rule, edges, k, *, q, rho, lo, hi, draws):
    """``k`` exponential-mechanism quantiles of the same padded sorted values ``edges`` with
    ``draws``: what :func:`mechanisms._fast.calls.select_sorted` returns for k copies of the row,
    with the interval weights computed once where every interval is weighed."""
    eps, sensitivity = em_epsilon(rho), rule.assumed_sensitivity(q)
    if region_size(edges.size - 2, eps=eps, sensitivity=sensitivity):
        return select_sorted(rule, np.broadcast_to(edges, (k, edges.size)), q=q, rho=rho, lo=lo, hi=hi, draws=draws)
    return em_interval_draws(edges, q=q, eps=eps, sensitivity=sensitivity, uniforms=draws.uniforms[0, :2].T)


# ------------------------------------------------------------------ the steps' helpers


def _budgets(rho, *, d, pre_share, centre_share, topk_share):
    """5.2 step 1: (centre rho and variance rho per coordinate, rho_k, rho_3)."""
    rho_pre = pre_share * rho
    rho_main = rho - rho_pre
    rho_k = topk_share * rho_main
    return centre_share * rho_pre / d, (1.0 - centre_share) * rho_pre / d, rho_k, rho_main - rho_k


@dataclass(frozen=True)
class _QuantileRule:
    """How PLAN's PrivQuantile calls are made (5.1) and what they truly cost under swap
    neighbours (5.0). :mod:`mechanisms._fast.calls` makes the calls."""

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


def batched_stacked_median(x, *, rho, bounds, rng, runs, spread=0.1, sensitivity=0.5) -> np.ndarray:
    """``runs`` draws of the published stacked centre step (docs/design.md §5.0, §5.2 step 1 under
    published accounting) for a 1-D ``x``: the median of the stack (x + spread, x, x - spread)
    clipped to ``bounds`` (3n values), by the exponential mechanism with rho / 3 and the assumed
    sensitivity max(q, 1 - q) = 1/2 (``sensitivity``). The same distribution as
    ``coordinate_median(x[:, None], rho=rho, bounds=bounds, rng=rng, accounting="published").mean``
    (which samples the same interval weights with other uniforms): the privacy audit's sampler
    (docs/design.md §5.8)."""
    lo, hi = (float(v) for v in bounds)
    values = np.sort(np.asarray(x, dtype=float)).reshape(1, -1)
    edges = stacked_sorted(values, (spread, 0.0, -spread), lo=lo, hi=hi)[0]
    return em_interval_draws(edges, q=0.5, eps=em_epsilon(rho / 3.0), sensitivity=sensitivity,
                             uniforms=rng.random((runs, 2)))


def _check_common(x, rho, bounds, rng, accounting, quantile, search_steps, spread):
    data = check_data(sample_data(x))
    rule = _QuantileRule(
        method=check_choice(quantile, "quantile", QUANTILES),
        published=check_choice(accounting, "accounting", ACCOUNTINGS) == "published",
        steps=check_search_steps(search_steps, "search_steps"),
    )
    if rule.method == "binary_search":  # the centre and variance steps draw (steps x d) normals each
        check_work_size(2 * 8 * rule.steps * data.shape[1], f"search_steps={search_steps!r}",
                        f"the noise of {rule.steps} search steps for each of d={data.shape[1]} coordinates")
    check_positive(spread, "spread")
    return data, check_rho(rho), check_bounds(bounds), check_generator(rng), rule


def _check_options(mode, *, p, pre_share, centre_share, topk_share, max_std_distance, beta):
    """:func:`_plan`'s options, checked: (p, pre_share, centre_share, topk_share, max_std_distance, beta)."""
    p = check_positive(p, "p")
    pre_share = check_fraction(pre_share, "pre_share", closed_high=False)
    # PLAN with estimated variances needs some budget left for the variance step.
    centre_share = check_fraction(centre_share, "centre_share", closed_high=mode != "estimated")
    topk_share = check_fraction(topk_share, "topk_share", closed_high=False)
    max_std_distance = check_positive(max_std_distance, "max_std_distance")
    beta = check_fraction(beta, "beta", closed_high=False)
    if beta < _MIN_BETA:  # ln(1 / beta) and ln(T / beta) of the clip threshold must stay finite
        raise ValueError(f"beta must be at least {_MIN_BETA:g} (1 / beta overflows float64 below), got beta={beta!r}")
    return p, pre_share, centre_share, topk_share, max_std_distance, beta


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
        log_std = math.log(max(std_max, _TINY))
        # C^2 as the body computes it (finite: std <= 1e100, e < 2), floored as there; ln(1 / beta) may be 0
        squared = math.log(max(d, 2)) * math.log(1.0 / beta) * d * math.exp(2.0 * p / (p + 2.0) * log_std)
        log_c = 0.5 * math.log(max(squared, _TINY * _TINY))
        log_delta = math.log(2.0) + math.log(max_std_distance) + log_std  # delta + its mean (regularise)
        log_inverse_scale = 2.0 / (p + 2.0) * max(log_delta, math.log(_TINY))
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


def _check_plan_request(*, mode, rho, lo, hi, n, d, copies, p, pre_share, centre_share, topk_share, groups, beta,
                        max_std_distance, wilson_hilferty, oracle_std):
    """ValueError unless every step's budget is a normal float64 and steps 4-6 stay finite on
    any data (:func:`_check_ranges`); computed as the body of :func:`_plan` does."""
    rho_pre, rho_main = pre_share * rho, rho - pre_share * rho
    shares = {"pre_share": pre_share, "topk_share": topk_share} | ({} if mode == "noscale" else {
        "centre_share": centre_share})
    check_step_budgets(
        f"rho={rho!r} with {', '.join(f'{k}={v!r}' for k, v in shares.items())} and d={d}",
        centre=(1.0 if mode == "noscale" else centre_share) * rho_pre / d / copies,
        **({"variance": (1.0 - centre_share) * rho_pre / d / copies} if mode == "estimated" else {}),
        clip_threshold=topk_share * rho_main, gaussian_noise=rho_main - topk_share * rho_main,
    )
    if mode == "estimated":  # the variance search runs on [0, groups (hi - lo)^2 / 2], then / groups, / factor
        std_max = (hi - lo) * math.sqrt(0.5 / (wilson_hilferty_factor(groups) if wilson_hilferty else 1.0))
    else:
        std_max = float(np.max(oracle_std)) if mode == "oracle" else 0.0
    _check_ranges(mode=mode, lo=lo, hi=hi, d=d, n=n, rho=rho, rho_3=rho_main - topk_share * rho_main, p=p, beta=beta,
                  max_std_distance=max_std_distance, std_max=std_max)


def _stack_shifts(rule, spread):
    """5.2 step 1: the shifts of the copies of x the centre and variance quantiles see: x
    itself, or under published accounting the stack (x + spread, x, x - spread) (5.0)."""
    return (spread, 0.0, -spread) if rule.published else (0.0,)


def wilson_hilferty_factor(groups: int) -> float:
    """(1 - 2/(9k))^3: median of chi-square_k / k by Wilson-Hilferty (PLAN Section 7, Appendix D.2).

    A sum of k terms (a - b)^2 / 2 of Gaussian data is sigma^2 chi-square_k, so dividing its
    median by k and by this factor estimates sigma^2 (5.2 step 3).
    """
    return (1.0 - 2.0 / (9.0 * groups)) ** 3


def _scale(std, *, p, max_std_distance, regularise):
    """5.2 step 4: Delta = max_std_distance * std (floored at 1e-30), plus ||Delta||_1 / d if
    ``regularise``; b = Delta^(-2/(p+2)). ``std`` is (d,), or (runs, d) for one b per run."""
    delta = np.maximum(max_std_distance * std, _TINY)
    if regularise:
        delta = delta + delta.sum(axis=-1, keepdims=True) / std.shape[-1]
    return delta ** (-2.0 / (p + 2.0))


def _scaled_rows(x, xt, *, centre, scale):
    """5.2 step 4: z = (x - centre) * b, transposed (d x n): in place in ``xt``, or in the shared
    sample's work array if ``xt`` is its kept (read-only) copy."""
    zt = np.subtract(xt, centre[:, None], out=xt if xt.flags.writeable else x.scratch(WORK_ARRAY, xt.shape))
    zt *= scale[:, None]
    return zt


def _norm_search_upper(std, *, p, beta, universe):
    """U of 5.2 step 5: sqrt(ln(max(d, 2)) ln(1/beta) sum_j std_j^(2p/(p+2))) (||std||_1 for
    p = 2) from the raw std of step 3; without scaling (5.3), the whole ``universe``
    (hi - lo) sqrt(d) (Algorithm 1, line 6). Floored at 1e-30."""
    if std is None:
        upper = universe
    else:
        upper = math.sqrt(math.log(max(std.size, 2)) * math.log(1.0 / beta) * np.sum(std ** (2.0 * p / (p + 2.0))))
    return max(upper, _TINY)


def _norm_search_uppers(std, *, p, beta):
    """:func:`_norm_search_upper` of every row of ``std`` (runs x d), with its arithmetic."""
    sums = np.sum(std ** (2.0 * p / (p + 2.0)), axis=1)
    return np.maximum(np.sqrt(math.log(max(std.shape[1], 2)) * math.log(1.0 / beta) * sums), _TINY)


def _clip_threshold_fraction(*, n, hi_minus_lo, rho_k, beta):
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


def batched_gaussian_clipped_mean(zt, *, clip, rho, rng, runs):
    """``runs`` draws of ``gaussian_clipped_mean(zt, clip=clip, rho=rho, rng=rng)[0]`` (runs x d):
    the clipped mean computed once, plus the noise. Each call draws ``rng.standard_normal(d)``,
    here ``rng.standard_normal((runs, d))``: the same draws, so the same outputs bit for bit as
    ``runs`` calls in a row (the privacy audit's sampler, docs/design.md §5.8)."""
    noise_std = clipped_mean_noise_std(clip=clip, rho=rho, n=zt.shape[1])
    return clipped_mean(zt, clip=clip, norms=column_norms(zt)) + noise_std * rng.standard_normal((runs, zt.shape[0]))


def clipped_mean(zt, *, clip, norms):
    """The mean of the columns of ``zt`` (d x n) clipped to l2 norm ``clip`` (``norms``: theirs)."""
    weights = np.minimum(1.0, clip / np.maximum(norms, _TINY))
    return zt @ weights / zt.shape[1]


def clipped_mean_noise_std(*, clip, rho, n):
    """The Gaussian step's noise std on the mean of n clipped columns: sqrt(2 C^2 / rho) / n."""
    return math.sqrt(2.0 * clip * clip / rho) / n


def column_norms(zt):
    """The l2 norm of every column of ``zt`` (d x n)."""
    return np.sqrt(np.einsum("ij,ij->j", zt, zt))
