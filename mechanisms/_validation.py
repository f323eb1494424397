"""Input checks shared by the mechanisms: each raises one ValueError naming the bad value."""
from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse

from ._layout import SharedSample


def as_real(value, name: str, expected: str) -> float:
    """``value`` as a float if it is a real number (not a bool or a string), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {expected}, got {name}={value!r}")
    return float(value)


def check_data(x, *, min_rows: int = 1) -> np.ndarray:
    """Return x (an array or a :class:`SharedSample`) as a 2-D float64 array (no copy if it
    already is one: callers do not modify it)."""
    if isinstance(x, SharedSample):
        x = x.x
    if scipy.sparse.issparse(x):
        raise ValueError(
            f"x is a sparse {type(x).__name__} of shape {x.shape}; this mechanism needs a dense n x d array "
            "(sparse data are never densified here; iome, plan_binary and empirical_mean take sparse input)"
        )
    if isinstance(x, np.ndarray) and x.dtype == object:
        raise ValueError("x must be a numeric array, got dtype=object")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"x must be a numeric array: {error}") from None
    if arr.ndim != 2:
        raise ValueError(f"x must be a 2-D array (n rows, d columns), got x.shape={arr.shape}")
    n, d = arr.shape
    if n < min_rows or d < 1:
        raise ValueError(f"x must have at least {min_rows} row(s) and 1 column, got x.shape={arr.shape}")
    # One reduction instead of a full boolean array; a non-finite sum (NaN, inf, or an
    # overflow of huge finite values) triggers the exact search.
    if not math.isfinite(float(arr.sum())):
        bad = np.argwhere(~np.isfinite(arr))
        if bad.size:
            row, column = bad[0]
            raise ValueError(f"x must be finite, got x[{row}, {column}]={arr[row, column]}")
    return arr


def check_sparse(x, *, binary: bool = False, min_rows: int = 1) -> scipy.sparse.csr_matrix:
    """Return ``x`` (a scipy.sparse matrix or array, or a :class:`SharedSample` holding one) as
    a CSR matrix with float64 data and no duplicate entries, without densifying it. No copy if
    it already is one. ``binary``: every entry must be 0 or 1."""
    if isinstance(x, SharedSample):
        x = x.x
    if not scipy.sparse.issparse(x):
        raise ValueError(
            f"x must be a scipy.sparse matrix (n rows, d columns, e.g. csr_matrix), got {type(x).__name__}"
            + (f" of shape {np.shape(x)}" if hasattr(x, "shape") else "")
        )
    if x.ndim != 2 or x.shape[0] < min_rows or x.shape[1] < 1:
        raise ValueError(f"x must have at least {min_rows} row(s) and 1 column, got x.shape={x.shape}")
    if not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"x must hold real numbers, got dtype={x.dtype}")
    csr = x if x.format == "csr" and x.dtype == np.float64 else scipy.sparse.csr_matrix(x, dtype=np.float64)
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()  # duplicate (row, column) entries add up, as in the matrix they denote
    data = csr.data
    # One reduction first, as in check_data; the exact search only when it is not finite.
    bad = None if math.isfinite(float(data.sum())) else ~np.isfinite(data)
    if bad is not None and bad.any():
        _raise_at(csr, int(np.flatnonzero(bad)[0]), "x must be finite")
    if binary and data.size and not np.all((data == 0.0) | (data == 1.0)):
        _raise_at(csr, int(np.flatnonzero((data != 0.0) & (data != 1.0))[0]), "x must be binary (entries 0 or 1)")
    return csr


def _raise_at(csr, position: int, message: str):
    row = int(np.searchsorted(csr.indptr, position, side="right") - 1)
    raise ValueError(f"{message}, got x[{row}, {csr.indices[position]}]={csr.data[position]}")


def check_bounds(bounds) -> tuple[float, float]:
    """Return (lo, hi) as floats, with lo < hi both finite."""
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair (lo, hi) of numbers, got bounds={bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise ValueError(f"bounds must be finite with lo < hi, got bounds=({lo}, {hi})")
    return lo, hi


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
