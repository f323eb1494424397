"""The authors' Table 2 standard-deviation estimators (PLAN Appendix D.2): std_direct and
std_general under published and exact accounting.

Budgets: the estimator gets budget_share rho (1/8 by default); the direct one spends half of
it on each quantile, the general one half of it on its median (divided by 2k under published
accounting). Statistical tests use fixed seeds; their tolerances are stated where they are set.
"""
import math
import re

import numpy as np
import pytest
from scipy.special import ndtri
from scipy.stats import chi2, chisquare

import mechanisms
import mechanisms.variance as variance_module
from mechanisms import REGISTRY, make_mechanism, shuffled_groups, std_direct, std_general
from mechanisms.accounting import UNSPENT

BOUNDS = (5.0, 15.0)  # N(10, 1) +- 5 sigma, the evaluation's universe for sigma = 1


def gaussian(std=1.0, *, seed=0, n=2000, d=1):
    return 10.0 + std * np.random.default_rng([0, seed]).standard_normal((n, d))


def spent(estimate):
    return {entry.step: entry.rho for entry in estimate.ledger if entry.step != UNSPENT}


def unspent(estimate):
    return sorted(entry.rho for entry in estimate.ledger if entry.step == UNSPENT)


# ---------------------------------------------------------------- ledgers


@pytest.mark.parametrize("quantile", [0.75, 0.841, 0.9])
@pytest.mark.parametrize("rho", [0.001, 0.01, 3.0])
def test_direct_exact_ledger_spends_a_sixteenth_on_each_quantile_and_books_seven_eighths_unspent(rho, quantile):
    result = std_direct(gaussian(n=500, d=3), rho=rho, bounds=BOUNDS, rng=np.random.default_rng(0),
                        quantile=quantile)
    assert spent(result) == pytest.approx({"median": rho / 16, "quantile": rho / 16}, rel=1e-12)
    assert unspent(result) == pytest.approx([7 * rho / 8], rel=1e-12)
    assert result.rho_total == pytest.approx(rho, rel=1e-12)
    assert result.diagnostics["true_rho"] == pytest.approx(rho / 8, rel=1e-12)


@pytest.mark.parametrize("quantile", [0.75, 0.841, 0.9])
def test_direct_published_ledger_books_the_true_cost_of_the_max_q_sensitivity(quantile):
    """A step calibrated for sensitivity s when the swap moves the rank by 1 spends (1 / s)^2
    times its rho: 4 rho / 16 for the median, rho / 16 / max(q, 1 - q)^2 for the quantile."""
    rho = 0.01
    result = std_direct(gaussian(n=500), rho=rho, bounds=BOUNDS, rng=np.random.default_rng(0), quantile=quantile,
                        accounting="published")
    expected = {"median": 4 * rho / 16, "quantile": rho / 16 / quantile**2}
    assert spent(result) == pytest.approx(expected, rel=1e-12)
    assert unspent(result) == pytest.approx([7 * rho / 8], rel=1e-12)
    assert result.diagnostics["true_rho"] == pytest.approx(sum(expected.values()), rel=1e-12)
    assert result.diagnostics["booked_rho"] == pytest.approx(rho / 8, rel=1e-12)
    assert result.rho_total == pytest.approx(7 * rho / 8 + sum(expected.values()), rel=1e-12)


