"""The adapters to OpenDP, diffprivlib and python-dp (docs/design.md §5.10): their ledgers and the
libraries' own accounting, the noise of each library's mechanism at the calibrated eps or scale,
the clipped means they release at a huge budget, seeding, sparse input and bad options."""
import importlib.metadata
import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse

import mechanisms
from mechanisms import LedgerEntry, SharedSample, diffprivlib_mean, opendp_mean, pydp_mean
from mechanisms import libraries as adapters
from mechanisms.accounting import UNSPENT

ADAPTERS = {"opendp": opendp_mean, "diffprivlib": diffprivlib_mean, "pydp": pydp_mean}
DISTRIBUTIONS = {"opendp": "opendp", "diffprivlib": "diffprivlib", "pydp": "python-dp"}
VARIANTS = ["given", "quantiles"]
BOUNDS = (-4.0, 6.0)
N, D = 300, 3


@pytest.fixture(scope="module")
def data():
    """Gaussian columns around 1 with a few values outside BOUNDS (clipped by every library)."""
    x = np.random.default_rng(11).normal(1.0, 1.5, size=(N, D))
    x[:4, 0] = [9.0, -7.0, 12.0, 6.5]
    return x


def run(library, x, rho, seed=0, **options):
    return ADAPTERS[library](x, rho=rho, bounds=BOUNDS, rng=np.random.default_rng(seed), **options)


def clipped_mean(x, lower, upper):
    return np.clip(x, lower, upper).mean(axis=0)


# ---------------------------------------------------------------- import, registry


def test_importing_mechanisms_imports_none_of_the_libraries():
    code = "import sys, mechanisms; print(sorted(set(sys.modules) & {'opendp', 'diffprivlib', 'pydp', 'sklearn'}))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"


def test_the_adapters_are_registered_under_their_config_names():
    assert {name: mechanisms.REGISTRY[f"{name}_mean"] for name in ADAPTERS} == ADAPTERS
    assert all(mechanisms.budget_name(f"{name}_mean") == "rho" for name in ADAPTERS)


# ---------------------------------------------------------------- ledger and accountant


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("library", ADAPTERS)
def test_the_ledger_sums_to_rho_and_the_library_s_own_accounting_agrees(library, variant, data):
    estimate = run(library, data, 0.7, bounds_from=variant)
    assert estimate.mean.shape == (D,) and np.all(np.isfinite(estimate.mean))
    assert all(type(entry) is LedgerEntry for entry in estimate.ledger) and estimate.unit == "rho"
    assert math.isclose(estimate.rho_total, 0.7, rel_tol=1e-12)
    steps = [entry.step.split(" ")[0] for entry in estimate.ledger]
    assert steps == (["mean"] if variant == "given" else ["quantiles", "mean"])
    diagnostics = estimate.diagnostics
    assert diagnostics["library"] == library
    assert diagnostics["library_version"] == importlib.metadata.version(DISTRIBUTIONS[library])
    assert diagnostics["requested_rho"] == 0.7 and diagnostics["true_rho"] == estimate.rho_spent
    assert math.isclose(diagnostics["accountant_rho"], estimate.rho_spent, rel_tol=1e-9)
    assert diagnostics["seeded"] is (library == "diffprivlib") and diagnostics["neighbours"]
    if variant == "quantiles":
        assert dict(estimate.ledger)[estimate.ledger[0].step] == pytest.approx(0.35, rel=1e-12)  # quantile_share 1/2
        assert diagnostics["private_bounds"].shape == (2, D)


def test_diffprivlib_s_accountant_books_every_call_at_the_calibrated_eps(data):
    estimate = run("diffprivlib", data, 0.7, bounds_from="quantiles", quantile_share=0.25)
    mean_eps, quantile_eps = math.sqrt(2 * 0.75 * 0.7 / D), math.sqrt(8 * 0.25 * 0.7 / (2 * D))
    assert estimate.diagnostics["mean_eps"] == pytest.approx(mean_eps, rel=1e-15)
    assert estimate.diagnostics["quantile_eps"] == pytest.approx(quantile_eps, rel=1e-15)
    # the library's own total: plain eps composition of 2 d quantiles and d means
    assert estimate.diagnostics["accountant_eps"] == pytest.approx(D * (2 * quantile_eps + mean_eps), rel=1e-12)


