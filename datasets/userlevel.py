"""User-level data for the user-level clipping experiments (docs/design.md §5.7; Rameshwar & Tandon,
Section IV-A).

L users, user l holding m_l samples in (0, U] (d = 1) or in the l1 simplex of radius U
(d >= 2). The counts m_l are public and fixed per experiment, so the count generators take no
``rng``; the samples are redrawn for every Monte-Carlo run, all runs in one vectorised draw
(docs/design.md §5.7: "the whole batch of 10^4 runs vectorised in one call"). All randomness comes
from the ``rng`` passed in; the same generator state gives byte-identical arrays.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

# The argument checks are shared with the other generators, so all name bad values alike.
from datasets.checks import check_positive_int, check_real, check_rng

_SCALAR_DISTRIBUTIONS = ("uniform", "projected_gaussian")  # d == 1
_VECTOR_DISTRIBUTIONS = ("simplex",)  # d >= 2
_COLLECTIONS = ("geometric", "extreme", "zipf")
# Extra candidates per rejection round of the projected Gaussian, beyond the expected need, so
# that one round almost always fills every rejected entry; and a cap on one round's draws.
_REJECTION_MARGIN = 1.25
_REJECTION_EXTRA = 16
_REJECTION_ROUND_MAX = 1 << 22


# eq=False: the generated __eq__/__hash__ would compare arrays element-wise and fail.
@dataclass(frozen=True, eq=False)
class UserSamples:
    """A batch of Monte-Carlo runs of one user-level dataset (docs/design.md §5.7).

    ``samples`` is float64 of shape (runs, n) for d = 1 and (runs, n, d) for d >= 2: row r is
    run r's n samples. ``users`` (n,) int64 gives the user of each sample; it is sorted (user
    0's samples first, then user 1's, ...) and every user 0..L-1 has at least one sample, so
    ``counts`` = bincount(users) are the public m_l. ``bound`` is U: every sample lies in
    (0, U] (d = 1) or in {x >= 0, ||x||_1 <= U} (d >= 2).
    """

    samples: np.ndarray
    users: np.ndarray
    bound: float

    def __post_init__(self) -> None:
        users, samples = self.users, self.samples
        if not isinstance(users, np.ndarray) or users.ndim != 1 or users.dtype != np.int64 or users.size == 0:
            raise ValueError(
                f"users must be a non-empty 1-D int64 array, got {type(users).__name__} with shape"
                f" {getattr(users, 'shape', None)} and dtype {getattr(users, 'dtype', None)}"
            )
        steps = np.diff(users)
        if users[0] != 0 or np.any((steps != 0) & (steps != 1)):
            raise ValueError(
                "users must be sorted and cover 0..L-1 without gaps (every user has a sample),"
                f" got users starting {users[:8].tolist()}"
            )
        if (
            not isinstance(samples, np.ndarray)
            or samples.dtype != np.float64
            or samples.ndim not in (2, 3)
            or samples.shape[0] < 1
            or samples.shape[1] != users.size
            or (samples.ndim == 3 and samples.shape[2] < 2)
        ):
            raise ValueError(
                f"samples must be float64 of shape (runs, {users.size}) or (runs, {users.size}, d) with d >= 2,"
                f" got {type(samples).__name__} with shape {getattr(samples, 'shape', None)}"
                f" and dtype {getattr(samples, 'dtype', None)}"
            )
        _check_bound(self.bound)

    @property
    def counts(self) -> np.ndarray:
        """m_l, the number of samples of user l (int64, length L)."""
        return np.bincount(self.users)

    @property
    def d(self) -> int:
        return 1 if self.samples.ndim == 2 else int(self.samples.shape[2])

    @property
    def runs(self) -> int:
        return int(self.samples.shape[0])

    @property
    def n(self) -> int:
        """sum_l m_l, the total number of samples."""
        return int(self.users.size)

    def user_sums(self) -> np.ndarray:
        """sigma_l = sum_j x_j^(l), each user's sum of samples, per run: (runs, L) for d = 1,
        (runs, L, d) for d >= 2 (the AKMV user contributions; divided by ``counts``, the
        per-user averages the paper substitutes before clipping, Section IV-B)."""
        starts = np.flatnonzero(np.diff(self.users, prepend=-1))
        return np.add.reduceat(self.samples, starts, axis=1)


def geometric_counts(*, M: int = 6) -> np.ndarray:
    """The geometric collection (Section IV-A, item 1): L = 2^(M+1) - 1 users; for i = 0..M,
    2^i users contribute 2^(M-i) samples each (the paper: M = 6, so L = 127, n = 448).
    Largest counts first: 1 user with 2^M samples, 2 with 2^(M-1), ..., 2^M users with 1."""
    _check_nonnegative_int(M=M)
    i = np.arange(M + 1, dtype=np.int64)
    return np.repeat(np.left_shift(1, M - i), np.left_shift(1, i))


def extreme_counts(*, L: int = 101, m_star: int = 10) -> np.ndarray:
    """The extreme-valued collection (Section IV-A, item 2): L - 1 users with one sample each
    and one user with m_star (the paper: L = 101, m_star = 10, so n = 110). The heavy user comes
    first, so that every collection lists its counts largest first (the mechanisms do not
    depend on the order of users)."""
    check_positive_int(L=L)
    check_positive_int(m_star=m_star)
    counts = np.ones(L, dtype=np.int64)
    counts[0] = m_star
    return counts


def zipf_counts(*, L: int, exponent: float, max_count: int) -> np.ndarray:
    """A heavy-tailed collection of our own (not in the paper): m_l = max(1, round(max_count *
    l^-exponent)) for l = 1..L, rounding halves up. A Zipf law, as user activity in
    spatio-temporal and usage logs commonly follows: a few heavy users and many with one sample.

    Deterministic on purpose: the counts are public and fixed per experiment, like the paper's
    two collections; only the samples are random. Non-increasing, first = max_count (l = 1),
    every count >= 1; exponent = 0 gives max_count samples for every user.
    """
    check_positive_int(L=L)
    check_real(exponent=exponent)
    if exponent < 0:
        raise ValueError(f"exponent must be >= 0, got exponent={exponent!r}")
    check_positive_int(max_count=max_count)
    scaled = max_count * np.arange(1, L + 1, dtype=np.float64) ** -float(exponent)
    return np.maximum(1, np.floor(scaled + 0.5)).astype(np.int64)


def user_samples(
    counts, *, runs: int, d: int = 1, bound: float = 65.0, distribution: str, rng: np.random.Generator
) -> UserSamples:
    """``runs`` independent datasets of n = sum(counts) i.i.d. samples, user l holding counts[l]
    of them (Section IV-A; docs/design.md §5.7: fresh data each run). U = ``bound`` (the paper: 65).

    ``distribution``:
    - "uniform" (d = 1): Unif((0, U]) (the paper's samples for the geometric collection), as
      U (1 - V) with V uniform on [0, 1), which lies in (0, U].
    - "projected_gaussian" (d = 1): N(U/2, U/4) with U/4 the variance (the paper writes
      N(mean, variance)), rejection-sampled into (0, U]. A candidate is accepted with probability
      p = erf(sqrt(U/2)) (about 1 - 6e-16 for U = 65, 0.68 for U = 1): every rejected entry is
      replaced by a fresh accepted candidate, the candidates drawn in vectorised rounds of about
      (rejected / p) draws until none is left. The accepted candidates are i.i.d. from the
      truncated normal, so this is exact rejection sampling.
    - "simplex" (d >= 2): uniform on the full-dimensional simplex {x >= 0, sum_i x_i <= U},
      our reading of "the l1 simplex of radius U" (docs/design.md §5.7; the paper runs d = 1 only):
      (E_1..E_d) U / (E_1 + ... + E_{d+1}) with E_i i.i.d. standard exponential, the first d
      coordinates of U Dirichlet(1, ..., 1) on d + 1 coordinates. The l1 norm is <= U up to
      floating-point rounding (a relative 1e-15, only when the slack E_{d+1} is ~0).

    The runs x n (x d) values come from one vectorised draw (the simplex takes a second for the
    slack coordinate), no loop over runs or users. counts: a non-empty 1-D sequence of
    positive integers.
    """
    counts = _check_counts(counts)
    check_positive_int(runs=runs)
    check_positive_int(d=d)
    _check_bound(bound)
    _check_distribution(distribution, d=d)
    check_rng(rng)
    users = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    shape = (runs, users.size)
    bound = float(bound)
    if distribution == "uniform":
        samples = rng.random(shape)
        np.subtract(1.0, samples, out=samples)  # [0, 1) -> (0, 1]
        samples *= bound
    elif distribution == "projected_gaussian":
        samples = _projected_gaussian(shape, bound=bound, rng=rng)
    else:
        samples = _simplex(shape, d=d, bound=bound, rng=rng)
    return UserSamples(samples=samples, users=users, bound=bound)


def collection_counts(collection: str, *, M: int = 6, L: int = 101, m_star: int = 10, exponent: float = 1.0,
                      max_count: int = 64) -> np.ndarray:
    """The public counts m_l of a named collection (the parameters of the others are ignored)."""
    if collection == "geometric":
        return geometric_counts(M=M)
    if collection == "extreme":
        return extreme_counts(L=L, m_star=m_star)
    if collection == "zipf":
        return zipf_counts(L=L, exponent=exponent, max_count=max_count)
    raise ValueError(f"collection must be one of {_quoted(_COLLECTIONS)}, got collection={collection!r}")


def userlevel_collection(
    *,
    collection: str,
    runs: int,
    rng: np.random.Generator,
    d: int = 1,
    bound: float = 65.0,
    M: int = 6,
    L: int = 101,
    m_star: int = 10,
    exponent: float = 1.0,
    max_count: int = 64,
    distribution: str | None = None,
) -> UserSamples:
    """The engine's entry point: the counts of ``collection`` and ``runs`` datasets drawn on them.

    - "geometric": :func:`geometric_counts` (M); default distribution "uniform" (Figure 2).
    - "extreme": :func:`extreme_counts` (L, m_star); default "projected_gaussian" (Figure 3).
    - "zipf": :func:`zipf_counts` (L, exponent, max_count); default "uniform".
    For d >= 2 every collection defaults to "simplex" (the only distribution there). Parameters
    of the other collections are ignored.
    """
    counts = collection_counts(collection, M=M, L=L, m_star=m_star, exponent=exponent, max_count=max_count)
    default = "projected_gaussian" if collection == "extreme" else "uniform"
    check_positive_int(d=d)
    if distribution is None:
        distribution = default if d == 1 else _VECTOR_DISTRIBUTIONS[0]
    return user_samples(counts, runs=runs, d=d, bound=bound, distribution=distribution, rng=rng)


def _projected_gaussian(shape: tuple[int, int], *, bound: float, rng: np.random.Generator) -> np.ndarray:
    """N(U/2, variance U/4) conditioned on (0, U], by rejection (see :func:`user_samples`)."""
    mean, std = bound / 2.0, math.sqrt(bound / 4.0)
    samples = rng.standard_normal(shape)
    samples *= std
    samples += mean
    flat = samples.reshape(-1)  # a view: writes go to samples
    rejected = np.flatnonzero(~((flat > 0.0) & (flat <= bound)))
    # (0, U] is U/2 +- sqrt(U) standard deviations, so p = P(|Z| <= sqrt(U)) = erf(sqrt(U / 2)).
    from scipy.special import erf  # imported here: scipy.special adds 0.05 s to every job

    accepted = float(erf(math.sqrt(bound / 2.0)))
    while rejected.size:
        wanted = math.ceil(rejected.size / accepted * _REJECTION_MARGIN) + _REJECTION_EXTRA
        draws = min(wanted, _REJECTION_ROUND_MAX)
        candidates = mean + std * rng.standard_normal(draws)
        kept = candidates[(candidates > 0.0) & (candidates <= bound)][: rejected.size]
        flat[rejected[: kept.size]] = kept
        rejected = rejected[kept.size:]
    return samples


def _simplex(shape: tuple[int, int], *, d: int, bound: float, rng: np.random.Generator) -> np.ndarray:
    """Uniform on {x in R^d : x >= 0, sum x <= U}: normalised exponential spacings (see
    :func:`user_samples`), drawn into the output array; the slack coordinate separately, so
    there is no (runs, n, d + 1) temporary."""
    samples = rng.standard_exponential((*shape, d))
    total = rng.standard_exponential(shape)  # E_{d+1}, the slack
    total += samples.sum(axis=2)
    np.divide(bound, total, out=total)
    samples *= total[..., np.newaxis]
    return samples


def _check_counts(counts: object) -> np.ndarray:
    array = np.asarray(counts)
    if array.ndim != 1 or array.size == 0 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(
            f"counts must be a non-empty 1-D sequence of positive integers, got counts={counts!r}"
        )
    bad = np.flatnonzero(array < 1)
    if bad.size:
        j = int(bad[0])
        raise ValueError(f"counts must be positive integers, got counts[{j}]={int(array[j])!r}")
    return array.astype(np.int64)


def _check_bound(bound: object) -> None:
    check_real(bound=bound)
    if bound <= 0:
        raise ValueError(f"bound must be > 0, got bound={bound!r}")


def _check_nonnegative_int(**kwargs: object) -> None:
    ((name, value),) = kwargs.items()
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {name}={value!r}")


def _check_distribution(distribution: object, *, d: int) -> None:
    accepted = _SCALAR_DISTRIBUTIONS if d == 1 else _VECTOR_DISTRIBUTIONS
    if not isinstance(distribution, str) or distribution not in accepted:
        where = "d=1" if d == 1 else f"d={d} (d >= 2)"
        raise ValueError(
            f"distribution must be one of {_quoted(accepted)} for {where}, got distribution={distribution!r}"
        )


def _quoted(names: tuple[str, ...]) -> str:
    return ", ".join(repr(name) for name in names)
