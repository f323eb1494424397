"""CoinPress, the mean estimator (mechanisms/coinpress.py, docs/design.md §5.9): the public schedule
against hand-computed values of both clip forms, the budget split and ledger, each step replayed
from its parts (projection of the raw data, mean, noise of the stated scale), the empirical noise
spread, the projection, whitening with a known covariance, bad arguments and determinism; the
registry entries coinpress_mean and coinpress_oracle (their prior ball, covariance and ledger)."""
import functools
import math
import re

import numpy as np
import pytest

import mechanisms
from mechanisms import (
    ball_projection,
    coinpress,
    coinpress_budget_shares,
    coinpress_schedule,
    gaussian_tail_radius,
)

D, N = 50, 1000
R = 10.0 * math.sqrt(D)  # 70.71, the prior radius of the authors' experiments


def gaussian_data(seed, n=N, d=D, mean=0.0):
    return np.random.default_rng(seed).standard_normal((n, d)) + mean


def with_outliers(seed, n=200, d=5):
    """Standard normal rows, a fifth of them moved 40 away (outside the first balls)."""
    x = gaussian_data(seed, n, d)
    x[: n // 5] += 40.0
    return x


# ---------------------------------------------------------------- the public schedule


@pytest.mark.parametrize(("d", "value"), [(50, 9.464), (500, 24.60), (2, 4.157), (1, 3.808)])
def test_the_gaussian_tail_radius_has_the_values_of_its_formula(d, value):
    assert gaussian_tail_radius(d, 0.01) == pytest.approx(value, abs=5e-4)


def test_the_code_form_schedule_matches_the_hand_check_of_the_headline_setting():
    # d = 50, n = 1000, R = 70.71, t = 2, rho = 0.5 (rho / 4, 3 rho / 4), gamma = G(50, 0.01) = 9.464:
    # C = sqrt(r^2 + 6 r + gamma^2), sigma = 2 C / (n sqrt(2 rho_i)), r' = gamma sqrt(1/n + sigma^2).
    # All of it is public: only the centres are random.
    first, second = coinpress_schedule(N, D, rho=0.5, radius=R, steps=2)
    assert first.radius == R
    assert first.clip_radius == pytest.approx(74.26, abs=5e-3)
    assert first.noise_std == pytest.approx(0.2970, abs=5e-5)
    assert first.next_radius == pytest.approx(2.827, abs=5e-4)
    assert second.radius == first.next_radius
    assert second.clip_radius == pytest.approx(10.70, abs=5e-3)
    assert second.noise_std == pytest.approx(0.02471, abs=5e-6)
    assert second.next_radius == pytest.approx(0.3798, abs=5e-5)


def test_the_schedule_of_a_run_is_in_its_diagnostics_whatever_the_data():
    schedule = coinpress_schedule(N, D, rho=0.5, radius=R, steps=2)
    for seed in (0, 1):
        diagnostics = coinpress(gaussian_data(seed), rho=0.5, centre=0.0, radius=R,
                                rng=np.random.default_rng(seed)).diagnostics
        assert np.array_equal(diagnostics["step_clip_radii"], [step.clip_radius for step in schedule])
        assert np.array_equal(diagnostics["step_noise_stds"], [step.noise_std for step in schedule])
        assert np.array_equal(diagnostics["step_radii"], [R, schedule[0].next_radius, schedule[1].next_radius])
        assert diagnostics["clip_threshold"] == schedule[1].clip_radius


def test_the_paper_form_clip_radius_is_r_plus_the_union_bound_radius_with_beta_split_over_the_steps():
    # t = 2, beta = 0.01: beta_1 = beta / (2 (t - 1)) = 0.005, gamma1 = G(50, 0.005 / 2000):
    # ln(4e5) = 12.8992, sqrt(50 * 12.8992) = 25.3960, sqrt(50 + 50.7921 + 25.7984) = 11.2512.
    first, _ = coinpress_schedule(N, D, rho=0.5, radius=R, steps=2, clip="paper")
    assert first.clip_radius == pytest.approx(R + 11.2512, abs=1e-4)
    assert first.noise_std == pytest.approx(2.0 * first.clip_radius / (N * math.sqrt(2.0 * 0.125)), rel=1e-12)


@pytest.mark.parametrize("steps", [1, 2, 3, 4])
def test_the_paper_form_levels_are_beta_over_2_t_minus_1_then_beta_over_2(steps):
    beta = 0.02
    levels = [beta / (2 * (steps - 1)) for _ in range(steps - 1)] + [beta / 2]
    schedule = coinpress_schedule(N, D, rho=0.5, radius=R, steps=steps, beta=beta, clip="paper")
    for step, level in zip(schedule, levels, strict=True):
        assert step.clip_radius - step.radius == pytest.approx(gaussian_tail_radius(D, level / (2 * N)), rel=1e-12)
        spread = math.hypot(1.0 / math.sqrt(N), step.noise_std)
        assert step.next_radius / spread == pytest.approx(gaussian_tail_radius(D, level / 2), rel=1e-12)


@pytest.mark.parametrize("radius", [0.01, 1.0, 70.71, 1e6])
def test_the_code_form_clip_radius_is_the_smaller_of_its_two_terms(radius):
    gamma = gaussian_tail_radius(D, 0.01)  # > 3: the square-root term is always the smaller one
    step, = coinpress_schedule(N, D, rho=0.5, radius=radius, steps=1)
    assert step.clip_radius == pytest.approx(math.sqrt(radius**2 + 6 * radius + gamma**2), rel=1e-12)
    assert step.clip_radius < radius + gamma
    # d = 1, beta = 0.5: gamma = G(1, 0.5) = 2.01 < 3, so r + gamma is the smaller one
    gamma = gaussian_tail_radius(1, 0.5)
    step, = coinpress_schedule(N, 1, rho=0.5, radius=radius, steps=1, beta=0.5)
    assert gamma < 3 and step.clip_radius == pytest.approx(radius + gamma, rel=1e-12)


# ---------------------------------------------------------------- budgets and ledger


@pytest.mark.parametrize(("steps", "expected"), [
    (1, [1.0]),
    (2, [1 / 4, 3 / 4]),
    (3, [1 / 8, 1 / 8, 3 / 4]),
    (4, [1 / 12] * 3 + [3 / 4]),
    (10, [1 / 36] * 9 + [3 / 4]),
])
@pytest.mark.parametrize("rho", [0.01, 0.5, 3.0])
def test_the_ledger_follows_the_experiments_split_and_sums_to_rho(steps, expected, rho):
    estimate = coinpress(gaussian_data(steps, n=100, d=4), rho=rho, centre=0.0, radius=10.0, steps=steps,
                         rng=np.random.default_rng(0))
    assert [entry.step for entry in estimate.ledger] == [f"step_{i}" for i in range(1, steps + 1)]
    assert [entry.rho for entry in estimate.ledger] == pytest.approx([rho * share for share in expected], rel=1e-12)
    assert estimate.rho_total == pytest.approx(rho, rel=1e-12)
    assert estimate.unit == "rho"
    assert coinpress_budget_shares(steps) == pytest.approx(expected, rel=1e-12)


def test_budget_shares_of_the_caller_are_normalised_to_rho():
    estimate = coinpress(gaussian_data(0, n=100, d=4), rho=2.0, centre=0.0, radius=10.0, steps=3,
                         budget_shares=[1, 1, 2], rng=np.random.default_rng(0))
    assert [entry.rho for entry in estimate.ledger] == pytest.approx([0.5, 0.5, 1.0], rel=1e-12)
    assert estimate.rho_total == pytest.approx(2.0, rel=1e-12)


# ---------------------------------------------------------------- the steps and their noise


@pytest.mark.parametrize("clip", ["code", "paper"])
@pytest.mark.parametrize("steps", [1, 3])
def test_every_step_is_the_mean_of_the_raw_data_projected_onto_its_ball_plus_noise_of_its_scale(clip, steps):
    x = with_outliers(steps)
    n, d = x.shape
    estimate = coinpress(x, rho=0.3, centre=1.0, radius=20.0, steps=steps, clip=clip, rng=np.random.default_rng(9))
    diagnostics = estimate.diagnostics
    noise = np.random.default_rng(9).standard_normal((steps, d))  # the mechanism's one draw, replayed
    centres, clips, sigmas = diagnostics["step_centres"], diagnostics["step_clip_radii"], diagnostics["step_noise_stds"]
    assert np.array_equal(centres[0], np.ones(d))
    for i in range(steps):
        # sigma_i = 2 C_i / (n sqrt(2 rho_i)): the Gaussian mechanism for the l2 sensitivity 2 C_i / n
        assert sigmas[i] == pytest.approx(2.0 * clips[i] / (n * math.sqrt(2.0 * estimate.ledger[i].rho)), rel=1e-12)
        projected = ball_projection(x, centre=centres[i], radius=clips[i])
        assert np.allclose(centres[i + 1], projected.mean(axis=0) + sigmas[i] * noise[i], rtol=1e-12, atol=1e-12)
        outside = np.linalg.norm(x - centres[i], axis=1) > clips[i]
        assert diagnostics["step_fraction_clipped"][i] == np.mean(outside)
    assert diagnostics["step_fraction_clipped"][0] > 0  # the outliers are clipped at step 1
    assert np.array_equal(estimate.mean, centres[-1])


@pytest.mark.parametrize("steps", [1, 2, 4])
def test_the_noise_of_each_step_has_the_stated_spread_on_constant_data(steps):
    # Constant rows far inside every ball: nothing is clipped, the projected mean is the row
    # itself, so (c_i - row) / sigma_i must be standard normal, pooled over runs and coordinates.
    d, runs = 20, 300
    point = np.linspace(-1.0, 1.0, d)
    x = np.tile(point, (50, 1))
    standardised = {i: [] for i in range(steps)}
    for seed in range(runs):
        diagnostics = coinpress(x, rho=0.5, centre=0.0, radius=5.0, steps=steps,
                                rng=np.random.default_rng(seed)).diagnostics
        assert not diagnostics["step_fraction_clipped"].any()
        for i in range(steps):
            standardised[i].append((diagnostics["step_centres"][i + 1] - point) / diagnostics["step_noise_stds"][i])
    for values in standardised.values():
        values = np.concatenate(values)  # 6000 values: the std's standard error is about 0.009
        assert abs(values.mean()) < 0.05
        assert values.std() == pytest.approx(1.0, abs=0.045)


def test_the_error_in_the_headline_setting_is_that_of_the_published_runs():
    # d = 50, n = 1000, rho = 0.5, R = 70.71, t = 2: published 10 % trimmed mean 0.281;
    # about sqrt(d (1/n + sigma_2^2)) = 0.284. 40 runs: within 15 %.
    errors = np.sort([np.linalg.norm(coinpress(gaussian_data(seed), rho=0.5, centre=0.0, radius=R,
                                               rng=np.random.default_rng(seed + 1000)).mean)
                      for seed in range(40)])
    assert np.mean(errors[4:-4]) == pytest.approx(0.281, rel=0.15)


# ---------------------------------------------------------------- projection


@pytest.mark.parametrize("d", [1, 3, 20])
def test_projection_leaves_points_inside_the_ball_and_maps_points_outside_onto_its_sphere(d):
    rng = np.random.default_rng(d)
    centre = rng.normal(size=d)
    x = centre + rng.normal(size=(500, d)) * rng.uniform(0.0, 3.0, size=(500, 1))
    x[0] = centre  # the centre itself: no direction, it stays
    kept = x.copy()
    radius = 1.5 * math.sqrt(d)
    projected = ball_projection(x, centre=centre, radius=radius)
    assert np.array_equal(x, kept)
    distances = np.linalg.norm(x - centre, axis=1)
    inside = distances <= radius
    assert inside.any() and (~inside).any()
    assert np.array_equal(projected[inside], x[inside])
    assert np.allclose(np.linalg.norm(projected[~inside] - centre, axis=1), radius, rtol=1e-12)
    # radially: the same direction from the centre, shrunk
    factors = np.linalg.norm(projected[~inside] - centre, axis=1) / distances[~inside]
    assert np.allclose(projected[~inside] - centre, (x[~inside] - centre) * factors[:, None], rtol=1e-12, atol=1e-12)


def test_a_row_at_the_centre_is_not_divided_by_zero():
    x = np.zeros((10, 3))
    with np.errstate(all="raise"):
        estimate = coinpress(x, rho=1.0, centre=0.0, radius=1.0, rng=np.random.default_rng(0))
    assert np.all(np.isfinite(estimate.mean))


# ---------------------------------------------------------------- known covariance


def spd_matrix(seed, d):
    a = np.random.default_rng(seed).normal(size=(d, d))
    return a @ a.T + 0.5 * np.eye(d)


def symmetric_power(matrix, power):
    values, vectors = np.linalg.eigh(matrix)
    return (vectors * values**power) @ vectors.T


@pytest.mark.parametrize("steps", [1, 3])
def test_a_covariance_is_running_on_the_whitened_data_and_mapping_the_release_back(steps):
    d = 6
    covariance = spd_matrix(steps, d)
    x = np.random.default_rng(5).multivariate_normal(np.arange(d, dtype=float), covariance, size=300)
    centre, radius = np.full(d, 0.5), 30.0  # in the whitened space
    direct = coinpress(x, rho=0.4, centre=centre, radius=radius, steps=steps, covariance=covariance,
                       rng=np.random.default_rng(11))
    whitened = coinpress(x @ symmetric_power(covariance, -0.5), rho=0.4, centre=centre, radius=radius, steps=steps,
                         rng=np.random.default_rng(11))
    assert np.allclose(direct.mean, symmetric_power(covariance, 0.5) @ whitened.mean, rtol=1e-9, atol=1e-9)
    assert np.allclose(direct.diagnostics["step_centres"], whitened.diagnostics["step_centres"], rtol=1e-9, atol=1e-9)
    assert direct.diagnostics["whitened"] and not whitened.diagnostics["whitened"]
    assert direct.ledger == whitened.ledger


def test_a_number_or_a_vector_of_variances_is_the_isotropic_or_diagonal_matrix():
    d = 4
    x = with_outliers(3, d=d)
    variances = np.array([0.5, 1.0, 2.0, 4.0])

    def run(covariance):
        return coinpress(x, rho=0.4, centre=0.0, radius=30.0, covariance=covariance, rng=np.random.default_rng(2)).mean

    assert np.allclose(run(variances), run(np.diag(variances)), rtol=1e-12, atol=1e-12)
    assert np.allclose(run(2.0), run(2.0 * np.eye(d)), rtol=1e-12, atol=1e-12)
    assert np.array_equal(run(np.eye(d)), run(None))


def test_whitening_makes_an_anisotropic_sample_as_easy_as_an_isotropic_one():
    # Variances 0.01..100: the Mahalanobis error with the covariance is that of N(0, I) data.
    d, n = 10, 2000
    variances = np.logspace(-2, 2, d)
    errors = []
    for seed in range(20):
        x = np.random.default_rng(seed).standard_normal((n, d)) * np.sqrt(variances)
        estimate = coinpress(x, rho=0.5, centre=0.0, radius=100.0, covariance=variances,
                             rng=np.random.default_rng(seed + 50))
        errors.append(np.linalg.norm(estimate.mean / np.sqrt(variances)))
    # about sqrt(d (1/n + sigma_2^2)) with sigma_2 ~ 0.006: 0.07
    assert np.median(errors) < 0.12


# ---------------------------------------------------------------- bad arguments


def shows(name, value):
    return rf"\b{re.escape(name)}={re.escape(repr(value))}"


BAD = [
    ({"rho": 0.0}, shows("rho", 0.0)),
    ({"rho": -1}, shows("rho", -1)),
    ({"rho": "1"}, shows("rho", "1")),
    ({"radius": 0.0}, shows("radius", 0.0)),
    ({"radius": math.inf}, shows("radius", math.inf)),
    ({"radius": 1e101}, shows("radius", 1e101)),
    ({"centre": [0.0, 1.0]}, r"\bcentre\b.*\(2,\)"),
    ({"centre": [0.0, math.nan, 1.0]}, r"\bcentre\[1\]=nan"),
    ({"centre": "0"}, shows("centre", "0")),
    ({"steps": 0}, shows("steps", 0)),
    ({"steps": 1.5}, shows("steps", 1.5)),
    ({"steps": True}, shows("steps", True)),
    ({"steps": 1001}, shows("steps", 1001)),
    ({"budget_shares": [1.0]}, r"\bbudget_shares\b.*steps=2"),
    ({"budget_shares": [1.0, 0.0]}, shows("budget_shares", [1.0, 0.0])),
    ({"budget_shares": [1.0, -1.0]}, shows("budget_shares", [1.0, -1.0])),
    ({"budget_shares": [1.0, "a"]}, r"\bbudget_shares\b"),
    ({"budget_shares": 0.5}, shows("budget_shares", 0.5)),
    ({"beta": 0.0}, shows("beta", 0.0)),
    ({"beta": 1.0}, shows("beta", 1.0)),
    ({"beta": 1e-250}, shows("beta", 1e-250)),
    ({"clip": "published"}, shows("clip", "published")),
    ({"covariance": np.eye(2)}, r"\bcovariance\b.*\(2, 2\)"),
    ({"covariance": -1.0}, r"\bcovariance\b.*-1\.0"),
    ({"covariance": [1.0, 0.0, 1.0]}, r"\bcovariance\[1\]=0\.0"),
    ({"covariance": np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]])}, r"\bcovariance must be symmetric"),
    ({"covariance": np.diag([1.0, -1.0, 1.0])}, r"\bcovariance must be positive definite"),
    ({"covariance": 1e-300}, r"\bcovariance\b.*whitened"),
    ({"rng": 0}, r"\brng must be a numpy\.random\.Generator"),
    ({"x": np.zeros(5)}, r"\bx must be a 2-D array"),
    ({"x": np.array([[0.0, np.nan, 1.0]])}, r"\bx must be finite"),
    ({"rho": 1e-300, "radius": 1e100}, r"\brho=1e-300 with radius=1e\+100"),
]


