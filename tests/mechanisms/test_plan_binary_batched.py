"""batched_plan_binary (docs/design.md §5.4, §5.8): runs of PLAN-binary on the same data, vectorised.

What is checked, and why it suffices:

* Exact agreement. Each run draws its D + T + D standard normals in plan_binary's order, and a
  Generator's normals do not depend on how the stream is cut into calls, so a batch of k runs
  equals k plan_binary calls in a row on one generator bit for bit (means, per-run diagnostics,
  and the generator's state after), whatever the chunking of the runs. No comparison of
  distributions is needed: the batched version is the same function of the same randomness.
* The step code that both share is checked against an independent dense implementation of
  docs/design.md §5.4 written here run by run (``reference_runs``). Its agreement is
  deterministic (fixed seeds), and the test below it shows the comparison's power: the
  reference with a factor 2 in any one step's noise scale or budget disagrees with the batched
  runs on the same seeds. These are not statistical tests (power 1 on these seeds, not a
  probability): both sides see the same normals, so a wrong scale moves every estimate, or for
  the threshold search some of the 10 x 200 branchings.
* The ledger is plan_binary's one-run ledger and sums to rho; arguments are checked as in
  plan_binary, plus ``runs``, each error a single ValueError naming the argument.
"""
import importlib
import math
import re

import numpy as np
import pytest
import scipy.sparse

from experiments.audit.audits import PLAN_BINARY_X, PLAN_BINARY_X_NEIGHBOUR, item_differences
from mechanisms import SharedSample
from mechanisms.accounting import UNSPENT
from mechanisms.plan_binary import VARIANTS, batched_plan_binary, plan_binary
from testkit.sparse import NoDensifying

plan_binary_module = importlib.import_module("mechanisms.plan_binary")  # the package rebinds the name to the function

PER_RUN = ("clip_threshold", "clip_search_upper", "fraction_clipped", "noise_std")


def bernoulli_csr(probabilities, n, seed):
    present = np.random.default_rng(seed).random((n, len(probabilities))) < probabilities
    return scipy.sparse.csr_matrix(present, dtype=np.float64)


# the privacy audit's pair for plan_binary (experiments.audit.audits): n = 100 rows of D = 8 items, 49 {0},
# 49 {1}, one empty, and the person {0} (x) or {1} (x')
AUDIT_X, AUDIT_X_NEIGHBOUR = PLAN_BINARY_X, PLAN_BINARY_X_NEIGHBOUR


def skewed():
    """32 items, 8 common and 24 rare, a few empty rows: rows of several items, and clipping at small rho."""
    x = bernoulli_csr(np.concatenate([np.full(8, 0.5), np.full(24, 0.05)]), 300, seed=11).tolil()
    x[[3, 77, 150], :] = 0.0
    return x.tocsr()


DATA = {
    "audit": AUDIT_X,
    "audit_neighbour": AUDIT_X_NEIGHBOUR,
    "skewed": skewed(),
    "two_items": bernoulli_csr([0.3, 0.6], 50, seed=2),  # D <= 5: constant scale
    "nine_items": bernoulli_csr(np.linspace(0.02, 0.7, 9), 120, seed=3),  # D not a multiple of 8
    "wide": bernoulli_csr(np.random.default_rng(4).uniform(0.0, 0.3, 300), 200, seed=5),  # D > 128
    "empty": scipy.sparse.csr_matrix((40, 6)),
}


def successive_calls(x, runs, seed, **options):
    """``runs`` plan_binary calls in a row on one generator, and the generator after them."""
    rng = np.random.default_rng(seed)
    return [plan_binary(x, rng=rng, **options) for _ in range(runs)], rng


def assert_same_runs(batched, calls):
    assert batched.mean.shape == (len(calls), calls[0].mean.size)
    assert batched.mean.tobytes() == np.array([call.mean for call in calls]).tobytes()
    for name in PER_RUN:
        assert batched.diagnostics[name].tobytes() == np.array([call.diagnostics[name] for call in calls]).tobytes()


# ---------------------------------------------------------------- exact agreement with plan_binary


