"""CoinPress: private mean estimation by shrinking a confidence ball (docs/design.md §5.9).

Biswas, Dong, Kamath, Ullman, "CoinPress: Practical Private Mean and Covariance Estimation"
(NeurIPS 2020), the mean estimator: one step (MVM) projects the data onto a ball around a public
centre, releases the noisy mean of the projected points and a smaller ball that holds the mean
with high probability; the recursion (MVMRec) repeats it t times from a public prior ball
B(c, r). Data are assumed N(mu, S) with a known covariance S (identity by default): the steps
run on the whitened data S^(-1/2) x.

Privacy: rho-zCDP under replace-one neighbours (n public) whatever the data. Every step is the
Gaussian mechanism on a mean of points projected onto a ball of radius C around a centre that
depends only on public inputs and earlier releases (l2 sensitivity 2C / n), and the steps
compose by adding their budgets. The radii, clip radii and noise scales use only public
numbers (n, d, rho, r, the budget split): :func:`coinpress_schedule` computes them before any
data are read, and only the centres are random.

Two forms of the clip radius (``clip``): ``"code"``, the form the authors' experiment code runs
(it drew every published mean figure), and ``"paper"``, the form of the paper's analysis as
secondary sources state it (not checked against the paper's text).
"""
from __future__ import annotations

import math
import sys
from typing import NamedTuple

import numpy as np

from ._layout import sample_data
from ._validation import (
    MAX_MAGNITUDE,
    as_real,
    check_bounds,
    check_choice,
    check_data,
    check_fraction,
    check_generator,
    check_positive,
    check_positive_int,
)
from .accounting import Estimate, LedgerEntry, check_rho, ledger_total

CLIP_FORMS = ("code", "paper")
# The covariances coinpress_mean assumes from public knowledge (coinpress_oracle takes the true one).
COVARIANCES = ("sigma_max", "identity")
# O(log R) steps suffice (the radius shrinks geometrically while noise dominates), and a radius
# of at most 1e100 needs far fewer than this; more steps only split the budget thinner.
MAX_STEPS = 1000
# Clip radii and noise scales beyond this would overflow float64 once squared, summed over d
# coordinates or mapped back through S^(1/2): such requests are refused before any work.
_SCHEDULE_LIMIT = 1e200
# Every step's budget must be a normal float64 number (else its noise scale is inf or NaN).
MIN_STEP_BUDGET = sys.float_info.min
# beta from here on: the paper form's levels beta / (4 n (t - 1)) stay normal float64 numbers.
MIN_BETA = 1e-200
# The smallest positive float64: a prior radius that would round below it is rounded up to it.
_SMALLEST_RADIUS = math.ulp(0.0)
# Relative asymmetry allowed in a covariance matrix (rounding of its computation).
_SYMMETRY_TOLERANCE = 1e-10


class CoinPressStep(NamedTuple):
    """The public quantities of one step (MVM) of :func:`coinpress`: its budget ``rho``, the
    radius r of the ball it starts from, the clip radius C, the noise std sigma per coordinate
    and the radius r' of the ball it hands on."""

    rho: float
    radius: float
    clip_radius: float
    noise_std: float
    next_radius: float


def gaussian_tail_radius(d, b) -> float:
    """G(d, b) = sqrt(d + 2 sqrt(d ln(1/b)) + 2 ln(1/b)): for Z ~ N(0, I_d), P[||Z||_2 > G] <= b
    (Laurent and Massart 2000, Lemma 1; the tail bound of every CoinPress step)."""
    d = check_positive_int(d, "d")
    b = check_fraction(b, "b", closed_high=False)
    log_term = math.log(1.0 / b)
    return math.sqrt(d + 2.0 * math.sqrt(d * log_term) + 2.0 * log_term)


def coinpress_budget_shares(steps) -> tuple[float, ...]:
    """The budget split of the CoinPress mean experiments: the last step 3/4, each of the others
    1 / (4 (t - 1)); one step takes everything. Shares of rho, summing to 1."""
    steps = check_positive_int(steps, "steps")
    if steps == 1:
        return (1.0,)
    return (0.25 / (steps - 1),) * (steps - 1) + (0.75,)