@pytest.mark.parametrize(("changes", "message"), BAD, ids=[str(sorted(changes)) for changes, _ in BAD])
def test_a_bad_argument_raises_a_value_error_naming_it(changes, message):
    arguments = {"x": gaussian_data(0, n=20, d=3), "rho": 0.5, "centre": 0.0, "radius": 10.0,
                 "rng": np.random.default_rng(0)} | changes
    with pytest.raises(ValueError, match=message):
        coinpress(arguments.pop("x"), **arguments)


def test_the_projection_checks_its_arguments_too():
    with pytest.raises(ValueError, match=shows("radius", -1.0)):
        ball_projection(np.zeros((2, 2)), centre=0.0, radius=-1.0)
    with pytest.raises(ValueError, match=r"\bcentre\b"):
        ball_projection(np.zeros((2, 2)), centre=[0.0, 0.0, 0.0], radius=1.0)


# ---------------------------------------------------------------- determinism


def test_a_seed_gives_the_same_release_and_the_data_are_left_unchanged():
    x = with_outliers(1)
    kept = x.copy()

    def run(seed):
        return coinpress(x, rho=0.5, centre=0.0, radius=50.0, steps=3, rng=np.random.default_rng(seed))

    first, again, other = run(4), run(4), run(5)
    assert np.array_equal(first.mean, again.mean)
    assert np.array_equal(first.diagnostics["step_centres"], again.diagnostics["step_centres"])
    assert not np.array_equal(first.mean, other.mean)
    assert np.array_equal(x, kept)
    assert np.array_equal(run(4).mean, coinpress(mechanisms.SharedSample(x), rho=0.5, centre=0.0, radius=50.0,
                                                 steps=3, rng=np.random.default_rng(4)).mean)


