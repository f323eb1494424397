"""GRS's KnownVar and UnkVar applied coordinate by coordinate in the local model (mechanisms/local/grs.py,
docs/design.md §5.13): the (eps, delta) ledger, the noise formula, the exact Binomial aggregates
against the per-user randomizers, accuracy on Gaussian data as the IOME paper's Figures 10-12 run
it, determinism and the input checks."""
import math

import numpy as np
import pytest

from mechanisms import SharedSample
from mechanisms.accounting import per_step_budget
from mechanisms.local.grs import (
    bit_flip_report,
    bit_flip_totals,
    grs_known_var,
    grs_unknown_var,
    randomized_response_report,
    randomized_response_total,
)

N, D, EPS, DELTA, BETA = 100_000, 2, 1.0, 1e-7, 0.01
RADIUS = 20.0 * math.sqrt(D)  # the IOME paper's R = 20 sqrt(d) (docs/design.md §6.3)


def gaussian_rows(n, d, seed, mean=0.0):
    return np.random.default_rng(seed).standard_normal((n, d)) + mean


def known_sigma(mechanism):
    """KnownVar is given sigma (the engine's max_std); UnkVar takes none."""
    return {"max_std": 1.0} if mechanism is grs_known_var else {}


def run_known(x, seed=1, **options):
    options = {"prior_ball": (0.0, RADIUS), "max_std": 1.0} | options
    return grs_known_var(x, eps=EPS, bounds=(-RADIUS, RADIUS), rng=np.random.default_rng(seed), **options)


def run_unknown(x, seed=1, **options):
    options = {"prior_ball": (0.0, RADIUS)} | options
    return grs_unknown_var(x, eps=EPS, bounds=(-RADIUS, RADIUS), rng=np.random.default_rng(seed), **options)


def expected_l2(estimate, d):
    """sqrt(E||error||^2) of the mean step alone: per coordinate the clipped values' sampling
    variance (at most sigma^2 = 1) plus the noise s^2, over m users."""
    users = estimate.diagnostics["groups"]["mean"]
    per_coordinate = (1.0 + np.asarray(estimate.diagnostics["noise_std"]) ** 2) / users
    return math.sqrt(float(np.sum(per_coordinate * np.ones(d))))


@pytest.fixture(scope="module")
def gaussian_data():
    return gaussian_rows(N, D, seed=7, mean=3.0)


# ---------------------------------------------------------------- ledger and noise


@pytest.mark.parametrize("mechanism", [run_known, run_unknown])
@pytest.mark.parametrize("d, accounting", [(2, "basic composition"), (128, "advanced composition")])
def test_ledger_holds_the_requested_eps_and_delta(mechanism, d, accounting):
    estimate = mechanism(gaussian_rows(2000, d, seed=0))
    assert estimate.unit == "eps"
    assert estimate.total == EPS and estimate.spent == EPS
    assert estimate.delta_total == DELTA
    assert len(estimate.ledger) == 1 and estimate.ledger[0].step == "coordinates_advanced_composition"
    coordinate_eps, coordinate_delta = per_step_budget(EPS, DELTA, steps=d)
    assert estimate.diagnostics["coordinate_eps"] == coordinate_eps
    assert estimate.diagnostics["coordinate_delta"] == coordinate_delta
    assert estimate.diagnostics["accounting"] == accounting
    assert estimate.diagnostics["requested_eps"] == EPS and estimate.diagnostics["delta"] == DELTA
    assert estimate.mean.shape == (d,) and np.all(np.isfinite(estimate.mean))


@pytest.mark.parametrize("mechanism", [run_known, run_unknown])
def test_noise_std_is_the_dwork_roth_gaussian_mechanism(mechanism):
    estimate = mechanism(gaussian_rows(5000, 4, seed=0))
    diagnostics = estimate.diagnostics
    eps_j, delta_j = diagnostics["coordinate_eps"], diagnostics["coordinate_delta"]
    diff = np.asarray(diagnostics["half_width"])
    np.testing.assert_allclose(diagnostics["noise_std"], 2.0 * diff * math.sqrt(2.0 * math.log(1.25 / delta_j)) / eps_j,
                               rtol=1e-15)


