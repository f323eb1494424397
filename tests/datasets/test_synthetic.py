import math
import re

import numpy as np
import pytest

from datasets.synthetic import (
    coinpress_gaussian,
    gaussian_a,
    gaussian_a_corr,
    gaussian_c_corr,
    gaussian_skewed,
    gaussian_std,
    rotated_gaussian,
)

GENERATORS = {
    "gaussian_a": lambda **kw: gaussian_a(**kw),
    "gaussian_skewed": lambda **kw: gaussian_skewed(alpha=1.5, **kw),
    "gaussian_a_corr": lambda **kw: gaussian_a_corr(**kw),
    "gaussian_c_corr": lambda **kw: gaussian_c_corr(**kw),
    "coinpress_gaussian": lambda **kw: coinpress_gaussian(radius_scale=10, **kw),
    "rotated_gaussian": lambda **kw: rotated_gaussian(kappa=100.0, mu=5.0, **kw),
    "rotated_gaussian_identity": lambda **kw: rotated_gaussian(**kw),
}


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
@pytest.mark.parametrize(("n", "d"), [(1, 1), (7, 3), (50, 16)])
def test_sample_has_n_rows_of_d_float64_coordinates(make, n, d):
    sample = make(n=n, d=d, rng=np.random.default_rng(0))
    assert sample.x.shape == (n, d)
    assert sample.x.dtype == np.float64
    assert sample.true_mean.shape == sample.true_std.shape == (d,)


@pytest.mark.parametrize("d", [16, 2048])
def test_gaussian_a_is_standard_normal_in_universe_of_radius_25_sqrt_d(d):
    sample = gaussian_a(n=2, d=d, rng=np.random.default_rng(0))
    assert sample.bounds == pytest.approx((-25 * math.sqrt(d), 25 * math.sqrt(d)))
    assert np.all(sample.true_mean == 0.0)
    assert np.all(sample.true_std == 1.0)


@pytest.mark.parametrize(
    ("d", "alpha", "radius"),
    [
        (512, 0.0, 50 * 512),  # max variance 1
        (512, 2.0, 50 * 512 * math.sqrt(512)),  # max variance 512^2
        (16, 1.0, 50 * 16 * 2.0),  # max variance 16, 16^(1/4) = 2
    ],
)
def test_skewed_universe_radius_is_50_d_times_fourth_root_of_max_variance(d, alpha, radius):
    sample = gaussian_skewed(n=2, d=d, alpha=alpha, rng=np.random.default_rng(0))
    assert sample.bounds == pytest.approx((-radius, radius))


def test_skewed_variances_are_d_over_i_to_the_alpha_with_1_based_i():
    sample = gaussian_skewed(n=2, d=4, alpha=2.0, rng=np.random.default_rng(0))
    np.testing.assert_allclose(sample.true_std**2, [16.0, 4.0, 16 / 9, 1.0])


def test_skewed_mean_defaults_to_10_and_can_be_chosen():
    default = gaussian_skewed(n=2, d=3, alpha=1.0, rng=np.random.default_rng(0))
    chosen = gaussian_skewed(n=2, d=3, alpha=1.0, rng=np.random.default_rng(0), mean=-2.5)
    assert np.all(default.true_mean == 10.0)
    assert np.all(chosen.true_mean == -2.5)


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
def test_same_seed_gives_identical_bytes(make):
    first = make(n=100, d=8, rng=np.random.default_rng(42))
    second = make(n=100, d=8, rng=np.random.default_rng(42))
    assert first.x.tobytes() == second.x.tobytes()


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
def test_drawing_into_out_gives_the_same_bytes_in_that_array(make):
    """The engine draws each trial into the previous trial's array."""
    out = np.full((100, 8), np.nan)
    into = make(n=100, d=8, rng=np.random.default_rng(42), out=out)
    assert into.x is out
    assert out.tobytes() == make(n=100, d=8, rng=np.random.default_rng(42)).x.tobytes()


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
@pytest.mark.parametrize("out",
                         [np.empty((100, 7)), np.empty((100, 8), dtype=np.float32), np.empty((8, 100)).T, [[0.0]]],
                         ids=["shape", "dtype", "order", "list"])