# ---------------------------------------------------------------- the registry entries


def box_ball(bounds, d):
    lo, hi = bounds
    return np.full(d, (lo + hi) / 2.0), (hi - lo) / 2.0 * math.sqrt(d)


def test_the_registry_entries_are_coinpress_in_the_engines_interface():
    assert mechanisms.REGISTRY["coinpress_mean"] is mechanisms.coinpress_mean
    assert mechanisms.REGISTRY["coinpress_oracle"] is mechanisms.coinpress_oracle
    # the engine passes the data, rho, the universe, the generator and the source's public knowledge
    assert mechanisms.call_arguments("coinpress_mean") == ("x", "rho", "bounds", "rng", "prior_ball", "max_std")
    assert mechanisms.call_arguments("coinpress_oracle") == ("x", "rho", "bounds", "rng", "prior_ball")
    assert mechanisms.mechanism_options("coinpress_mean")["steps"] == 2  # the authors' headline t
    assert mechanisms.mechanism_options("coinpress_mean")["covariance"] == "sigma_max"


@pytest.mark.parametrize("bounds", [(-5.0, 5.0), (2.0, 10.0)])
def test_without_a_prior_ball_the_ball_is_the_one_circumscribing_the_universe_box(bounds):
    x = gaussian_data(3, n=300, d=6) + 4.0
    centre, radius = box_ball(bounds, 6)  # radius (hi - lo) / 2 sqrt(d): it holds every point of the box
    corners = np.where(np.random.default_rng(0).random((100, 6)) < 0.5, bounds[0], bounds[1])
    assert np.all(np.linalg.norm(corners - centre, axis=1) <= radius * (1 + 1e-12))
    estimate = mechanisms.coinpress_mean(x, rho=0.5, bounds=bounds, rng=np.random.default_rng(4), max_std=1.0,
                                         steps=3)
    direct = coinpress(x, rho=0.5, centre=centre, radius=radius, steps=3, rng=np.random.default_rng(4))
    assert np.allclose(estimate.mean, direct.mean, rtol=1e-12, atol=1e-12)
    assert np.allclose(estimate.diagnostics["step_centres"][0], centre, rtol=1e-15)
    assert estimate.diagnostics["prior"] == "box"
    assert estimate.diagnostics["prior_radius"] == pytest.approx(radius, rel=1e-15)


