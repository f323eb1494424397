"""The Mahalanobis error ||Sigma^(-1/2) (estimate - mu)|| (IOME Figure 5; experiments/engine/metrics.py,
docs/design.md §3), and the IOME paper's experiments through the engine: its rotated Gaussians,
Shifted-CM and CM (docs/design.md §5.5, §5.11, §7)."""
import math

import numpy as np
import pytest

from datasets import CovarianceFactors, Sample, rotated_gaussian
from experiments.engine.config import load_experiments
from experiments.engine.metrics import METRICS
from experiments.engine.trials import data_generator
from testkit.engine import run_one_cell


def whitened_norm(vector, sigma):
    """||Sigma^(-1/2) v|| through Sigma's eigendecomposition, computed from Sigma alone."""
    values, vectors = np.linalg.eigh(sigma)
    return float(np.linalg.norm(vectors @ ((vectors.T @ vector) / np.sqrt(values))))


def test_the_error_is_the_whitened_distance_to_the_truth_and_to_the_empirical_mean():
    sample = rotated_gaussian(n=10, d=5, kappa=100.0, mu=2.0, rng=np.random.default_rng(1))
    sigma = sample.covariance_factors.matrix()
    estimate, empirical = np.random.default_rng(2).standard_normal((2, 5)) + 2.0
    error, versus_empirical = METRICS["mahalanobis"](estimate, sample, empirical)
    assert error == pytest.approx(whitened_norm(estimate - 2.0, sigma), rel=1e-10)
    assert versus_empirical == pytest.approx(whitened_norm(estimate - empirical, sigma), rel=1e-10)
    # anisotropic: not the l2 error scaled by one number
    l2, _ = METRICS["l2"](estimate, sample, empirical)
    assert not math.isclose(error * math.sqrt(sigma.trace() / 5), l2, rel_tol=0.05)


def test_with_the_identity_rotation_it_divides_each_coordinate_by_its_std():
    sample = Sample(x=np.zeros((1, 2)), true_mean=np.zeros(2), true_std=np.array([2.0, 3.0]), bounds=(-1.0, 1.0),
                    covariance_factors=CovarianceFactors(None, np.array([4.0, 9.0])))
    error, versus_empirical = METRICS["mahalanobis"](np.array([6.0, 12.0]), sample, np.array([6.0, 0.0]))
    assert error == 5.0 and versus_empirical == 4.0


def test_an_unknown_truth_gives_nan_and_the_empirical_error_is_still_defined():
    sample = Sample(x=np.zeros((1, 2)), true_mean=None, true_std=None, bounds=(-1.0, 1.0),
                    covariance_factors=CovarianceFactors(None, np.ones(2)))
    error, versus_empirical = METRICS["mahalanobis"](np.array([3.0, 4.0]), sample, np.zeros(2))
    assert math.isnan(error) and versus_empirical == 5.0


def test_a_sample_without_a_covariance_is_refused_naming_the_metric():
    sample = Sample(x=np.zeros((1, 2)), true_mean=np.zeros(2), true_std=np.ones(2), bounds=(-1.0, 1.0))
    with pytest.raises(ValueError, match=r"metric 'mahalanobis' needs the true covariance.*states none"):
        METRICS["mahalanobis"](np.zeros(2), sample, np.zeros(2))


IOME_SECTION_6 = {
    "seed": 3,
    "variants": {
        "Shifted-CM": {"algorithm": "iome", "search_steps": 10, "clip_share": 0.25, "offset_factor": 1.0},
        "CM": {"algorithm": "clipped_mean"},
    },
    "experiments": {"iome_fig5": {
        "data": {"source": "rotated_gaussian", "n": 2000, "d": 16, "kappa": 100.0, "radius_scale": 100.0},
        "grid": {"rho": [0.5]}, "trials": 2, "metric": "mahalanobis",
        "mechanisms": ["Shifted-CM", "CM", "empirical_mean"],
    }},
}


def test_the_engine_runs_the_iome_papers_mechanisms_on_its_data_with_the_mahalanobis_error():
    spec = load_experiments(IOME_SECTION_6)["iome_fig5"]
    (cell,) = spec.cells()
    frame = run_one_cell(spec, cell, seed=3, log=None).set_index(["trial", "mechanism"])
    sample = rotated_gaussian(n=2000, d=16, kappa=100.0, radius_scale=100.0,
                              rng=data_generator(3, "iome_fig5", cell, 0))
    empirical = sample.x.mean(axis=0)
    error, _ = METRICS["mahalanobis"](empirical, sample, empirical)
    assert frame.loc[(0, "empirical_mean"), "error"] == pytest.approx(error, rel=1e-12)
    assert frame.loc[(0, "empirical_mean"), "error_vs_empirical"] == 0.0
    # sqrt(d / n) = 0.09 for the empirical mean; the private ones add their noise, not orders of magnitude
    assert frame["error"].max() < 1.0
    assert set(frame["true_rho"]) == {0.5, math.inf}