@pytest.mark.parametrize("groups", [1, 2, 4])
@pytest.mark.parametrize("rho", [0.001, 0.01, 3.0])
def test_general_exact_ledger_spends_a_sixteenth_and_books_the_rest_unspent(rho, groups):
    result = std_general(gaussian(n=500, d=2), rho=rho, bounds=BOUNDS, rng=np.random.default_rng(0), groups=groups)
    assert spent(result) == pytest.approx({"median": rho / 16}, rel=1e-12)
    assert unspent(result) == pytest.approx([rho / 16, 7 * rho / 8], rel=1e-12)  # half of rho / 8, and 7 / 8
    assert result.rho_total == pytest.approx(rho, rel=1e-12)
    assert result.diagnostics["true_rho"] == pytest.approx(rho / 16, rel=1e-12)


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_general_published_ledger_books_16_k_squared_times_the_median_rho_it_runs_with(groups):
    """The median runs with rho / 16 / (2k) and sensitivity 1/2 while a person moves 2k values:
    (2k / (1/2))^2 = 16 k^2 times that, i.e. k rho / 2 = 8k times the rho / 16 it books."""
    rho = 0.01
    result = std_general(gaussian(n=500), rho=rho, bounds=BOUNDS, rng=np.random.default_rng(0), groups=groups,
                         accounting="published")
    run_with = rho / 16 / (2 * groups)
    assert spent(result) == pytest.approx({"median": 16 * groups**2 * run_with}, rel=1e-12)
    assert result.diagnostics["true_rho"] == pytest.approx(8 * groups * rho / 16, rel=1e-12)
    assert result.diagnostics["booked_rho"] == pytest.approx(rho / 16, rel=1e-12)
    assert unspent(result) == pytest.approx([rho / 16, 7 * rho / 8], rel=1e-12)


@pytest.mark.parametrize("function", [std_direct, std_general])
def test_budget_share_sets_the_share_used_and_the_rest_is_unspent(function):
    result = function(gaussian(n=500), rho=2.0, bounds=BOUNDS, rng=np.random.default_rng(0), budget_share=0.5)
    assert sum(spent(result).values()) + sum(unspent(result)) == pytest.approx(2.0, rel=1e-12)
    assert max(unspent(result)) == pytest.approx(1.0, rel=1e-12)
    assert result.diagnostics["true_rho"] == pytest.approx(1.0 if function is std_direct else 0.5, rel=1e-12)


# ---------------------------------------------------------------- the exponential mechanism's calibration


class Spy:
    """Records every em_select_sorted call of mechanisms.variance (and makes it)."""

    def __init__(self, monkeypatch):
        self.calls = []
        original = variance_module.em_select_sorted

        def spy(edges, **kwargs):
            self.calls.append({"edges": edges.copy(), **kwargs})
            return original(edges, **kwargs)

        monkeypatch.setattr(variance_module, "em_select_sorted", spy)


@pytest.mark.parametrize("accounting,median_s,quantile_s", [("exact", 1.0, 1.0), ("published", 0.5, 0.9)])
def test_direct_calls_the_exponential_mechanism_with_eps_of_a_sixteenth_and_its_sensitivity(
        monkeypatch, accounting, median_s, quantile_s):
    spy = Spy(monkeypatch)
    rho, d = 0.32, 2
    std_direct(gaussian(n=100, d=d), rho=rho, bounds=BOUNDS, rng=np.random.default_rng(0), quantile=0.9,
               accounting=accounting)
    (median, upper) = spy.calls
    eps = math.sqrt(8 * rho / 16 / d)
    assert (median["q"], median["eps"], median["sensitivity"]) == (0.5, pytest.approx(eps, rel=1e-12), median_s)
    assert (upper["q"], upper["eps"], upper["sensitivity"]) == (0.9, pytest.approx(eps, rel=1e-12), quantile_s)
    assert median["edges"].shape == (d, 102)
    assert np.all(median["edges"][:, 0] == BOUNDS[0]) and np.all(median["edges"][:, -1] == BOUNDS[1])


@pytest.mark.parametrize("groups", [1, 4])
@pytest.mark.parametrize("accounting", ["exact", "published"])
def test_general_median_runs_on_2k_shuffles_over_zero_to_hi_squared_with_its_eps_and_sensitivity(
        monkeypatch, accounting, groups):
    """One person at hi, the others at lo: exactly 2k of the values are nonzero whatever the
    shuffles (n = 40 is a multiple of 2k), each (hi - lo)^2 / 2 / k."""
    spy = Spy(monkeypatch)
    rho, n = 0.5, 40
    x = np.full((n, 1), BOUNDS[0])
    x[7] = BOUNDS[1]
    result = std_general(x, rho=rho, bounds=BOUNDS, rng=np.random.default_rng(3), groups=groups,
                         accounting=accounting)
    (call,) = spy.calls
    published = accounting == "published"
    assert call["q"] == 0.5
    assert call["eps"] == pytest.approx(math.sqrt(8 * rho / 16 / (2 * groups if published else 1)), rel=1e-12)
    assert call["sensitivity"] == (0.5 if published else 2 * groups)
    edges = call["edges"][0]
    assert edges.size == n + 2 and edges[0] == 0.0 and edges[-1] == BOUNDS[1] ** 2
    values = edges[1:-1]
    assert np.count_nonzero(values) == 2 * groups
    np.testing.assert_allclose(values[values > 0], (BOUNDS[1] - BOUNDS[0]) ** 2 / 2 / groups, rtol=1e-12)
    assert result.diagnostics["n_values"] == n