def test_an_accountant_that_disagrees_with_the_ledger_stops_the_call(data, monkeypatch):
    monkeypatch.setattr(adapters, "_laplace_rho", lambda eps: eps * eps)  # a calibration off by a factor 2
    with pytest.raises(RuntimeError, match=r"diffprivlib's own accounting gives rho=1\.4.*ledger 0\.7"):
        run("diffprivlib", data, 0.7)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_per_coordinate_budgets_are_rho_over_d(variant, data):
    rho, share = 0.9, 0.4
    quantile_rho, mean_rho = share * rho / (2 * D), (1 - share) * rho / D
    if variant == "given":
        quantile_rho, mean_rho = 0.0, rho / D
    options = {"bounds_from": variant, "quantile_share": share}
    opendp = run("opendp", data, rho, **options).diagnostics
    assert opendp["mean_rho_per_coordinate"] == pytest.approx(mean_rho, rel=1e-15)
    for library in ("diffprivlib", "pydp"):
        assert run(library, data, rho, **options).diagnostics["mean_eps"] == pytest.approx(math.sqrt(2 * mean_rho))
    if variant == "quantiles":
        assert opendp["quantile_rho_per_call"] == pytest.approx(quantile_rho, rel=1e-15)
        pydp = run("pydp", data, rho, **options).diagnostics
        # an add/remove Percentile at eps is 2 eps-DP under replace-one
        assert pydp["quantile_eps"] == pytest.approx(math.sqrt(2 * quantile_rho))
        assert pydp["quantile_library_eps"] == pytest.approx(math.sqrt(2 * quantile_rho) / 2)


# ---------------------------------------------------------------- what is released


@pytest.mark.parametrize("library", ADAPTERS)
def test_at_a_huge_budget_the_given_variant_is_the_clamped_mean(library, data):
    estimate = run(library, data, 1e10)
    # python-dp cannot be seeded: its noise (about 1e-6 here) gets 100 of its scales of room
    np.testing.assert_allclose(estimate.mean, clipped_mean(data, *BOUNDS), rtol=0, atol=1e-4)
    assert not np.allclose(estimate.mean, data.mean(axis=0), rtol=0, atol=1e-3)  # the clipping matters


@pytest.mark.parametrize("library", ADAPTERS)
def test_coordinate_bounds_replace_the_engine_s_universe(library, data):
    narrow = (0.0, 2.0)
    estimate = run(library, data, 1e10, coordinate_bounds=narrow)
    np.testing.assert_allclose(estimate.mean, clipped_mean(data, *narrow), rtol=0, atol=1e-4)
    with pytest.raises(ValueError, match=r"coordinate_bounds: bounds must be finite with lo < hi"):
        run(library, data, 1.0, coordinate_bounds=(1.0, 0.0))


@pytest.mark.parametrize("library", ADAPTERS)
def test_at_a_huge_budget_the_two_pass_variant_is_the_mean_clipped_to_its_private_bounds(library, data):
    # a small quantile share: python-dp refuses Percentile epsilons above 50 (below)
    estimate = run(library, data, 1e10, bounds_from="quantiles", quantile_levels=(0.1, 0.8), quantile_share=1e-7)
    lower, upper = estimate.diagnostics["private_bounds"]
    np.testing.assert_allclose(estimate.mean, clipped_mean(data, lower, upper), rtol=0, atol=1e-4)
    below_lower, below_upper = (np.mean(data < lower, axis=0), np.mean(data < upper, axis=0))
    # the private quantiles are near the requested ones (OpenDP's to its grid of 1024 candidates)
    np.testing.assert_allclose(below_lower, 0.1, atol=0.03)
    np.testing.assert_allclose(below_upper, 0.8, atol=0.03)


