"""The transcript audit of whole PLAN (experiments/audit/transcripts.py, docs/design.md §5.8): its statistic
step by step against direct formulas, its densities by the likelihood-ratio identity, its pair,
and its setup."""
import dataclasses

import numpy as np
import pytest
import scipy.stats

from experiments.audit.transcripts import (
    PAIR_BOUNDS,
    PAIR_X,
    PAIR_X_NEIGHBOUR,
    MixtureDensity,
    TranscriptLogLikelihoodRatio,
    em_log_density,
    plan_transcript_setup,
)
from mechanisms.accounting import ledger_total
from mechanisms.audit import audit_zcdp
from mechanisms.plan_transcript import plan_transcripts
from mechanisms.quantiles import em_epsilon, utility_factors

RHO = 0.25
ACCOUNTINGS = ("exact", "published")


@pytest.fixture(scope="module", params=ACCOUNTINGS)
def drawn(request):
    """(accounting, transcripts on x, on x', the statistic): 10^5 runs each."""
    accounting = request.param
    on_x, on_neighbour = (plan_transcripts(data, rho=RHO, bounds=PAIR_BOUNDS, rng=np.random.default_rng(seed),
                                           runs=100_000, accounting=accounting)
                          for seed, data in ((1, PAIR_X), (2, PAIR_X_NEIGHBOUR)))
    return accounting, on_x, on_neighbour, TranscriptLogLikelihoodRatio(PAIR_X, PAIR_X_NEIGHBOUR)


def test_the_exponential_mechanisms_log_density_is_the_interval_weight_over_its_width_and_the_total():
    edges = np.array([0.0, 1.0, 1.0, 1.5, 4.0])  # four intervals, one of them empty
    factors = utility_factors(3, q=0.5, eps=2.0, sensitivity=1.0)  # exp(-|i - 1.5|)
    weights = np.array([1.0, 1e-30, 0.5, 2.5]) * factors
    values = np.array([0.5, 1.2, 3.0, 0.0, 1.0])
    expected = np.log(weights[[0, 2, 3, 0, 2]] / np.array([1.0, 0.5, 2.5, 1.0, 0.5]) / weights.sum())
    np.testing.assert_allclose(em_log_density(edges, values, q=0.5, eps=2.0, sensitivity=1.0), expected, rtol=1e-13)
    rows = np.stack([edges, edges * 2.0])  # one row per value
    np.testing.assert_allclose(em_log_density(rows, np.array([0.5, 2.4]), q=0.5, eps=2.0, sensitivity=1.0),
                               [expected[0], expected[1] - np.log(2.0)], rtol=1e-13)


def test_on_the_centre_the_statistic_is_the_log_ratio_of_the_interval_weights_densities(drawn):
    accounting, on_x, _, statistic = drawn
    steps = on_x.steps
    centre = on_x.centre[:2000, 0]
    shifts = (0.1, 0.0, -0.1) if accounting == "published" else (0.0,)
    sensitivity = 0.5 if accounting == "published" else 1.0
    log_density = []
    for data in (PAIR_X, PAIR_X_NEIGHBOUR):  # weights written out: width * exp(-eps / (2 s) |rank - m / 2|)
        values = np.sort(np.concatenate([np.clip(data[:, 0] + s, -1.0, 1.0) for s in shifts]))
        edges = np.concatenate([[-1.0], values, [1.0]])
        m = values.size
        weights = np.maximum(np.diff(edges), 1e-30) * np.exp(
            -em_epsilon(RHO / 16 / len(shifts)) / (2 * sensitivity) * np.abs(np.arange(m + 1) - m / 2))
        index = np.searchsorted(edges, centre, side="right") - 1
        log_density.append(np.log(weights[index] / np.diff(edges)[index] / weights.sum()))
    assert steps.centre_eps == em_epsilon(RHO / 16 / len(shifts))
    np.testing.assert_allclose(statistic.steps(on_x)["centre"][:2000], log_density[0] - log_density[1], rtol=1e-9,
                               atol=1e-9)


def test_on_the_estimate_the_statistic_is_the_gaussian_log_likelihood_ratio(drawn):
    _, on_x, _, statistic = drawn
    runs = slice(0, 2000)
    centre, std, clip, mean = on_x.centre[runs, 0], on_x.std[runs, 0], on_x.clip[runs], on_x.mean[runs, 0]
    scale = (2.0 * np.maximum(2.0 * std, 1e-30)) ** -0.5  # Delta = 2 std, regularised: + Delta / d (d = 1)
    noise_std = np.sqrt(2.0 * clip ** 2 / (RHO * 0.75 * 0.75)) / 100
    log_density = []
    for data in (PAIR_X, PAIR_X_NEIGHBOUR):
        z = (data[:, 0][None, :] - centre[:, None]) * scale[:, None]
        clipped = np.clip(z, -clip[:, None], clip[:, None]).mean(axis=1)
        log_density.append(scipy.stats.norm.logpdf((mean - centre) * scale, loc=clipped, scale=noise_std))
    np.testing.assert_allclose(statistic.steps(on_x)["mean"][runs], log_density[0] - log_density[1], rtol=1e-7,
                               atol=1e-9)


