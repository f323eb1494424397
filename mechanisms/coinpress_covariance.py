"""CoinPress's private covariance (MVC, iterated: MVCRec) and the MVCRec-MVMRec mean (docs/design.md §5.12).

Biswas, Dong, Kamath, Ullman, "CoinPress: Practical Private Mean and Covariance Estimation"
(NeurIPS 2020), the covariance estimator as the authors' code runs it (``algos.py``: ``cov_est``,
``cov_est_step``; the facts sheet ``coinpress.md``, "Covariance (MVC / MVCRec)"). Rows y_i in R^d
of mean 0 (centred first, below), a public bound Sigma <= u I (``covariance_bound``), t steps with
budgets rho_1..rho_t (the mean's split: rho / (4 (t - 1)) for each step but the last, 3 rho / 4 for
the last; t = 1: all of rho). A d x d whitening A starts at A_0 = I / sqrt(u); step i:

1. W = Y A (each row whitened by the current A).
2. gamma = G(d, beta) = sqrt(d + 2 sqrt(d ln(1/beta)) + 2 ln(1/beta)) (beta = 0.1 as in the code):
   rows of W with norm above gamma are scaled down to norm gamma.
3. Z = W^T W / n + E, E symmetric with every upper-triangular entry (diagonal included)
   N(0, gamma^4 / (rho_i n^2)), mirrored below the diagonal.
4. Z is projected onto the PSD cone: ``psd="clip"`` sets negative eigenvalues to 0 (the projection
   the paper states); ``psd="absolute"`` replaces them by their absolute values, what the code's
   ``psd_proj_symm`` computes (U diag(s) U^T from an SVD of the symmetric matrix: singular values
   are |eigenvalues|).
5. eta = (2 sqrt(d / n) + d / n) / 2; U = Z + eta I; A is updated with U^(-1/2).
6. After the last step: Sigma_hat = A^(-T) Z_t A^(-1) with the A that step used (its own update
   is discarded), and the regularised estimate Sigma_hat_eta = A^(-T) U_t A^(-1) = Sigma_hat +
   eta A^(-T) A^(-1), positive definite even when Sigma_hat is singular: the matrix a mean
   estimator whitens with.

Whitening order (``update``). Z estimates A^T Sigma A (the covariance of the rows of W = Y A), so
the new whitening is A U^(-1/2) (then (A U^(-1/2))^T Sigma (A U^(-1/2)) ~ U^(-1/2) Z U^(-1/2) ~ I)
and the estimate A^(-T) Z A^(-1): ``update="consistent"``. The code multiplies on the left,
A <- U^(-1/2) A, and returns A^(-1) Z A^(-1): ``update="code"``. Both agree while A is symmetric
(t <= 2: A_1 = U_1^(-1/2) / sqrt(u)); from t = 3 on A is not symmetric and the code's whitening
is not the inverse root of its own estimate (on N(0, I) data the matrices nearly commute, so the
difference is small there), and its estimate is not even symmetric.

Centring (``centring``). The steps need rows of mean 0. ``"prior_centre"`` subtracts a public
centre c (``centre``, else the prior ball's centre, else the universe box's), which is exact when
the mean is c: both the CoinPress experiments (N(0, I)) and the IOME authors' MVCRec-MVMRec apply
the estimator to the raw rows, i.e. centre 0 (and then estimate Sigma + (mu - c)(mu - c)^T when
the mean mu is not c). ``"pairs"`` uses (x_{2i} - x_{2i-1}) / sqrt(2), i = 1..floor(n / 2), which
have covariance Sigma and mean 0 whatever the mean, at the cost of half the rows (n is then
floor(n / 2) in every formula above).

Privacy: rho-zCDP under replace-one neighbours with n public, whatever the data. Replacing one
row of Y changes exactly one row w of W (with "pairs" one pair, hence one row, since each row
belongs to one pair), to w', both of norm <= gamma after step 2, so W^T W / n moves by
D = (w w^T - w' w'^T) / n, with ||D||_F^2 = (||w||^4 + ||w'||^4 - 2 (w . w')^2) / n^2 <=
2 gamma^4 / n^2 (equality for orthogonal w, w' of norm gamma). The release is the upper triangle
(the lower is its mirror): its l2 norm is sqrt(sum_{i <= j} D_ij^2) <= ||D||_F (the off-diagonal
entries are counted once instead of twice), at most sqrt(2) gamma^2 / n, which orthogonal
coordinate vectors w = gamma e_1, w' = gamma e_2 attain (D is then diagonal). The Gaussian
mechanism with l2 sensitivity sqrt(2) gamma^2 / n adds N(0, (sqrt(2) gamma^2 / n)^2 / (2 rho_i))
= N(0, gamma^4 / (rho_i n^2)) per upper entry: rho_i-zCDP (under add/remove the sensitivity is
gamma^2 / n and the same step spends rho_i / 2). A, gamma, eta and the projection depend only
on public numbers and earlier releases, so the t steps compose to sum rho_i = rho, and
Sigma_hat, Sigma_hat_eta and everything derived from them are post-processing.

The MVCRec-MVMRec mean (:func:`coinpress_whitened_mean`, the IOME paper's line 162 comparison):
a share of rho to the covariance, the rows whitened by Sigma_hat_eta^(-1/2), CoinPress's mean
(:func:`mechanisms.coinpress.coinpress`) with the rest, the release mapped back with
Sigma_hat_eta^(1/2); rho-zCDP by composition.
"""
from __future__ import annotations