def test_coordinates_whose_private_bounds_coincide_release_them_and_leave_their_mean_share_unspent():
    # constant columns at one of OpenDP's candidates: both quantiles find it, the clipped mean is constant
    value = np.linspace(*BOUNDS, 1024)[600]
    x = np.column_stack([np.full(N, value), np.random.default_rng(2).normal(1.0, 1.0, N), np.full(N, value)])
    estimate = run("opendp", x, 1e6, bounds_from="quantiles")
    assert estimate.diagnostics["degenerate_coordinates"] == 2
    assert estimate.mean[0] == estimate.mean[2] == value
    ledger = dict(estimate.ledger)
    assert ledger[UNSPENT] == pytest.approx(0.5e6 * 2 / 3, rel=1e-12)
    assert math.isclose(estimate.rho_total, 1e6, rel_tol=1e-12)
    assert math.isclose(estimate.diagnostics["accountant_rho"], estimate.rho_spent, rel_tol=1e-9)


def std_ratio_bounds(calls):
    """Bounds for (empirical std / true std) of ``calls`` i.i.d. Laplace draws: the sample variance
    has relative std sqrt(5 / calls) (Laplace kurtosis 6), taken at 4.5 of them, which also covers
    Gaussian draws."""
    spread = 4.5 * math.sqrt(5.0 / calls)
    return math.sqrt(1.0 - spread), math.sqrt(1.0 + spread)


CALLS, NOISE_N, NOISE_RHO = 300, 200, 0.02
WIDTH = BOUNDS[1] - BOUNDS[0]


def noise_draws(library, x):
    return np.concatenate([run(library, x, NOISE_RHO, seed=seed).mean - clipped_mean(x, *BOUNDS)
                           for seed in range(CALLS)])


@pytest.mark.parametrize("library", ADAPTERS)
def test_the_noise_has_the_std_of_the_library_s_mechanism_at_the_calibrated_budget(library):
    """Data at the universe's midpoint: OpenDP's Gaussian has std ``mean_scale``, the calibration of
    sensitivity (hi - lo) / n at rho / d; diffprivlib's Laplace mean std sqrt(2) (hi - lo) / (n eps);
    python-dp's BoundedMean the same from its normalised sum (the noisy count multiplies a sum of 0)."""
    x = np.full((NOISE_N, 2), (BOUNDS[0] + BOUNDS[1]) / 2)
    draws = noise_draws(library, x)
    rho_coordinate = NOISE_RHO / 2
    if library == "opendp":
        expected = WIDTH / NOISE_N / math.sqrt(2 * rho_coordinate)
        assert run(library, x, NOISE_RHO).diagnostics["mean_scale"] == pytest.approx(expected, rel=1e-9)
    else:
        expected = math.sqrt(2) * WIDTH / (NOISE_N * math.sqrt(2 * rho_coordinate))
    low, high = std_ratio_bounds(draws.size)
    assert low < np.std(draws) / expected < high, (np.std(draws), expected)
    assert abs(np.mean(draws)) < 5 * expected / math.sqrt(draws.size)


def test_python_dp_spends_half_its_epsilon_on_the_count_and_half_on_the_normalised_sum():
    """At 3/4 of the universe the noisy count matters too: the estimate's error is
    (Z_sum - (hi - lo) / 4 Z_count) / n with Laplace scales (hi - lo) / eps and 2 / eps. The sum's
    scale is what makes BoundedMean eps-DP under replace-one (docs/design.md §5.10)."""
    x = np.full((NOISE_N, 2), BOUNDS[0] + 0.75 * WIDTH)
    draws = noise_draws("pydp", x)
    eps = math.sqrt(2 * NOISE_RHO / 2)
    expected = math.sqrt(2 * (WIDTH / eps) ** 2 + (WIDTH / 4) ** 2 * 2 * (2 / eps) ** 2) / NOISE_N
    low, high = std_ratio_bounds(draws.size)
    assert low < np.std(draws) / expected < high, (np.std(draws), expected)


# ---------------------------------------------------------------- randomness


@pytest.mark.parametrize("variant", VARIANTS)
def test_diffprivlib_is_reproducible_from_the_generator_and_draws_one_integer_from_it(variant, data):
    first, again, other = (run("diffprivlib", data, 0.5, seed=seed, bounds_from=variant) for seed in (3, 3, 4))
    assert first.mean.tobytes() == again.mean.tobytes()
    assert not np.any(first.mean == other.mean)
    rng = np.random.default_rng(3)
    diffprivlib_mean(data, rho=0.5, bounds=BOUNDS, rng=rng, bounds_from=variant)
    assert rng.integers(2**32) == np.random.default_rng(3).integers(2**32, size=2)[1]


