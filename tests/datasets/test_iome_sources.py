"""The IOME paper's data (docs/design.md §7): rotated_gaussian, N(mean 1_d, U Lambda U^T) with a
Haar rotation U (its Section 6.1's statistical experiments), and quadratic_ramp, the rows i^2 1_d
of its Figure 9. The properties every Gaussian source shares (shapes, seeds, out=, errors) are
tested with the others in tests/datasets/test_synthetic.py."""
import math

import numpy as np
import pytest

from datasets import CovarianceFactors, haar_orthogonal, quadratic_ramp, rotated_gaussian
from experiments.engine.sources import DATA_SOURCES, draw

# ---------------------------------------------------------------- the Haar rotation


@pytest.mark.parametrize("d", [1, 2, 7, 64])
def test_the_rotation_is_orthogonal(d):
    rotation = haar_orthogonal(d=d, rng=np.random.default_rng(d))
    np.testing.assert_allclose(rotation.T @ rotation, np.eye(d), atol=1e-13)
    assert abs(abs(np.linalg.det(rotation)) - 1.0) < 1e-12


def test_the_rotation_is_haar_its_entries_unbiased_and_both_orientations_equally_likely():
    """Under the Haar measure on O(3) every entry has mean 0 and mean square 1/3 and det = +-1 with
    probability 1/2. Without the sign correction, LAPACK's Householder QR makes every diagonal
    entry negative (r_jj = -sign(a_jj) ||a||): mean U_00 = -0.5, not 0. 4000 draws: standard
    errors 0.009 (mean), 0.005 (mean square), 0.008 (share); tolerances about 5 of them."""
    rng = np.random.default_rng(11)
    draws = np.array([haar_orthogonal(d=3, rng=rng) for _ in range(4000)])
    np.testing.assert_allclose(draws.mean(axis=0), np.zeros((3, 3)), atol=0.05)
    np.testing.assert_allclose((draws**2).mean(axis=0), np.full((3, 3), 1 / 3), atol=0.03)
    assert np.mean(np.linalg.det(draws) > 0) == pytest.approx(0.5, abs=0.04)
    assert np.mean(np.diagonal(draws, axis1=1, axis2=2) > 0) == pytest.approx(0.5, abs=0.03)


# ---------------------------------------------------------------- rotated_gaussian


def test_the_sample_covariance_is_close_to_sigma_at_large_n():
    """n = 200000, d = 8, kappa = 10: each covariance entry has a standard error of about
    sqrt(2) 10 / sqrt(n) = 0.03; the relative Frobenius error is about 0.015, tolerance 0.05."""
    sample = rotated_gaussian(n=200_000, d=8, kappa=10.0, mu=-1.0, rng=np.random.default_rng(3))
    sigma = sample.covariance_factors.matrix()
    empirical = np.cov(sample.x, rowvar=False)
    assert np.linalg.norm(empirical - sigma) < 0.05 * np.linalg.norm(sigma)
    np.testing.assert_allclose(sample.x.mean(axis=0), -1.0, atol=0.05)
    np.testing.assert_allclose(sample.true_std, np.sqrt(np.diag(sigma)), rtol=1e-12)
    # the eigenvalues are Sigma's, drawn in [1, kappa], and the rotation is not a permutation
    np.testing.assert_allclose(np.linalg.eigvalsh(sigma), np.sort(sample.covariance_factors.eigenvalues), rtol=1e-10)
    assert np.all((sample.covariance_factors.eigenvalues >= 1.0) & (sample.covariance_factors.eigenvalues <= 10.0))
    assert np.abs(sigma - np.diag(np.diag(sigma))).max() > 0.5


def test_the_draws_are_eigenvalues_then_the_rotation_then_the_rows_rotated_in_blocks():
    """600 rows span three blocks of 256: the same rows as one product mean + (z * sqrt(Lambda)) U^T."""
    n, d, kappa, mean = 600, 5, 1000.0, 2.0
    sample = rotated_gaussian(n=n, d=d, kappa=kappa, mu=mean, rng=np.random.default_rng(4))
    replay = np.random.default_rng(4)
    eigenvalues = replay.uniform(1.0, kappa, size=d)
    rotation = haar_orthogonal(d=d, rng=replay)
    rows = mean + (replay.standard_normal((n, d)) * np.sqrt(eigenvalues)) @ rotation.T
    np.testing.assert_array_equal(sample.covariance_factors.eigenvalues, eigenvalues)
    np.testing.assert_array_equal(sample.covariance_factors.rotation, rotation)
    np.testing.assert_allclose(sample.x, rows, rtol=1e-12, atol=1e-10)


def test_kappa_1_is_the_identity_nothing_drawn_for_sigma_and_no_rotation():
    sample = rotated_gaussian(n=50, d=6, mu=0.5, rng=np.random.default_rng(5))
    assert sample.covariance_factors.rotation is None
    np.testing.assert_array_equal(sample.covariance_factors.eigenvalues, np.ones(6))
    np.testing.assert_array_equal(sample.x, 0.5 + np.random.default_rng(5).standard_normal((50, 6)))
    np.testing.assert_array_equal(sample.true_std, np.ones(6))
    assert sample.max_std == 1.0


