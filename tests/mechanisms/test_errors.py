"""Bad input raises ValueError naming the bad value (docs/design.md §4, §11).

Every case changes one argument of a call that is otherwise valid (checked by the first
tests), and the message must name the parameter and show the bad value.
"""
import math
import re

import numpy as np
import pytest
import scipy.sparse

from mechanisms import (
    REGISTRY,
    binary_search_quantile,
    budget_name,
    exponential_quantile,
    make_mechanism,
    mechanism_options,
    split_budget,
    zcdp_to_approx_dp,
)
from mechanisms._validation import check_sparse

# Mechanisms on dense data; plan_binary takes sparse binary data only (tests/mechanisms/test_plan_binary.py),
# and the user-level family user-indexed samples (its errors: tests/mechanisms/test_userlevel.py).
SPARSE_ONLY = {"plan_binary"}
USER_LEVEL = {"laplace", "opt_worst_case", "akmv"}
# the DP libraries' means take dense and sparse data (tests/mechanisms/test_libraries.py)
LIBRARY_ADAPTERS = {"opendp_mean", "diffprivlib_mean", "pydp_mean"}
MECHANISMS = sorted(set(REGISTRY) - SPARSE_ONLY - USER_LEVEL)
COVARIANCE_RELEASES = {"coinpress_covariance", "empirical_covariance"}  # a d x d matrix (docs/design.md §5.12)
LOCAL_MODEL = {"iome_local", "grs_known_var", "grs_unknown_var"}  # (eps, delta) per user (docs/design.md §5.13)
PLAN_FAMILY = ["coordinate_median", "plan_gaussian", "plan_noscale", "plan_oracle"]
QUANTILES = {"exponential_quantile": exponential_quantile, "binary_search_quantile": binary_search_quantile}
N, D = 20, 3


def valid_arguments(name):
    # UnkVar's two searches need a group of users per round: 9 + 10 rounds on (-5, 5)
    x = np.random.default_rng(40).uniform(-4.0, 4.0, size=(200 if name == "grs_unknown_var" else N, D))
    # a mechanism's budget is rho (zCDP) or eps (mechanisms/registry.py budget_name)
    arguments = {"x": x, budget_name(name): 1.0, "bounds": (-5.0, 5.0), "rng": np.random.default_rng(41)}
    if name in ("plan_oracle", "coinpress_oracle"):
        arguments["std"] = np.ones(D)
    if name in ("coinpress_mean", "grs_known_var"):  # sigma_max^2 I / KnownVar's sigma: the source's sigma_max
        arguments["max_std"] = 1.0
    if name == "coinpress_covariance":  # a public bound Sigma <= u I, which it requires
        arguments["covariance_bound"] = 16.0
    return arguments


def call_mechanism(name, **changes):
    arguments = valid_arguments(name) | changes
    x = arguments.pop("x")
    return REGISTRY[name](x, **arguments)


def call_quantile(name, **changes):
    arguments = {
        "x": np.random.default_rng(42).uniform(-4.0, 4.0, size=(30, 4)),
        "q": 0.5, "rho": 1.0, "bounds": (-5.0, 5.0), "rng": np.random.default_rng(43),
    } | changes
    x = arguments.pop("x")
    return QUANTILES[name](x, **arguments)


def shows(name, value):
    """Regex for ``name=<repr of value>`` as the messages print it."""
    return rf"\b{re.escape(name)}={re.escape(repr(value))}"


def with_entry(value):
    x = valid_arguments("empirical_mean")["x"]
    x[3, 1] = value
    return x


# ---------------------------------------------------------------- the baseline calls are valid


def test_the_registry_holds_the_public_mechanisms_tested_here():
    assert set(REGISTRY) == {"plan_gaussian", "plan_noscale", "plan_oracle", "coordinate_median", "iome", "plan_binary",
                             "empirical_mean", "empirical_mean_eps", "variance_direct", "variance_general",
                             "std_direct", "std_general", "coinpress_mean", "coinpress_oracle", "clipped_mean",
                             *USER_LEVEL, *LIBRARY_ADAPTERS, *COVARIANCE_RELEASES, "coinpress_whitened_mean",
                             *LOCAL_MODEL}


@pytest.mark.parametrize("name", MECHANISMS)
def test_the_baseline_call_of_every_mechanism_is_valid(name):
    estimate = call_mechanism(name)
    assert estimate.mean.shape == ((D, D) if name in COVARIANCE_RELEASES else (D,))
    assert np.all(np.isfinite(estimate.mean))


