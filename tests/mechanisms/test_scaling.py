"""The scaling of the PLAN paper's Appendix C (mechanisms/scaling.py): the noise of Lemma C.1's
setting in closed form, its invariance to rescaling s, the moment-optimal exponent of Lemma C.2
against a grid and random scalings, the optimum of Lemma C.3, sampled noise, Figure 6's claims
and bad input."""
import math

import numpy as np
import pytest

from mechanisms.scaling import (
    expected_noise_moment,
    moment_optimal_gamma,
    noise_std,
    optimal_noise_moment,
    power_scaling,
    sample_noise,
)

FIGURE6 = np.array([4.0, 1.0])  # Figure 6: the horizontal query 4 times as sensitive as the vertical one


def paper_moment(delta, s, rho, p):
    """Lemma C.1 as printed: Gamma((p + 1) / 2) / (rho^(p/2) sqrt(pi)) sum_i (Delta_bar s_i)^p."""
    delta_bar = math.sqrt(sum((d / si) ** 2 for d, si in zip(delta, s)))
    return math.gamma((p + 1) / 2) / (rho ** (p / 2) * math.sqrt(math.pi)) * sum((delta_bar * si) ** p for si in s)


def test_noise_std_is_delta_bar_times_s_over_sqrt_2_rho():
    delta, s, rho = [3.0, 1.0, 0.5], [2.0, 1.0, 4.0], 0.8
    delta_bar = math.sqrt((3 / 2) ** 2 + 1 + (0.5 / 4) ** 2)
    expected = [delta_bar * si / math.sqrt(2 * rho) for si in s]
    assert noise_std(delta, scaling=s, rho=rho) == pytest.approx(expected, rel=1e-14)


def test_the_named_scalings_give_the_papers_noise_in_closed_form():
    rho = 0.3
    root = math.sqrt(2 * rho)
    # no scaling (gamma = 0): ||Delta||_2 / sqrt(2 rho) on every coordinate
    assert noise_std(FIGURE6, scaling=power_scaling(FIGURE6, gamma=0), rho=rho) == pytest.approx(
        [math.sqrt(17) / root] * 2, rel=1e-14)
    # even split (gamma = 1): each query alone with rho / d, std Delta_i / sqrt(2 rho / d)
    assert noise_std(FIGURE6, scaling=power_scaling(FIGURE6, gamma=1), rho=rho) == pytest.approx(
        [4 / math.sqrt(2 * rho / 2), 1 / math.sqrt(2 * rho / 2)], rel=1e-14)
    # second moment (gamma = 1/2): s = (2, 1), Delta_bar^2 = 2^2 + 1 = 5
    assert noise_std(FIGURE6, scaling=power_scaling(FIGURE6, gamma=0.5), rho=rho) == pytest.approx(
        [2 * math.sqrt(5) / root, math.sqrt(5) / root], rel=1e-14)
    # first moment (gamma = 2/3): s = (4^(2/3), 1), Delta_bar^2 = 4^(2/3) + 1
    t = 4 ** (2 / 3)
    assert noise_std(FIGURE6, scaling=power_scaling(FIGURE6, gamma=2 / 3), rho=rho) == pytest.approx(
        [t * math.sqrt(t + 1) / root, math.sqrt(t + 1) / root], rel=1e-14)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, 0.5])
def test_expected_moment_is_lemma_c1(p):
    rng = np.random.default_rng(int(10 * p))
    for _ in range(20):
        delta = rng.uniform(0.1, 10.0, size=5)
        s = rng.uniform(0.1, 10.0, size=5)
        rho = rng.uniform(0.05, 3.0)
        assert expected_noise_moment(delta, scaling=s, rho=rho, p=p) == pytest.approx(
            paper_moment(delta, s, rho, p), rel=1e-12)


def test_second_moment_is_the_sum_of_the_variances_and_first_moment_uses_sqrt_2_over_pi():
    std = noise_std(FIGURE6, scaling=[3.0, 1.0], rho=0.7)
    assert expected_noise_moment(FIGURE6, scaling=[3.0, 1.0], rho=0.7, p=2) == pytest.approx(np.sum(std**2), rel=1e-13)
    assert expected_noise_moment(FIGURE6, scaling=[3.0, 1.0], rho=0.7, p=1) == pytest.approx(
        math.sqrt(2 / math.pi) * np.sum(std), rel=1e-13)


