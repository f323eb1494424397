"""Synthetic Gaussian data for the PLAN, CoinPress and IOME experiments (docs/design.md §6, §7).

Data are drawn as ``mean + std * rng.standard_normal((n, d))`` rather than with
``multivariate_normal``, which is much faster (docs/design.md §8). The correlated
variants A' and C' (PLAN Appendix E, Figure 7) use a factor of their covariance built
from its definition, so they need no Cholesky decomposition either. All randomness,
including the random covariance of A', comes from the ``rng`` passed in.
"""

from __future__ import annotations

import math

import numpy as np

from datasets.checks import check_positive_int, check_real, check_rng
from datasets.sample import CovarianceFactors, PriorBall, Sample

_NOISE_CHUNK_ROWS = 256  # rows of A's second noise term drawn at a time (not one more n x d array)
_MAX_RADIUS_SCALE = 1e90  # R = radius_scale sqrt(d) stays within the mechanisms' 1e100 for any d below 1e20
# Rows of rotated_gaussian drawn and rotated at a time: one (rows x d) by (d x d) product each, no
# second n x d array (the same stream as one draw of all rows).
_ROTATED_CHUNK_ROWS = 256
_MAX_KAPPA = 1e100  # the largest eigenvalue: coordinates of std up to 1e50 stay far inside the mechanisms' 1e100


def gaussian_a(*, n: int, d: int, rng: np.random.Generator, out: np.ndarray | None = None) -> Sample:
    """Gaussian A (docs/design.md §6; PLAN Table 1): N(0, I_d).

    Universe as in the published runs: [-M, M] with M = 25 * sqrt(d); sigma_max = 1 (``max_std``).
    ``out``: an n x d float64 array to draw into (the same values as without it).
    """
    check_positive_int(n=n)
    check_positive_int(d=d)
    check_rng(rng)
    radius = 25.0 * math.sqrt(d)
    return _sample(n=n, mean=np.zeros(d), std=np.ones(d), radius=radius, rng=rng, out=out, max_std=1.0)


def gaussian_skewed(
    *, n: int, d: int, alpha: float, rng: np.random.Generator, mean: float = 10.0, out: np.ndarray | None = None
) -> Sample:
    """Gaussians B and C (docs/design.md §6; PLAN Table 1): N(mean, diag(sigma^2)).

    sigma_i^2 = (d / i)^alpha for i = 1..d. Gaussian B varies alpha; Gaussian C is alpha = 2.
    Universe as in the published runs (not PLAN Table 1): [-M, M] with
    M = 50 * d * (max_i sigma_i^2)^(1/4), so sigma_max = d^(alpha/2) is public (``max_std``).
    ``out`` as in :func:`gaussian_a`.
    """
    check_positive_int(n=n)
    check_positive_int(d=d)
    _check_alpha(alpha)
    check_real(mean=mean)
    check_rng(rng)
    variances, radius = _skewed_variances(d=d, alpha=alpha)
    return _sample(n=n, mean=np.full(d, float(mean)), std=np.sqrt(variances), radius=radius, rng=rng, out=out,
                   max_std=math.sqrt(float(variances.max())))


def gaussian_a_corr_factor(*, d: int, rng: np.random.Generator) -> np.ndarray:
    """Lambda of Gaussian A' (PLAN Appendix E): d x d, Lambda_ij ~ Uniform(0, 1/sqrt(d)) for
    i < j and 0 elsewhere (strictly upper triangular). The covariance is Lambda Lambda^T + I."""
    check_positive_int(d=d)
    check_rng(rng)
    return np.triu(rng.uniform(0.0, 1.0 / math.sqrt(d), size=(d, d)), k=1)