def coinpress_schedule(n, d, *, rho, radius, steps=2, budget_shares=None, beta=0.01, clip="code"):
    """The public quantities of every step of :func:`coinpress` (a tuple of :class:`CoinPressStep`),
    computed from n, d and the options alone (docs/design.md §5.9, steps 1-2 and 5)."""
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    rho = check_rho(rho)
    radius = _check_radius(radius)
    steps = checked_steps(steps)
    beta = check_fraction(beta, "beta", closed_high=False)
    if beta < MIN_BETA:
        raise ValueError(f"beta must be at least {MIN_BETA:g} (its shares per step and point must stay normal "
                         f"float64 numbers), got beta={beta!r}")
    clip = check_choice(clip, "clip", CLIP_FORMS)
    shares = checked_shares(budget_shares, steps)

    # Step 1: budgets rho_i = share_i rho (they sum to rho: zCDP composes additively) and the
    # tail radii. Code form: one gamma = G(d, beta) for the clip and the radius update of every
    # step (beta = 0.01 as hard-coded there). Paper form: beta_i = beta / (2 (t - 1)) for the
    # first t - 1 steps and beta / 2 for the last; gamma1 = G(d, beta_i / (2n)) (all n points,
    # by a union bound), gamma2 = G(d, beta_i / 2) (the noisy mean).
    total = math.fsum(shares)
    step_rhos = [rho * share / total for share in shares]
    for i, step_rho in enumerate(step_rhos, 1):
        if not step_rho >= MIN_STEP_BUDGET:
            raise ValueError(
                f"rho={rho!r} with budget_shares={budget_shares!r}: step {i} gets {step_rho!r}, which underflows "
                f"float64 (it must be at least {MIN_STEP_BUDGET:g}); use larger shares or a larger budget"
            )
    if clip == "code":
        gamma = gaussian_tail_radius(d, beta)
        levels = [(gamma, gamma)] * steps
    else:
        betas = [beta / (2.0 * (steps - 1)) for _ in range(steps - 1)] + [beta / 2.0]
        levels = [(gaussian_tail_radius(d, b / (2.0 * n)), gaussian_tail_radius(d, b / 2.0)) for b in betas]

    schedule = []
    r = radius
    for i, (step_rho, (gamma_clip, gamma_radius)) in enumerate(zip(step_rhos, levels), 1):
        # Step 2: the clip radius. Code: C = min(sqrt(r^2 + 6 r + gamma^2), r + gamma) (the first
        # term is the smaller one whenever gamma > 3: for every d at beta = 0.01, where
        # gamma >= sqrt(2 ln 100) = 3.03); paper: C = r + gamma1.
        if clip == "code":
            clip_radius = min(math.hypot(r, math.sqrt(6.0 * r + gamma_clip * gamma_clip)), r + gamma_clip)
        else:
            clip_radius = r + gamma_clip
        # Step 4: sigma = (2 C / n) / sqrt(2 rho_i), the Gaussian mechanism for l2 sensitivity 2C / n.
        sigma = (2.0 * clip_radius / n) / math.sqrt(2.0 * step_rho)
        # Step 5: r' = gamma2 sqrt(1/n + sigma^2) (without clipping, c' - mu ~ N(0, (1/n + sigma^2) I)).
        next_r = gamma_radius * math.hypot(1.0 / math.sqrt(n), sigma)
        if not (clip_radius <= _SCHEDULE_LIMIT and sigma <= _SCHEDULE_LIMIT and next_r <= _SCHEDULE_LIMIT):
            raise ValueError(
                f"rho={rho!r} with radius={radius!r}, n={n}, steps={steps} and budget_shares={budget_shares!r}: "
                f"step {i} would have clip radius {clip_radius:.3g} and noise std {sigma:.3g}, beyond "
                f"{_SCHEDULE_LIMIT:g} (float64 overflows once they are squared and summed); use a larger budget or a "
                "smaller radius"
            )
        schedule.append(CoinPressStep(step_rho, r, clip_radius, sigma, next_r))
        r = next_r
    return tuple(schedule)


def ball_projection(x, *, centre, radius) -> np.ndarray:
    """Each row of ``x`` (n x d) projected radially onto the l2 ball B(centre, radius):
    x -> centre + (x - centre) min(1, radius / ||x - centre||_2). Rows inside the ball (the
    centre itself included) are returned unchanged, rows outside land on its sphere (step 3 of
    docs/design.md §5.9). A new array; ``x`` is not modified."""
    data = check_data(sample_data(x))
    centre = _check_centre(centre, data.shape[1])
    radius = _check_radius(radius)
    diff = data - centre
    norms = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    outside = norms > radius
    projected = data.copy()
    projected[outside] = centre + diff[outside] * (radius / norms[outside])[:, None]
    return projected