@pytest.mark.parametrize("rho", [0.02, 0.25, 3.0])
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", sorted(DATA))
def test_a_batch_equals_successive_plan_binary_calls_bit_for_bit(name, variant, rho):
    calls, after_calls = successive_calls(DATA[name], 23, seed=7, rho=rho, variant=variant)
    rng = np.random.default_rng(7)
    batched = batched_plan_binary(DATA[name], rho=rho, rng=rng, runs=23, variant=variant)
    assert_same_runs(batched, calls)
    assert rng.standard_normal() == after_calls.standard_normal()  # the stream is left where the calls leave it


@pytest.mark.parametrize("options", [{"variance_share": 0.3}, {"search_steps": 1}, {"search_steps": 17},
                                     {"variance_share": 0.05, "search_steps": 4, "variant": "oracle"}])
def test_the_options_are_those_of_plan_binary(options):
    calls, _ = successive_calls(DATA["skewed"], 11, seed=8, rho=0.1, **options)
    assert_same_runs(batched_plan_binary(DATA["skewed"], rho=0.1, rng=np.random.default_rng(8), runs=11, **options),
                     calls)


@pytest.mark.parametrize("chunk_values", [1, 250, 1000])
def test_chunks_of_runs_change_nothing(monkeypatch, chunk_values):
    """Work arrays of about ``chunk_values`` values: chunks of 1, 2 and 10 runs of the audit pair (n = 100)."""
    expected = batched_plan_binary(AUDIT_X, rho=0.25, rng=np.random.default_rng(9), runs=25)
    monkeypatch.setattr(plan_binary_module, "_CHUNK_VALUES", chunk_values)
    rng = np.random.default_rng(9)
    chunked = batched_plan_binary(AUDIT_X, rho=0.25, rng=rng, runs=25)
    assert chunked.mean.tobytes() == expected.mean.tobytes()
    calls, after_calls = successive_calls(AUDIT_X, 25, seed=9, rho=0.25)
    assert_same_runs(chunked, calls)
    assert rng.standard_normal() == after_calls.standard_normal()


def test_two_batches_in_a_row_equal_one_batch_of_their_runs():
    rng = np.random.default_rng(10)
    first = batched_plan_binary(AUDIT_X, rho=0.25, rng=rng, runs=6).mean
    second = batched_plan_binary(AUDIT_X, rho=0.25, rng=rng, runs=9).mean
    whole = batched_plan_binary(AUDIT_X, rho=0.25, rng=np.random.default_rng(10), runs=15).mean
    assert np.concatenate([first, second]).tobytes() == whole.tobytes()


def test_the_audit_statistic_is_the_same_through_the_batch():
    """mean_0 - mean_1 (experiments.audit.audits.item_differences) of each run, batched and call by call,
    on both datasets of the pair, at the audit's rho, its control's rho x 4, and rho x 16."""
    for x in (AUDIT_X, AUDIT_X_NEIGHBOUR):
        for rho in (0.25, 1.0, 4.0):
            calls, _ = successive_calls(x, 50, seed=12, rho=rho)
            means = batched_plan_binary(x, rho=rho, rng=np.random.default_rng(12), runs=50).mean
            np.testing.assert_array_equal(item_differences(means), [c.mean[0] - c.mean[1] for c in calls])


def test_one_run_is_plan_binary():
    single = plan_binary(DATA["skewed"], rho=0.5, rng=np.random.default_rng(13))
    batched = batched_plan_binary(DATA["skewed"], rho=0.5, rng=np.random.default_rng(13), runs=1)
    assert batched.mean.shape == (1, 32)
    assert batched.mean[0].tobytes() == single.mean.tobytes()


def test_a_shared_sample_and_other_sparse_formats_give_the_same_runs():
    x = DATA["skewed"]
    expected = batched_plan_binary(x, rho=0.5, rng=np.random.default_rng(14), runs=5).mean
    for same in (SharedSample(x), x.tocsc(), x.tocoo()):
        assert batched_plan_binary(same, rho=0.5, rng=np.random.default_rng(14), runs=5).mean.tobytes() == \
            expected.tobytes()



def test_the_data_stay_sparse_and_unchanged():
    x = DATA["skewed"].copy()
    guarded = NoDensifying(x)
    with pytest.raises(AssertionError):
        np.asarray(guarded)  # the guard works
    batched_plan_binary(guarded, rho=0.5, rng=np.random.default_rng(0), runs=4)
    for part in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(x, part), getattr(DATA["skewed"], part))


