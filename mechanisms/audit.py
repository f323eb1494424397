"""Empirical privacy audit of a mechanism on one pair of neighbouring datasets (docs/design.md §5.8).

A black-box check that a mechanism is no less private than it claims. Draw ``runs`` outputs
on x and on its neighbour x', reduce each to one number (a statistic), and look for a
rejection set S = {stat > t} or {stat < t} that is likely under one dataset and unlikely under
the other. Two tests share that method: :func:`audit_pair` tests an (eps, delta)-DP claim
(below), :func:`audit_zcdp` a rho-zCDP claim in its own measure, the Renyi divergence of the
two Bernoulli distributions S makes of the outputs (its soundness is argued where it is
defined). A zCDP claim converted to (eps, delta) loses power: at rho = 1/4 and delta = 1e-2
the claim is eps = 2.40 while a correct Gaussian mechanism's tight eps is about 1.46, so a
Gaussian with twice its claimed rho (tight eps about 2.3) could never be flagged; the native
test flags it from 10^5 runs.

(eps, delta)-DP implies P[S | D] <= e^eps P[S | D'] + delta for every S and both orders of
the pair, so with one-sided upper confidence bounds on FNR = P[not S | D] and
FPR = P[S | D'],

    eps >= ln((1 - delta - FNR_upper) / FPR_upper).

Method, and why the bound holds with probability >= ``confidence``:

1. Each sample is split in two halves. The set S (threshold t, side ">" or "<") and the order
   of the pair (which dataset plays D, the one S is likely under) are chosen on the first
   halves only (:func:`select_test`).
2. On the second halves, which are independent of that choice, the two counts are binomial;
   one-sided Clopper-Pearson bounds at level (1 - confidence) / 2 each (Bonferroni over FPR and
   FNR) hold together with probability >= confidence, and then so does the bound on eps.

Only one test (one S, one order) is evaluated on the second halves, so no correction for the
two orders or the two sides is needed: choosing "the larger of the two directions" on the
first halves is part of the selection, whose data the bound does not use. The bound is
conservative (Clopper-Pearson is exact-or-conservative, and Bonferroni ignores the
independence of the two counts).

Selection objective: for every candidate threshold (every distinct first-half value), both
sides and both orders at once (vectorised), the plug-in bound ln((1 - delta - FNR) / FPR) of
the first halves' rates, each rate replaced by its Wilson score bound for a sample of the
second halves' size (Wilson's centre is the rate with a pseudo-count of z^2/2 successes and
failures, so an empty count does not give an infinite estimate, and small counts are
penalised as the final bound will penalise them). The selection's z is at least 4 (a
one-sided level of about 3e-5), stricter than the evaluation's 2.24: the search runs over up
to 10^6 thresholds and with the evaluation's z it picked chance fluctuations in far tails
(winner's curse). Measured on the Laplace mechanism (eps 1, 10^6 runs, three seeds): 0.99,
0.72, 0.51 with z = 2.24; 0.99 three times with z = 3 to 6; the other registered audits
moved by at most a few hundredths. A bare plug-in with a tiny pseudo-count is worse still:
for the Laplace mechanism the tail ratio is the same e^eps for every t beyond both centres,
and only the counts decide.

The bound is only as strong as ``runs`` allows: with R runs the smallest FPR bound is about
4.4 / (R / 2) at 95 %, so eps_lower <= ln(R / 9) or so (about 11.6 at R = 10^6).

Floating point: numpy's Gaussian and Laplace samplers are not floating-point-exact DP
(Mironov 2012); an audit that finds nothing does not show more than what it measured.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from numbers import Integral, Real

import numpy as np

from .accounting import Estimate

# scipy.special is imported where it is used: it adds 0.05 s to every Snakefile parse, which imports
# this module (experiments.audit.power).

SIDES = (">", "<")
REFERENCES = ("x", "x_neighbour")


@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit_pair`.

    ``reference`` is the dataset the rejection set S is likely under (D in
    P[S | D] <= e^eps P[S | D'] + delta); S = {stat > threshold} (``side`` ">") or
    {stat < threshold} ("<"). ``fpr`` = P[S | D'] and ``fnr`` = P[not S | D] are the
    second-half rates, ``fpr_upper`` and ``fnr_upper`` their one-sided Clopper-Pearson upper
    bounds (Bonferroni: each at level (1 - confidence) / 2). ``eps_lower`` =
    max(0, ln((1 - delta - fnr_upper) / fpr_upper)) holds with probability >= ``confidence``.
    ``selection_eps`` is the selection objective on the first halves (:func:`select_test`).
    ``runs`` counts the draws per dataset (both halves).
    """

    eps_lower: float
    claimed_eps: float
    delta: float
    threshold: float
    side: str
    reference: str
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    runs: int
    confidence: float
    selection_eps: float

    @property
    def violation(self) -> bool:
        """The mechanism leaks more than it claims on this pair, at ``confidence``."""
        return self.eps_lower > self.claimed_eps

    def as_dict(self) -> dict:
        return {**asdict(self), "violation": self.violation}