def gaussian_a_corr(*, n: int, d: int, rng: np.random.Generator, out: np.ndarray | None = None) -> Sample:
    """Gaussian A' (PLAN Appendix E, Figure 7a: random correlation, no skew): N(0, Sigma) with
    Sigma = Lambda Lambda^T + I_d and Lambda from :func:`gaussian_a_corr_factor`.

    Lambda is drawn first from ``rng`` (so ``gaussian_a_corr_factor(d=d, rng=<same seed>)``
    recovers it), then the data as x = z1 @ Lambda^T + z2 with independent standard normal
    z1, z2 (n x d): Cov(x) = Lambda Lambda^T + I without a Cholesky factor, at the cost of one
    triangular n x d x d matrix product. true_std = sqrt(1 + sum_j Lambda_ij^2); no sigma_max is
    declared (``max_std`` None): the largest variance depends on the Lambda drawn.
    The paper says Sigma is "uniform in [1, 2) on the diagonal and in [0, 1) off it"; for its
    own construction the diagonal is 1 + (d - i)/(3d) on average (1 for the last coordinate)
    and the off-diagonal is at most about 1/4 on average. We follow the construction.
    Universe as Gaussian A in the published runs: [-M, M] with M = 25 sqrt(d). ``out`` as in
    :func:`gaussian_a`.
    """
    check_positive_int(n=n)
    check_positive_int(d=d)
    check_rng(rng)
    _check_out(out, n=n, d=d)
    factor = gaussian_a_corr_factor(d=d, rng=rng)
    x = rng.standard_normal((n, d)) if out is None else rng.standard_normal(out=out)
    # x^T = Lambda z1^T in place: x.T is the Fortran-ordered z1^T and factor.T the Fortran-ordered
    # Lambda^T (lower), so BLAS trmm multiplies by the triangle only (half a matrix product's flops).
    from scipy.linalg.blas import dtrmm  # imported here: scipy.linalg adds 0.05 s to every job and Snakefile parse

    dtrmm(1.0, factor.T, x.T, side=0, lower=1, trans_a=1, overwrite_b=1)
    # + z2, drawn in row chunks (the same stream as one draw) instead of one more n x d array
    chunk = np.empty((min(n, _NOISE_CHUNK_ROWS), d))
    for start in range(0, n, chunk.shape[0]):
        rows = min(chunk.shape[0], n - start)
        x[start:start + rows] += rng.standard_normal(out=chunk[:rows])
    std = np.sqrt(1.0 + np.einsum("ij,ij->i", factor, factor))
    radius = 25.0 * math.sqrt(d)
    return Sample(x=x, true_mean=np.zeros(d), true_std=std, bounds=(-radius, radius))


def gaussian_c_corr(
    *,
    n: int,
    d: int,
    rng: np.random.Generator,
    alpha: float = 2.0,
    correlation: float = 0.5,
    mean: float = 10.0,
    out: np.ndarray | None = None,
) -> Sample:
    """Gaussian C' (PLAN Appendix E, Figure 7b: skewed and correlated): N(mean, Sigma) with
    Sigma_ii = sigma_i^2, Sigma_ij = correlation * sigma_i sigma_j for i != j, and
    sigma_i^2 = (d / i)^alpha as in :func:`gaussian_skewed` (the paper: alpha = 2, correlation 0.5).

    Equicorrelation has a one-factor form: x_ij = mean + sigma_j (sqrt(c) s_i + sqrt(1 - c) z_ij)
    with s_i, z_ij independent standard normal and c = ``correlation`` gives Var = sigma_j^2 and
    Cov = c sigma_j sigma_k: O(n d), no d x d matrix. c must be in [0, 1] (c = 1 is a valid,
    rank-one covariance). Universe and sigma_max as :func:`gaussian_skewed`:
    M = 50 d (max_i sigma_i^2)^(1/4). ``out`` as in :func:`gaussian_a`.
    """
    check_positive_int(n=n)
    check_positive_int(d=d)
    _check_alpha(alpha)
    check_real(correlation=correlation)
    if not 0 <= correlation <= 1:
        raise ValueError(f"correlation must be in [0, 1], got correlation={correlation!r}")
    check_real(mean=mean)
    check_rng(rng)
    _check_out(out, n=n, d=d)
    variances, radius = _skewed_variances(d=d, alpha=alpha)
    std = np.sqrt(variances)
    shared = math.sqrt(correlation) * rng.standard_normal((n, 1))
    x = rng.standard_normal((n, d)) if out is None else rng.standard_normal(out=out)
    x *= math.sqrt(1.0 - correlation)  # in place: no second n x d temporary
    x += shared
    x *= std
    x += float(mean)
    return Sample(x=x, true_mean=np.full(d, float(mean)), true_std=std, bounds=(-radius, radius),
                  max_std=math.sqrt(float(variances.max())))


