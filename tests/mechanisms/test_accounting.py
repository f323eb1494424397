"""Budget ledgers (docs/design.md §5.0, §9) and the Gaussian noise scales of the final steps."""
import math

import numpy as np
import pytest
import scipy.sparse

import mechanisms
from mechanisms import advanced_composition, per_step_budget
from mechanisms.accounting import UNSPENT, Estimate, LedgerEntry, ledger_total
from mechanisms.hadamard import rotate

N, D = 400, 24
BOUNDS = (-25.0, 25.0)
RHOS = [0.01, 0.5, 3.0]


@pytest.fixture(scope="module")
def data():
    return np.random.default_rng(7).standard_normal((N, D)) * np.linspace(0.5, 3.0, D) + 1.0


def run(name, x, rho, seed=0, **options):
    if name in ("plan_oracle", "coinpress_oracle"):
        options.setdefault("std", np.linspace(0.5, 3.0, x.shape[1]))
    if name == "coinpress_mean":
        options.setdefault("max_std", 3.0)
    if name == "coinpress_covariance":
        options.setdefault("covariance_bound", 9.0)
    if "bounds" not in mechanisms.call_arguments(name):  # plan_binary: binary rows, universe {0, 1}
        x = scipy.sparse.csr_matrix((x > 1.0).astype(float))
    else:
        options["bounds"] = BOUNDS
    return mechanisms.REGISTRY[name](x, rho=rho, rng=np.random.default_rng(seed), **options)


# the zCDP family; the pure-DP user-level ledgers are checked in tests/mechanisms/test_userlevel.py
NON_PRIVATE = {"empirical_mean", "empirical_mean_eps", "empirical_covariance"}
PRIVATE = sorted(name for name in set(mechanisms.REGISTRY) - NON_PRIVATE if mechanisms.budget_name(name) == "rho")


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("name", PRIVATE)
def test_exact_accounting_ledger_sums_to_the_requested_rho(name, rho, data):
    estimate = run(name, data, rho)
    assert estimate.rho_total == pytest.approx(rho, rel=1e-12)
    assert all(entry.rho > 0 for entry in estimate.ledger)


@pytest.mark.parametrize("quantile", ["exponential", "binary_search"])
@pytest.mark.parametrize("name", ["plan_gaussian", "plan_noscale", "plan_oracle", "coordinate_median"])
def test_exact_accounting_holds_for_both_quantile_methods(name, quantile, data):
    assert run(name, data, 0.5, quantile=quantile).rho_total == pytest.approx(0.5, rel=1e-12)


def test_plan_oracle_records_the_variance_share_as_unspent(data):
    ledger = dict(run("plan_oracle", data, 1.0).ledger)
    assert ledger[UNSPENT] == pytest.approx(0.25 * 0.75)
    assert ledger["centre"] == pytest.approx(0.25 * 0.25)


def test_rho_spent_leaves_out_the_unspent_share(data):
    estimate = run("plan_oracle", data, 1.0)
    assert estimate.rho_spent == pytest.approx(1.0 - 0.25 * 0.75)
    assert estimate.rho_total == pytest.approx(1.0)


def test_coordinate_median_records_the_rest_of_the_budget_as_unspent(data):
    ledger = dict(run("coordinate_median", data, 2.0, budget_share=0.25).ledger)
    assert ledger == pytest.approx({"centre": 0.5, UNSPENT: 1.5})


def test_plan_gaussian_ledger_steps_follow_the_published_split(data):
    ledger = dict(run("plan_gaussian", data, 1.0).ledger)
    assert ledger == pytest.approx(
        {"centre": 0.0625, "variance": 0.1875, "clip_threshold": 0.1875, "gaussian_noise": 0.5625}
    )


def test_iome_ledger_steps_follow_the_published_split(data):
    ledger = dict(run("iome", data, 1.0).ledger)
    assert ledger == pytest.approx({"centre": 0.25, "clip_threshold": 0.0075, "gaussian_noise": 0.7425})


def published_true_cost(rho, *, n, hi_minus_lo, beta=0.1):
    """docs/design.md §5.0 computed independently: the centre and variance steps run on three
    copies with rho / 3 and sensitivity 1/2 assumed, so they cost (1/3) (3 / (1/2))^2 = 12
    times what they book; the clip-threshold quantile assumes sensitivity max(q, 1 - q)."""
    rho_main = 0.75 * rho
    rho_k = 0.25 * rho_main
    t = math.log(hi_minus_lo)
    k = (math.sqrt(n) + math.sqrt(t / 2 * math.log(t / beta) / rho_k)) / n
    return 12 * 0.25 * rho + rho_k / max(k, 1 - k) ** 2 + (rho_main - rho_k)


