"""Error metrics by config name. Each is ``f(estimate, sample, empirical_mean)`` and returns
(error, error_vs_empirical): the distance to the truth (NaN where the sample's distribution is
unknown, e.g. a fixed real dataset), and where defined the distance to the sample's own
non-private statistic (the empirical mean is computed once per trial)."""
from __future__ import annotations

import math

import numpy as np


def _distance_to_truth(estimate, sample, norm) -> float:
    return math.nan if sample.true_mean is None else norm(estimate - sample.true_mean)


def _l2(difference) -> float:
    return float(np.linalg.norm(difference))


def _half_l1(difference) -> float:
    return float(np.abs(difference).sum()) / 2.0


def l2(estimate, sample, empirical_mean):
    """l2 distance to the true mean, and to the empirical mean (docs/design.md §6)."""
    return _distance_to_truth(estimate, sample, _l2), _l2(estimate - empirical_mean)


def l1_half(estimate, sample, empirical_mean):
    """||truth - estimate||_1 / 2, the binary experiments' error (docs/design.md §5.4; PLAN Section
    7.2.2: total variation distance without normalising), against the true item
    probabilities and against the empirical frequencies."""
    return _distance_to_truth(estimate, sample, _half_l1), _half_l1(estimate - empirical_mean)


def relative_variance(estimate, sample, empirical_mean):
    """|sigma_hat^2 - sigma^2| / sigma^2 averaged over coordinates (Table 2, docs/design.md §5.6)."""
    variance = np.square(sample.true_std)
    return float(np.mean(np.abs(estimate - variance) / variance)), math.nan


def relative_std(estimate, sample, empirical_mean):
    """|sigma_hat - sigma| / sigma averaged over coordinates, ``estimate`` holding standard
    deviations and sigma the distribution's (the error the authors' evaluation of Table 2
    reports, PLAN Appendix D.2)."""
    std = np.asarray(sample.true_std, dtype=float)
    return float(np.mean(np.abs(estimate - std) / std)), math.nan


def _l1(difference) -> float:
    return float(np.abs(difference).sum())


def l1(estimate, sample, empirical_mean):
    """||truth - estimate||_1 (|truth - estimate| for d = 1; the user-level error, docs/design.md
    §5.7), and to the empirical mean."""
    return _distance_to_truth(estimate, sample, _l1), _l1(estimate - empirical_mean)


def mahalanobis(estimate, sample, empirical_mean):
    """||Sigma^(-1/2) (estimate - mu)||_2 with Sigma the distribution's true covariance (IOME
    Section 6.1, its Figure 5: the error in the distribution's own geometry), against the true
    mean and, in the same norm, against the empirical mean (docs/design.md §3, §7). Read off the
    sample's ``covariance_factors`` (U, Lambda): ||Lambda^(-1/2) U^T v||, O(d^2) per estimate."""
    factors = sample.covariance_factors
    if factors is None:
        raise ValueError("metric 'mahalanobis' needs the true covariance of the sample's distribution "
                         "(Sample.covariance_factors), and this data source states none; use a source that does "
                         "(rotated_gaussian) or another metric")

    def norm(difference) -> float:
        return _l2(factors.whitened(difference))

    return _distance_to_truth(estimate, sample, norm), norm(estimate - empirical_mean)


def _true_covariance(sample) -> np.ndarray | None:
    """The covariance of the sample's distribution: the d x d matrix of a source that states it
    (``Sample.covariance_factors``, Sigma = U diag(lambda) U^T: the rotated Gaussians), else its d
    variances diag(true_std^2), or None where it is unknown; :func:`_mahalanobis` takes either form."""
    if sample.covariance_factors is not None:
        return sample.covariance_factors.matrix()
    return None if sample.true_std is None else np.square(np.asarray(sample.true_std, dtype=float))


def _mahalanobis(estimate, covariance) -> float:
    """||S^(-1/2) estimate S^(-1/2) - I||_F for S given by its d variances (a diagonal) or as a symmetric
    positive definite d x d matrix (its symmetric inverse root, from one eigendecomposition); NaN when S
    is singular (no such distance)."""
    estimate = np.asarray(estimate, dtype=float)
    if covariance.ndim == 1:
        if not np.all(covariance > 0):
            return math.nan
        root = np.sqrt(covariance)
        scaled = estimate / root[:, None] / root[None, :]
    else:
        values, vectors = np.linalg.eigh(covariance)
        if not values[0] > values[-1] * len(values) * np.finfo(float).eps:
            return math.nan
        inverse_root = (vectors / np.sqrt(values)) @ vectors.T
        scaled = inverse_root @ estimate @ inverse_root
    return float(np.linalg.norm(scaled - np.eye(len(scaled))))


def covariance_mahalanobis(estimate, sample, empirical_mean):
    """||Sigma^(-1/2) Sigma_hat Sigma^(-1/2) - I||_F of a covariance estimate Sigma_hat (d x d; the CoinPress
    paper's covariance error, docs/design.md §5.12), against the distribution's covariance (NaN where
    unknown), and against the sample's own covariance (centred at the sample mean, divided by n, the
    non-private estimate: 0 for empirical_covariance; NaN where it is singular, e.g. n <= d, or for sparse
    data)."""
    truth = _true_covariance(sample)
    error = math.nan if truth is None else _mahalanobis(estimate, truth)
    if not isinstance(sample.x, np.ndarray):  # sparse (binary) rows: no covariance experiment runs on them
        return error, math.nan
    centred = sample.x - empirical_mean
    return error, _mahalanobis(estimate, centred.T @ centred / sample.x.shape[0])


METRICS = {"l2": l2, "l1_half": l1_half, "l1": l1, "relative_variance": relative_variance,
           "relative_std": relative_std, "mahalanobis": mahalanobis, "covariance_mahalanobis": covariance_mahalanobis}

# Batched experiments (the user-level family, docs/design.md §5.7): the error of every run of a batch
# at once, ``f(estimates, truths)`` on (runs, d) arrays.
BATCHED_METRICS = {"l1": lambda estimates, truths: np.abs(estimates - truths).sum(axis=-1)}