def test_every_trial_draws_its_own_sigma():
    first, second = (rotated_gaussian(n=3, d=4, kappa=10.0, rng=np.random.default_rng(seed)) for seed in (1, 2))
    assert not np.array_equal(first.covariance_factors.rotation, second.covariance_factors.rotation)
    assert not np.array_equal(first.covariance_factors.eigenvalues, second.covariance_factors.eigenvalues)


@pytest.mark.parametrize("d,radius_scale,kappa", [(16, 50.0, 1.0), (64, 100.0, 1000.0), (3, 20.0, 10.0)])
def test_the_public_knowledge_is_the_authors_prior_ball_u_equal_2r_and_sigma_max(d, radius_scale, kappa):
    sample = rotated_gaussian(n=4, d=d, kappa=kappa, radius_scale=radius_scale, rng=np.random.default_rng(0))
    radius = radius_scale * math.sqrt(d)
    assert sample.prior_ball.radius == pytest.approx(radius, rel=1e-15)
    np.testing.assert_array_equal(sample.prior_ball.centre, np.zeros(d))
    assert sample.bounds == pytest.approx((-2.0 * radius, 2.0 * radius), rel=1e-15)
    assert sample.max_std == pytest.approx(math.sqrt(kappa), rel=1e-15)
    assert np.all(sample.true_std <= sample.max_std * (1 + 1e-12))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"mu": 60.0}, r"mu=60\.0 lies outside the prior ball of radius R = radius_scale sqrt\(d\) = 100"),
    ({"mu": 10.0, "radius_scale": 5.0}, r"mu=10\.0 lies outside the prior ball"),
    ({"kappa": 0.5}, r"kappa must be in \[1, 1e\+100\].*got kappa=0\.5"),
    ({"kappa": 1e101}, r"kappa must be in \[1, 1e\+100\].*got kappa=1e\+101"),
    ({"kappa": math.nan}, r"kappa must be a finite real number, got kappa=nan"),
    ({"radius_scale": 0.0}, r"radius_scale must be in \(0, 1e\+90\], got radius_scale=0\.0"),
])
def test_rotated_gaussian_rejects_bad_parameters_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rotated_gaussian(n=3, d=4, rng=np.random.default_rng(0), **({"radius_scale": 50.0} | kwargs))


def test_the_covariance_factors_whiten_as_sigma_to_the_minus_half():
    factors = rotated_gaussian(n=2, d=6, kappa=50.0, rng=np.random.default_rng(6)).covariance_factors
    values, vectors = np.linalg.eigh(factors.matrix())
    inverse_root = (vectors / np.sqrt(values)) @ vectors.T
    v = np.random.default_rng(7).standard_normal((3, 6))
    np.testing.assert_allclose(np.linalg.norm(factors.whitened(v), axis=1), np.linalg.norm(v @ inverse_root, axis=1),
                               rtol=1e-10)
    identity = CovarianceFactors(None, np.array([4.0, 9.0]))
    np.testing.assert_array_equal(identity.whitened(np.array([2.0, 3.0])), [1.0, 1.0])
    np.testing.assert_array_equal(identity.matrix(), np.diag([4.0, 9.0]))


# ---------------------------------------------------------------- quadratic_ramp


def test_the_ramp_is_rows_i_squared_with_its_own_column_means_as_the_truth():
    n, d = 500, 7
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    sample = quadratic_ramp(n=n, d=d, rng=rng)
    assert rng.bit_generator.state == before  # deterministic: nothing drawn
    np.testing.assert_array_equal(sample.x, np.repeat((np.arange(1, n + 1) ** 2.0)[:, None], d, axis=1))
    np.testing.assert_allclose(sample.true_mean, sample.x.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(sample.true_std, sample.x.std(axis=0), rtol=1e-12)
    assert sample.true_mean[0] == 501 * 1001 / 6
    norms = np.linalg.norm(sample.x, axis=1)
    assert sample.bounds == (-norms.max(), norms.max()) == (-250_000 * math.sqrt(d), 250_000 * math.sqrt(d))
    assert sample.covariance_factors is None and sample.prior_ball is None


def test_the_ramp_fills_the_previous_trials_array():
    out = np.full((30, 4), np.nan)
    sample = quadratic_ramp(n=30, d=4, rng=np.random.default_rng(0), out=out)
    assert sample.x is out
    np.testing.assert_array_equal(out, quadratic_ramp(n=30, d=4, rng=np.random.default_rng(1)).x)
    with pytest.raises(ValueError, match=r"out must be a writable C-contiguous float64 array of shape \(30, 4\)"):
        quadratic_ramp(n=30, d=4, rng=np.random.default_rng(0), out=np.empty((4, 30)))


def test_both_sources_are_registered_for_the_config():
    assert DATA_SOURCES["rotated_gaussian"] is rotated_gaussian
    assert DATA_SOURCES["quadratic_ramp"] is quadratic_ramp
    sample = draw("rotated_gaussian", {"n": 20, "d": 4, "kappa": 10.0}, np.random.default_rng(0),
                  out=np.empty((20, 4)))
    assert sample.x.shape == (20, 4) and sample.covariance_factors.rotation.shape == (4, 4)