def test_half_widths_follow_grs():
    n = 5000
    known = run_known(gaussian_rows(n, 3, seed=0), max_std=2.0)
    np.testing.assert_allclose(known.diagnostics["half_width"], 2.0 * (2.0 + math.sqrt(2.0 * math.log(8 * n / BETA))))
    unknown = run_unknown(gaussian_rows(n, 3, seed=0))
    sigma_hat = unknown.diagnostics["sigma_hat"]
    assert np.all(sigma_hat >= 0)
    np.testing.assert_allclose(unknown.diagnostics["half_width"],
                               sigma_hat * (0.5 + 2.0 * math.sqrt(2.0 * math.log(8 * n / BETA))))
    spread = unknown.diagnostics["phi1_quantile"] - unknown.diagnostics["centre"]
    np.testing.assert_allclose(sigma_hat, np.maximum(spread, 0.0))


def test_groups_are_disjoint_shares_of_the_users():
    known = run_known(gaussian_rows(1001, 2, seed=0))
    assert known.diagnostics["groups"] == {"locate": 500, "mean": 501}
    assert known.diagnostics["bins"] == int(2 * RADIUS + 1)
    unknown = run_unknown(gaussian_rows(10_000, 2, seed=0))
    groups, rounds = unknown.diagnostics["groups"], unknown.diagnostics["rounds"]
    assert rounds == {"median": math.ceil(math.log2(8 * RADIUS / 0.1)),
                      "spread": math.ceil(math.log2((8 * RADIUS + 4 * RADIUS) / 0.1))}
    assert groups["median_per_round"] == 2500 // rounds["median"]
    assert groups["median"] == groups["median_per_round"] * rounds["median"]
    assert groups["spread"] == groups["spread_per_round"] * rounds["spread"]
    assert groups["median"] + groups["spread"] + groups["mean"] == 10_000


# ---------------------------------------------------------------- exact aggregates against the per-user randomizers

REPETITIONS = 2000


def assert_moments(samples, mean, variance):
    """Sample mean within 4 standard errors of ``mean`` and sample variance within 4 standard errors
    (normal approximation, sd of a sample variance ~ variance sqrt(2 / (k - 1))) of ``variance``."""
    k = samples.shape[0]
    np.testing.assert_array_less(np.abs(samples.mean(axis=0) - mean), 4.0 * np.sqrt(variance / k))
    np.testing.assert_array_less(np.abs(samples.var(axis=0, ddof=1) - variance),
                                 4.0 * variance * math.sqrt(2 / (k - 1)))


def test_bit_flip_totals_match_the_per_user_reports():
    eps, size, users = 0.8, 5, 40
    bins = np.repeat(np.arange(size), [20, 10, 6, 4, 0])  # users per bin 20, 10, 6, 4, 0
    counts = np.bincount(bins, minlength=size)
    flip = 1.0 / (math.exp(eps / 2) + 1.0)
    mean, variance = counts * (1 - flip) + (users - counts) * flip, np.full(size, users * flip * (1 - flip))
    rng = np.random.default_rng(11)
    per_user = np.stack([bit_flip_report(bins, size=size, eps=eps, rng=rng).sum(axis=0)
                         for _ in range(REPETITIONS)])
    aggregate = bit_flip_totals(np.tile(counts, (REPETITIONS, 1)), users, eps=eps, rng=np.random.default_rng(12))
    assert per_user.shape == aggregate.shape == (REPETITIONS, size)
    assert_moments(per_user, mean, variance)
    assert_moments(aggregate, mean, variance)


def test_bit_flip_report_is_a_flipped_one_hot_vector():
    reports = bit_flip_report(np.array([2, 0]), size=4, eps=50.0, rng=np.random.default_rng(0))  # flips ~ e^-25
    np.testing.assert_array_equal(reports, [[0, 0, 1, 0], [1, 0, 0, 0]])
    assert bit_flip_report(3, size=4, eps=1.0, rng=np.random.default_rng(0)).shape == (4,)
    with pytest.raises(ValueError, match="bins"):
        bit_flip_report(np.array([4]), size=4, eps=1.0, rng=np.random.default_rng(0))


