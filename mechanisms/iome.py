"""IOME: shifted clipped mean with random rotation (Huang, Liang, Yi 2021), as run for the
published PLAN figures (docs/design.md §5.5). Exactly rho-zCDP under swap neighbours."""
from __future__ import annotations

import math
import sys

import numpy as np
import scipy.sparse

from ._layout import WORK_ARRAY, SharedSample, sample_data
from ._sparse_rotation import check_histogram_size, shared_rotated_counts
from ._validation import (
    check_bounds,
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
from .hadamard import next_power_of_two, random_signs, rotate, rotate_rows_transposed, unrotate
from .quantiles import binary_search_counts, binary_search_sorted


def iome(x, *, rho, bounds, rng, rotations=3, search_steps=20, centre_share=0.25, clip_share=0.01,
         offset_factor=2.0, rotation_rng=None) -> Estimate:
    """Private mean of the rows of ``x`` (n x d), every coordinate in ``bounds=(lo, hi)``.

    1. Pad d to the power of two D and rotate: R = (H D_1)...(H D_t), t = ``rotations``.
    2. Centre: private binary-search median of every rotated coordinate on
       [lo / sqrt(D), hi / sqrt(D)], ``centre_share * rho / D`` each, T = ``search_steps``.
    3. With rho' = the rest, p1 = ``clip_share`` rho', p2 = rho' - p1: clip threshold C by
       binary search for rank n - offset_factor (2 sqrt(D / (2 p2)) + sqrt(T / (2 p1))) of
       the norms ||R x_i - centre|| over [0, hi] (the published run doubled the offset:
       ``offset_factor=2``); clipped mean plus N(0, (2 C / sqrt(2 p2) / n)^2) per coordinate.
    4. Rotate back (after adding the centre) and drop the padding.

    ``x`` is a dense array, a scipy.sparse matrix (never densified: the medians are read off
    per-coordinate counts on the search grid, built a row at a time; T = 10 as in the binary
    figures, not the default 20, keeps them small), or a :class:`SharedSample` of either. The
    two routes give the same centre and threshold on the same data and seed (bit for bit on
    integer data), and a SharedSample keeps a sparse sample's counts for further calls with the
    same rotation. The rotation's signs are drawn from ``rotation_rng`` if given (so calls with
    different rho can share a rotation), else first from ``rng``.
    """
    given = sample_data(x)
    sparse = scipy.sparse.issparse(given)
    data = check_sparse(given) if sparse else check_data(given)
    rho = check_rho(rho)
    lo, hi = check_bounds(bounds)
    rng = check_generator(rng)
    rotation_rng = rng if rotation_rng is None else check_generator(rotation_rng)
    rotations = check_positive_int(rotations, "rotations")
    steps = check_search_steps(search_steps, "search_steps")
    centre_share = check_fraction(centre_share, "centre_share", closed_high=False)
    clip_share = check_fraction(clip_share, "clip_share", closed_high=False)
    offset_factor = check_positive(offset_factor, "offset_factor")
    n, d = data.shape
    size = next_power_of_two(d)
    rest = rho - centre_share * rho  # the step budgets of steps 2 and 3 below
    check_step_budgets(f"rho={rho!r} with centre_share={centre_share!r}, clip_share={clip_share!r} and d={d}",
                       centre=centre_share * rho / size, clip_threshold=clip_share * rest,
                       gaussian_noise=rest - clip_share * rest)
    # Work arrays sized by the request: a few vectors of the padded dimension (sparse x has no
    # dense copy to bound them), the signs of every rotation and the noise of every search step.
    check_work_size(4 * 8 * size, f"x of shape {data.shape}", f"vectors of its padded dimension {size}")
    check_work_size(8 * rotations * size, f"rotations={rotations!r}", f"the signs of {rotations} rotations of {size}")
    check_work_size(8 * steps * size, f"search_steps={steps!r}", f"the noise of {steps} search steps for {size} "
                    "rotated coordinates")
    if sparse:
        check_histogram_size(size, steps)
        # The counts are read off 2^T bins of [lo, hi] / sqrt(D'), binned by (v - lo) / bin width:
        # the width must stay a normal float64 (not 0, with a finite inverse).
        scaled = hi * (1.0 / math.sqrt(size)) - lo * (1.0 / math.sqrt(size))  # as the search below
        if not scaled / (1 << steps) >= sys.float_info.min:
            raise ValueError(
                f"bounds=({lo!r}, {hi!r}) are too narrow for sparse input: the search grid's bins, (hi - lo) / "
                f"(sqrt({size}) 2^{steps}) = {scaled / (1 << steps)!r}, must be normal float64 numbers; "
                "rescale the data"
            )

    # Budgets (5.5): centre_share rho for the D medians (rho_centre each); the rest rho' = p1 + p2
    # for the clip threshold (p1 = clip_share rho') and the noise (p2).
    rho_centre = centre_share * rho / size
    rho_rest = rho - centre_share * rho
    rho_threshold = clip_share * rho_rest
    rho_noise = rho_rest - rho_threshold

    # Randomness in a fixed order, before any blocked work: rotation, centre, threshold, noise.
    signs = random_signs(rotation_rng, rotations=rotations, size=size)
    centre_noise = rng.standard_normal((steps, size))
    threshold_noise = rng.standard_normal((steps, 1))
    gaussian = rng.standard_normal(size)

    # Steps 1-2: pad to D, rotate, and centre each rotated coordinate at its private median
    # (target rank n / 2) on [lo / sqrt(D), hi / sqrt(D)].
    half_width = 1.0 / math.sqrt(size)
    centre = _rotated_medians(x, data, signs, sparse=sparse, target_rank=n / 2.0, rho=rho_centre,
                              lo=lo * half_width, hi=hi * half_width, steps=steps, noise=centre_noise)

    # Step 3: clip threshold C by private binary search on the norms ||R x_i - centre|| over [0, hi],
    # for rank n - offset_factor (2 sqrt(D / (2 p2)) + sqrt(T / (2 p1))).
    norms = _shifted_norms(data, signs, centre)
    offset = offset_factor * (2.0 * math.sqrt(size / (2.0 * rho_noise)) + math.sqrt(steps / (2.0 * rho_threshold)))
    target_rank = n - offset
    clip = float(binary_search_sorted(
        np.sort(norms)[None, :], target_rank=target_rank, rho=rho_threshold, lo=0.0, hi=hi, steps=steps,
        noise=threshold_noise,
    )[0])
    # ... then the clipped mean of the shifted rotated rows plus N(0, (2 C / sqrt(2 p2) / n)^2).
    with np.errstate(over="ignore"):  # a zero norm with a clip above 1.8e8 gives clip / 1e-300 = inf: weight 1
        weights = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    noise_std = 2.0 * clip / math.sqrt(2.0 * rho_noise) / n
    # sum_i w_i (R x_i - c) = R (sum_i w_i x_i) - (sum_i w_i) c (docs/design.md §5.5, cost notes)
    weighted_sum = np.zeros(size)
    weighted_sum[:d] = data.T @ weights
    clipped_mean = (rotate(weighted_sum, signs) - weights.sum() * centre) / n

    # Step 4: add the centre back in rotated coordinates, rotate back, drop the padding.
    estimate = unrotate(clipped_mean + noise_std * gaussian + centre, signs)[:d]

    ledger = (
        LedgerEntry("centre", centre_share * rho),
        LedgerEntry("clip_threshold", rho_threshold),
        LedgerEntry("gaussian_noise", rho_noise),
    )
    diagnostics = {
        "accounting": "exact",
        "requested_rho": rho,
        "true_rho": ledger_total(ledger),
        "ledger_total": ledger_total(ledger),
        "clip_threshold": clip,
        "clip_target_rank": target_rank,
        "fraction_clipped": float(np.mean(norms > clip)),
        "noise_std": noise_std,
        "padded_dimension": size,
        "rotated_centre": centre,
        "rotation_signs": signs,
    }
    return Estimate(mean=estimate, ledger=ledger, diagnostics=diagnostics)


def _rotated_medians(x, data, signs, *, sparse, **search):
    """5.5 step 2: the private binary-search median of every rotated coordinate (``search``: the
    keywords of :func:`binary_search_sorted`). Sparse data: read off per-coordinate counts on the
    search grid (:func:`binary_search_counts`, the same result); dense data: the rotated
    coordinates sorted, one row per coordinate."""
    if sparse:
        counts = shared_rotated_counts(x, data, signs, lo=search["lo"], hi=search["hi"], steps=search["steps"])
        return binary_search_counts(counts, **search)
    size, n = signs.shape[1], data.shape[0]
    sorted_rotated = rotate_rows_transposed(
        data, signs, out=x.scratch(WORK_ARRAY, (size, n)) if isinstance(x, SharedSample) else None
    )
    sorted_rotated.sort(axis=1)
    return binary_search_sorted(sorted_rotated, **search)


def _shifted_norms(data, signs, centre):
    """||R x_i - centre|| of every row: R is orthogonal, so ||R x - c||^2 = ||x||^2 - 2 x . R^T c
    + ||c||^2 (docs/design.md §5.5, cost notes), sparse mat-vecs on sparse x."""
    centre_back = unrotate(centre, signs)[:data.shape[1]]
    squared = _squared_row_norms(data) - 2.0 * (data @ centre_back) + centre @ centre
    return np.sqrt(np.maximum(squared, 0.0))


def _squared_row_norms(data) -> np.ndarray:
    """||x_i||^2 of every row of a dense array or a CSR matrix (its stored entries only)."""
    if scipy.sparse.issparse(data):
        return np.asarray(data.multiply(data).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", data, data)
