"""Correlated Gaussian data A' and C' (PLAN Appendix E, Figure 7; docs/design.md §6)."""
import math
import re

import numpy as np
import pytest

import datasets
from datasets.synthetic import gaussian_a_corr, gaussian_a_corr_factor, gaussian_c_corr, gaussian_skewed


def a_prime_covariance(d, seed):
    """Sigma = Lambda Lambda^T + I, with Lambda recovered from the same seed (it is drawn first)."""
    factor = gaussian_a_corr_factor(d=d, rng=np.random.default_rng(seed))
    return factor @ factor.T + np.eye(d)


def c_prime_covariance(std, correlation):
    return correlation * np.outer(std, std) + (1.0 - correlation) * np.diag(std**2)


def test_both_generators_are_exported_from_the_package():
    assert datasets.gaussian_a_corr is gaussian_a_corr
    assert datasets.gaussian_c_corr is gaussian_c_corr
    assert datasets.gaussian_a_corr_factor is gaussian_a_corr_factor


def test_a_prime_factor_is_strictly_upper_triangular_with_entries_below_one_over_sqrt_d():
    factor = gaussian_a_corr_factor(d=64, rng=np.random.default_rng(0))
    upper = factor[np.triu_indices(64, k=1)]
    assert np.all(np.tril(factor) == 0.0)
    assert np.all((upper > 0) & (upper < 1 / 8))
    assert upper.mean() == pytest.approx(1 / 16, rel=0.05)  # Uniform(0, 1/8) has mean 1/16; 2016 entries


@pytest.mark.parametrize("d", [1, 16, 2048])
def test_a_prime_has_mean_zero_and_the_universe_of_gaussian_a(d):
    sample = gaussian_a_corr(n=2, d=d, rng=np.random.default_rng(0))
    assert sample.bounds == pytest.approx((-25 * math.sqrt(d), 25 * math.sqrt(d)))
    assert np.all(sample.true_mean == 0.0)


def test_a_prime_true_std_is_the_root_of_the_covariance_diagonal():
    sample = gaussian_a_corr(n=2, d=32, rng=np.random.default_rng(4))
    np.testing.assert_allclose(sample.true_std**2, np.diag(a_prime_covariance(32, 4)), rtol=1e-12)
    assert sample.true_std[-1] == 1.0  # the last row of Lambda is zero


@pytest.mark.parametrize(("d", "alpha"), [(512, 2.0), (16, 1.0), (8, 0.0)])
def test_c_prime_has_the_variances_mean_and_universe_of_gaussian_skewed(d, alpha):
    sample = gaussian_c_corr(n=2, d=d, alpha=alpha, rng=np.random.default_rng(0))
    skewed = gaussian_skewed(n=2, d=d, alpha=alpha, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(sample.true_std, skewed.true_std)
    assert sample.bounds == skewed.bounds
    assert np.all(sample.true_mean == 10.0)


def test_c_prime_defaults_are_the_paper_setting_alpha_2_and_correlation_one_half():
    default = gaussian_c_corr(n=3, d=4, rng=np.random.default_rng(1))
    explicit = gaussian_c_corr(n=3, d=4, rng=np.random.default_rng(1), alpha=2.0, correlation=0.5, mean=10.0)
    assert default.x.tobytes() == explicit.x.tobytes()
    np.testing.assert_allclose(default.true_std**2, [16.0, 4.0, 16 / 9, 1.0])


def standard_errors(covariance, n):
    """Standard error of each sample covariance entry of n Gaussian draws: sqrt((S_ii S_jj + S_ij^2) / n)."""
    diagonal = np.diag(covariance)
    return np.sqrt((np.outer(diagonal, diagonal) + covariance**2) / n)


def test_a_prime_empirical_covariance_matches_lambda_lambda_t_plus_identity():
    n = 100_000
    sample = gaussian_a_corr(n=n, d=8, rng=np.random.default_rng(11))
    target = a_prime_covariance(8, 11)
    errors = standard_errors(target, n)  # about 0.0035 here
    # 5 standard errors for each of the 36 distinct entries cannot flake for a fixed seed ...
    assert np.all(np.abs(np.cov(sample.x, rowvar=False) - target) < 5 * errors)
    # ... and would catch independent coordinates: the largest correlation is dozens of errors away from 0
    assert np.max(np.triu(target, k=1) / errors) > 20
    assert np.all(np.abs(sample.x.mean(axis=0)) < 5 * np.sqrt(np.diag(target) / n))


@pytest.mark.parametrize("correlation", [0.5, 0.0, 0.9])
def test_c_prime_empirical_covariance_matches_the_equicorrelated_target(correlation):
    n = 100_000
    sample = gaussian_c_corr(n=n, d=8, rng=np.random.default_rng(12), correlation=correlation)
    target = c_prime_covariance(sample.true_std, correlation)
    assert np.all(np.abs(np.cov(sample.x, rowvar=False) - target) <= 5 * standard_errors(target, n))
    assert np.all(np.abs(sample.x.mean(axis=0) - 10.0) < 5 * sample.true_std / math.sqrt(n))


def test_c_prime_correlation_one_gives_perfectly_correlated_coordinates():
    sample = gaussian_c_corr(n=50, d=3, rng=np.random.default_rng(0), correlation=1.0)
    np.testing.assert_allclose(np.corrcoef(sample.x, rowvar=False), np.ones((3, 3)))


def test_a_prime_covariance_is_random_and_comes_from_rng():
    first = gaussian_a_corr(n=2, d=8, rng=np.random.default_rng(1))
    second = gaussian_a_corr(n=2, d=8, rng=np.random.default_rng(2))
    assert not np.array_equal(first.true_std, second.true_std)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"correlation": 1.5}, "correlation must be in [0, 1], got correlation=1.5"),
        ({"correlation": -0.1}, "correlation must be in [0, 1], got correlation=-0.1"),
        ({"correlation": math.nan}, "correlation must be a finite real number, got correlation=nan"),
        ({"correlation": "0.5"}, "correlation must be a finite real number, got correlation='0.5'"),
        ({"alpha": -1.0}, "alpha must be >= 0, got alpha=-1.0"),
        ({"alpha": math.inf}, "alpha must be a finite real number, got alpha=inf"),
        ({"mean": math.nan}, "mean must be a finite real number, got mean=nan"),
    ],
)
def test_c_prime_bad_parameters_raise_value_error_naming_the_value(kwargs, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        gaussian_c_corr(n=2, d=2, rng=np.random.default_rng(0), **kwargs)


def test_the_a_prime_factor_rejects_a_seed_instead_of_a_generator():
    """Shapes, bounds, seeds and size errors of the generators themselves: tests/datasets/test_synthetic.py."""
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        gaussian_a_corr_factor(d=2, rng=0)
