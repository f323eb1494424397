"""PLAN's batched transcript (mechanisms.plan_transcript.plan_transcripts, docs/design.md §5.2, §5.8) against
plan_gaussian: bit for bit where the randomness can be arranged the same (one run per chunk), and
in distribution, release by release, where it cannot (many runs per chunk).

The distribution tests compare each release through a statistic that isolates its own step
given the earlier releases: the centre through its CDF under the exponential mechanism of step
2 (uniform if the step is right), the std estimate as it is (step 3 depends on nothing
released before it), the clip threshold through its CDF under step 5's exponential mechanism
given the centre and std, and the estimate through its standardised residual given centre,
std and clip threshold (standard normal if step 6's noise is right). Each is a two-sample
Kolmogorov-Smirnov test between 4000 plan_gaussian runs and 10^5 transcript runs, with fixed
seeds, at level 1e-3 (critical distance 0.0314), on the whole-PLAN pair of experiments/audit/audits.py
(exact accounting) and its n = 20 version (published accounting, see DISTRIBUTION_DATA).

Power: a factor 2 in any step's budget (either way) or in the noise variance moves that step's
statistic by a KS distance of at least 0.066 (measured, 10^5 runs of each: exact accounting
centre 0.066 / 0.077 (budget x 2 / x 1/2), std 0.21 / 0.40, clip threshold 0.12 / 0.14, noise
0.086 / 0.085; published accounting centre 0.087 / 0.12, std 0.34 / 0.24, clip threshold
0.27 / 0.25, noise 0.084 / 0.086). By the DKW inequality on each sample the observed distance
then exceeds the critical one unless a sample's empirical CDF is off by 0.028 (4000 runs) or
0.0062 (10^5 runs): the test misses such an error with probability at most
2 exp(-2 4000 0.028^2) + 2 exp(-2 10^5 0.0062^2) < 0.005.
test_a_factor_two_in_any_step_is_caught runs the tests on such broken transcripts (20,000 runs).
"""
import numpy as np
import pytest
import scipy.sparse
import scipy.stats

from mechanisms import SharedSample, plan_gaussian
from mechanisms.accounting import ledger_total
from mechanisms.plan_transcript import PlanSteps, plan_transcripts
from mechanisms.quantiles import interval_weights

PAIR_BOUNDS = (-1.0, 1.0)
PAIR = np.r_[-1.0, np.linspace(-0.2, 0.2, 99)][:, None]  # experiments/audit/audits.py's whole-PLAN pair
RHO = 0.25
ACCOUNTINGS = ("exact", "published")


def _data(name):
    rng = np.random.default_rng(17)
    return {
        "pair": (PAIR, PAIR_BOUNDS, {}),
        "d3": (rng.normal(0.0, 1.0, (200, 3)), (-4.0, 4.0), {}),
        "regions": (rng.normal(0.0, 1.0, (2000, 1)), (-4.0, 4.0), {"rho": 0.01}),  # the samplers by regions
        "groups3": (rng.normal(0.0, 1.0, (301, 2)), (-4.0, 4.0), {"groups": 3}),
    }[name]


def _assert_same_runs(transcript, estimates):
    for run, estimate in enumerate(estimates):
        d = estimate.diagnostics
        assert np.array_equal(transcript.centre[run], d["centre"])
        assert np.array_equal(transcript.std[run], d["std_estimate"])
        assert transcript.clip[run] == d["clip_threshold"]
        # the clipped sum's rounding may differ (one matrix product per run, or one for all runs)
        np.testing.assert_allclose(transcript.mean[run], estimate.mean, rtol=1e-12, atol=1e-15)
        assert transcript.ledger == estimate.ledger


@pytest.mark.parametrize("accounting", ACCOUNTINGS)
@pytest.mark.parametrize("name", ["pair", "d3", "regions", "groups3"])
def test_one_run_per_chunk_draws_exactly_what_plan_gaussian_draws(accounting, name):
    x, bounds, options = _data(name)
    options = {"rho": RHO} | options
    runs = 12 if name == "pair" else 3
    estimates = [plan_gaussian(x, bounds=bounds, rng=g, accounting=accounting, **options)
                 for g in [np.random.default_rng(5)] for _ in range(runs)]
    transcript = plan_transcripts(x, bounds=bounds, rng=np.random.default_rng(5), runs=runs, chunk=1,
                                  accounting=accounting, **options)
    _assert_same_runs(transcript, estimates)
    one = plan_transcripts(x, bounds=bounds, rng=np.random.default_rng(5), runs=1, accounting=accounting, **options)
    _assert_same_runs(one, estimates[:1])