def interval_probabilities(edges, *, q, eps, sensitivity):
    """The exponential mechanism's interval probabilities (as mechanisms.quantiles weighs them), written out:
    width_i * exp(-eps / (2 s) |i - q m|), normalised."""
    m = edges.size - 2
    weights = np.diff(edges) * np.exp(-eps / (2 * sensitivity) * np.abs(np.arange(m + 1) - q * m))
    return weights / weights.sum()


# Many identical columns: each column is one independent draw of the one-column mechanism with
# rho / d; a step of the direct estimator has eps = sqrt(8 rho / 16 / d).
COLUMNS = 40_000
DIRECT_EPS = 3.0  # large enough to tell sensitivity 0.9 from 1 apart
ROW = np.array([0.0, 0.1, 0.3, 0.6, 1.0])
ROW_BOUNDS = (-1.0, 2.0)


@pytest.mark.parametrize("accounting", ["exact", "published"])
@pytest.mark.parametrize("quantile", [0.75, 0.9])
def test_direct_outputs_follow_the_exponential_mechanism_of_its_calibration(accounting, quantile):
    """Interval counts over 40000 columns fit the exponential mechanism's probabilities with
    eps = 3 and the accounting's sensitivity (chi-square p-value above 1e-3 at this seed), and
    not those of the other calibration (p-value below 1e-6: the test tells them apart)."""
    x = np.repeat(ROW[:, None], COLUMNS, axis=1)
    result = std_direct(x, rho=2.0 * DIRECT_EPS**2 * COLUMNS, bounds=ROW_BOUNDS, rng=np.random.default_rng(5),
                        quantile=quantile, accounting=accounting)
    edges = np.concatenate([[ROW_BOUNDS[0]], ROW, [ROW_BOUNDS[1]]])
    for q, key, published_s in [(0.5, "median", 0.5), (quantile, "quantile_value", quantile)]:
        sensitivity, other = (1.0, published_s) if accounting == "exact" else (published_s, 1.0)
        counts = np.bincount(np.searchsorted(edges, result.diagnostics[key], side="right") - 1,
                             minlength=edges.size)[: edges.size - 1]
        fits = chisquare(counts, COLUMNS * interval_probabilities(edges, q=q, eps=DIRECT_EPS, sensitivity=sensitivity))
        misfits = chisquare(counts, COLUMNS * interval_probabilities(edges, q=q, eps=DIRECT_EPS, sensitivity=other))
        assert fits.pvalue > 1e-3 and misfits.pvalue < 1e-6, (key, fits, misfits)
    np.testing.assert_array_equal(result.mean, result.diagnostics["quantile_value"] - result.diagnostics["median"])


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("accounting", ["exact", "published"])
def test_general_output_follows_the_exponential_mechanism_of_its_calibration(accounting, groups):
    """n = 4k persons at lo, one of them at hi: the 4k values are 2k zeros and 2k values
    V = (hi - lo)^2 / (2k), so the intervals with mass are [0, V] at the target rank 2k and
    [V, hi^2] at rank 4k: P(0 < median < V) = V / (V + (hi^2 - V) exp(-2k c)), c = eps / (2 s).
    Over 40000 columns within 5 binomial standard errors, and the other calibration far off."""
    k, rho = groups, 2.0  # per column: the median's rho / 16 = 1/8, eps = 1 (exact), 1 / sqrt(2k) (published)
    n = 4 * k
    lo, hi = BOUNDS
    column = np.full(n, lo)
    column[0] = hi
    x = np.repeat(column[:, None], COLUMNS, axis=1)
    result = std_general(x, rho=rho * COLUMNS, bounds=BOUNDS, rng=np.random.default_rng(6), groups=k,
                         accounting=accounting)
    v, top = (hi - lo) ** 2 / (2 * k), hi * hi

    def probability(c):
        return v / (v + (top - v) * math.exp(-2 * k * c))

    exact_c, published_c = 1.0 / (4 * k), 1.0 / math.sqrt(2 * k) / (2 * 0.5)
    expected, other = (exact_c, published_c) if accounting == "exact" else (published_c, exact_c)
    medians = result.diagnostics["group_median"]
    frequency = np.mean((medians > 0) & (medians < v))
    tolerance = 5 * math.sqrt(probability(expected) * (1 - probability(expected)) / COLUMNS)
    assert frequency == pytest.approx(probability(expected), abs=tolerance)
    assert abs(frequency - probability(other)) > 4 * tolerance