@pytest.mark.parametrize("library", ["opendp", "pydp"])
def test_opendp_and_python_dp_cannot_be_seeded_and_leave_the_generator_untouched(library, data):
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    first = ADAPTERS[library](data, rho=0.5, bounds=BOUNDS, rng=rng)
    second = ADAPTERS[library](data, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(5))
    assert rng.bit_generator.state == state
    assert first.diagnostics["seeded"] is False
    assert not np.any(first.mean == second.mean)  # same seed, different draws: OS entropy


# ---------------------------------------------------------------- sparse input


@pytest.fixture(scope="module")
def sparse_binary():
    return scipy.sparse.random(400, 6, density=0.3, format="csr", random_state=8, data_rvs=np.ones)


@pytest.mark.parametrize("limit", [adapters.DENSE_LIMIT_BYTES, 8 * 400 * 2], ids=["one_block", "blocks_of_2"])
@pytest.mark.parametrize("library", ADAPTERS)
def test_sparse_input_gives_the_dense_result(library, limit, sparse_binary):
    dense = sparse_binary.toarray()
    options = {"rho": 1e10, "bounds": (0.0, 1.0), "dense_limit_bytes": limit}
    from_sparse = ADAPTERS[library](sparse_binary, rng=np.random.default_rng(1), **options)
    from_dense = ADAPTERS[library](dense, rng=np.random.default_rng(1), **options)
    assert from_sparse.mean.shape == (6,)
    np.testing.assert_allclose(from_sparse.mean, dense.mean(axis=0), rtol=0, atol=1e-6)
    if library == "diffprivlib":  # the same draws in the same order
        assert from_sparse.mean.tobytes() == from_dense.mean.tobytes()


@pytest.mark.parametrize("library", ADAPTERS)
def test_the_two_pass_variant_on_sparse_input_clips_to_its_private_bounds(library):
    # Values of both signs: the tied zeros lie between the quantiles (at this budget diffprivlib's quantile
    # cannot sample inside a block of ties, below). A small quantile share: python-dp's Percentile slows
    # down on ties at a large eps.
    values = np.random.default_rng(9).uniform(-1.0, 1.0, size=1200)
    x = scipy.sparse.random(400, 4, density=0.75, format="csr", random_state=9, data_rvs=lambda size: values[:size])
    estimate = ADAPTERS[library](x, rho=1e12, bounds=(-1.0, 1.0), rng=np.random.default_rng(1),
                                 bounds_from="quantiles", quantile_share=1e-10, dense_limit_bytes=8 * 400 * 3)
    lower, upper = estimate.diagnostics["private_bounds"]
    assert np.all(lower < 0) and np.all(upper > 0)
    np.testing.assert_allclose(estimate.mean, clipped_mean(x.toarray(), lower, upper), rtol=0, atol=1e-6)


def test_diffprivlib_s_quantile_failing_on_tied_values_is_one_clear_error(sparse_binary):
    with pytest.raises(ValueError, match=r"diffprivlib's tools\.quantile fails on this x.*rho=100\.0.*tied"):
        diffprivlib_mean(sparse_binary, rho=100.0, bounds=(0.0, 1.0), rng=np.random.default_rng(0),
                         bounds_from="quantiles")


def test_python_dp_percentile_epsilons_above_its_slow_range_are_refused_naming_rho(data):
    # Percentile epsilon e: replace-one eps 2 e, rho (2 e)^2 / 2 per call, 2 d calls with half of rho
    rho = 8 * D * (2 * adapters.PYDP_MAX_PERCENTILE_EPSILON) ** 2
    with pytest.raises(ValueError, match=r"rho=.* gives python-dp's Percentile epsilon 100 per call, above 50"):
        run("pydp", data, rho, bounds_from="quantiles")
    at_the_limit = run("pydp", data, rho / 4 * (1 - 1e-9), bounds_from="quantiles")
    assert at_the_limit.diagnostics["quantile_library_eps"] == pytest.approx(50)


@pytest.mark.parametrize("library", ADAPTERS)
def test_sparse_input_whose_columns_exceed_the_dense_limit_is_refused_naming_library_shape_and_limit(
        library, sparse_binary):
    pattern = rf"{library} needs the columns of x dense.*shape \(400, 6\).*3200 bytes.*dense_limit_bytes=3000"
    with pytest.raises(ValueError, match=pattern):
        ADAPTERS[library](sparse_binary, rho=1.0, bounds=(0.0, 1.0), rng=np.random.default_rng(0),
                          dense_limit_bytes=3000)