@pytest.mark.parametrize("accounting", ACCOUNTINGS)
def test_the_ledger_is_plan_gaussians_and_sums_to_rho_or_to_what_published_accounting_spends(accounting):
    transcript = plan_transcripts(PAIR, rho=RHO, bounds=PAIR_BOUNDS, rng=np.random.default_rng(1), runs=5,
                                  accounting=accounting)
    estimate = plan_gaussian(PAIR, rho=RHO, bounds=PAIR_BOUNDS, rng=np.random.default_rng(1), accounting=accounting)
    assert transcript.ledger == estimate.ledger
    assert [e.step for e in transcript.ledger] == ["centre", "variance", "clip_threshold", "gaussian_noise"]
    expected = RHO if accounting == "exact" else estimate.diagnostics["true_rho"]
    assert ledger_total(transcript.ledger) == pytest.approx(expected, rel=1e-12)
    if accounting == "published":
        assert ledger_total(transcript.ledger) == pytest.approx(3.82 * RHO, rel=0.01)


def test_the_arrays_have_one_row_per_run_in_every_chunking():
    x, bounds, _ = _data("d3")
    for chunk in (None, 1, 7, 40):
        t = plan_transcripts(x, rho=RHO, bounds=bounds, rng=np.random.default_rng(0), runs=40, chunk=chunk)
        assert t.runs == 40
        assert t.centre.shape == t.variance.shape == t.std.shape == t.mean.shape == (40, 3)
        assert t.clip.shape == (40,)
        assert np.all(np.isfinite(t.mean)) and np.all(t.clip >= 0)
        assert np.unique(t.clip).size == 40  # every run has its own randomness


@pytest.mark.parametrize("change, message", [
    ({"x": scipy.sparse.csr_matrix(np.ones((10, 2)))}, "dense n x d array"),
    ({"x": SharedSample(np.zeros((10, 1)))}, "dense n x d array"),
    ({"runs": 0}, "runs must be a positive integer"),
    ({"chunk": 0}, "chunk must be a positive integer"),
    ({"accounting": "paper"}, "accounting must be one of"),
    ({"groups": 0}, "groups must be a positive integer"),
    ({"x": np.zeros((1, 1)), "groups": 2}, "at least 4 rows"),
    ({"rho": -1.0}, "rho"),
])
def test_bad_arguments_raise_one_value_error(change, message):
    arguments = {"x": PAIR, "rho": RHO, "bounds": PAIR_BOUNDS, "rng": np.random.default_rng(0), "runs": 3} | change
    with pytest.raises(ValueError, match=message):
        plan_transcripts(**arguments)


def test_the_quantile_option_of_plan_gaussian_is_not_taken():
    with pytest.raises(TypeError):
        plan_transcripts(PAIR, rho=RHO, bounds=PAIR_BOUNDS, rng=np.random.default_rng(0), runs=3,
                         quantile="binary_search")


# ----------------------------------------------------------------------------- in distribution

PLAN_RUNS, TRANSCRIPT_RUNS, LEVEL = 4000, 100_000, 1e-3


def em_cdf(edges, values, *, q, eps, sensitivity):
    """P[output <= value] of the exponential-mechanism quantile on padded sorted ``edges`` (one
    row for all values, or one row per value)."""
    rows = np.atleast_2d(edges)
    weights = interval_weights(rows, q=q, eps=eps, sensitivity=sensitivity)
    before = np.cumsum(weights, axis=1) - weights
    total = weights.sum(axis=1)
    inner = rows[:, 1:-1]
    index = (inner[None, 0] <= values[:, None]).sum(axis=1) if rows.shape[0] == 1 else (
        inner <= values[:, None]).sum(axis=1)
    row = np.zeros_like(index) if rows.shape[0] == 1 else np.arange(values.size)
    left, right = rows[row, index], rows[row, index + 1]
    inside = np.clip((values - left) / np.maximum(right - left, 1e-300), 0.0, 1.0)
    return (before[row, index] + weights[row, index] * inside) / total[row]