def coinpress(x, *, rho, centre, radius, rng, steps=2, budget_shares=None, beta=0.01, clip="code",
              covariance=None) -> Estimate:
    """CoinPress private mean of the rows of ``x`` (n x d), rho-zCDP (docs/design.md §5.9).

    Prior: the mean lies in the l2 ball B(``centre``, ``radius``) (``centre`` a number or d
    numbers). t = ``steps`` steps (MVM; together MVMRec), step i with budget rho_i from the
    input ball (c_{i-1}, r_{i-1}), c_0 = centre, r_0 = radius:

    1. Budgets: rho_i = rho * share_i; ``budget_shares`` (t numbers > 0, normalised) defaults to
       the split of the authors' experiments, rho / (4 (t - 1)) for each of steps 1..t-1 and
       3 rho / 4 for the last (t = 1: all of rho). Tail radius
       G(d, b) = sqrt(d + 2 sqrt(d ln(1/b)) + 2 ln(1/b)).
    2. Clip radius C_i. ``clip="code"`` (default; what the authors' code runs): one
       gamma = G(d, ``beta``) for every step, beta = 0.01 as hard-coded there, and
       C = min(sqrt(r^2 + 6 r + gamma^2), r + gamma). ``clip="paper"`` (the paper's analysis as
       reported by secondary sources, not verified against the paper's text): beta split over
       the steps, beta_i = beta / (2 (t - 1)) for steps 1..t-1 and beta / 2 for the last,
       C = r + G(d, beta_i / (2n)).
    3. Project every row radially onto B(c_{i-1}, C_i) (:func:`ball_projection`; a row at the
       centre stays) and average: the l2 sensitivity of that mean is 2 C_i / n (replace-one).
    4. c_i = that mean + N(0, sigma_i^2 I_d), sigma_i = 2 C_i / (n sqrt(2 rho_i)).
    5. r_i = gamma' sqrt(1/n + sigma_i^2), gamma' = gamma (code) or G(d, beta_i / 2) (paper).

    The release is c_t. Every step projects the raw data; the authors' code projects its copy
    of the data in place, so its later steps see points already projected by earlier ones. Both
    are rho-zCDP (each step's sensitivity is 2 C_i / n whatever points it gets); the results
    differ only where an earlier step clipped.

    Known covariance: ``covariance`` S (a number for S = s I, d numbers for a diagonal S, or a
    symmetric positive definite d x d matrix) whitens the rows, x -> S^(-1/2) x, runs the steps
    there and maps the release back, S^(1/2) c_t, so the l2 error of the steps becomes the
    Mahalanobis error ||S^(-1/2)(estimate - mu)||. ``centre`` and ``radius`` then describe the
    prior in the whitened space: a prior ||S^(-1/2)(mu - c)|| <= r is centre = S^(-1/2) c,
    radius = r; an l2 prior ||mu - c|| <= r becomes centre = S^(-1/2) c,
    radius = r / sqrt(lambda_min(S)). The diagnostics' centres and radii are whitened too.

    Ledger: ``("step_i", rho_i)`` for i = 1..t, summing to rho. Diagnostics: per step
    (arrays over the steps) ``step_rho``, ``step_centres`` ((t + 1) x d: c_0..c_t),
    ``step_radii`` (r_0..r_t), ``step_clip_radii``, ``step_noise_stds``,
    ``step_fraction_clipped`` (the share of rows outside the step's ball); and the last step's
    ``clip_threshold``, ``noise_std`` and ``fraction_clipped`` as numbers. The randomness is one
    ``rng.standard_normal((t, d))`` draw, row i the noise of step i.
    """
    data = check_data(sample_data(x))
    n, d = data.shape
    schedule = coinpress_schedule(n, d, rho=rho, radius=radius, steps=steps, budget_shares=budget_shares,
                                  beta=beta, clip=clip)
    centre = _check_centre(centre, d)
    rng = check_generator(rng)
    whiten, unwhiten = _whitening(covariance, d)
    if whiten is not None:
        data = whiten(data)
        if not np.all(np.abs(data) <= MAX_MAGNITUDE):  # also catches inf and NaN
            raise ValueError(
                f"covariance: the whitened data S^(-1/2) x leave [-{MAX_MAGNITUDE:g}, {MAX_MAGNITUDE:g}] (the "
                "covariance is too small for the data); rescale the data or the covariance"
            )

    noise = rng.standard_normal((len(schedule), d))
    centres = [centre]
    fractions = []
    work = np.empty_like(data)
    c = centre
    for i, step in enumerate(schedule):
        # Step 3: project every row onto B(c_{i-1}, C_i) and average, without a loop over rows:
        # weights min(1, C / ||x - c||), 1 inside the ball (and at the centre: no division by 0).
        np.subtract(data, c, out=work)
        norms = np.sqrt(np.einsum("ij,ij->i", work, work))
        outside = norms > step.clip_radius
        weights = np.ones(n)
        weights[outside] = step.clip_radius / norms[outside]
        projected_mean = c + weights @ work / n
        # Step 4: the Gaussian mechanism, sigma_i = 2 C_i / (n sqrt(2 rho_i)).
        c = projected_mean + step.noise_std * noise[i]
        # Step 5 (the radius r_i) is public: schedule[i].next_radius.
        centres.append(c)
        fractions.append(float(np.mean(outside)))

    mean = c if unwhiten is None else unwhiten(c)
    ledger = tuple(LedgerEntry(f"step_{i}", step.rho) for i, step in enumerate(schedule, 1))
    diagnostics = {
        "accounting": "exact",
        "clip": clip,
        "requested_rho": float(rho),
        "true_rho": ledger_total(ledger),
        "ledger_total": ledger_total(ledger),
        "step_rho": np.array([step.rho for step in schedule]),
        "step_centres": np.array(centres),
        "step_radii": np.array([schedule[0].radius] + [step.next_radius for step in schedule]),
        "step_clip_radii": np.array([step.clip_radius for step in schedule]),
        "step_noise_stds": np.array([step.noise_std for step in schedule]),
        "step_fraction_clipped": np.array(fractions),
        "clip_threshold": schedule[-1].clip_radius,
        "noise_std": schedule[-1].noise_std,
        "fraction_clipped": fractions[-1],
        "whitened": whiten is not None,
    }
    return Estimate(mean=mean, ledger=ledger, diagnostics=diagnostics)