# ---------------------------------------------------------------- the 2k shuffles


@pytest.mark.parametrize("n,groups", [(16, 1), (16, 4), (40, 2), (1000, 4), (24, 3)])
def test_shuffles_put_every_person_in_exactly_2k_values_when_2k_divides_n(n, groups):
    members = shuffled_groups(n=n, groups=groups, rng=np.random.default_rng(n))
    assert members.shape == (n, 2 * groups)
    np.testing.assert_array_equal(np.bincount(members.ravel(), minlength=n), np.full(n, 2 * groups))
    # each shuffle is a permutation: its n / 2k values hold every person once
    per_shuffle = members.reshape(2 * groups, n)
    assert all(np.array_equal(np.sort(shuffle), np.arange(n)) for shuffle in per_shuffle)


def test_shuffles_drop_a_leftover_so_a_person_is_in_at_most_2k_values():
    n, groups = 1003, 4
    members = shuffled_groups(n=n, groups=groups, rng=np.random.default_rng(1))
    assert members.shape == (8 * 125, 8)
    counts = np.bincount(members.ravel(), minlength=n)
    assert counts.max() == 8 and counts.sum() == 8 * 1000
    assert len(set(map(tuple, np.sort(members.reshape(8, -1), axis=1)))) == 8  # 8 different leftovers, whp


def test_shuffles_are_independent_of_each_other():
    members = shuffled_groups(n=1000, groups=2, rng=np.random.default_rng(2)).reshape(4, 1000)
    assert len({tuple(order) for order in members}) == 4


# ---------------------------------------------------------------- known answers


LARGE = 200_000


@pytest.mark.parametrize("accounting", ["exact", "published"])
@pytest.mark.parametrize("quantile", [0.75, 0.841, 0.9])
@pytest.mark.parametrize("std", [0.001, 1.0])
def test_with_a_huge_budget_direct_returns_the_quantile_distance_phi_inverse_q_sigma(std, quantile, accounting):
    """No normal-quantile conversion: Phi^-1(q) sigma (0.674, 0.999, 1.28 sigma). The sample
    quantiles of 200000 draws have a relative error of about 0.5 %; 2 % is four of them."""
    x = gaussian(std, seed=1, n=LARGE)
    result = std_direct(x, rho=1e6, bounds=(10 - 5 * std, 10 + 5 * std), rng=np.random.default_rng(0),
                        quantile=quantile, accounting=accounting)
    assert result.mean[0] == pytest.approx(ndtri(quantile) * std, rel=0.02)


@pytest.mark.parametrize("accounting", ["exact", "published"])
@pytest.mark.parametrize("groups", [1, 4])
@pytest.mark.parametrize("std", [0.001, 1.0])
def test_with_a_huge_budget_general_returns_sigma_up_to_the_wilson_hilferty_bias(std, groups, accounting):
    """sqrt(median(chi2_k) / k / (1 - 2/(9k))^3) sigma: 0.983 sigma (k = 1), 0.998 sigma (k = 4);
    the median of 200000 values has a relative error below 0.5 % (of sigma: half that)."""
    x = gaussian(std, seed=2, n=LARGE)
    result = std_general(x, rho=1e6, bounds=(10 - 5 * std, 10 + 5 * std), rng=np.random.default_rng(0),
                         groups=groups, accounting=accounting)
    bias = math.sqrt(chi2.median(groups) / groups / (1 - 2 / (9 * groups)) ** 3)
    assert result.mean[0] == pytest.approx(bias * std, rel=0.01)


