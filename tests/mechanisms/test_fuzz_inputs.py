"""Bad inputs, fuzzed (issue deliverable 7).

A property test without hypothesis: seeded numpy generators draw calls of every public
mechanism (everything in ``mechanisms.REGISTRY``, iome on dense and sparse data, and the
quantile functions ``exponential_quantile`` / ``binary_search_quantile``) with random shapes,
dtypes, bounds, budgets, options and values, and check the contract of every call:

* it returns a finite estimate (``np.all(np.isfinite(estimate.mean))``, of the documented
  shape) whose ledger holds: ``estimate.total`` equals the requested budget to 1e-12 relative,
  in the mechanism's unit (``estimate.unit``: "rho" for PLAN, IOME and the variance
  estimators, "eps" for the user-level family; the quantile functions return arrays of one
  value per column, finite and inside ``bounds``; ``empirical_mean`` is the non-private
  baseline and books one release of infinite cost, so its ledger is checked for that), or
* it raises exactly one ``ValueError`` (not a subclass such as numpy's AxisError) whose
  message names a parameter the case made bad (the name as a word, e.g. ``bounds``).

Anything else is a finding: another exception type, a warning (every warning is escalated to
an error, as under ``python -W error``: numpy's overflow and invalid-value RuntimeWarnings,
ComplexWarning...), a NaN or infinite estimate, a broken ledger, or a ValueError for a valid
call or one naming the wrong parameter.

Every generated parameter is one of three kinds:

* valid: the call must succeed;
* bad: the call must raise a ValueError naming a bad (or edge) parameter;
* edge: at the edge of float64 (bounds wider than 1e150 or at the largest finite floats,
  budgets of 1e-300, 1e300 or subnormal, data with entries beyond 1e150 in magnitude, a
  user-level ``bound`` of 1e155 or more...): the call may succeed, or raise a ValueError
  naming one of the edge parameters (e.g. "bounds=(-1e+155, 1e+155): (hi - lo)^2 overflows
  float64; rescale the data").

What is accepted (the decisions this file documents):

* data: any real array-like of bool, integer or floating dtype (float16, float32, int8, uint8,
  int64, bool...), converted to float64 (bool as 0 and 1); lists of numbers too. Rejected:
  object, complex, string and datetime dtypes, non-finite entries, and the wrong number of
  dimensions or no rows or columns (the quantile functions also take 1-D data: one column).
  Dense mechanisms take values outside ``bounds`` (they are clipped) as long as they stay
  within float64's range for the mechanism's squares and sums.
* sparse data (iome, plan_binary, empirical_mean, clipped_mean, the DP libraries' adapters): any scipy.sparse
  format of bool, integer or floating dtype; plan_binary needs entries 0 or 1 and at least 2 columns.
* bounds: a pair of finite real numbers lo < hi (ints, numpy scalars, a list or an array of
  two); ``bound`` of the user-level family: a finite number > 0.
* budgets (rho, eps): a finite real number > 0 (ints and numpy scalars too; not a bool or a
  string).
* user-level samples: in [0, bound] (d = 1) or the simplex {x >= 0, ||x||_1 <= bound}, users
  integer ids 0..L-1 with a sample each.
* requested sizes: search steps, rotations and data widths whose work arrays would exceed
  2 GiB are refused up front (see ``test_absurd_requested_sizes_fail_cleanly``).

A failure prints every failing call with how to rerun it alone:
``python tests/mechanisms/test_fuzz_inputs.py plan_gaussian 17``.
"""
from __future__ import annotations

import contextlib
import math
import re
import resource
import signal
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
import scipy.sparse

import mechanisms
from mechanisms import REGISTRY, binary_search_quantile, exponential_quantile

SEED = 20240607
MAX_SIZE = 64  # n, d <= 64: the calls stay fast
FLOAT_MAX = sys.float_info.max
SUBNORMAL = 5e-324
# The documented limits (mechanisms/_validation.py), restated so that a change must update them here:
MAX_MAGNITUDE = 1e100  # values, bounds, user-level bound, oracle std
MIN_BUDGET, MAX_BUDGET = 1e-300, 1e300  # rho and eps
MAX_NOISE_SCALE = 1e300  # user-level: 4 bound / eps

# cases per mechanism (a few hundred per family: dense zCDP, sparse, user-level, quantiles)
CASES = {
    "plan_gaussian": 300, "plan_noscale": 250, "plan_oracle": 250, "coordinate_median": 250,
    "iome": 300, "empirical_mean": 200, "variance_direct": 200, "variance_general": 200,
    "std_direct": 250, "std_general": 250, "coinpress_mean": 300, "coinpress_oracle": 250,
    "iome_sparse": 250, "plan_binary": 300, "empirical_mean_sparse": 150,
    "laplace": 300, "opt_worst_case": 300, "akmv": 300,
    "exponential_quantile": 300, "binary_search_quantile": 300,
    "opendp_mean": 250, "diffprivlib_mean": 250, "pydp_mean": 250,
    "opendp_mean_sparse": 150, "diffprivlib_mean_sparse": 150, "pydp_mean_sparse": 150,
    "clipped_mean": 300, "clipped_mean_sparse": 150,
    "coinpress_covariance": 500, "empirical_covariance": 150, "coinpress_whitened_mean": 300,
    "empirical_mean_eps": 150,
    "iome_local": 300, "grs_known_var": 300, "grs_unknown_var": 300,
}
DENSE = ("plan_gaussian", "plan_noscale", "plan_oracle", "coordinate_median", "iome", "empirical_mean",
         "variance_direct", "variance_general", "std_direct", "std_general", "coinpress_mean", "coinpress_oracle",
         "opendp_mean", "diffprivlib_mean", "pydp_mean", "clipped_mean", "coinpress_covariance", "empirical_covariance",
         "coinpress_whitened_mean", "empirical_mean_eps", "iome_local", "grs_known_var", "grs_unknown_var")
LOCAL_MODEL = ("iome_local", "grs_known_var", "grs_unknown_var")  # (eps, delta) per user, docs/design.md §5.13
GRS = ("grs_known_var", "grs_unknown_var")
COINPRESS = ("coinpress_mean", "coinpress_oracle")
COVARIANCE = ("coinpress_covariance", "empirical_covariance")  # their release is a d x d matrix
COVARIANCE_FAMILY = ("coinpress_covariance", "coinpress_whitened_mean")  # a covariance bound, centring, steps
SPARSE = ("iome_sparse", "plan_binary", "empirical_mean_sparse",
          "opendp_mean_sparse", "diffprivlib_mean_sparse", "pydp_mean_sparse", "clipped_mean_sparse")
LIBRARY_ADAPTERS = ("opendp_mean", "diffprivlib_mean", "pydp_mean")
USER_LEVEL = ("laplace", "opt_worst_case", "akmv")
QUANTILES = ("exponential_quantile", "binary_search_quantile")
FUNCTIONS = dict(REGISTRY) | {
    "iome_sparse": REGISTRY["iome"],
    "empirical_mean_sparse": REGISTRY["empirical_mean"],
    "clipped_mean_sparse": REGISTRY["clipped_mean"],
    **{f"{name}_sparse": REGISTRY[name] for name in LIBRARY_ADAPTERS},
    "exponential_quantile": exponential_quantile,
    "binary_search_quantile": binary_search_quantile,
}
PLAN_FAMILY = ("plan_gaussian", "plan_noscale", "plan_oracle", "coordinate_median")


# ---------------------------------------------------------------- cases


@dataclass
class Case:
    """One call: ``FUNCTIONS[mechanism](data, **kwargs)`` and what each parameter is."""

    mechanism: str
    index: int
    data: object
    kwargs: dict
    bad: set = field(default_factory=set)
    edge: set = field(default_factory=set)
    notes: list = field(default_factory=list)
    budget: str | None = None  # "rho" or "eps"; None for the quantile functions
    output_shape: tuple | None = None

    def mark(self, name, kind):
        if kind == "bad":
            self.bad.add(name)
        elif kind == "edge":
            self.edge.add(name)

    def describe(self) -> str:
        data_name = "samples" if self.mechanism in USER_LEVEL else "x"
        arguments = [f"{data_name}={describe_data(self.data)}"]
        arguments += [f"{key}={describe_value(value)}" for key, value in self.kwargs.items()]
        function = FUNCTIONS[self.mechanism].__name__
        kinds = f"bad={sorted(self.bad)}, edge={sorted(self.edge)}"
        notes = f"; data: {', '.join(self.notes)}" if self.notes else ""
        return (f"{function}({', '.join(arguments)})  [{kinds}{notes}]\n"
                f"    rerun: python tests/mechanisms/test_fuzz_inputs.py {self.mechanism} {self.index}")


def describe_data(data) -> str:
    if isinstance(data, mechanisms.SharedSample):
        return f"SharedSample({describe_data(data.x)})"
    if scipy.sparse.issparse(data):
        return f"<sparse {data.format} {data.dtype} shape={data.shape} nnz={data.nnz}>"
    if isinstance(data, np.ndarray):
        text = f"<{data.dtype} array shape={data.shape}"
        if data.size and data.dtype.kind in "biuf":
            values = data.astype(np.float64, copy=False) if data.dtype.kind != "f" else data
            finite = values[np.isfinite(values)]
            if finite.size:
                text += f" finite values in [{finite.min():.3g}, {finite.max():.3g}]"
        return text + ">"
    return f"<{type(data).__name__} of {len(data)} rows>" if isinstance(data, list) else repr(data)