# ---------------------------------------------------------------- the registry entries


def coinpress_mean(x, *, rho, bounds, rng, prior_ball=None, max_std=None, steps=2, budget_shares=None, beta=0.01,
                   clip="code", covariance="sigma_max") -> Estimate:
    """CoinPress in the engine's interface (registry ``coinpress_mean``, docs/design.md §5.9):
    :func:`coinpress` with its prior ball and covariance taken from public knowledge, rho-zCDP.

    Prior ball: ``prior_ball`` = (centre, radius) where the data source states one (the engine
    passes ``Sample.prior_ball``), else the ball circumscribing the universe box [lo, hi]^d,
    centre (lo + hi) / 2 in every coordinate and radius (hi - lo) / 2 sqrt(d), which holds every
    mean in the box. Covariance: ``"sigma_max"`` (default) assumes sigma_max^2 I with sigma_max =
    ``max_std``, the largest coordinate standard deviation the source states (the engine passes
    ``Sample.max_std``; Gaussian A: 1, B and C: d^(alpha/2)); ``"identity"`` assumes I. The rows
    and the ball are divided by sigma_max, the steps run there and the release is multiplied
    back. For independent coordinates (Gaussian A, B, C) every coordinate of the scaled data has
    variance at most 1, so the steps' tail bounds still hold; with correlations (C') they may not,
    which costs accuracy, never privacy (the noise depends only on public numbers). ``steps``,
    ``budget_shares``, ``beta`` and ``clip`` are :func:`coinpress`'s (t = 2 by default, the
    authors' headline choice).

    Ledger: :func:`coinpress`'s ``step_1``..``step_t``, summing to rho. Diagnostics: those of
    :func:`coinpress` (centres, radii and clip radii in the scaled space), and ``covariance`` (the
    mode), ``covariance_scale`` (sigma_max, or 1), ``prior`` ("source" or "box"),
    ``prior_radius`` (the unscaled radius), ``steps``, ``budget_shares`` (the shares of rho) and
    ``final_radius`` (r_t, scaled).
    """
    data = check_data(sample_data(x))
    lo, hi = check_bounds(bounds)
    covariance = check_choice(covariance, "covariance", COVARIANCES)
    if covariance == "identity":
        scale, scale_name = 1.0, "covariance='identity'"
    else:
        if max_std is None:
            raise ValueError("covariance='sigma_max' needs max_std, the largest coordinate standard deviation, which "
                             "this data source does not state (max_std=None); use covariance='identity' or a source "
                             "that states it (docs/design.md §5.9)")
        scale = check_positive(max_std, "max_std")
        if scale > MAX_MAGNITUDE:
            raise ValueError(f"max_std must be at most {MAX_MAGNITUDE:g}, got max_std={max_std!r}")
        scale_name = f"max_std={max_std!r}"
    return _scaled_coinpress(data, bounds=(lo, hi), prior_ball=prior_ball, scale=scale, scale_name=scale_name,
                             covariance=covariance, rho=rho, rng=rng, steps=steps, budget_shares=budget_shares,
                             beta=beta, clip=clip)


