"""A clipped mean with the Gaussian mechanism, written as a user writes an estimator of their own
and run by the workflow as a plug-in (docs/configuration.md, "Your own estimator"):

    variants:
      ClippedMean: {algorithm: "examples/plugins/clipped_mean.py:clipped_mean", interval: [-4, 4]}

Privacy (rho-zCDP under swap neighbours, docs/design.md §5.0): every coordinate is clipped to
an interval [a, b] fixed before seeing the data (the universe ``bounds``, or ``interval``), so
swapping one of the n rows moves the mean of the clipped rows by at most (b - a) sqrt(d) / n in
l2 norm; Gaussian noise of std sensitivity / sqrt(2 rho) per coordinate makes that release
rho-zCDP (Bun and Steinke 2016, Proposition 1.6; mechanisms.gaussian_sigma). The whole budget
goes to that one release, so the ledger is one entry of rho.
"""
import math

import numpy as np

from mechanisms import Estimate, LedgerEntry, gaussian_sigma


def clipped_mean(x, *, rho, bounds, rng, interval=None):
    """The mean of the rows of ``x`` (n x d, dense) clipped to ``interval`` (default ``bounds``,
    the universe the engine passes) plus N(0, sigma^2 I_d), sigma = (b - a) sqrt(d) / (n sqrt(2 rho)).

    ``interval`` must not be chosen by looking at the data: it is part of the mechanism. A
    narrower one than the universe adds less noise and more clipping bias."""
    if not isinstance(x, np.ndarray) or x.ndim != 2:
        raise ValueError(f"x must be a dense n x d array, got {type(x).__name__}")
    low, high = (float(value) for value in (bounds if interval is None else interval))
    if not low < high:
        raise ValueError(f"interval must be [a, b] with a < b, got interval={interval!r}")
    n, d = x.shape
    clipped = np.clip(x, low, high)
    sigma = gaussian_sigma(sensitivity=(high - low) * math.sqrt(d) / n, rho=rho)
    mean = clipped.mean(axis=0) + rng.normal(0.0, sigma, size=d)
    diagnostics = {
        "true_rho": float(rho),
        "noise_std": sigma,
        "fraction_clipped": float(np.mean((x < low) | (x > high))),
    }
    return Estimate(mean=mean, ledger=(LedgerEntry("gaussian_mean", float(rho)),), diagnostics=diagnostics)