def coinpress_gaussian(
    *, n: int, d: int, radius_scale: float, rng: np.random.Generator, mean: float = 0.0, out: np.ndarray | None = None
) -> Sample:
    """The CoinPress mean experiments (docs/design.md §6; Biswas et al. 2020, Figures 3 and 4):
    N(mean 1_d, I_d) with the prior ball B(0, R), R = ``radius_scale`` sqrt(d), public
    (``prior_ball``; the paper: R = 10 sqrt(d), and R from sqrt(d) to 10^4 sqrt(d) in its sweep),
    and the identity covariance known (sigma_max = 1). The mean must lie in the ball,
    |mean| sqrt(d) <= R. Universe [-R, R], the box around the ball (CoinPress does not use it).
    ``out`` as in :func:`gaussian_a`.
    """
    check_positive_int(n=n)
    check_positive_int(d=d)
    radius = _prior_radius(radius_scale=radius_scale, mean=mean, d=d)
    check_rng(rng)
    return _sample(n=n, mean=np.full(d, float(mean)), std=np.ones(d), radius=radius, rng=rng, out=out, max_std=1.0,
                   prior_ball=PriorBall(np.zeros(d), radius))


def rotated_gaussian(
    *, n: int, d: int, rng: np.random.Generator, mu: float = 0.0, kappa: float = 1.0, radius_scale: float = 50.0,
    out: np.ndarray | None = None,
) -> Sample:
    """The IOME paper's statistical experiments (IOME Section 6.1, docs/design.md §7): N(mu 1_d,
    Sigma) (``mu``, not ``mean``: the experiments sweep it, and ``mean`` is a column of the
    summaries) with Sigma = U Lambda U^T, U a uniformly random (Haar) orthogonal matrix and
    Lambda = diag(lambda_i), lambda_i ~ Uniform[1, kappa] independently (the IOME authors'
    ``cov_sigma`` with sigma0 = kappa in {10, 100, 1000}: eigenvalues between 1 and kappa).
    ``kappa = 1`` is the identity: then nothing is drawn for Sigma and no rotation is applied.

    Drawn from ``rng`` in this order: the d eigenvalues, the d x d Gaussian matrix whose QR
    decomposition gives U (Q with each column's sign made that of R's diagonal entry, which
    makes Q Haar-distributed; Mezzadri 2007), then the rows as mu + (z * sqrt(Lambda)) U^T,
    z standard normal, in blocks of rows (one matrix product per block; no multivariate_normal,
    no Cholesky factor). A fresh Sigma per call, so per trial; the authors drew one Sigma per d
    and reused it for every trial (docs/design.md §7).

    Public knowledge as the authors' runs gave it: the prior ball B(0, R), R = ``radius_scale``
    sqrt(d) (their ``rfact``: 50 for Figures 1 and 2, 100 for Figures 3 to 5; the mean must lie in
    it, |mu| sqrt(d) <= R), and ``bounds = (-2R, 2R)``: their u = 2R. IOME and CM use
    ``bounds[1]`` as a bound on the rows' norms (the clip threshold's search range [0, u]) and
    IOME ``bounds / sqrt(D')`` as the range of a rotated coordinate; no coordinate is clipped to
    them. ``max_std = sqrt(kappa)`` (sigma_max: every coordinate's variance is a convex
    combination of the eigenvalues, at most kappa, public by design). The truth: ``true_mean``,
    ``true_std`` = sqrt(diag Sigma) and ``covariance_factors`` (U, Lambda) for the Mahalanobis
    error. ``out`` as in :func:`gaussian_a`.
    """
    check_positive_int(n=n)
    check_positive_int(d=d)
    check_real(kappa=kappa)
    if not 1.0 <= kappa <= _MAX_KAPPA:
        raise ValueError(f"kappa must be in [1, {_MAX_KAPPA:g}] (the eigenvalues are drawn from Uniform[1, kappa]), "
                         f"got kappa={kappa!r}")
    radius = _prior_radius(radius_scale=radius_scale, mean=mu, d=d, name="mu")
    check_rng(rng)
    _check_out(out, n=n, d=d)
    if kappa == 1.0:
        rotation, eigenvalues = None, np.ones(d)
    else:
        eigenvalues = rng.uniform(1.0, float(kappa), size=d)
        rotation = haar_orthogonal(d=d, rng=rng)
    x = np.empty((n, d)) if out is None else out
    if rotation is None:
        rng.standard_normal(out=x)
    else:
        scale = np.sqrt(eigenvalues)
        rotation_t = rotation.T
        chunk = np.empty((min(n, _ROTATED_CHUNK_ROWS), d))
        for start in range(0, n, chunk.shape[0]):
            rows = min(chunk.shape[0], n - start)
            block = rng.standard_normal(out=chunk[:rows])
            block *= scale
            np.matmul(block, rotation_t, out=x[start:start + rows])
    if mu != 0.0:
        x += float(mu)
    std = np.sqrt(eigenvalues) if rotation is None else np.sqrt(np.square(rotation) @ eigenvalues)
    return Sample(x=x, true_mean=np.full(d, float(mu)), true_std=std, bounds=(-2.0 * radius, 2.0 * radius),
                  prior_ball=PriorBall(np.zeros(d), radius), max_std=math.sqrt(float(kappa)),
                  covariance_factors=CovarianceFactors(rotation, eigenvalues))


