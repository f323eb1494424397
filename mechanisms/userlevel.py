"""User-level pure eps-DP mean estimation by bounding user contributions (docs/design.md §5.7).

Rameshwar and Tandon, "Bounding User Contributions for User-Level Differentially Private
Mean Estimation": L users, user l has m_l samples in [0, U] (d = 1) or in the simplex
Delta_U = {x >= 0, ||x||_1 <= U} (d >= 2; Section II-B); the target is
f(D) = sum of all samples / sum_l m_l. Neighbours replace all samples of one user; L and the
counts m_l are public (Section II-C). Three mechanisms, each releasing a statistic plus
i.i.d. Laplace noise per coordinate (Theorem II.1):

- :func:`laplace`: f itself, no clipping (Section IV-B, mechanism 1);
- :func:`opt_worst_case`: the worst-case-error optimal clipping of Theorem III.1;
- :func:`akmv`: Amin et al. (2019) adapted to users: clip user sums at a threshold chosen by
  the exponential mechanism (Section IV, mechanism 3).

Budgets are pure eps-DP: ledgers hold :class:`PureLedgerEntry` and sum exactly to eps.

Batches and the random stream. ``batched=True`` runs B independent datasets of the same
users in one vectorised call (the Monte-Carlo runs of one eps). Every call draws exactly one
``rng.random((B, r))`` array, row b holding run b's uniforms: r = d for :func:`laplace` and
:func:`opt_worst_case` (one Laplace variate per coordinate, by inverse CDF), r = 2 + d for
:func:`akmv` (interval, point inside it, then the Laplace variates). So an unbatched call is
the batched call with B = 1, a batched call equals B unbatched calls in a row on the same
generator (bit for bit), and the stream use depends on neither the data nor eps (a Laplace
scale of 0 multiplies its variates by 0).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import MAX_MAGNITUDE, check_budget, check_generator, check_positive, check_positive_int
from .accounting import Estimate, PureLedgerEntry

_RANK_TOLERANCE = 1e-9  # relative: ceil(2d/eps) of eps = 2d/k must give k despite rounding (5.7)
_DOMAIN_TOLERANCE = 1e-12  # relative slack on ||x||_1 <= U (and x <= U): rounding of the data's generation
_LOG_FLOOR = -600.0  # exp(-600) ~ 1e-261: utility factors above it need no log space
_HALF_GRID = 2.0**-54  # half the spacing of numpy's uniform grid k 2^-53 (see _standard_laplace)
_MAX_NOISE_SCALE = 1e300  # Laplace variates are at most 53 ln 2 < 37 (_standard_laplace): noise stays finite

__all__ = [
    "akmv",
    "akmv_statistic",
    "annulus_projection",
    "clipping_intervals",
    "jump_points",
    "l1_projection",
    "laplace",
    "opt_worst_case",
    "threshold",
    "threshold_weights",
    "true_mean",
    "worst_case_error",
    "worst_case_error_laplace",
    "worst_case_error_opt",
]


# ------------------------------------------------------------------ public counts only (no budget)


def tolerant_ceil(value: float) -> int:
    """ceil(value) with a relative tolerance of 1e-9, at least 1: 2 / (2 / 49) = 49.000...01
    gives 49, not 50 (docs/design.md §5.7)."""
    return max(1, math.ceil(value - _RANK_TOLERANCE * abs(value)))


def _check_counts(counts) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"counts must be positive integers (samples per user), got counts={counts!r}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"counts must be a non-empty 1-D array, got counts with shape {arr.shape}")
    if np.any(arr < 1):
        bad = int(np.flatnonzero(arr < 1)[0])
        raise ValueError(f"counts must be >= 1 (every user has a sample), got counts[{bad}]={arr[bad]}")
    return arr.astype(np.int64)


def _check_common(eps, bound, d=None):
    eps = check_budget(eps, "eps")
    bound = _check_bound(bound)
    d = None if d is None else check_positive_int(d, "d")
    if d is not None:
        _check_scales(eps, bound, d)
    return eps, bound, d


def _check_bound(bound) -> float:
    """U: finite, > 0 and at most MAX_MAGNITUDE, as the bounds of the other mechanisms."""
    bound = check_positive(bound, "bound")
    if bound > MAX_MAGNITUDE:
        raise ValueError(
            f"bound must be at most {MAX_MAGNITUDE:g} (sums of samples and noise scales of this size leave float64), "
            f"got bound={bound!r}; rescale the samples"
        )
    return bound


def _check_scales(eps: float, bound: float, d: int) -> None:
    """The Laplace noise scales (at most 4 U / eps, AKMV's for d >= 2; the others' are at most
    2 U / eps) and the rank ceil(2 d / eps) of T_eps must stay finite: eps too small for U or d
    gives infinite noise or no rank."""
    if 4.0 * bound / eps > _MAX_NOISE_SCALE:
        raise ValueError(
            f"eps={eps!r} is too small for bound={bound!r}: the Laplace noise scale, up to 4 bound / eps = "
            f"{4.0 * bound / eps:.3g}, must stay below {_MAX_NOISE_SCALE:g} (beyond, the noise overflows float64); "
            "use a larger eps or rescale the samples"
        )
    if not math.isfinite(2.0 * d / eps):
        raise ValueError(f"eps={eps!r} is too small for d={d}: the rank ceil(2 d / eps) of T_eps overflows float64")


def _threshold(counts: np.ndarray, eps: float, bound: float, d: int) -> tuple[float, int]:
    """(T_eps, k): the k-th largest of {U m_l} with k = ceil(2d / eps), 0 when k > L."""
    k = tolerant_ceil(2.0 * d / eps)
    if k > counts.size:
        return 0.0, k  # eps < 2d / L (Theorem III.1)
    return float(bound * np.sort(counts)[::-1][k - 1]), k


def threshold(counts, *, eps, bound, d) -> float:
    """T_eps of Theorem III.1: the ceil(2d / eps)-th largest of {U m_1, ..., U m_L}, and 0 when
    that rank exceeds L (eps < 2d / L). Uses the public counts only: it costs no budget."""
    counts = _check_counts(counts)
    eps, bound, d = _check_common(eps, bound, d)
    return _threshold(counts, eps, bound, d)[0]


def _intervals(counts, T, bound, d):
    m = counts.astype(float)
    if d == 1:
        lower = np.maximum((bound * m - T) / (2.0 * m), 0.0)
        upper = np.minimum((bound * m + T) / (2.0 * m), bound)
    else:
        lower = np.zeros_like(m)
        upper = np.minimum(T / m, bound)
    return lower, upper


def clipping_intervals(counts, *, eps, bound, d) -> tuple[np.ndarray, np.ndarray]:
    """(a_l, b_l) per user of Theorem III.1 (the same for all of a user's samples).

    d = 1: a_l = max((U m_l - T_eps) / (2 m_l), 0), b_l = min((U m_l + T_eps) / (2 m_l), U):
    samples are clipped to [a_l, b_l]. d >= 2: a_l = 0, b_l = min(T_eps / m_l, U): samples are
    l1-projected onto the annulus A_{0, b_l} = Delta_{b_l}.
    """
    counts = _check_counts(counts)
    eps, bound, d = _check_common(eps, bound, d)
    return _intervals(counts, _threshold(counts, eps, bound, d)[0], bound, d)


def _sensitivity_from_intervals(counts, lower, upper, d):
    """Lemma III.3: max_l m_l (b_l - a_l) / sum m for d = 1, 2 max_l m_l b_l / sum m for d >= 2."""
    if d == 1:
        return float(np.max(counts * (upper - lower)) / counts.sum())
    return float(2.0 * np.max(counts * upper) / counts.sum())


def worst_case_error(counts, *, lower, upper, eps, bound, d) -> float:
    """Proposition III.1: the worst-case error metric (1), bias + E||Z||_1, of clipping user l's
    samples to the annulus A_{a_l, b_l} (``lower``, ``upper``: one value per user):

        (sum_l m_l max(a_l, U - b_l)) / sum m  +  d Delta / eps,

    with Delta of Lemma III.3 (max_l m_l (b_l - a_l) / sum m for d = 1, 2 max_l m_l b_l / sum m
    for d >= 2). Metric (1) upper-bounds max_D E||M(D) - f(D)||_1 by the triangle inequality; for
    d = 1 its bias term is attained only if the per-sample worst cases share a sign (true for
    symmetric intervals a_l + b_l = U, as Theorem III.1's)."""
    counts = _check_counts(counts)
    eps, bound, d = _check_common(eps, bound, d)
    lower = np.broadcast_to(np.asarray(lower, dtype=float), counts.shape)
    upper = np.broadcast_to(np.asarray(upper, dtype=float), counts.shape)
    if not (np.all(0 <= lower) and np.all(lower <= upper) and np.all(upper <= bound)):
        raise ValueError(
            f"intervals must satisfy 0 <= lower <= upper <= bound={bound}, got lower={lower}, upper={upper}"
        )
    bias = float(np.sum(counts * np.maximum(lower, bound - upper)) / counts.sum())
    return bias + d * _sensitivity_from_intervals(counts, lower, upper, d) / eps


def worst_case_error_opt(counts, *, eps, bound, d) -> float:
    """The optimal worst-case error of Theorem III.1, metric (1) of OPT-wc:

    d = 1, equation (7): (sum_l max((U m_l - T_eps) / 2, 0) + T_eps / eps) / sum m;
    d >= 2, equation (8): (sum_l max(U m_l - T_eps, 0) + 2 d T_eps / eps) / sum m.

    As eps -> 0 it tends to U / 2 (d = 1) and U (d >= 2): the noise-free release's bias.
    """
    counts = _check_counts(counts)
    eps, bound, d = _check_common(eps, bound, d)
    T = _threshold(counts, eps, bound, d)[0]
    excess = bound * counts.astype(float) - T
    if d == 1:
        return float((np.sum(np.maximum(excess / 2.0, 0.0)) + T / eps) / counts.sum())
    return float((np.sum(np.maximum(excess, 0.0)) + 2.0 * d * T / eps) / counts.sum())


def worst_case_error_laplace(counts, *, eps, bound, d) -> float:
    """Worst-case error metric (1) of the vanilla Laplace mechanism: Proposition III.1 with no
    clipping (a_l = 0, b_l = U for every sample), so the bias is 0 and only the noise remains:

        d = 1:  U m* / (eps sum m);      d >= 2:  2 d U m* / (eps sum m),

    with m* = max_l m_l, i.e. d Delta / eps with Delta = U m* / sum m (d = 1) or
    2 U m* / sum m (d >= 2). It is the exact expected l1 error on every dataset (E|Lap(b)| = b).
    """
    counts = _check_counts(counts)
    eps, bound, d = _check_common(eps, bound, d)
    return d * _laplace_sensitivity(counts, bound, d) / eps


def _laplace_sensitivity(counts, bound, d):
    factor = 1.0 if d == 1 else 2.0
    return float(factor * bound * counts.max() / counts.sum())


def jump_points(*, d, eps_low, eps_high) -> np.ndarray:
    """The eps = 2d / k (k = 1, 2, ...) inside [eps_low, eps_high], increasing: where k =
    ceil(2d / eps), hence T_eps, can change (the sawtooth of OPT-wc). At eps = 2d / k exactly,
    :func:`threshold` uses rank k (the value from the right of the jump)."""
    d = check_positive_int(d, "d")
    eps_low = check_positive(eps_low, "eps_low")
    eps_high = check_positive(eps_high, "eps_high")
    if eps_high < eps_low:
        raise ValueError(f"eps_high must be >= eps_low, got eps_low={eps_low}, eps_high={eps_high}")
    first = max(1, math.floor(2.0 * d / eps_high) - 1)
    last = math.ceil(2.0 * d / eps_low) + 1
    k = np.arange(last, first - 1, -1)
    points = 2.0 * d / k
    slack = _RANK_TOLERANCE
    return points[(points >= eps_low * (1 - slack)) & (points <= eps_high * (1 + slack))]


# ------------------------------------------------------------------ input checks


@dataclass(frozen=True)
class _Data:
    """Checked samples as a (B, n, d) view (never written to), the users and their counts."""

    x: np.ndarray
    users: np.ndarray
    counts: np.ndarray
    norms: np.ndarray | None  # (B, n) l1 norms of the samples, for d >= 2
    bound: float
    batched: bool

    @property
    def runs(self) -> int:
        return self.x.shape[0]

    @property
    def n(self) -> int:
        return self.x.shape[1]

    @property
    def d(self) -> int:
        return self.x.shape[2]

    def user_sums(self) -> np.ndarray:
        """(B, L, d) per-user sums: segment sums over the samples sorted by user."""
        return _segment_sums(self.x, self.users, self.counts)


_MAX_RUNS = 32  # runs of equal counts summed by one matrix product each; beyond, reduceat


def _segment_sums(x, users, counts):
    """Sum each user's samples, (B, n, d) -> (B, L, d), without a loop over users or runs."""
    if np.any(users[1:] < users[:-1]):
        x = x[:, np.argsort(users, kind="stable")]  # a copy: the caller's array is not reordered
    runs, n, d = x.shape
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    if d == 1:  # one flat 1-D reduceat over all runs: about 3x faster than along axis 1
        offsets = (np.arange(runs)[:, None] * n + starts).ravel()
        return np.add.reduceat(x.reshape(runs * n), offsets).reshape(runs, -1, 1)
    # Consecutive users with the same count m form a block (B, u, m d); one product with
    # [I_d; ...; I_d] (m d x d) sums each user's m samples. Faster than reduceat for small d
    # (measured 1.5-2.5x at d = 8), and the collections of docs/design.md §5.7 have at most 7 blocks.
    change = np.flatnonzero(np.diff(counts)) + 1
    if change.size >= _MAX_RUNS:
        return np.add.reduceat(x, starts, axis=1)
    out = np.empty((runs, counts.size, d))
    for first, stop in zip(np.r_[0, change], np.r_[change, counts.size]):
        m, begin = int(counts[first]), int(starts[first])
        block = x[:, begin:begin + m * (stop - first)].reshape(runs, stop - first, m * d)
        out[:, first:stop] = block if m == 1 else block @ np.tile(np.eye(d), (m, 1))
    return out


def _check_flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {name}={value!r}")
    return bool(value)


def _as_array(samples, batched):
    if isinstance(samples, np.ndarray) and (samples.dtype == object or np.iscomplexobj(samples)):
        raise ValueError(f"samples must be a real numeric array, got dtype={samples.dtype}")
    try:
        raw = samples if isinstance(samples, np.ndarray) else np.asarray(samples)
    except (TypeError, ValueError) as error:
        raise ValueError(f"samples must be a real numeric array with equal-length rows: {error}") from None
    if raw.dtype.kind not in "biuf":  # bool (0 and 1), integers and floats; not strings, dates, complex
        raise ValueError(f"samples must be a real numeric array (bool, integer or float), got dtype={raw.dtype}")
    with np.errstate(over="ignore"):  # float128 beyond float64 becomes inf: refused as not finite
        arr = np.asarray(raw, dtype=np.float64)
    shapes = "(B, n) or (B, n, d)" if batched else "(n,) or (n, d)"
    base = 2 if batched else 1
    if arr.ndim not in (base, base + 1):
        raise ValueError(f"samples must have shape {shapes} (batched={batched}), got samples.shape={arr.shape}")
    x = arr[..., None] if arr.ndim == base else arr
    if not batched:
        x = x[None]
    if min(x.shape) < 1:
        raise ValueError(f"samples must have at least one run, sample and coordinate, got samples.shape={arr.shape}")
    return arr, x


def _index(position) -> str:
    return ", ".join(str(int(i)) for i in position)


def _check_domain(arr, x, bound):
    """Samples must lie in [0, U] (d = 1) or Delta_U = {x >= 0, ||x||_1 <= U} (d >= 2; the paper's
    Section II-B), up to a relative 1e-12 above U. Returns (x, norms) moved exactly into the
    domain (a copy only if some sample is in the tolerance band)."""
    d = x.shape[2]
    limit = bound * (1.0 + _DOMAIN_TOLERANCE)
    if not x.min() >= 0:  # NaN compares false: also the non-finite search
        _raise_first(arr, ~np.isfinite(arr), "samples must be finite")
        _raise_first(arr, arr < 0, f"samples must be >= 0 (the domain is {_domain(d, bound)})")
    if d == 1:
        top = x.max()
        if not top <= limit:
            _raise_first(arr, ~np.isfinite(arr), "samples must be finite")
            _raise_first(arr, arr > limit, f"samples must lie in {_domain(d, bound)}")
        return (np.minimum(x, bound) if top > bound else x), None
    norms = x @ np.ones(d)  # l1 norms: the samples are nonnegative (a BLAS pass, faster than sum)
    top = norms.max()
    if not top <= limit:
        _raise_first(arr, ~np.isfinite(arr), "samples must be finite")
        bad = np.argwhere(norms > limit)[0]
        shown = bad[1:] if x.shape[0] == 1 and arr.ndim == 2 else bad
        raise ValueError(
            f"samples must lie in {_domain(d, bound)}, got ||samples[{_index(shown)}]||_1={float(norms[tuple(bad)])!r}"
        )
    if top > bound:  # inside the tolerance: project onto Delta_U so the sensitivities hold exactly
        scale = np.minimum(1.0, bound / np.maximum(norms, bound))
        return x * scale[..., None], np.minimum(norms, bound)
    return x, norms


def _domain(d, bound):
    if d == 1:
        return f"[0, bound] = [0, {bound!r}]"
    return f"the simplex {{x >= 0, ||x||_1 <= bound}} with bound={bound!r}"


def _raise_first(arr, mask, message):
    found = np.argwhere(mask)
    if found.size:
        position = tuple(found[0])
        raise ValueError(f"{message}, got samples[{_index(position)}]={float(arr[position])!r}")


def _check_users(users, n):
    if isinstance(users, np.ndarray) and users.dtype == object:
        raise ValueError("users must be an integer array of user ids, got dtype=object")
    try:
        ids = np.asarray(users)
    except (TypeError, ValueError) as error:
        raise ValueError(f"users must be an integer array of user ids: {error}") from None
    if ids.dtype == bool or not np.issubdtype(ids.dtype, np.integer):
        example = f" (users[0]={ids.flat[0]!r})" if ids.size else ""
        raise ValueError(f"users must be integer user ids, got users with dtype={ids.dtype}{example}")
    if ids.ndim != 1 or ids.size != n:
        raise ValueError(f"users must be 1-D with one id per sample (n={n}), got users.shape={ids.shape}")
    if ids.min() < 0:
        bad = int(np.flatnonzero(ids < 0)[0])
        raise ValueError(f"users must be >= 0, got users[{bad}]={ids[bad]}")
    top = int(ids.max())
    # With more ids than samples some id is empty; bincount only what can be complete.
    counts = np.bincount(ids[ids <= n], minlength=min(top, n) + 1)
    if top >= n or np.any(counts == 0):
        missing = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(
            f"every user id 0..L-1 (L = users.max() + 1 = {top + 1}) must have at least one sample, "
            f"got no samples for user {missing}"
        )
    return ids, counts.astype(np.int64)


def _prepare(samples, users, bound, batched) -> _Data:
    batched = _check_flag(batched, "batched")
    bound = _check_bound(bound)
    arr, x = _as_array(samples, batched)
    ids, counts = _check_users(users, x.shape[1])
    x, norms = _check_domain(arr, x, bound)
    return _Data(x=x, users=ids, counts=counts, norms=norms, bound=bound, batched=batched)


def _check_call(samples, users, eps, bound, rng, batched, average_users):
    eps = check_budget(eps, "eps")
    rng = check_generator(rng)
    average_users = _check_flag(average_users, "average_users")
    data = _prepare(samples, users, bound, batched)
    _check_scales(eps, data.bound, data.d)
    return data, eps, rng, average_users


# ------------------------------------------------------------------ noise and results


def _standard_laplace(uniforms):
    """Lap(1) variates by inverse CDF, F^-1(p) = -sign(p - 1/2) ln(1 - 2 |p - 1/2|), at the
    midpoint of each cell of numpy's uniform grid (u = k 2^-53, h = u - 1/2 + 2^-54, exact in
    float64). The grid of h is symmetric about 0 and never 0 or +-1/2, so the variates are
    exactly symmetric and finite (|z| <= 53 ln 2)."""
    h = (uniforms - 0.5) + _HALF_GRID
    return -np.sign(h) * np.log1p(-2.0 * np.abs(h))


def _result(data, statistic, noise, ledger, diagnostics):
    """Estimate with .mean (B, d) batched, (d,) unbatched; per-run diagnostics likewise."""
    mean = statistic + noise
    if not data.batched:
        mean = mean[0]
        statistic = statistic[0]
        diagnostics = {key: _unbatch(value) for key, value in diagnostics.items()}
    diagnostics["statistic"] = statistic
    return Estimate(mean=mean, ledger=ledger, diagnostics=diagnostics)


def _unbatch(value):
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.size == 1:
        return float(value[0])
    return value


def true_mean(samples, *, users, batched=False) -> np.ndarray:
    """The target f(D) = sum of all samples / sum_l m_l (Section II-B), shaped as the
    mechanisms' ``.mean``: (d,) unbatched, (B, d) batched (d = 1 -> last axis of length 1).
    Checks the shapes and users; the samples need only be finite."""
    batched = _check_flag(batched, "batched")
    arr, x = _as_array(samples, batched)
    _check_users(users, x.shape[1])
    if not math.isfinite(float(x.sum())):
        _raise_first(arr, ~np.isfinite(arr), "samples must be finite")
    mean = np.matmul(np.ones(x.shape[1]), x) / x.shape[1]  # sum m_l = n
    return mean if batched else mean[0]


# ------------------------------------------------------------------ mechanisms


def laplace(samples, *, users, eps, bound, rng, batched=False, average_users=False) -> Estimate:
    """Vanilla Laplace mechanism (Section IV-B, mechanism 1; Theorem II.1): f(D) + Lap(Delta / eps)
    i.i.d. per coordinate, Delta = U m* / sum m (d = 1) or 2 U m* / sum m (l1, d >= 2), where
    m* = max_l m_l: one user moves f by at most that. User-level eps-DP.

    ``samples``: (n,) or (n, d); with ``batched=True`` (B, n) or (B, n, d), B datasets of the
    same ``users`` (ids 0..L-1, one per sample, each user with >= 1 sample). Samples lie in
    [0, U] (d = 1) or the simplex {x >= 0, ||x||_1 <= U} (d >= 2), U = ``bound``.
    ``average_users`` (replace each user's samples by their average) changes nothing here: f
    depends on the user sums only. Ledger: (("laplace", eps),). Randomness: one
    ``rng.random((B, d))`` (module docstring). Diagnostics: sensitivity, noise_scale,
    fraction_clipped (0), statistic (f before noise).
    """
    data, eps, rng, _ = _check_call(samples, users, eps, bound, rng, batched, average_users)
    uniforms = rng.random((data.runs, data.d))
    sensitivity = _laplace_sensitivity(data.counts, data.bound, data.d)
    scale = sensitivity / eps
    statistic = np.matmul(np.ones(data.n), data.x) / data.n  # sum m_l = n
    diagnostics = {"sensitivity": sensitivity, "noise_scale": scale, "fraction_clipped": 0.0}
    return _result(data, statistic, scale * _standard_laplace(uniforms), (PureLedgerEntry("laplace", eps),),
                   diagnostics)


def opt_worst_case(samples, *, users, eps, bound, rng, batched=False, average_users=False) -> Estimate:
    """OPT-worst-case (Theorem III.1): clip with the worst-case-error optimal intervals, add
    Laplace noise calibrated to the clipped statistic's sensitivity (Lemma III.3). User-level
    eps-DP; T_eps and the intervals use the public counts only.

    k = ceil(2d / eps) (with a 1e-9 relative tolerance), T_eps = the k-th largest of {U m_l}, 0
    when k > L. d = 1: each sample of user l is clipped to [a_l, b_l] =
    [max((U m_l - T)/(2 m_l), 0), min((U m_l + T)/(2 m_l), U)], Delta = max_l m_l (b_l - a_l) / sum m.
    d >= 2: a_l = 0, b_l = min(T / m_l, U), each sample is l1-projected onto Delta_{b_l} by
    scaling it down to l1 norm b_l when above (Appendix A: y = (alpha / ||a||_1) a is an l1
    projection), Delta = 2 max_l m_l b_l / sum m. Noise Lap(Delta / eps) i.i.d. per coordinate.
    T = 0 gives Delta = 0: a noise-free release, U/2 (d = 1) or the zero vector (d >= 2).

    ``average_users=True`` first replaces each user's samples by their average (Section IV-B's
    preprocessing), so user l contributes m_l times its clipped average. Arguments, shapes and
    randomness as :func:`laplace`. Ledger: (("laplace", eps),) (also when T = 0: the release is
    then data-independent). Diagnostics: T_eps, k, intervals (a_l, b_l), sensitivity,
    noise_scale, fraction_clipped (per run: the share of samples the clipping moved, or of
    samples whose user average it moved), statistic (the clipped mean before noise).
    """
    data, eps, rng, average_users = _check_call(samples, users, eps, bound, rng, batched, average_users)
    uniforms = rng.random((data.runs, data.d))
    counts, d = data.counts, data.d
    # T_eps and the clipping intervals [a_l, b_l] from the public counts (no budget).
    T, k = _threshold(counts, eps, data.bound, d)
    lower, upper = _intervals(counts, T, data.bound, d)
    # The clipped statistic's sensitivity Delta, the noise Lap(Delta / eps).
    sensitivity = _sensitivity_from_intervals(counts, lower, upper, d)
    scale = sensitivity / eps
    # Clip (d >= 2: l1-project) every sample, or every user's average, and take the mean.
    if average_users:
        statistic, moved = _clip_user_averages(data, lower, upper)
    else:
        statistic, moved = _clip_samples(data, lower, upper)
    diagnostics = {
        "T_eps": T,
        "k": k,
        "intervals": (lower, upper),
        "sensitivity": sensitivity,
        "noise_scale": scale,
        "fraction_clipped": moved,
    }
    return _result(data, statistic, scale * _standard_laplace(uniforms), (PureLedgerEntry("laplace", eps),),
                   diagnostics)


def l1_projection(points, radius) -> np.ndarray:
    """An l1 projection of nonnegative ``points`` (..., d) onto the simplex Delta_r = {y >= 0,
    ||y||_1 <= r} (``radius`` r >= 0 broadcast over points.shape[:-1]): points inside stay;
    a point outside is scaled to l1 norm r, y = (r / ||a||_1) a (Appendix A). It satisfies
    Lemma III.1's condition ||y||_1 = r, 0 <= y <= a, which makes it a nearest point of Delta_r
    in l1 (Proposition A.1: every such y is at distance ||a||_1 - r)."""
    points = np.asarray(points, dtype=float)
    norms = np.abs(points).sum(axis=-1)
    return points * _projection_factors(norms, np.asarray(radius, dtype=float))[..., None]


def annulus_projection(points, *, lower, upper) -> np.ndarray:
    """An l1 projection of nonnegative ``points`` (..., d) onto the annulus
    A_{a,b} = {y >= 0 : a <= ||y||_1 <= b} (Section III-A, Figure 1; ``lower`` a and ``upper`` b
    broadcast over points.shape[:-1], 0 <= a <= b). A point with ||x||_1 > b is scaled to norm b,
    a nonzero point with ||x||_1 < a to norm a (its direction kept), a point of the annulus stays.
    The zero point, which has no direction, goes to (a / d, ..., a / d). Each result is a nearest
    point of A_{a,b} in l1: ||x - y||_1 = ||x||_1 - b, resp. a - ||x||_1, and no point of A_{a,b}
    is closer (its norm is within [a, b]). With a = 0 this is :func:`l1_projection`; for d = 1
    it is clipping to [a, b]."""
    points = _check_projected_points(points)
    lower, upper = _check_annulus(lower, upper, points.shape[:-1])
    norms = points.sum(axis=-1)
    factor = _projection_factors(norms, upper)
    raise_to_lower = (norms < lower) & (norms > 0)
    np.divide(lower, norms, out=factor, where=raise_to_lower)
    projected = points * factor[..., None]
    return np.where(((norms == 0) & (lower > 0))[..., None], (lower / points.shape[-1])[..., None], projected)


def _check_projected_points(points) -> np.ndarray:
    """Points of the paper's domain: a float array (..., d), d >= 1, finite and nonnegative."""
    try:
        arr = np.array(points, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"points must be an array of numbers (..., d), got points={points!r}") from None
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ValueError(f"points must have a last axis of d >= 1 coordinates, got points with shape {arr.shape}")
    invalid = ~(np.isfinite(arr) & (arr >= 0))
    if invalid.any():
        where = _first(invalid)
        raise ValueError(f"points must be finite and >= 0 (the samples' domain, Section II-B), "
                         f"got points{list(where)}={float(arr[where])!r}")
    return arr


def _check_annulus(lower, upper, shape) -> tuple[np.ndarray, np.ndarray]:
    """a and b broadcast to ``shape``: finite, 0 <= a <= b."""
    try:
        a = np.broadcast_to(np.asarray(lower, dtype=float), shape)
        b = np.broadcast_to(np.asarray(upper, dtype=float), shape)
    except (TypeError, ValueError):
        raise ValueError(f"lower and upper must be numbers or arrays broadcastable to the points' shape {shape}, "
                         f"got lower={lower!r}, upper={upper!r}") from None
    invalid = ~(np.isfinite(a) & np.isfinite(b) & (a >= 0) & (a <= b))
    if invalid.any():
        where = _first(invalid)
        raise ValueError(f"the annulus needs finite 0 <= lower <= upper, got lower={float(a[where])!r}, "
                         f"upper={float(b[where])!r}" + (f" at {list(where)}" if where else ""))
    return a, b


def _first(mask: np.ndarray) -> tuple[int, ...]:
    """The index of the first True entry of ``mask`` (C order; () for a 0-d mask)."""
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), mask.shape))