def test_the_mixture_density_is_the_average_of_the_shuffles_densities():
    steps = plan_transcripts(PAIR_X, rho=RHO, bounds=PAIR_BOUNDS, rng=np.random.default_rng(0), runs=1,
                             accounting="published").steps
    mixture = MixtureDensity(steps, PAIR_X, shuffles=5, rng=np.random.default_rng(3))
    stats = steps.pair_statistics(PAIR_X, steps.permutations(np.random.default_rng(3), 5))
    medians = np.random.default_rng(1).uniform(0.0, 0.3, 2000)
    density = np.mean([np.exp(em_log_density(np.concatenate([[0.0], np.sort(s[0]), [steps.variance_upper]]), medians,
                                             q=0.5, eps=steps.variance_eps, sensitivity=steps.variance_sensitivity))
                       for s in stats], axis=0)
    np.testing.assert_allclose(np.exp(mixture.log_density(medians)), density, rtol=1e-12)
    # a density: it integrates to 1
    widths = np.diff(np.append(mixture.breaks[0], steps.variance_upper))
    assert np.sum(mixture.levels[0] * widths) == pytest.approx(1.0, rel=1e-9)


def test_every_steps_density_satisfies_the_likelihood_ratio_identity(drawn):
    """E_x[p_x' / p_x] = 1 and E_x'[p_x / p_x'] = 1 for each release given the earlier ones (a wrong
    density, budget or sensitivity in any step breaks it): within 1 % on 10^5 runs (measured:
    within 0.4 %, the whole transcript too)."""
    accounting, on_x, on_neighbour, statistic = drawn
    forward, backward = statistic.steps(on_x), statistic.steps(on_neighbour)
    for name in forward:
        assert np.mean(np.exp(-forward[name])) == pytest.approx(1.0, abs=0.01), (accounting, name)
        assert np.mean(np.exp(backward[name])) == pytest.approx(1.0, abs=0.01), (accounting, name)
    total = statistic(on_x)
    assert np.mean(np.exp(-total)) == pytest.approx(1.0, abs=0.01)
    np.testing.assert_allclose(total, sum(forward.values()))


def test_a_density_with_the_wrong_budget_breaks_the_identity(drawn):
    """The identity test has power: transcripts drawn with rho x 2 but judged with rho's densities
    are off by far more than 1 % (measured on 20,000 runs: the clip threshold by 10 % (exact) and
    17 % (published), the estimate by 6 %, the published centre by 7 %)."""
    accounting, _, _, statistic = drawn
    wrong = plan_transcripts(PAIR_X, rho=2 * RHO, bounds=PAIR_BOUNDS, rng=np.random.default_rng(3), runs=20_000,
                             accounting=accounting)
    right = plan_transcripts(PAIR_X, rho=RHO, bounds=PAIR_BOUNDS, rng=np.random.default_rng(3), runs=1,
                             accounting=accounting)
    judged = dataclasses.replace(wrong, steps=right.steps)
    steps = statistic.steps(judged)
    assert max(abs(np.mean(np.exp(-steps[name])) - 1.0) for name in ("centre", "clip", "mean")) > 0.05


def test_the_pair_swaps_one_person_who_crosses_the_clip_thresholds_region():
    """The module docstring's pair: one row differs; the person's value -0.23 lies below the median
    (rank 11 of 100) and its distance from the centre just below the shell's 22 (ranks 78-99), among
    which step 5's target rank 85 falls; at 1 it is above everything."""
    differ = np.flatnonzero(PAIR_X[:, 0] != PAIR_X_NEIGHBOUR[:, 0])
    assert differ.tolist() == [0]
    values = np.sort(PAIR_X[:, 0])
    assert np.searchsorted(values, -0.23) == 11
    norms = np.sort(np.abs(PAIR_X[:, 0]))
    assert np.searchsorted(norms, 0.23) == 77 and np.all(norms[78:] >= 0.24)
    steps = plan_transcripts(PAIR_X, rho=RHO, bounds=PAIR_BOUNDS, rng=np.random.default_rng(0), runs=1).steps
    assert 78 <= steps.clip_q * 100 <= 99
    assert PAIR_X_NEIGHBOUR[0, 0] == PAIR_BOUNDS[1]


@pytest.mark.parametrize("accounting", ACCOUNTINGS)
def test_the_setup_runs_the_batched_mechanism_with_rho_times_the_factor(accounting):
    mechanism, x, x_neighbour, statistic = plan_transcript_setup(accounting)(RHO, 2.0)
    assert x is PAIR_X and x_neighbour is PAIR_X_NEIGHBOUR
    transcripts = mechanism(x, np.random.default_rng(0), 7)
    assert transcripts.runs == 7 and transcripts.steps.noise_rho == pytest.approx(2.0 * RHO * 0.75 * 0.75)
    if accounting == "exact":
        assert ledger_total(transcripts.ledger) == pytest.approx(2.0 * RHO)
    values = statistic(transcripts)
    assert values.shape == (7,) and np.all(np.isfinite(values))


def test_an_unknown_accounting_is_refused():
    with pytest.raises(ValueError, match="accounting must be one of"):
        plan_transcript_setup("paper")


def test_exact_plan_passes_and_its_control_with_rho_x_4_is_flagged_at_few_runs():
    for factor, flagged in ((1.0, False), (4.0, True)):
        mechanism, x, x_neighbour, statistic = plan_transcript_setup("exact")(RHO, factor)
        result = audit_zcdp(mechanism, x, x_neighbour, claimed_rho=RHO, runs=20_000, rng=np.random.default_rng(11),
                            statistic=statistic, batched=True)
        assert result.violation == flagged, (factor, result.rho_lower)
