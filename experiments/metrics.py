"""Error metrics by config name. Each is ``f(estimate, sample, empirical_mean)`` and returns
(error, error_vs_empirical): the distance to the truth, and where defined the distance to the
sample's own non-private statistic (the empirical mean is computed once per trial)."""
from __future__ import annotations

import math

import numpy as np


def l2(estimate, sample, empirical_mean):
    """l2 distance to the true mean, and to the empirical mean (DESIGN.md 6)."""
    return (
        float(np.linalg.norm(estimate - sample.true_mean)),
        float(np.linalg.norm(estimate - empirical_mean)),
    )


def relative_variance(estimate, sample, empirical_mean):
    """|sigma_hat^2 - sigma^2| / sigma^2 averaged over coordinates (Table 2, DESIGN.md 5.6)."""
    variance = np.square(sample.true_std)
    return float(np.mean(np.abs(estimate - variance) / variance)), math.nan


METRICS = {"l2": l2, "relative_variance": relative_variance}