# ---------------------------------------------------------------- argument checks


def _check_real(value, name, expected):
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be {expected}, got {name}={value!r}")
    return float(value)


def _check_claim(claimed_eps):
    value = _check_real(claimed_eps, "claimed_eps", "a finite number > 0")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"claimed_eps must be a finite number > 0, got claimed_eps={claimed_eps!r}")
    return value


def _check_claimed_rho(claimed_rho):
    value = _check_real(claimed_rho, "claimed_rho", "a finite number > 0")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"claimed_rho must be a finite number > 0, got claimed_rho={claimed_rho!r}")
    return value


def _check_delta(delta):
    value = _check_real(delta, "delta", "a number in [0, 1)")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"delta must be in [0, 1), got delta={delta!r}")
    return value


def _check_confidence(confidence):
    value = _check_real(confidence, "confidence", "a number in (0, 1)")
    if not 0.0 < value < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got confidence={confidence!r}")
    return value


def _check_flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {name}={value!r}")
    return bool(value)


def _check_samples(stats_x, stats_neighbour):
    samples = []
    for name, stats in (("stats_x", stats_x), ("stats_neighbour", stats_neighbour)):
        arr = np.asarray(stats, dtype=float)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be one value per run (1-D), got {name}.shape={arr.shape}")
        bad = np.flatnonzero(np.isnan(arr))
        if bad.size:
            raise ValueError(f"statistics must not be NaN, got {name}[{bad[0]}]=nan")
        samples.append(arr)
    if samples[0].size != samples[1].size:
        raise ValueError(f"stats_x and stats_neighbour must have the same number of runs, got "
                         f"{samples[0].size} and {samples[1].size}")
    return samples


def _check_audit_call(mechanism, statistic, rng, batched, chunk):
    if not callable(mechanism):
        raise ValueError(f"mechanism must be callable, got mechanism={mechanism!r}")
    if statistic is not None and not callable(statistic):
        raise ValueError(f"statistic must be callable or None, got statistic={statistic!r}")
    _check_generator(rng)
    _check_flag(batched, "batched")
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, Integral) or chunk < 1):
        raise ValueError(f"chunk must be a positive integer or None, got chunk={chunk!r}")


def minimum_runs(*, delta=0.0, confidence=0.95) -> int:
    """The fewest runs per dataset whose second halves can give eps_lower > 0 at all: with m
    draws, the best case (all m in S under D, none under D') bounds TPR below by a^(1/m) and
    FPR above by 1 - a^(1/m), a = (1 - confidence) / 2; both halves need at least one draw."""
    delta, confidence = _check_delta(delta), _check_confidence(confidence)
    alpha = (1.0 - confidence) / 2.0
    m = 1
    while alpha ** (1.0 / m) - delta <= 1.0 - alpha ** (1.0 / m):
        m += 1
    return 2 * m  # the evaluation half is runs - runs // 2 >= m, the selection half runs // 2 >= m - 1 >= 1


def _check_runs(runs, delta, confidence):
    least = minimum_runs(delta=delta, confidence=confidence)
    if isinstance(runs, bool) or not isinstance(runs, Integral) or runs < least:
        raise ValueError(f"runs must be an integer >= {least} to bound eps at confidence={confidence} and "
                         f"delta={delta}, got runs={runs!r}")
    return int(runs)


