"""The private mean of three DP libraries through their public APIs, at our privacy (docs/design.md §5.10).

``opendp_mean`` (OpenDP), ``diffprivlib_mean`` (IBM's diffprivlib) and ``pydp_mean`` (Google's
differential privacy library, package python-dp) are ``f(x, *, rho, bounds, rng, **options)`` like
PLAN, and each is rho-zCDP under our neighbours, replace-one with n public (docs/design.md §5.0):

* ``bounds_from="given"``: the library's bounded mean of every coordinate with the universe ``bounds``
  (or ``coordinate_bounds`` where given: binary data's (0, 1), which PLAN for binary data knows, where
  the engine's universe (0, sqrt(D')) is IOME's for rotated rows).
* ``bounds_from="quantiles"``: a two-pass recipe for unknown bounds. The library's own private
  quantiles at ``quantile_levels`` of each coordinate (searching the universe, ``quantile_share``
  of rho for the two), then its bounded mean of the data clipped to them with the rest of rho.
  None of the three libraries documents this recipe: it is ours, built from their functions.
* ``bounds_from="automatic"`` (python-dp only): ``BoundedMean`` without bounds, which finds them
  itself with a share of its epsilon, the recipe python-dp documents for unknown bounds. Where it
  finds too little data for its budget it refuses: :class:`MechanismRefusal`.

A step's budget is split evenly in rho over the coordinates (and the two quantiles): zCDP adds up
(docs/design.md §5). Each library call is calibrated so that its replace-one zCDP cost is its share
(§5.10).
x is a dense array, a scipy.sparse matrix or a SharedSample. The libraries need dense columns: a
sparse matrix is densified a block of columns at a time, each block at most ``dense_limit_bytes``.
The libraries are imported inside the adapters: diffprivlib's import alone takes over a second.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse

from ._layout import sample_data, transposed_of
from ._validation import (
    as_real,
    check_bounds,
    check_choice,
    check_data,
    check_fraction,
    check_generator,
    check_positive_int,
    check_sparse,
    check_step_budgets,
)
from .accounting import UNSPENT, Estimate, LedgerEntry, MechanismRefusal, check_rho, split_budget

DENSE_LIMIT_BYTES = 256 << 20  # the largest dense block of a sparse matrix an adapter makes
SHARED_BOUNDS_FROM = ("given", "quantiles")  # every adapter; python-dp also "automatic"
BOUNDS_FROM = (*SHARED_BOUNDS_FROM, "automatic")
CANDIDATE_SPACINGS = ("even", "geometric")
# geometric candidates: from the universe's centre out to its edge, the nearest this fraction of the half-width away
GEOMETRIC_NEAREST = 1e-6
# The library's accountant and our ledger may differ by rounding only (e.g. diffprivlib spends k eps / k).
ACCOUNTANT_TOLERANCE = 1e-9
# python-dp's Percentile takes seconds per call on tied data from epsilon 100 on (0.4 to 2.7 s at n = 64,
# against 6 ms at 10): larger per-call budgets are refused.
PYDP_MAX_PERCENTILE_EPSILON = 50.0
DISTRIBUTIONS = {"opendp": "opendp", "diffprivlib": "diffprivlib", "pydp": "python-dp"}  # the pinned packages
NEIGHBOURS = {
    "opendp": "ChangeOneDistance on data of known size n (OpenDP's replace-one metric); privacy maps "
              "evaluated at d_in = 1, no conversion",
    "diffprivlib": "replace-one with n public: tools.mean adds Laplace noise for sensitivity (hi - lo) / n and "
                   "tools.quantile's rank utility has sensitivity 1, both the replace-one sensitivities; no conversion",
    "pydp": "add/remove one record, n private (BoundedMean noises the count). Under replace-one BoundedMean at "
            "epsilon with bounds is epsilon-DP (the count does not change; its normalised sum has Laplace scale "
            "(hi - lo) / epsilon); BoundedMean without bounds and Percentile at epsilon are booked at 2 epsilon "
            "(group privacy), an upper bound: Percentile's steps each use a fraction of epsilon, so its "
            "zCDP cost is below the (2 epsilon)^2 / 2 booked",
}



@dataclass(frozen=True)
class _Request:
    """A validated call: the data, the budget split and the options every adapter shares."""

    source: object  # x as given: a SharedSample keeps its transposed copy for later mechanisms
    data: object  # a float64 array or CSR matrix, n x d
    rho: float
    lo: float
    hi: float
    bounds_from: str
    quantile_share: float
    quantile_levels: tuple[float, float]
    dense_limit_bytes: int

    @property
    def two_pass(self) -> bool:
        return self.bounds_from == "quantiles"

    @property
    def automatic(self) -> bool:
        return self.bounds_from == "automatic"

    def budgets(self) -> tuple[float, float]:
        """(rho of all quantiles, rho of all means)."""
        if not self.two_pass:
            return 0.0, self.rho
        return split_budget(self.rho, [self.quantile_share, 1.0 - self.quantile_share])

    def per_call(self) -> tuple[float, float]:
        """(rho of one quantile call, rho of one coordinate's mean): each step split evenly
        (docs/design.md §5.10)."""
        d = self.data.shape[1]
        quantile_rho, mean_rho = self.budgets()
        return quantile_rho / (2 * d), mean_rho / d


def _request(x, rho, bounds, rng, *, bounds_from, quantile_share, quantile_levels, dense_limit_bytes,
             coordinate_bounds, recipes=SHARED_BOUNDS_FROM) -> _Request:
    given = sample_data(x)
    data = check_sparse(given) if scipy.sparse.issparse(given) else check_data(given)
    rho = check_rho(rho)
    lo, hi = check_bounds(bounds)
    if coordinate_bounds is not None:  # every coordinate's own range replaces the engine's universe
        try:
            lo, hi = check_bounds(coordinate_bounds)
        except ValueError as error:
            raise ValueError(f"coordinate_bounds: {error}") from None
    check_generator(rng)
    check_choice(bounds_from, "bounds_from", recipes)
    share = check_fraction(quantile_share, "quantile_share", closed_high=False)
    levels = _check_levels(quantile_levels)
    limit = check_positive_int(dense_limit_bytes, "dense_limit_bytes")
    request = _Request(x, data, rho, lo, hi, bounds_from, share, levels, limit)
    quantile_rho, mean_rho = request.per_call()
    blame = f"rho={rho!r} with quantile_share={share!r} over {data.shape[1]} coordinates"
    check_step_budgets(blame, mean=mean_rho, **({"quantile": quantile_rho} if request.two_pass else {}))
    return request


def _check_levels(levels) -> tuple[float, float]:
    message = f"quantile_levels must be two increasing numbers in (0, 1), got quantile_levels={levels!r}"
    try:
        low, high = (as_real(level, "quantile_levels", "a number") for level in levels)
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if not 0.0 < low < high < 1.0:
        raise ValueError(message)
    return low, high


def _column_blocks(request: _Request, library: str):
    """(first column, block) pairs covering x, block a C-contiguous (k, n) array holding columns
    first..first + k - 1 of x. Dense x is one block, its transposed copy; a sparse matrix is
    densified k columns at a time, k as large as ``dense_limit_bytes`` allows."""
    data = request.data
    n, d = data.shape
    if not scipy.sparse.issparse(data):
        yield 0, transposed_of(request.source, data)
        return
    column_bytes = 8 * n
    if column_bytes > request.dense_limit_bytes:
        raise ValueError(
            f"{library} needs the columns of x dense, but x is a sparse matrix of shape {data.shape} and one dense "
            f"column takes {column_bytes} bytes, more than dense_limit_bytes={request.dense_limit_bytes}"
        )
    width = min(d, request.dense_limit_bytes // column_bytes)
    by_column = data.tocsc()
    for first in range(0, d, width):
        yield first, by_column[:, first:first + width].T.toarray()


def _sorted_bounds(lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """The two private quantiles of each coordinate in increasing order (post-processing)."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    return np.minimum(lower, upper), np.maximum(lower, upper)


def _ledger(request: _Request, description: dict, degenerate: int) -> tuple[LedgerEntry, ...]:
    """One entry per step. A coordinate whose private bounds coincide has the constant clipped mean
    lo_j: its mean is not released by the library and its share is unspent."""
    quantile_rho, mean_rho = request.budgets()
    if not request.two_pass:
        return (LedgerEntry(description["mean"], mean_rho),)
    d = request.data.shape[1]
    spent = mean_rho * ((d - degenerate) / d)
    ledger = [LedgerEntry(description["quantiles"], quantile_rho), LedgerEntry(description["mean"], spent)]
    if degenerate:
        ledger.append(LedgerEntry(UNSPENT, mean_rho - spent))
    return tuple(entry for entry in ledger if entry.rho > 0)


def _estimate(library, request, mean, ledger, accountant_rho, diagnostics) -> Estimate:
    """The Estimate, after checking the library's own accounting against the ledger."""
    spent = math.fsum(entry.rho for entry in ledger if entry.step != UNSPENT)
    if not math.isclose(accountant_rho, spent, rel_tol=ACCOUNTANT_TOLERANCE):
        raise RuntimeError(
            f"{library}'s own accounting gives rho={accountant_rho!r} under replace-one, our ledger {spent!r}: "
            "the calibration of docs/design.md §5.10 no longer holds for this library version"
        )
    n, d = request.data.shape
    common = {
        "accounting": "exact",
        "requested_rho": request.rho,
        "true_rho": spent,
        "library": library,
        "library_version": _version(DISTRIBUTIONS[library]),
        "neighbours": NEIGHBOURS[library],
        "bounds_from": request.bounds_from,
        "accountant_rho": accountant_rho,
    }
    if request.two_pass:
        common |= {"quantile_levels": request.quantile_levels, "quantile_share": request.quantile_share}
    return Estimate(mean=mean, ledger=ledger, diagnostics=common | diagnostics)


@functools.cache
def _version(distribution: str) -> str:
    return importlib.metadata.version(distribution)


def _two_pass_diagnostics(lower, upper) -> dict:
    return {"private_bounds": np.stack([lower, upper]), "degenerate_coordinates": int(np.sum(lower == upper))}


# ---------------------------------------------------------------- OpenDP


def opendp_mean(x, *, rho, bounds, rng, bounds_from="given", quantile_share=0.5, quantile_levels=(0.05, 0.95),
                quantile_candidates=1024, candidate_spacing="even", dense_limit_bytes=DENSE_LIMIT_BYTES,
                coordinate_bounds=None) -> Estimate:
    """OpenDP's mean in its zCDP mode, one coordinate at a time (docs/design.md §5.10).

    Per coordinate: ChangeOneDistance on data of size n, ``make_clamp`` to the bounds, ``make_mean``
    and ``make_gaussian``, its scale calibrated with OpenDP's own privacy map so that the map at
    d_in = 1 is the coordinate's rho. ``"quantiles"``: ``make_private_quantile`` (zCDP measure,
    ``quantile_candidates`` candidates over ``bounds``) for both levels and then the mean with those
    bounds, the three queried through ``make_adaptive_composition``. ``candidate_spacing``: ``"even"``
    (OpenDP's examples) or ``"geometric"`` (:func:`quantile_candidates`), which resolves data far
    narrower than the universe: the exponential mechanism's rank utility ties every candidate on one
    side of the data, so evenly spaced candidates much wider apart than the data's spread put a
    quantile anywhere in that side's tail. OpenDP draws from OpenSSL's generator and cannot be
    seeded: ``rng`` is accepted and not used.
    """
    request = _request(x, rho, bounds, rng, bounds_from=bounds_from, quantile_share=quantile_share,
                       quantile_levels=quantile_levels, dense_limit_bytes=dense_limit_bytes,
                       coordinate_bounds=coordinate_bounds)
    candidates = check_positive_int(quantile_candidates, "quantile_candidates")
    if candidates < 2:
        raise ValueError(f"quantile_candidates must be at least 2, got quantile_candidates={quantile_candidates!r}")
    check_choice(candidate_spacing, "candidate_spacing", CANDIDATE_SPACINGS)
    import opendp.prelude as dp

    dp.enable_features("contrib")
    n, d = request.data.shape
    quantile_rho, mean_rho = request.per_call()
    mean = np.empty(d)
    if not request.two_pass:
        measurement, scale, cost = _opendp_mean_measurement(n, request.lo, request.hi, mean_rho)
        for first, block in _column_blocks(request, "opendp"):
            for offset, column in enumerate(block):
                mean[first + offset] = measurement(_writeable(column))
        costs = [cost] * d
        diagnostics = {"mean_scale": scale, "mean_rho_per_coordinate": mean_rho}
        degenerate = 0
    else:
        queries = [_opendp_quantile_measurement(n, request.lo, request.hi, candidates, candidate_spacing, level,
                                                quantile_rho) for level in request.quantile_levels]
        domain, metric = _opendp_space(n)
        compositor = dp.c.make_adaptive_composition(domain, metric, dp.zero_concentrated_divergence(), d_in=1,
                                                    d_mids=[quantile_rho, quantile_rho, mean_rho])
        lower, upper, scales, costs = np.empty(d), np.empty(d), np.full(d, np.nan), []
        for first, block in _column_blocks(request, "opendp"):
            for offset, column in enumerate(block):
                j = first + offset
                queryable = compositor(_writeable(column))
                found = [queryable(query) for query, _, _ in queries]
                costs += [cost for _, _, cost in queries]
                lower[j], upper[j] = min(found), max(found)
                mean[j] = lower[j]
                if lower[j] < upper[j]:
                    measurement, scales[j], cost = _opendp_mean_measurement(n, lower[j], upper[j], mean_rho)
                    mean[j] = queryable(measurement)
                    costs.append(cost)
        diagnostics = {"mean_scale": scales, "mean_rho_per_coordinate": mean_rho,
                       "quantile_scales": [scale for _, scale, _ in queries], "quantile_rho_per_call": quantile_rho,
                       "quantile_candidates": candidates, "candidate_spacing": candidate_spacing,
                       **_two_pass_diagnostics(lower, upper)}
        degenerate = diagnostics["degenerate_coordinates"]
    description = {
        "mean": f"mean (opendp make_clamp + make_mean + make_gaussian, 1 per coordinate, rho {mean_rho:.6g} each)",
        "quantiles": f"quantiles (opendp make_private_quantile, 2 per coordinate, rho {quantile_rho:.6g} each)",
    }
    diagnostics |= {"seeded": False, "accountant": "OpenDP privacy maps at d_in = 1 of every measurement run"}
    return _estimate("opendp", request, mean, _ledger(request, description, degenerate), math.fsum(costs),
                     diagnostics)


@functools.cache
def _opendp_space(n: int):
    """Vectors of n floats under ChangeOneDistance: replace-one with n public."""
    import opendp.prelude as dp

    return dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n), dp.change_one_distance()


