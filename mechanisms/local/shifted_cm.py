"""The IOME paper's Shifted-CM in the local model (its Section 5.1, Theorem 5.1; docs/design.md
§5.13): three rounds, every user randomizing its own reports, rho-zCDP per user, released as
(eps, delta)-DP so that it meets Gaboardi, Rogers and Sheffet's baselines at one (eps, delta)
(the IOME paper's lines 188-190)."""
from __future__ import annotations

import math
import sys
from typing import NamedTuple

import numpy as np

from .._layout import sample_data
from .._validation import (
    check_bounds,
    check_budget,
    check_data,
    check_fraction,
    check_generator,
    check_positive_int,
    check_search_steps,
    check_step_budgets,
    check_work_size,
)
from ..accounting import ApproxLedgerEntry, Estimate, LedgerEntry, approx_dp_to_zcdp
from ..hadamard import next_power_of_two, random_signs, rotate_rows_transposed, unrotate
from .range_counting import aggregate_range_counts, cells_of, consistent_counts, report_noise_std, tree_quantile

DEFAULT_DELTA = 1e-7  # the IOME authors' delta for every local experiment (their local_tests.py)


class RoundBudgets(NamedTuple):
    """The per-user zCDP budget of each round; they sum to the rho of the call."""

    medians: float
    threshold: float
    noise: float

    def ledger(self) -> tuple[LedgerEntry, ...]:
        return (LedgerEntry("round_1_medians", self.medians), LedgerEntry("round_2_threshold", self.threshold),
                LedgerEntry("round_3_noise", self.noise))


def round_budgets(rho: float, *, centre_share: float, clip_share: float) -> RoundBudgets:
    """Round 1 gets ``centre_share`` of rho; of the rest rho', round 2 ``clip_share`` and round 3
    the remainder (the IOME authors' split: 1/4 to the medians, p1 = rho' / 4, p2 = 3 rho' / 4)."""
    medians = centre_share * rho
    rest = rho - medians
    threshold = clip_share * rest
    return RoundBudgets(medians, threshold, rest - threshold)


def local_clip_rank(n: int, size: int, *, levels: int, budgets: RoundBudgets) -> float:
    """Round 2's target rank, n - 2 sqrt(n D / (2 p2)) - sqrt(n T) sigma: the central CM's offset
    (docs/design.md §5.11) with its noise term scaled by sqrt(n), as the IOME paper's Section 5.1
    scales step 4's noise, and its count term the standard deviation of the tree's deepest prefix
    count (T nodes, each the sum of n reports of noise sigma = :func:`report_noise_std` at p1).
    It may be below 0 where the budget is small: the walk then ends in the lowest cell."""
    noise_term = 2.0 * math.sqrt(n * size / (2.0 * budgets.noise))
    count_term = math.sqrt(n * levels) * report_noise_std(levels=levels, rho=budgets.threshold)
    return n - noise_term - count_term