def haar_orthogonal(*, d: int, rng: np.random.Generator) -> np.ndarray:
    """A d x d orthogonal matrix drawn uniformly (Haar measure): Q of the QR decomposition of a
    matrix of standard normals (drawn from ``rng``), each column multiplied by the sign of R's
    diagonal entry, which makes the decomposition unique and Q Haar (Mezzadri 2007)."""
    check_positive_int(d=d)
    check_rng(rng)
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    q *= np.where(np.diag(r) < 0.0, -1.0, 1.0)
    return q


def quadratic_ramp(*, n: int, d: int, rng: np.random.Generator, out: np.ndarray | None = None) -> Sample:
    """The data of IOME's Figure 9 (the clipping-threshold study, IOME Section 6.1; the authors'
    run_syn_qt.py): rows x_i = i^2 1_d for i = 1..n, so row norms i^2 sqrt(d) from 1 to n^2
    sqrt(d), a few large rows that a good threshold clips. Deterministic: ``rng`` draws nothing.
    The data are the population (empirical mean estimation): ``true_mean`` = the column means
    (n + 1)(2n + 1) / 6 and ``true_std`` their population standard deviation (exact integer
    sums). ``bounds = (-u, u)`` with u = n^2 sqrt(d), the largest row norm: a bound on the norms,
    as :func:`rotated_gaussian`'s. At n = 500, d = 32768 the array is 131 MB: ``out`` as in
    :func:`gaussian_a` fills the previous trial's array (one broadcast copy, no temporary).
    """
    check_positive_int(n=n)
    check_positive_int(d=d)
    check_rng(rng)
    _check_out(out, n=n, d=d)
    largest = float(n) ** 2 * math.sqrt(d)
    squares = np.arange(1, n + 1, dtype=np.float64) ** 2
    x = np.empty((n, d)) if out is None else out
    np.copyto(x, squares[:, None])
    # sum of i^2 and of i^4 over 1..n in integers: the mean and variance exactly, then rounded once
    second = n * (n + 1) * (2 * n + 1) // 6
    fourth = n * (n + 1) * (2 * n + 1) * (3 * n * n + 3 * n - 1) // 30
    variance = (n * fourth - second * second) / (n * n)
    return Sample(x=x, true_mean=np.full(d, second / n), true_std=np.full(d, math.sqrt(variance)),
                  bounds=(-largest, largest))


def gaussian_scalar(
    *, n: int, variance: float, rng: np.random.Generator, mean: float = 10.0, half_width: float = 10.0
) -> Sample:
    """The variance-estimation study (PLAN Table 2, docs/design.md §5.6): n draws of N(mean, variance)
    as one column. The paper does not state the universe; [mean - half_width, mean + half_width]
    (default [0, 20]) is +-10 standard deviations for variance 1."""
    check_positive_int(n=n)
    check_real(variance=variance)
    if variance <= 0:
        raise ValueError(f"variance must be > 0, got variance={variance!r}")
    check_real(mean=mean)
    check_real(half_width=half_width)
    if half_width <= 0:
        raise ValueError(f"half_width must be > 0, got half_width={half_width!r}")
    check_rng(rng)
    return _normal_column(n=n, std=math.sqrt(variance), mean=mean, half_width=half_width, rng=rng)