def test_randomized_response_totals_match_the_per_user_reports():
    eps, users = 0.6, 50
    yes = np.array([0, 10, 25, 50])
    keep = math.exp(eps) / (math.exp(eps) + 1)
    mean = yes * keep + (users - yes) * (1 - keep)
    variance = np.full(yes.size, users * keep * (1 - keep))
    answers = np.arange(users)[:, None] < yes  # users x cases, yes[j] ones in column j
    rng = np.random.default_rng(21)
    per_user = np.stack([randomized_response_report(answers, eps=eps, rng=rng).sum(axis=0)
                         for _ in range(REPETITIONS)])
    aggregate = randomized_response_total(np.tile(yes, (REPETITIONS, 1)), users, eps=eps,
                                          rng=np.random.default_rng(22))
    assert_moments(per_user, mean, variance)
    assert_moments(aggregate, mean, variance)


# ---------------------------------------------------------------- accuracy on the IOME paper's Gaussian data


def test_known_var_is_accurate_on_gaussian_data(gaussian_data):
    estimate = run_known(gaussian_data)
    error = np.linalg.norm(estimate.mean - 3.0)
    assert error < 5.0 * expected_l2(estimate, D)
    np.testing.assert_array_less(np.abs(estimate.diagnostics["centre"] - 3.0), 1.0)


def test_unknown_var_is_accurate_on_gaussian_data(gaussian_data):
    estimate = run_unknown(gaussian_data)
    error = np.linalg.norm(estimate.mean - 3.0)
    assert error < 5.0 * expected_l2(estimate, D)
    np.testing.assert_array_less(np.abs(estimate.diagnostics["centre"] - 3.0), 1.0)
    sigma_hat = estimate.diagnostics["sigma_hat"]
    assert np.all((sigma_hat > 0.5) & (sigma_hat < 2.0))


@pytest.mark.parametrize("mechanism", [run_known, run_unknown])
def test_shifted_data_with_the_prior_centred_at_zero(mechanism):
    d = 4
    radius = 20.0 * math.sqrt(d)
    estimate = mechanism(gaussian_rows(N, d, seed=3, mean=5.0), prior_ball=(np.zeros(d), radius))
    assert np.linalg.norm(estimate.mean - 5.0) < 5.0 * expected_l2(estimate, d)
    np.testing.assert_array_less(np.abs(estimate.diagnostics["centre"] - 5.0), 1.0)


def test_range_from_bounds_without_a_prior_ball():
    d = 2
    estimate = grs_known_var(gaussian_rows(20_000, d, seed=4, mean=-7.0), eps=EPS, bounds=(-30.0, 10.0),
                             rng=np.random.default_rng(0), max_std=1.0)
    assert estimate.diagnostics["bins"] == int(2 * 20.0 + 1)  # R = (hi - lo) / 2 = 20 around c = -10
    np.testing.assert_array_less(np.abs(estimate.diagnostics["centre"] + 7.0), 1.0)
    assert np.linalg.norm(estimate.mean + 7.0) < 5.0 * expected_l2(estimate, d)


# ---------------------------------------------------------------- determinism


@pytest.mark.parametrize("mechanism", [run_known, run_unknown])
def test_same_seed_same_bytes_and_other_seeds_differ(mechanism):
    x = gaussian_rows(3000, 3, seed=5)
    first, again, other = mechanism(x, seed=9), mechanism(x, seed=9), mechanism(x, seed=10)
    assert first.mean.tobytes() == again.mean.tobytes()
    assert first.mean.tobytes() != other.mean.tobytes()
    assert mechanism(SharedSample(x), seed=9).mean.tobytes() == first.mean.tobytes()


def test_known_var_replayed_by_hand():
    """The documented order of randomness: the permutation, the bin counts' Binomials, the Gaussians."""
    n, d, sigma = 400, 2, 1.0
    x = gaussian_rows(n, d, seed=6, mean=1.0)
    estimate = run_known(x, seed=8, max_std=sigma)
    eps_j, delta_j = per_step_budget(EPS, DELTA, steps=d)
    rng = np.random.default_rng(8)
    order = rng.permutation(n)
    bins = int(2 * RADIUS / sigma + 1)
    index = np.clip(np.floor((x[order[:200]] + RADIUS) / sigma), 0, bins - 1).astype(int)
    counts = np.stack([np.bincount(index[:, j], minlength=bins) for j in range(d)])
    totals = bit_flip_totals(counts, 200, eps=eps_j, rng=rng)
    centre = -RADIUS + (np.argmax(totals, axis=1) + 0.5) * sigma
    diff = sigma * (2 + math.sqrt(2 * math.log(8 * n / BETA)))
    s = 2 * diff * math.sqrt(2 * math.log(1.25 / delta_j)) / eps_j
    clipped = np.clip(x[order[200:]], centre - diff, centre + diff)
    mean = clipped.mean(axis=0) + rng.standard_normal(d) * s / math.sqrt(200)
    np.testing.assert_array_equal(estimate.diagnostics["centre"], centre)
    np.testing.assert_allclose(estimate.mean, mean, rtol=1e-12)