def _projection_factors(norms, radius):
    """min(1, r / ||a||_1): 1 inside the simplex (also for a = 0), 0 when r = 0."""
    radius = np.broadcast_to(radius, norms.shape)
    factor = np.ones(norms.shape)
    np.divide(radius, norms, out=factor, where=norms > radius)
    return factor


def _clip_samples(data, lower, upper):
    """Theorem III.1's per-sample clipping: (clipped mean (B, d), fraction of samples moved (B,))."""
    x, n = data.x, data.n
    if data.d == 1:
        values = x[..., 0]
        clipped = np.clip(values, lower[data.users], upper[data.users])
        moved = np.count_nonzero(clipped != values, axis=1) / n
        return clipped.sum(axis=1, keepdims=True) / n, moved
    # The l1 projection onto the annulus A_{0, b_l} = Delta_{b_l} (l1_projection), summed as one
    # product of the factors with the samples.
    limit = upper[data.users]
    factor = _projection_factors(data.norms, limit)
    return np.matmul(factor[:, None, :], x)[:, 0, :] / n, np.count_nonzero(data.norms > limit, axis=1) / n


def _clip_user_averages(data, lower, upper):
    """Per-user version: user l's m_l copies of its average, each clipped as in Theorem III.1."""
    sums = data.user_sums()
    m = data.counts.astype(float)
    n = data.n
    if data.d == 1:
        average = sums[..., 0] / m
        clipped = np.clip(average, lower, upper)
        moved = (clipped != average).astype(float) @ m / n  # exact counts: any summation order
        # A row-wise sum, not a matrix product: a BLAS product's rounding can depend on B, and a
        # batched call must equal unbatched calls bit for bit.
        return (clipped * m).sum(axis=1, keepdims=True) / n, moved
    norms = sums @ np.ones(data.d)  # l1 norms of the user sums (nonnegative samples)
    # The average's norm is norms / m_l: projecting it onto Delta_{b_l} scales the sum by
    # min(1, m_l b_l / norms).
    factor = _projection_factors(norms, m * upper)
    return np.matmul(factor[:, None, :], sums)[:, 0, :] / n, (norms > m * upper).astype(float) @ m / n