# ---------------------------------------------------------------- an independent reference

STEP_FACTORS = ("variance_noise", "threshold_noise", "final_noise", "rho_1", "rho_2", "rho_3")


def reference_runs(x, *, rho, rng, runs, variant="paper", variance_share=0.1, steps=10, factors=None):
    """docs/design.md §5.4 on a dense 0/1 array, run after run, each drawing D, T and D normals
    (step 1, step 3, step 4). ``factors``: multiply one step's noise scale or budget, to show
    that the comparison with it would see such an error. Returns (means, clip thresholds)."""
    factors = {name: 1.0 for name in STEP_FACTORS} | (factors or {})
    n, d = x.shape
    rho_1 = variance_share * rho
    rest = rho - rho_1
    rho_2, rho_3 = rest / d, rest - rest / d
    rho_1, rho_2, rho_3 = rho_1 * factors["rho_1"], rho_2 * factors["rho_2"], rho_3 * factors["rho_3"]
    p = x.mean(axis=0)
    means, clips = [], []
    for _ in range(runs):
        variance_noise, threshold_noise, final_noise = (rng.standard_normal(d), rng.standard_normal(steps),
                                                        rng.standard_normal(d))
        if variant == "paper":  # step 1: N(0, (1/n)^2 / (2 rho_1 / D)) per frequency
            noisy = p + factors["variance_noise"] * math.sqrt(d / (2.0 * rho_1)) / n * variance_noise
            clipped = np.clip(noisy, min(d**-0.4, 0.5), 1.0 - min(d**-0.4, 0.5))
            b = (clipped * (1.0 - clipped)) ** (-1.0 / 3.0)
        elif variant == "oracle":
            std = np.sqrt(p * (1.0 - p))
            b = ((std + std.sum() / d) ** 2) ** (-1.0 / 3.0)
        else:
            b = np.ones(d)
        norms = np.sqrt(((x * b) ** 2).sum(axis=1))  # step 2
        target = n - math.sqrt(n) - math.sqrt(steps * math.log(steps) / rho_2)  # step 3
        left, right = 0.0, math.sqrt(np.sum(b**2))
        for step in range(steps):
            mid = (left + right) / 2.0
            noisy_count = np.sum(norms <= mid) + factors["threshold_noise"] * math.sqrt(
                steps / (2.0 * rho_2)) * threshold_noise[step]
            left, right = (mid, right) if noisy_count <= target else (left, mid)
        clip = (left + right) / 2.0
        with np.errstate(divide="ignore"):
            weights = np.minimum(1.0, clip / norms)  # step 4; an empty row: clip / 0 = inf, weight 1
        noise = factors["final_noise"] * math.sqrt(2.0 * clip**2 / rho_3) * final_noise
        means.append((((x * b) * weights[:, None]).sum(axis=0) + noise) / (b * n))
        clips.append(clip)
    return np.array(means), np.array(clips)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", ["audit", "skewed"])
def test_the_batch_equals_an_independent_dense_reference(name, variant):
    x = DATA[name]
    expected_means, expected_clips = reference_runs(x.toarray(), rho=0.05, rng=np.random.default_rng(15), runs=200,
                                                    variant=variant)
    batched = batched_plan_binary(x, rho=0.05, rng=np.random.default_rng(15), runs=200, variant=variant)
    np.testing.assert_allclose(batched.diagnostics["clip_threshold"], expected_clips, rtol=1e-12)
    np.testing.assert_allclose(batched.mean, expected_means, rtol=1e-9, atol=1e-12)
    assert 0.0 < np.mean(batched.diagnostics["fraction_clipped"]) < 1.0  # the comparison sees clipping