def coinpress_oracle(x, *, rho, bounds, rng, std, prior_ball=None, steps=2, budget_shares=None, beta=0.01,
                     clip="code") -> Estimate:
    """CoinPress with the TRUE covariance diag(``std``^2) (registry ``coinpress_oracle``; the engine
    passes the sample's ``true_std``): an oracle baseline, not a private estimator of unknown
    data, as ``plan_oracle`` (docs/design.md §5.9). Each column is divided by its std; the prior
    ball B(c, r) (``prior_ball``, or the box's as in :func:`coinpress_mean`) becomes
    B(c / std, r / min(std)), the smallest ball around c / std that holds its image. Options,
    ledger and diagnostics as :func:`coinpress_mean` (``covariance`` "oracle", ``covariance_scale``
    the largest std)."""
    data = check_data(sample_data(x))
    lo, hi = check_bounds(bounds)
    expected = f"std must be {data.shape[1]} numbers > 0 (one per column of x), got std={std!r}"
    if isinstance(std, (str, bytes)):
        raise ValueError(expected)
    try:
        stds = np.asarray(std, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(expected) from None
    if stds.shape != (data.shape[1],):
        raise ValueError(f"std must have one value per column of x ({data.shape[1]}), got std with shape {stds.shape}")
    bad = np.flatnonzero(~((stds > 0) & (stds <= MAX_MAGNITUDE)))
    if bad.size:
        raise ValueError(f"std must be finite, > 0 (a column is divided by it) and at most {MAX_MAGNITUDE:g}, "
                         f"got std[{bad[0]}]={float(stds[bad[0]])!r}")
    return _scaled_coinpress(data, bounds=(lo, hi), prior_ball=prior_ball, scale=stds, scale_name="std",
                             covariance="oracle", rho=rho, rng=rng, steps=steps, budget_shares=budget_shares,
                             beta=beta, clip=clip)


def _scaled_coinpress(data, *, bounds, prior_ball, scale, scale_name, covariance, rho, rng, **options) -> Estimate:
    """:func:`coinpress` on the rows of ``data`` divided by ``scale`` (a number, or d numbers: a
    known diagonal covariance diag(scale^2)) from the prior ball mapped there, the release
    multiplied back; ``scale_name`` names where the scale comes from in error messages."""
    d = data.shape[1]
    centre, radius, prior = _prior_ball(prior_ball, bounds, d)
    with np.errstate(over="ignore", under="ignore"):  # an overflow is refused below
        # a radius below float64's smallest positive number stays that number: the ball still holds the mean
        scaled_radius = max(radius / float(np.min(scale)), _SMALLEST_RADIUS)
        scaled_centre = centre / scale
    if not (scaled_radius <= MAX_MAGNITUDE and np.all(np.abs(scaled_centre) <= MAX_MAGNITUDE)):
        raise ValueError(
            f"{scale_name} with the prior ball of radius {radius:.6g} ({_prior_text(prior, bounds)}): divided by the "
            f"covariance scale the ball leaves [-{MAX_MAGNITUDE:g}, {MAX_MAGNITUDE:g}]; rescale the data"
        )
    unscaled = bool(np.all(scale == 1.0))
    if not unscaled:
        # the largest scaled entry, from the column extremes (no n x d temporary)
        with np.errstate(over="ignore"):  # refused below
            largest = np.maximum(np.abs(data.max(axis=0)), np.abs(data.min(axis=0))) / scale
        if not np.all(largest <= MAX_MAGNITUDE):
            raise ValueError(f"{scale_name}: the data divided by the covariance scale leave [-{MAX_MAGNITUDE:g}, "
                             f"{MAX_MAGNITUDE:g}] (the scale is too small for the data); rescale the data")
    estimate = coinpress(data if unscaled else data / scale, rho=rho, centre=scaled_centre, radius=scaled_radius,
                         rng=rng, **options)
    diagnostics = estimate.diagnostics
    diagnostics.update({
        "covariance": covariance,
        "covariance_scale": float(np.max(scale)),
        "whitened": not unscaled,
        "prior": prior,
        "prior_radius": radius,
        "steps": len(estimate.ledger),
        "budget_shares": diagnostics["step_rho"] / diagnostics["requested_rho"],
        "final_radius": float(diagnostics["step_radii"][-1]),
    })
    return Estimate(mean=estimate.mean * scale, ledger=estimate.ledger, diagnostics=diagnostics)


def public_prior_ball(prior_ball, bounds, d) -> tuple[np.ndarray, float, str]:
    """The prior ball of :func:`coinpress_mean` (docs/design.md §5.9) for d coordinates: (centre as d
    floats, radius, "source" or "box"), ``prior_ball`` = (centre, radius) where a source states one,
    else the ball circumscribing the universe box ``bounds`` = (lo, hi); both checked."""
    return _prior_ball(prior_ball, None if prior_ball is not None else check_bounds(bounds), d)


def checked_centre(centre, d) -> np.ndarray:
    """``centre`` as d floats (a number for every coordinate, or d numbers), finite and within
    [-MAX_MAGNITUDE, MAX_MAGNITUDE], else one ValueError naming it."""
    return _check_centre(centre, d)


def _prior_ball(prior_ball, bounds, d) -> tuple[np.ndarray, float, str]:
    """(centre as d floats, radius, "source" or "box"): the stated ball, else the ball around
    the universe box [lo, hi]^d, centre (lo + hi) / 2, radius (hi - lo) / 2 sqrt(d)."""
    if prior_ball is None:
        lo, hi = bounds  # within [-MAX_MAGNITUDE, MAX_MAGNITUDE]: hi - lo does not overflow
        # at least float64's smallest positive number (a box narrower than that has no smaller ball)
        radius = max((hi - lo) * (math.sqrt(d) / 2.0), _SMALLEST_RADIUS)
        if radius > MAX_MAGNITUDE:
            raise ValueError(f"bounds=({lo!r}, {hi!r}) with d={d}: the box's circumscribed ball has radius "
                             f"(hi - lo) / 2 sqrt(d) = {radius:.3g}, beyond {MAX_MAGNITUDE:g}; rescale the data")
        return np.full(d, lo / 2.0 + hi / 2.0), radius, "box"
    if isinstance(prior_ball, (str, bytes)) or not hasattr(prior_ball, "__len__") or len(prior_ball) != 2:
        raise ValueError(f"prior_ball must be a pair (centre, radius), got prior_ball={prior_ball!r}")
    centre, radius = prior_ball
    try:
        return _check_centre(centre, d), _check_radius(radius), "source"
    except ValueError as error:
        raise ValueError(f"prior_ball: {error}") from None


def _prior_text(prior, bounds) -> str:
    return "the data source's prior_ball" if prior == "source" else f"circumscribing bounds={bounds!r}"


# ---------------------------------------------------------------- checks and whitening


def _check_radius(radius) -> float:
    value = check_positive(radius, "radius")
    if value > MAX_MAGNITUDE:
        raise ValueError(f"radius must be at most {MAX_MAGNITUDE:g} (as values and bounds: beyond, squares and sums "
                         f"overflow float64), got radius={radius!r}; rescale the data")
    return value


def checked_steps(steps, name="steps") -> int:
    """A number of CoinPress steps (the option ``name``), 1 to MAX_STEPS: its mean's and its
    covariance's (mechanisms.coinpress_covariance)."""
    steps = check_positive_int(steps, name)
    if steps > MAX_STEPS:
        raise ValueError(f"{name} must be at most {MAX_STEPS} (the radius shrinks geometrically: O(log radius) "
                         f"steps suffice, more only split the budget), got {name}={steps!r}")
    return steps


def checked_shares(budget_shares, steps, name="budget_shares") -> tuple[float, ...]:
    """``budget_shares`` (the option ``name``) as ``steps`` positive finite numbers, or the default
    split for that many steps."""
    if budget_shares is None:
        return coinpress_budget_shares(steps)
    if isinstance(budget_shares, (str, bytes)) or not hasattr(budget_shares, "__len__"):
        raise ValueError(f"{name} must be a list of {steps} numbers > 0 (one per step), "
                         f"got {name}={budget_shares!r}")
    if len(budget_shares) != steps:
        raise ValueError(f"{name} must have one share per step (steps={steps}), "
                         f"got {len(budget_shares)}: {name}={budget_shares!r}")
    shares = tuple(as_real(share, name, "a list of numbers > 0") for share in budget_shares)
    if not all(math.isfinite(share) and share > 0 for share in shares) or not math.isfinite(math.fsum(shares)):
        raise ValueError(f"{name} must be finite and > 0 (a step without budget has infinite noise), "
                         f"got {name}={budget_shares!r}")
    return shares


def _check_centre(centre, d) -> np.ndarray:
    """``centre`` as d floats: a number (the same for every coordinate) or d numbers, finite and
    within [-MAX_MAGNITUDE, MAX_MAGNITUDE]."""
    if isinstance(centre, (bool, str, bytes)):
        raise ValueError(f"centre must be a number or {d} numbers, got centre={centre!r}")
    try:
        values = np.asarray(centre, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"centre must be a number or {d} numbers, got centre={centre!r}") from None
    if values.ndim == 0:
        values = np.full(d, float(values))
    if values.shape != (d,):
        raise ValueError(f"centre must be a number or one value per column of x ({d}), "
                         f"got centre with shape {values.shape}")
    bad = np.flatnonzero(~(np.abs(values) <= MAX_MAGNITUDE))
    if bad.size:
        raise ValueError(f"centre must be finite and within [-{MAX_MAGNITUDE:g}, {MAX_MAGNITUDE:g}], "
                         f"got centre[{bad[0]}]={float(values[bad[0]])!r}")
    return values


def _whitening(covariance, d):
    """(whiten, unwhiten) for a known covariance S, or (None, None) for the identity: whiten maps
    rows x (n x d) to S^(-1/2) x, unwhiten a vector c to S^(1/2) c. S is a number (s I), d numbers
    (a diagonal) or a symmetric positive definite d x d matrix (its symmetric square roots, from
    one eigendecomposition)."""
    if covariance is None:
        return None, None
    if isinstance(covariance, (bool, str, bytes)):
        raise ValueError(
            f"covariance must be a number, {d} numbers or a {d} x {d} matrix, got covariance={covariance!r}"
        )
    try:
        cov = np.asarray(covariance, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"covariance must be a number, {d} numbers or a {d} x {d} matrix, got covariance={covariance!r}"
        ) from None
    if cov.ndim == 0 or cov.shape == (d,):
        variances = np.full(d, float(cov)) if cov.ndim == 0 else cov
        bad = np.flatnonzero(~((variances > 0) & (variances <= MAX_MAGNITUDE)))
        if bad.size:
            raise ValueError(f"covariance (variances) must be finite, > 0 and at most {MAX_MAGNITUDE:g}, "
                             f"got covariance{'' if cov.ndim == 0 else f'[{bad[0]}]'}={float(variances[bad[0]])!r}")
        root = np.sqrt(variances)
        return (lambda rows: rows / root), (lambda c: c * root)
    if cov.shape != (d, d):
        raise ValueError(f"covariance must be a number, {d} numbers or a {d} x {d} matrix, "
                         f"got covariance with shape {cov.shape}")
    if not np.all(np.abs(cov) <= MAX_MAGNITUDE):
        raise ValueError(f"covariance must be finite with entries within [-{MAX_MAGNITUDE:g}, {MAX_MAGNITUDE:g}]")
    scale = float(np.max(np.abs(cov)))
    asymmetry = float(np.max(np.abs(cov - cov.T)))
    if asymmetry > _SYMMETRY_TOLERANCE * scale:
        raise ValueError(f"covariance must be symmetric, got max |S - S^T| = {asymmetry:.3g}")
    eigenvalues, vectors = np.linalg.eigh((cov + cov.T) / 2.0)
    if not eigenvalues[0] > 0:
        raise ValueError(f"covariance must be positive definite, got smallest eigenvalue {eigenvalues[0]:.3g}")
    inverse_root = (vectors / np.sqrt(eigenvalues)) @ vectors.T
    root = (vectors * np.sqrt(eigenvalues)) @ vectors.T
    return (lambda rows: rows @ inverse_root), (lambda c: root @ c)