def threshold_weights(sums, *, eps, hi, rank):
    """Exponential-mechanism intervals and weights of AKMV's threshold, one row per run.

    ``sums`` (B, L): the user sums' l1 norms. Edges: 0, the sums clipped to [0, hi] and sorted,
    hi. Interval i = 0..L lies between edges i and i + 1, with i sums below it; utility
    -|i - t| with t = max(L - rank, 0) (T just below the rank-th largest sum). Replacing one
    user's samples moves one sum: the utility has sensitivity 1, so the weights
    width_i exp(eps / 2 * utility) give an eps-DP choice (``eps`` is this step's budget).
    Zero widths get weight 0. Weights are exact up to a positive factor per row; in log space
    (each row's largest weight scaled to 1) when a factor could underflow (eps L / 2 > 600).
    Returns (edges (B, L + 2), weights (B, L + 1)).
    """
    sums = np.asarray(sums, dtype=float)
    runs, users = sums.shape
    edges = np.empty((runs, users + 2))
    edges[:, 0] = 0.0
    edges[:, -1] = hi
    np.clip(sums, 0.0, hi, out=edges[:, 1:-1])
    edges[:, 1:-1].sort(axis=1)
    target = max(users - rank, 0)
    log_factor = -(eps / 2.0) * np.abs(np.arange(users + 1) - target)
    widths = np.diff(edges, axis=1)
    if log_factor.min() >= _LOG_FLOOR and hi / (users + 1) >= 1e-30:
        # No factor underflows and the widest interval (>= hi / (L + 1)) keeps a normal weight:
        # the plain product, without a log and an exp per interval.
        return edges, widths * np.exp(log_factor)
    with np.errstate(divide="ignore"):
        log_weights = np.log(widths) + log_factor
    log_weights -= log_weights.max(axis=1, keepdims=True)  # some width is positive: hi > 0
    return edges, np.exp(log_weights)