import math
import sys
from typing import NamedTuple

import numpy as np

from ._layout import sample_data
from ._validation import (
    MAX_MAGNITUDE,
    check_bounds,
    check_choice,
    check_data,
    check_fraction,
    check_generator,
    check_positive,
    check_positive_int,
    check_work_size,
)
from .accounting import Estimate, LedgerEntry, check_rho, ledger_total
from .baselines import NON_PRIVATE
from .coinpress import (
    MIN_BETA,
    MIN_STEP_BUDGET,
    checked_centre,
    checked_shares,
    checked_steps,
    coinpress,
    gaussian_tail_radius,
    public_prior_ball,
)

PSD_FORMS = ("clip", "absolute")
UPDATES = ("consistent", "code")
CENTRINGS = ("prior_centre", "pairs")
# Where a covariance bound u (Sigma <= u I) can come from besides a number: R / sqrt(d) of the prior
# ball (what the IOME authors passed) or sigma_max^2 (the source's largest standard deviation).
BOUND_SOURCES = ("prior_radius", "max_std")
PRIOR_MAPPINGS = ("whitened", "unchanged")
DEFAULT_BETA = 0.1  # the code's gaussian_tailbound(d, 0.1)
# ||E||_F <= NOISE_NORM_FACTOR sigma (d + 1) except with negligible probability (||E||_F^2 / sigma^2 is
# at most twice a chi-square with d (d + 1) / 2 degrees of freedom, mean about d (d + 1)): the
# public float64 checks of covariance_schedule size the noise with it.
NOISE_NORM_FACTOR = 10.0
# The float64 checks (log10): the noise may multiply the estimate's scale by at most 10^50 over
# all steps, and the whitening and the whitened rows stay within 10^100.
_LOG_GROWTH_LIMIT = 50.0
_LOG_MAGNITUDE = 100.0
# Runs per chunk of batched_coinpress_covariance: about this many whitened values at once.
CHUNK_VALUES = 1 << 22


class CovarianceStep(NamedTuple):
    """The public quantities of one step (MVC) of :func:`coinpress_covariance`: its budget ``rho``
    and the std ``noise_std`` = gamma^2 / (sqrt(rho) n) of every upper-triangular noise entry."""

    rho: float
    noise_std: float


class CovarianceSchedule(NamedTuple):
    """What :func:`coinpress_covariance` computes before reading the data: the rows it uses,
    the bound u, the clip radius gamma = G(d, beta), the regulariser eta and the steps."""

    rows: int
    covariance_bound: float
    clip_radius: float
    regulariser: float
    steps: tuple[CovarianceStep, ...]


def covariance_schedule(n, d, *, rho, covariance_bound, steps=3, budget_shares=None,
                        beta=DEFAULT_BETA) -> CovarianceSchedule:
    """The public quantities of :func:`coinpress_covariance` on ``n`` rows (after centring) of d
    coordinates (docs/design.md §5.12), and the float64 checks made on them before any data are
    read: requests whose noise or whitening could leave float64's range are refused."""
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    rho = check_rho(rho)
    bound = _check_bound(covariance_bound)
    steps = checked_steps(steps, "steps")
    beta = _check_beta(beta, "beta")
    shares = checked_shares(budget_shares, steps, "budget_shares")
    total = math.fsum(shares)
    gamma = gaussian_tail_radius(d, beta)
    eta = (2.0 * math.sqrt(d / n) + d / n) / 2.0
    schedule, log_growth = [], 0.0
    for i, share in enumerate(shares, 1):
        step_rho = rho * share / total
        if not step_rho >= MIN_STEP_BUDGET:
            raise ValueError(f"rho={rho!r} with budget_shares={budget_shares!r}: step {i} gets {step_rho!r}, which "
                             f"underflows float64; use larger shares or a larger budget")
        # sigma = gamma^2 / (sqrt(rho_i) n): the Gaussian mechanism for l2 sensitivity sqrt(2) gamma^2 / n
        sigma = gamma * gamma / (math.sqrt(step_rho) * n)
        schedule.append(CovarianceStep(step_rho, sigma))
        # ||Sigma_hat_eta_i|| <= D + ||Sigma_hat_eta_{i-1}|| (3 ||E_i|| + eta), D the largest squared row
        # norm (the projection moves Z at most 2 ||E|| from the clipped Gram matrix, the absolute form 3):
        # the noise multiplies the scale by at most max(1, 3 ||E_i|| + eta) per step.
        log_growth += math.log10(max(1.0, 3.0 * NOISE_NORM_FACTOR * sigma * (d + 1) + eta))
        if log_growth > _LOG_GROWTH_LIMIT:
            raise ValueError(
                f"rho={rho!r} with n={n}, d={d}, steps={steps}: by step {i} the noise (std {sigma:.3g} in whitened "
                f"units) could multiply the estimate's scale by 1e{log_growth:.0f}, beyond 1e{_LOG_GROWTH_LIMIT:.0f} "
                "(float64 overflows); use a larger budget or fewer steps"
            )
    # ||A_i||^2 <= u^(-1) min(eta, 1)^(-(i - 1)) (each update multiplies it by ||U^(-1/2)||^2 <= 1 / eta)
    log_whitening = -math.log10(bound) - (steps - 1) * math.log10(min(eta, 1.0))
    if log_whitening > 2.0 * _LOG_MAGNITUDE:
        raise ValueError(
            f"covariance_bound={covariance_bound!r} with steps={steps}, n={n}, d={d}: the whitening could reach "
            f"1e{log_whitening / 2:.0f} (1 / sqrt(u) times eta^(-1/2) = {min(eta, 1.0) ** -0.5:.3g} per step), beyond "
            f"1e{_LOG_MAGNITUDE:.0f}; use fewer steps or a larger covariance_bound"
        )
    return CovarianceSchedule(n, bound, gamma, eta, tuple(schedule))