def test_rescaling_s_changes_nothing():
    rng = np.random.default_rng(1)
    delta = rng.uniform(0.5, 5.0, size=6)
    s = rng.uniform(0.5, 5.0, size=6)
    for factor in (1e-3, 0.37, 1.0, 12.0, 1e4):
        assert noise_std(delta, scaling=factor * s, rho=0.4) == pytest.approx(noise_std(delta, scaling=s, rho=0.4),
                                                                               rel=1e-13)
        for p in (1, 2):
            assert expected_noise_moment(delta, scaling=factor * s, rho=0.4, p=p) == pytest.approx(
                expected_noise_moment(delta, scaling=s, rho=0.4, p=p), rel=1e-13)


def test_moment_optimal_gamma_is_two_over_p_plus_two():
    assert moment_optimal_gamma(1) == pytest.approx(2 / 3, rel=1e-15)
    assert moment_optimal_gamma(2) == 0.5
    assert moment_optimal_gamma(4) == pytest.approx(1 / 3, rel=1e-15)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_gamma_two_over_p_plus_two_minimises_the_moment_over_a_grid_and_random_scalings(p):
    """Lemma C.2 checked numerically: no exponent of a fine grid and no random positive scaling
    vector gives a smaller p-th moment, and the minimum is Lemma C.3's closed form."""
    rng = np.random.default_rng(int(100 * p))
    best_gamma = moment_optimal_gamma(p)
    for _ in range(5):
        delta = rng.uniform(0.2, 20.0, size=4)
        optimum = expected_noise_moment(delta, scaling=power_scaling(delta, gamma=best_gamma), rho=0.5, p=p)
        assert optimum == pytest.approx(optimal_noise_moment(delta, rho=0.5, p=p), rel=1e-12)
        grid = np.linspace(-0.5, 1.5, 1001)
        moments = np.array([expected_noise_moment(delta, scaling=power_scaling(delta, gamma=g), rho=0.5, p=p)
                            for g in grid])
        assert moments.min() >= optimum * (1 - 1e-12)
        assert abs(grid[np.argmin(moments)] - best_gamma) <= 1e-3  # the grid's minimiser is the nearest point
        random_scalings = rng.uniform(0.01, 10.0, size=(500, delta.size)) ** rng.uniform(1, 3, size=(500, 1))
        for s in random_scalings:
            assert expected_noise_moment(delta, scaling=s, rho=0.5, p=p) >= optimum * (1 - 1e-12)


def test_sampled_noise_has_the_stds_and_moments_of_the_formulas():
    rng = np.random.default_rng(2024)
    runs = 400_000
    for gamma in (0.0, 0.5, 2 / 3, 1.0):
        s = power_scaling(FIGURE6, gamma=gamma)
        noise = sample_noise(FIGURE6, scaling=s, rho=0.5, size=runs, rng=rng)
        std = noise_std(FIGURE6, scaling=s, rho=0.5)
        assert noise.shape == (runs, 2)
        # relative standard errors at 4e5 draws: about 0.1 % (std), 0.1 % (l1), 0.2 % (l2^2); tolerance 1 %
        assert noise.std(axis=0) == pytest.approx(std, rel=0.01)
        assert np.abs(noise.mean(axis=0)) == pytest.approx([0, 0], abs=0.01 * std.max())
        for p in (1, 2):
            sampled = np.mean(np.sum(np.abs(noise) ** p, axis=1))
            assert sampled == pytest.approx(expected_noise_moment(FIGURE6, scaling=s, rho=0.5, p=p), rel=0.01)


def test_sampled_noise_is_reproducible_from_the_generator():
    draw = [sample_noise(FIGURE6, scaling=[2.0, 1.0], rho=1.0, size=5, rng=np.random.default_rng(3)) for _ in range(2)]
    assert np.array_equal(*draw)