def test_an_unusable_out_is_rejected_naming_the_shape_it_needs(make, out):
    with pytest.raises(ValueError, match=r"out must be a writable C-contiguous float64 array of shape \(100, 8\)"):
        make(n=100, d=8, rng=np.random.default_rng(42), out=out)


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
def test_different_seeds_give_different_data(make):
    first = make(n=100, d=8, rng=np.random.default_rng(1))
    second = make(n=100, d=8, rng=np.random.default_rng(2))
    assert not np.array_equal(first.x, second.x)


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
def test_empirical_mean_and_std_match_the_truth_for_a_fixed_seed(make):
    sample = make(n=20_000, d=8, rng=np.random.default_rng(7))
    # Standard errors are about std / sqrt(n) < 1 % of std; 5 % cannot flake for a fixed seed.
    np.testing.assert_allclose(sample.x.std(axis=0), sample.true_std, rtol=0.05)
    np.testing.assert_allclose(sample.x.mean(axis=0), sample.true_mean, atol=0.05 * sample.true_std.max())


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
def test_all_draws_lie_inside_the_universe(make):
    sample = make(n=1000, d=64, rng=np.random.default_rng(3))
    lo, hi = sample.bounds
    assert lo < sample.x.min() and sample.x.max() < hi


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0, "d": 4}, "n must be a positive integer, got n=0"),
        ({"n": 2.5, "d": 4}, "n must be a positive integer, got n=2.5"),
        ({"n": True, "d": 4}, "n must be a positive integer, got n=True"),
        ({"n": 4, "d": -1}, "d must be a positive integer, got d=-1"),
        ({"n": 4, "d": True}, "d must be a positive integer, got d=True"),
    ],
)
def test_bad_sizes_raise_value_error_naming_the_value(make, kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        make(rng=np.random.default_rng(0), **kwargs)


@pytest.mark.parametrize(
    ("alpha", "message"),
    [
        (-0.5, "alpha must be >= 0, got alpha=-0.5"),
        (math.inf, "alpha must be a finite real number, got alpha=inf"),
        (math.nan, "alpha must be a finite real number, got alpha=nan"),
    ],
)
def test_bad_alpha_raises_value_error_naming_the_value(alpha, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        gaussian_skewed(n=2, d=2, alpha=alpha, rng=np.random.default_rng(0))


def test_non_finite_mean_raises_value_error_naming_the_value():
    with pytest.raises(ValueError, match="^mean must be a finite real number, got mean=nan$"):
        gaussian_skewed(n=2, d=2, alpha=1.0, rng=np.random.default_rng(0), mean=math.nan)


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
def test_a_seed_instead_of_a_generator_is_rejected(make):
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        make(n=2, d=2, rng=0)


# ---------------------------------------------------------------- the authors' Table 2 data


@pytest.mark.parametrize("sigma", [0.001, 1.0])
def test_gaussian_std_draws_n_values_of_n_mean_sigma_squared_in_mean_plus_minus_5_sigma(sigma):
    sample = gaussian_std(n=20_000, sigma=sigma, rng=np.random.default_rng(4))
    assert sample.x.shape == (20_000, 1) and sample.x.dtype == np.float64
    assert sample.bounds == pytest.approx((10.0 - 5 * sigma, 10.0 + 5 * sigma), rel=1e-15)
    np.testing.assert_array_equal(sample.true_std, [sigma])
    np.testing.assert_array_equal(sample.true_mean, [10.0])
    # standard errors of the sample std and mean: 0.5 % and 0.7 % of sigma; 3 % cannot flake at this seed
    assert sample.x.std() == pytest.approx(sigma, rel=0.03)
    assert sample.x.mean() == pytest.approx(10.0, abs=0.03 * sigma)


def test_gaussian_std_takes_the_mean_and_the_bound_width_in_stds():
    sample = gaussian_std(n=10, sigma=2.0, mean=-3.0, bound_stds=4.0, rng=np.random.default_rng(0))
    assert sample.bounds == (-11.0, 5.0)
    same = gaussian_std(n=10, sigma=2.0, mean=-3.0, bound_stds=4.0, rng=np.random.default_rng(0))
    assert sample.x.tobytes() == same.x.tobytes()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sigma": 0.0}, "sigma must be > 0, got sigma=0.0"),
        ({"sigma": -1.0}, "sigma must be > 0, got sigma=-1.0"),
        ({"sigma": math.nan}, "sigma must be a finite real number, got sigma=nan"),
        ({"bound_stds": 0}, "bound_stds must be > 0, got bound_stds=0"),
        ({"mean": math.inf}, "mean must be a finite real number, got mean=inf"),
        ({"n": 0}, "n must be a positive integer, got n=0"),
        ({"sigma": 1e-300, "mean": 1e10}, "bound_stds * sigma = 5e-300 is too small to widen mean=10000000000.0"),
    ],
)
def test_gaussian_std_rejects_bad_parameters_naming_the_value(kwargs, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        gaussian_std(**({"n": 5, "sigma": 1.0} | kwargs), rng=np.random.default_rng(0))


# ---------------------------------------------------------------- public knowledge: sigma_max, the prior ball


@pytest.mark.parametrize(("d", "alpha"), [(16, 0.0), (16, 1.0), (128, 2.0)])
def test_the_skewed_sources_state_sigma_max_which_sets_their_universe(d, alpha):
    for sample in (gaussian_skewed(n=3, d=d, alpha=alpha, rng=np.random.default_rng(0)),
                   gaussian_c_corr(n=3, d=d, alpha=alpha, rng=np.random.default_rng(0))):
        assert sample.max_std == pytest.approx(d ** (alpha / 2), rel=1e-12) == sample.true_std.max()
        # M = 50 d (max sigma^2)^(1/4) = 50 d sqrt(sigma_max): public through the universe
        assert sample.bounds[1] == pytest.approx(50 * d * math.sqrt(sample.max_std), rel=1e-12)
        assert sample.prior_ball is None


def test_gaussian_a_states_sigma_max_1_and_a_corr_none_its_largest_variance_being_drawn():
    assert gaussian_a(n=3, d=4, rng=np.random.default_rng(0)).max_std == 1.0
    correlated = gaussian_a_corr(n=3, d=4, rng=np.random.default_rng(0))
    assert correlated.max_std is None and correlated.prior_ball is None


@pytest.mark.parametrize(("d", "radius_scale", "mean"), [(50, 10, 0.0), (3, 1112, -2.0), (1, 1, 1.0)])
def test_coinpress_gaussian_is_n_0_i_with_the_prior_ball_of_radius_r_around_0(d, radius_scale, mean):
    sample = coinpress_gaussian(n=5, d=d, radius_scale=radius_scale, mean=mean, rng=np.random.default_rng(0))
    radius = radius_scale * math.sqrt(d)
    assert np.array_equal(sample.prior_ball.centre, np.zeros(d))
    assert sample.prior_ball.radius == pytest.approx(radius, rel=1e-15)
    assert sample.bounds == pytest.approx((-radius, radius), rel=1e-15)  # the box around the ball
    assert np.all(sample.true_mean == mean) and np.all(sample.true_std == 1.0)
    assert sample.max_std == 1.0
    # the same draws as N(mean, I): mean + standard normal
    assert np.array_equal(sample.x, mean + np.random.default_rng(0).standard_normal((5, d)))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mean": 2.0, "radius_scale": 1.0}, r"mean=2\.0 lies outside the prior ball of radius R = radius_scale sqrt"),
        ({"radius_scale": 0.0}, r"radius_scale must be in \(0, 1e\+90\], got radius_scale=0\.0"),
        ({"radius_scale": -1}, r"radius_scale must be in \(0, 1e\+90\], got radius_scale=-1"),
        ({"radius_scale": 1e91}, r"radius_scale must be in \(0, 1e\+90\], got radius_scale=1e\+91"),
        ({"radius_scale": math.inf}, r"radius_scale must be a finite real number, got radius_scale=inf"),
        ({"mean": math.nan}, r"mean must be a finite real number, got mean=nan"),
    ],
)
def test_coinpress_gaussian_rejects_a_mean_outside_its_ball_and_bad_radii_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        coinpress_gaussian(n=3, d=4, rng=np.random.default_rng(0), **({"radius_scale": 10} | kwargs))