def describe_value(value) -> str:
    if isinstance(value, np.random.Generator):
        return "np.random.default_rng(...)"
    if isinstance(value, np.ndarray):
        return f"<{value.dtype} array shape={value.shape}>" if value.size > 8 else f"np.array({value.tolist()!r})"
    return repr(value)


def budget_of(mechanism: str) -> str:
    """The budget a fuzzed mechanism spends: "rho" or "eps" (mechanisms.budget_name; the quantile
    functions take rho)."""
    if mechanism in QUANTILES:
        return "rho"
    return mechanisms.budget_name(mechanism.removesuffix("_sparse"))


def case_rng(mechanism: str, index: int) -> np.random.Generator:
    key = sum(ord(c) * 31 ** i for i, c in enumerate(mechanism)) % 2**32
    return np.random.default_rng([SEED, key, index])


def pick(g, options, weights=None):
    weights = np.asarray(weights if weights is not None else np.ones(len(options)), dtype=float)
    return options[int(g.choice(len(options), p=weights / weights.sum()))]


def small(g, low=1, high=MAX_SIZE):
    """A size in [low, high]: the smallest two often, else log-uniform."""
    if g.random() < 0.15:
        return int(min(high, low + g.integers(0, 2)))
    return int(min(high, np.exp(g.uniform(np.log(low + 1), np.log(high + 1))) // 1))


def draw_budget(g):
    """(value, kind) of a budget rho or eps: valid within [MIN_BUDGET, MAX_BUDGET]."""
    return pick(g, [
        lambda: (float(10 ** g.uniform(-4, 2)), "valid"),
        lambda: (pick(g, [1, 2, np.float32(0.5), np.float64(0.25), np.int64(3)]), "valid"),
        lambda: (pick(g, [MIN_BUDGET, MAX_BUDGET, 1e-12, 1e12, 1e-200, 1e200]), "valid"),
        lambda: (pick(g, [1e-308, SUBNORMAL, 1e-310, 9.9e-301, 1.01e300, 1e305, FLOAT_MAX]), "bad"),
        lambda: (pick(g, [0, 0.0, -1.0, -1e-300, math.nan, math.inf, -math.inf, "1.0", None, True, 1j]), "bad"),
    ], [0.64, 0.12, 0.12, 0.06, 0.06])()


def draw_bounds(g):
    """(bounds, kind); a non-pair or lo >= hi or a non-finite end is bad."""
    def valid():
        kind = g.integers(0, 5)
        if kind == 0:
            r = float(10 ** g.uniform(-3, 6))
            return (-r, r)
        if kind == 1:
            lo = float(g.normal(0, 10 ** g.uniform(-2, 4)))
            return (lo, lo + float(10 ** g.uniform(-3, 4)))
        if kind == 2:
            return pick(g, [(-5, 5), [0, 1], np.array([-1.0, 2.0]), (np.float32(-1), np.int64(3)), (0.0, 1.0)])
        if kind == 3:
            return pick(g, [(1.0, 1.0 + 1e-9), (1e15, 1e15 + 1), (-1e-200, 1e-200), (0.0, 1e-12), (0.0, SUBNORMAL),
                            (0.0, 1e-300), (-MAX_MAGNITUDE, MAX_MAGNITUDE), (9e99, MAX_MAGNITUDE), (0, 1e99)])
        return (-1.0, 1.0)

    return pick(g, [
        lambda: (valid(), "valid"),
        # beyond +-MAX_MAGNITUDE: (hi - lo)^2 and the mechanisms' sums leave float64
        lambda: (pick(g, [(-1e155, 1e155), (-1e308, 1e308), (0.0, FLOAT_MAX), (-FLOAT_MAX, FLOAT_MAX),
                          (1e300, 1.5e300), (-1e200, -1e199), (-1e151, 1e151), (0.0, 1.0000001e100)]), "bad"),
        lambda: (pick(g, [(1.0, 0.0), (2, 2), (math.nan, 1.0), (0.0, math.inf), (-math.inf, math.inf),
                          (0, 1, 2), (0,), 5, ("a", "b"), None, (None, 1.0), (-FLOAT_MAX, math.inf)]), "bad"),
    ], [0.8, 0.12, 0.08])()


def finite_width(bounds):
    """(lo, hi) to draw data from: the bounds if usable, else (-1, 1)."""
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        return -1.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        return -1.0, 1.0
    return lo, hi


def between(lo, hi, u):
    """lo + u (hi - lo) without computing hi - lo (it may overflow)."""
    return lo * (1.0 - u) + hi * u


def draw_values(g, n, d, lo, hi, notes):
    """n x d float64 values for bounds (lo, hi): inside, around, constant, outside, astronomical."""
    mode = pick(g, ["uniform", "normal", "constant", "outside", "integers"], [0.4, 0.2, 0.1, 0.2, 0.1])
    notes.append(mode)
    with np.errstate(all="ignore"):  # bad bounds such as (-1.8e308, 1.8e308) overflow here: bad data then
        return _values(g, mode, n, d, lo, hi)


def _values(g, mode, n, d, lo, hi):
    if mode == "uniform":
        return between(lo, hi, g.random((n, d)))
    if mode == "normal":
        centre = between(lo, hi, g.random())
        spread = (hi / 8 - lo / 8) * float(10 ** g.uniform(-3, 0))
        return centre + spread * g.standard_normal((n, d))
    if mode == "constant":
        return np.full((n, d), between(lo, hi, g.random()))
    if mode == "outside":
        values = between(lo, hi, g.random((n, d)))
        mask = g.random((n, d)) < 0.2
        factor = float(10 ** g.uniform(0, 3))
        values[mask] = np.where(g.random(int(mask.sum())) < 0.5, lo - factor * (hi / 2 - lo / 2),
                                hi + factor * (hi / 2 - lo / 2))
        return values
    return g.integers(-100, 101, (n, d)).astype(float)


def inject(g, values, notes):
    """Maybe put a non-finite or an astronomically large entry somewhere."""
    if values.size == 0:
        return values
    r = g.random()
    if r < 0.05:
        special = pick(g, [math.nan, math.inf, -math.inf])
    elif r < 0.1:
        special = pick(g, [1e200, -1e200, FLOAT_MAX, -FLOAT_MAX, 1e151, 1e300, 1.0000001e100,  # bad
                           MAX_MAGNITUDE, -MAX_MAGNITUDE, 1e99])  # valid
    else:
        return values
    position = tuple(int(g.integers(0, s)) for s in values.shape)
    values = values.copy()
    values[position] = special
    notes.append(f"x[{', '.join(map(str, position))}]={special!r}")
    return values


def cast(g, values, notes):
    """(data, kind of x): values cast to a random dtype or container."""
    dtype = pick(g, ["float64", "float32", "float16", "int64", "int8", "uint8", "bool", "object", "complex128",
                     "str", "datetime64[D]", "list"],
                 [0.55, 0.07, 0.03, 0.06, 0.02, 0.02, 0.05, 0.03, 0.03, 0.02, 0.02, 0.1])
    if dtype in ("object", "complex128", "str", "datetime64[D]"):
        with np.errstate(all="ignore"):
            safe = np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0).clip(-1e9, 1e9)
        data = safe.astype(dtype) if dtype != "datetime64[D]" else safe.astype(np.int64).astype(dtype)
        return data, "bad"
    if dtype == "list":
        return values.tolist(), None
    if dtype == "bool":
        return g.random(values.shape) < 0.5, None
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        with np.errstate(all="ignore"):
            safe = np.nan_to_num(values, nan=0.0, posinf=info.max, neginf=info.min)
            return np.clip(np.round(safe), info.min, info.max).astype(dtype), None
    with np.errstate(all="ignore"):
        return values.astype(dtype), None


def classify_values(data):
    """Kind of x from its float64 values: bad if any is not finite or beyond MAX_MAGNITUDE."""
    arr = np.asarray(data, dtype=np.float64)
    if arr.size and not (np.all(np.isfinite(arr)) and np.max(np.abs(arr)) <= MAX_MAGNITUDE):
        return "bad"
    return "valid"


def dense_data(g, case, bounds, *, quantile_function=False):
    """Data for the dense mechanisms and the quantile functions, marked in ``case``."""
    shape_kind = pick(g, ["regular", "one_row", "one_column", "no_rows", "no_columns", "1d", "3d", "scalar"],
                      [0.72, 0.08, 0.08, 0.025, 0.025, 0.03, 0.03, 0.01])
    n, d = small(g), small(g)
    if shape_kind == "one_row":
        n = 1
    elif shape_kind == "one_column":
        d = 1
    elif shape_kind == "no_rows":
        n = 0
    elif shape_kind == "no_columns":
        d = 0
    lo, hi = finite_width(bounds)
    values = inject(g, draw_values(g, n, d, lo, hi, case.notes), case.notes)
    if shape_kind == "1d":
        values = values[:, 0]
    elif shape_kind == "3d":
        values = np.stack([values, values])
    elif shape_kind == "scalar":
        values = values.reshape(-1)[:1].reshape(())
    data, kind = cast(g, values, case.notes)
    if kind is None:
        kind = classify_values(data)
    ndims = (1, 2) if quantile_function else (2,)
    shape = np.shape(data)
    if len(shape) not in ndims or 0 in shape:
        kind = "bad"
    case.mark("x", kind)
    columns = 1 if len(shape) == 1 else (shape[1] if len(shape) == 2 else 0)
    rows = shape[0] if shape else 0
    return data, rows, columns


def draw_rng(g):
    return pick(g, [lambda: (np.random.default_rng(int(g.integers(2**31))), "valid"),
                    lambda: (pick(g, [np.random.RandomState(0), 0, None]), "bad")], [0.97, 0.03])()


def add(case, name, value_kind):
    value, kind = value_kind
    case.kwargs[name] = value
    case.mark(name, kind)


SHARE = {"valid": [0.1, 0.25, 0.5, 0.9], "edge": [1e-300, SUBNORMAL, 1e-12, 1.0 - 2**-53],
         "bad": [0, 1.5, -0.25, math.nan, "half", None]}
OPEN_SHARE = {**SHARE, "bad": SHARE["bad"] + [1]}  # shares in (0, 1): 1 leaves nothing for a later step
POSITIVE = {"valid": [0.5, 1.0, 2.0, 4.0], "edge": [1e-300, 1e300, 1e-12, 1e12], "bad": [0, -1.0, math.nan, math.inf]}
STEPS = {"valid": [1, 2, 10, 20, 64, 2000, 2100], "bad": [0, -1, 2.5, True, 2101, 10**9]}  # at most 2100
COINPRESS_OPTIONS = {  # CoinPress: at most 1000 steps (mechanisms.coinpress.MAX_STEPS), beta at least 1e-200
    "steps": {"valid": [1, 2, 3, 10, 1000], "bad": [0, -1, 2.5, True, 1001]},
    "beta": {"valid": [0.01, 0.5, 1e-12, 1e-200], "edge": [1.0 - 2**-53], "bad": [0, 1, 1e-201, SUBNORMAL, math.nan]},
    "clip": {"valid": ["code", "paper"], "bad": ["Code", None]},
}
COVARIANCE_OPTIONS = {  # CoinPress's covariance (docs/design.md §5.12): steps and beta as for its mean
    "steps": COINPRESS_OPTIONS["steps"],
    "beta": {"valid": [0.1, 0.5, 1e-12, 1e-200], "edge": [1.0 - 2**-53], "bad": [0, 1, 1e-201, SUBNORMAL, math.nan]},
    "psd": {"valid": ["clip", "absolute"], "bad": ["Clip", None]},
    "update": {"valid": ["consistent", "code"], "bad": ["left", None]},
    "centring": {"valid": ["prior_centre", "pairs"], "bad": ["mean", None]},
}
OPTIONS = {
    "plan_gaussian": {"p": POSITIVE, "pre_share": OPEN_SHARE, "centre_share": OPEN_SHARE, "topk_share": OPEN_SHARE,
                      "groups": {"valid": [1, 2], "bad": [0, 1.5, True]}, "max_std_distance": POSITIVE,
                      "beta": OPEN_SHARE, "search_steps": STEPS,
                      "wilson_hilferty": {"valid": [False]}, "regularise": {"valid": [False]}},
    "plan_noscale": {"pre_share": OPEN_SHARE, "topk_share": OPEN_SHARE, "beta": OPEN_SHARE, "search_steps": STEPS},
    "plan_oracle": {"p": POSITIVE, "pre_share": OPEN_SHARE, "centre_share": SHARE, "topk_share": OPEN_SHARE,
                    "max_std_distance": POSITIVE, "beta": OPEN_SHARE, "search_steps": STEPS,
                    "regularise": {"valid": [False]}},
    "coordinate_median": {"budget_share": SHARE, "search_steps": STEPS},
    "iome": {"rotations": {"valid": [1, 2, 5], "bad": [0, True, 1.5]}, "search_steps": STEPS,
             "centre_share": OPEN_SHARE, "clip_share": OPEN_SHARE, "offset_factor": POSITIVE},
    "variance_direct": {"quantile": {"valid": [0.6, 0.841, 0.99], "edge": [0.5 + 2**-52, 1.0 - 2**-53],
                                     "bad": [0.5, 1.0, 0.2, math.nan, "x"]}},
    "variance_general": {"groups": {"valid": [1, 2, 3], "bad": [0, -1, 1.5]}},
    # accounting "published" books more than rho by design (its true cost): not a fuzz target
    "std_direct": {"quantile": {"valid": [0.6, 0.841, 0.99], "edge": [0.5 + 2**-52, 1.0 - 2**-53],
                                "bad": [0.5, 1.0, 0.2, math.nan, "x"]},
                   "budget_share": SHARE, "accounting": {"valid": ["exact"], "bad": ["Published", None]}},
    "std_general": {"groups": {"valid": [1, 2, 3], "bad": [0, -1, 1.5]}, "budget_share": SHARE,
                    "accounting": {"valid": ["exact"], "bad": ["Published", None]}},
    "iome_sparse": {"rotations": {"valid": [1, 2, 5], "bad": [0]}, "centre_share": OPEN_SHARE,
                    "clip_share": OPEN_SHARE, "offset_factor": POSITIVE},
    "plan_binary": {"variant": {"valid": ["paper", "oracle", "noscale"], "bad": ["Paper", None]},
                    "variance_share": OPEN_SHARE, "search_steps": STEPS},
    "coinpress_mean": {**COINPRESS_OPTIONS,
                       "covariance": {"valid": ["sigma_max", "identity"], "bad": ["oracle", None]}},
    "coinpress_oracle": COINPRESS_OPTIONS,
    # the exact threshold books a non-private release (an infinite ledger): tests/mechanisms/test_clipped_mean.py
    "clipped_mean": {"clip_share": OPEN_SHARE, "search_steps": STEPS, "offset_factor": POSITIVE,
                     "threshold": {"valid": ["private"], "bad": ["Exact", None]},
                     "quantile": {"valid": [0, 0.5, 0.95, 1, None], "bad": [-0.1, 1.5, math.nan, "median"]}},
    "coinpress_covariance": COVARIANCE_OPTIONS,
    "coinpress_whitened_mean": {
        "covariance_steps": COVARIANCE_OPTIONS["steps"], "mean_steps": COINPRESS_OPTIONS["steps"],
        "covariance_share": OPEN_SHARE, "covariance_beta": COVARIANCE_OPTIONS["beta"],
        "beta": COINPRESS_OPTIONS["beta"], "clip": COINPRESS_OPTIONS["clip"], "psd": COVARIANCE_OPTIONS["psd"],
        "update": COVARIANCE_OPTIONS["update"], "centring": COVARIANCE_OPTIONS["centring"],
        "prior_mapping": {"valid": ["whitened", "unchanged"], "bad": ["as_is", None]}},
}
DELTA = {"valid": [1e-7, 1e-3, 0.5], "edge": [1e-300], "bad": [0.0, 1.0, -1e-7, math.nan, "x", None]}
OPTIONS.update({
    # the trees hold 2^(T+1) - 2 nodes per coordinate: T = 40 and more are refused naming search_steps
    "iome_local": {"delta": DELTA, "rotations": {"valid": [1, 2, 5], "bad": [0, True, 1.5]},
                   "search_steps": {"valid": [1, 2, 10, 16], "edge": [40, 2000], "bad": [0, -1, 2.5, True, 2101]},
                   "centre_share": OPEN_SHARE, "clip_share": OPEN_SHARE},
    "grs_known_var": {"delta": DELTA, "beta": OPEN_SHARE, "locate_share": OPEN_SHARE},
    "grs_unknown_var": {"delta": DELTA, "beta": OPEN_SHARE, "sigma_min": POSITIVE, "sigma_max": POSITIVE,
                        "median_share": OPEN_SHARE, "spread_share": OPEN_SHARE},
})
OPTIONS["clipped_mean_sparse"] = OPTIONS["clipped_mean"]
LIBRARY_OPTIONS = {
    "bounds_from": {"valid": ["given", "quantiles"], "bad": ["Given", None, "data"]},
    "quantile_share": OPEN_SHARE,
    "quantile_levels": {"valid": [(0.05, 0.95), (0.25, 0.75), [0.1, 0.9]], "edge": [(1e-300, 1.0 - 2**-53)],
                        "bad": [(0.95, 0.05), (0.0, 0.5), (0.5, 1.0), (0.5,), "ab", None]},
    "dense_limit_bytes": {"valid": [1 << 20, 256 << 20], "bad": [0, -1, 2.5, True]},
}
for _name in LIBRARY_ADAPTERS:
    OPTIONS[_name] = OPTIONS[f"{_name}_sparse"] = dict(LIBRARY_OPTIONS)
OPTIONS["opendp_mean"]["quantile_candidates"] = {"valid": [2, 16, 1024], "bad": [1, 0, 2.5, True]}


def draw_options(g, case):
    """Each option of the mechanism, with probability 0.1: a valid, edge or bad value."""
    for name, values in OPTIONS.get(case.mechanism, {}).items():
        if g.random() < 0.1:
            kinds = [kind for kind in ("valid", "edge", "bad") if values.get(kind)]
            kind = pick(g, kinds, [{"valid": 0.5, "edge": 0.3, "bad": 0.2}[k] for k in kinds])
            add(case, name, (pick(g, values[kind]), kind))


def vary_layout(g, case):
    """Valid dense data in another layout: Fortran order, a strided view, a SharedSample."""
    if "x" in case.bad or not isinstance(case.data, np.ndarray) or case.data.ndim != 2:
        return
    r = g.random()
    if r < 0.08:
        case.data = np.asfortranarray(case.data)
        case.notes.append("Fortran order")
    elif r < 0.16:
        doubled = np.repeat(case.data, 2, axis=1)
        case.data = doubled[:, ::2]
        case.notes.append("strided view")
    elif r < 0.26 and case.mechanism not in QUANTILES:
        case.data = mechanisms.SharedSample(case.data)
        case.notes.append("SharedSample")


def make_dense(mechanism, index):
    g = case_rng(mechanism, index)
    case = Case(mechanism, index, None, {}, budget=budget_of(mechanism))
    bounds, bounds_kind = draw_bounds(g)
    case.data, n, d = dense_data(g, case, bounds)
    add(case, case.budget, draw_budget(g))
    add(case, "bounds", (bounds, bounds_kind))
    add(case, "rng", draw_rng(g))
    case.output_shape = (d,)
    if mechanism in PLAN_FAMILY and g.random() < 0.4:
        case.kwargs["quantile"] = "binary_search"
    if mechanism in ("plan_gaussian", "variance_general", "std_general") and n == 1:
        case.mark("x", "bad")  # the variance step pairs rows: n >= 2
    if mechanism == "plan_oracle":
        std = np.abs(g.standard_normal(max(d, 1))) * float(10 ** g.uniform(-3, 3))
        r = g.random()
        if r < 0.05:
            add(case, "std", (std[:-1] if std.size > 1 else np.ones((1, 1)), "bad"))
        elif r < 0.1:
            std[0] = pick(g, [-1.0, math.nan, math.inf])
            add(case, "std", (std, "bad"))
        elif r < 0.15:
            std[0] = pick(g, [1e200, FLOAT_MAX, 1.0000001e100])
            add(case, "std", (std, "bad"))
        elif r < 0.18:
            std[0] = pick(g, [MAX_MAGNITUDE, 1e-300, SUBNORMAL, 0.0])
            add(case, "std", (std, "valid"))
        elif r < 0.2:
            add(case, "std", (np.zeros(max(d, 1)), "valid"))
        else:
            add(case, "std", (std, "valid"))
    draw_options(g, case)
    if mechanism in COINPRESS:
        coinpress_arguments(g, case, bounds, d)
    if mechanism in COVARIANCE:
        case.output_shape = (d, d)
    if mechanism in COVARIANCE_FAMILY:
        covariance_arguments(g, case, bounds, n, d)
    if mechanism in ("plan_gaussian", "plan_noscale", "plan_oracle"):
        # Step 6's noise variance 2 C^2 / rho_3 (C up to (hi - lo) sqrt(d) or a function of the std)
        # and the rescaled estimate must stay finite: tiny budgets with wide bounds (or extreme p,
        # max_std_distance, std) may be refused, naming rho and bounds.
        lo, hi = finite_width(bounds)
        budget = case.kwargs["rho"]
        tiny = "rho" not in case.bad and float(budget) < 1e-100
        if tiny or max(-lo, hi) > 1e50 or case.edge & {"p", "max_std_distance", "beta"} or (
                mechanism == "plan_oracle" and np.max(case.kwargs["std"], initial=0.0) > 1e50):
            case.mark("rho", "edge")
            case.mark("bounds", "edge")
    groups = case.kwargs.get("groups", 1)
    if mechanism == "plan_gaussian" and "groups" not in case.bad and n < 2 * groups:
        case.mark("x", "bad")  # the variance step needs 2 groups rows
    if mechanism in ("variance_general", "std_general") and "groups" not in case.bad and n < 2 * groups:
        case.mark("x", "bad")
    if mechanism == "std_general":
        lo, hi = finite_width(bounds)
        if not (hi > 0 and hi * hi >= sys.float_info.min):  # the median's universe [0, hi^2]
            case.mark("bounds", "bad")
    if mechanism in LIBRARY_ADAPTERS:
        mark_library_limits(case)
    if mechanism == "clipped_mean":
        mark_norm_universe(case)
    if mechanism in LOCAL_MODEL:
        local_arguments(g, case, bounds, n, d)
    vary_layout(g, case)
    return case


def local_arguments(g, case, bounds, n, d):
    """The local model's public knowledge and limits (docs/design.md §5.13). KnownVar is given
    sigma (max_std, required); GRS's range may come from a prior ball. Marked as edge (the call may
    be refused naming them): budgets that leave the split per coordinate below float64's normal
    range or the noise beyond it, tiny deltas, GRS's Gaussian step at eps_j >= 1 (naming eps) and
    group sizes GRS's user split leaves empty (naming n, as x's shape)."""
    lo, hi = finite_width(bounds)
    if case.mechanism == "grs_known_var":
        add(case, "max_std", (None, "bad") if g.random() < 0.05 else draw_scale(g))
    if case.mechanism in GRS:
        draw_prior_ball(g, case, lo, hi, d)
        if case.budget not in case.bad and g.random() < 0.6:
            case.kwargs[case.budget] = float(10 ** g.uniform(-3, 0))  # below 1: every eps_j < 1, as GRS needs
    budget, delta = case.kwargs[case.budget], case.kwargs.get("delta", 1e-7)
    tiny = case.budget not in case.bad and float(budget) < 1e-100
    if tiny or "delta" in case.edge:
        case.mark(case.budget, "edge")
        case.mark("delta", "edge")
    if case.mechanism == "iome_local":
        if hi / 2 - lo / 2 < 1e-250:
            case.mark("bounds", "edge")  # the trees' cells (hi - lo) / (sqrt(D) 2^T) must be normal numbers
        shares = [case.kwargs.get(name, 0.25) for name in ("centre_share", "clip_share")]
        if any(name in case.edge for name in ("centre_share", "clip_share")) or min(
                share for share in shares if isinstance(share, float)) < 1e-100:
            case.mark(case.budget, "edge")
        return
    if case.bad & {case.budget, "delta", "bounds", "prior_ball", "x"}:
        return
    step_eps = mechanisms.per_step_budget(float(budget), float(delta), steps=max(d, 1))[0]
    if step_eps >= 1.0 or float(budget) > 1e100:
        case.mark(case.budget, "edge")  # GRS's Gaussian mechanism needs eps_j < 1
    # the range, the bins (KnownVar: 2R / sigma of them) and the noise may leave float64: refused naming them
    for name in (case.budget, "bounds", "prior_ball", "max_std", "sigma_min", "sigma_max", "delta"):
        if name in case.kwargs and name not in case.bad and (tiny or max(-lo, hi) > 1e50 or name in case.edge):
            case.mark(name, "edge")
    ball = case.kwargs.get("prior_ball")
    radius = ball[1] if ball is not None else hi / 2 - lo / 2
    if case.mechanism == "grs_known_var" and "max_std" not in case.bad:
        if 2.0 * radius / float(case.kwargs["max_std"]) + 1.0 > 2**31 / (24.0 * max(d, 1)):
            case.mark("max_std", "edge")  # d x 2R / sigma bin counts beyond 2 GiB: refused naming max_std
            case.mark("bounds", "edge")
            case.mark("prior_ball", "edge")
    if case.mechanism == "grs_known_var":
        share = case.kwargs.get("locate_share", 0.5)
        if "locate_share" in case.edge | case.bad:
            case.mark("x", "edge")  # a share of 1e-300 leaves the locating group empty
            return
        needed = next(users for users in range(1, 10**4) if 1 <= math.floor(share * users) < users)
        regular = isinstance(case.data, np.ndarray) and case.data.ndim == 2 and "x" not in case.bad and n > 0
        if n < needed and regular and g.random() < 0.8:
            case.data = np.tile(case.data, (-(-needed // n), 1))  # the too-few refusal is drawn in the rest
            n = case.data.shape[0]
        if not 1 <= math.floor(share * n) < n:
            case.mark("x", "bad")  # a share of the users locates the bin, the others estimate the mean
    if case.mechanism == "grs_unknown_var":
        unknown_var_groups(g, case, radius, n)


def unknown_var_groups(g, case, radius, n):
    """UnkVar's limits (GRS Algorithm 3): sigma_min < sigma_max (R by default), and a group of users
    for each of T_med = ceil(log2(8 R / sigma_min)) and T_sd = ceil(log2((8 R + 4 sigma_max) / sigma_min))
    rounds from the two shares of the users, the rest for the mean. Mostly enough users are drawn."""
    options = {name: case.kwargs.get(name, default) for name, default in
               (("sigma_min", 0.1), ("sigma_max", radius), ("median_share", 0.25), ("spread_share", 0.25))}
    if set(options) & (case.bad | case.edge) or not radius > 0:
        for name in ("x", "bounds", "prior_ball", *options):
            if name in case.kwargs and name not in case.bad:
                case.mark(name, "edge")
        return
    if not options["sigma_min"] < options["sigma_max"]:
        for name in ("sigma_min", "sigma_max", "bounds", "prior_ball"):
            if name in case.kwargs:
                case.mark(name, "edge")
        return
    if not options["median_share"] + options["spread_share"] < 1:
        case.mark("median_share" if "median_share" in case.kwargs else "spread_share", "bad")
        return
    with np.errstate(over="ignore"):
        rounds = [max(1, math.ceil(math.log2(8.0 * radius / options["sigma_min"]))),
                  max(1, math.ceil(math.log2((8.0 * radius + 4.0 * options["sigma_max"]) / options["sigma_min"])))]
    shares = [options["median_share"], options["spread_share"]]

    def enough(users):
        per_round = [math.floor(share * users) // count for share, count in zip(shares, rounds)]
        return min(per_round) >= 1 and users - sum(p * c for p, c in zip(per_round, rounds)) >= 1

    regular = isinstance(case.data, np.ndarray) and case.data.ndim == 2 and "x" not in case.bad and n > 0
    if not enough(n) and regular and max(rounds) < 200 and g.random() < 0.95:
        needed = next(users for users in range(n, 10**6) if enough(users))
        case.data = np.tile(case.data, (-(-needed // n), 1))  # the too-few refusal is drawn in the rest
        n = case.data.shape[0]
    if not enough(n):
        case.mark("x", "edge")


def mark_norm_universe(case):
    """clipped_mean searches its threshold, a norm, over [0, hi]: bounds with hi <= 0 are bad."""
    _, hi = finite_width(case.kwargs["bounds"])
    if "bounds" not in case.bad and not hi > 0:
        case.mark("bounds", "bad")


def mark_library_limits(case):
    """The DP libraries' own float64 limits (docs/design.md §5.10): python-dp refuses epsilons below
    about 1e-15 and its Percentile returns NaN far from 0 on a narrow range, OpenDP refuses some
    scales and ranges, diffprivlib's quantile fails on tied data at a large eps and python-dp's
    Percentile is refused above epsilon 50 (seconds per call on ties). The adapters turn each into a
    ValueError naming rho or bounds: budgets outside [1e-20, 100] and ranges narrower than 1e-100,
    beyond +-1e50 or 1e9 times farther from 0 than wide are edge parameters for them."""
    budget = case.kwargs["rho"]
    if "rho" not in case.bad and not 1e-20 <= float(budget) <= 100.0:
        case.mark("rho", "edge")
    lo, hi = finite_width(case.kwargs["bounds"])
    width = hi / 2 - lo / 2
    if "bounds" not in case.bad and (width < 1e-100 or max(-lo, hi) > 1e50 or max(-lo, hi) > 1e9 * width):
        case.mark("bounds", "edge")


def draw_scale(g):
    """(value, kind) of a standard deviation: valid, extreme (valid but may be refused) or bad."""
    return pick(g, [
        lambda: (float(10 ** g.uniform(-3, 3)), "valid"),
        lambda: (pick(g, [1e-300, SUBNORMAL, 1e-60, 1e60, MAX_MAGNITUDE]), "edge"),
        lambda: (pick(g, [0.0, -1.0, math.nan, math.inf, 1.0000001e100, "1", True]), "bad"),
    ], [0.8, 0.1, 0.1])()


def draw_prior_ball(g, case, lo, hi, d):
    """Sometimes a prior ball (centre, radius) for the CoinPress entries: a valid one in a quarter of
    the cases, a malformed one in a twentieth."""
    r = g.random()
    if r < 0.25:
        centre = pick(g, [0.0, between(lo, hi, 0.5), np.full(max(d, 1), between(lo, hi, g.random()))])
        add(case, "prior_ball", ((centre, float(10 ** g.uniform(-2, 4))), "valid"))
    elif r < 0.3:
        add(case, "prior_ball", (pick(g, [(0.0,), (0.0, -1.0), (0.0, math.inf), ("a", 1.0), (0.0, 1e101),
                                          (np.zeros(max(d, 1) + 1), 1.0), 5.0]), "bad"))


def coinpress_arguments(g, case, bounds, d):
    """CoinPress's public knowledge (coinpress_mean: max_std, which its default covariance needs;
    coinpress_oracle: std) and sometimes a prior ball; marks what may be refused: a ball that leaves
    float64's range once divided by the covariance scale, or whose noise would (naming rho)."""
    lo, hi = finite_width(bounds)
    if case.mechanism == "coinpress_mean":
        if g.random() < 0.1:
            add(case, "max_std", (None, "valid" if case.kwargs.get("covariance") == "identity" else "bad"))
        else:
            add(case, "max_std", draw_scale(g))
        scale = case.kwargs["max_std"] if case.kwargs.get("covariance") != "identity" else 1.0
        scale_name = "max_std"
    else:
        std = np.abs(g.standard_normal(max(d, 1))) * float(10 ** g.uniform(-3, 3)) + 1e-3
        r = g.random()
        if r < 0.05:
            add(case, "std", (std[:-1] if std.size > 1 else np.ones((1, 1)), "bad"))
        elif r < 0.1:
            std[0] = pick(g, [0.0, -1.0, math.nan, math.inf, 1.0000001e100])
            add(case, "std", (std, "bad"))
        elif r < 0.15:
            std[0] = pick(g, [1e-300, SUBNORMAL, MAX_MAGNITUDE])
            add(case, "std", (std, "edge"))
        else:
            add(case, "std", (std, "valid"))
        scale, scale_name = case.kwargs["std"], "std"
    draw_prior_ball(g, case, lo, hi, d)
    if case.kwargs.get("steps") == 1000 and "steps" not in case.bad:
        # so many steps split rho so thin that at small n every radius grows until float64 ends,
        # refused naming rho and steps
        case.mark("rho", "edge")
        case.mark("steps", "edge")
    if scale_name in case.bad or scale is None:
        return  # refused, or not used (the identity covariance)
    smallest = float(np.min(scale))
    with np.errstate(over="ignore"):
        if "x" not in case.bad:
            data = np.asarray(case.data, dtype=np.float64)
            if data.size and np.max(np.abs(data)) / smallest > 1e90:
                case.mark(scale_name, "edge")  # the data divided by the scale may leave [-1e100, 1e100]
        ball = case.kwargs.get("prior_ball")
        radius = ball[1] if "prior_ball" not in case.bad and ball is not None else (hi / 2 - lo / 2) * math.sqrt(
            max(d, 1))
        wide = np.float64(radius) / smallest > 1e50
    tiny = "rho" not in case.bad and float(case.kwargs["rho"]) < 1e-100
    if wide or tiny:
        # divided by the scale the ball may leave [-1e100, 1e100] (naming the scale, the bounds or the
        # prior ball), or its noise float64 (naming rho)
        for name in ("rho", "bounds", scale_name, "prior_ball"):
            if name in case.kwargs and name not in case.bad:
                case.mark(name, "edge")


COVARIANCE_BOUNDS = {"valid": [1.0, 31.622776601683793, np.float32(2.0), "prior_radius", "max_std", MAX_MAGNITUDE],
                     "edge": [1e-300, SUBNORMAL, 1e-150],
                     "bad": [0, -1.0, math.nan, math.inf, 1.0000001e100, "median", None, True]}


def covariance_arguments(g, case, bounds, n, d):
    """The public knowledge of coinpress_covariance and coinpress_whitened_mean (docs/design.md
    §5.12): the covariance bound (a number, "prior_radius" or "max_std"; the covariance's is required),
    max_std, a prior ball and, for the covariance, a centre; marks what may be refused: a bound whose
    value leaves [1e-100, 1e100], data the bound would whiten beyond 1e100, noise whose growth over the
    steps could leave float64 (naming rho), and the whitened mean's prior radius beyond 1e100."""
    lo, hi = finite_width(bounds)
    covariance = case.mechanism == "coinpress_covariance"
    if covariance or g.random() < 0.5:
        kind = pick(g, ["valid", "edge", "bad"], [0.8, 0.08, 0.12])
        if kind == "valid" and g.random() < 0.4:
            add(case, "covariance_bound", (float(10 ** g.uniform(-3, 3)), "valid"))
        else:
            add(case, "covariance_bound", (pick(g, COVARIANCE_BOUNDS[kind]), kind))
    if g.random() < 0.3:
        std, kind = draw_scale(g)
        # an extreme sigma_max is checked (finite, > 0, at most 1e100) and refused only where the bound
        # u = sigma_max^2 it gives is used (below)
        add(case, "max_std", (std, "valid" if kind == "edge" else kind))
    draw_prior_ball(g, case, lo, hi, d)
    centring = case.kwargs.get("centring", "prior_centre")
    if covariance and g.random() < 0.2:
        add(case, "centre", pick(g, [
            lambda: (pick(g, [0.0, between(lo, hi, g.random()), np.full(max(d, 1), 1.5)]), "valid"),
            lambda: (pick(g, [[1.0] * (max(d, 1) + 1), math.nan, "a", 1e101]), "bad"),
        ], [0.8, 0.2])())
        if centring == "pairs":
            case.mark("centre", "bad")  # a centre applies to "prior_centre" only
    if centring == "pairs" and n < 2:
        case.mark("centring", "bad")  # pairs need two rows
    # The values the float64 checks see, where the arguments are usable.
    ball = case.kwargs.get("prior_ball")
    ball_ok = ball is not None and "prior_ball" not in case.bad
    radius = ball[1] if ball_ok else ((hi / 2 - lo / 2) * math.sqrt(max(d, 1)) if "bounds" not in case.bad else None)
    centre = ball[0] if ball_ok else (lo / 2 + hi / 2 if "bounds" not in case.bad else None)
    if covariance and "centre" in case.kwargs and "centre" not in case.bad:
        centre = case.kwargs["centre"]
    requested = case.kwargs.get("covariance_bound", "prior_radius")
    bound = None
    if "covariance_bound" not in case.bad and "covariance_bound" not in case.edge:
        if requested == "prior_radius":
            bound = None if radius is None else radius / math.sqrt(max(d, 1))
        elif requested == "max_std":
            std = case.kwargs.get("max_std")
            if std is None:
                case.mark("max_std", "bad")  # needed, and not given
            elif "max_std" not in case.bad:
                bound = float(std) ** 2
        else:
            bound = float(requested)
    if bound is not None and not 1e-100 <= bound <= 1e100:
        case.mark("covariance_bound", "edge")
        bound = None
    steps = case.kwargs.get("steps" if covariance else "covariance_steps", 3 if covariance else 1)
    budget = case.kwargs["rho"]
    if "rho" not in case.bad and (float(budget) < 1e-12 or not isinstance(steps, int) or steps > 3
                                  or case.edge & {"covariance_share", "beta", "covariance_beta"}
                                  or case.kwargs.get("mean_steps") == 1000):
        case.mark("rho", "edge")  # noise that could grow beyond float64 over the steps: refused naming rho
    if bound is None or "x" in case.bad or not isinstance(steps, int) or steps < 1 or centre is None:
        return
    rows = max(n // 2 if centring == "pairs" else n, 1)
    eta = (2 * math.sqrt(max(d, 1) / rows) + max(d, 1) / rows) / 2
    decay = -math.log10(min(eta, 1.0))
    with np.errstate(all="ignore"):
        largest = float(np.max(np.abs(np.asarray(case.data, dtype=np.float64)), initial=0.0))
        largest += float(np.max(np.abs(np.asarray(centre, dtype=np.float64))))
    scale = 2 * math.log10(largest) + math.log10(max(d, 1)) if largest > 0 else -math.inf
    if scale - math.log10(bound) + steps * decay > 190:  # the rows whitened by the bound (and the mean's S)
        case.mark("covariance_bound", "edge")
    if not covariance and radius and 2 * math.log10(radius) - math.log10(bound) + steps * decay > 190:
        for name in ("prior_ball", "bounds"):  # the whitened prior radius
            if name not in case.bad:
                case.mark(name, "edge")


def make_sparse(mechanism, index):
    g = case_rng(mechanism, index)
    case = Case(mechanism, index, None, {}, budget="rho")
    n, d = small(g), small(g)
    r = g.random()
    if r < 0.04:
        n = 0
    elif r < 0.08:
        d = 0 if mechanism != "plan_binary" else pick(g, [0, 1])
    elif r < 0.15:
        n = 1
    density = float(g.uniform(0, 0.5))
    mask = g.random((n, d)) < density
    if mechanism == "plan_binary" or g.random() < 0.5:
        values = mask.astype(float)
        case.notes.append("binary")
    else:
        values = np.where(mask, g.normal(0, 10 ** g.uniform(-2, 3), (n, d)), 0.0)
    values = inject(g, values, case.notes) if g.random() < 0.5 else values
    if mechanism == "plan_binary" and g.random() < 0.1 and values.size:
        values = values.copy()
        values.flat[int(g.integers(values.size))] = pick(g, [2.0, -1.0, 0.5])
        case.notes.append("not binary")
    dtype = pick(g, ["float64", "float32", "int64", "bool", "complex128"], [0.6, 0.1, 0.1, 0.1, 0.1])
    kind = "bad" if dtype == "complex128" else None
    with np.errstate(all="ignore"):
        if dtype in ("int64", "bool"):
            values = np.nan_to_num(values, nan=0.0, posinf=1.0, neginf=-1.0).clip(-1e6, 1e6).round()
            if dtype == "bool":
                values = values != 0
        matrix = scipy.sparse.csr_matrix(values.astype(dtype))
    fmt = pick(g, ["csr", "csc", "coo", "lil", "dok"], [0.5, 0.2, 0.2, 0.05, 0.05])
    case.data = matrix.asformat(fmt)
    if kind is None:
        kind = classify_values(matrix.toarray()) if n * d else "valid"
        if n == 0 or d == 0:
            kind = "bad"
        if mechanism == "plan_binary":
            dense = matrix.toarray().astype(float)
            if d < 2 or not np.all((dense == 0) | (dense == 1)):
                kind = "bad"
    case.mark("x", kind)
    add(case, "rho", draw_budget(g))
    if mechanism != "plan_binary":
        bounds, bounds_kind = draw_bounds(g)
        add(case, "bounds", (bounds, bounds_kind))
    add(case, "rng", draw_rng(g))
    draw_options(g, case)
    if mechanism == "iome_sparse":
        steps = int(g.integers(1, 13))
        add(case, "search_steps", (steps, "valid"))
        lo, hi = finite_width(case.kwargs["bounds"])
        size = 1 << max(d - 1, 0).bit_length()
        if hi * (1.0 / math.sqrt(size)) - lo * (1.0 / math.sqrt(size)) < 2**steps * sys.float_info.min:
            case.mark("bounds", "bad")  # the sparse search grid's bins (hi - lo) / (sqrt(D') 2^T) underflow
    if mechanism.removesuffix("_sparse") in LIBRARY_ADAPTERS:
        mark_library_limits(case)
    if mechanism == "clipped_mean_sparse":
        mark_norm_universe(case)
    if g.random() < 0.1 and kind != "bad":
        case.data = mechanisms.SharedSample(case.data)
        case.notes.append("SharedSample")
    case.output_shape = (d,)
    return case


def make_user_level(mechanism, index):
    g = case_rng(mechanism, index)
    case = Case(mechanism, index, None, {}, budget="eps")
    batched = bool(g.random() < 0.4)
    runs = small(g, 1, 4)
    d = pick(g, [1, 1, 2, 3, 8, small(g, 1, 16)])
    users_count = small(g, 1, 20)
    counts = g.integers(1, 6, users_count)
    n = int(counts.sum())
    users = np.repeat(np.arange(users_count), counts)
    if g.random() < 0.5:
        users = g.permutation(users)
    bound, bound_kind = pick(g, [
        lambda: (float(10 ** g.uniform(-3, 6)), "valid"),
        lambda: (pick(g, [1, np.float32(2.0), 10]), "valid"),
        lambda: (pick(g, [MAX_MAGNITUDE, 1e99, 1e-300, SUBNORMAL, 1e-310]), "valid"),
        lambda: (pick(g, [1e155, 1e300, FLOAT_MAX, 1e200, 1.0000001e100]), "bad"),  # beyond MAX_MAGNITUDE
        lambda: (pick(g, [0, -1.0, math.nan, math.inf, "1", None, True]), "bad"),
    ], [0.55, 0.1, 0.12, 0.1, 0.13])()
    size = float(bound) if bound_kind != "bad" else 1.0
    # points of the domain: [0, U] (d = 1) or the simplex of radius U
    shape = (runs, n, d)
    mode = pick(g, ["inside", "vertices", "zeros", "full"], [0.6, 0.15, 0.1, 0.15])
    case.notes.append(mode)
    if mode == "inside":
        points = g.dirichlet(np.ones(d + 1), (runs, n))[..., :d] * size if d > 1 else g.random(shape) * size
    elif mode == "vertices":
        points = np.zeros(shape)
        points[np.arange(runs)[:, None], np.arange(n)[None, :], g.integers(0, d, (runs, n))] = size
    elif mode == "zeros":
        points = np.zeros(shape)
    else:
        points = np.full(shape, size / d)
    samples_kind = "valid"
    r = g.random()
    if r < 0.15:
        position = (int(g.integers(runs)) if batched else 0, int(g.integers(n)), int(g.integers(d)))
        special = pick(g, [-1.0, -1e-9, math.nan, math.inf, 2.0 * size, size * (1 + 1e-6) + 1e-300])
        points[position] = special
        case.notes.append(f"samples[{', '.join(map(str, position if batched else position[1:]))}]={special!r}")
        samples_kind = "bad"
    samples = points if batched else points[0]
    if d == 1 and g.random() < 0.5:
        samples = samples[..., 0]
    r = g.random()
    if r < 0.05:
        samples = samples[..., None, None] if samples.ndim else samples
        samples_kind = "bad"
    elif r < 0.08:
        samples = samples[..., :0, :] if samples.ndim >= 2 else samples[:0]
        samples_kind = "bad"
    elif r < 0.16:
        dtype = pick(g, ["float32", "int64", "bool", "object", "complex128", "str"])
        with np.errstate(all="ignore"):
            if dtype in ("int64", "bool"):
                samples = np.nan_to_num(samples, nan=0.0, posinf=0.0, neginf=0.0).clip(0, 1e6).round()
                if dtype == "bool":
                    samples = samples != 0
            samples = samples.astype(dtype)
        case.notes.append(dtype)
        if dtype in ("object", "complex128", "str"):
            samples_kind = "bad"
        elif samples.ndim in ((2, 3) if batched else (1, 2)) and samples.size:
            samples_kind = user_domain_kind(samples, batched, size)  # the cast may have moved the bad entry
    elif r < 0.2:
        samples = samples.tolist()
    case.data = samples
    case.mark("samples", samples_kind)
    r = g.random()
    if r < 0.04:
        users, users_kind = users.astype(float), "bad"
    elif r < 0.06:
        users, users_kind = users[:-1], "bad"
    elif r < 0.08:
        users, users_kind = np.where(users == 0, users_count, users), "bad"  # user 0 has no sample
    elif r < 0.1:
        users, users_kind = users - 1, "bad"
    elif r < 0.12:
        users, users_kind = users.astype(bool), "bad"
    else:
        users_kind = "valid"
    add(case, "users", (users, users_kind))
    eps, eps_kind = draw_budget(g)
    add(case, "eps", (eps, eps_kind))
    add(case, "bound", (bound, bound_kind))
    if eps_kind == bound_kind == "valid" and 4.0 * float(bound) / float(eps) > MAX_NOISE_SCALE:
        case.mark("eps", "bad")  # the Laplace noise scale would overflow: refused naming eps and bound
        case.mark("bound", "bad")
    add(case, "rng", draw_rng(g))
    if g.random() < 0.05:
        add(case, "batched", (pick(g, [1, "yes", None]), "bad"))
    else:
        case.kwargs["batched"] = batched
    if g.random() < 0.3:
        case.kwargs["average_users"] = True
    case.output_shape = (runs, d) if batched else (d,)
    return case


def user_domain_kind(samples, batched, bound):
    arr = np.asarray(samples, dtype=np.float64)
    x = arr if arr.ndim == (3 if batched else 2) else arr[..., None]
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        return "bad"
    return "valid" if np.all(x.sum(axis=-1) <= bound * (1 + 1e-12)) else "bad"


def make_quantile(mechanism, index):
    g = case_rng(mechanism, index)
    case = Case(mechanism, index, None, {})
    bounds, bounds_kind = draw_bounds(g)
    case.data, n, d = dense_data(g, case, bounds, quantile_function=True)
    add(case, "q", pick(g, [
        lambda: (float(g.random()), "valid"),
        lambda: (pick(g, [0, 1, 0.5, np.float32(0.9)]), "valid"),
        lambda: (pick(g, [-0.1, 1.5, math.nan, "abc", None]), "bad"),
    ], [0.7, 0.2, 0.1])())
    add(case, "rho", draw_budget(g))
    add(case, "bounds", (bounds, bounds_kind))
    add(case, "rng", draw_rng(g))
    if mechanism == "exponential_quantile" and g.random() < 0.3:
        add(case, "sensitivity", pick(g, [
            lambda: (float(10 ** g.uniform(-2, 2)), "valid"),
            lambda: (pick(g, [1e-300, 1e300]), "edge"),
            lambda: (pick(g, [0, -1.0, math.nan, math.inf]), "bad"),
        ])())
    if mechanism == "binary_search_quantile" and g.random() < 0.3:
        add(case, "steps", pick(g, [
            lambda: (int(g.integers(1, 60)), "valid"),
            lambda: (pick(g, [0, -1, 2.5, True]), "bad"),
        ], [0.8, 0.2])())
    case.output_shape = (d,)
    return case


def make_case(mechanism: str, index: int) -> Case:
    if mechanism in DENSE:
        return make_dense(mechanism, index)
    if mechanism in SPARSE:
        return make_sparse(mechanism, index)
    if mechanism in USER_LEVEL:
        return make_user_level(mechanism, index)
    return make_quantile(mechanism, index)


# ---------------------------------------------------------------- the contract


def names(message: str, parameter: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(parameter)}(?!\w)", message) is not None


def requested(budget) -> float:
    return float(budget)


def check_result(case: Case, result):
    """The problem with a returned value, or None."""
    if case.mechanism in QUANTILES:
        values = np.asarray(result)
        lo, hi = (float(v) for v in case.kwargs["bounds"])
        if values.shape != case.output_shape:
            return f"returned shape {values.shape}, expected {case.output_shape}"
        if not np.all(np.isfinite(values)):
            return f"returned non-finite values {values}"
        if np.any(values < lo) or np.any(values > hi):
            return f"returned values outside bounds: {values}"
        return None
    if not isinstance(result, mechanisms.Estimate):
        return f"returned {type(result).__name__}, not an Estimate"
    mean = np.asarray(result.mean)
    if mean.shape != case.output_shape:
        return f"estimate.mean has shape {mean.shape}, expected {case.output_shape}"
    if not np.all(np.isfinite(mean)):
        return f"non-finite estimate: {mean}"
    budget = requested(case.kwargs[case.budget])
    if case.mechanism.startswith(("empirical_mean", "empirical_covariance")):  # non-private: infinite cost
        if result.diagnostics.get(f"requested_{case.budget}") != budget or result.total != math.inf:
            return f"the non-private ledger is {result.ledger}, requested {case.budget} {budget}"
        return None
    if result.unit != case.budget:
        return f"ledger unit {result.unit!r}, expected {case.budget!r}"
    total = result.total
    if not (math.isfinite(total) and abs(total - budget) <= 1e-12 * budget):
        return f"ledger total {total!r} != requested {case.budget}={budget!r} (ledger {result.ledger})"
    return None


CALL_SECONDS = 30  # a call still running then is a finding (e.g. a search of 10^9 steps)
SLOW_SECONDS = 10.0  # a call that returns after this long is a finding too


class CallTimeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds):
    """CallTimeout in the main thread after ``seconds`` (no limit elsewhere: signals need it)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise CallTimeout(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_case(case: Case):
    """None if the call keeps the contract, else the finding as a message."""
    function = FUNCTIONS[case.mechanism]
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(), time_limit(CALL_SECONDS):
            warnings.simplefilter("error")
            result = function(case.data, **case.kwargs)
    except ValueError as error:
        if type(error) is not ValueError:
            return f"raised {type(error).__name__} (a ValueError subclass): {error}"
        message = str(error)
        if not case.bad and not case.edge:
            return f"raised ValueError for a valid call: {message}"
        if not case.bad and not any(names(message, p) for p in case.edge):
            return f"raised a ValueError naming none of the edge parameters {sorted(case.edge)}: {message}"
        if case.bad and not any(names(message, p) for p in case.bad | case.edge):
            return f"raised a ValueError naming none of the bad parameters {sorted(case.bad)}: {message}"
        return None
    except Exception as error:  # noqa: BLE001 - any other type is the finding
        return f"raised {type(error).__name__}: {error}"
    elapsed = time.perf_counter() - start
    if case.bad:
        return f"returned instead of raising ValueError for bad {sorted(case.bad)}"
    problem = check_result(case, result)
    if problem is None and elapsed > SLOW_SECONDS:
        problem = f"took {elapsed:.1f} s"
    return problem


def findings(mechanism: str, count: int):
    """The contract's breaks among the mechanism's generated calls, run under :func:`memory_guard`
    (a request for gigabytes fails instead of taking them)."""
    found = []
    cases = [make_case(mechanism, index) for index in range(count)]
    with memory_guard(2 << 30):
        for case in cases:
            problem = run_case(case)
            if problem is not None:
                found.append(f"{problem}\n  call: {case.describe()}")
    return found


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels():
    """IOME's sparse kernels compiled (or loaded from numba's cache) before any memory guard or
    time limit: compiling is neither a finding nor part of a call's time."""
    mechanisms.iome(scipy.sparse.csr_matrix(np.eye(4)), rho=1.0, bounds=(0.0, 1.0), rng=np.random.default_rng(0),
                    search_steps=3)


def report(found, count):
    shown = "\n".join(found[:12])
    more = f"\n... and {len(found) - 12} more" if len(found) > 12 else ""
    return f"{len(found)} of {count} calls broke the contract:\n{shown}{more}"


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("mechanism", list(CASES))
def test_random_calls_return_a_finite_estimate_with_its_ledger_or_a_value_error_naming_the_problem(mechanism):
    found = findings(mechanism, CASES[mechanism])
    assert not found, report(found, CASES[mechanism])


def test_the_fuzzed_mechanisms_cover_the_registry():
    assert set(REGISTRY) <= set(CASES)


def test_the_generated_cases_cover_valid_bad_and_extreme_parameters():
    """The generator reaches valid and bad calls for every mechanism, and the extremes this file
    is about: without this a generator that only drew bad calls (all rejected) would pass."""
    for mechanism, count in CASES.items():
        cases = [make_case(mechanism, index) for index in range(count)]
        valid = [case for case in cases if not case.bad and not case.edge]
        assert len(valid) >= count // 5 and sum(bool(case.bad) for case in cases) >= count // 5, mechanism
        budget = budget_of(mechanism)
        budgets = [case.kwargs.get(budget) for case in cases]
        # the DP libraries' adapters and GRS take the budget extremes as edge parameters (mark_library_limits,
        # local_arguments: eps_j >= 1 or a noise beyond float64)
        extremes = ([case for case in cases if budget not in case.bad]
                    if mechanism.removesuffix("_sparse") in LIBRARY_ADAPTERS or mechanism in GRS else valid)
        assert any(type(case.kwargs.get(budget)) is float and case.kwargs[budget] in (MIN_BUDGET, MAX_BUDGET)
                   for case in extremes), mechanism
        assert any(type(value) is float and value in (SUBNORMAL, FLOAT_MAX) for value in budgets), mechanism
        if mechanism not in USER_LEVEL and mechanism != "plan_binary":
            assert any(finite_width(case.kwargs["bounds"])[1] > MAX_MAGNITUDE for case in cases), mechanism
            assert any(finite_width(case.kwargs["bounds"]) in [(-MAX_MAGNITUDE, MAX_MAGNITUDE), (9e99, MAX_MAGNITUDE)]
                       for case in cases if not case.bad), mechanism
        if mechanism in USER_LEVEL:
            bounds = [case.kwargs["bound"] for case in cases if type(case.kwargs["bound"]) is float]
            assert any(math.isfinite(bound) and bound > MAX_MAGNITUDE for bound in bounds), mechanism
            assert any(type(case.kwargs["bound"]) is float and case.kwargs["bound"] == MAX_MAGNITUDE
                       for case in valid), mechanism


# hand-picked edge cases: (mechanism, data, kwargs, bad, edge)
X = np.random.default_rng(3).uniform(-1.0, 1.0, (8, 3))
XS = scipy.sparse.csr_matrix((np.random.default_rng(4).random((8, 5)) < 0.4).astype(float))
HUGE_BOUNDS = [(-1e155, 1e155), (-1e308, 1e308), (0.0, FLOAT_MAX), (-FLOAT_MAX, FLOAT_MAX), (1e300, 1.5e300),
               (-1e151, 1e151)]
# what a mechanism needs to know besides the data: the oracles' true std, coinpress_mean's sigma_max
KNOWN = {"plan_oracle": {"std": np.ones(3)}, "coinpress_oracle": {"std": np.ones(3)},
         "coinpress_mean": {"max_std": 1.0}, "coinpress_covariance": {"covariance_bound": 1.0},
         "grs_known_var": {"max_std": 1.0}}


def hand_data(name):
    """X, or for UnkVar (a group of users per round of its two searches) X repeated to 96 rows."""
    return np.tile(X, (12, 1)) if name == "grs_unknown_var" else X


HAND_PICKED = [
    *[(name, hand_data(name), {budget_of(name): 1.0, "bounds": bounds} | KNOWN.get(name, {}), set(), {"bounds"})
      for name in DENSE for bounds in HUGE_BOUNDS],
    *[(name, X, {"rho": 1.0, "bounds": bounds, "quantile": "binary_search"}
       | KNOWN.get(name, {}), set(), {"bounds"})
      for name in PLAN_FAMILY for bounds in HUGE_BOUNDS[:2]],
    *[(name, hand_data(name), {budget_of(name): budget, "bounds": (-1.0, 1.0)} | KNOWN.get(name, {}), set(),
       {budget_of(name)}) for name in DENSE for budget in (1e-300, 1e300, FLOAT_MAX, SUBNORMAL)],
    *[(name, X * 1e200, {budget_of(name): 1.0, "bounds": (-1.0, 1.0)} | KNOWN.get(name, {}),
       set(), {"x"}) for name in DENSE],
    *[(name, np.full((8, 3), FLOAT_MAX), {budget_of(name): 1.0, "bounds": (-1.0, 1.0)}
       | KNOWN.get(name, {}), set(), {"x"}) for name in DENSE],
    *[(name, X.astype(np.complex128), {budget_of(name): 1.0, "bounds": (-1.0, 1.0)}
       | KNOWN.get(name, {}), {"x"}, set()) for name in DENSE],
    *[(name, X.astype(str), {budget_of(name): 1.0, "bounds": (-1.0, 1.0)} | KNOWN.get(name, {}),
       {"x"}, set()) for name in DENSE],
    *[(name, XS, {"rho": 1.0, "bounds": bounds}, set(), {"bounds"})
      for name in ("iome", "empirical_mean") for bounds in HUGE_BOUNDS],
    ("plan_binary", XS, {"rho": 1e-300}, set(), {"rho"}),
    ("plan_binary", XS, {"rho": FLOAT_MAX}, set(), {"rho"}),
    *[(name, X[:, 0] * 0 + 0.5, {"users": np.arange(8), "eps": eps, "bound": bound}, set(), {"eps", "bound"})
      for name in USER_LEVEL for eps in (1e-300, 1.0, FLOAT_MAX) for bound in (1.0, 1e155, 1e300, FLOAT_MAX)],
    *[(name, np.full((8, 2), bound / 2), {"users": np.arange(8) // 2, "eps": eps, "bound": bound}, set(),
       {"eps", "bound"}) for name in USER_LEVEL for eps in (1e-300, 1.0) for bound in (1e155, FLOAT_MAX)],
    *[(name, X, {"q": 0.5, "rho": 1.0, "bounds": bounds}, set(), {"bounds"})
      for name in QUANTILES for bounds in HUGE_BOUNDS],
    # a row at the centre: its norm cancels to 0 and clip / max(norm, 1e-300) overflows (to weight 1)
    ("iome", np.full((2, 1), 1e15 + 1), {"rho": 1e12, "bounds": (1e15, 1e15 + 1)}, set(), set()),
    # beta: ln(1 / beta) is 0 at 1 - 2^-53 (1 / beta rounds to 1) and 1 / beta overflows at 5e-324
    *[(name, X, {"rho": 1.0, "bounds": (-1.0, 1.0), "beta": beta} | KNOWN.get(name, {}),
       {"beta"} if beta == SUBNORMAL else set(), set())
      for name in ("plan_gaussian", "plan_noscale", "plan_oracle") for beta in (1.0 - 2**-53, 1e-300, SUBNORMAL)],
    # CoinPress: a universe too narrow to halve keeps the smallest positive radius; a scale so small that the
    # data or the ball divided by it leave [-1e100, 1e100] is refused naming it
    *[(name, X * 0, {"rho": 1.0, "bounds": (0.0, SUBNORMAL)} | KNOWN[name], set(), set()) for name in COINPRESS],
    ("coinpress_mean", X, {"rho": 1.0, "bounds": (-1.0, 1.0), "max_std": SUBNORMAL}, set(), {"max_std"}),
    ("coinpress_oracle", X, {"rho": 1.0, "bounds": (-1.0, 1.0), "std": np.array([1.0, 1e-300, 1.0])}, set(),
     {"std"}),
    # shares whose step budgets underflow (rho / d with a share of 5e-324)
    *[(name, X, {"rho": 1e-300, "bounds": (-1.0, 1.0), share: SUBNORMAL}, set(), {share, "rho"})
      for name, share in [("plan_gaussian", "topk_share"), ("plan_noscale", "pre_share"),
                          ("coordinate_median", "budget_share"), ("iome", "centre_share"),
                          ("std_direct", "budget_share"), ("std_general", "budget_share")]],
]


@pytest.mark.parametrize("index", range(len(HAND_PICKED)))
def test_hand_picked_edge_calls_keep_the_contract(index):
    mechanism, data, kwargs, bad, edge = HAND_PICKED[index]
    kwargs = dict(kwargs, rng=np.random.default_rng(index))
    case = Case(mechanism, index, data, kwargs, set(bad), set(edge),
                budget=None if mechanism in QUANTILES else budget_of(mechanism))
    if mechanism in USER_LEVEL:
        case.output_shape = (1,) if np.ndim(data) == 1 else (np.shape(data)[-1],)
    else:
        case.output_shape = (np.shape(data)[1],) * (2 if mechanism in COVARIANCE else 1)
    with memory_guard(2 << 30):
        problem = run_case(case)
    assert problem is None, f"{problem}\n  call: {case.describe()}"


@contextlib.contextmanager
def memory_guard(extra_bytes=1 << 30):
    """Address space limited to what the process has plus ``extra_bytes``: a call that tries
    to allocate gigabytes fails with MemoryError instead of using them."""
    try:
        with open("/proc/self/statm") as statm:
            used = int(statm.read().split()[0]) * resource.getpagesize()
    except OSError:  # no /proc (not Linux): no guard
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = used + extra_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


ABSURD = [
    ("iome", X, {"rho": 1.0, "bounds": (-1.0, 1.0), "search_steps": 2**40}, "search_steps"),
    ("iome", X, {"rho": 1.0, "bounds": (-1.0, 1.0), "search_steps": 10**6}, "search_steps"),
    ("iome", X, {"rho": 1.0, "bounds": (-1.0, 1.0), "rotations": 2**40}, "rotations"),
    ("iome", X, {"rho": 1.0, "bounds": (-1.0, 1.0), "rotations": 10**8}, "rotations"),
    ("plan_gaussian", X, {"rho": 1.0, "bounds": (-1.0, 1.0), "quantile": "binary_search", "search_steps": 2**40},
     "search_steps"),
    ("coordinate_median", X, {"rho": 1.0, "bounds": (-1.0, 1.0), "quantile": "binary_search",
                              "search_steps": 10**6}, "search_steps"),
    ("binary_search_quantile", X, {"q": 0.5, "rho": 1.0, "bounds": (-1.0, 1.0), "steps": 2**40}, "steps"),
    ("plan_binary", XS, {"rho": 1.0, "search_steps": 2**40}, "search_steps"),
    ("plan_binary", scipy.sparse.csr_matrix((2, 2**40)), {"rho": 1.0}, "x"),
    ("iome", scipy.sparse.csr_matrix((2, 2**40)), {"rho": 1.0, "bounds": (-1.0, 1.0), "search_steps": 1}, "x"),
    ("empirical_mean", scipy.sparse.csr_matrix((2, 2**40)), {"rho": 1.0, "bounds": (-1.0, 1.0)}, "x"),
]


@pytest.mark.parametrize("index", range(len(ABSURD)))
def test_absurd_requested_sizes_fail_cleanly(index):
    """Sizes whose work arrays would take gigabytes (or terabytes) raise a ValueError naming
    the size, quickly and before allocating them."""
    mechanism, data, kwargs, parameter = ABSURD[index]
    kwargs = dict(kwargs, rng=np.random.default_rng(index))
    case = Case(mechanism, index, data, kwargs, {parameter}, set(), budget="rho")
    start = time.perf_counter()
    with memory_guard():
        problem = run_case(case)
    assert problem is None, f"{problem}\n  call: {case.describe()}"
    assert time.perf_counter() - start < 2.0, case.describe()


if __name__ == "__main__":
    # python tests/mechanisms/test_fuzz_inputs.py MECHANISM INDEX: rerun one generated call, show the result
    name, number = sys.argv[1], int(sys.argv[2])
    one = make_case(name, number)
    print(one.describe())
    problem = run_case(one)
    print(problem or "keeps the contract")
    if problem is not None and problem.startswith("raised"):
        with warnings.catch_warnings():  # again, for the traceback
            warnings.simplefilter("error")
            FUNCTIONS[one.mechanism](one.data, **one.kwargs)