def gaussian_std(
    *, n: int, sigma: float, rng: np.random.Generator, mean: float = 10.0, bound_stds: float = 5.0
) -> Sample:
    """The authors' Table 2 data (PLAN Appendix D.2, their evaluation): n draws of
    N(mean, sigma^2) as one column, ``sigma`` being the standard deviation given to the normal
    sampler (the paper's table labels it sigma^2), and the universe mean +- ``bound_stds`` sigma
    (5 as the evaluation ran it: a universe taken from the true sigma)."""
    check_positive_int(n=n)
    check_real(sigma=sigma)
    if sigma <= 0:
        raise ValueError(f"sigma must be > 0, got sigma={sigma!r}")
    check_real(mean=mean)
    check_real(bound_stds=bound_stds)
    if bound_stds <= 0:
        raise ValueError(f"bound_stds must be > 0, got bound_stds={bound_stds!r}")
    check_rng(rng)
    half_width = float(bound_stds) * float(sigma)
    if not mean - half_width < mean + half_width:
        raise ValueError(f"bound_stds * sigma = {half_width!r} is too small to widen mean={mean!r} into an interval")
    return _normal_column(n=n, std=float(sigma), mean=mean, half_width=half_width, rng=rng)


def _normal_column(*, n: int, std: float, mean: float, half_width: float, rng: np.random.Generator) -> Sample:
    """n draws of N(mean, std^2) as one column, in the universe mean +- half_width."""
    x = rng.standard_normal((n, 1))
    x *= std
    x += mean
    return Sample(x=x, true_mean=np.array([float(mean)]), true_std=np.array([std]),
                  bounds=(mean - half_width, mean + half_width))


def _skewed_variances(*, d: int, alpha: float) -> tuple[np.ndarray, float]:
    """sigma_i^2 = (d / i)^alpha for i = 1..d and the universe radius 50 d (max sigma^2)^(1/4)."""
    variances = (d / np.arange(1, d + 1)) ** float(alpha)
    return variances, 50.0 * d * float(variances.max()) ** 0.25


def _prior_radius(*, radius_scale: float, mean: float, d: int, name: str = "mean") -> float:
    """R = radius_scale sqrt(d), checked (``radius_scale`` first, then the mean, the source's
    parameter ``name``), for the mean mean 1_d, which must lie in the prior ball B(0, R)."""
    check_real(radius_scale=radius_scale)
    if not 0 < radius_scale <= _MAX_RADIUS_SCALE:
        raise ValueError(f"radius_scale must be in (0, {_MAX_RADIUS_SCALE:g}], got radius_scale={radius_scale!r}")
    check_real(**{name: mean})
    radius = float(radius_scale) * math.sqrt(d)
    if abs(mean) * math.sqrt(d) > radius:
        raise ValueError(f"{name}={mean!r} lies outside the prior ball of radius R = radius_scale sqrt(d) = "
                         f"{radius:.6g} (|{name}| sqrt(d) = {abs(mean) * math.sqrt(d):.6g}); widen radius_scale")
    return radius


def _sample(
    *, n: int, mean: np.ndarray, std: np.ndarray, radius: float, rng: np.random.Generator, out: np.ndarray | None,
    max_std: float, prior_ball: PriorBall | None = None,
) -> Sample:
    _check_out(out, n=n, d=mean.size)
    # Into ``out``: a reused array is not page-faulted in again (the same values).
    x = rng.standard_normal((n, mean.size)) if out is None else rng.standard_normal(out=out)
    # In place, no second n x d temporary; Gaussian A's unit scale and zero mean skip the passes.
    if np.any(std != 1.0):
        x *= std
    if np.any(mean != 0.0):
        x += mean
    return Sample(x=x, true_mean=mean, true_std=std, bounds=(-radius, radius), prior_ball=prior_ball, max_std=max_std)


def _check_out(out, *, n: int, d: int) -> None:
    if out is None:
        return
    if not isinstance(out, np.ndarray) or out.shape != (n, d) or out.dtype != np.float64 or not (
        out.flags.c_contiguous and out.flags.writeable
    ):
        raise ValueError(
            f"out must be a writable C-contiguous float64 array of shape ({n}, {d}), got {type(out).__name__}"
            f" with shape {getattr(out, 'shape', None)} and dtype {getattr(out, 'dtype', None)}"
        )


def _check_alpha(alpha: object) -> None:
    check_real(alpha=alpha)
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got alpha={alpha!r}")