@functools.lru_cache(maxsize=4096)
def _opendp_mean_measurement(n: int, lo: float, hi: float, rho: float):
    """(measurement, its Gaussian scale, its rho at d_in = 1) of the clamped mean of n values."""
    import opendp.prelude as dp

    what = f"its clamped mean of {n} values in bounds ({lo!r}, {hi!r}) at rho={rho!r}"
    with _opendp_refusals(what):
        clamped_mean = (_opendp_space(n) >> dp.t.then_metric_unbounded() >> dp.t.then_clamp((lo, hi))
                        >> dp.t.then_mean())
        return _opendp_calibrated(lambda scale: clamped_mean >> dp.m.then_gaussian(scale), rho,
                                  reference=clamped_mean.map(1), what=what)


def quantile_candidates(lo: float, hi: float, count: int, spacing: str) -> np.ndarray:
    """The sorted candidates of a private quantile over (lo, hi): ``count`` evenly spaced ones, or
    (``"geometric"``) the centre and about ``count / 2`` on each side, whose distances from the
    centre grow geometrically from GEOMETRIC_NEAREST of the half-width to the whole of it. Fewer
    where (lo, hi) is a few ulps wide."""
    if spacing == "even":
        return np.unique(np.linspace(lo, hi, count))
    centre, half = lo / 2.0 + hi / 2.0, hi / 2.0 - lo / 2.0
    offsets = np.geomspace(half * GEOMETRIC_NEAREST, half, max(1, count // 2))
    return np.unique(np.clip(np.concatenate([centre - offsets, [centre], centre + offsets]), lo, hi))


@functools.lru_cache(maxsize=64)
def _opendp_quantile_measurement(n: int, lo: float, hi: float, count: int, spacing: str, level: float, rho: float):
    """(measurement, its scale, its rho at d_in = 1) of the private ``level`` quantile of n values."""
    import opendp.prelude as dp

    candidates = quantile_candidates(lo, hi, count, spacing).tolist()
    what = f"its {level!r} quantile of {n} values in bounds ({lo!r}, {hi!r}) at rho={rho!r}"
    with _opendp_refusals(what):
        space = _opendp_space(n) >> dp.t.then_metric_unbounded()
        measure = dp.zero_concentrated_divergence()
        return _opendp_calibrated(lambda scale: space >> dp.m.then_private_quantile(measure, candidates, level, scale),
                                  rho, reference=1.0, what=what)


def _opendp_calibrated(build, rho: float, *, reference: float, what: str):
    """The measurement ``build(scale)`` whose OpenDP privacy map at d_in = 1 is at most rho and
    within ACCOUNTANT_TOLERANCE of it. zCDP maps of the Gaussian and of the exponential mechanism
    scale as 1 / scale^2, so the map at a ``reference`` scale of the sensitivity's size gives the
    scale; the library's rounding may need a nudge."""
    scale = reference * math.sqrt(build(reference).map(1) / rho)
    for _ in range(8):
        measurement = build(scale)
        cost = measurement.map(1)
        if rho * (1.0 - ACCOUNTANT_TOLERANCE) <= cost <= rho:
            return measurement, scale, cost
        scale *= math.sqrt(cost / rho) * (1.0 + 1e-12)
    raise ValueError(f"OpenDP cannot calibrate {what} (rho and bounds beyond its float64 range?): scale {scale!r} "
                     f"has rho {cost!r}")


def _writeable(column: np.ndarray) -> np.ndarray:
    """OpenDP refuses read-only arrays (a SharedSample's transposed copy): a copy of such a column."""
    return column if column.flags.writeable else column.copy()


@contextlib.contextmanager
def _opendp_refusals(what: str):
    """OpenDP's refusal to build a measurement (float64 limits of its proofs) as one ValueError."""
    from opendp.mod import OpenDPException

    try:
        yield
    except OpenDPException as error:
        raise ValueError(f"OpenDP cannot build {what} (rho and bounds beyond its float64 range?): {error}") from None


# ---------------------------------------------------------------- diffprivlib


def diffprivlib_mean(x, *, rho, bounds, rng, bounds_from="given", quantile_share=0.5, quantile_levels=(0.05, 0.95),
                     dense_limit_bytes=DENSE_LIMIT_BYTES, coordinate_bounds=None) -> Estimate:
    """diffprivlib's ``tools.mean`` with ``axis=0`` (docs/design.md §5.10).

    With ``axis`` it runs one Laplace mean per coordinate at epsilon / d each; it is called with
    epsilon = k eps_j for k columns, so each coordinate gets eps_j = sqrt(2 rho_j) (pure eps-DP is
    eps^2/2-zCDP). ``"quantiles"``: ``tools.quantile`` of both levels (its exponential mechanism,
    eps^2/8-zCDP at eps) with ``axis=0``, then ``tools.mean`` with those bounds per coordinate.
    Randomness: a ``numpy.random.RandomState`` seeded with one integer drawn from ``rng``.
    """
    request = _request(x, rho, bounds, rng, bounds_from=bounds_from, quantile_share=quantile_share,
                       quantile_levels=quantile_levels, dense_limit_bytes=dense_limit_bytes,
                       coordinate_bounds=coordinate_bounds)
    from diffprivlib import tools
    from diffprivlib.accountant import BudgetAccountant

    seed = int(rng.integers(2**32))
    random_state = np.random.RandomState(seed)
    accountant = BudgetAccountant()
    quantile_rho, mean_rho = request.per_call()
    mean_eps, quantile_eps = math.sqrt(2.0 * mean_rho), math.sqrt(8.0 * quantile_rho)
    d = request.data.shape[1]
    mean, lower, upper = np.empty(d), np.full(d, request.lo), np.full(d, request.hi)
    costs = []

    def spend(rho_of_eps, function, *args, **kwargs):
        """``function`` run with our accountant and random state; each spend it books, in rho."""
        before = len(accountant.spent_budget)
        result = function(*args, axis=0, random_state=random_state, accountant=accountant, **kwargs)
        costs.extend(rho_of_eps(eps) for eps, _ in accountant.spent_budget[before:])
        return result

    for first, block in _column_blocks(request, "diffprivlib"):
        columns = block.T  # n x k, each column contiguous
        k = columns.shape[1]
        part = slice(first, first + k)
        if request.two_pass:
            try:
                with np.errstate(invalid="raise", divide="raise"):
                    found = spend(_exponential_rho, tools.quantile, columns, list(request.quantile_levels),
                                  epsilon=2 * k * quantile_eps, bounds=(request.lo, request.hi))
            except FloatingPointError:
                raise ValueError(
                    f"diffprivlib's tools.quantile fails on this x at eps {quantile_eps:.6g} (rho={request.rho!r}): in "
                    "a column of many tied values (e.g. 0/1 data) the intervals of positive width lie so far in rank "
                    "from the quantile that their weights underflow to 0, and its exponential mechanism divides 0 by "
                    "0; a smaller rho or bounds_from='given' avoids it"
                ) from None
            lower[part], upper[part] = _sorted_bounds(*found)
        mean[part] = lower[part]
        keep = np.flatnonzero(lower[part] < upper[part])
        if keep.size:
            kept = columns if keep.size == k else columns[:, keep]
            mean[first + keep] = spend(_laplace_rho, tools.mean, kept, epsilon=keep.size * mean_eps,
                                       bounds=(lower[first + keep], upper[first + keep]))
    diagnostics = {"mean_eps": mean_eps, "seeded": True, "random_state_seed": seed,
                   "accountant": "diffprivlib BudgetAccountant: each spend converted, Laplace eps^2/2, "
                                 "exponential mechanism eps^2/8",
                   "accountant_eps": float(accountant.total()[0])}
    degenerate = 0
    if request.two_pass:
        diagnostics |= {"quantile_eps": quantile_eps, **_two_pass_diagnostics(lower, upper)}
        degenerate = diagnostics["degenerate_coordinates"]
    description = {
        "mean": f"mean (diffprivlib.tools.mean, Laplace, 1 per coordinate, eps {mean_eps:.6g} each)",
        "quantiles": f"quantiles (diffprivlib.tools.quantile, 2 per coordinate, eps {quantile_eps:.6g} each)",
    }
    return _estimate("diffprivlib", request, mean, _ledger(request, description, degenerate), math.fsum(costs),
                     diagnostics)


def _laplace_rho(eps: float) -> float:
    """zCDP of a pure eps-DP mechanism (Bun and Steinke 2016, Proposition 1.4)."""
    return eps * eps / 2.0


def _exponential_rho(eps: float) -> float:
    """zCDP of the exponential mechanism at eps (Cesar and Rogers 2021; docs/design.md §5.0)."""
    return eps * eps / 8.0


# ---------------------------------------------------------------- python-dp


def pydp_mean(x, *, rho, bounds, rng, bounds_from="given", quantile_share=0.5, quantile_levels=(0.05, 0.95),
              dense_limit_bytes=DENSE_LIMIT_BYTES, coordinate_bounds=None) -> Estimate:
    """python-dp's ``BoundedMean`` one coordinate at a time (docs/design.md §5.10).

    BoundedMean at epsilon with bounds is epsilon-DP under replace-one too, so each coordinate's is
    called at eps_j = sqrt(2 rho_j). ``"automatic"``: BoundedMean without bounds (the library's
    recipe for unknown bounds: it spends part of its epsilon on a private histogram of magnitudes
    and clamps to the bounds it finds), called at eps_j / 2 because under replace-one an
    add/remove mechanism at epsilon is 2 epsilon-DP; where it finds too little data it refuses
    (:class:`MechanismRefusal`). ``"quantiles"`` (python-dp deprecates ``Percentile``): two
    Percentile calls per coordinate over ``bounds``, each at half its replace-one eps, then
    BoundedMean with those bounds. The ledger of the last two is an upper bound (``NEIGHBOURS``).
    python-dp draws from OpenSSL's generator and cannot be seeded: ``rng`` is accepted and not used.
    """
    request = _request(x, rho, bounds, rng, bounds_from=bounds_from, quantile_share=quantile_share,
                       quantile_levels=quantile_levels, dense_limit_bytes=dense_limit_bytes,
                       coordinate_bounds=coordinate_bounds, recipes=BOUNDS_FROM)
    from pydp.algorithms.laplacian import BoundedMean, Percentile

    quantile_rho, mean_rho = request.per_call()
    mean_eps, quantile_eps = math.sqrt(2.0 * mean_rho), math.sqrt(2.0 * quantile_rho)
    d = request.data.shape[1]
    mean, lower, upper = np.empty(d), np.full(d, request.lo), np.full(d, request.hi)
    costs = []
    if request.two_pass and quantile_eps / 2.0 > PYDP_MAX_PERCENTILE_EPSILON:
        raise ValueError(
            f"rho={request.rho!r} with quantile_share={request.quantile_share!r} gives python-dp's Percentile epsilon "
            f"{quantile_eps / 2.0:.6g} per call, above {PYDP_MAX_PERCENTILE_EPSILON:g}: there it takes seconds per "
            "call on tied data; use a smaller rho or quantile_share"
        )
    if request.two_pass:
        percentiles = [_pydp_algorithm(Percentile, request, quantile_eps / 2.0, request.lo, request.hi,
                                       percentile=level) for level in request.quantile_levels]
    elif request.automatic:
        given = _pydp_algorithm(BoundedMean, request, mean_eps / 2.0, None, None)
    else:
        given = _pydp_algorithm(BoundedMean, request, mean_eps, request.lo, request.hi)
    for first, block in _column_blocks(request, "pydp"):
        for offset, column in enumerate(block):
            j = first + offset
            values = column.tolist()
            if request.two_pass:
                found = [percentile.quick_result(values) for percentile in percentiles]
                if not np.all(np.isfinite(found)):
                    raise ValueError(f"python-dp's Percentile returned {found} for rho={request.rho!r} and "
                                     f"bounds=({request.lo!r}, {request.hi!r}) (beyond its float64 range?)")
                lower[j], upper[j] = _sorted_bounds(*found)
                costs += [_pydp_replace_one_rho(percentile, group=2) for percentile in percentiles]
                mean[j] = lower[j]
                if lower[j] == upper[j]:
                    continue
                algorithm = _pydp_algorithm(BoundedMean, request, mean_eps, lower[j], upper[j])
            else:
                algorithm = given
            mean[j] = _pydp_result(algorithm, values, request)
            costs.append(_pydp_replace_one_rho(algorithm, group=2 if request.automatic else 1))
    diagnostics = {"mean_eps": mean_eps, "seeded": False,
                   "accountant": "each python-dp algorithm object's own epsilon, delta and sensitivities, "
                                 "converted: BoundedMean with bounds eps^2/2, without bounds and Percentile "
                                 "(2 eps)^2/2"}
    degenerate = 0
    if request.two_pass:
        diagnostics |= {"quantile_eps": quantile_eps, "quantile_library_eps": quantile_eps / 2.0,
                        **_two_pass_diagnostics(lower, upper)}
        degenerate = diagnostics["degenerate_coordinates"]
    if request.automatic:
        diagnostics["mean_library_eps"] = mean_eps / 2.0
    description = {
        "mean": (f"mean (pydp BoundedMean without bounds, 1 per coordinate, library eps {mean_eps / 2.0:.6g} "
                 f"each, replace-one eps {mean_eps:.6g})" if request.automatic
                 else f"mean (pydp BoundedMean, 1 per coordinate, eps {mean_eps:.6g} each)"),
        "quantiles": f"quantiles (pydp Percentile, 2 per coordinate, replace-one eps {quantile_eps:.6g} each)",
    }
    return _estimate("pydp", request, mean, _ledger(request, description, degenerate), math.fsum(costs), diagnostics)


def _pydp_result(algorithm, values: list, request: _Request) -> float:
    """One coordinate's mean; automatic bounds that python-dp cannot find as a MechanismRefusal."""
    try:
        return algorithm.quick_result(values)
    except RuntimeError as error:
        if "ApproxBoundsNotEnoughData" not in str(error):
            raise
        raise MechanismRefusal(
            f"python-dp's BoundedMean without bounds refuses {len(values)} values at library epsilon "
            f"{algorithm.epsilon:.6g} (rho={request.rho!r} over {request.data.shape[1]} coordinates): its automatic "
            "bounds need more data for this budget"
        ) from None


def _pydp_replace_one_rho(algorithm, *, group: int) -> float:
    """The replace-one zCDP cost of one python-dp call, from what the algorithm object reports:
    pure epsilon-DP under its neighbours at l0 = linf = 1 contributions, times ``group`` (2 where
    a replaced record is a removal and an addition), as rho = (group epsilon)^2 / 2. Anything else
    (a delta, other sensitivities) breaks the conversion: an error, not a ledger."""
    reported = {"delta": algorithm.delta, "l0_sensitivity": algorithm.l0_sensitivity,
                "linf_sensitivity": algorithm.linf_sensitivity}
    # "Not set" (Percentile takes no contribution bounds): the library's default, one record per person
    if reported["delta"] != 0.0 or any(reported[key] not in (1, "Not set") for key in ("l0_sensitivity",
                                                                                        "linf_sensitivity")):
        raise RuntimeError(f"python-dp's {type(algorithm).__name__} reports {reported}: the pure-DP conversion of "
                           "docs/design.md §5.10 no longer holds for this library version")
    return _laplace_rho(group * algorithm.epsilon)


def _pydp_algorithm(algorithm, request: _Request, epsilon: float, lower: float | None, upper: float | None,
                    **options):
    """A python-dp algorithm object on floats; its refusals (e.g. epsilon below its minimum of about
    1e-15, or bounds too close for its sensitivity) as one ValueError."""
    try:
        return algorithm(epsilon=epsilon, lower_bound=lower, upper_bound=upper, dtype="float", **options)
    except RuntimeError as error:
        raise ValueError(
            f"python-dp refuses {algorithm.__name__}(epsilon={epsilon!r}, lower_bound={lower!r}, "
            f"upper_bound={upper!r}) for rho={request.rho!r}"
            + (f" with quantile_share={request.quantile_share!r}" if request.two_pass else "")
            + f" and bounds=({request.lo!r}, {request.hi!r}): {error}"
        ) from None