def test_a_prior_ball_of_the_source_replaces_the_box_s():
    x = gaussian_data(5, n=400, d=D) + 0.3
    ball = (np.full(D, 0.5), R)
    estimate = mechanisms.coinpress_mean(x, rho=0.5, bounds=(-1e4, 1e4), rng=np.random.default_rng(6), max_std=1.0,
                                         prior_ball=ball)
    direct = coinpress(x, rho=0.5, centre=ball[0], radius=R, rng=np.random.default_rng(6))
    assert np.array_equal(estimate.mean, direct.mean)
    assert estimate.diagnostics["prior"] == "source" and estimate.diagnostics["prior_radius"] == R
    assert np.array_equal(estimate.diagnostics["step_radii"], direct.diagnostics["step_radii"])


@pytest.mark.parametrize("sigma_max", [0.25, 3.0, 40.0])
def test_the_sigma_max_covariance_divides_rows_and_ball_by_sigma_max_and_multiplies_the_release_back(sigma_max):
    x = gaussian_data(7, n=500, d=8) * np.linspace(0.1, 1.0, 8) * sigma_max + 2.0
    centre, radius = np.full(8, 1.0), 60.0 * sigma_max
    estimate = mechanisms.coinpress_mean(x, rho=0.4, bounds=(-1e3, 1e3), rng=np.random.default_rng(8),
                                         prior_ball=(centre, radius), max_std=sigma_max, steps=3)
    divided = coinpress(x / sigma_max, rho=0.4, centre=centre / sigma_max, radius=radius / sigma_max, steps=3,
                        rng=np.random.default_rng(8))
    assert np.allclose(estimate.mean, sigma_max * divided.mean, rtol=1e-12, atol=1e-12)
    # the same as the library's own whitening with the covariance sigma_max^2 I
    whitened = coinpress(x, rho=0.4, centre=centre / sigma_max, radius=radius / sigma_max, steps=3,
                         covariance=sigma_max**2, rng=np.random.default_rng(8))
    assert np.allclose(estimate.mean, whitened.mean, rtol=1e-10, atol=1e-10)
    assert estimate.diagnostics["covariance"] == "sigma_max"
    assert estimate.diagnostics["covariance_scale"] == sigma_max
    assert estimate.diagnostics["final_radius"] == divided.diagnostics["step_radii"][-1]


