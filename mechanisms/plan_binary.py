"""PLAN, binary instantiation (docs/design.md §5.4; PLAN paper Algorithm 1 with p = 1, Section 5.2,
Lemma 5.3 and Section 7.2.2).

Aumüller, Lebeda, Nelson, Pagh, "PLAN: Variance-Aware Private Mean Estimation", run as for
the published binary figures (synthetic "Binary", Kosarak, POS), with exact accounting under
swap neighbours: the ledger sums to rho. The data are a sparse binary n x D matrix (a row is
the set of one person's items) and are never densified: every step is a sparse mat-vec or
an O(nnz) pass.

The four steps (:func:`_plan_binary_steps`) run on a batch of independent runs on the same
data, one row of noise per run: :func:`plan_binary` is a batch of one, and
:func:`batched_plan_binary` (the privacy audit's sampler, docs/design.md §5.8) runs them on
chunks of runs, with the draws that as many :func:`plan_binary` calls in a row would make.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._layout import sample_data
from ._validation import (
    check_choice,
    check_fraction,
    check_generator,
    check_positive_int,
    check_search_steps,
    check_sparse,
    check_step_budgets,
    check_work_size,
)
from .accounting import UNSPENT, Estimate, LedgerEntry, check_rho, ledger_total
from .quantiles import binary_search_sorted

VARIANTS = ("paper", "oracle", "noscale")
_VARIANCE_FLOOR_EXPONENT = -0.4  # Lemma 5.3: frequencies are kept D^-0.4 away from 0 and 1
_TINY = 1e-30
# Values per work array of a chunk of runs in batched_plan_binary (norms, their sorted copy,
# clip weights: n per run each): 2^20 float64, 8 MiB. On the audit's pair (n = 100) 10^6 runs
# took 2.6 s at 2^18 and 2^20, 4.4 s at 2^16 (per-chunk overhead) and 7.6 s at 2^22 (cache).
_CHUNK_VALUES = 1 << 20


def plan_binary(x, *, rho, rng, variant="paper", variance_share=0.1, search_steps=10) -> Estimate:
    """Private item frequencies (column means) of a sparse binary matrix ``x`` (n x D), by PLAN
    for l1 error (docs/design.md §5.4, PLAN Algorithm 1 with p = 1). rho-zCDP under swap neighbours
    (variants "paper" and "noscale"; "oracle" is not private, see step 1).

    ``x``: a scipy.sparse matrix with entries 0 or 1 and D >= 2 columns (or a
    :class:`SharedSample` holding one); the universe is {0, 1}^D, so there are no bounds.
    Budgets, with the published parameters ``variance_share=0.1`` and ``search_steps`` T = 10:
    rho_1 = variance_share rho for the variances, rho_2 = (rho - rho_1) / D for the clip
    threshold, rho_3 = the rest for the noise.

    1. Scale b per item, by ``variant``:
       "paper": noisy frequencies p_j + N(0, (1/n)^2 / (2 rho_1 / D)), clipped to
       [D^-0.4, 1 - D^-0.4] (Lemma 5.3), var = p~ (1 - p~), b = var^(-1/3);
       "oracle": the data's own frequencies p, std = sqrt(p (1 - p)) + ||std||_1 / D,
       b = (std^2)^(-1/3): a non-private baseline, as published (the scale reads the data
       without noise, so the ledger does not bound its privacy loss);
       "noscale": b = 1.
       In "oracle" and "noscale" rho_1 is held back, as published: the ledger books it unspent.
    2. Norms of the scaled rows: ||b * x_i||_2 = sqrt(sum of b_j^2 over row i's items).
    3. Clip threshold C: private binary search (T steps, budget rho_2) for rank
       n - sqrt(n) - sqrt(T ln T / rho_2) among the norms, over [0, ||b||_2].
    4. Clip every scaled row to norm C, sum, add N(0, 2 C^2 / rho_3) per item (one person
       moves the clipped sum by at most 2 C), divide by b n.

    Randomness is drawn up front in a fixed order for every variant: D values for the
    variance step, T for the threshold, D for the final noise. Diagnostics: the clip
    threshold, its target rank and search range, the fraction of rows clipped, ``true_rho``
    (the rho spent: the ledger without its unspent share, as in :mod:`.plan`), ``noise_std``
    (std of the noise on the clipped sum, before dividing by b n), the scale b,
    ``unclipped_mean`` (the published figures' non-private "unclipped" rows: the same noise
    added to the unclipped sum) and, for "paper", ``noisy_frequencies`` (before clipping).
    """
    request = _check_request(x, rho, rng, variant, variance_share, search_steps)
    # All randomness up front, in the same order whatever the variant: one run's D + T + D normals.
    draws = _draw_runs(request.rng, 1, request.d, request.steps)
    # Item counts = X^T 1, an O(nnz) pass (explicit zeros in the data weigh 0).
    counts = _item_counts(request.data)
    # Steps 1-4 on a batch of one run (the code batched_plan_binary runs on chunks of runs).
    run = _plan_binary_steps(request, counts, draws)

    n = request.data.shape[0]
    scale, noise = run.scale[0], run.noise[0]
    diagnostics = _common_diagnostics(request) | {
        "clip_threshold": float(run.clip[0]),
        "clip_search_upper": float(run.norm_upper[0]),
        "fraction_clipped": float(run.fraction_clipped[0]),
        "noise_std": float(run.noise_std[0]),
        "scale": scale,
        "unclipped_mean": (scale * counts + noise) / (scale * n),
    }
    if run.noisy_frequencies is not None:
        diagnostics["noisy_frequencies"] = run.noisy_frequencies[0]
    return Estimate(mean=run.mean[0], ledger=request.ledger, diagnostics=diagnostics)


def batched_plan_binary(x, *, rho, rng, runs, variant="paper", variance_share=0.1, search_steps=10) -> Estimate:
    """``runs`` independent draws of ``plan_binary(x, rho=rho, rng=rng, variant=variant,
    variance_share=variance_share, search_steps=search_steps)`` on the same data, vectorised
    across runs: the privacy audit's sampler (docs/design.md §5.4, §5.8).

    The same steps (:func:`_plan_binary_steps`) on the same draws: each run draws its D + T + D
    standard normals in :func:`plan_binary`'s order, so the ``.mean`` (runs x D) equals, bit for
    bit, the means of ``runs`` :func:`plan_binary` calls in a row on ``rng``, and ``rng`` is left
    where they would leave it. ``.ledger`` is one run's ledger (each run is one rho-zCDP release;
    it sums to rho). ``.diagnostics``: the per-call values of :func:`plan_binary` (``variant``,
    ``requested_rho``, ``true_rho``, ``ledger_total``, ``clip_target_rank``) and ``runs``, and per
    run (arrays of ``runs`` values) ``clip_threshold``, ``clip_search_upper``,
    ``fraction_clipped`` and ``noise_std``; the per-item diagnostics (scale, unclipped mean,
    noisy frequencies) would be ``runs`` x D arrays each and are not kept.

    The data stay sparse, so there is no limit on them beyond :func:`plan_binary`'s: the runs are
    done in chunks whose work arrays (norms, their sorted copy, clip weights) hold about 2^20
    values each, n per run (one run per chunk once n exceeds 2^20). ``runs`` is limited by the
    result, runs x (D + 4) float64 within the 2 GiB work limit (ValueError naming ``runs``).
    """
    request = _check_request(x, rho, rng, variant, variance_share, search_steps)
    runs = check_positive_int(runs, "runs")
    n, d = request.data.shape
    check_work_size(8 * runs * (d + len(_PER_RUN)), f"runs={runs!r}",
                    f"the {runs} estimates of x's {d} items and their diagnostics")

    counts = _item_counts(request.data)
    mean = np.empty((runs, d))
    per_run = {name: np.empty(runs) for name in _PER_RUN}
    chunk = max(1, _CHUNK_VALUES // max(n, 2 * d + request.steps))
    for start in range(0, runs, chunk):
        block = slice(start, min(start + chunk, runs))
        # Each chunk draws its runs' normals before its work: the stream of as many calls in a row.
        run = _plan_binary_steps(request, counts, _draw_runs(request.rng, block.stop - start, d, request.steps))
        mean[block] = run.mean
        for name, field in _PER_RUN.items():
            per_run[name][block] = getattr(run, field)
    diagnostics = _common_diagnostics(request) | {"runs": runs} | per_run
    return Estimate(mean=mean, ledger=request.ledger, diagnostics=diagnostics)


class _Request(NamedTuple):
    """A checked call (5.4): the data, the generator, the variant, T, the budgets and the ledger."""

    data: object  # scipy.sparse.csr_matrix, binary
    rng: np.random.Generator
    variant: str
    steps: int
    rho: float
    rho_1: float  # variances (step 1)
    rho_2: float  # clip threshold (step 3)
    rho_3: float  # Gaussian noise (step 4)
    target_rank: float  # of the clip threshold's search (step 3)
    ledger: tuple

    @property
    def d(self) -> int:
        return self.data.shape[1]


def _check_request(x, rho, rng, variant, variance_share, search_steps) -> _Request:
    """The arguments common to :func:`plan_binary` and :func:`batched_plan_binary`, checked (one
    ValueError naming the bad one), with the budget split and ledger of 5.4."""
    data = check_sparse(sample_data(x), binary=True)
    rho = check_rho(rho)
    rng = check_generator(rng)
    variant = check_choice(variant, "variant", VARIANTS)
    variance_share = check_fraction(variance_share, "variance_share", closed_high=False)
    steps = check_search_steps(search_steps, "search_steps")
    n, d = data.shape
    if d < 2:
        raise ValueError(
            "x must have at least 2 columns (items): with one, the clip threshold's rho_2 = (rho - rho_1) / D "
            f"leaves nothing for the noise, got x.shape={data.shape}"
        )
    check_work_size(8 * 8 * d, f"x of shape {data.shape}", f"the dense vectors of its {d} items (noise, counts, scale)")
    rest = rho - variance_share * rho  # the budgets below
    check_step_budgets(f"rho={rho!r} with variance_share={variance_share!r} and d={d}",
                       variance=variance_share * rho / d, clip_threshold=rest / d, gaussian_noise=rest - rest / d)

    # Budgets (5.4): the rest r is computed by subtraction so that the ledger sums to rho.
    rho_1 = variance_share * rho
    rest = rho - rho_1
    rho_2 = rest / d
    rho_3 = rest - rho_2
    first = LedgerEntry("variance", rho_1) if variant == "paper" else LedgerEntry(UNSPENT, rho_1)
    ledger = (first, LedgerEntry("clip_threshold", rho_2), LedgerEntry("gaussian_noise", rho_3))
    # Step 3's target rank: n - sqrt(n) - sqrt(T ln T / rho_2).
    target_rank = n - math.sqrt(n) - math.sqrt(steps * math.log(steps) / rho_2)
    return _Request(data, rng, variant, steps, rho, rho_1, rho_2, rho_3, target_rank, ledger)


def _common_diagnostics(request: _Request) -> dict:
    """The diagnostics that do not depend on the run."""
    ledger = request.ledger
    return {
        "accounting": "exact",
        "variant": request.variant,
        "requested_rho": request.rho,
        "true_rho": math.fsum(entry.rho for entry in ledger if entry.step != UNSPENT),
        "ledger_total": ledger_total(ledger),
        "clip_target_rank": request.target_rank,
    }


class _Draws(NamedTuple):
    """The standard normals of a batch of runs (5.4: drawn up front, in the same order for
    every variant)."""

    variance: np.ndarray  # runs x D: step 1 ("paper")
    threshold: np.ndarray  # T x runs: step 3, one column per run (binary_search_sorted's layout)
    final: np.ndarray  # runs x D: step 4


def _draw_runs(rng, runs: int, d: int, steps: int) -> _Draws:
    """Each run's D + T + D normals, run after run: the stream of ``runs`` :func:`plan_binary`
    calls in a row (a Generator's normals do not depend on how a stream is cut into calls)."""
    draws = rng.standard_normal((runs, 2 * d + steps))
    return _Draws(draws[:, :d], draws[:, d:d + steps].T, draws[:, d + steps:])


def _item_counts(data) -> np.ndarray:
    """X^T 1 (D,), an O(nnz) pass; explicit zeros in the data weigh 0."""
    return np.bincount(data.indices, weights=data.data, minlength=data.shape[1])


# batched_plan_binary's per-run diagnostics: name -> field of _Runs.
_PER_RUN = {"clip_threshold": "clip", "clip_search_upper": "norm_upper", "fraction_clipped": "fraction_clipped",
            "noise_std": "noise_std"}


class _Runs(NamedTuple):
    """The outcome of steps 1-4 for a batch of runs: arrays with one row (or value) per run;
    ``scale`` has one row for all runs unless the variant is "paper"."""

    mean: np.ndarray  # runs x D
    scale: np.ndarray  # runs x D, or 1 x D
    noisy_frequencies: np.ndarray | None  # runs x D ("paper"), before clipping
    norm_upper: np.ndarray  # runs: ||b||_2, the search's upper end
    clip: np.ndarray  # runs: C
    fraction_clipped: np.ndarray  # runs
    noise_std: np.ndarray  # runs: sqrt(2 C^2 / rho_3)
    noise: np.ndarray  # runs x D: the noise on the clipped sum


def _plan_binary_steps(request: _Request, counts, draws: _Draws) -> _Runs:
    """Steps 1-4 of :func:`plan_binary` (docs/design.md §5.4) for a batch of runs on the same
    data, each with its own row of ``draws``. Every operation is elementwise per run, or a sum in
    a fixed order (the sparse products' row order, a row's pairwise sum), so a run's result does
    not depend on the batch it is in."""
    data, n = request.data, request.data.shape[0]

    # Step 1: the scale b, one row per run ("paper") or one row for all (no noise).
    noisy_frequencies = None
    frequencies = counts / n
    if request.variant == "paper":
        scale, noisy_frequencies = _paper_scale(frequencies, draws.variance, n=n, rho_1=request.rho_1)
    elif request.variant == "oracle":
        scale = _oracle_scale(frequencies)[None, :]
    else:
        scale = np.ones((1, request.d))
    runs = draws.final.shape[0]
    squares = scale * scale

    # Step 2: norms of the scaled rows (n x runs, n x 1 for a common b); binary entries, so
    # ||b * x_i||^2 = (X b^2)_i: one sparse product for all runs, adding each row's b_j^2 in
    # the row's item order.
    norms = np.sqrt(data @ squares.T)

    # Step 3: clip threshold C per run by private binary search (docs/design.md §5.1) over
    # [0, ||b||_2] (the largest norm), on each run's sorted norms (sorted once for a common b).
    norm_upper = np.broadcast_to(np.sqrt(np.sum(squares, axis=1)), (runs,))
    clip = binary_search_sorted(
        np.broadcast_to(np.sort(norms.T, axis=1), (runs, n)), target_rank=request.target_rank, rho=request.rho_2,
        lo=0.0, hi=norm_upper, steps=request.steps, noise=draws.threshold,
    )

    # Step 4: clip the scaled rows to norm C (weights w_i = min(1, C / ||b * x_i||), 1 for
    # empty rows), sum: sum_i w_i (b * x_i) = b * (X^T w); add N(0, 2 C^2 / rho_3); undo b n.
    weights = np.ones((n, runs))
    clipped_rows = norms > clip
    np.divide(clip, norms, out=weights, where=clipped_rows)
    noise_std = clip * math.sqrt(2.0 / request.rho_3)
    noise = noise_std[:, None] * draws.final
    clipped_sum = scale * (data.T @ weights).T
    mean = (clipped_sum + noise) / (scale * n)
    return _Runs(mean, scale, noisy_frequencies, norm_upper, clip, np.mean(clipped_rows, axis=0), noise_std, noise)


def _paper_scale(frequencies, noise, *, n: int, rho_1: float):
    """Scale b of the "paper" variant from noisy item frequencies (5.4; Lemma 5.3), one row
    per row of ``noise`` (runs x D).

    One person moves each frequency by at most 1/n, so the frequency vector moves by at most
    sqrt(D)/n in l2 (swap): adding N(0, (1/n)^2 / (2 rho_1 / D)) per item is rho_1-zCDP.
    The noisy frequencies are clipped to [D^-0.4, 1 - D^-0.4]; for D <= 5 that interval is
    empty and every frequency becomes 1/2 (b is then constant: no scaling). Returns
    (b = (p~ (1 - p~))^(-1/3), the noisy frequencies before clipping).
    """
    d = frequencies.size
    noisy = frequencies + math.sqrt((1.0 / n) ** 2 / (2.0 * rho_1 / d)) * noise
    low = min(d ** _VARIANCE_FLOOR_EXPONENT, 0.5)
    clipped = np.clip(noisy, low, 1.0 - low)
    # The published code also computed a regularised std (std + ||std||_1 / D) here and did
    # not use it: the published scale is b = var^(-1/3) of the clipped noisy frequencies.
    return (clipped * (1.0 - clipped)) ** (-1.0 / 3.0), noisy


def _oracle_scale(frequencies):
    """Scale b of the "oracle" variant (5.4): the data's own item frequencies, not private.

    std = sqrt(p (1 - p)), regularised std += ||std||_1 / D, b = (std^2)^(-1/3). The floor only
    matters when every item is in no row or in every row (all std 0); b is scale-free, so any
    constant does.
    """
    std = np.sqrt(frequencies * (1.0 - frequencies))
    std = np.maximum(std + std.sum() / frequencies.size, _TINY)
    return (std * std) ** (-1.0 / 3.0)
