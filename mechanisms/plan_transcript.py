"""PLAN as the privacy audit samples it (docs/design.md §5.2, §5.8): :func:`plan_transcripts` runs
:func:`mechanisms.plan.plan_gaussian` many times at once and keeps everything each run releases
(:class:`PlanTranscript`, its steps' parameters in :class:`PlanSteps`), and the batched twins of two
of its steps, :func:`batched_stacked_median` (the published stacked centre step) and
:func:`batched_gaussian_clipped_mean` (step 6). Each draws what the calls of :mod:`mechanisms.plan`
would draw, in their order; :mod:`mechanisms.audit` holds the statistics the audit computes on them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse

from ._fast.calls import draw, part, select_sorted
from ._fast.regions import region_size
from ._fast.stack import stacked_sorted
from ._layout import SharedSample
from ._validation import check_positive_int
from .accounting import LedgerEntry
from .plan import (
    TINY,
    PlanOptions,
    check_request,
    clip_factors,
    clip_threshold_fraction,
    clipped_mean,
    clipped_mean_noise_std,
    column_norms,
    coordinate_scale,
    step_budgets,
    wilson_hilferty_factor,
)
from .quantiles import em_epsilon, em_interval_draws, sort_padded

_TRANSCRIPT_CHUNK_VALUES = 1 << 21  # about this many stacked values per chunk of runs (each array of it: 16 MiB)


# ------------------------------------------------------------------ the whole transcript, batched


@dataclass(frozen=True)
class PlanSteps:
    """How one run of :func:`~mechanisms.plan.plan_gaussian` on n rows of d coordinates calls its steps (docs/design.md
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
        coordinate's sorted values, as :func:`~mechanisms.plan.plan_gaussian` takes them, with its arithmetic."""
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
        return coordinate_scale(std, p=self.p, max_std_distance=self.max_std_distance, regularise=self.regularise)

    def clip_upper(self, std) -> np.ndarray:
        """Step 5's search upper end U of each run's std (runs x d): (runs,)."""
        return _clip_search_uppers(std, p=self.p, beta=self.beta)

    def noise_std(self, clip) -> np.ndarray:
        """Step 6's noise std on the scaled mean for each run's clip threshold: sqrt(2 C^2 / rho_3) / n."""
        return np.sqrt(2.0 * clip * clip / self.noise_rho) / self.n


@dataclass(frozen=True)
class PlanTranscript:
    """Everything ``runs`` runs of PLAN release (docs/design.md §5.2), one row per run: ``centre``
    (runs x d, step 2), ``variance`` (runs x d, step 3's median divided by the groups k),
    ``std`` (runs x d, its std estimate), ``clip`` (runs,, step 5) and ``mean`` (runs x d, the
    estimate). ``ledger`` is one run's (as :func:`~mechanisms.plan.plan_gaussian`'s), ``steps`` how the run calls
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
    """``runs`` runs of :func:`~mechanisms.plan.plan_gaussian` (exponential-mechanism quantiles) on the dense n x d
    array ``x``, each with everything it releases: the centre, the variance and std estimates,
    the clip threshold and the estimate (docs/design.md §5.2 steps 1-6; the privacy audit's
    sampler, docs/design.md §5.8). Vectorised across runs, ``chunk`` runs at a time (default: about
    2^21 stacked values per chunk, so memory stays bounded): 10^6 runs on n = 100 rows, d = 1 take
    13 s under exact and 23 s under published accounting (medians of 3, 2 shared cores).

    The options are :func:`~mechanisms.plan.plan_gaussian`'s, with its default quantile (the exponential
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
    options = PlanOptions(p=p, accounting=accounting, pre_share=pre_share, centre_share=centre_share,
                          topk_share=topk_share, groups=groups, max_std_distance=max_std_distance, beta=beta,
                          wilson_hilferty=wilson_hilferty, regularise=regularise, spread=spread)
    if isinstance(x, SharedSample) or scipy.sparse.issparse(x):
        raise ValueError(f"plan_transcripts needs x as a dense n x d array, got {type(x).__name__}")
    runs = check_positive_int(runs, "runs")
    data, rho, (lo, hi), rng, _ = check_request(x, rho=rho, bounds=bounds, rng=rng, options=options)
    n, d = data.shape
    rule, shifts, groups = options.rule, options.shifts, options.groups
    copies = len(shifts)
    chunk = max(1, _TRANSCRIPT_CHUNK_VALUES // (copies * n * d)) if chunk is None else check_positive_int(
        chunk, "chunk")

    # Step 1: budgets, and the rows steps 2-3 see (as mechanisms.plan.run_plan).
    centre_rho, variance_rho, rho_k, rho_3 = step_budgets(rho, d=d, options=options)
    centre_call_rho, variance_call_rho = centre_rho / copies, variance_rho / copies
    q_norm = 1.0 - clip_threshold_fraction(n=n, hi_minus_lo=hi - lo, rho_k=rho_k, beta=options.beta)
    steps = PlanSteps(
        n=n, d=d, bounds=(lo, hi), shifts=shifts, groups=groups,
        centre_eps=em_epsilon(centre_call_rho), centre_sensitivity=rule.assumed_sensitivity(0.5),
        variance_eps=em_epsilon(variance_call_rho), variance_sensitivity=rule.assumed_sensitivity(0.5),
        variance_upper=groups * (hi - lo) ** 2 / 2.0,
        variance_divisor=wilson_hilferty_factor(groups) if options.wilson_hilferty else 1.0,
        clip_q=q_norm, clip_eps=em_epsilon(rho_k), clip_sensitivity=rule.assumed_sensitivity(q_norm),
        noise_rho=rho_3, p=options.p, max_std_distance=options.max_std_distance, beta=options.beta,
        regularise=options.regularise,
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
    weights = clip_factors(norms, clip[:, None])
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


# ------------------------------------------------------------------ the batched twins of two steps


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


def batched_gaussian_clipped_mean(zt, *, clip, rho, rng, runs):
    """``runs`` draws of ``gaussian_clipped_mean(zt, clip=clip, rho=rho, rng=rng)[0]`` (runs x d):
    the clipped mean computed once, plus the noise. Each call draws ``rng.standard_normal(d)``,
    here ``rng.standard_normal((runs, d))``: the same draws, so the same outputs bit for bit as
    ``runs`` calls in a row (the privacy audit's sampler, docs/design.md §5.8)."""
    noise_std = clipped_mean_noise_std(clip=clip, rho=rho, n=zt.shape[1])
    return clipped_mean(zt, clip=clip, norms=column_norms(zt)) + noise_std * rng.standard_normal((runs, zt.shape[0]))


# ------------------------------------------------------------------ helpers


def _clip_search_uppers(std, *, p, beta):
    """:func:`mechanisms.plan.norm_search_upper` of every row of ``std`` (runs x d), with its arithmetic."""
    sums = np.sum(std ** (2.0 * p / (p + 2.0)), axis=1)
    return np.maximum(np.sqrt(math.log(max(std.shape[1], 2)) * math.log(1.0 / beta) * sums), TINY)