def test_a_shared_sample_gives_the_bytes_of_its_array(data):
    shared = SharedSample(data)
    for variant in VARIANTS:
        assert (run("diffprivlib", shared, 0.5, bounds_from=variant).mean.tobytes()
                == run("diffprivlib", data, 0.5, bounds_from=variant).mean.tobytes())
    assert shared.kept_bytes == data.nbytes  # the transposed copy, kept for later mechanisms


# ---------------------------------------------------------------- bad options


BAD_OPTIONS = [
    ({"quantile_share": 0.0}, r"quantile_share must be in \(0, 1\), got quantile_share=0\.0"),
    ({"quantile_share": 1.0}, r"quantile_share must be in \(0, 1\), got quantile_share=1\.0"),
    ({"quantile_share": 1.5}, r"quantile_share must be in \(0, 1\)"),
    ({"quantile_levels": (0.9, 0.1)}, r"quantile_levels must be two increasing numbers in \(0, 1\).*\(0\.9, 0\.1\)"),
    ({"quantile_levels": (0.0, 0.5)}, r"quantile_levels must be two increasing.*\(0\.0, 0\.5\)"),
    ({"quantile_levels": (0.5, 1.0)}, r"quantile_levels must be two increasing.*\(0\.5, 1\.0\)"),
    ({"quantile_levels": (0.5,)}, r"quantile_levels must be two increasing"),
    ({"quantile_levels": "ab"}, r"quantile_levels must be two increasing"),
    ({"rho": 0.0}, r"rho must be finite and > 0, got rho=0\.0"),
    ({"rho": -1.0}, r"rho must be finite and > 0, got rho=-1\.0"),
    ({"dense_limit_bytes": 0}, r"dense_limit_bytes must be a positive integer, got dense_limit_bytes=0"),
]


@pytest.mark.parametrize(("options", "pattern"), BAD_OPTIONS, ids=[str(options) for options, _ in BAD_OPTIONS])
@pytest.mark.parametrize("library", ADAPTERS)
def test_bad_options_raise_one_value_error_naming_them(library, options, pattern, data):
    arguments = {"rho": 1.0, "bounds": BOUNDS, "rng": np.random.default_rng(0), "bounds_from": "quantiles"} | options
    with pytest.raises(ValueError, match=pattern):
        ADAPTERS[library](data, **arguments)


@pytest.mark.parametrize("library", ADAPTERS)
def test_an_unknown_recipe_is_refused_naming_the_library_s_recipes(library, data):
    recipes = "'automatic', 'given', 'quantiles'" if library == "pydp" else "'given', 'quantiles'"
    with pytest.raises(ValueError, match=rf"bounds_from must be one of \[{recipes}\], got bounds_from='data'"):
        run(library, data, 1.0, bounds_from="data")


@pytest.mark.parametrize("library", ["opendp", "diffprivlib"])
def test_only_python_dp_has_automatic_bounds(library, data):
    with pytest.raises(ValueError, match=r"bounds_from must be one of \['given', 'quantiles'\], got "
                                         r"bounds_from='automatic'"):
        run(library, data, 1.0, bounds_from="automatic")


def test_opendp_s_candidate_spacing_is_checked(data):
    with pytest.raises(ValueError, match=r"candidate_spacing must be one of \['even', 'geometric'\], got "
                                         r"candidate_spacing='log'"):
        run("opendp", data, 1.0, bounds_from="quantiles", candidate_spacing="log")


def test_opendp_needs_at_least_two_quantile_candidates(data):
    with pytest.raises(ValueError, match=r"quantile_candidates must be at least 2, got quantile_candidates=1"):
        run("opendp", data, 1.0, bounds_from="quantiles", quantile_candidates=1)


# ---------------------------------------------------------------- unknown bounds at the library's best


