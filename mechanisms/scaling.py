"""Choosing the scaling value: the setting of the PLAN paper's Appendix C (Lemmas C.1-C.3).

d independent real-valued queries with l2 sensitivities Delta_i are answered together: the
answers are divided by a scaling vector s, released with the Gaussian mechanism, and multiplied
by s again. Dividing by s gives the scaled query the l2 sensitivity
Delta_bar = sqrt(sum_i (Delta_i / s_i)^2), so noise N(0, Delta_bar^2 / (2 rho) I) makes the release
rho-zCDP, and after scaling back coordinate i carries noise of standard deviation
Delta_bar s_i / sqrt(2 rho). The scalings drawn in the paper's Figure 6 are powers
s_i = Delta_i^gamma (``gamma`` is that exponent, not the scalar called gamma in the proof of
Lemma C.2):

- gamma = 2 / (p + 2) minimises the p-th moment E||eta||_p^p (Lemma C.2: 2/3 for p = 1, 1/2 for
  p = 2), PLAN's scaling (Algorithm 1, line 5, with the variances in place of Delta^2);
- gamma = 1 splits the budget evenly: each query is answered alone with rho / d;
- gamma = 0 is no scaling: the same noise Delta_bar / sqrt(2 rho) = ||Delta||_2 / sqrt(2 rho) on
  every coordinate.
"""
from __future__ import annotations

import math

import numpy as np

from ._validation import as_real, check_budget, check_generator, check_positive, check_positive_int

__all__ = [
    "expected_noise_moment",
    "moment_optimal_gamma",
    "noise_std",
    "optimal_noise_moment",
    "power_scaling",
    "sample_noise",
]


def _check_vector(values, name: str) -> np.ndarray:
    """A non-empty 1-D array of finite values > 0, as float64 (a new array: inputs are never modified)."""
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-D array of numbers > 0, got {name}={values!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got {name} with shape {arr.shape}")
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr > 0)))
    if bad.size:
        raise ValueError(f"{name} must be finite and > 0, got {name}[{bad[0]}]={float(arr[bad[0]])!r}")
    return arr


def _check_pair(sensitivities, scaling) -> tuple[np.ndarray, np.ndarray]:
    delta = _check_vector(sensitivities, "sensitivities")
    s = _check_vector(scaling, "scaling")
    if s.shape != delta.shape:
        raise ValueError(f"scaling must have one value per query ({delta.size}), got scaling with shape {s.shape}")
    return delta, s


def moment_optimal_gamma(p) -> float:
    """2 / (p + 2): s_i proportional to Delta_i^(2 / (p + 2)) minimises E||eta||_p^p (Lemma C.2)."""
    return 2.0 / (check_positive(p, "p") + 2.0)


def power_scaling(sensitivities, *, gamma) -> np.ndarray:
    """The scaling vector s_i = Delta_i^gamma (any positive multiple gives the same noise)."""
    delta = _check_vector(sensitivities, "sensitivities")
    gamma = as_real(gamma, "gamma", "a finite number")
    if not math.isfinite(gamma):
        raise ValueError(f"gamma must be a finite number, got gamma={gamma!r}")
    with np.errstate(over="ignore", under="ignore"):
        s = delta**gamma
    if not np.all(np.isfinite(s) & (s > 0)):
        raise ValueError(f"sensitivities ** gamma leaves float64 (gamma={gamma!r}, sensitivities from "
                         f"{delta.min():.3g} to {delta.max():.3g}); use a smaller |gamma| or rescale the sensitivities")
    return s


def noise_std(sensitivities, *, scaling, rho) -> np.ndarray:
    """Per-query noise standard deviation after scaling back: Delta_bar s_i / sqrt(2 rho), with
    Delta_bar^2 = sum_i (Delta_i / s_i)^2 the scaled query's squared l2 sensitivity (Appendix C,
    the setting of Lemma C.1). The release is rho-zCDP whatever ``scaling``."""
    delta, s = _check_pair(sensitivities, scaling)
    rho = check_budget(rho, "rho")
    # Delta_bar s_i = s_i ||Delta / s||_2, computed relative to max(s) so that no square overflows
    relative = s / s.max()
    with np.errstate(over="ignore", under="ignore"):
        std = relative * np.linalg.norm(delta / relative) / math.sqrt(2.0 * rho)
    if not np.all(np.isfinite(std) & (std > 0)):
        raise ValueError(f"the noise of sensitivities from {delta.min():.3g} to {delta.max():.3g}, scaling from "
                         f"{s.min():.3g} to {s.max():.3g} and rho={rho!r} leaves float64")
    return std


def _absolute_moment_factor(p: float) -> float:
    """E|Z|^p of a standard normal Z: 2^(p/2) Gamma((p + 1) / 2) / sqrt(pi) (Lemma A.2)."""
    return math.exp(0.5 * p * math.log(2.0) + math.lgamma(0.5 * (p + 1.0)) - 0.5 * math.log(math.pi))


def expected_noise_moment(sensitivities, *, scaling, rho, p) -> float:
    """E||eta||_p^p of the noise after scaling back (Lemma C.1):
    Gamma((p + 1) / 2) / (rho^(p/2) sqrt(pi)) sum_i (Delta_bar s_i)^p, i.e. the sum over the
    queries of E|N(0, std_i^2)|^p."""
    p = check_positive(p, "p")
    std = noise_std(sensitivities, scaling=scaling, rho=rho)
    return float(_absolute_moment_factor(p) * np.sum(std**p))


def optimal_noise_moment(sensitivities, *, rho, p) -> float:
    """The smallest p-th moment over all scalings (Lemma C.3):
    Gamma((p + 1) / 2) / (rho^(p/2) sqrt(pi)) ||Delta||_{2p/(p+2)}^p."""
    delta = _check_vector(sensitivities, "sensitivities")
    rho = check_budget(rho, "rho")
    p = check_positive(p, "p")
    q = 2.0 * p / (p + 2.0)
    # ||Delta||_q^p = (sum Delta_i^q)^(p / q); Gamma((p + 1) / 2) / sqrt(pi) = E|Z|^p / 2^(p/2)
    norm_power = float(np.sum(delta**q)) ** (p / q)
    return _absolute_moment_factor(p) / (2.0 * rho) ** (0.5 * p) * norm_power


def sample_noise(sensitivities, *, scaling, rho, size, rng) -> np.ndarray:
    """``size`` draws (size x d) of the noise the release adds after scaling back: Gaussian noise
    N(0, Delta_bar^2 / (2 rho) I) on the scaled answers, multiplied by s (Appendix C)."""
    std = noise_std(sensitivities, scaling=scaling, rho=rho)
    size = check_positive_int(size, "size")
    rng = check_generator(rng)
    # standard normals times Delta_bar / sqrt(2 rho) (the scaled release), times s_i: std_i per query
    return rng.standard_normal((size, std.size)) * std