def test_the_identity_covariance_ignores_sigma_max():
    x = gaussian_data(9, n=300, d=5)
    run = functools.partial(mechanisms.coinpress_mean, x, rho=0.5, bounds=(-20.0, 20.0), covariance="identity")
    assert np.array_equal(run(rng=np.random.default_rng(1), max_std=7.0).mean,
                          run(rng=np.random.default_rng(1), max_std=None).mean)
    direct = coinpress(x, rho=0.5, centre=0.0, radius=20.0 * math.sqrt(5), rng=np.random.default_rng(1))
    assert np.array_equal(run(rng=np.random.default_rng(1)).mean, direct.mean)
    assert run(rng=np.random.default_rng(1)).diagnostics["covariance"] == "identity"


def test_the_oracle_divides_each_column_by_its_true_std_and_the_ball_radius_by_the_smallest():
    std = np.array([0.5, 1.0, 2.0, 8.0])
    x = gaussian_data(11, n=800, d=4) * std + np.array([1.0, -2.0, 0.0, 5.0])
    centre, radius = np.array([0.0, 0.0, 1.0, 2.0]), 30.0
    estimate = mechanisms.coinpress_oracle(x, rho=0.5, bounds=(-100.0, 100.0), rng=np.random.default_rng(12),
                                           std=std, prior_ball=(centre, radius), steps=4)
    # the image of B(c, r) under x -> x / std lies in B(c / std, r / min std)
    whitened = coinpress(x, rho=0.5, centre=centre / std, radius=radius / std.min(), steps=4, covariance=std**2,
                         rng=np.random.default_rng(12))
    assert np.allclose(estimate.mean, whitened.mean, rtol=1e-10, atol=1e-10)
    assert estimate.diagnostics["covariance"] == "oracle"
    assert estimate.diagnostics["covariance_scale"] == 8.0
    assert estimate.diagnostics["step_radii"][0] == pytest.approx(radius / 0.5, rel=1e-15)