def test_geometric_candidates_grow_from_the_universe_s_centre_to_its_edges():
    lo, hi = -25600.0, 25600.0
    candidates = adapters.quantile_candidates(lo, hi, 1024, "geometric")
    assert candidates[0] == lo and candidates[-1] == hi and 0.0 in candidates
    assert candidates.size == 1025 and np.all(np.diff(candidates) > 0)
    offsets = candidates[candidates > 0]
    assert offsets[0] == pytest.approx(hi * adapters.GEOMETRIC_NEAREST)
    ratios = offsets[1:] / offsets[:-1]
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-9)  # one ratio: the same relative resolution everywhere
    # about the centre of a universe that is not symmetric about 0
    shifted = adapters.quantile_candidates(0.0, 1.0, 64, "geometric")
    assert shifted[0] == 0.0 and shifted[-1] == 1.0 and 0.5 in shifted and shifted.size == 65
    np.testing.assert_array_equal(adapters.quantile_candidates(lo, hi, 1024, "even"), np.linspace(lo, hi, 1024))


def test_geometric_candidates_resolve_data_far_narrower_than_the_universe():
    """N(10, 1) in a universe 25,600 wide each way (Gaussian C's, d = 64): at a budget where the
    exponential mechanism picks the best candidate, the private quantiles land within the geometric
    grid's spacing (about 0.27 near 10) of the data's 5 % and 95 % quantiles."""
    x = np.random.default_rng(3).normal(10.0, 1.0, size=(4000, 1))
    estimate = opendp_mean(x, rho=1e4, bounds=(-25600.0, 25600.0), rng=np.random.default_rng(0),
                           bounds_from="quantiles", candidate_spacing="geometric")
    lower, upper = estimate.diagnostics["private_bounds"][:, 0]
    assert abs(lower - np.quantile(x, 0.05)) < 0.5 and abs(upper - np.quantile(x, 0.95)) < 0.5
    assert estimate.diagnostics["candidate_spacing"] == "geometric"


def test_python_dp_s_automatic_bounds_book_twice_the_library_s_epsilon_under_replace_one(data):
    """BoundedMean without bounds is an add/remove mechanism: at library epsilon e it is 2e-DP under
    replace-one, so each coordinate is called at e = eps_j / 2 and booked at (2e)^2 / 2 = rho_j."""
    x = np.random.default_rng(4).normal(1.0, 1.5, size=(20000, D))
    estimate = run("pydp", x, 3.0, bounds_from="automatic")
    assert math.isclose(estimate.rho_total, 3.0, rel_tol=1e-12)
    assert math.isclose(estimate.diagnostics["accountant_rho"], 3.0, rel_tol=1e-9)
    assert estimate.diagnostics["mean_library_eps"] == pytest.approx(math.sqrt(2 * 3.0 / D) / 2)
    assert "without bounds" in estimate.ledger[0].step
    # the bounds it finds hold the data: the estimate is near the mean (its noise is far below 0.1 here)
    np.testing.assert_allclose(estimate.mean, x.mean(axis=0), atol=0.1)


def test_python_dp_s_automatic_bounds_refuse_too_little_data_as_a_refusal_naming_the_budget(data):
    with pytest.raises(mechanisms.MechanismRefusal,
                       match=r"BoundedMean without bounds refuses 300 values at library epsilon 0\.0408248 "
                             r"\(rho=0\.01 over 3 coordinates\): its automatic bounds need more data"):
        run("pydp", data, 0.01, bounds_from="automatic")


@pytest.mark.parametrize("variant", ["given", "automatic", "quantiles"])
def test_python_dp_s_booking_reads_the_algorithm_object_and_fails_where_it_no_longer_fits(variant, data,
                                                                                          monkeypatch):
    """The ledger check reads each object's own epsilon, delta and contribution bounds: an object
    that reports an approximate-DP delta (a library that changed) stops the call."""
    import pydp.algorithms.laplacian as laplacian

    x = np.random.default_rng(4).normal(1.0, 1.5, size=(20000, D))
    assert run("pydp", x, 1.0, bounds_from=variant).rho_total == pytest.approx(1.0)
    for name in ("BoundedMean", "Percentile"):
        original = getattr(laplacian, name)
        monkeypatch.setattr(laplacian, name, type(name, (original,), {"delta": property(lambda self: 1e-6)}))
    with pytest.raises(RuntimeError, match=r"reports \{'delta': 1e-06, .*no longer holds"):
        run("pydp", x, 1.0, bounds_from=variant)