def release_statistics(centre, std, clip, mean, x, steps: PlanSteps):
    """The four statistics of the module docstring for d = 1, computed with ``steps`` (the
    parameters the releases should have been drawn with)."""
    centre, std, mean = (np.asarray(a, dtype=float).reshape(-1, 1) for a in (centre, std, mean))
    clip = np.asarray(clip, dtype=float)
    centre_u = em_cdf(steps.centre_edges(x)[0], centre[:, 0], q=0.5, eps=steps.centre_eps,
                      sensitivity=steps.centre_sensitivity)
    scale = steps.scale(std)
    z = (x[:, 0][None, :] - centre) * scale
    norms = np.abs(z)
    upper = steps.clip_upper(std)
    edges = np.empty((clip.size, steps.n + 2))
    edges[:, 1:-1] = np.sort(np.minimum(norms, upper[:, None]), axis=1)
    edges[:, 0], edges[:, -1] = 0.0, upper
    clip_u = em_cdf(edges, clip, q=steps.clip_q, eps=steps.clip_eps, sensitivity=steps.clip_sensitivity)
    clipped = np.sum(z * np.minimum(1.0, clip[:, None] / np.maximum(norms, 1e-30)), axis=1) / steps.n
    residual = ((mean[:, 0] - centre[:, 0]) * scale[:, 0] - clipped) / steps.noise_std(clip)
    return {"centre": centre_u, "std": std[:, 0], "clip": clip_u, "noise": residual}


# The data of the distribution tests: the pair under exact accounting; under published accounting
# the same shape with n = 20, where step 3's median of 30 stacked pair statistics depends on its
# budget more than on the shuffle (with n = 100 a factor 2 in its budget moves the std's
# distribution by a KS distance of only 0.024).
DISTRIBUTION_DATA = {"exact": PAIR, "published": np.r_[-1.0, np.linspace(-0.2, 0.2, 19)][:, None]}


@pytest.fixture(scope="module", params=ACCOUNTINGS)
def samples(request):
    """(accounting, its data, the correct steps, plan_gaussian's statistics, the transcripts' statistics)."""
    accounting = request.param
    x = DISTRIBUTION_DATA[accounting]
    rng = np.random.default_rng(2024)
    estimates = [plan_gaussian(x, rho=RHO, bounds=PAIR_BOUNDS, rng=rng, accounting=accounting)
                 for _ in range(PLAN_RUNS)]
    transcript = plan_transcripts(x, rho=RHO, bounds=PAIR_BOUNDS, rng=np.random.default_rng(2025),
                                  runs=TRANSCRIPT_RUNS, accounting=accounting)
    steps = transcript.steps
    d = [e.diagnostics for e in estimates]
    plan = release_statistics([v["centre"] for v in d], [v["std_estimate"] for v in d],
                              [v["clip_threshold"] for v in d], [e.mean for e in estimates], x, steps)
    ours = release_statistics(transcript.centre, transcript.std, transcript.clip, transcript.mean, x, steps)
    return accounting, x, steps, plan, ours


def _ks_pvalue(a, b):
    return scipy.stats.ks_2samp(a, b, method="asymp").pvalue


def test_every_release_has_plan_gaussians_distribution(samples):
    accounting, _, _, plan, ours = samples
    for name in plan:
        assert _ks_pvalue(plan[name], ours[name]) > LEVEL, (accounting, name)


def test_the_statistics_are_what_correct_steps_give(samples):
    """Against the exact distributions too (one-sample, on the 10^5 transcript runs): the CDF
    statistics are uniform and the residual standard normal."""
    _, _, _, _, ours = samples
    assert scipy.stats.kstest(ours["centre"], "uniform").pvalue > LEVEL
    assert scipy.stats.kstest(ours["clip"], "uniform").pvalue > LEVEL
    assert scipy.stats.kstest(ours["noise"], "norm").pvalue > LEVEL


# Options that give one step twice or half its budget (its statistic does not depend on the others):
# centre_share * pre_share, (1 - centre_share) * pre_share, topk_share * (1 - pre_share).
BROKEN = {
    "centre": [{"centre_share": 0.5}, {"centre_share": 0.125}],
    "std": [{"pre_share": 0.5}, {"pre_share": 0.125}],
    "clip": [{"topk_share": 0.5}, {"topk_share": 0.125}],
}


@pytest.mark.parametrize("step", ["centre", "std", "clip", "noise"])
def test_a_factor_two_in_any_step_is_caught(samples, step):
    accounting, x, steps, plan, _ = samples
    changes = BROKEN.get(step, [{"rho": 2.0 * RHO}, {"rho": 0.5 * RHO}])  # the noise: rho_3 x 2 or / 2
    for index, change in enumerate(changes):
        options = {"rho": RHO} | change
        broken = plan_transcripts(x, bounds=PAIR_BOUNDS, rng=np.random.default_rng([7, index]),
                                  runs=TRANSCRIPT_RUNS // 5, accounting=accounting, **options)
        if step == "noise":  # the residual with the noise std of rho, as the correct step would have it
            broken_steps = broken.steps
            assert broken_steps.noise_rho == pytest.approx(options["rho"] / RHO * steps.noise_rho)
        statistic = release_statistics(broken.centre, broken.std, broken.clip, broken.mean, x, steps)[step]
        assert _ks_pvalue(plan[step], statistic) < LEVEL, (accounting, step, change)
