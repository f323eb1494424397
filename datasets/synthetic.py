"""Synthetic Gaussian data for the PLAN experiments (DESIGN.md section 6).

Data are drawn as ``mean + std * rng.standard_normal((n, d))`` rather than with
``multivariate_normal``: the covariances are diagonal, and this is much faster
(DESIGN.md section 8). All randomness comes from the ``rng`` passed in.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np


# eq=False: the generated __eq__/__hash__ would compare arrays element-wise and fail.
@dataclass(frozen=True, eq=False)
class GaussianSample:
    """n draws from N(true_mean, diag(true_std**2)) and the universe [lo, hi] of every coordinate."""

    x: np.ndarray
    true_mean: np.ndarray
    true_std: np.ndarray
    bounds: tuple[float, float]


def gaussian_a(*, n: int, d: int, rng: np.random.Generator) -> GaussianSample:
    """Gaussian A (DESIGN.md section 6; PLAN Table 1): N(0, I_d).

    Universe as in the published runs: [-M, M] with M = 25 * sqrt(d).
    """
    _check_positive_int(n=n)
    _check_positive_int(d=d)
    _check_rng(rng)
    radius = 25.0 * math.sqrt(d)
    return _sample(n=n, mean=np.zeros(d), std=np.ones(d), radius=radius, rng=rng)


def gaussian_skewed(
    *, n: int, d: int, alpha: float, rng: np.random.Generator, mean: float = 10.0
) -> GaussianSample:
    """Gaussians B and C (DESIGN.md section 6; PLAN Table 1): N(mean, diag(sigma^2)).

    sigma_i^2 = (d / i)^alpha for i = 1..d. Gaussian B varies alpha; Gaussian C is alpha = 2.
    Universe as in the published runs (not PLAN Table 1): [-M, M] with
    M = 50 * d * (max_i sigma_i^2)^(1/4).
    """
    _check_positive_int(n=n)
    _check_positive_int(d=d)
    _check_real(alpha=alpha)
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got alpha={alpha!r}")
    _check_real(mean=mean)
    _check_rng(rng)
    variances = (d / np.arange(1, d + 1)) ** float(alpha)
    radius = 50.0 * d * float(variances.max()) ** 0.25
    return _sample(
        n=n, mean=np.full(d, float(mean)), std=np.sqrt(variances), radius=radius, rng=rng
    )


def _sample(
    *, n: int, mean: np.ndarray, std: np.ndarray, radius: float, rng: np.random.Generator
) -> GaussianSample:
    x = mean + std * rng.standard_normal((n, mean.size))
    return GaussianSample(x=x, true_mean=mean, true_std=std, bounds=(-radius, radius))


def _check_positive_int(**kwargs: object) -> None:
    ((name, value),) = kwargs.items()
    # bool is an int subclass, but n=True is a bug, not a size.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {name}={value!r}")


def _check_real(**kwargs: object) -> None:
    ((name, value),) = kwargs.items()
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {name}={value!r}")


def _check_rng(rng: object) -> None:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), got rng={rng!r}"
        )