def test_figure6_claims_moment_optimal_scalings_beat_the_even_split_horizontally_and_no_scaling_vertically():
    """Appendix C on Figure 6: both moment-optimal scalings add less horizontal noise than the even
    split and less vertical noise than no scaling (and more vertical noise than the even split)."""
    for rho in (0.1, 0.5, 2.0):
        even = noise_std(FIGURE6, scaling=power_scaling(FIGURE6, gamma=1.0), rho=rho)
        flat = noise_std(FIGURE6, scaling=power_scaling(FIGURE6, gamma=0.0), rho=rho)
        for p in (1, 2):
            std = noise_std(FIGURE6, scaling=power_scaling(FIGURE6, gamma=moment_optimal_gamma(p)), rho=rho)
            assert std[0] < even[0] and std[1] < flat[1]
            assert std[1] > even[1] and std[0] > flat[0]
            # and each is best at its own moment among the four
            own = expected_noise_moment(FIGURE6, scaling=power_scaling(FIGURE6, gamma=moment_optimal_gamma(p)),
                                        rho=rho, p=p)
            for gamma in (0.0, 0.5, 2 / 3, 1.0):
                other = expected_noise_moment(FIGURE6, scaling=power_scaling(FIGURE6, gamma=gamma), rho=rho, p=p)
                assert own <= other * (1 + 1e-12)


BAD = [
    (lambda: noise_std([4.0, -1.0], scaling=[1, 1], rho=1),
     r"sensitivities must be finite and > 0, got sensitivities\[1\]=-1\.0"),
    (lambda: noise_std([4.0, 1.0], scaling=[1, 0], rho=1), r"scaling must be finite and > 0, got scaling\[1\]=0\.0"),
    (lambda: noise_std([4.0, 1.0], scaling=[1, 1, 1], rho=1), r"scaling must have one value per query \(2\)"),
    (lambda: noise_std([[4.0, 1.0]], scaling=[1, 1], rho=1), r"sensitivities must be a non-empty 1-D array"),
    (lambda: noise_std([], scaling=[], rho=1), r"sensitivities must be a non-empty 1-D array"),
    (lambda: noise_std([4.0, float("nan")], scaling=[1, 1], rho=1), r"sensitivities must be finite"),
    (lambda: noise_std([4.0, 1.0], scaling=[1, 1], rho=0), r"rho must be finite and > 0, got rho=0"),
    (lambda: noise_std(["a"], scaling=[1], rho=1), r"sensitivities must be a 1-D array of numbers"),
    (lambda: power_scaling([4.0, 1.0], gamma=float("inf")), r"gamma must be a finite number"),
    (lambda: power_scaling([4.0, 1.0], gamma="1"), r"gamma must be a finite number, got gamma='1'"),
    (lambda: power_scaling([1e300, 1.0], gamma=3), r"sensitivities \*\* gamma leaves float64"),
    (lambda: moment_optimal_gamma(0), r"p must be finite and > 0, got p=0"),
    (lambda: expected_noise_moment([1.0], scaling=[1.0], rho=1, p=-1), r"p must be finite and > 0"),
    (lambda: optimal_noise_moment([1.0], rho=-2, p=1), r"rho must be finite and > 0, got rho=-2"),
    (lambda: sample_noise([1.0], scaling=[1.0], rho=1, size=0, rng=np.random.default_rng(0)),
     r"size must be a positive integer, got size=0"),
    (lambda: sample_noise([1.0], scaling=[1.0], rho=1, size=3, rng=1), r"rng must be a numpy.random.Generator"),
]


@pytest.mark.parametrize("index", range(len(BAD)))
def test_bad_input_raises_one_value_error_naming_it(index):
    call, message = BAD[index]
    with pytest.raises(ValueError, match=message):
        call()


def test_inputs_are_not_modified():
    delta, s = np.array([4.0, 1.0]), np.array([2.0, 1.0])
    noise_std(delta, scaling=s, rho=1.0)
    power_scaling(delta, gamma=0.5)
    assert delta.tolist() == [4.0, 1.0] and s.tolist() == [2.0, 1.0]