# ---------------------------------------------------------------- bad input

X = gaussian_rows(2000, 2, seed=0)
GOOD = {"eps": EPS, "bounds": (-RADIUS, RADIUS)}


@pytest.mark.parametrize("mechanism", [grs_known_var, grs_unknown_var])
@pytest.mark.parametrize("options, name", [
    ({"eps": 0.0}, "eps"), ({"eps": -1.0}, "eps"), ({"eps": math.nan}, "eps"), ({"eps": "1"}, "eps"),
    ({"eps": True}, "eps"), ({"eps": 2.5}, "eps"), ({"eps": 1e-300}, "eps"),  # eps_j >= 1; too small to split
    ({"delta": 0.0}, "delta"), ({"delta": 1.0}, "delta"), ({"delta": -1e-7}, "delta"), ({"delta": 5e-324}, "delta"),
    ({"beta": 0.0}, "beta"), ({"beta": 1.0}, "beta"),
    ({"bounds": (1.0, -1.0)}, "bounds"), ({"bounds": (0.0, math.inf)}, "bounds"), ({"bounds": "ab"}, "bounds"),
    ({"rng": 42}, "rng"), ({"rng": None}, "rng"),
    ({"prior_ball": (0.0,)}, "prior_ball"), ({"prior_ball": (0.0, -1.0)}, "prior_ball"),
    ({"prior_ball": (np.zeros(3), 1.0)}, "prior_ball"),
])
def test_bad_common_input_names_the_parameter(mechanism, options, name):
    arguments = GOOD | {"rng": np.random.default_rng(0)} | known_sigma(mechanism) | options
    with pytest.raises(ValueError, match=name):
        mechanism(X, **arguments)


@pytest.mark.parametrize("options, name", [
    ({"max_std": None}, "max_std"), ({"max_std": 0.0}, "max_std"), ({"max_std": -1.0}, "max_std"),
    ({"max_std": math.inf}, "max_std"), ({"max_std": 1e-300}, "max_std"),  # 1e301 bins
    ({"locate_share": 0.0}, "locate_share"), ({"locate_share": 1.0}, "locate_share"),
    ({"locate_share": "half"}, "locate_share"),
])
def test_bad_known_var_input_names_the_parameter(options, name):
    arguments = GOOD | {"rng": np.random.default_rng(0), "max_std": 1.0} | options
    with pytest.raises(ValueError, match=name):
        grs_known_var(X, **arguments)


@pytest.mark.parametrize("options, name", [
    ({"sigma_min": 0.0}, "sigma_min"), ({"sigma_min": -0.1}, "sigma_min"), ({"sigma_min": None}, "sigma_min"),
    ({"sigma_min": 2 * RADIUS}, "sigma_min"),  # above sigma_max = R
    ({"sigma_max": 0.0}, "sigma_max"), ({"sigma_min": 1.0, "sigma_max": 0.5}, "sigma_max"),
    ({"sigma_max": math.nan}, "sigma_max"),
    ({"median_share": 0.0}, "median_share"), ({"spread_share": 1.0}, "spread_share"),
    ({"median_share": 0.6, "spread_share": 0.4}, "median_share"),
])
def test_bad_unknown_var_input_names_the_parameter(options, name):
    arguments = GOOD | {"rng": np.random.default_rng(0)} | options
    with pytest.raises(ValueError, match=name):
        grs_unknown_var(X, **arguments)


@pytest.mark.parametrize("mechanism, n", [(grs_known_var, 1), (grs_unknown_var, 3), (grs_unknown_var, 40)])
def test_too_few_users_names_n(mechanism, n):
    with pytest.raises(ValueError, match=f"n={n}"):
        mechanism(gaussian_rows(n, 2, seed=0), **GOOD, rng=np.random.default_rng(0), **known_sigma(mechanism))


def test_bad_data_is_refused():
    with pytest.raises(ValueError, match="x"):
        grs_known_var(np.array([[1.0, math.nan]] * 10), **GOOD, rng=np.random.default_rng(0), max_std=1.0)
