"""PLAN, binary instantiation (docs/design.md §5.4; PLAN paper Algorithm 1 with p = 1, Section 5.2,
Lemma 5.3 and Section 7.2.2).

Aumüller, Lebeda, Nelson, Pagh, "PLAN: Variance-Aware Private Mean Estimation", run as for
the published binary figures (synthetic "Binary", Kosarak, POS), with exact accounting under
swap neighbours: the ledger sums to rho. The data are a sparse binary n x D matrix (a row is
the set of one person's items) and are never densified: every step is a sparse mat-vec or
an O(nnz) pass.
"""
from __future__ import annotations

import math

import numpy as np

from ._layout import sample_data
from ._validation import (
    check_choice,
    check_fraction,
    check_generator,
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

    # All randomness up front, in the same order whatever the variant.
    variance_noise = rng.standard_normal(d)
    threshold_noise = rng.standard_normal((steps, 1))
    final_noise = rng.standard_normal(d)

    # Item counts = X^T 1, an O(nnz) pass (explicit zeros in the data weigh 0).
    counts = np.bincount(data.indices, weights=data.data, minlength=d)
    frequencies = counts / n

    # Step 1: the scale b.
    noisy_frequencies = None
    if variant == "paper":
        scale, noisy_frequencies = _paper_scale(frequencies, variance_noise, n=n, rho_1=rho_1)
        ledger = [LedgerEntry("variance", rho_1)]
    else:
        scale = _oracle_scale(frequencies) if variant == "oracle" else np.ones(d)
        ledger = [LedgerEntry(UNSPENT, rho_1)]

    # Step 2: norms of the scaled rows; binary entries, so ||b * x_i||^2 = (X b^2)_i.
    norms = np.sqrt(data @ (scale * scale))

    # Step 3: clip threshold C by private binary search over [0, ||b||_2] (the largest norm).
    target_rank = n - math.sqrt(n) - math.sqrt(steps * math.log(steps) / rho_2)
    norm_upper = float(np.sqrt(np.sum(scale * scale)))
    clip = float(binary_search_sorted(
        np.sort(norms)[None, :], target_rank=target_rank, rho=rho_2, lo=0.0, hi=norm_upper, steps=steps,
        noise=threshold_noise,
    )[0])
    ledger.append(LedgerEntry("clip_threshold", rho_2))

    # Step 4: clip the scaled rows to norm C (weights w_i = min(1, C / ||b * x_i||), 1 for
    # empty rows), sum: sum_i w_i (b * x_i) = b * (X^T w); add N(0, 2 C^2 / rho_3); undo b n.
    weights = np.ones(n)
    clipped_rows = norms > clip
    np.divide(clip, norms, out=weights, where=clipped_rows)
    noise_std = clip * math.sqrt(2.0 / rho_3)
    noise = noise_std * final_noise
    clipped_sum = scale * (data.T @ weights)
    mean = (clipped_sum + noise) / (scale * n)
    ledger.append(LedgerEntry("gaussian_noise", rho_3))

    ledger = tuple(ledger)
    spent = math.fsum(entry.rho for entry in ledger if entry.step != UNSPENT)
    diagnostics = {
        "accounting": "exact",
        "variant": variant,
        "requested_rho": rho,
        "true_rho": spent,
        "ledger_total": ledger_total(ledger),
        "clip_threshold": clip,
        "clip_target_rank": target_rank,
        "clip_search_upper": norm_upper,
        "fraction_clipped": float(np.mean(clipped_rows)),
        "noise_std": noise_std,
        "scale": scale,
        "unclipped_mean": (scale * counts + noise) / (scale * n),
    }
    if noisy_frequencies is not None:
        diagnostics["noisy_frequencies"] = noisy_frequencies
    return Estimate(mean=mean, ledger=ledger, diagnostics=diagnostics)


def _paper_scale(frequencies, noise, *, n: int, rho_1: float):
    """Scale b of the "paper" variant from noisy item frequencies (5.4; Lemma 5.3).

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
