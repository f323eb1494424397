"""IOME: shifted clipped mean with random rotation (Huang, Liang, Yi 2021), as run for the
published PLAN figures (docs/design.md §5.5). Exactly rho-zCDP under swap neighbours."""
from __future__ import annotations

import math
import sys
from typing import NamedTuple

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

# Rotated values (runs x D x n) per chunk of batched_iome: its work arrays of 2 MiB stay in cache
# (measured fastest from 2^15 to 2^24 on the privacy audit's pair, n = 100 and D = 1).
CHUNK_VALUES = 1 << 18


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
    options = _checked_options(data.shape, rho=rho, bounds=bounds, rng=rng, rotation_rng=rotation_rng,
                               rotations=rotations, search_steps=search_steps, centre_share=centre_share,
                               clip_share=clip_share, offset_factor=offset_factor)
    lo, hi, size, steps, budgets = options.lo, options.hi, options.size, options.steps, options.budgets
    n, d = data.shape
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

    # Randomness in a fixed order, before any blocked work: rotation, centre, threshold, noise.
    signs = random_signs(options.rotation_rng, rotations=options.rotations, size=size)
    centre_noise, threshold_noise, gaussian = _run_noise(options.rng, runs=1, steps=steps, size=size)

    # Steps 1-2: pad to D, rotate, and centre each rotated coordinate at its private median
    # (target rank n / 2) on [lo / sqrt(D), hi / sqrt(D)].
    half_width = 1.0 / math.sqrt(size)
    centre = _rotated_medians(x, data, signs, sparse=sparse, target_rank=n / 2.0, rho=budgets.centre,
                              lo=lo * half_width, hi=hi * half_width, steps=steps, noise=centre_noise[0])

    # Step 3: clip threshold C by private binary search on the norms ||R x_i - centre|| over [0, hi],
    # for rank n - offset_factor (2 sqrt(D / (2 p2)) + sqrt(T / (2 p1))).
    norms = _shifted_norms(data, signs, centre)
    target_rank = _clip_target_rank(n, options)
    clip = float(binary_search_sorted(
        np.sort(norms)[None, :], target_rank=target_rank, rho=budgets.threshold, lo=0.0, hi=hi, steps=steps,
        noise=threshold_noise.T,
    )[0])
    # ... then the clipped mean of the shifted rotated rows plus N(0, (2 C / sqrt(2 p2) / n)^2).
    clipped_mean = _clipped_mean(data, signs, centre, norms, clip)
    noise_std = 2.0 * clip / math.sqrt(2.0 * budgets.noise) / n

    # Step 4: add the centre back in rotated coordinates, rotate back, drop the padding.
    estimate = unrotate(clipped_mean + noise_std * gaussian[0] + centre, signs)[:d]

    ledger = budgets.ledger()
    diagnostics = {
        "accounting": "exact",
        "requested_rho": options.rho,
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


def batched_iome(x, *, rho, bounds, rng, runs, rotations=3, search_steps=20, centre_share=0.25, clip_share=0.01,
                 offset_factor=2.0, rotation_rng=None) -> Estimate:
    """``runs`` independent draws of ``iome(x, ...)`` with the same options on one dense ``x``,
    all runs at once (the privacy audit's sampler, docs/design.md §5.8).

    ``.mean`` is (runs x d), one estimate per run; ``.ledger`` is the ledger of one run, that of
    :func:`iome` (every run is one rho-zCDP release of x); the diagnostics are iome()'s, with the
    values that differ between runs stacked along a first axis of length ``runs``.

    Each step of :func:`iome` runs for a chunk of runs at once, with every run's arithmetic that
    of one call (one BLAS product per run wherever a sum's order depends on the product's
    shape), and the randomness in a fixed order: the rotations of all runs first (from
    ``rotation_rng`` if given, else ``rng``), then every run's normals in iome()'s order, run
    after run. So with a ``rotation_rng`` of its own, the runs are bit for bit the calls
    ``iome(x, rng=rng, rotation_rng=rotation_rng, ...)`` in a row on the same two generators.
    Without one they are independent draws of the same mechanism, but not the calls on ``rng``
    alone (each of those draws its rotation between the previous call's normals and its own).

    A chunk holds about ``CHUNK_VALUES`` rotated values (n rows in D coordinates per run), so
    memory stays bounded by a chunk and the (runs x t x D) rotations and (runs x D) results; the
    draws do not depend on the chunking. ``x`` must be dense (an array, or a SharedSample of one).
    """
    data = check_data(sample_data(x))
    runs = check_positive_int(runs, "runs")
    options = _checked_options(data.shape, rho=rho, bounds=bounds, rng=rng, rotation_rng=rotation_rng,
                               rotations=rotations, search_steps=search_steps, centre_share=centre_share,
                               clip_share=clip_share, offset_factor=offset_factor)
    n, d = data.shape
    size, steps = options.size, options.steps
    check_work_size(8 * runs * (options.rotations + 2) * size, f"runs={runs!r}",
                    f"the rotations, centres and estimates of {runs} runs in {size} rotated coordinates")
    target_rank = _clip_target_rank(n, options)

    signs = random_signs(options.rotation_rng, rotations=options.rotations, size=size, runs=runs)
    estimates = np.empty((runs, d))
    per_run = {"clip_threshold": np.empty(runs), "fraction_clipped": np.empty(runs), "noise_std": np.empty(runs),
               "rotated_centre": np.empty((runs, size))}
    chunk = max(1, CHUNK_VALUES // (size * n))
    for start in range(0, runs, chunk):
        block = slice(start, min(start + chunk, runs))
        noise = _run_noise(options.rng, runs=block.stop - block.start, steps=steps, size=size)
        estimates[block], values = _iome_runs(data, signs[block], noise, options, target_rank)
        for name, value in values.items():
            per_run[name][block] = value

    ledger = options.budgets.ledger()
    diagnostics = {
        "accounting": "exact",
        "requested_rho": options.rho,
        "true_rho": ledger_total(ledger),
        "ledger_total": ledger_total(ledger),
        "clip_target_rank": target_rank,
        "padded_dimension": size,
        "rotation_signs": signs,
        **per_run,
    }
    return Estimate(mean=estimates, ledger=ledger, diagnostics=diagnostics)


def _iome_runs(data, signs, noise, options, target_rank):
    """Steps 1-4 of :func:`iome` on dense ``data`` for k runs at once: run r with the rotation
    ``signs[r]`` (k x t x D) and the normals ``noise`` (:func:`_run_noise`), each step with the
    arithmetic of one call. Returns the estimates (k x d) and the per-run diagnostics."""
    centre_noise, threshold_noise, gaussian = noise
    n, d = data.shape
    k, steps, size = centre_noise.shape
    lo, hi, budgets = options.lo, options.hi, options.budgets

    # Steps 1-2: every run's rotated coordinates and their private medians, one search per run
    # and coordinate (searches ordered run by run, as the rows of the rotated data; the plain
    # array as x: no SharedSample's work array).
    half_width = 1.0 / math.sqrt(size)
    centre = _rotated_medians(data, data, signs, sparse=False, target_rank=n / 2.0, rho=budgets.centre,
                              lo=lo * half_width, hi=hi * half_width, steps=steps,
                              noise=centre_noise.transpose(1, 0, 2).reshape(steps, k * size))

    # Step 3: every run's clip threshold, clipped mean and noise scale.
    norms = _shifted_norms(data, signs, centre)
    clip = binary_search_sorted(np.sort(norms, axis=1), target_rank=target_rank, rho=budgets.threshold, lo=0.0,
                                hi=hi, steps=steps, noise=threshold_noise.T)
    clipped_mean = _clipped_mean(data, signs, centre, norms, clip[:, None])
    noise_std = 2.0 * clip / math.sqrt(2.0 * budgets.noise) / n

    # Step 4: add the centre back, rotate back, drop the padding.
    estimate = unrotate(clipped_mean + noise_std[:, None] * gaussian + centre, signs)[:, :d]
    values = {"clip_threshold": clip, "fraction_clipped": np.mean(norms > clip[:, None], axis=1),
              "noise_std": noise_std, "rotated_centre": centre}
    return estimate, values


class _Budgets(NamedTuple):
    """The budget split of 5.5: ``centre_share`` rho for the D medians (``centre`` each), the
    rest rho' = p1 + p2 for the clip threshold (``threshold`` = p1 = clip_share rho') and the
    Gaussian noise (``noise`` = p2)."""

    centre_total: float
    centre: float
    threshold: float
    noise: float

    @classmethod
    def split(cls, rho, *, centre_share, clip_share, size):
        rest = rho - centre_share * rho
        threshold = clip_share * rest
        return cls(centre_share * rho, centre_share * rho / size, threshold, rest - threshold)

    def ledger(self) -> tuple[LedgerEntry, ...]:
        return (
            LedgerEntry("centre", self.centre_total),
            LedgerEntry("clip_threshold", self.threshold),
            LedgerEntry("gaussian_noise", self.noise),
        )


class _Options(NamedTuple):
    """The checked arguments of IOME on data of D padded coordinates (``size``)."""

    rho: float
    lo: float
    hi: float
    rng: np.random.Generator
    rotation_rng: np.random.Generator
    rotations: int
    steps: int
    offset_factor: float
    size: int
    budgets: _Budgets


def _checked_options(shape, *, rho, bounds, rng, rotation_rng, rotations, search_steps, centre_share, clip_share,
                     offset_factor) -> _Options:
    """The arguments of :func:`iome` and :func:`batched_iome` for data of ``shape`` (n x d),
    checked: one ValueError naming the first bad one, or the step budget or work array that
    the request makes unusable."""
    rho = check_rho(rho)
    lo, hi = check_bounds(bounds)
    rng = check_generator(rng)
    rotation_rng = rng if rotation_rng is None else check_generator(rotation_rng)
    rotations = check_positive_int(rotations, "rotations")
    steps = check_search_steps(search_steps, "search_steps")
    centre_share = check_fraction(centre_share, "centre_share", closed_high=False)
    clip_share = check_fraction(clip_share, "clip_share", closed_high=False)
    offset_factor = check_positive(offset_factor, "offset_factor")
    d = shape[1]
    size = next_power_of_two(d)
    budgets = _Budgets.split(rho, centre_share=centre_share, clip_share=clip_share, size=size)
    check_step_budgets(f"rho={rho!r} with centre_share={centre_share!r}, clip_share={clip_share!r} and d={d}",
                       centre=budgets.centre, clip_threshold=budgets.threshold, gaussian_noise=budgets.noise)
    # Work arrays sized by the request: a few vectors of the padded dimension (sparse x has no
    # dense copy to bound them), the signs of every rotation and the noise of every search step.
    check_work_size(4 * 8 * size, f"x of shape {shape}", f"vectors of its padded dimension {size}")
    check_work_size(8 * rotations * size, f"rotations={rotations!r}", f"the signs of {rotations} rotations of {size}")
    check_work_size(8 * steps * size, f"search_steps={steps!r}", f"the noise of {steps} search steps for {size} "
                    "rotated coordinates")
    return _Options(rho, lo, hi, rng, rotation_rng, rotations, steps, offset_factor, size, budgets)


def _clip_target_rank(n, options) -> float:
    """5.5 step 3: the clip threshold's target rank n - offset_factor (2 sqrt(D / (2 p2)) + sqrt(T / (2 p1)))."""
    budgets = options.budgets
    offset = options.offset_factor * (2.0 * math.sqrt(options.size / (2.0 * budgets.noise))
                                      + math.sqrt(options.steps / (2.0 * budgets.threshold)))
    return n - offset


def _run_noise(rng, *, runs, steps, size):
    """The standard normals of ``runs`` runs, run after run, each in the order one run uses them
    (5.5): its centre searches' (T x D), its threshold search's (T) and its Gaussian step's (D).
    Returned as (runs x T x D), (runs x T) and (runs x D)."""
    normals = rng.standard_normal((runs, steps * size + steps + size))
    centre_end = steps * size
    return (normals[:, :centre_end].reshape(runs, steps, size), normals[:, centre_end:centre_end + steps],
            normals[:, centre_end + steps:])


def _rotated_medians(x, data, signs, *, sparse, **search):
    """5.5 step 2: the private binary-search median of every rotated coordinate (``search``: the
    keywords of :func:`binary_search_sorted`). Sparse data: read off per-coordinate counts on the
    search grid (:func:`binary_search_counts`, the same result); dense data: the rotated
    coordinates sorted, one row per coordinate, and for k runs at once (signs k x t x D, the
    noise's searches run by run) one row per run and coordinate: the medians (k x D)."""
    if sparse:
        counts = shared_rotated_counts(x, data, signs, lo=search["lo"], hi=search["hi"], steps=search["steps"])
        return binary_search_counts(counts, **search)
    runs, size, n = signs.shape[:-2], signs.shape[-1], data.shape[0]
    sorted_rotated = rotate_rows_transposed(
        data, signs, out=x.scratch(WORK_ARRAY, runs + (size, n)) if isinstance(x, SharedSample) else None
    )
    sorted_rotated.sort(axis=-1)
    return binary_search_sorted(sorted_rotated.reshape(-1, n), **search).reshape(runs + (size,))


def _shifted_norms(data, signs, centre):
    """||R x_i - centre|| of every row: R is orthogonal, so ||R x - c||^2 = ||x||^2 - 2 x . R^T c
    + ||c||^2 (docs/design.md §5.5, cost notes), sparse mat-vecs on sparse x. For k runs at once
    (signs k x t x D, centre k x D), (k x n): one matrix-vector product per run, as for one."""
    centre_back = unrotate(centre, signs)[..., :data.shape[1], None]
    cross = (data @ centre_back)[..., 0]
    squared = _squared_row_norms(data) - 2.0 * cross + (centre[..., None, :] @ centre[..., None])[..., 0]
    return np.sqrt(np.maximum(squared, 0.0))


def _clipped_mean(data, signs, centre, norms, clip):
    """5.5 step 3: the mean of the shifted rotated rows R x_i - centre, each clipped to norm
    ``clip`` (weight w_i = min(1, C / ||R x_i - c||)), in rotated coordinates; for k runs at once
    (signs k x t x D, centre k x D, norms k x n, clip k x 1), (k x D), one product per run as for
    one. sum_i w_i (R x_i - c) = R (sum_i w_i x_i) - (sum_i w_i) c (docs/design.md §5.5, cost notes)."""
    with np.errstate(over="ignore"):  # a zero norm with a clip above 1.8e8 gives clip / 1e-300 = inf: weight 1
        weights = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    weighted_sum = np.zeros(centre.shape)
    weighted_sum[..., :data.shape[1]] = (data.T @ weights[..., None])[..., 0]
    return (rotate(weighted_sum, signs) - weights.sum(axis=-1)[..., None] * centre) / data.shape[0]


def _squared_row_norms(data) -> np.ndarray:
    """||x_i||^2 of every row of a dense array or a CSR matrix (its stored entries only)."""
    if scipy.sparse.issparse(data):
        return np.asarray(data.multiply(data).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", data, data)
