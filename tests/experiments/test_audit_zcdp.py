"""The native zCDP test of the audit (docs/design.md §5.8): the Bernoulli Renyi divergence and
the bound built on it, soundness (no exact mechanism flagged over several seeds), power (a
Gaussian mechanism with twice its claimed rho flagged at every rho the config audits), the
projection of the runs an audit needs, and argument checks.

Every draw comes from a fixed seed, so each test is deterministic; the values measured at
these seeds are in the comments, and the assertions keep margins."""
import math

import numpy as np
import pytest
import scipy.stats

from experiments.audit.audits import GAUSSIAN_CLIP, GAUSSIAN_X, GAUSSIAN_X_NEIGHBOUR
from mechanisms.audit import (
    RENYI_ORDERS,
    ZcdpAuditResult,
    audit_zcdp,
    audit_zcdp_samples,
    bernoulli_renyi,
    draw_statistics,
    projected_runs,
    zcdp_bound,
)
from mechanisms.plan_transcript import batched_gaussian_clipped_mean


def gaussian_step(rho):
    """PLAN's Gaussian step on the audit's pair: a Gaussian shift of exactly sqrt(2 rho) noise
    standard deviations, so it is rho-zCDP and no more private than that."""
    def mechanism(zt, rng, runs):
        return batched_gaussian_clipped_mean(zt, clip=GAUSSIAN_CLIP, rho=rho, rng=rng, runs=runs)
    return mechanism


def laplace_mechanism(scale):
    def mechanism(x, rng, runs):
        return x + rng.laplace(scale=scale, size=runs)
    return mechanism


# ---------------------------------------------------------------- the divergence


@pytest.mark.parametrize("p,q", [(0.3, 0.1), (0.01, 0.2), (0.999, 0.5), (1e-6, 1e-9)])
@pytest.mark.parametrize("alpha", [1.5, 2.0, 7.0])
def test_bernoulli_renyi_is_the_definition(p, q, alpha):
    direct = math.log(p**alpha * q ** (1 - alpha) + (1 - p) ** alpha * (1 - q) ** (1 - alpha)) / (alpha - 1)
    assert float(bernoulli_renyi(p, q, alpha)) == pytest.approx(direct, rel=1e-9)


def test_bernoulli_renyi_tends_to_the_kl_divergence_as_alpha_tends_to_one():
    p, q = 0.3, 0.1
    kl = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))
    assert float(bernoulli_renyi(p, q, 1 + 1e-7)) == pytest.approx(kl, rel=1e-5)


def test_bernoulli_renyi_edge_cases():
    assert float(bernoulli_renyi(0.2, 0.2, 3.0)) == pytest.approx(0.0, abs=1e-15)
    assert float(bernoulli_renyi(0.2, 0.0, 3.0)) == math.inf  # an event impossible under D'
    assert float(bernoulli_renyi(0.0, 0.5, 3.0)) == pytest.approx(math.log(2) * 3 / 2 - math.log(2) / 2)


def test_the_divergence_shrinks_as_the_rates_move_towards_each_other():
    """The step of the soundness argument: for p > q, raising q or lowering p (keeping p > q)
    never increases D_alpha(Bern(p) || Bern(q)), at every order."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.01, 0.99, 2000)
    q = p * rng.uniform(0.0, 1.0, 2000)
    p_inner = q + (p - q) * rng.uniform(0.0, 1.0, 2000)
    q_inner = q + (p_inner - q) * rng.uniform(0.0, 1.0, 2000)
    for alpha in (1.01, 2.0, 30.0):
        assert np.all(bernoulli_renyi(p_inner, q_inner, alpha) <= bernoulli_renyi(p, q, alpha) + 1e-12)


def test_a_rejection_set_never_shows_more_than_the_gaussian_mechanism_spends():
    """Data processing, numerically: for a Gaussian shift of sqrt(2 rho) standard deviations
    (exactly rho-zCDP), no threshold's Bernoulli pair gives D_alpha / alpha above rho."""
    for rho in (1 / 16, 1 / 4, 1.0):
        t = np.linspace(-4, 9, 2001)
        p, q = scipy.stats.norm.sf(t - math.sqrt(2 * rho)), scipy.stats.norm.sf(t)
        bound, _ = zcdp_bound(p, q)
        assert np.max(bound) < rho
        assert np.max(bound) > 0.9 * rho  # and far tails come close to it


