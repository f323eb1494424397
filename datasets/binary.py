"""Sparse binary data for the PLAN binary experiments (docs/design.md §6, §7).

Every generator returns rows of independent Bernoulli coordinates as a
``scipy.sparse.csr_matrix`` (docs/design.md §4: sparse binary data are never densified), drawn
without any n x d array: each column's ones are a Bernoulli process, whose gaps are
geometric, so the cost grows with the number of ones, not with n * d. All randomness comes
from the ``rng`` passed in; the same generator state gives byte-identical matrices.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse

# The argument checks are shared with the Gaussian generators, so both name bad values alike.
from datasets.checks import check_positive_int, check_real, check_rng
from datasets.sample import Sample

# A column's first batch of gaps covers its mean number of ones plus this many standard
# deviations plus _EXTRA_GAPS (which covers columns with very few expected ones); a column
# needs a second batch with probability below about 1e-9.
_MARGIN_SIGMAS = 6.0
_EXTRA_GAPS = 8


def bernoulli_rows(q, *, n: int, rng: np.random.Generator) -> scipy.sparse.csr_matrix:
    """n rows of independent Bernoulli(q_j) coordinates, j = 0..len(q)-1, as a CSR matrix.

    Exact sampling, column by column: the rows holding a column's ones form a Bernoulli(q_j)
    process on 0..n-1, so the gaps between successive ones are Geometric(q_j) on {1, 2, ...}.
    The gaps of all columns are drawn in one vectorised batch (enough for every column's ones
    but with probability ~1e-9); a column whose batch ends before row n - 1 draws more gaps for
    itself, in column order, from the same ``rng``. q_j = 0 gives an empty column and q_j = 1
    a full one. Time and memory grow with the number of ones (about sum(q) * n), not n * d.

    The result: float64 data all 1.0, sorted int32 column indices without duplicates
    (``has_canonical_format``); indptr is int32 while the number of ones fits (scipy keeps
    indices and indptr in one dtype, so both become int64 beyond 2**31 - 1 ones).
    """
    q = _check_probabilities(q)
    check_positive_int(n=n)
    check_rng(rng)
    return draw_bernoulli_rows(q, n=n, rng=rng)


def binary_synthetic(
    *, n: int, d: int, ratio: float, rng: np.random.Generator, high: float = 0.5, low: float = 0.01
) -> Sample:
    """The synthetic binary experiment (docs/design.md §6, binary_synthetic; PLAN Section 7.2.2,
    "Binary: varying skewness"): the first ceil(ratio * d) coordinates are 1 with probability
    ``high``, the others with probability ``low``.

    A product ratio * d within floating-point rounding of an integer counts as that integer
    (0.07 * 100 = 7.000000000000001 gives 7 columns, not 8). true_mean is the probability
    vector q and true_std = sqrt(q (1 - q)). bounds = (0, sqrt(D')) with D' = d rounded up to a
    power of two: every coordinate lies in [0, sqrt(D')], the published runs' universe
    (docs/design.md §5.5, IOME on binary data); PLAN-binary does not use it.
    """
    check_positive_int(n=n)
    check_positive_int(d=d)
    _check_probability(ratio=ratio)
    _check_probability(high=high)
    _check_probability(low=low)
    check_rng(rng)
    q = np.full(d, float(low))
    q[:leading_count(ratio, d)] = high
    return _bernoulli_sample(q, n=n, rng=rng)


def zipf_popularity(
    *, d: int, items_per_row: float, exponent: float = 1.0, max_probability: float = 0.5
) -> np.ndarray:
    """Item probabilities q_j proportional to (j + 1)^(-exponent), j = 0..d-1, capped at
    ``max_probability`` and scaled so that sum(q) = ``items_per_row``, the expected number of
    ones per row (docs/design.md §6, §8: Zipf-like popularity for the Kosarak- and POS-shaped
    stand-ins). Deterministic, non-increasing.

    Water-filling: q_j = min(max_probability, t w_j) with w_j = (j + 1)^(-exponent); the items
    at the cap are a prefix (w is decreasing), so the scale t follows in closed form from the
    number k of capped items, t = (items_per_row - k * max_probability) / sum_{j >= k} w_j, and
    k from the sum reached when item k is just at the cap (non-decreasing in k): one cumulative
    sum and one search, exact up to rounding.
    """
    check_positive_int(d=d)
    check_real(items_per_row=items_per_row)
    if items_per_row <= 0:
        raise ValueError(f"items_per_row must be > 0, got items_per_row={items_per_row!r}")
    check_real(exponent=exponent)
    if exponent < 0:
        raise ValueError(f"exponent must be >= 0, got exponent={exponent!r}")
    _check_probability(max_probability=max_probability)
    if items_per_row > d * max_probability:
        raise ValueError(
            f"items_per_row must be at most d * max_probability = {d * max_probability!r} (every item at the cap),"
            f" got items_per_row={items_per_row!r}"
        )
    weights = np.arange(1, d + 1, dtype=np.float64) ** -float(exponent)
    reachable = np.count_nonzero(weights)  # a huge exponent underflows the tail's weights to 0
    if items_per_row > reachable * max_probability:
        raise ValueError(
            f"exponent={exponent!r} is too large for d={d}: the weights of items past {reachable} underflow"
            f" to 0, so at most {reachable * max_probability!r} items per row are reachable,"
            f" got items_per_row={items_per_row!r}"
        )
    weights = weights[:reachable]
    tail = np.cumsum(weights[::-1])[::-1]  # tail[k] = sum of weights[k:]
    # The sum when item k is exactly at the cap (items before it capped, after it below):
    at_cap = max_probability * (np.arange(reachable) + tail / weights)
    capped = int(np.searchsorted(at_cap, items_per_row, side="left"))
    scale = (items_per_row - capped * max_probability) / tail[capped]
    q = np.zeros(d)
    q[:reachable] = np.minimum(max_probability, scale * weights)
    q[:capped] = max_probability
    return q


def kosarak_shaped(
    *,
    rng: np.random.Generator,
    n: int = 75_462,
    d: int = 27_983,
    items_per_row: float = 55.6,
    exponent: float = 1.0,
    max_probability: float = 0.5,
) -> Sample:
    """A Kosarak-shaped stand-in (docs/design.md §6, kosarak_shaped; docs/design.md §8): n independent rows
    over d items with the Zipf-like popularity of :func:`zipf_popularity`.

    The defaults n, d and items_per_row are the shape the PLAN paper reports for Kosarak
    (Section 6: 75,462 x 27,983, 55.6 items per row). The exponent and the cap are our
    modelling choices: this is a stand-in of the same shape, not the real data, and it claims
    none of the real set's other statistics. true_mean = q, true_std = sqrt(q (1 - q)),
    bounds = (0, sqrt(D')) as in :func:`binary_synthetic`.
    """
    return _zipf_sample(
        rng=rng, n=n, d=d, items_per_row=items_per_row, exponent=exponent, max_probability=max_probability
    )


def pos_shaped(
    *,
    rng: np.random.Generator,
    n: int = 515_596,
    d: int = 1_657,
    items_per_row: float = 6.5,
    exponent: float = 1.0,
    max_probability: float = 0.5,
) -> Sample:
    """A POS-shaped stand-in (docs/design.md §6, pos_shaped; docs/design.md §8): n independent rows over d
    items with the Zipf-like popularity of :func:`zipf_popularity`.

    The defaults n, d and items_per_row are the shape the PLAN paper reports for BMS-POS
    (Section 6: 515,596 x 1,657, 6.5 items per row). The exponent and the cap are our
    modelling choices: this is a stand-in of the same shape, not the real data, and it claims
    none of the real set's other statistics. true_mean = q, true_std = sqrt(q (1 - q)),
    bounds = (0, sqrt(D')) as in :func:`binary_synthetic`.
    """
    return _zipf_sample(
        rng=rng, n=n, d=d, items_per_row=items_per_row, exponent=exponent, max_probability=max_probability
    )


def _zipf_sample(
    *, rng: np.random.Generator, n: int, d: int, items_per_row: float, exponent: float, max_probability: float
) -> Sample:
    check_positive_int(n=n)
    check_rng(rng)
    q = zipf_popularity(d=d, items_per_row=items_per_row, exponent=exponent, max_probability=max_probability)
    return _bernoulli_sample(q, n=n, rng=rng)


def binary_universe(d: int) -> tuple[float, float]:
    """The universe (0, sqrt(D')) of rows of d bits (docs/design.md §5.5): IOME's rotated
    coordinates of a 0/1 row padded to D' = d rounded up to a power of two lie in it."""
    padded = 1 << (int(d) - 1).bit_length()
    return 0.0, math.sqrt(padded)


def _bernoulli_sample(q: np.ndarray, *, n: int, rng: np.random.Generator) -> Sample:
    """Rows drawn from q, with q's mean and standard deviation, in the universe [0, sqrt(D'])."""
    return Sample(
        x=draw_bernoulli_rows(q, n=n, rng=rng),
        true_mean=q,
        true_std=np.sqrt(q * (1.0 - q)),
        bounds=binary_universe(q.size),
    )


def draw_bernoulli_rows(
    q: np.ndarray, *, n: int, rng: np.random.Generator, gap_counts: np.ndarray | None = None
) -> scipy.sparse.csr_matrix:
    """:func:`bernoulli_rows` on checked arguments. ``gap_counts``: the first batch's number of
    gaps per column (>= 1 where q > 0) instead of :func:`_gap_counts`; tests pass small counts
    to exercise the columns that need more draws."""
    if gap_counts is None:
        gap_counts = _gap_counts(q, rows=n)
    columns = np.flatnonzero(q > 0)  # q = 0: no ones, and no gaps to draw
    counts = gap_counts[columns]
    # One running sum over all columns' gaps, in column order; a column's rows are its part of
    # it minus what the columns before used up. The sum increases, so each column's rows do too.
    ends = np.cumsum(_geometric_gaps(np.repeat(_rates(q[columns]), counts), n=n, rng=rng))
    first = np.cumsum(counts) - counts
    before = np.zeros_like(first)
    before[1:] = ends[first[1:] - 1]
    rows = ends - np.repeat(before, counts) - 1
    kept_rows = rows[rows < n]
    # A column's rows below n are a prefix of its part: those with ends <= before + n (the
    # search may run into the next columns' parts when all of the column's rows are below n).
    kept = np.minimum(np.searchsorted(ends, before + n, side="right"), first + counts) - first
    used = ends[first + counts - 1] - before  # one past the column's last row drawn
    # A column whose gaps end before row n - 1 may have more ones: draw them (rare).
    short = np.flatnonzero(used < n)
    if short.size:
        more = [_more_rows(q[columns[c]], start=int(used[c]), n=n, rng=rng) for c in short]
        # Insert each column's further rows after its own: its rows stay sorted and contiguous.
        positions = np.repeat(np.cumsum(kept)[short], [m.size for m in more])
        kept_rows = np.insert(kept_rows, positions, np.concatenate(more))
        kept[short] += [m.size for m in more]
    per_column = np.zeros(q.size, dtype=np.int64)
    per_column[columns] = kept
    indptr = np.concatenate(([0], np.cumsum(per_column)))
    csc = scipy.sparse.csc_matrix((np.ones(kept_rows.size), kept_rows, indptr), shape=(n, q.size))
    return csc.tocsr()  # a counting sort: the column indices of each row come out sorted


def _more_rows(q: float, *, start: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """The rows in start..n-1 holding a column's ones when its last gap drawn ended at row
    start - 1: further Geometric(q) gaps, batch after batch, until they pass row n - 1."""
    rate = _rates(np.array([q]))[0]
    found = []
    while start < n:
        count = int(_gap_counts(np.array([q]), rows=n - start)[0])
        rows = start - 1 + np.cumsum(_geometric_gaps(np.full(count, rate), n=n, rng=rng))
        found.append(rows[rows < n])
        start = int(rows[-1]) + 1
    return np.concatenate(found)


def _gap_counts(q: np.ndarray, *, rows: int) -> np.ndarray:
    """How many gaps to draw first for a column of ``rows`` rows: the mean number of ones
    plus a margin (module constants), and never more than ``rows`` (rows gaps of at least 1
    always pass the last row)."""
    mean = rows * q
    wanted = np.ceil(mean + _MARGIN_SIGMAS * np.sqrt(mean * (1.0 - q)) + _EXTRA_GAPS)
    return np.minimum(wanted, rows).astype(np.int64)


def _rates(q: np.ndarray) -> np.ndarray:
    """-log(1 - q), the rate of the exponential whose floor is a Geometric(q) gap; inf for
    q = 1, where every gap is 1."""
    with np.errstate(divide="ignore"):
        return -np.log1p(-q)


def _geometric_gaps(rates: np.ndarray, *, n: int, rng: np.random.Generator) -> np.ndarray:
    """Geometric gaps on {1, 2, ...} with P(gap > g) = exp(-rate g) = (1 - q)^g, by inversion:
    1 + floor(E / rate) with E standard exponential. Gaps are cut at n + 1, which passes any
    column's last row just as a longer gap would (and keeps tiny q from overflowing int64)."""
    scaled = rng.standard_exponential(rates.size)
    scaled /= rates
    np.minimum(scaled, n, out=scaled)
    return scaled.astype(np.int64) + 1


def leading_count(ratio: float, d: int) -> int:
    """ceil(ratio * d), with a product within rounding of an integer taken as that integer."""
    product = ratio * d
    nearest = round(product)
    return nearest if math.isclose(product, nearest, rel_tol=1e-12, abs_tol=1e-12) else math.ceil(product)


def _check_probabilities(q: object) -> np.ndarray:
    try:
        array = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"q must be a 1-D array of probabilities, got q={q!r}") from None
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"q must be a non-empty 1-D array of probabilities, got an array of shape {array.shape}")
    outside = ~((array >= 0.0) & (array <= 1.0))  # NaN is outside too
    if outside.any():
        j = int(np.flatnonzero(outside)[0])
        raise ValueError(f"q must be in [0, 1], got q[{j}]={float(array[j])!r}")
    return array


def _check_probability(**kwargs: object) -> None:
    ((name, value),) = kwargs.items()
    check_real(**kwargs)
    if not 0 <= value <= 1:
        raise ValueError(f"{name} must be in [0, 1], got {name}={value!r}")
