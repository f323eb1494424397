"""Input checks shared by the mechanisms: each raises one ValueError naming the bad value.

The ranges below keep every mechanism's arithmetic inside float64 (tests/mechanisms/test_fuzz_inputs.py
drives all of them with random bad and extreme input):

* values and bounds: within [-MAX_MAGNITUDE, MAX_MAGNITUDE] = [-1e100, 1e100]. The mechanisms
  square values and widths (row norms, (hi - lo)^2 of the variance step), scale them (PLAN by up
  to 1e30: delta >= 1e-30 raised to -2 / (p + 2)) and sum them over rows and coordinates: from
  1e100 all of that stays far below 1.8e308, where (-1e155, 1e155) already overflows
  (hi - lo)^2. Data outside ``bounds`` but inside this range are clipped as before. Where a
  budget and the bounds together could still overflow (a noise variance 2 C^2 / rho with C up to
  (hi - lo) sqrt(d), a Laplace scale bound / eps), the mechanism checks that combination at its
  entry, on the request alone.
* budgets (rho, eps): within [MIN_BUDGET, MAX_BUDGET] = [1e-300, 1e300]. Beyond, the splits
  (rho / d per coordinate, shares of shares) become subnormal or zero, so the ledger no longer
  sums to the budget, or sqrt(8 rho) and the noise scales leave float64.
* requested sizes: search steps at most MAX_SEARCH_STEPS, and no work array sized by a request
  alone (noise per search step, rotation signs, a dense vector per column of sparse data) above
  WORK_LIMIT = 2 GiB: such requests fail at once instead of allocating gigabytes.
"""
from __future__ import annotations

import math
import numbers
import sys

import numpy as np
import scipy.sparse

MAX_MAGNITUDE = 1e100
MIN_BUDGET, MAX_BUDGET = 1e-300, 1e300
# A bisection of any float64 interval stops moving within 2099 halvings (from the width
# 2 x 1.8e308 down to the 5e-324 spacing of the subnormals): further steps only spend budget.
MAX_SEARCH_STEPS = 2100
WORK_LIMIT = 2 << 30  # bytes

_REAL_KINDS = "biuf"  # bool, signed and unsigned integers, floats: converted to float64