def test_zcdp_bound_is_zero_unless_the_rates_are_separated():
    bound, alpha = zcdp_bound([0.1, 0.2, 0.3], [0.2, 0.2, 0.1])
    assert bound[0] == 0.0 and bound[1] == 0.0 and bound[2] > 0.0
    assert math.isnan(alpha[0]) and alpha[2] in RENYI_ORDERS
    assert bound[2] == pytest.approx(np.max(bernoulli_renyi(0.3, 0.1, RENYI_ORDERS) / RENYI_ORDERS))


# ---------------------------------------------------------------- the test


def test_perfectly_separated_samples_give_the_largest_bound_the_runs_allow():
    runs = 1000
    result = audit_zcdp_samples(np.ones(runs), np.zeros(runs), claimed_rho=1.0)
    a, m = 0.025, runs // 2
    expected, _ = zcdp_bound(a ** (1 / m), 1 - a ** (1 / m))
    assert result.rho_lower == pytest.approx(float(expected))
    assert result.tpr == 1.0 and result.fpr == 0.0 and result.violation


@pytest.mark.parametrize("rho", [1 / 16, 1 / 4, 1.0])
def test_the_exact_gaussian_step_is_not_flagged_over_seeds(rho):
    """rho_lower / rho measured 0.68-0.75 at 10^6 runs; at 10^5 runs, ten seeds each."""
    for seed in range(10):
        result = audit_zcdp(gaussian_step(rho), GAUSSIAN_X, GAUSSIAN_X_NEIGHBOUR, claimed_rho=rho, runs=100_000,
                            rng=np.random.default_rng(seed), batched=True)
        assert not result.violation, (seed, result)
        assert result.rho_lower < 0.85 * rho


def test_the_laplace_mechanism_is_not_flagged_against_its_zcdp_conversion():
    """eps-DP implies eps^2 / 2-zCDP (Bun and Steinke 2016, Proposition 1.4)."""
    for seed in range(5):
        result = audit_zcdp(laplace_mechanism(1.0), 0.0, 1.0, claimed_rho=0.5, runs=200_000,
                            rng=np.random.default_rng(seed), batched=True)
        assert not result.violation, (seed, result)


@pytest.mark.parametrize("rho", [1 / 16, 1 / 4, 1.0])
def test_a_gaussian_step_with_twice_its_claimed_rho_is_flagged(rho):
    """Measured 1.37-1.50 times the claim at 10^6 runs (1.17-1.39 at 10^5)."""
    for seed in range(3):
        result = audit_zcdp(gaussian_step(2 * rho), GAUSSIAN_X, GAUSSIAN_X_NEIGHBOUR, claimed_rho=rho, runs=1_000_000,
                            rng=np.random.default_rng(seed), batched=True)
        assert result.rho_lower > 1.2 * rho, (seed, result)


def test_one_and_a_half_times_the_claim_is_flagged_at_a_million_runs():
    """rho = 1/4: measured 1.05-1.13 times the claim at 10^6 runs over three seeds."""
    for seed in range(3):
        result = audit_zcdp(gaussian_step(0.375), GAUSSIAN_X, GAUSSIAN_X_NEIGHBOUR, claimed_rho=0.25,
                            runs=1_000_000, rng=np.random.default_rng(seed), batched=True)
        assert result.violation, (seed, result)


def test_both_orders_of_the_pair_are_tested():
    forward = audit_zcdp(gaussian_step(1.0), GAUSSIAN_X, GAUSSIAN_X_NEIGHBOUR, claimed_rho=0.25, runs=100_000,
                         rng=np.random.default_rng(3), batched=True)
    backward = audit_zcdp(gaussian_step(1.0), GAUSSIAN_X_NEIGHBOUR, GAUSSIAN_X, claimed_rho=0.25, runs=100_000,
                          rng=np.random.default_rng(3), batched=True)
    assert forward.violation and backward.violation  # the same test, with x and x' swapped
    assert backward.rho_lower == pytest.approx(forward.rho_lower, rel=0.15)


def test_the_result_records_the_chosen_test():
    result = audit_zcdp(gaussian_step(1.0), GAUSSIAN_X, GAUSSIAN_X_NEIGHBOUR, claimed_rho=0.25, runs=100_000,
                        rng=np.random.default_rng(4), batched=True)
    assert isinstance(result, ZcdpAuditResult)
    assert result.tpr_lower <= result.tpr and result.fpr <= result.fpr_upper
    assert result.alpha > 1 and result.runs == 100_000 and result.confidence == 0.95
    row = result.as_dict()
    assert row["violation"] is True and row["rho_lower"] == result.rho_lower
    assert float(zcdp_bound(result.tpr_lower, result.fpr_upper)[0]) == result.rho_lower


