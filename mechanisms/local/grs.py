"""GRS (Gaboardi, Rogers, Sheffet, AISTATS 2019: "Locally private mean estimation: Z-test and tight
confidence intervals") applied coordinate by coordinate, as the IOME paper compares against (its
Section 6.2), docs/design.md §5.13: KnownVar (GRS Algorithm 1, sigma known) and UnkVar (GRS
Algorithm 3, only sigma in [sigma_min, sigma_max] known, with the binary search of GRS Algorithm 2).

Privacy. The n users (rows of x) are split once into disjoint groups by a permutation drawn from
``rng``; in every coordinate j each user belongs to exactly one step's group and sends exactly one
report about x_ij, (eps_j, delta_j)-LDP (bit flipping and randomized response are eps_j-LDP, the
Gaussian mechanism (eps_j, delta_j)-LDP). A user thus sends d reports, one per coordinate, and the
advanced composition theorem (Dwork and Roth 2014, Theorem 3.20) over the d coordinates gives
(eps, delta)-LDP with (eps_j, delta_j) = :func:`~mechanisms.accounting.per_step_budget` (eps,
delta, steps=d). The IOME authors' code instead gave every coordinate eps / sqrt(d), ignored delta
and let the same users answer every step; we do not (docs/design.md §5.13).

Settings as the IOME authors ran GRS (its Section 6.2): beta = 0.01, delta = 1e-7, R the prior
ball's radius (each coordinate of the mean lies within R of the centre's coordinate), sigma =
``max_std`` for KnownVar, sigma_min = 0.1 and sigma_max = R for UnkVar; KnownVar's bin step gets a
share of the users (half) instead of GRS's n1 formula, which exceeds n at these eps.

Every randomizer is drawn through its exact aggregate (the sum of the group's reports has a known
distribution: sums of Binomials for the bit and randomized-response reports, one Gaussian for the
mean step), vectorised over users and coordinates; :func:`bit_flip_report` and
:func:`randomized_response_report` are the per-user randomizers the aggregates stand for.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from .._layout import sample_data
from .._validation import (
    MAX_MAGNITUDE,
    check_bounds,
    check_budget,
    check_data,
    check_fraction,
    check_generator,
    check_positive,
    check_positive_int,
    check_work_size,
)
from ..accounting import ApproxLedgerEntry, Estimate, per_step_budget
from ..coinpress import public_prior_ball

LEDGER_STEP = "coordinates_advanced_composition"
MEDIAN_LAMBDA = 0.098  # GRS Algorithm 3: the median search's tolerance lambda
SPREAD_LAMBDA = 0.052  # GRS Algorithm 3: the Phi(1)-quantile search's tolerance lambda
PHI_1 = 0.5 * math.erfc(-1.0 / math.sqrt(2.0))  # Phi(1) = 0.8413...: mu + sigma is this quantile of N(mu, sigma^2)


# ---------------------------------------------------------------- the engine's two mechanisms


def grs_known_var(x, *, eps, bounds, rng, prior_ball=None, max_std=None, delta=1e-7, beta=0.01,
                  locate_share=0.5) -> Estimate:
    """GRS KnownVar (GRS Algorithm 1) on every coordinate of the rows of ``x`` (n users x d),
    (eps, delta)-LDP over all coordinates (module docstring). sigma = ``max_std`` (the engine passes
    the source's largest coordinate std; required). Range per coordinate [c_j - R, c_j + R] from
    ``prior_ball`` = (centre, R), else from ``bounds`` = (lo, hi): c = (lo + hi) / 2, R = (hi - lo) / 2.

    GRS Algorithm 1 step 1: floor(``locate_share`` n) users (the IOME authors: n // 2) each one-hot
    encode their bin among u = int(2R / sigma + 1) bins of width sigma from c_j - R (values
    outside go to the nearest end bin) and flip every bit with probability 1 / (e^{eps_j/2} + 1).
    Step 2: the aggregator debiases the bin counts and takes the heaviest bin (ties: the lowest);
    the centre is its midpoint. Step 3: diff = 2 sigma + sigma sqrt(2 ln(8 n / beta)). Step 4:
    every other user clips its value to [centre - diff, centre + diff] and adds N(0, s^2) (see
    :func:`gaussian_noise_std`); the estimate is the mean of these reports.

    Randomness, in this order: the permutation of the users, the bin counts' Binomials
    (:func:`bit_flip_totals`), the d Gaussians of the mean step.
    Ledger: one ``ApproxLedgerEntry`` holding (eps, delta). Diagnostics: "accounting",
    "requested_eps", "delta", "coordinate_eps", "coordinate_delta", "groups", "bins", "centre",
    "half_width", "noise_std".
    """
    data, setting = _common_setting(x, eps=eps, delta=delta, beta=beta, bounds=bounds, rng=rng,
                                    prior_ball=prior_ball)
    if max_std is None:
        raise ValueError("max_std must be given: KnownVar needs sigma, the largest coordinate standard deviation, "
                         "which this data source does not state (max_std=None); use grs_unknown_var")
    sigma = _check_sigma(max_std, "max_std")
    locate_share = check_fraction(locate_share, "locate_share", closed_high=False)
    n, d = data.shape
    locate = math.floor(locate_share * n)
    _check_groups(n, {"locate": locate, "mean": n - locate}, f"locate_share={locate_share!r}")
    bins = _bin_count(setting["radius"], sigma, d, max_std)
    half_width = sigma * (2.0 + math.sqrt(2.0 * math.log(8.0 * n / beta)))  # GRS Algorithm 1 step 3
    noise_std = _checked_noise_std(half_width, setting)

    order = rng.permutation(n)
    centre = _locate_bin(data[order[:locate]], setting, sigma=sigma, bins=bins, rng=rng)
    mean = _gaussian_mean(data[order[locate:]], centre, half_width, noise_std, rng)
    diagnostics = _diagnostics(setting, groups={"locate": locate, "mean": n - locate}, centre=centre,
                               half_width=np.full(d, half_width), noise_std=np.full(d, noise_std))
    diagnostics["bins"] = bins
    return Estimate(mean=mean, ledger=setting["ledger"], diagnostics=diagnostics)


def grs_unknown_var(x, *, eps, bounds, rng, prior_ball=None, delta=1e-7, beta=0.01,
                    sigma_min=0.1, sigma_max=None, median_share=0.25, spread_share=0.25) -> Estimate:
    """GRS UnkVar (GRS Algorithm 3) on every coordinate of the rows of ``x`` (n users x d),
    (eps, delta)-LDP over all coordinates (module docstring). Range per coordinate as
    :func:`grs_known_var`; sigma only known to lie in [``sigma_min``, ``sigma_max``] (default
    0.1 and R, the IOME authors').

    GRS Algorithm 3 step 1: the median by the binary search of GRS Algorithm 2 over
    [c_j - R, c_j + R], T_med = ceil(log2(8 R / sigma_min)) rounds, lambda = 0.098, each round
    with its own group of floor(``median_share`` n) // T_med users (:func:`_binary_search`).
    Step 2: the Phi(1) quantile (0.8413) by the same search over [c_j - R, c_j + R + sigma_max],
    T_sd = ceil(log2((8 R + 4 sigma_max) / sigma_min)) rounds, lambda = 0.052, groups of
    floor(``spread_share`` n) // T_sd users; sigma_hat = max(quantile - median, 0). Step 3:
    diff = sigma_hat (1/2 + 2 sqrt(2 ln(8 n / beta))); the remaining users (the rest, with the
    remainders of the two divisions) run KnownVar's step 4 around the median.

    Randomness, in this order: the permutation of the users, the median rounds' Binomials, the
    quantile rounds' Binomials (:func:`randomized_response_total`, round by round), the d
    Gaussians of the mean step. Ledger as :func:`grs_known_var`. Diagnostics as there (without
    "bins"; "centre" is the median), and "rounds", "phi1_quantile" and "sigma_hat".
    """
    data, setting = _common_setting(x, eps=eps, delta=delta, beta=beta, bounds=bounds, rng=rng,
                                    prior_ball=prior_ball)
    radius = setting["radius"]
    sigma_min = _check_sigma(sigma_min, "sigma_min")
    sigma_max = radius if sigma_max is None else _check_sigma(sigma_max, "sigma_max")
    if not sigma_min < sigma_max:
        raise ValueError(f"sigma_min must be below sigma_max (0 < sigma_min < sigma_max), got sigma_min={sigma_min!r}, "
                         f"sigma_max={sigma_max!r}" + (" (by default R, the radius of prior_ball or half the width of "
                                                       "bounds)" if sigma_max == radius else ""))
    n, d = data.shape
    rounds = {"median": _rounds(math.log2(8.0) + math.log2(radius) - math.log2(sigma_min)),
              "spread": _rounds(math.log2(8.0 * radius + 4.0 * sigma_max) - math.log2(sigma_min))}
    groups = _unknown_var_groups(n, median_share, spread_share, rounds)
    factor = 0.5 + 2.0 * math.sqrt(2.0 * math.log(8.0 * n / beta))  # GRS Algorithm 3 step 3
    _checked_noise_std(factor * (2.0 * radius + sigma_max), setting)  # the largest sigma_hat: refused before any work

    order = rng.permutation(n)
    median_users, rest = np.split(order, [groups["median"]])
    spread_users, mean_users = np.split(rest, [groups["spread"]])
    low, high = setting["centre"] - radius, setting["centre"] + radius
    median = _binary_search(data, median_users, rounds["median"], low=low, high=high, quantile=0.5,
                            tolerance=MEDIAN_LAMBDA, eps=setting["coordinate_eps"], rng=rng)
    spread = _binary_search(data, spread_users, rounds["spread"], low=low, high=high + sigma_max, quantile=PHI_1,
                            tolerance=SPREAD_LAMBDA, eps=setting["coordinate_eps"], rng=rng)
    sigma_hat = np.maximum(spread - median, 0.0)
    half_width = factor * sigma_hat
    noise_std = gaussian_noise_std(half_width, eps=setting["coordinate_eps"], delta=setting["coordinate_delta"])
    mean = _gaussian_mean(data[mean_users], median, half_width, noise_std, rng)
    diagnostics = _diagnostics(setting, groups=groups, centre=median, half_width=half_width, noise_std=noise_std)
    diagnostics.update(rounds=rounds, phi1_quantile=spread, sigma_hat=sigma_hat)
    return Estimate(mean=mean, ledger=setting["ledger"], diagnostics=diagnostics)


# ---------------------------------------------------------------- the randomizers and their exact aggregates


def bit_flip_report(bins, *, size, eps, rng) -> np.ndarray:
    """Per-user bit flipping (GRS Algorithm 1 step 1): each user's one-hot vector of its bin
    (``bins``: one index or an array of them, in [0, size)) with every bit flipped independently
    with probability 1 / (e^{eps/2} + 1); eps-LDP, as two inputs' vectors differ in two bits.
    Returns booleans of shape ``bins.shape + (size,)``."""
    size = check_positive_int(size, "size")
    eps = check_budget(eps, "eps")
    rng = check_generator(rng)
    bins = np.asarray(bins)
    if bins.dtype.kind not in "iu" or np.any((bins < 0) | (bins >= size)):
        raise ValueError(f"bins must be integers in [0, size={size}), got bins={bins!r}")
    one_hot = bins[..., None] == np.arange(size)
    return one_hot ^ (rng.random(one_hot.shape) < _flip_probability(eps))


def bit_flip_totals(counts, users, *, eps, rng) -> np.ndarray:
    """The exact aggregate of :func:`bit_flip_report` over a group of ``users``: per bin, the sum of
    the reported bits, Binomial(c_b, 1 - f) + Binomial(users - c_b, f) with c_b = ``counts`` (users
    in bin b, any shape) and f the flip probability. Draws the first Binomials, then the second."""
    flip = _flip_probability(eps)
    counts = np.asarray(counts)
    return rng.binomial(counts, 1.0 - flip) + rng.binomial(users - counts, flip)


def randomized_response_report(answers, *, eps, rng) -> np.ndarray:
    """Per-user randomized response (GRS Algorithm 2): each answer bit (booleans, any shape) kept
    with probability e^eps / (e^eps + 1), else flipped; eps-LDP."""
    eps = check_budget(eps, "eps")
    rng = check_generator(rng)
    answers = np.asarray(answers, dtype=bool)
    return answers ^ (rng.random(answers.shape) >= _keep_probability(eps))


def randomized_response_total(yes, users, *, eps, rng) -> np.ndarray:
    """The exact aggregate of :func:`randomized_response_report` over a group of ``users`` of which
    ``yes`` (any shape) answer 1: the number of reported 1s, Binomial(yes, p) + Binomial(users -
    yes, 1 - p), p the keep probability. Draws the first Binomials, then the second."""
    keep = _keep_probability(eps)
    yes = np.asarray(yes)
    return rng.binomial(yes, keep) + rng.binomial(users - yes, 1.0 - keep)


def gaussian_noise_std(half_width, *, eps, delta):
    """Per-user noise std of GRS Algorithm 1 step 4, the (eps, delta) Gaussian mechanism of Dwork and
    Roth 2014, Theorem A.1, for values clipped to a range of width 2 ``half_width`` (the
    sensitivity; a number or an array): s = 2 diff sqrt(2 ln(1.25 / delta)) / eps, valid for eps < 1. (The facts sheet
    writes GRS's variance as 8 diff^2 ln(2 / delta) / eps^2; we use Dwork and Roth's constant 1.25.)"""
    return 2.0 * half_width * math.sqrt(2.0 * math.log(1.25 / delta)) / eps


def _flip_probability(eps: float) -> float:
    return 1.0 / (math.exp(eps / 2.0) + 1.0)


def _keep_probability(eps: float) -> float:
    return 1.0 / (1.0 + math.exp(-eps))


# ---------------------------------------------------------------- the steps, vectorised over coordinates


def _locate_bin(group: np.ndarray, setting: dict, *, sigma: float, bins: int, rng) -> np.ndarray:
    """GRS Algorithm 1 steps 1-2 on every coordinate: the midpoint of the heaviest debiased bin."""
    users, d = group.shape
    start = setting["centre"] - setting["radius"]
    index = np.clip(np.floor((group - start) / sigma), 0, bins - 1).astype(np.int64)
    index += np.arange(d) * bins  # coordinate j's bins at j * bins ...: one bincount for all coordinates
    counts = np.bincount(index.ravel(), minlength=d * bins).reshape(d, bins)
    totals = bit_flip_totals(counts, users, eps=setting["coordinate_eps"], rng=rng)
    # Debias: each reported bit b -> (b - f) / (1 - 2 f), 1 - 2 f = tanh(eps / 4) (GRS Algorithm 1 step 2).
    debiased = (totals - users * _flip_probability(setting["coordinate_eps"])) / math.tanh(
        setting["coordinate_eps"] / 4.0)
    heaviest = np.argmax(debiased, axis=1)  # the first maximum: ties go to the lowest bin
    return start + (heaviest + 0.5) * sigma


def _binary_search(data, users, rounds, *, low, high, quantile, tolerance, eps, rng) -> np.ndarray:
    """GRS Algorithm 2 on every coordinate: round r asks its own group (``users`` split into
    ``rounds`` equal groups) "is your value < mid?" by randomized response, debiases the share z
    of yes, moves right if z < quantile - tolerance / 2, left if z > quantile + tolerance / 2,
    else stops (the coordinate keeps its interval for the remaining rounds). Returns the midpoint
    of each coordinate's final interval (the mid where it stopped)."""
    stopped = np.zeros(data.shape[1], dtype=bool)
    keep = _keep_probability(eps)
    for group in np.split(users, rounds):
        mid = low / 2.0 + high / 2.0
        yes = np.count_nonzero(data[group] < mid, axis=0)
        reported = randomized_response_total(yes, group.size, eps=eps, rng=rng)
        share = (reported / group.size - (1.0 - keep)) / math.tanh(eps / 2.0)  # 2 p - 1 = tanh(eps / 2)
        right = ~stopped & (share < quantile - tolerance / 2.0)
        left = ~stopped & (share > quantile + tolerance / 2.0)
        stopped |= ~(right | left)
        low, high = np.where(right, mid, low), np.where(left, mid, high)
    return low / 2.0 + high / 2.0


def _gaussian_mean(group: np.ndarray, centre, half_width, noise_std, rng) -> np.ndarray:
    """GRS Algorithm 1 step 4: the mean of the group's clipped values plus N(0, s^2 / m), the exact
    aggregate of m users each adding N(0, s^2) to its clipped value."""
    clipped = np.clip(group, centre - half_width, centre + half_width)
    return clipped.mean(axis=0) + rng.standard_normal(group.shape[1]) * (noise_std / math.sqrt(group.shape[0]))


# ---------------------------------------------------------------- checks, budget and diagnostics


def _common_setting(x, *, eps, delta, beta, bounds, rng, prior_ball) -> tuple[np.ndarray, dict]:
    """Checked data and the setting both algorithms share: range (centre per coordinate, R),
    per-coordinate budget and the ledger."""
    data = check_data(sample_data(x))
    d = data.shape[1]
    eps = check_budget(eps, "eps")
    delta = check_fraction(delta, "delta", closed_high=False)
    check_fraction(beta, "beta", closed_high=False)
    lo, hi = check_bounds(bounds)
    check_generator(rng)
    if prior_ball is None:
        centre, radius = np.full(d, lo / 2.0 + hi / 2.0), hi / 2.0 - lo / 2.0
    else:
        centre, radius, _ = public_prior_ball(prior_ball, bounds, d)
    coordinate_eps, coordinate_delta = per_step_budget(eps, delta, steps=d)
    if not coordinate_eps < 1.0:
        raise ValueError(f"eps={eps!r} with d={d} gives each coordinate eps_j={coordinate_eps!r}: the Gaussian "
                         "mechanism of GRS's mean step (Dwork and Roth, Theorem A.1) needs eps_j < 1")
    if not coordinate_delta >= sys.float_info.min:
        raise ValueError(f"delta={delta!r} with d={d} gives each coordinate delta_j={coordinate_delta!r}, below "
                         "float64's normal range; use a larger delta")
    basic = coordinate_eps == eps / d and coordinate_delta == delta / d
    return data, {
        "centre": centre, "radius": radius, "eps": eps, "delta": delta, "d": d,
        "coordinate_eps": coordinate_eps, "coordinate_delta": coordinate_delta,
        "accounting": "basic composition" if basic else "advanced composition",
        "ledger": (ApproxLedgerEntry(LEDGER_STEP, eps, delta),),
    }


def _check_sigma(value, name: str) -> float:
    """A standard deviation (bound) > 0 and at most MAX_MAGNITUDE, as values and bounds."""
    sigma = check_positive(value, name)
    if sigma > MAX_MAGNITUDE:
        raise ValueError(f"{name} must be at most {MAX_MAGNITUDE:g}, got {name}={value!r}")
    return sigma


def _check_groups(n: int, groups: dict, shares: str) -> None:
    empty = [name for name, size in groups.items() if size < 1]
    if empty:
        raise ValueError(f"x has n={n} users, too few for {shares}: the {' and '.join(empty)} group(s) would be empty "
                         f"(group sizes {groups})")


def _bin_count(radius: float, sigma: float, d: int, max_std) -> int:
    """u = int(2R / sigma + 1) bins of width sigma (the IOME authors'), refused if d x u counts are too large."""
    bins = 2.0 * (radius / sigma) + 1.0
    check_work_size(24.0 * d * bins, f"max_std={max_std!r} with R={radius:g} (from bounds or prior_ball)",
                    f"{bins:.3g} bins per coordinate")
    return int(bins)


def _rounds(log2_width: float) -> int:
    """ceil(log2(...)) rounds of a search, at least 1 (at most about 1410: R <= 1e100, sigma_min >= 5e-324)."""
    return max(1, math.ceil(log2_width))


def _unknown_var_groups(n: int, median_share, spread_share, rounds: dict) -> dict:
    """Group sizes of UnkVar: whole rounds of the two searches, the rest for the mean."""
    median_share = check_fraction(median_share, "median_share", closed_high=False)
    spread_share = check_fraction(spread_share, "spread_share", closed_high=False)
    if not median_share + spread_share < 1.0:
        raise ValueError(f"median_share + spread_share must be below 1 (the rest of the users estimate the mean), "
                         f"got median_share={median_share!r}, spread_share={spread_share!r}")
    per_round = {"median": math.floor(median_share * n) // rounds["median"],
                 "spread": math.floor(spread_share * n) // rounds["spread"]}
    groups = {name: size * rounds[name] for name, size in per_round.items()}
    groups["mean"] = n - groups["median"] - groups["spread"]
    _check_groups(n, {"median round": per_round["median"], "spread round": per_round["spread"],
                      "mean": groups["mean"]},
                  f"median_share={median_share!r} over {rounds['median']} rounds and spread_share={spread_share!r} "
                  f"over {rounds['spread']} rounds (GRS Algorithm 3's rounds grow with R / sigma_min, R from "
                  "prior_ball or bounds)")
    return groups | {"median_per_round": per_round["median"], "spread_per_round": per_round["spread"]}


def _checked_noise_std(half_width: float, setting: dict) -> float:
    """:func:`gaussian_noise_std` at the coordinate budget, refused before any work if it overflows."""
    std = gaussian_noise_std(half_width, eps=setting["coordinate_eps"], delta=setting["coordinate_delta"])
    if not math.isfinite(std) or std > MAX_MAGNITUDE ** 2:
        raise ValueError(f"eps={setting['eps']!r} with d={setting['d']} and R={setting['radius']:g}: the mean "
                         f"step's noise std ({std:.3g}) would overflow float64; use a larger eps or a smaller range")
    return std


def _diagnostics(setting: dict, *, groups, centre, half_width, noise_std) -> dict:
    return {
        "accounting": setting["accounting"], "requested_eps": setting["eps"], "delta": setting["delta"],
        "coordinate_eps": setting["coordinate_eps"], "coordinate_delta": setting["coordinate_delta"],
        "groups": groups, "centre": centre, "half_width": half_width, "noise_std": noise_std,
    }