def symmetric_noise(standard) -> np.ndarray:
    """The symmetric matrix (or stack of them, over the last two axes) whose upper triangle,
    diagonal included, is that of ``standard``, mirrored below the diagonal: from d x d standard
    normals, every entry N(0, 1) and the upper ones independent (step 3)."""
    return np.triu(standard) + np.swapaxes(np.triu(standard, 1), -1, -2)


def psd_values(eigenvalues, psd="clip") -> np.ndarray:
    """The eigenvalues of the PSD projection (step 4): negative ones set to 0 (``"clip"``) or
    replaced by their absolute values (``"absolute"``, the authors' ``psd_proj_symm``)."""
    psd = check_choice(psd, "psd", PSD_FORMS)
    return np.maximum(eigenvalues, 0.0) if psd == "clip" else np.abs(eigenvalues)


def clipped_gram(whitened, clip_radius) -> tuple[np.ndarray, np.ndarray]:
    """(W_c^T W_c / n, share of rows clipped) for the rows of ``whitened`` (n x d, or a stack
    runs x n x d): every row of norm above ``clip_radius`` scaled down to it (step 2; a row of
    norm 0 stays). A new array; ``whitened`` is not modified."""
    n = whitened.shape[-2]
    with np.errstate(over="ignore"):  # a huge row's square may overflow: its norm is recomputed below
        squares = np.einsum("...ij,...ij->...i", whitened, whitened)
    norms = np.sqrt(squares)
    overflowed = ~np.isfinite(norms)
    if overflowed.any():  # rows whose squared norm overflows: the norm from the rows scaled by their largest entry
        rows = whitened[overflowed]
        largest = np.max(np.abs(rows), axis=-1)
        norms[overflowed] = largest * np.linalg.norm(rows / largest[:, None], axis=-1)
    with np.errstate(divide="ignore"):  # a row of norm 0: clip_radius / 0 = inf, and min(1, inf) = 1
        scale = np.minimum(1.0, clip_radius / norms)
    clipped = whitened * scale[..., None]
    gram = np.matmul(np.swapaxes(clipped, -1, -2), clipped) / n
    return gram, np.mean(norms > clip_radius, axis=-1)


def whitenings(step_estimates, *, covariance_bound, regulariser, update="consistent") -> np.ndarray:
    """The whitening A_i that step i used (i = 1..t, stacked on the axis before the matrices), from
    the released PSD matrices Z_1..Z_t of ``step_estimates`` (..., t, d, d, the diagnostics'
    ``step_estimates``): A_1 = I / sqrt(u), A_{i+1} = A_i U_i^(-1/2) (``"consistent"``) or
    U_i^(-1/2) A_i (``"code"``), U_i = Z_i + eta I. A function of the release only (the audit's
    transcript statistic, experiments/audit/audits.py); equal to the mechanism's own whitenings up to
    rounding (the mechanism takes U_i from the eigendecomposition before the projection)."""
    update = check_choice(update, "update", UPDATES)
    estimates = np.asarray(step_estimates, dtype=float)
    d = estimates.shape[-1]
    current = np.broadcast_to(np.eye(d) / math.sqrt(covariance_bound), estimates.shape[:-3] + (d, d))
    out = [current]
    for i in range(estimates.shape[-3] - 1):
        values, vectors = np.linalg.eigh(estimates[..., i, :, :])
        inverse_root = _spectral(vectors, (np.maximum(values, 0.0) + regulariser) ** -0.5)
        current = current @ inverse_root if update == "consistent" else inverse_root @ current
        out.append(current)
    return np.stack(out, axis=-3)


# ---------------------------------------------------------------- the estimator