@pytest.mark.parametrize("wrong", STEP_FACTORS)
@pytest.mark.parametrize("name", ["audit", "skewed"])
def test_the_reference_comparison_sees_a_factor_two_in_any_step(name, wrong):
    """The power of the test above: with one step's noise scale or budget doubled, the reference
    disagrees with the batched runs on the same seeds (the tolerance of the comparison is far
    below any such change)."""
    x = DATA[name]
    wrong_means, _ = reference_runs(x.toarray(), rho=0.05, rng=np.random.default_rng(15), runs=200,
                                    factors={wrong: 2.0})
    batched = batched_plan_binary(x, rho=0.05, rng=np.random.default_rng(15), runs=200)
    assert not np.allclose(batched.mean, wrong_means, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- ledger and diagnostics


@pytest.mark.parametrize("rho", [1 / 16, 0.25, 3.0])
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_ledger_is_plan_binarys_one_run_ledger_and_sums_to_rho(variant, rho):
    x = DATA["skewed"]
    batched = batched_plan_binary(x, rho=rho, rng=np.random.default_rng(0), runs=7, variant=variant)
    single = plan_binary(x, rho=rho, rng=np.random.default_rng(0), variant=variant)
    assert batched.ledger == single.ledger
    assert math.isclose(batched.rho_total, rho, rel_tol=1e-12)
    assert batched.diagnostics["ledger_total"] == batched.rho_total
    assert batched.diagnostics["true_rho"] == single.diagnostics["true_rho"] == batched.rho_spent
    assert (UNSPENT in dict(batched.ledger)) == (variant != "paper")


def test_the_diagnostics_are_per_call_values_and_per_run_arrays():
    batched = batched_plan_binary(DATA["skewed"], rho=0.25, rng=np.random.default_rng(0), runs=6, variant="oracle")
    single = plan_binary(DATA["skewed"], rho=0.25, rng=np.random.default_rng(0), variant="oracle")
    for name in ("accounting", "variant", "requested_rho", "true_rho", "ledger_total", "clip_target_rank"):
        assert batched.diagnostics[name] == single.diagnostics[name]
    assert batched.diagnostics["runs"] == 6
    for name in PER_RUN:
        assert batched.diagnostics[name].shape == (6,)
    rest = 0.25 - 0.1 * 0.25
    rho_3 = rest - rest / 32
    np.testing.assert_allclose(batched.diagnostics["noise_std"],
                               batched.diagnostics["clip_threshold"] * math.sqrt(2.0 / rho_3), rtol=1e-15)


# ---------------------------------------------------------------- bad arguments


def shows(name, value):
    """Regex for ``name=<repr of value>`` as the messages print it."""
    return rf"\b{re.escape(name)}={re.escape(repr(value))}"


def bad(name, value, pattern=None, *, label=None):
    """A bad argument and the message that must name it (default: ``name=<repr of value>``)."""
    return pytest.param({name: value}, pattern or shows(name, value), id=f"{name}={label or repr(value)}")


BAD = [
    bad("runs", 0), bad("runs", -3), bad("runs", 2.5), bad("runs", True), bad("runs", None), bad("runs", "10"),
    bad("runs", 2**40, r"\bruns=1099511627776 is too large"),  # the result alone would exceed 2 GiB
    bad("rho", 0), bad("rho", math.nan), bad("rho", "abc"),
    bad("variant", "Paper"),
    bad("variance_share", 1),
    bad("search_steps", 0), bad("search_steps", 2**40),
    bad("rng", 0, r"\brng=int\b"), bad("rng", None, r"\brng=NoneType\b"),
    bad("x", DATA["skewed"].toarray(), r"\bx\b must be a scipy\.sparse matrix", label="dense"),
    bad("x", scipy.sparse.csr_matrix(np.array([[0.0, 2.0], [1.0, 0.0]])), r"\bx\b must be binary.*x\[0, 1\]=2",
        label="not_binary"),
    bad("x", scipy.sparse.csr_matrix(np.ones((5, 1))), r"\bx\b.*2 columns.*x\.shape=\(5, 1\)", label="one_item"),
]


@pytest.mark.parametrize(("bad", "pattern"), BAD)
def test_a_bad_argument_raises_one_value_error_naming_it(bad, pattern):
    arguments = {"x": DATA["skewed"], "rho": 0.5, "rng": np.random.default_rng(0), "runs": 3} | bad
    x = arguments.pop("x")
    with pytest.raises(ValueError, match=pattern) as error:
        batched_plan_binary(x, **arguments)
    assert type(error.value) is ValueError and error.value.__cause__ is None