def _check_generator(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got rng={type(rng).__name__}")
    return rng


# ---------------------------------------------------------------- confidence bounds


def clopper_pearson_upper(successes, trials, *, alpha):
    """One-sided Clopper-Pearson upper bound on a binomial rate, at level ``alpha``:
    the (1 - alpha) quantile of Beta(k + 1, n - k), and 1 when k = n. Vectorised over k."""
    import scipy.special

    k = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = scipy.special.betaincinv(k + 1.0, np.maximum(trials - k, 1e-300), 1.0 - alpha)
    return np.where(k >= trials, 1.0, bound)


def clopper_pearson_lower(successes, trials, *, alpha):
    """One-sided Clopper-Pearson lower bound at level ``alpha``: the alpha quantile of
    Beta(k, n - k + 1), and 0 when k = 0."""
    import scipy.special

    k = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = scipy.special.betaincinv(np.maximum(k, 1e-300), trials - k + 1.0, alpha)
    return np.where(k <= 0, 0.0, bound)


def _wilson_bounds(rate, trials, z):
    """The Wilson score bounds (lower, upper) of observed ``rate`` in ``trials``: one centre and
    spread for both, (centre -+ spread) / (1 + z^2 / trials) clipped to [0, 1]."""
    z2 = z * z
    centre = rate + z2 / (2.0 * trials)
    # spread = z sqrt(max(rate (1 - rate), 0) / trials + z^2 / (4 trials^2)), in place: at 10^6
    # thresholds fresh temporaries cost more than the arithmetic
    spread = np.subtract(1.0, rate)
    spread *= rate
    np.maximum(spread, 0.0, out=spread)
    spread /= trials
    spread += z2 / (4.0 * trials * trials)
    np.sqrt(spread, out=spread)
    spread *= z
    scale = 1.0 + z2 / trials
    lower = np.subtract(centre, spread)
    upper = np.add(centre, spread, out=centre)
    for bound in (lower, upper):
        bound /= scale
        np.clip(bound, 0.0, 1.0, out=bound)
    return lower, upper


def _log_ratio(numerator, denominator):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(numerator > 0, np.log(np.maximum(numerator, 1e-300) / denominator), -np.inf)


# ---------------------------------------------------------------- the test


@dataclass(frozen=True)
class _Test:
    threshold: float
    side: str
    reference: str
    score: float


def _counts_in(sorted_values, thresholds, side):
    """How many values are > t (side ">") or < t ("<") for every threshold t."""
    if side == ">":
        return sorted_values.size - np.searchsorted(sorted_values, thresholds, side="right")
    return np.searchsorted(sorted_values, thresholds, side="left")


def _count_beyond(values, threshold, side) -> int:
    """How many ``values`` (unsorted) are > ``threshold`` (side ">") or < it ("<"): one threshold
    needs no sort."""
    return int(np.count_nonzero(values > threshold if side == ">" else values < threshold))


_SELECTION_BLOCK = 1 << 15  # thresholds scored together by select_test: their arrays stay in cache
_SELECTION_Z = 4.0  # at least: a Wilson bound at a one-sided level of about 3e-5 (module docstring)


def _selection_z(alpha) -> float:
    """The standard normal's upper ``alpha`` quantile (scipy.stats.norm.isf(alpha), bit for bit),
    at least _SELECTION_Z. Not scipy.stats: importing it takes 0.6 s, in every Snakefile parse."""
    import scipy.special

    return max(float(-scipy.special.ndtri(alpha)), _SELECTION_Z)


def _distinct_value_counts(sorted_x, sorted_neighbour):
    """(every distinct value t of the two sorted samples, as ``np.unique`` of their concatenation
    gives them, which keeps the zero it meets first where both 0.0 and -0.0 occur; the counts of
    each sample > t and < t, as :func:`_counts_in` gives them, by side and dataset). One search
    of x's values, not four of all t: the neighbour's counts are the pooled ones minus x's."""
    pooled = np.concatenate([sorted_x, sorted_neighbour])
    pooled.sort()
    starts = np.ones(pooled.size, dtype=bool)
    starts[1:] = pooled[1:] != pooled[:-1]
    candidates = pooled[starts]
    below_all = np.flatnonzero(starts)  # pooled values < t: where t's run starts
    at_most_all = np.append(below_all[1:], pooled.size)  # pooled values <= t: where the next run starts
    equal_x = np.bincount(np.searchsorted(candidates, sorted_x), minlength=candidates.size)
    at_most_x = np.cumsum(equal_x)
    below_x = at_most_x - equal_x
    counts = {
        ">": {"x": sorted_x.size - at_most_x, "x_neighbour": sorted_neighbour.size - (at_most_all - at_most_x)},
        "<": {"x": below_x, "x_neighbour": below_all - below_x},
    }
    return candidates, counts


def _wilson_rates(counts, sizes, *, trials, z):
    """For every side and order of the pair: (side, reference, the Wilson lower bounds of the
    rates of S = {stat side t} under the reference, the upper bounds under the other dataset),
    at every candidate threshold t, from ``counts`` (by side and dataset, the samples' values on
    that side of each t) of samples of ``sizes`` (by dataset), bounded as if from ``trials`` draws."""
    for side in SIDES:
        bounds = {name: _wilson_bounds(count / sizes[name], trials, z) for name, count in counts[side].items()}
        for reference in REFERENCES:
            other = "x_neighbour" if reference == "x" else "x"
            yield side, reference, bounds[reference][0], bounds[other][1]


def _side_counts(values, candidates):
    """The counts of :func:`_wilson_rates` at ``candidates``, read off ``values`` (the sorted
    samples by dataset)."""
    return {side: {name: _counts_in(v, candidates, side) for name, v in values.items()} for side in SIDES}


def select_test(first_x, first_neighbour, *, delta, alpha, evaluation_size) -> _Test:
    """The rejection set that maximises the selection objective on the first halves (module
    docstring): every distinct value as a threshold, both sides, both orders of the pair."""
    values = {"x": np.sort(first_x), "x_neighbour": np.sort(first_neighbour)}
    candidates, counts = _distinct_value_counts(values["x"], values["x_neighbour"])
    sizes = {name: v.size for name, v in values.items()}
    z = _selection_z(alpha)
    # Each side and order's first best threshold, a block of thresholds at a time (the block's
    # arrays stay in cache through the bounds and the ratio): the first of the blocks' bests.
    leaders = {}
    for start in range(0, candidates.size, _SELECTION_BLOCK):
        block = slice(start, start + _SELECTION_BLOCK)
        block_counts = {side: {name: count[block] for name, count in by_name.items()}
                        for side, by_name in counts.items()}
        for side, reference, tpr_lower, fpr_upper in _wilson_rates(block_counts, sizes, trials=evaluation_size, z=z):
            score = _log_ratio(tpr_lower - delta, fpr_upper)
            at = int(np.argmax(score))
            if (side, reference) not in leaders or score[at] > leaders[side, reference][0]:
                leaders[side, reference] = (float(score[at]), start + at)
    best = _Test(float(candidates[0]), ">", "x", -math.inf)
    for (side, reference), (score, at) in leaders.items():  # in _wilson_rates' order
        if score > best.score:
            best = _Test(float(candidates[at]), side, reference, score)
    return best


def audit_samples(stats_x, stats_neighbour, *, claimed_eps, delta=0.0, confidence=0.95) -> AuditResult:
    """The audit of :func:`audit_pair` on given statistics: ``stats_x`` (R values drawn on x)
    and ``stats_neighbour`` (R values drawn on x'). The first R // 2 of each choose the test,
    the rest bound it."""
    claimed_eps, delta, confidence = _check_claim(claimed_eps), _check_delta(delta), _check_confidence(confidence)
    samples = _check_samples(stats_x, stats_neighbour)
    runs = _check_runs(samples[0].size, delta, confidence)
    half = runs // 2
    m = runs - half
    alpha = (1.0 - confidence) / 2.0  # Bonferroni over the FPR and FNR bounds
    test = select_test(samples[0][:half], samples[1][:half], delta=delta, alpha=alpha, evaluation_size=m)
    second = {"x": samples[0][half:], "x_neighbour": samples[1][half:]}
    other = "x_neighbour" if test.reference == "x" else "x"
    hits, false = (_count_beyond(second[name], test.threshold, test.side) for name in (test.reference, other))
    fnr_upper = 1.0 - float(clopper_pearson_lower(hits, m, alpha=alpha))
    fpr_upper = float(clopper_pearson_upper(false, m, alpha=alpha))
    bound = float(_log_ratio(np.float64(1.0 - delta - fnr_upper), fpr_upper))
    return AuditResult(
        eps_lower=max(bound, 0.0), claimed_eps=claimed_eps, delta=delta, threshold=test.threshold, side=test.side,
        reference=test.reference, fpr=false / m, fnr=1.0 - hits / m, fpr_upper=fpr_upper, fnr_upper=fnr_upper,
        runs=runs, confidence=confidence, selection_eps=test.score,
    )


# ---------------------------------------------------------------- drawing outputs


def _as_output(out):
    return out.mean if isinstance(out, Estimate) else out


def _default_statistic(outputs, runs=None):
    """The first coordinate of one output, or of each of ``runs`` stacked outputs."""
    arr = np.asarray(outputs, dtype=float)
    if runs is None:
        if arr.size == 0:
            raise ValueError("the mechanism returned an empty output: give a statistic")
        return arr.reshape(-1)[0]
    return arr.reshape(runs, -1)[:, 0]


def draw_statistics(mechanism, x, *, runs, rng, statistic=None, batched=False, chunk=None) -> np.ndarray:
    """``runs`` values of ``statistic`` (default: first coordinate) of the mechanism's outputs on
    ``x``: one ``mechanism(x, rng)`` call per run, or with ``batched=True`` calls
    ``mechanism(x, rng, k)`` of at most ``chunk`` runs each (default: all at once), each
    returning k outputs stacked on the first axis (an Estimate's ``.mean`` is used)."""
    values = np.empty(runs)
    if not batched:
        for run in range(runs):
            out = _as_output(mechanism(x, rng))
            values[run] = _default_statistic(out) if statistic is None else float(statistic(out))
        return values
    chunk = runs if chunk is None else chunk
    for start in range(0, runs, chunk):
        k = min(chunk, runs - start)
        out = _as_output(mechanism(x, rng, k))
        stats = _default_statistic(out, k) if statistic is None else np.asarray(statistic(out), dtype=float)
        if stats.shape != (k,):
            raise ValueError(f"a batched statistic must return one value per run ({k}), got shape {stats.shape}")
        values[start:start + k] = stats
    return values


def audit_pair(mechanism, x, x_neighbour, *, claimed_eps, delta=0.0, runs, rng, statistic=None, batched=False,
               confidence=0.95, chunk=None) -> AuditResult:
    """Empirical lower confidence bound on the eps of ``mechanism`` from the neighbours
    ``x``, ``x_neighbour`` (docs/design.md §5.8; method in the module docstring).

    ``mechanism(x, rng)`` returns one output: an array, a float or an Estimate (its ``.mean``
    is used). With ``batched=True``, ``mechanism(x, rng, k)`` returns k outputs stacked on the
    first axis (at most ``chunk`` per call, default all ``runs`` at once). ``statistic`` maps
    one output to a float (default: its first coordinate); with ``batched=True`` it maps the
    stacked outputs to one float per run. ``runs`` outputs are drawn on each dataset, x first,
    from ``rng``. ``claimed_eps`` and ``delta`` are the (eps, delta)-DP claim (a zCDP claim is
    tested in its own measure by :func:`audit_zcdp`); the result flags a violation when eps_lower > claimed_eps, a
    statement that holds with probability >= ``confidence``.
    """
    claimed_eps, delta, confidence = _check_claim(claimed_eps), _check_delta(delta), _check_confidence(confidence)
    runs = _check_runs(runs, delta, confidence)
    _check_audit_call(mechanism, statistic, rng, batched, chunk)
    options = dict(runs=runs, rng=rng, statistic=statistic, batched=bool(batched), chunk=chunk)
    stats_x = draw_statistics(mechanism, x, **options)
    stats_neighbour = draw_statistics(mechanism, x_neighbour, **options)
    return audit_samples(stats_x, stats_neighbour, claimed_eps=claimed_eps, delta=delta, confidence=confidence)


# ---------------------------------------------------------------- the native zCDP test (docs/design.md §5.8)
#
# A rho-zCDP claim tested in its own measure instead of through (eps, delta). Soundness, for
# every mechanism M that is rho-zCDP (Bun and Steinke 2016, Definition 1.1): for every alpha > 1
# and both orders of the pair, D_alpha(M(x) || M(x')) <= rho alpha. A rejection set S = {stat > t}
# (or < t) is a post-processing, so by the data-processing inequality of the Renyi divergence
# D_alpha(Bern(p) || Bern(q)) <= rho alpha, with p = P[S | D] and q = P[S | D']. S and the order
# are chosen on the first halves, so on the second halves the counts are binomial with those
# p and q; one-sided Clopper-Pearson bounds p >= p_lower and q <= q_upper hold together with
# probability >= confidence (Bonferroni). On that event, if p_lower > q_upper, then
# D_alpha(Bern(p_lower) || Bern(q_upper)) <= D_alpha(Bern(p) || Bern(q)) <= rho alpha for EVERY
# alpha at once, because the Bernoulli divergence grows as p moves up away from q and as q moves
# down away from p: sum p^a q^(1-a) + (1-p)^a (1-q)^(1-a) is convex in p and in q (a > 1) with
# its minimum at p = q. Hence rho >= sup_alpha D_alpha(Bern(p_lower) || Bern(q_upper)) / alpha
# = rho_lower with probability >= confidence. Since the event covers every alpha, the order
# alpha may be chosen after looking at the second halves: no correction is needed for it.

RENYI_ORDERS = 1.0 + np.geomspace(1e-3, 1e3, 481)  # the orders rho_lower maximises over (any subset is sound)
_SELECTION_ORDERS = RENYI_ORDERS[::8]
_CANDIDATES_PER_TAIL = 1500  # thresholds per tail, geometric in rank: the tails are where the test looks


@dataclass(frozen=True)
class ZcdpAuditResult:
    """The outcome of :func:`audit_zcdp`.

    ``reference`` is the dataset the rejection set S is likely under (D), S = {stat >
    threshold} (``side`` ">") or {stat < threshold} ("<"). ``tpr`` = P[S | D] and ``fpr`` =
    P[S | D'] are the second-half rates, ``tpr_lower`` and ``fpr_upper`` their one-sided
    Clopper-Pearson bounds (each at level (1 - confidence) / 2). ``rho_lower`` =
    max over ``RENYI_ORDERS`` of D_alpha(Bern(tpr_lower) || Bern(fpr_upper)) / alpha, attained
    at ``alpha`` (0, with alpha = nan, when tpr_lower <= fpr_upper); it holds with probability
    >= ``confidence``. ``selection_rho`` is the selection objective on the first halves.
    """

    rho_lower: float
    claimed_rho: float
    threshold: float
    side: str
    reference: str
    alpha: float
    tpr: float
    fpr: float
    tpr_lower: float
    fpr_upper: float
    runs: int
    confidence: float
    selection_rho: float

    @property
    def violation(self) -> bool:
        """The mechanism is not rho-zCDP for the claimed rho on this pair, at ``confidence``."""
        return self.rho_lower > self.claimed_rho

    def as_dict(self) -> dict:
        return {**asdict(self), "violation": self.violation}


def bernoulli_renyi(p, q, alpha):
    """D_alpha(Bern(p) || Bern(q)) for alpha > 1, vectorised (broadcasts); inf where q = 0 < p
    or q = 1 > p."""
    p, q, alpha = np.asarray(p, dtype=float), np.asarray(q, dtype=float), np.asarray(alpha, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ones = alpha * np.log(p) + (1.0 - alpha) * np.log(q)
        zeros = alpha * np.log1p(-p) + (1.0 - alpha) * np.log1p(-q)
        ones = np.where(p > 0, ones, -np.inf)  # 0 log 0 = 0 on either side
        zeros = np.where(p < 1, zeros, -np.inf)
        return np.logaddexp(ones, zeros) / (alpha - 1.0)


def zcdp_bound(p_lower, q_upper, orders=RENYI_ORDERS):
    """(rho, alpha): the largest D_alpha(Bern(p_lower) || Bern(q_upper)) / alpha over ``orders``,
    and where it is attained; (0, nan) unless p_lower > q_upper. Vectorised over p and q."""
    p, q = np.broadcast_arrays(np.asarray(p_lower, dtype=float), np.asarray(q_upper, dtype=float))
    ratios = bernoulli_renyi(p[..., None], q[..., None], orders) / orders
    at = np.argmax(ratios, axis=-1)
    best = np.take_along_axis(ratios, at[..., None], axis=-1)[..., 0]
    separated = p > q
    return np.where(separated, best, 0.0), np.where(separated, np.asarray(orders)[at], np.nan)


def _candidate_thresholds(first_x, first_neighbour):
    """Thresholds for the selection: the pooled first-half values at ranks spaced geometrically
    from both ends (dense in the tails, where a zCDP violation shows) and evenly in between."""
    pooled = np.sort(np.concatenate([first_x, first_neighbour]))
    size = pooled.size
    tail = np.unique(np.geomspace(1, size, _CANDIDATES_PER_TAIL).astype(np.int64)) - 1
    ranks = np.unique(np.concatenate([tail, size - 1 - tail, np.linspace(0, size - 1, 500).astype(np.int64)]))
    return np.unique(pooled[ranks])


def select_zcdp_test(first_x, first_neighbour, *, alpha, evaluation_size) -> _Test:
    """The rejection set that maximises the zCDP selection objective on the first halves: for
    every candidate threshold, both sides and both orders, :func:`zcdp_bound` of the first
    halves' rates, each replaced by its Wilson bound for a sample of ``evaluation_size`` at
    z >= 4 (as in :func:`select_test`, against the winner's curse)."""
    values = {"x": np.sort(first_x), "x_neighbour": np.sort(first_neighbour)}
    candidates = _candidate_thresholds(first_x, first_neighbour)
    sizes = {name: v.size for name, v in values.items()}
    z = _selection_z(alpha)
    best = _Test(float(candidates[0]), ">", "x", -math.inf)
    for side, reference, tpr_lower, fpr_upper in _wilson_rates(_side_counts(values, candidates), sizes,
                                                               trials=evaluation_size, z=z):
        score, _ = zcdp_bound(tpr_lower, fpr_upper, _SELECTION_ORDERS)
        at = int(np.argmax(score))
        if score[at] > best.score:
            best = _Test(float(candidates[at]), side, reference, float(score[at]))
    return best


def audit_zcdp_samples(stats_x, stats_neighbour, *, claimed_rho, confidence=0.95) -> ZcdpAuditResult:
    """The test of :func:`audit_zcdp` on given statistics (R values drawn on x, R on x'): the
    first R // 2 of each choose the test, the rest bound it."""
    claimed_rho, confidence = _check_claimed_rho(claimed_rho), _check_confidence(confidence)
    first, second = _check_samples(stats_x, stats_neighbour)
    runs = _check_runs(first.size, 0.0, confidence)
    half = runs // 2
    m = runs - half
    alpha = (1.0 - confidence) / 2.0  # Bonferroni over the two rates' bounds
    test = select_zcdp_test(first[:half], second[:half], alpha=alpha, evaluation_size=m)
    evaluation = {"x": first[half:], "x_neighbour": second[half:]}
    other = "x_neighbour" if test.reference == "x" else "x"
    hits, false = (_count_beyond(evaluation[name], test.threshold, test.side) for name in (test.reference, other))
    tpr_lower = float(clopper_pearson_lower(hits, m, alpha=alpha))
    fpr_upper = float(clopper_pearson_upper(false, m, alpha=alpha))
    rho_lower, order = zcdp_bound(tpr_lower, fpr_upper)
    return ZcdpAuditResult(
        rho_lower=float(rho_lower), claimed_rho=claimed_rho, threshold=test.threshold, side=test.side,
        reference=test.reference, alpha=float(order), tpr=hits / m, fpr=false / m, tpr_lower=tpr_lower,
        fpr_upper=fpr_upper, runs=runs, confidence=confidence, selection_rho=test.score,
    )


def audit_zcdp(mechanism, x, x_neighbour, *, claimed_rho, runs, rng, statistic=None, batched=False, chunk=None,
               confidence=0.95) -> ZcdpAuditResult:
    """Empirical lower confidence bound on the rho-zCDP of ``mechanism`` from the neighbours
    ``x``, ``x_neighbour``, tested in zCDP's own measure (docs/design.md §5.8; soundness in the
    comment above :data:`RENYI_ORDERS`): ``rho_lower`` > ``claimed_rho`` is a violation, a
    statement that holds with probability >= ``confidence`` for every rho-zCDP mechanism.

    Calling conventions as :func:`audit_pair`: ``mechanism(x, rng)`` returns one output (an
    Estimate's ``.mean`` is used), or with ``batched=True`` ``mechanism(x, rng, k)`` returns k
    outputs stacked on the first axis (at most ``chunk`` per call); ``statistic`` maps an output
    (batched: the stacked outputs) to a float (one per run), by default the first coordinate;
    ``runs`` outputs are drawn on each dataset, x first, from ``rng``.
    """
    claimed_rho, confidence = _check_claimed_rho(claimed_rho), _check_confidence(confidence)
    runs = _check_runs(runs, 0.0, confidence)
    _check_audit_call(mechanism, statistic, rng, batched, chunk)
    options = dict(runs=runs, rng=rng, statistic=statistic, batched=bool(batched), chunk=chunk)
    stats_x = draw_statistics(mechanism, x, **options)
    stats_neighbour = draw_statistics(mechanism, x_neighbour, **options)
    return audit_zcdp_samples(stats_x, stats_neighbour, claimed_rho=claimed_rho, confidence=confidence)


RUNS_HORIZON = 10**9  # projected_runs looks no further


def projected_runs(stats_x, stats_neighbour, *, claimed_rho, confidence=0.95) -> int | None:
    """The fewest runs (on a grid of ten per decade, up to 10^9) at which :func:`audit_zcdp`
    would flag a claim of ``claimed_rho``, projected from the given statistics: for every
    candidate rejection set (both sides and orders, thresholds as in the selection) the two
    rates are taken pessimistically, as the selection takes them (Wilson bounds at z = 4 for
    the given draws, so an empty tail does not project a flag), and the counts expected at R
    runs are bounded as the test bounds them. None if no R up to 10^9 would flag. A planning
    estimate (it ignores the selection's own noise, and cannot see events rarer than the given
    draws show), not a test."""
    claimed_rho, confidence = _check_claimed_rho(claimed_rho), _check_confidence(confidence)
    first, second = _check_samples(stats_x, stats_neighbour)
    values = {"x": np.sort(first), "x_neighbour": np.sort(second)}
    candidates = _candidate_thresholds(first, second)
    alpha = (1.0 - confidence) / 2.0
    sizes = {name: v.size for name, v in values.items()}
    bounds = list(_wilson_rates(_side_counts(values, candidates), sizes, trials=first.size, z=_SELECTION_Z))
    # the pessimistic rates of every candidate, side and order
    likely, unlikely = (np.concatenate([b[column] for b in bounds]) for column in (2, 3))

    def flags(runs):
        m = int(runs - runs // 2)
        p_lower = clopper_pearson_lower(np.floor(likely * m), m, alpha=alpha)
        q_upper = clopper_pearson_upper(np.ceil(unlikely * m), m, alpha=alpha)
        return np.max(zcdp_bound(p_lower, q_upper, _SELECTION_ORDERS)[0]) > claimed_rho

    grid = np.unique(np.round(np.logspace(2, math.log10(RUNS_HORIZON), 71)).astype(np.int64))
    if not flags(grid[-1]):
        return None
    low, high = -1, grid.size - 1  # more runs only tighten the bounds: bisect for the first flag
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if flags(grid[middle]) else (middle, high)
    return int(grid[high])