@pytest.mark.parametrize("steps", [1, 2, 3, 4, 10])
@pytest.mark.parametrize("name", ["coinpress_mean", "coinpress_oracle"])
def test_the_registry_entries_ledger_is_the_split_of_the_steps_and_sums_to_rho(name, steps):
    x = gaussian_data(steps, n=200, d=6) * 2.0
    extra = {"max_std": 2.0} if name == "coinpress_mean" else {"std": np.full(6, 2.0)}
    estimate = mechanisms.REGISTRY[name](x, rho=0.3, bounds=(-30.0, 30.0), rng=np.random.default_rng(0),
                                         steps=steps, **extra)
    assert [entry.step for entry in estimate.ledger] == [f"step_{i}" for i in range(1, steps + 1)]
    assert estimate.rho_total == pytest.approx(0.3, rel=1e-12)
    assert estimate.diagnostics["budget_shares"] == pytest.approx(coinpress_budget_shares(steps), rel=1e-12)
    assert estimate.diagnostics["steps"] == steps


def test_the_registry_entries_are_accurate_on_the_published_setting():
    # d = 50, n = 1000, rho = 0.5, R = 10 sqrt(d): t = 2 gives about 0.28 (published 0.281, docs/design.md §6)
    ball = (np.zeros(D), R)
    errors = [np.linalg.norm(mechanisms.coinpress_mean(gaussian_data(seed), rho=0.5, bounds=(-R, R), prior_ball=ball,
                                                       max_std=1.0, rng=np.random.default_rng(seed + 500)).mean)
              for seed in range(20)]
    assert np.median(errors) == pytest.approx(0.281, rel=0.15)