@pytest.mark.parametrize("name", QUANTILES)
def test_the_baseline_call_of_every_quantile_function_is_valid(name):
    assert call_quantile(name).shape == (4,)


# ---------------------------------------------------------------- data

NON_FINITE = [(math.nan, r"\bx\b.*\bnan\b"), (math.inf, r"\bx\b.*\binf\b"), (-math.inf, r"\bx\b.*-inf\b")]


@pytest.mark.parametrize(("value", "pattern"), NON_FINITE, ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("name", MECHANISMS)
def test_mechanisms_reject_non_finite_entries_and_show_them(name, value, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_mechanism(name, x=with_entry(value))


@pytest.mark.parametrize(("value", "pattern"), NON_FINITE, ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("name", QUANTILES)
def test_quantile_functions_reject_non_finite_entries_and_show_them(name, value, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_quantile(name, x=with_entry(value))


@pytest.mark.parametrize(
    ("shape", "pattern"),
    [((0, D), r"\bx\b.*\(0, 3\)"), ((N, 0), r"\bx\b.*\(20, 0\)")],
    ids=["no_rows", "no_columns"],
)
@pytest.mark.parametrize("name", MECHANISMS)
def test_mechanisms_reject_empty_data_and_show_its_shape(name, shape, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_mechanism(name, x=np.zeros(shape))


@pytest.mark.parametrize(("shape", "pattern"),
                         [((N,), r"\bx\b.*shape=\(20,\)"), ((2, N, D), r"\bx\b.*shape=\(2, 20, 3\)")],
                         ids=["1d", "3d"])
@pytest.mark.parametrize("name", MECHANISMS)
def test_mechanisms_reject_data_that_is_not_2d_and_show_its_shape(name, shape, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_mechanism(name, x=np.zeros(shape))


@pytest.mark.parametrize(
    ("x", "pattern"),
    [([["a", "b", "c"]], r"\bx\b.*'a'"), (np.array([[1.0, None, 2.0]], dtype=object), r"\bx\b.*dtype=object")],
    ids=["strings", "object_dtype"],
)
@pytest.mark.parametrize("name", MECHANISMS)
def test_mechanisms_reject_non_numeric_data(name, x, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_mechanism(name, x=x)


# iome on sparse data: tests/mechanisms/test_iome_sparse.py; clipped_mean: tests/mechanisms/test_clipped_mean.py
DENSE_ONLY = [name for name in MECHANISMS
              if name not in {"empirical_mean", "empirical_mean_eps", "iome", "clipped_mean", *LIBRARY_ADAPTERS}]


@pytest.mark.parametrize("name", DENSE_ONLY)
def test_dense_mechanisms_reject_sparse_data_naming_it_instead_of_densifying_it(name):
    x = scipy.sparse.csr_matrix(valid_arguments(name)["x"])
    with pytest.raises(ValueError, match=rf"\bx\b is a sparse csr_matrix of shape \({x.shape[0]}, 3\).*dense"):
        call_mechanism(name, x=x)


@pytest.mark.parametrize("name", ["empirical_mean", "empirical_mean_eps"])
def test_the_empirical_mean_of_sparse_data_is_its_column_means(name):
    x = valid_arguments(name)["x"]
    sparse = call_mechanism(name, x=scipy.sparse.csr_matrix(x))
    np.testing.assert_allclose(sparse.mean, x.mean(axis=0), rtol=1e-14)


@pytest.mark.parametrize(
    ("x", "binary", "pattern"),
    [
        (np.ones((3, 2)), False, r"\bx\b must be a scipy\.sparse matrix.*ndarray of shape \(3, 2\)"),
        (scipy.sparse.csr_matrix((0, 4)), False, r"\bx\b.*x\.shape=\(0, 4\)"),
        (scipy.sparse.csr_matrix(np.array([[0.0, 1.0], [math.nan, 0.0]])), False,
         r"\bx\b must be finite, got x\[1, 0\]=nan"),
        (scipy.sparse.csr_matrix(np.array([[0.0, 1.0], [0.0, 2.0]])), True, r"\bx\b must be binary.*x\[1, 1\]=2"),
        # duplicate entries of one cell add up: 1 + 1 is 2, not binary
        (scipy.sparse.csr_matrix((np.ones(2), np.array([1, 1]), np.array([0, 2])), shape=(1, 3)), True,
         r"\bx\b must be binary.*x\[0, 1\]=2"),
        (scipy.sparse.csr_matrix(np.array([[1j, 0.0]])), False, r"\bx\b must hold real numbers.*complex"),
    ],
    ids=["dense", "no_rows", "nan", "not_binary", "duplicates", "complex"],
)
def test_check_sparse_rejects_bad_sparse_input_naming_the_entry(x, binary, pattern):
    with pytest.raises(ValueError, match=pattern):
        check_sparse(x, binary=binary)


def test_check_sparse_takes_any_sparse_format_without_densifying_and_keeps_csr_as_is():
    csr = scipy.sparse.random(50, 40, density=0.1, format="csr", random_state=3)
    assert check_sparse(csr) is csr
    coo = check_sparse(csr.tocoo(), binary=False)
    assert coo.format == "csr" and (coo != csr).nnz == 0


@pytest.mark.parametrize(
    ("shape", "pattern"),
    [
        ((0, 4), r"\bx\b.*\(0, 4\)"),
        ((0,), r"\bx\b.*\(0,"),  # shown as the one column it becomes, (0, 1)
        ((2, 3, 4), r"\bx\b.*\(2, 3, 4\)"),
        ((), r"\bx\b.*\(\)"),
    ],
    ids=["no_rows", "empty_1d", "3d", "scalar"],
)
@pytest.mark.parametrize("name", QUANTILES)
def test_quantile_functions_reject_empty_or_misshapen_data_and_show_its_shape(name, shape, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_quantile(name, x=np.zeros(shape))


def test_plan_gaussian_rejects_too_few_rows_for_the_variance_step_and_shows_n():
    with pytest.raises(ValueError, match=r"groups=11.*\bn=20\b"):
        call_mechanism("plan_gaussian", groups=11)


def test_plan_gaussian_rejects_a_single_row_and_shows_n():
    with pytest.raises(ValueError, match=r"\bn=1\b"):
        call_mechanism("plan_gaussian", x=np.zeros((1, D)))


# ---------------------------------------------------------------- rho, bounds, rng

BAD_RHO = [-1, 0, -0.5, math.nan, math.inf, "abc", None]
BAD_RHO_IDS = ["-1", "0", "-0.5", "nan", "inf", "string", "None"]


@pytest.mark.parametrize("budget", BAD_RHO, ids=BAD_RHO_IDS)
@pytest.mark.parametrize("name", MECHANISMS)
def test_mechanisms_reject_a_budget_that_is_not_a_finite_positive_number_and_show_it(name, budget):
    with pytest.raises(ValueError, match=shows(budget_name(name), budget)):
        call_mechanism(name, **{budget_name(name): budget})


@pytest.mark.parametrize("rho", BAD_RHO, ids=BAD_RHO_IDS)
@pytest.mark.parametrize("name", QUANTILES)
def test_quantile_functions_reject_a_rho_that_is_not_a_finite_positive_number_and_show_it(name, rho):
    with pytest.raises(ValueError, match=shows("rho", rho)):
        call_quantile(name, rho=rho)


BAD_BOUNDS = [
    ((1.0, 0.0), r"\bbounds=\(1\.0, 0\.0\)"),
    ((2, 2), r"\bbounds=\(2\.0, 2\.0\)"),
    ((math.nan, 1.0), r"\bbounds=\(nan, 1\.0\)"),
    ((0.0, math.inf), r"\bbounds=\(0\.0, inf\)"),
    ((-math.inf, 0.0), r"\bbounds=\(-inf, 0\.0\)"),
    ((0, 1, 2), r"\bbounds=\(0, 1, 2\)"),
    ((0,), r"\bbounds=\(0,\)"),
    (5, r"\bbounds=5\b"),
    (("a", "b"), r"\bbounds=\('a', 'b'\)"),
]
BAD_BOUNDS_IDS = ["lo_above_hi", "lo_equals_hi", "nan", "inf", "-inf", "three", "one", "scalar", "strings"]


@pytest.mark.parametrize(("bounds", "pattern"), BAD_BOUNDS, ids=BAD_BOUNDS_IDS)
@pytest.mark.parametrize("name", MECHANISMS)
def test_mechanisms_reject_bad_bounds_and_show_them(name, bounds, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_mechanism(name, bounds=bounds)


@pytest.mark.parametrize(("bounds", "pattern"), BAD_BOUNDS, ids=BAD_BOUNDS_IDS)
@pytest.mark.parametrize("name", QUANTILES)
def test_quantile_functions_reject_bad_bounds_and_show_them(name, bounds, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_quantile(name, bounds=bounds)


BAD_RNG = [(np.random.RandomState(0), r"\brng=RandomState\b"), (0, r"\brng=int\b"), (None, r"\brng=NoneType\b")]
BAD_RNG_IDS = ["RandomState", "int_seed", "None"]


@pytest.mark.parametrize(("rng", "pattern"), BAD_RNG, ids=BAD_RNG_IDS)
@pytest.mark.parametrize("name", MECHANISMS)
def test_mechanisms_reject_an_rng_that_is_not_a_generator_and_show_its_type(name, rng, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_mechanism(name, rng=rng)


@pytest.mark.parametrize(("rng", "pattern"), BAD_RNG, ids=BAD_RNG_IDS)
@pytest.mark.parametrize("name", QUANTILES)
def test_quantile_functions_reject_an_rng_that_is_not_a_generator_and_show_its_type(name, rng, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_quantile(name, rng=rng)


# ---------------------------------------------------------------- options


@pytest.mark.parametrize("value", ["bogus", "Exact", None])
@pytest.mark.parametrize("name", PLAN_FAMILY)
def test_plan_family_rejects_an_unknown_accounting_and_shows_it(name, value):
    with pytest.raises(ValueError, match=shows("accounting", value)):
        call_mechanism(name, accounting=value)


@pytest.mark.parametrize("value", ["median", "binary search", None])
@pytest.mark.parametrize("name", PLAN_FAMILY)
def test_plan_family_rejects_an_unknown_quantile_method_and_shows_it(name, value):
    with pytest.raises(ValueError, match=shows("quantile", value)):
        call_mechanism(name, quantile=value)


BAD_SHARES = {
    "plan_gaussian": {"pre_share": [0, 1, 1.5], "centre_share": [0, -0.25, 1.5, math.nan], "topk_share": [0, 1],
                      "beta": [0, 1]},
    "plan_noscale": {"pre_share": [0, 1], "topk_share": [0, 1, 2], "beta": [0, 1]},
    "plan_oracle": {"pre_share": [0, 1], "centre_share": [0, 1.5], "topk_share": [0, 1], "beta": [0, 1]},
    "coordinate_median": {"budget_share": [0, 1.5, -0.5, math.nan, "half"]},
    "iome": {"centre_share": [0, 1], "clip_share": [0, 1, math.nan]},
}
SHARE_CASES = [
    (name, option, value) for name, options in BAD_SHARES.items() for option, values in options.items()
    for value in values
]


@pytest.mark.parametrize(("name", "option", "value"), SHARE_CASES)
def test_mechanisms_reject_a_budget_share_outside_its_interval_and_show_it(name, option, value):
    with pytest.raises(ValueError, match=shows(option, value)):
        call_mechanism(name, **{option: value})


BAD_OPTIONS = {
    "plan_gaussian": {"p": [0, -1.0], "max_std_distance": [0], "spread": [0, -0.1], "groups": [0, 1.5, True],
                      "search_steps": [0, 2.5, True]},
    "plan_noscale": {"spread": [0], "search_steps": [0, -3]},
    "plan_oracle": {"p": [0], "max_std_distance": [-1.0], "spread": [0], "search_steps": [0]},
    "coordinate_median": {"spread": [0], "search_steps": [0, 2.5]},
    "iome": {"rotations": [0, True, 1.5], "search_steps": [0, 2.5], "offset_factor": [0, -2.0, math.inf]},
}
OPTION_CASES = [
    (name, option, value) for name, options in BAD_OPTIONS.items() for option, values in options.items()
    for value in values
]


@pytest.mark.parametrize(("name", "option", "value"), OPTION_CASES)
def test_mechanisms_reject_a_non_positive_or_non_integer_option_and_show_it(name, option, value):
    with pytest.raises(ValueError, match=shows(option, value)):
        call_mechanism(name, **{option: value})


def test_plan_gaussian_rejects_a_centre_share_of_one_that_leaves_no_budget_for_the_variance_step():
    """centre_share = 1 is valid for plan_oracle (the variance share is unspent anyway), but
    plan_gaussian must estimate the variances, with (1 - centre_share) of rho_pre."""
    with pytest.raises(ValueError, match=r"\bcentre_share=1\b"):
        call_mechanism("plan_gaussian", centre_share=1)


@pytest.mark.parametrize(
    ("std", "pattern"),
    [
        (np.ones(D - 1), r"\bstd\b.*\(2,\)"),
        (np.ones(D + 1), r"\bstd\b.*\(4,\)"),
        (np.ones((D, 1)), r"\bstd\b.*\(3, 1\)"),
        (1.0, r"\bstd\b.*\(\)"),
    ],
    ids=["too_short", "too_long", "2d", "scalar"],
)
def test_plan_oracle_rejects_std_of_the_wrong_shape_and_shows_the_shape(std, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_mechanism("plan_oracle", std=std)


@pytest.mark.parametrize(
    ("std", "pattern"),
    [([1.0, -1.0, 1.0], r"\bstd\b.*-1\.0"), ([1.0, math.nan, 1.0], r"\bstd\b.*\bnan\b"),
     ([1.0, 1.0, math.inf], r"\bstd\b.*\binf\b")],
    ids=["negative", "nan", "inf"],
)
def test_plan_oracle_rejects_a_negative_or_non_finite_std_and_shows_it(std, pattern):
    with pytest.raises(ValueError, match=pattern):
        call_mechanism("plan_oracle", std=std)


@pytest.mark.parametrize("q", [-0.1, 1.5, math.nan, "abc"], ids=["negative", "above_one", "nan", "string"])
@pytest.mark.parametrize("name", QUANTILES)
def test_quantile_functions_reject_q_outside_0_1_and_show_it(name, q):
    with pytest.raises(ValueError, match=shows("q", q)):
        call_quantile(name, q=q)


@pytest.mark.parametrize("sensitivity", [0, -1.0, math.inf, math.nan])
def test_exponential_quantile_rejects_a_non_positive_sensitivity_and_shows_it(sensitivity):
    with pytest.raises(ValueError, match=shows("sensitivity", sensitivity)):
        call_quantile("exponential_quantile", sensitivity=sensitivity)


@pytest.mark.parametrize("steps", [0, -1, 2.5, True])
def test_binary_search_quantile_rejects_steps_that_are_not_a_positive_integer_and_shows_them(steps):
    with pytest.raises(ValueError, match=shows("steps", steps)):
        call_quantile("binary_search_quantile", steps=steps)


# ---------------------------------------------------------------- registry


@pytest.mark.parametrize("function", [make_mechanism, mechanism_options])
def test_registry_rejects_an_unknown_algorithm_and_shows_it(function):
    with pytest.raises(ValueError, match=r"\balgorithm 'plan_gausian'"):
        function("plan_gausian")


@pytest.mark.parametrize("name", MECHANISMS)
def test_make_mechanism_rejects_an_unknown_option_and_shows_it(name):
    with pytest.raises(ValueError, match=rf"\boption 'accounting_mode'.*\balgorithm '{name}'"):
        make_mechanism(name, accounting_mode="exact")


@pytest.mark.parametrize("name", ["iome", "empirical_mean"])
def test_make_mechanism_rejects_accounting_for_mechanisms_without_that_option(name):
    with pytest.raises(ValueError, match=rf"\boption 'accounting'.*\balgorithm '{name}'"):
        make_mechanism(name, accounting="published")


# ---------------------------------------------------------------- accounting helpers


@pytest.mark.parametrize("rho", BAD_RHO, ids=BAD_RHO_IDS)
def test_split_budget_rejects_a_bad_rho_and_shows_it(rho):
    with pytest.raises(ValueError, match=shows("rho", rho)):
        split_budget(rho, [1, 1])


@pytest.mark.parametrize(
    ("shares", "pattern"),
    [
        ([], r"\bshares=\[\]"),
        ([[1, 2]], r"\bshares=\[\[1, 2\]\]"),
        ([1, -1], r"\bshares=\[1, -1\]"),
        ([0, 0], r"\bshares=\[0, 0\]"),
        ([1, math.nan], r"\bshares=\[1, nan\]"),
        ([1, math.inf], r"\bshares=\[1, inf\]"),
        (["a", 1], r"\bshares\b.*'a'"),
    ],
    ids=["empty", "2d", "negative", "all_zero", "nan", "inf", "string"],
)
def test_split_budget_rejects_bad_shares_and_shows_them(shares, pattern):
    with pytest.raises(ValueError, match=pattern):
        split_budget(1.0, shares)


@pytest.mark.parametrize("rho", BAD_RHO, ids=BAD_RHO_IDS)
def test_zcdp_to_approx_dp_rejects_a_bad_rho_and_shows_it(rho):
    with pytest.raises(ValueError, match=shows("rho", rho)):
        zcdp_to_approx_dp(rho, delta=1e-6)


@pytest.mark.parametrize("delta", [0, 1, -0.5, 1.5, math.nan, math.inf, "abc", None],
                         ids=["0", "1", "negative", "above_one", "nan", "inf", "string", "None"])
def test_zcdp_to_approx_dp_rejects_a_delta_outside_0_1_and_shows_it(delta):
    with pytest.raises(ValueError, match=shows("delta", delta)):
        zcdp_to_approx_dp(1.0, delta=delta)