@pytest.mark.parametrize("rho", RHOS)
def test_published_accounting_ledger_equals_the_true_cost(rho, data):
    estimate = run("plan_gaussian", data, rho, accounting="published")
    expected = published_true_cost(rho, n=N, hi_minus_lo=BOUNDS[1] - BOUNDS[0])
    assert estimate.rho_total == pytest.approx(expected, rel=1e-12)
    assert estimate.diagnostics["true_rho"] == pytest.approx(expected, rel=1e-12)


def test_published_accounting_costs_about_three_and_three_quarters_rho_at_paper_scale():
    x = np.random.default_rng(1).standard_normal((4000, 256))
    bound = 25 * math.sqrt(256)
    estimate = mechanisms.plan_gaussian(
        x, rho=0.5, bounds=(-bound, bound), rng=np.random.default_rng(2), accounting="published"
    )
    ledger = dict(estimate.ledger)
    assert ledger["centre"] + ledger["variance"] == pytest.approx(12 * 0.25 * 0.5)
    assert 3.75 <= estimate.rho_total / 0.5 <= 3.8


def test_published_coordinate_median_costs_twelve_times_its_share(data):
    ledger = dict(run("coordinate_median", data, 1.0, budget_share=0.25, accounting="published").ledger)
    assert ledger == pytest.approx({"centre": 3.0, UNSPENT: 0.75})


def test_published_binary_search_costs_nine_times_its_third_of_the_budget(data):
    estimate = run("coordinate_median", data, 1.0, accounting="published", quantile="binary_search")
    assert dict(estimate.ledger) == pytest.approx({"centre": 3.0})


def test_empirical_mean_records_an_infinite_non_private_release(data):
    estimate = run("empirical_mean", data, 1.0)
    assert estimate.rho_total == math.inf
    assert estimate.diagnostics["private"] is False
    np.testing.assert_array_equal(estimate.mean, data.mean(axis=0))


def test_empirical_mean_eps_records_its_infinite_release_in_eps(data):
    estimate = mechanisms.empirical_mean_eps(data, eps=0.5, bounds=BOUNDS, rng=np.random.default_rng(3))
    assert (estimate.unit, estimate.total) == ("eps", math.inf)
    assert estimate.diagnostics["private"] is False
    assert mechanisms.budget_name("empirical_mean_eps") == "eps"
    np.testing.assert_array_equal(estimate.mean, data.mean(axis=0))


def test_zcdp_to_approx_dp_matches_the_conversion_formula():
    assert mechanisms.zcdp_to_approx_dp(0.5, delta=1e-6) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e6)))


@pytest.mark.parametrize("rho", [1e-4, 0.125, 1.0, 10.0])
def test_approx_dp_to_zcdp_inverts_the_conversion(rho):
    epsilon = mechanisms.zcdp_to_approx_dp(rho, delta=1e-5)
    assert mechanisms.approx_dp_to_zcdp(epsilon, delta=1e-5) == pytest.approx(rho, rel=1e-10)


def test_split_budget_parts_are_proportional_and_sum_to_rho():
    parts = mechanisms.split_budget(2.0, [1, 3])
    assert parts == pytest.approx((0.5, 1.5))
    assert math.fsum(parts) == pytest.approx(2.0)


def noise_std_tolerance(count):
    """Sample std of `count` normals: relative standard error 1/sqrt(2 count); allow 5 of them."""
    return 5 / math.sqrt(2 * count)


def test_gaussian_clipped_mean_noise_matches_two_c_squared_over_rho():
    n, d, clip, rho = 50, 40000, 3.0, 0.2
    noisy, noise_std, fraction = mechanisms.gaussian_clipped_mean(
        np.zeros((d, n)), clip=clip, rho=rho, rng=np.random.default_rng(3)
    )
    assert noise_std == pytest.approx(math.sqrt(2 * clip**2 / rho) / n)
    assert noisy.std() == pytest.approx(noise_std, rel=noise_std_tolerance(d))
    assert fraction == 0.0


def test_plan_final_noise_matches_its_formula():
    n, d, rho = 1000, 4096, 0.5
    x = np.random.default_rng(4).standard_normal((n, d))
    estimate = mechanisms.plan_gaussian(x, rho=rho, bounds=(-400.0, 400.0), rng=np.random.default_rng(5))
    diag = estimate.diagnostics
    clip, centre, scale = diag["clip_threshold"], diag["centre"], diag["scale"]
    assert diag["noise_std"] == pytest.approx(math.sqrt(2 * clip**2 / (0.75 * 0.75 * rho)) / n)
    z = (x - centre) * scale
    weights = np.minimum(1.0, clip / np.linalg.norm(z, axis=1))
    residual = (estimate.mean - centre) * scale - weights @ z / n
    assert residual.std() == pytest.approx(diag["noise_std"], rel=noise_std_tolerance(d))
    assert abs(residual.mean()) < 5 * diag["noise_std"] / math.sqrt(d)