REGISTRY_BAD = [
    ("coinpress_mean", {"max_std": None}, r"covariance='sigma_max' needs max_std\b.*max_std=None"),
    ("coinpress_mean", {"max_std": 0.0}, shows("max_std", 0.0)),
    ("coinpress_mean", {"max_std": 1e101}, shows("max_std", 1e101)),
    ("coinpress_mean", {"max_std": 1e-300}, r"\bmax_std=1e-300\b.*divided by the covariance scale"),
    ("coinpress_mean", {"covariance": "oracle"}, shows("covariance", "oracle")),
    ("coinpress_mean", {"prior_ball": (0.0,)}, r"\bprior_ball must be a pair \(centre, radius\)"),
    ("coinpress_mean", {"prior_ball": (0.0, -1.0)}, r"\bprior_ball\b.*radius=-1\.0"),
    ("coinpress_mean", {"prior_ball": ([0.0, 1.0], 1.0)}, r"\bprior_ball\b.*centre\b.*\(2,\)"),
    ("coinpress_mean", {"bounds": (-1e100, 1e100)}, r"\bbounds=\(-1e\+100, 1e\+100\) with d=3\b.*circumscribed"),
    ("coinpress_oracle", {"std": [1.0, 0.0, 1.0]}, r"\bstd\b.*std\[1\]=0\.0"),
    ("coinpress_oracle", {"std": [1.0, 1.0]}, r"\bstd\b.*\(2,\)"),
    ("coinpress_oracle", {"std": "1"}, shows("std", "1")),
    ("coinpress_oracle", {"std": [1.0, math.nan, 1.0]}, r"\bstd\[1\]=nan"),
]


@pytest.mark.parametrize(("name", "changes", "message"), REGISTRY_BAD,
                         ids=[f"{name}-{sorted(changes)}" for name, changes, _ in REGISTRY_BAD])
def test_a_bad_argument_of_a_registry_entry_raises_a_value_error_naming_it(name, changes, message):
    arguments = {"rho": 0.5, "bounds": (-10.0, 10.0), "rng": np.random.default_rng(0)}
    arguments |= {"max_std": 1.0} if name == "coinpress_mean" else {"std": np.ones(3)}
    with pytest.raises(ValueError, match=message):
        mechanisms.REGISTRY[name](gaussian_data(0, n=20, d=3), **(arguments | changes))