def coinpress_covariance(x, *, rho, rng, covariance_bound, steps=3, budget_shares=None, beta=DEFAULT_BETA,
                         centring="prior_centre", centre=None, psd="clip", update="consistent", bounds=None,
                         prior_ball=None, max_std=None) -> Estimate:
    """CoinPress's private covariance of the rows of ``x`` (n x d): MVC iterated t = ``steps``
    times (MVCRec), rho-zCDP under replace-one neighbours (docs/design.md §5.12; the steps, the
    conventions and the privacy argument are in the module docstring).

    ``covariance_bound`` u, a public bound Sigma <= u I: a number, ``"prior_radius"`` (u = R /
    sqrt(d) of the prior ball, what the IOME authors passed) or ``"max_std"`` (u = max_std^2, the
    source's sigma_max; with correlations Sigma may exceed it, which costs accuracy, never
    privacy). The prior ball is ``prior_ball`` (the engine passes the source's), else the ball
    circumscribing the universe box ``bounds``. ``budget_shares`` (t numbers > 0, normalised)
    defaults to the CoinPress split (:func:`mechanisms.coinpress.coinpress_budget_shares`);
    ``beta`` sets gamma = G(d, beta). ``centring``: ``"prior_centre"`` (default; rows minus
    ``centre``, a number or d numbers, else the prior ball's centre) or ``"pairs"``. ``psd``:
    ``"clip"`` (default) or ``"absolute"``; ``update``: ``"consistent"`` (default) or ``"code"``.

    The release (``Estimate.mean``) is Sigma_hat (d x d). Ledger ``step_1``..``step_t``, summing to
    rho. Diagnostics: ``regularised_estimate`` (Sigma_hat_eta, positive definite), ``step_rho``,
    ``step_noise_stds``, ``step_fraction_clipped`` (the share of rows scaled down to gamma in each
    step), ``step_negative_eigenvalues`` (how many eigenvalues each projection changed),
    ``step_estimates`` (t x d x d: the released Z_i in whitened units), ``clip_threshold``
    (gamma), ``regulariser`` (eta), ``noise_std`` and ``fraction_clipped`` (the last step's),
    ``covariance_bound`` (u), ``rows`` (after centring), the options. The randomness is one
    ``rng.standard_normal((t, d, d))`` draw, slice i the noise of step i (upper triangles used).
    """
    data = check_data(sample_data(x))
    n, d = data.shape
    rho = check_rho(rho)
    rng = check_generator(rng)
    centring = check_choice(centring, "centring", CENTRINGS)
    psd = check_choice(psd, "psd", PSD_FORMS)
    update = check_choice(update, "update", UPDATES)
    public = _PublicKnowledge(d, bounds, prior_ball, max_std)
    bound = public.covariance_bound(covariance_bound)
    if centring == "pairs" and centre is not None:
        raise ValueError(f"centre applies to centring='prior_centre' only, got centre={centre!r} with centring='pairs'")
    centre = public.centre(centre) if centring == "prior_centre" else None
    rows = _centred_rows(data, centring, centre)
    schedule = covariance_schedule(rows.shape[0], d, rho=rho, covariance_bound=bound, steps=steps,
                                   budget_shares=budget_shares, beta=beta)
    _check_whitened_rows(rows, schedule, steps)
    runs = _covariance_runs(rows, schedule, rng.standard_normal((len(schedule.steps), d, d)), psd=psd, update=update)
    ledger = tuple(LedgerEntry(f"step_{i}", step.rho) for i, step in enumerate(schedule.steps, 1))
    diagnostics = _diagnostics(runs, schedule, ledger, rho)
    diagnostics.update({"centring": centring, "psd": psd, "update": update, "prior": public.prior})
    return Estimate(mean=runs["estimate"], ledger=ledger, diagnostics=diagnostics)