def test_every_column_gets_its_own_std():
    stds = np.array([0.5, 1.0, 2.0])
    x = 10.0 + np.random.default_rng(5).standard_normal((LARGE, 3)) * stds
    for function, options in [(std_direct, {"quantile": 0.841}), (std_general, {"groups": 4})]:
        result = function(x, rho=1e6, bounds=(0.0, 20.0), rng=np.random.default_rng(0), **options)
        np.testing.assert_allclose(result.mean, stds, rtol=0.02)


def test_direct_can_return_a_negative_spread_under_heavy_noise():
    """Tiny budget on a tiny sample: the median and the quantile land anywhere in the universe,
    so about half of the differences are negative, and they are returned as they are."""
    x = np.repeat(gaussian(n=20), 2000, axis=1)
    result = std_direct(x, rho=1e-6, bounds=(-1e3, 1e3), rng=np.random.default_rng(0))
    assert 0.3 < np.mean(result.mean < 0) < 0.7


# ---------------------------------------------------------------- interface


@pytest.mark.parametrize("function", [std_direct, std_general])
def test_input_is_not_modified_and_the_same_seed_gives_the_same_bytes(function):
    x = gaussian(n=300, d=3)
    x[0, 0] = 100.0  # outside the bounds: clipped on a copy
    before = x.copy()
    first = function(x, rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(x, before)
    second = function(x, rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(7))
    other = function(x, rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(8))
    assert first.mean.tobytes() == second.mean.tobytes()
    assert not np.array_equal(first.mean, other.mean)


def test_both_are_registered_exported_and_configurable():
    assert REGISTRY["std_direct"] is mechanisms.std_direct is std_direct
    assert REGISTRY["std_general"] is mechanisms.std_general is std_general
    configured = make_mechanism("std_general", groups=4, accounting="published", budget_share=0.125)
    result = configured(gaussian(n=100), rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(0))
    assert result.diagnostics["accounting"] == "published" and result.mean.shape == (1,)


@pytest.mark.parametrize(
    ("function", "changes", "pattern"),
    [
        (std_direct, {"quantile": 0.5}, r"\bquantile=0\.5\b"),
        (std_direct, {"quantile": 1.2}, r"\bquantile=1\.2\b"),
        (std_direct, {"quantile": "0.8"}, r"\bquantile='0\.8'"),
        (std_general, {"groups": 0}, r"\bgroups=0\b"),
        (std_general, {"groups": 1.5}, r"\bgroups=1\.5\b"),
        (std_general, {"groups": 30}, r"groups=30.*\bn=50\b"),
        (std_general, {"bounds": (-5.0, 0.0)}, r"\bbounds=\(-5\.0, 0\.0\)"),
        (std_general, {"bounds": (-5.0, -1.0)}, r"\bbounds=\(-5\.0, -1\.0\)"),
        (std_direct, {"budget_share": 0}, r"\bbudget_share=0\b"),
        (std_general, {"budget_share": 1.5}, r"\bbudget_share=1\.5\b"),
        (std_direct, {"accounting": "Published"}, r"\baccounting='Published'"),
        (std_general, {"accounting": None}, r"\baccounting=None\b"),
        (std_direct, {"rho": -1.0}, r"\brho=-1\.0\b"),
        (std_general, {"rng": 3}, r"\brng=int\b"),
        (std_direct, {"bounds": (1.0, 0.0)}, r"\bbounds=\(1\.0, 0\.0\)"),
        (std_general, {"budget_share": 1e-300, "rho": 1e-300}, r"\bbudget_share=1e-300\b"),
    ],
)
def test_bad_arguments_raise_one_value_error_naming_the_value(function, changes, pattern):
    arguments = {"rho": 1.0, "bounds": BOUNDS, "rng": np.random.default_rng(0)} | changes
    with pytest.raises(ValueError, match=pattern):
        function(gaussian(n=50), **arguments)


def test_the_universe_check_names_hi_squared():
    with pytest.raises(ValueError, match=re.escape("[0, hi^2]")):
        std_general(gaussian(n=50), rho=1.0, bounds=(-1.0, 1e-170), rng=np.random.default_rng(0))
