"""CM: the clipped mean of IOME Section 3.1 with the private clipping threshold of its Section
3.2 (Huang, Liang, Yi 2021, Theorem 3.2), as the IOME authors' experiments ran it
(docs/design.md §5.11); and the non-private exact-threshold clipping study of their Figure 9.

No rotation and no shift: the rows are clipped around the origin, which is what makes CM depend
on where the data lie (IOME Section 6.1, Figures 1 and 2) and what the shifted estimator of
Section 3.3 (:func:`mechanisms.iome`, docs/design.md §5.5) removes.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.sparse

from ._layout import sample_data
from ._validation import (
    check_bounds,
    check_choice,
    check_data,
    check_fraction,
    check_generator,
    check_positive,
    check_positive_int,
    check_search_steps,
    check_sparse,
    check_step_budgets,
    check_work_size,
)
from .accounting import Estimate, LedgerEntry, check_rho, ledger_total
from .baselines import NON_PRIVATE
from .quantiles import binary_search_sorted

THRESHOLDS = ("private", "exact")
# Threshold draws and rows per chunk of batched_clipped_mean (runs x n weights): a chunk's work
# arrays of 2 MiB stay in cache, as batched_iome's (mechanisms.iome.CHUNK_VALUES).
CHUNK_VALUES = 1 << 18


def clipped_mean(x, *, rho, bounds, rng, clip_share=0.25, search_steps=10, offset_factor=1.0, threshold="private",
                 quantile=None) -> Estimate:
    """Private mean of the rows of ``x`` (n x d) by clipping them to a privately chosen norm
    (IOME equation (2), Lemma 3.1, Theorem 3.2; docs/design.md §5.11).

    1. Budgets: p1 = ``clip_share`` rho for the threshold, p2 = rho - p1 for the noise.
    2. Threshold C (IOME Section 3.2, Algorithm 1): the private binary search of docs/design.md
       §5.1 on the row norms ||x_i|| over [0, hi], hi = ``bounds[1]`` (the IOME authors' u, a
       bound on the norms: see the docstring of :func:`mechanisms.iome`), T = ``search_steps``
       steps, each count plus N(0, T / (2 p1)), for the target rank
       n - offset_factor (2 sqrt(d / (2 p2)) + sqrt(T / (2 p1))): the optimal quantile
       n - sqrt(2 d / rho) of Section 3.1 (the bias-variance balance of Lemma 3.1, with p2 for
       rho: 2 sqrt(d / (2 p2))) less the search's rank error allowance (Theorem 3.1). With
       ``quantile=q`` the target rank is q n instead (a fixed quantile, as Andrew et al.).
    3. Release the mean of the rows clipped to norm C around the origin,
       (1/n) sum_i x_i min(1, C / ||x_i||), plus N(0, (2 C / sqrt(2 p2) / n)^2) per coordinate.

    Privacy (swap neighbours, n public; docs/design.md §5.0): a swap changes each count of the
    search by at most 1, so each step with noise N(0, T / (2 p1)) is p1 / T-zCDP (the Gaussian
    mechanism, IOME Lemma 2.1) and the T steps compose to p1 (Theorem 3.1). Given C, every clipped
    row has norm at most C, so a swap moves the clipped sum by at most 2C and the clipped mean by
    2C / n in l2 norm: the noise N(0, (2C / n)^2 / (2 p2)) per coordinate is p2-zCDP. Composed
    adaptively (the noise's scale depends on the released C only), the release (C, estimate) is
    exactly p1 + p2 = rho-zCDP. Ledger: ``clip_threshold`` p1, ``gaussian_noise`` p2.

    ``threshold="exact"``: the NON-PRIVATE clipping study of IOME Figure 9 (the authors'
    run_syn_qt.py): C is the exact order statistic of the norms at 0-based index floor(rank),
    rank q n or, without ``quantile``, n - offset_factor 2 sqrt(d / (2 p2)) (no rank error
    allowance: nothing is searched); C = 0 when floor(rank) < 0 (the paper's convention for ranks
    below 1, the lower end of the norm universe; the authors' code indexed from the end there)
    and the largest norm when floor(rank) > n - 1. Not private for any budget: the threshold is
    booked as one ``non_private_release`` of infinite cost (as :func:`mechanisms.empirical_mean`),
    so the ledger total is inf; the noise is p2's as above.

    ``x`` is a dense array, a scipy.sparse matrix (norms and clipped sum from its stored entries;
    never densified) or a :class:`mechanisms.SharedSample`. Randomness, drawn before any work:
    the T normals of the search (private threshold only), then the d normals of the noise.
    """
    given = sample_data(x)
    sparse = scipy.sparse.issparse(given)
    data = check_sparse(given) if sparse else check_data(given)
    options = _checked_options(data.shape, rho=rho, bounds=bounds, rng=rng, clip_share=clip_share,
                               search_steps=search_steps, offset_factor=offset_factor, threshold=threshold,
                               quantile=quantile)
    n, d = data.shape
    threshold_noise, gaussian = _run_noise(options.rng, runs=1, options=options, d=d)
    norms = row_norms(data)
    sorted_norms = np.sort(norms)[None, :]
    clip = _thresholds(sorted_norms, threshold_noise, options, n=n)
    weights = clip_weights(norms, clip[:, None])
    noise_std = 2.0 * clip / math.sqrt(2.0 * options.budgets.noise) / n
    estimate = (_weighted_sum(data, weights) / n + noise_std[:, None] * gaussian)[0]
    return Estimate(mean=estimate, ledger=options.budgets.ledger(),
                    diagnostics=_diagnostics(options, n=n, clip=float(clip[0]), noise_std=float(noise_std[0]),
                                             fraction_clipped=float(np.mean(norms > clip[0]))))


def batched_clipped_mean(x, *, rho, bounds, rng, runs, clip_share=0.25, search_steps=10, offset_factor=1.0,
                         threshold="private", quantile=None) -> Estimate:
    """``runs`` independent draws of ``clipped_mean(x, ...)`` with the same options on one dense
    ``x``, all at once (the privacy audit's sampler, docs/design.md §5.8, §5.11).

    ``.mean`` is (runs x d), one estimate per run; ``.ledger`` is one run's (every run is one
    release of x); the diagnostics are clipped_mean()'s, with ``clip_threshold``,
    ``fraction_clipped`` and ``noise_std`` stacked along a first axis of length ``runs``.

    The norms and their order are the same for every run and computed once; each run draws its
    normals in clipped_mean()'s order, run after run, and does its arithmetic (the search's
    counts and midpoints elementwise, the clipped sum as one matrix-vector product per run), so
    the runs are bit for bit the calls ``clipped_mean(x, rng=rng, ...)`` in a row on the same
    generator. Runs go in chunks of about ``CHUNK_VALUES`` weights (n per run); the draws do not
    depend on the chunking. ``x`` must be dense (an array, or a SharedSample of one).
    """
    data = check_data(sample_data(x))
    runs = check_positive_int(runs, "runs")
    options = _checked_options(data.shape, rho=rho, bounds=bounds, rng=rng, clip_share=clip_share,
                               search_steps=search_steps, offset_factor=offset_factor, threshold=threshold,
                               quantile=quantile)
    n, d = data.shape
    check_work_size(8 * runs * (d + 3), f"runs={runs!r}", f"the estimates and diagnostics of {runs} runs of {d} "
                    "coordinates")
    norms = row_norms(data)
    sorted_norms = np.sort(norms)[None, :]
    estimates = np.empty((runs, d))
    clip, noise_std = np.empty(runs), np.empty(runs)
    fraction_clipped = np.empty(runs)
    chunk = max(1, CHUNK_VALUES // n)
    for start in range(0, runs, chunk):
        block = slice(start, min(start + chunk, runs))
        threshold_noise, gaussian = _run_noise(options.rng, runs=block.stop - block.start, options=options, d=d)
        clip[block] = _thresholds(sorted_norms, threshold_noise, options, n=n)
        weights = clip_weights(norms, clip[block, None])
        noise_std[block] = 2.0 * clip[block] / math.sqrt(2.0 * options.budgets.noise) / n
        estimates[block] = _weighted_sum(data, weights) / n + noise_std[block, None] * gaussian
        fraction_clipped[block] = np.mean(norms > clip[block, None], axis=1)
    diagnostics = _diagnostics(options, n=n, clip=clip, noise_std=noise_std, fraction_clipped=fraction_clipped)
    return Estimate(mean=estimates, ledger=options.budgets.ledger(), diagnostics=diagnostics)


def row_norms(data) -> np.ndarray:
    """||x_i|| of every row of a dense array or a CSR matrix (its stored entries only)."""
    if scipy.sparse.issparse(data):
        return np.sqrt(np.asarray(data.multiply(data).sum(axis=1)).ravel())
    return np.sqrt(np.einsum("ij,ij->i", data, data))


def clip_weights(norms, clip) -> np.ndarray:
    """w_i = min(1, C / ||x_i||): the factor that clips row i to norm C (IOME equation (2)); a
    row of norm 0 keeps weight 1 (C = 0 gives it 0, which changes nothing). ``clip`` broadcasts
    against ``norms`` (k x 1 for k runs)."""
    with np.errstate(over="ignore"):  # a zero norm with a clip above 1.8e8 gives clip / 1e-300 = inf: weight 1
        return np.minimum(1.0, clip / np.maximum(norms, 1e-300))


def exact_threshold(sorted_norms, rank) -> float:
    """The norm at 0-based index floor(``rank``) of ``sorted_norms`` (ascending): 0 when the index
    is negative (the lower end of the norm universe, IOME's convention for ranks below 1), the
    largest norm when it is past the last (docs/design.md §5.11)."""
    index = math.floor(rank)
    if index < 0:
        return 0.0
    return float(sorted_norms[min(index, sorted_norms.size - 1)])


class _Budgets(NamedTuple):
    """p1 = ``clip_share`` rho for the threshold (``threshold``), p2 = rho - p1 for the noise
    (``noise``); ``private`` False books the threshold as a non-private release."""

    threshold: float
    noise: float
    private: bool

    def ledger(self) -> tuple[LedgerEntry, ...]:
        first = LedgerEntry("clip_threshold", self.threshold) if self.private else LedgerEntry(NON_PRIVATE, math.inf)
        return first, LedgerEntry("gaussian_noise", self.noise)


class _Options(NamedTuple):
    """The checked arguments of CM on data of d columns, and its threshold's target rank."""

    rho: float
    hi: float
    rng: np.random.Generator
    steps: int
    threshold: str
    quantile: float | None
    target_rank: float
    budgets: _Budgets


def _checked_options(shape, *, rho, bounds, rng, clip_share, search_steps, offset_factor, threshold,
                     quantile) -> _Options:
    """The arguments of :func:`clipped_mean` and :func:`batched_clipped_mean` for data of
    ``shape`` (n x d), checked: one ValueError naming the first bad one."""
    rho = check_rho(rho)
    lo, hi = check_bounds(bounds)
    if not hi > 0:
        raise ValueError(f"bounds=({lo!r}, {hi!r}): the clip threshold is a norm searched over [0, hi], so hi must "
                         "be > 0")
    rng = check_generator(rng)
    clip_share = check_fraction(clip_share, "clip_share", closed_high=False)
    steps = check_search_steps(search_steps, "search_steps")
    offset_factor = check_positive(offset_factor, "offset_factor")
    threshold = check_choice(threshold, "threshold", THRESHOLDS)
    if quantile is not None:
        quantile = check_fraction(quantile, "quantile", open_low=False)
    n, d = shape
    p1 = clip_share * rho
    budgets = _Budgets(p1, rho - p1, threshold == "private")
    check_step_budgets(f"rho={rho!r} with clip_share={clip_share!r}", clip_threshold=budgets.threshold,
                       gaussian_noise=budgets.noise)
    # Work arrays sized by the request: a few vectors of d (sparse x has no dense copy to bound
    # them) and the noise of every search step.
    check_work_size(4 * 8 * d, f"x of shape {shape}", f"vectors of its {d} columns")
    check_work_size(8 * steps, f"search_steps={steps!r}", f"the noise of {steps} search steps")
    if quantile is not None:
        target_rank = quantile * n
    else:
        offset = 2.0 * math.sqrt(d / (2.0 * budgets.noise))
        if budgets.private:
            offset += math.sqrt(steps / (2.0 * budgets.threshold))
        target_rank = n - offset_factor * offset
    return _Options(rho, hi, rng, steps, threshold, quantile, target_rank, budgets)


def _run_noise(rng, *, runs, options, d):
    """The standard normals of ``runs`` runs, run after run, each in the order one run uses them:
    its search's T (private threshold only) and its noise's d. Returned as (runs x T) (runs x 0
    for the exact threshold) and (runs x d)."""
    steps = options.steps if options.budgets.private else 0
    normals = rng.standard_normal((runs, steps + d))
    return normals[:, :steps], normals[:, steps:]


def _thresholds(sorted_norms, threshold_noise, options, *, n) -> np.ndarray:
    """Step 2 for k runs (``threshold_noise`` k x T): the private binary search for the target
    rank over [0, hi] on the sorted norms (1 x n, shared by the runs), or the exact order
    statistic (the same for every run)."""
    runs = threshold_noise.shape[0]
    if not options.budgets.private:
        return np.full(runs, exact_threshold(sorted_norms[0], options.target_rank))
    return binary_search_sorted(np.broadcast_to(sorted_norms, (runs, n)), target_rank=options.target_rank,
                                rho=options.budgets.threshold, lo=0.0, hi=options.hi, steps=options.steps,
                                noise=threshold_noise.T)


def _weighted_sum(data, weights) -> np.ndarray:
    """sum_i w_i x_i for k runs (weights k x n): (k x d), one matrix-vector product per run on
    dense data, so a run's sum does not depend on how many runs are computed with it."""
    if scipy.sparse.issparse(data):
        return np.asarray(data.T @ weights.T).T
    return (data.T @ weights[..., None])[..., 0]


def _diagnostics(options, *, n, clip, noise_std, fraction_clipped) -> dict:
    ledger = options.budgets.ledger()
    return {
        "accounting": "exact" if options.budgets.private else "none",
        "private": options.budgets.private,
        "requested_rho": options.rho,
        "true_rho": ledger_total(ledger),
        "ledger_total": ledger_total(ledger),
        "threshold": options.threshold,
        "quantile": options.quantile,
        "clip_threshold": clip,
        "clip_target_rank": options.target_rank,
        "fraction_clipped": fraction_clipped,
        "noise_std": noise_std,
    }