def test_iome_final_noise_matches_its_formula():
    n, d, rho = 1000, 4096, 0.5
    x = np.random.default_rng(6).standard_normal((n, d))
    estimate = mechanisms.iome(x, rho=rho, bounds=(-400.0, 400.0), rng=np.random.default_rng(7))
    diag = estimate.diagnostics
    clip, centre, signs = diag["clip_threshold"], diag["rotated_centre"], diag["rotation_signs"]
    assert diag["noise_std"] == pytest.approx(2 * clip / math.sqrt(2 * 0.75 * 0.99 * rho) / n)
    shifted = rotate(x, signs) - centre
    weights = np.minimum(1.0, clip / np.linalg.norm(shifted, axis=1))
    residual = rotate(estimate.mean, signs) - centre - weights @ shifted / n
    assert residual.std() == pytest.approx(diag["noise_std"], rel=noise_std_tolerance(d))


def test_a_pure_dp_ledger_sums_in_eps_and_has_no_rho():
    from mechanisms import PureLedgerEntry

    ledger = (PureLedgerEntry("quantile", 0.25), PureLedgerEntry("laplace", 0.25))
    estimate = Estimate(mean=np.zeros(1), ledger=ledger)
    assert estimate.unit == "eps" and estimate.total == 0.5 and estimate.spent == 0.5
    assert dict(ledger) == {"quantile": 0.25, "laplace": 0.25}
    with pytest.raises(AttributeError, match="rho"):
        _ = estimate.rho_total


def test_a_ledger_that_mixes_rho_and_eps_is_refused():
    from mechanisms import PureLedgerEntry

    mixed = (LedgerEntry("a", 0.5), PureLedgerEntry("b", 0.5))
    with pytest.raises(ValueError, match="mixes budget units"):
        ledger_total(mixed)
    with pytest.raises(ValueError, match="mixes budget units"):
        _ = Estimate(mean=np.zeros(1), ledger=mixed).unit


# -------------------------------------------- (eps, delta) accounting, local model (docs/design.md §5.13)


def test_advanced_composition_is_dwork_rothblum_vadhans_bound():
    eps, delta = advanced_composition(0.1, 1e-9, steps=50, slack=1e-6)
    assert eps == pytest.approx(math.sqrt(2 * 50 * math.log(1e6)) * 0.1 + 50 * 0.1 * math.expm1(0.1), rel=1e-15)
    assert delta == pytest.approx(50 * 1e-9 + 1e-6, rel=1e-15)


@pytest.mark.parametrize("eps,delta,steps", [(1.0, 1e-7, 8), (1.0, 1e-7, 128), (2.5, 1e-7, 1000), (0.5, 1e-5, 2)])
def test_the_per_step_budget_composes_to_at_most_the_requested_one_and_takes_the_better_theorem(eps, delta, steps):
    step_eps, step_delta = per_step_budget(eps, delta, steps=steps)
    advanced, advanced_delta = advanced_composition(step_eps, delta / (2 * steps), steps=steps, slack=delta / 2)
    if step_eps == eps / steps:  # basic composition: k eps_j = eps, k delta_j = delta
        assert step_delta == delta / steps and advanced >= eps
    else:  # the largest eps_j advanced composition allows: one float more would exceed eps
        assert advanced <= eps and advanced == pytest.approx(eps, rel=1e-12) and step_eps > eps / steps
        assert advanced_delta == pytest.approx(delta, rel=1e-12) and step_delta == delta / (2 * steps)
        assert advanced_composition(step_eps * (1 + 1e-12), step_delta, steps=steps, slack=delta / 2)[0] > eps


def test_the_per_step_budget_of_one_step_is_the_budget_and_bad_input_names_itself():
    assert per_step_budget(0.7, 1e-6, steps=1) == (0.7, 1e-6)
    for arguments, named in [((0.0, 1e-7, 3), "epsilon"), ((1.0, 0.0, 3), "delta"), ((1.0, 1e-7, 0), "steps"),
                             ((1.0, 5e-324, 3), "delta"), ((1.0, 1e-7, True), "steps")]:
        with pytest.raises(ValueError, match=named):
            per_step_budget(*arguments[:2], steps=arguments[2])