def iome_local(x, *, eps, bounds, rng, delta=DEFAULT_DELTA, rotations=3, search_steps=10, centre_share=0.25,
               clip_share=0.25, rotation_rng=None) -> Estimate:
    """Locally private mean of the rows of ``x`` (n users x d), every coordinate in ``bounds``.

    rho = the largest zCDP budget that converts to (``eps``, ``delta``)-DP (Bun and Steinke,
    Proposition 1.3; :func:`mechanisms.approx_dp_to_zcdp`), split over three rounds
    (:func:`round_budgets`). Every user takes part in every round; its three reports compose to
    rho-zCDP, which is (eps, delta)-DP for that user whatever the others send.

    1. Rotation (public randomness): D = d padded to a power of two, R = (H D_1)...(H D_t), t =
       ``rotations``; every user rotates its own row.
    2. Round 1, medians: every user reports its D rotated coordinates on D range-counting trees
       of T = ``search_steps`` levels over [lo, hi] / sqrt(D) (:mod:`.range_counting`, the IOME
       paper's Lemma 5.1); the aggregator walks each tree to its median: the centre c.
    3. Round 2, threshold: every user reports the norm ||R x_i - c|| on one tree over [0, hi];
       C = the norm at :func:`local_clip_rank` (Section 5.1: the local model's quantile).
    4. Round 3, mean: every user clips R x_i - c to norm C and adds N(0, (2 C)^2 / (2 p2) I) (the
       Gaussian mechanism at sensitivity 2 C, IOME Lemma 2.1); the aggregator averages, adds c,
       rotates back and drops the padding.

    The aggregates are drawn exactly (the sum of the users' Gaussian reports is the true sum plus
    one Gaussian of n times the variance): :func:`.range_counting.range_report` and
    :func:`clipped_report` are the per-user randomizers the audit runs. Ledger: one (eps, delta)
    entry summing to ``eps``; the rounds' rho in ``diagnostics["rho_ledger"]``.
    """
    data = check_data(sample_data(x))
    lo, hi = check_bounds(bounds)
    check_generator(rng)
    rotation_rng = rng if rotation_rng is None else check_generator(rotation_rng)
    rho = approx_dp_to_zcdp(check_budget(eps, "eps"), delta=delta)
    rotations = check_positive_int(rotations, "rotations")
    levels = check_search_steps(search_steps, "search_steps")
    check_fraction(centre_share, "centre_share", closed_high=False)
    check_fraction(clip_share, "clip_share", closed_high=False)
    n, d = data.shape
    size = next_power_of_two(d)
    check_work_size(8 * size * n, f"x of shape {data.shape}", "its rotated rows")
    check_work_size(8 * size * (2 << min(levels, 64)), f"search_steps={search_steps}", "the range-counting trees")
    # the trees' cells, (hi - lo) / (sqrt(D) 2^T) wide, must be normal float64 numbers
    cell_width = (hi * (1.0 / math.sqrt(size)) - lo * (1.0 / math.sqrt(size))) / 2.0**levels
    if not cell_width >= sys.float_info.min:
        raise ValueError(f"bounds=({lo!r}, {hi!r}) are too narrow for search_steps={search_steps}: the range-counting "
                         "trees' cells, (hi - lo) / (sqrt(D) 2^T) wide, must be normal float64 numbers; rescale "
                         "the data")
    budgets = round_budgets(rho, centre_share=centre_share, clip_share=clip_share)
    check_step_budgets(f"eps={eps!r}, delta={delta!r} with centre_share={centre_share!r} and clip_share="
                       f"{clip_share!r}", **budgets._asdict())

    # Step 1: the public rotation, drawn first.
    signs = random_signs(rotation_rng, rotations=rotations, size=size)
    rotated = rotate_rows_transposed(data, signs)  # D x n

    # Step 2 (round 1): a median per rotated coordinate from its tree.
    half = 1.0 / math.sqrt(size)
    coordinate_cells = cells_of(rotated.T, lo=lo * half, hi=hi * half, levels=levels)
    median_counts = consistent_counts(aggregate_range_counts(coordinate_cells, levels=levels, rho=budgets.medians,
                                                             rng=rng), levels=levels, total=n)
    centre = tree_quantile(median_counts, levels=levels, target_rank=n / 2.0, lo=lo * half, hi=hi * half)

    # Step 3 (round 2): the clip threshold from one tree over the shifted norms.
    rotated -= centre[:, None]
    norms = np.sqrt(np.einsum("ij,ij->j", rotated, rotated))
    target_rank = local_clip_rank(n, size, levels=levels, budgets=budgets)
    norm_counts = consistent_counts(aggregate_range_counts(cells_of(norms, lo=0.0, hi=hi, levels=levels),
                                                           levels=levels, rho=budgets.threshold, rng=rng),
                                    levels=levels, total=n)
    clip = float(tree_quantile(norm_counts, levels=levels, target_rank=target_rank, lo=0.0, hi=hi)[0])

    # Step 4 (round 3): the users' clipped, noised rows, averaged; the centre added back, rotated back.
    noise_std = clipped_noise_std(clip, rho=budgets.noise)
    with np.errstate(divide="ignore"):
        weights = np.minimum(1.0, clip / norms)
    clipped_sum = rotated @ weights
    mean = (clipped_sum + rng.standard_normal(size) * (noise_std * math.sqrt(n))) / n
    estimate = unrotate(mean + centre, signs)[:d]

    rho_ledger = budgets.ledger()
    diagnostics = {
        "accounting": "exact",
        "requested_eps": float(eps),
        "delta": float(delta),
        "rho": rho,
        "rho_ledger": rho_ledger,
        "rounds": 3,
        "rotated_centre": centre,
        "clip_threshold": clip,
        "clip_target_rank": target_rank,
        "fraction_clipped": float(np.mean(norms > clip)),
        "noise_std": noise_std,
        "padded_dimension": size,
        "rotation_signs": signs,
    }
    return Estimate(mean=estimate, ledger=(ApproxLedgerEntry("three_rounds_zcdp", float(eps), float(delta)),),
                    diagnostics=diagnostics)


def clipped_noise_std(clip: float, *, rho: float) -> float:
    """Round 3's per-user noise: sensitivity 2 C (two rows clipped to norm C) over sqrt(2 rho)."""
    return 2.0 * clip / math.sqrt(2.0 * rho)


def clipped_report(shifted, *, clip: float, rho: float, rng: np.random.Generator) -> np.ndarray:
    """Round 3's per-user randomizer: every row of ``shifted`` (users x D, already rotated and
    shifted) clipped to norm ``clip`` plus N(0, :func:`clipped_noise_std` ^ 2 I)."""
    shifted = np.asarray(shifted, dtype=float)
    norms = np.linalg.norm(shifted, axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        clipped = shifted * np.minimum(1.0, clip / norms)
    return clipped + rng.standard_normal(shifted.shape) * clipped_noise_std(clip, rho=rho)

