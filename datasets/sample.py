"""The sample a data source returns (docs/design.md §3, §6): the data and what is known about the
distribution they were drawn from."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse


class PriorBall(NamedTuple):
    """Public knowledge that the mean lies in the l2 ball B(centre, radius): ``centre`` d numbers,
    ``radius`` > 0 (CoinPress's prior, docs/design.md §5.9)."""

    centre: np.ndarray
    radius: float


class CovarianceFactors(NamedTuple):
    """The true covariance Sigma = U diag(eigenvalues) U^T of a source's distribution, kept as its
    factors: ``rotation`` U (d x d, orthogonal; None for the identity) and ``eigenvalues`` (d
    numbers > 0). The truth, for the Mahalanobis error (experiments.engine.metrics); never passed to a
    mechanism. With the factors that error costs O(d^2) per estimate, no decomposition."""

    rotation: np.ndarray | None
    eigenvalues: np.ndarray

    def whitened(self, vectors) -> np.ndarray:
        """Lambda^(-1/2) U^T v for every row v of ``vectors`` (..., d): its l2 norm is
        ||Sigma^(-1/2) v||, as Sigma^(-1/2) = U Lambda^(-1/2) U^T and U is orthogonal."""
        rotated = np.asarray(vectors, dtype=float)
        if self.rotation is not None:
            rotated = rotated @ self.rotation
        return rotated / np.sqrt(self.eigenvalues)

    def matrix(self) -> np.ndarray:
        """Sigma itself (d x d)."""
        if self.rotation is None:
            return np.diag(self.eigenvalues)
        return (self.rotation * self.eigenvalues) @ self.rotation.T


# eq=False: the generated __eq__/__hash__ would compare arrays element-wise and fail.
@dataclass(frozen=True, eq=False)
class Sample:
    """n rows of data and their distribution's statistics.

    ``x`` is an n x d float64 array, or a ``scipy.sparse.csr_matrix`` for sparse (binary)
    data, which nothing densifies. ``true_mean`` and ``true_std`` are the per-coordinate mean
    and standard deviation of the distribution, or None where they are unknown (a fixed real
    dataset). ``bounds = (lo, hi)`` is the universe of every coordinate that the mechanisms
    are told (the published runs' universe, docs/design.md §6). User-level data (docs/design.md §5.7) are a
    batch of runs: ``x`` is (runs, n[, d]), ``users`` the user index of each sample, and
    ``true_mean`` the target f(D) of each run.

    Public knowledge beyond the universe, which the engine passes to the mechanisms that take it
    (docs/design.md §5.9), or None where the source states none: ``prior_ball``, a
    :class:`PriorBall` known to hold the mean (CoinPress's prior; without one a mechanism may
    take the ball circumscribing the universe box), and ``max_std``, sigma_max, the largest
    standard deviation of any coordinate as the experiment's design states it (Gaussian B and C
    derive their universe from it).

    ``covariance_factors``: the distribution's true covariance as :class:`CovarianceFactors`, for
    the Mahalanobis error (experiments.engine.metrics), or None where the source states none. It is
    the truth, not public knowledge: the engine gives it to no mechanism.
    """

    x: np.ndarray | scipy.sparse.csr_matrix
    true_mean: np.ndarray | None
    true_std: np.ndarray | None
    bounds: tuple[float, float]
    users: np.ndarray | None = None  # user-level data: the user of each sample (docs/design.md §5.7)
    prior_ball: PriorBall | None = None
    max_std: float | None = None
    covariance_factors: CovarianceFactors | None = None

    @property
    def is_sparse(self) -> bool:
        return scipy.sparse.issparse(self.x)


def column_means(x) -> np.ndarray:
    """The empirical mean of the rows of ``x`` (dense or sparse), as a dense vector; a sparse
    ``x`` is summed column by column, never densified."""
    if scipy.sparse.issparse(x):
        return np.asarray(x.sum(axis=0), dtype=np.float64).ravel() / x.shape[0]
    return x.mean(axis=0)