def _select_threshold(edges, weights, u_interval, u_point):
    """Inverse CDF over the intervals (first with cumulative weight > u * total), then a uniform
    point inside the chosen interval."""
    cumulative = np.cumsum(weights, axis=1)
    chosen = np.count_nonzero(cumulative <= (u_interval * cumulative[:, -1])[:, None], axis=1)
    # Rounding can point past the last positive weight (u * total == total).
    last = weights.shape[1] - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)
    chosen = np.minimum(chosen, last)
    rows = np.arange(edges.shape[0])
    left, right = edges[rows, chosen], edges[rows, chosen + 1]
    return left + u_point * (right - left)


def _clip_user_sums(sums, T):
    """Clip each user sum to l1 norm T (d = 1: to [0, T]); returns (sum of clipped sums (B, d),
    fraction of users clipped (B,))."""
    norms = sums @ np.ones(sums.shape[2])  # nonnegative samples: l1 norm = coordinate sum
    factor = _projection_factors(norms, T[:, None])
    return np.matmul(factor[:, None, :], sums)[:, 0, :], (norms > T[:, None]).mean(axis=1)


def akmv_statistic(samples, *, users, threshold, bound, batched=False) -> np.ndarray:
    """AKMV's statistic before noise for a given clip threshold T (a number, or one per run when
    batched): each user's sum clipped to l1 norm T (to [0, T] for d = 1), summed, / sum m.
    Shaped like ``.mean``. Replacing one user's samples moves it by at most T / sum m (d = 1)
    or 2 T / sum m (l1, d >= 2)."""
    data = _prepare(samples, users, bound, batched)
    T = np.broadcast_to(np.asarray(threshold, dtype=float), (data.runs,))
    if not np.all(np.isfinite(T)) or np.any(T < 0):
        raise ValueError(f"threshold must be finite and >= 0, got threshold={threshold!r}")
    statistic = _clip_user_sums(data.user_sums(), T)[0] / data.n
    return statistic if data.batched else statistic[0]


