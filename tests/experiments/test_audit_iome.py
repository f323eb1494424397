"""The audits of IOME with the IOME paper's settings (iome_paper) and of CM (clipped_mean):
their pairs do what their docstrings say, and CM's statistic is the exact log-likelihood ratio
of its transcripts (docs/design.md §5.8, §5.11). Both audits also run, with their controls, in
tests/experiments/test_audit.py (test_registered_audit_flags_its_control_...)."""
from pathlib import Path

import numpy as np
import pytest
import yaml

from experiments.audit.audits import (
    AUDITS,
    CM_X,
    CM_X_NEIGHBOUR,
    IOME_PAPER_CLUSTER,
    IOME_PAPER_OPTIONS,
    IOME_PAPER_X,
    ClippedMeanLogLikelihoodRatio,
    clipped_mean_transcript,
    iome_transcript,
)

RUNS = 100_000


@pytest.mark.parametrize("rho", [0.25, 1.0])
def test_the_statistic_is_the_exact_log_likelihood_ratio_of_the_transcripts(rho):
    """For the true ratio L = ln p(t | x) / p(t | x'): E_x[e^-L] = E_x'[e^L] = 1 (each density
    integrates to 1), and E_x[L], E_x'[-L] are the two Kullback-Leibler divergences, between 0
    and rho for a rho-zCDP mechanism (D_1 <= rho). e^-L under x has variance at most e^(2 rho) - 1
    (the order-2 Renyi divergence is at most 2 rho): a standard error below 0.0055 at rho = 1 and
    10^5 runs, tolerance 0.03. A ratio missing a step's term, or with the wrong noise scale or
    target rank, breaks the identities (the threshold's steps alone move E[L] by about 0.01)."""
    statistic = ClippedMeanLogLikelihoodRatio(CM_X, CM_X_NEIGHBOUR, rho=rho)
    on_x = statistic(clipped_mean_transcript(CM_X, np.random.default_rng(1), RUNS, rho=rho))
    on_neighbour = statistic(clipped_mean_transcript(CM_X_NEIGHBOUR, np.random.default_rng(2), RUNS, rho=rho))
    assert np.exp(-on_x).mean() == pytest.approx(1.0, abs=0.03)
    assert np.exp(on_neighbour).mean() == pytest.approx(1.0, abs=0.03)
    assert 0.0 < on_x.mean() < rho and 0.0 < -on_neighbour.mean() < rho


def test_on_the_cm_pair_every_threshold_count_and_the_clipped_sum_move():
    """The person at -2^-10 is counted at every midpoint the search can visit (the smallest is
    2^-10), at +1 at none; the search often ends in its lowest cell, where the sum moves by 2C."""
    assert CM_X[0, 0] == -(2.0**-10) and CM_X_NEIGHBOUR[0, 0] == 1.0
    np.testing.assert_array_equal(CM_X[1:], CM_X_NEIGHBOUR[1:])
    assert np.all(CM_X[1:] == 0.0)
    clip = clipped_mean_transcript(CM_X, np.random.default_rng(3), RUNS, rho=0.25)[:, 1]
    assert 0.3 < np.mean(clip == 2.0**-11) < 0.5
    assert clip.min() == 2.0**-11 and clip.max() < 1.0


def test_on_the_iome_paper_pair_the_centre_is_the_cluster():
    transcripts = iome_transcript(IOME_PAPER_X, np.random.default_rng(4), RUNS, rho=0.25, **IOME_PAPER_OPTIONS)
    estimate, centre, clip, direction = transcripts.T
    assert np.mean(np.abs(centre) == -IOME_PAPER_CLUSTER) > 0.999
    assert np.all(clip < 1.0)


def test_the_iome_paper_audit_runs_iome_with_the_settings_of_the_config_variant_shifted_cm():
    with open(Path(__file__).resolve().parents[2] / "config" / "config.yaml", encoding="utf-8") as file:
        variants = yaml.safe_load(file)["variants"]
    assert variants["Shifted-CM"] == {"algorithm": "iome", **IOME_PAPER_OPTIONS}
    assert AUDITS["iome_paper"].measure == AUDITS["clipped_mean"].measure == "rho"