def test_unbatched_and_batched_calls_give_the_same_draws():
    """One call per run and batched calls in chunks draw the same normals in the same order."""
    def one(zt, rng):
        return batched_gaussian_clipped_mean(zt, clip=GAUSSIAN_CLIP, rho=0.25, rng=rng, runs=1)[0]
    plain = audit_zcdp(one, GAUSSIAN_X, GAUSSIAN_X_NEIGHBOUR, claimed_rho=0.25, runs=2000, rng=np.random.default_rng(5))
    chunked = audit_zcdp(gaussian_step(0.25), GAUSSIAN_X, GAUSSIAN_X_NEIGHBOUR, claimed_rho=0.25, runs=2000,
                         rng=np.random.default_rng(5), batched=True, chunk=300)
    assert plain == chunked


# ---------------------------------------------------------------- projection


def test_projected_runs_finds_a_doubled_rho_and_not_an_exact_mechanism():
    def draws(rho, seed):
        rng = np.random.default_rng(seed)
        options = dict(runs=100_000, rng=rng, batched=True)
        return (draw_statistics(gaussian_step(rho), GAUSSIAN_X, **options),
                draw_statistics(gaussian_step(rho), GAUSSIAN_X_NEIGHBOUR, **options))
    doubled = projected_runs(*draws(0.5, 6), claimed_rho=0.25)
    assert doubled is not None and 1_000 <= doubled <= 100_000  # measured 6310; the audit flags it at 10^5
    assert projected_runs(*draws(0.25, 7), claimed_rho=0.25) is None


# ---------------------------------------------------------------- arguments

GOOD = dict(claimed_rho=0.5, runs=1000, rng=np.random.default_rng(0), batched=True)


@pytest.mark.parametrize("change,match", [
    ({"claimed_rho": 0.0}, "claimed_rho"), ({"claimed_rho": math.inf}, "claimed_rho"),
    ({"claimed_rho": True}, "claimed_rho"), ({"runs": 3}, "runs"), ({"runs": 1000.0}, "runs"),
    ({"rng": 0}, "rng"), ({"confidence": 1.0}, "confidence"), ({"chunk": 0}, "chunk"),
    ({"batched": "yes"}, "batched"), ({"statistic": 3}, "statistic"),
])
def test_bad_arguments_raise_one_value_error_naming_them(change, match):
    with pytest.raises(ValueError, match=match):
        audit_zcdp(laplace_mechanism(1.0), 0.0, 1.0, **{**GOOD, **change})


def test_bad_samples_raise_one_value_error():
    with pytest.raises(ValueError, match="NaN"):
        audit_zcdp_samples(np.r_[np.nan, np.zeros(99)], np.zeros(100), claimed_rho=1.0)
    with pytest.raises(ValueError, match="same number of runs"):
        audit_zcdp_samples(np.zeros(100), np.zeros(99), claimed_rho=1.0)
    with pytest.raises(ValueError, match="mechanism must be callable"):
        audit_zcdp("gaussian", 0.0, 1.0, **GOOD)


# ---------------------------------------------------------------- the audit figure


def test_the_audit_figure_draws_each_bound_as_a_multiple_of_its_claim():
    import pandas as pd

    from experiments.outputs.figures.audit import RATIO_FLOOR, audit_figure

    table = pd.DataFrame([
        {"name": "gaussian_step", "accounting": "exact", "measure": "rho-zCDP", "claimed": 0.5, "lower_bound": 0.25,
         "control_lower_bound": 1.0, "violation": False},
        {"name": "empirical_mean", "accounting": "none", "measure": "eps-DP", "claimed": 2.0, "lower_bound": 8.0,
         "control_lower_bound": 0.0, "violation": True},
    ])
    ax = audit_figure(table).axes[0]
    audit, control = (collection.get_offsets() for collection in ax.collections)
    assert audit[:, 0].tolist() == [0.5, 4.0] and control[:, 0].tolist() == [2.0, RATIO_FLOOR]
    assert [label.get_text() for label in ax.get_yticklabels()] == [
        "gaussian_step (exact, rho-zCDP)", "empirical_mean (none, eps-DP)"]
    assert [text.get_text() for text in ax.texts] == ["violation"]