def akmv(samples, *, users, eps, bound, rng, batched=False, average_users=False) -> Estimate:
    """AKMV (Amin et al. 2019, Section 3) adapted to users (Section IV): user-level eps-DP.

    1. (eps/2) T by the exponential mechanism over [0, U m*] on the user sums s_l (the l1 norm
       of user l's sum for d >= 2), sorted and padded with 0 and U m*, utility -|i - t|,
       t = L - k clamped at 0, k = ceil(2 / eps) (:func:`threshold_weights`): T lands just below
       the k-th largest user sum, so about k users are clipped. docs/design.md §5.7 and the paper
       take k = ceil(2 / eps) for every d (not 2d / eps as OPT-wc); followed literally.
    2. (eps - eps/2) clip each s_l to [0, T] (d >= 2: scale the user's sum to l1 norm T), release
       clipped total / sum m + Lap(T / (sum m eps/2)) = Lap(2 T / (eps sum m)) per coordinate
       (d >= 2: the l1 sensitivity is 2 T / sum m, scale 4 T / (eps sum m)).

    ``average_users`` changes nothing: user sums are unchanged by it. Arguments and shapes as
    :func:`laplace`; randomness: one ``rng.random((B, 2 + d))``, row b = (interval, point,
    Laplace variates) of run b. Ledger: (("quantile", eps/2), ("laplace", eps - eps/2)).
    Diagnostics, per run when batched: T_eps (the chosen T), k, target_index, sensitivity,
    noise_scale, fraction_clipped (share of users clipped), statistic.
    """
    data, eps, rng, _ = _check_call(samples, users, eps, bound, rng, batched, average_users)
    uniforms = rng.random((data.runs, 2 + data.d))
    eps_quantile = eps / 2.0
    eps_noise = eps - eps_quantile
    users_count = data.counts.size
    k = tolerant_ceil(2.0 / eps)  # 2 / eps, not 2d / eps: docs/design.md §5.7 and Section IV, literally
    # Step 1 (eps/2): T by the exponential mechanism on the user sums, target index L - k.
    sums = data.user_sums()
    hi = data.bound * float(data.counts.max())  # a user's sum is at most U m_l <= U m*
    edges, weights = threshold_weights(sums @ np.ones(data.d), eps=eps_quantile, hi=hi, rank=k)
    T = _select_threshold(edges, weights, uniforms[:, 0], uniforms[:, 1])
    # Step 2 (eps - eps/2): clip the user sums to T, release their mean plus Laplace noise.
    clipped, fraction = _clip_user_sums(sums, T)
    factor = 1.0 if data.d == 1 else 2.0
    sensitivity = factor * T / data.n
    scale = sensitivity / eps_noise
    diagnostics = {
        "T_eps": T,
        "k": k,
        "target_index": max(users_count - k, 0),
        "sensitivity": sensitivity,
        "noise_scale": scale,
        "fraction_clipped": fraction,
    }
    ledger = (PureLedgerEntry("quantile", eps_quantile), PureLedgerEntry("laplace", eps_noise))
    noise = scale[:, None] * _standard_laplace(uniforms[:, 2:])
    return _result(data, clipped / data.n, noise, ledger, diagnostics)