def as_real(value, name: str, expected: str) -> float:
    """``value`` as a float if it is a real number (not a bool or a string), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {expected}, got {name}={value!r}")
    return float(value)


def check_data(x, *, min_rows: int = 1) -> np.ndarray:
    """Return x (an array; a :class:`~mechanisms.SharedSample`'s through
    :func:`~mechanisms._layout.sample_data`) as a 2-D float64 array (no copy if it already is
    one: callers do not modify it). Bool, integer and float data are converted (bool
    as 0 and 1); complex, object, string and other dtypes are refused, as are non-finite entries
    and entries beyond MAX_MAGNITUDE."""
    if scipy.sparse.issparse(x):
        raise ValueError(
            f"x is a sparse {type(x).__name__} of shape {x.shape}; this mechanism needs a dense n x d array "
            "(sparse data are never densified here; iome, plan_binary and empirical_mean take sparse input)"
        )
    if isinstance(x, np.ndarray) and x.dtype == object:
        raise ValueError("x must be a numeric array, got dtype=object")
    try:
        raw = x if isinstance(x, np.ndarray) else np.asarray(x)
    except (TypeError, ValueError) as error:
        raise ValueError(f"x must be a numeric array: {error}") from None
    if raw.dtype.kind not in _REAL_KINDS:
        first = f" (x[{', '.join('0' * raw.ndim)}]={raw.flat[0].item()!r})" if raw.size and raw.ndim else ""
        raise ValueError(f"x must be a numeric array of real numbers (bool, integer or float), got dtype={raw.dtype}"
                         + first)
    with np.errstate(over="ignore", invalid="ignore"):  # float128 beyond float64: inf, refused below
        arr = np.asarray(raw, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"x must be a 2-D array (n rows, d columns), got x.shape={arr.shape}")
    n, d = arr.shape
    if n < min_rows or d < 1:
        raise ValueError(f"x must have at least {min_rows} row(s) and 1 column, got x.shape={arr.shape}")
    _check_entries(arr, "x")
    return arr


def _sum_of_squares(values: np.ndarray) -> float:
    """sum(values^2) in one pass without a temporary (NaN or inf if an entry is not finite or
    the sum overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if values.ndim == 1 or values.flags.c_contiguous or values.flags.f_contiguous:
            flat = values.ravel(order="K")
            return float(np.dot(flat, flat))
        return float(np.einsum("ij,ij->", values, values))


def _check_entries(values: np.ndarray, name: str, *, position=None) -> None:
    """Every entry finite and within [-MAX_MAGNITUDE, MAX_MAGNITUDE]. One reduction (the sum
    of squares, at most MAX_MAGNITUDE^2 when every entry is small enough) instead of a full
    boolean array; the exact search only when it fails. ``position(i)``: the index shown for
    flat position i (default: the array's own)."""
    total = _sum_of_squares(values)
    if math.isfinite(total) and total <= MAX_MAGNITUDE * MAX_MAGNITUDE:
        return
    where = position or (lambda i: ", ".join(str(int(k)) for k in np.unravel_index(i, values.shape)))
    flat = values.reshape(-1)  # C order, as np.unravel_index reads it (a copy only if it must)
    bad = np.flatnonzero(~np.isfinite(flat))
    if bad.size:
        raise ValueError(f"{name} must be finite, got {name}[{where(bad[0])}]={flat[bad[0]]}")
    top, bottom = int(np.argmax(flat)), int(np.argmin(flat))
    largest = top if flat[top] >= -flat[bottom] else bottom
    if abs(flat[largest]) > MAX_MAGNITUDE:
        raise ValueError(
            f"{name} must lie within [-{MAX_MAGNITUDE:g}, {MAX_MAGNITUDE:g}] (the mechanisms square and sum values: "
            f"beyond, float64 overflows), got {name}[{where(largest)}]={flat[largest]!r}; rescale the data"
        )


def check_sparse(x, *, binary: bool = False, min_rows: int = 1) -> scipy.sparse.csr_matrix:
    """Return ``x`` (a scipy.sparse matrix or array; a :class:`~mechanisms.SharedSample`'s through
    :func:`~mechanisms._layout.sample_data`) as a CSR matrix with float64 data and no duplicate
    entries, without densifying it. No copy if it already is one. ``binary``: every entry must be 0 or 1."""
    if not scipy.sparse.issparse(x):
        raise ValueError(
            f"x must be a scipy.sparse matrix (n rows, d columns, e.g. csr_matrix), got {type(x).__name__}"
            + (f" of shape {np.shape(x)}" if hasattr(x, "shape") else "")
        )
    if x.ndim != 2 or x.shape[0] < min_rows or x.shape[1] < 1:
        raise ValueError(f"x must have at least {min_rows} row(s) and 1 column, got x.shape={x.shape}")
    if x.dtype.kind not in _REAL_KINDS:  # bool (0 and 1), integers and floats
        raise ValueError(f"x must hold real numbers, got dtype={x.dtype}")
    csr = x if x.format == "csr" and x.dtype == np.float64 else scipy.sparse.csr_matrix(x, dtype=np.float64)
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()  # duplicate (row, column) entries add up, as in the matrix they denote
    data = csr.data
    # One reduction first, as in check_data; the exact search only when it fails.
    _check_entries(data, "x", position=lambda i: _sparse_index(csr, int(i)))
    if binary and data.size and not np.all((data == 0.0) | (data == 1.0)):
        _raise_at(csr, int(np.flatnonzero((data != 0.0) & (data != 1.0))[0]), "x must be binary (entries 0 or 1)")
    return csr


def _sparse_index(csr, position: int) -> str:
    """"row, column" of the stored entry at ``position`` of a CSR matrix."""
    row = int(np.searchsorted(csr.indptr, position, side="right") - 1)
    return f"{row}, {csr.indices[position]}"


def _raise_at(csr, position: int, message: str):
    raise ValueError(f"{message}, got x[{_sparse_index(csr, position)}]={csr.data[position]}")


def check_bounds(bounds) -> tuple[float, float]:
    """Return (lo, hi) as floats, with lo < hi both finite and within [-MAX_MAGNITUDE, MAX_MAGNITUDE]."""
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair (lo, hi) of numbers, got bounds={bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise ValueError(f"bounds must be finite with lo < hi, got bounds=({lo}, {hi})")
    if max(-lo, hi) > MAX_MAGNITUDE:
        raise ValueError(
            f"bounds=({lo!r}, {hi!r}): the mechanisms square, scale and sum values up to the bounds (here "
            f"(hi - lo)^2 = {_square(hi / 2.0 - lo / 2.0, factor=4.0)}; float64 ends at 1.8e+308), so bounds must lie "
            f"within [-{MAX_MAGNITUDE:g}, {MAX_MAGNITUDE:g}]: rescale the data"
        )
    return lo, hi


def _square(half: float, *, factor: float) -> str:
    """factor * half^2 printed even where it overflows float64 (as 4e+310)."""
    exponent = 2.0 * math.log10(half) + math.log10(factor)
    whole = math.floor(exponent)
    return f"{10 ** (exponent - whole):.3g}e+{whole}"


def check_budget(value, name: str) -> float:
    """A privacy budget (rho or eps) as a float: finite, > 0 and within [MIN_BUDGET, MAX_BUDGET]."""
    v = as_real(value, name, "a number > 0")
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {name}={value!r}")
    if not MIN_BUDGET <= v <= MAX_BUDGET:
        raise ValueError(
            f"{name}={value!r} is outside [{MIN_BUDGET:g}, {MAX_BUDGET:g}]: its splits (per coordinate and step) or "
            f"its noise scales would leave float64's normal range, and the ledger would no longer sum to {name}"
        )
    return v


def check_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got rng={type(rng).__name__}")
    return rng


def check_choice(value, name: str, allowed) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {sorted(allowed)}, got {name}={value!r}")
    return value


def check_fraction(value, name: str, *, open_low: bool = True, closed_high: bool = True) -> float:
    """A share in (0, 1] (or [0, 1) etc.), e.g. budget shares and quantiles."""
    interval = ("(" if open_low else "[") + "0, 1" + ("]" if closed_high else ")")
    v = as_real(value, name, f"a number in {interval}")
    low_ok = v > 0 if open_low else v >= 0
    high_ok = v <= 1 if closed_high else v < 1
    if not (math.isfinite(v) and low_ok and high_ok):
        raise ValueError(f"{name} must be in {interval}, got {name}={value!r}")
    return v


def check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {name}={value!r}")
    return int(value)


def check_positive(value, name: str) -> float:
    v = as_real(value, name, "a number > 0")
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be finite and > 0, got {name}={value!r}")
    return v


def check_search_steps(value, name: str) -> int:
    """A number of binary-search steps: a positive integer, at most MAX_SEARCH_STEPS."""
    steps = check_positive_int(value, name)
    if steps > MAX_SEARCH_STEPS:
        raise ValueError(
            f"{name} must be at most {MAX_SEARCH_STEPS}, got {name}={value!r}: a bisection of any float64 interval "
            "stops moving within 2099 steps, and further steps only spend budget"
        )
    return steps


def check_work_size(nbytes: int, label: str, what: str) -> None:
    """ValueError beginning with ``label`` (e.g. "search_steps=40") when a work array of
    ``nbytes`` bytes, sized by the request alone (``what`` it holds), exceeds WORK_LIMIT."""
    if nbytes > WORK_LIMIT:
        raise ValueError(
            f"{label} is too large: {what} would take {nbytes / 2**30:.3g} GiB (limit {WORK_LIMIT / 2**30:g} GiB)"
        )


def check_step_budgets(blame: str, **budgets: float) -> None:
    """Every step's budget (a share of the requested budget, per coordinate or per call, as the
    mechanism computes it) must be a normal float64 number: shares so small that their product
    underflows leave a step without budget (a division by zero, or a ledger that no longer sums
    to the budget). ``blame`` names the parameters the budgets come from, e.g.
    "rho=1.0 with topk_share=5e-324"."""
    for step, value in budgets.items():
        if not value >= sys.float_info.min:
            raise ValueError(
                f"{blame}: the budget of the {step.replace('_', ' ')} step, {value!r}, underflows float64 (it must "
                f"be at least {sys.float_info.min:g}); use larger shares or a larger budget"
            )