def batched_coinpress_covariance(x, *, rho, rng, runs, covariance_bound, steps=3, budget_shares=None,
                                 beta=DEFAULT_BETA, centring="prior_centre", centre=0.0, psd="clip",
                                 update="consistent") -> Estimate:
    """``runs`` independent draws of :func:`coinpress_covariance` with the same options on one
    dense ``x`` (the privacy audit's sampler, docs/design.md §5.8): the draws of the calls
    ``coinpress_covariance(x, rng=rng, ...)`` in a row (each run draws its (t, d, d) normals in
    turn), with their arithmetic up to the order of BLAS sums (about 1e-12 relative). ``covariance_bound`` is a
    number and ``centre`` the public centre of ``"prior_centre"`` (default 0). ``.mean`` is
    (runs x d x d); ``.ledger`` that of one run; the per-run diagnostics are stacked on a first
    axis. Chunks of about ``CHUNK_VALUES`` whitened values keep memory bounded."""
    data = check_data(sample_data(x))
    d = data.shape[1]
    runs = check_positive_int(runs, "runs")
    rho = check_rho(rho)
    rng = check_generator(rng)
    centring = check_choice(centring, "centring", CENTRINGS)
    psd = check_choice(psd, "psd", PSD_FORMS)
    update = check_choice(update, "update", UPDATES)
    rows = _centred_rows(data, centring, checked_centre(centre, d) if centring == "prior_centre" else None)
    schedule = covariance_schedule(rows.shape[0], d, rho=rho, covariance_bound=covariance_bound, steps=steps,
                                   budget_shares=budget_shares, beta=beta)
    _check_whitened_rows(rows, schedule, steps)
    t = len(schedule.steps)
    check_work_size(8 * runs * (t + 3) * d * d, f"runs={runs!r}", f"the estimates of {runs} runs ({t} steps, d = {d})")
    chunk = max(1, CHUNK_VALUES // (rows.shape[0] * d))
    parts = []
    for start in range(0, runs, chunk):
        count = min(chunk, runs - start)
        parts.append(_covariance_runs(rows, schedule, rng.standard_normal((count, t, d, d)), psd=psd, update=update))
    stacked = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    ledger = tuple(LedgerEntry(f"step_{i}", step.rho) for i, step in enumerate(schedule.steps, 1))
    diagnostics = _diagnostics(stacked, schedule, ledger, rho)
    diagnostics.update({"centring": centring, "psd": psd, "update": update})
    return Estimate(mean=stacked["estimate"], ledger=ledger, diagnostics=diagnostics)


def empirical_covariance(x, *, rho, bounds, rng) -> Estimate:
    """The sample covariance, centred at the sample mean and divided by n (the authors'
    ``utils.cov``): the non-private baseline of the covariance experiments. Not private for any
    budget: booked as one release of infinite cost, as :func:`mechanisms.baselines.empirical_mean`
    (the privacy arguments are accepted and checked so that it runs through the same interface)."""
    data = check_data(sample_data(x))
    check_rho(rho)
    check_bounds(bounds)
    check_generator(rng)
    centred = data - data.mean(axis=0)
    covariance = centred.T @ centred / data.shape[0]
    ledger = (LedgerEntry(NON_PRIVATE, math.inf),)
    return Estimate(mean=covariance, ledger=ledger, diagnostics={
        "accounting": "none", "requested_rho": float(rho), "true_rho": math.inf, "private": False})


# ---------------------------------------------------------------- MVCRec-MVMRec


def coinpress_whitened_mean(x, *, rho, bounds, rng, prior_ball=None, max_std=None, covariance_steps=1, mean_steps=10,
                            covariance_share=0.5, covariance_bound="prior_radius", covariance_budget_shares=None,
                            covariance_beta=DEFAULT_BETA, centring="prior_centre", psd="clip", update="consistent",
                            mean_budget_shares=None, beta=0.01, clip="code", prior_mapping="whitened") -> Estimate:
    """The MVCRec-MVMRec mean of the IOME paper's central-model experiments (its line 162;
    docs/design.md §5.12), rho-zCDP under replace-one neighbours:

    1. rho_c = ``covariance_share`` rho to :func:`coinpress_covariance` (``covariance_steps``
       steps, ``covariance_bound``, ``centring`` at the prior ball's centre or by pairs, ``psd``,
       ``update``, ``covariance_budget_shares``, ``covariance_beta``): Sigma_hat_eta.
    2. Every row whitened, x -> S^(-1/2) x with S = Sigma_hat_eta and its symmetric inverse root
       (one eigendecomposition, which also gives S^(1/2) and lambda_min(S)).
    3. CoinPress's mean (:func:`mechanisms.coinpress.coinpress`: ``mean_steps`` steps, the default
       split or ``mean_budget_shares``, ``beta``, ``clip``) with rho - rho_c on the whitened rows,
       from the prior ball mapped into the whitened space: an l2 prior ||mu - c|| <= R becomes
       ||S^(-1/2) (mu - c)|| <= R / sqrt(lambda_min(S)), centre S^(-1/2) c
       (``prior_mapping="whitened"``). The IOME authors kept the ball (0, R) as it was
       (``prior_mapping="unchanged"``), which is no longer a valid prior there (accuracy only).
    4. The release S^(1/2) c_t.

    The prior ball is ``prior_ball`` (the source's) else the universe box's, as for
    :func:`mechanisms.coinpress.coinpress_mean`; ``covariance_bound`` a number,
    ``"prior_radius"`` (default: u = R / sqrt(d), the IOME authors' choice) or ``"max_std"``.
    Privacy: both parts are rho-zCDP under replace-one (step 2 is post-processing of step 1's
    release; CoinPress's mean is rho-zCDP whatever the data, whitened ones included), and they
    compose to rho. Ledger: ``covariance_step_1``.. and ``mean_step_1``.., summing to rho.
    Diagnostics: ``covariance_estimate`` (Sigma_hat), ``whitening_covariance`` (S),
    ``whitened_prior_centre``, ``whitened_prior_radius``, ``covariance_fraction_clipped`` (per
    covariance step), ``covariance_step_estimates``, the mean's ``mean_step_centres`` (whitened
    c_0..c_t), ``mean_step_clip_radii``, ``mean_step_rho``, ``mean_step_fraction_clipped``, and
    as numbers the mean's last ``clip_threshold``, ``noise_std`` and ``fraction_clipped``.
    """
    data = check_data(sample_data(x))
    n, d = data.shape
    rho = check_rho(rho)
    check_bounds(bounds)
    rng = check_generator(rng)
    share = check_fraction(covariance_share, "covariance_share", closed_high=False)
    centring = check_choice(centring, "centring", CENTRINGS)
    prior_mapping = check_choice(prior_mapping, "prior_mapping", PRIOR_MAPPINGS)
    # the options of the two parts under their names here (the parts' own messages say steps, beta, ...)
    covariance_steps = checked_steps(covariance_steps, "covariance_steps")
    checked_shares(covariance_budget_shares, covariance_steps, "covariance_budget_shares")
    covariance_beta = _check_beta(covariance_beta, "covariance_beta")
    mean_steps = checked_steps(mean_steps, "mean_steps")
    checked_shares(mean_budget_shares, mean_steps, "mean_budget_shares")
    public = _PublicKnowledge(d, bounds, prior_ball, max_std)
    centre, radius = public.ball()
    bound = public.covariance_bound(covariance_bound)
    covariance_rho, mean_rho = rho * share, rho * (1.0 - share)
    if not mean_rho >= MIN_STEP_BUDGET:
        raise ValueError(f"rho={rho!r} with covariance_share={covariance_share!r}: the mean gets {mean_rho!r}, which "
                         "underflows float64; use a smaller covariance_share or a larger budget")
    # The whitened rows, centre and radius stay within float64's range: lambda_min(S) >= u min(eta, 1)^t
    # (S = A^(-T) U_t A^(-1) with U_t >= eta I and ||A||^2 <= 1 / (u min(eta, 1)^(t - 1))): checked on public
    # numbers and the data's extremes before any draw.
    schedule = covariance_schedule(_row_count(data, centring), d, rho=covariance_rho,
                                   covariance_bound=bound, steps=covariance_steps,
                                   budget_shares=covariance_budget_shares, beta=covariance_beta)
    log_floor = math.log10(bound) + len(schedule.steps) * math.log10(min(schedule.regulariser, 1.0))
    largest = max(float(np.max(np.abs(data))), float(np.max(np.abs(centre))))
    if largest > 0 and 2.0 * math.log10(largest) + math.log10(d) - log_floor > 2.0 * _LOG_MAGNITUDE:
        raise ValueError(f"covariance_bound={covariance_bound!r}: the rows and the prior centre whitened by the "
                         f"private covariance could leave [-{MAX_MAGNITUDE:g}, {MAX_MAGNITUDE:g}] (its smallest "
                         f"eigenvalue may be as small as 1e{log_floor:.0f}); rescale the data or raise "
                         "covariance_bound")
    if prior_mapping == "whitened" and 2.0 * math.log10(radius) - log_floor > 2.0 * _LOG_MAGNITUDE:
        raise ValueError(f"prior_ball or bounds: the prior radius {radius:.3g} divided by sqrt(lambda_min) of the "
                         f"private covariance (as small as 1e{log_floor:.0f}) could exceed {MAX_MAGNITUDE:g}; "
                         "raise covariance_bound or rescale the data")

    covariance = coinpress_covariance(data, rho=covariance_rho, rng=rng, covariance_bound=bound,
                                      steps=covariance_steps, budget_shares=covariance_budget_shares,
                                      beta=covariance_beta, centring=centring,
                                      centre=centre if centring == "prior_centre" else None, psd=psd, update=update)
    # Step 2: one eigendecomposition of S = Sigma_hat_eta gives S^(-1/2), S^(1/2) and lambda_min.
    whitening = covariance.diagnostics["regularised_estimate"]
    values, vectors = np.linalg.eigh(whitening)
    # rounding may take the smallest eigenvalue below its public floor (or 0, where the floor underflows)
    values = np.maximum(values, max(10.0 ** log_floor, sys.float_info.min))
    inverse_root = _spectral(vectors, values ** -0.5)
    root = _spectral(vectors, values ** 0.5)
    if prior_mapping == "whitened":  # a radius below float64's smallest positive number stays that number
        mean_centre, mean_radius = inverse_root @ centre, max(radius / math.sqrt(values[0]), math.ulp(0.0))
    else:
        mean_centre, mean_radius = centre, radius
    mean = coinpress(data @ inverse_root, rho=mean_rho, centre=mean_centre, radius=mean_radius, rng=rng,
                     steps=mean_steps, budget_shares=mean_budget_shares, beta=beta, clip=clip)
    ledger = tuple(LedgerEntry(f"covariance_{entry.step}", entry.rho) for entry in covariance.ledger) + tuple(
        LedgerEntry(f"mean_{entry.step}", entry.rho) for entry in mean.ledger)
    inner = mean.diagnostics
    diagnostics = {
        "accounting": "exact", "requested_rho": float(rho), "true_rho": ledger_total(ledger),
        "ledger_total": ledger_total(ledger), "covariance_share": share, "covariance_bound": bound,
        "prior": public.prior, "prior_radius": radius, "prior_mapping": prior_mapping,
        "covariance_estimate": covariance.mean, "whitening_covariance": whitening,
        "covariance_fraction_clipped": covariance.diagnostics["step_fraction_clipped"],
        "covariance_step_estimates": covariance.diagnostics["step_estimates"],
        "whitened_prior_centre": mean_centre, "whitened_prior_radius": mean_radius,
        "mean_step_centres": inner["step_centres"], "mean_step_clip_radii": inner["step_clip_radii"],
        "mean_step_rho": inner["step_rho"], "mean_step_fraction_clipped": inner["step_fraction_clipped"],
        "clip_threshold": inner["clip_threshold"], "noise_std": inner["noise_std"],
        "fraction_clipped": inner["fraction_clipped"],
    }
    return Estimate(mean=root @ mean.mean, ledger=ledger, diagnostics=diagnostics)


# ---------------------------------------------------------------- the steps


def _covariance_runs(rows, schedule: CovarianceSchedule, noise, *, psd, update) -> dict:
    """Steps 1-6 on ``rows`` (n x d, centred) for the noise ``noise`` (..., t, d, d standard
    normals: one call, or a stack of runs), vectorised over the runs. Whitenings are kept with
    their inverses (A^(-1) = U^(1/2) A_prev^(-1)), both from the eigendecomposition of the noisy
    matrix, which also gives the projection: one eigendecomposition per step, no inverse."""
    u, gamma, eta = schedule.covariance_bound, schedule.clip_radius, schedule.regulariser
    t = len(schedule.steps)
    batch = noise.shape[:-3]
    whitening = inverse = None  # A_0 = I / sqrt(u), A_0^(-1) = sqrt(u) I
    fractions, negatives, estimates = [], [], []
    out = {}
    for i, step in enumerate(schedule.steps):
        # Steps 1-2: whiten, clip to gamma, the Gram matrix (A_0 is public: one product for every run).
        whitened = rows * (1.0 / math.sqrt(u)) if whitening is None else np.matmul(rows, whitening)
        gram, fraction = clipped_gram(whitened, gamma)
        del whitened
        # Step 3: symmetric noise, every upper entry of variance gamma^4 / (rho_i n^2).
        noisy = gram + step.noise_std * symmetric_noise(noise[..., i, :, :])
        # Step 4: the PSD projection, from the one eigendecomposition of the step.
        values, vectors = np.linalg.eigh(noisy)
        projected = psd_values(values, psd)
        estimate = _symmetric(_spectral(vectors, projected))  # symmetric up to rounding: made exactly so
        fractions.append(np.broadcast_to(fraction, batch))
        negatives.append(np.sum(values < 0.0, axis=-1))
        estimates.append(estimate)
        regularised = projected + eta  # step 5: the eigenvalues of U = Z + eta I
        if i == t - 1:
            # Step 6: Sigma_hat = A^(-T) Z A^(-1) ("code": A^(-1) Z A^(-1)), Sigma_hat_eta = that of U.
            if inverse is None:
                out["estimate"] = u * estimate
                out["regularised"] = u * (estimate + eta * np.eye(rows.shape[1]))
            elif update == "consistent":
                left = np.swapaxes(inverse, -1, -2)
                out["estimate"] = _symmetric(left @ estimate @ inverse)
                out["regularised"] = _symmetric(out["estimate"] + eta * (left @ inverse))
            else:
                out["estimate"] = inverse @ estimate @ inverse
                out["regularised"] = out["estimate"] + eta * (inverse @ inverse)
            break
        inverse_root = _spectral(vectors, regularised ** -0.5)
        root = _spectral(vectors, np.sqrt(regularised))
        if whitening is None:
            whitening, inverse = inverse_root / math.sqrt(u), root * math.sqrt(u)
        elif update == "consistent":  # A <- A U^(-1/2), A^(-1) <- U^(1/2) A^(-1)
            whitening, inverse = whitening @ inverse_root, root @ inverse
        else:  # the code: A <- U^(-1/2) A, A^(-1) <- A^(-1) U^(1/2)
            whitening, inverse = inverse_root @ whitening, inverse @ root
    out["fraction_clipped"] = np.stack(fractions, axis=-1)
    out["negative_eigenvalues"] = np.stack(negatives, axis=-1)
    out["step_estimates"] = np.stack(estimates, axis=-3)
    return out


def _diagnostics(runs: dict, schedule: CovarianceSchedule, ledger, rho) -> dict:
    return {
        "accounting": "exact", "requested_rho": float(rho), "true_rho": ledger_total(ledger),
        "ledger_total": ledger_total(ledger), "regularised_estimate": runs["regularised"],
        "step_rho": np.array([step.rho for step in schedule.steps]),
        "step_noise_stds": np.array([step.noise_std for step in schedule.steps]),
        "step_fraction_clipped": runs["fraction_clipped"], "step_negative_eigenvalues": runs["negative_eigenvalues"],
        "step_estimates": runs["step_estimates"], "clip_threshold": schedule.clip_radius,
        "regulariser": schedule.regulariser, "noise_std": schedule.steps[-1].noise_std,
        "fraction_clipped": runs["fraction_clipped"][..., -1], "covariance_bound": schedule.covariance_bound,
        "rows": schedule.rows, "steps": len(schedule.steps),
    }


def _spectral(vectors, values) -> np.ndarray:
    """V diag(values) V^T (stacks too)."""
    return np.matmul(vectors * values[..., None, :], np.swapaxes(vectors, -1, -2))


def _symmetric(matrix) -> np.ndarray:
    return (matrix + np.swapaxes(matrix, -1, -2)) / 2.0


def _centred_rows(data, centring, centre) -> np.ndarray:
    """The rows the steps see: ``data`` minus the public ``centre`` (the data themselves when it is
    0), or (x_{2i} - x_{2i-1}) / sqrt(2) for the floor(n / 2) pairs of consecutive rows."""
    if centring == "prior_centre":
        return data if not np.any(centre) else data - centre
    pairs = _row_count(data, centring)
    return (data[1:2 * pairs:2] - data[0:2 * pairs:2]) * (1.0 / math.sqrt(2.0))


def _row_count(data, centring) -> int:
    """How many rows the steps see: n, or floor(n / 2) pairs (at least one)."""
    if centring == "prior_centre":
        return data.shape[0]
    if data.shape[0] < 2:
        raise ValueError(f"centring='pairs' needs at least 2 rows of x, got x.shape={data.shape}")
    return data.shape[0] // 2


def _check_whitened_rows(rows, schedule: CovarianceSchedule, steps) -> None:
    """The whitened rows stay within +-1e100: |w| <= sqrt(d) max|y| ||A||, ||A||^2 <= u^(-1)
    min(eta, 1)^(-(t - 1)) (a check on the data's extremes, before any draw)."""
    largest = float(np.max(np.abs(rows)))
    if largest == 0.0:
        return
    log_whitening = -math.log10(schedule.covariance_bound) - (len(schedule.steps) - 1) * math.log10(
        min(schedule.regulariser, 1.0))
    if 2.0 * math.log10(largest) + math.log10(rows.shape[1]) + log_whitening > 2.0 * _LOG_MAGNITUDE:
        raise ValueError(
            f"covariance_bound={schedule.covariance_bound!r} with steps={steps!r}: the rows (largest centred entry "
            f"{largest:.3g}) whitened by the bound could leave [-{MAX_MAGNITUDE:g}, {MAX_MAGNITUDE:g}] (the bound is "
            "too small for the data); rescale the data or raise covariance_bound"
        )


def _check_bound(covariance_bound) -> float:
    value = check_positive(covariance_bound, "covariance_bound")
    if value > MAX_MAGNITUDE:
        raise ValueError(f"covariance_bound must be at most {MAX_MAGNITUDE:g} (a variance: rows within +-1e100 are "
                         f"whitened by 1 / sqrt(u)), got covariance_bound={covariance_bound!r}")
    return value


def _check_beta(beta, name) -> float:
    beta = check_fraction(beta, name, closed_high=False)
    if beta < MIN_BETA:
        raise ValueError(f"{name} must be at least {MIN_BETA:g}, got {name}={beta!r}")
    return beta


class _PublicKnowledge:
    """What the engine may state beyond the data: the universe ``bounds``, the source's
    ``prior_ball`` and ``max_std`` (docs/design.md §5.9); each checked when given, used or not."""

    def __init__(self, d, bounds, prior_ball, max_std):
        self.d = d
        self.bounds = None if bounds is None else check_bounds(bounds)
        self.prior_ball = None if prior_ball is None else public_prior_ball(prior_ball, None, d)
        self.max_std = None if max_std is None else check_positive(max_std, "max_std")
        if self.max_std is not None and self.max_std > MAX_MAGNITUDE:
            raise ValueError(f"max_std must be at most {MAX_MAGNITUDE:g}, got max_std={max_std!r}")
        self.prior = None

    def ball(self) -> tuple[np.ndarray, float]:
        if self.prior_ball is not None:
            centre, radius, self.prior = self.prior_ball
        elif self.bounds is not None:
            centre, radius, self.prior = public_prior_ball(None, self.bounds, self.d)
        else:
            raise ValueError("needs a prior ball: prior_ball (centre, radius) or the universe bounds (lo, hi), got "
                             "neither (prior_ball=None, bounds=None); or pass centre and a numeric covariance_bound")
        return centre, radius

    def centre(self, centre) -> np.ndarray:
        return checked_centre(centre, self.d) if centre is not None else self.ball()[0]

    def covariance_bound(self, covariance_bound) -> float:
        if isinstance(covariance_bound, str):
            source = check_choice(covariance_bound, "covariance_bound", BOUND_SOURCES)
            if source == "prior_radius":
                value = self.ball()[1] / math.sqrt(self.d)
            else:
                if self.max_std is None:
                    raise ValueError("covariance_bound='max_std' needs max_std, the largest coordinate standard "
                                     "deviation, which this data source does not state (max_std=None)")
                value = self.max_std * self.max_std
            if not 0.0 < value <= MAX_MAGNITUDE:
                raise ValueError(f"covariance_bound={covariance_bound!r} gives u = {value:.3g}, outside (0, "
                                 f"{MAX_MAGNITUDE:g}]; rescale the data (prior_ball, bounds, max_std)")
            return value
        return _check_bound(covariance_bound)
