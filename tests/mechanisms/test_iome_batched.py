"""batched_iome, IOME for many runs at once (the privacy audit's sampler, docs/design.md §5.5, §5.8).

Its runs are the calls of iome() in a row, bit for bit: every run draws its randomness in the
order iome() does and does iome()'s arithmetic, with one BLAS product per run wherever a sum's
order depends on the product's shape. So the tests below compare outputs exactly, never to a
tolerance or in distribution: any difference in a step's noise scale, budget split, rotation or
target rank changes the bits.
"""
import math
import re
import sys

import numpy as np
import pytest
import scipy.sparse

from mechanisms import SharedSample, iome
from mechanisms.accounting import ledger_total
from mechanisms.hadamard import next_power_of_two, random_signs
from mechanisms.iome import batched_iome

IOME_MODULE = sys.modules["mechanisms.iome"]  # the module (the package's name iome is the function)
RUNS = 25
BOUNDS = (-1.0, 1.0)
# Diagnostics that differ between runs: stacked along a first axis in batched_iome.
PER_RUN = ("clip_threshold", "fraction_clipped", "noise_std", "rotated_centre", "rotation_signs")


def cluster_pair_x():
    """The privacy audit's kind of data: 99 rows at a midpoint of the centre search's final
    cells (-2^-20 on [-1, 1] with T = 20) and one person at -1, so that centre and clip
    threshold sit on the search grid and many runs clip nothing or exactly one row."""
    x = np.full((100, 1), -(2.0**-20))
    x[0] = -1.0
    return x


def uniform_x(n, d, seed, half_width=1.0):
    return np.random.default_rng(seed).uniform(-half_width, half_width, size=(n, d))


# (x, options): d = 1 (no Hadamard transform, the audit's case), and d = 3, 8, 17 (padded to
# 4, 8, 32; n = 200 spans several of the rotation's chunks of samples), with other options;
# the rows' norms lie inside the clip search's range [0, 1].
CASES = {
    "audit-pair": (cluster_pair_x(), {}),
    "d1": (uniform_x(100, 1, 1), {}),
    "d3": (uniform_x(50, 3, 2, 0.3), {"rotations": 2, "search_steps": 12}),
    "d8": (uniform_x(200, 8, 3, 0.2), {"centre_share": 0.4, "clip_share": 0.05, "offset_factor": 1.0}),
    "d17": (uniform_x(30, 17, 4, 0.1), {"search_steps": 25}),
}


def calls_in_a_row(x, rho, rng, rotation_rng, runs, **options):
    return [iome(x, rho=rho, bounds=BOUNDS, rng=rng, rotation_rng=rotation_rng, **options) for _ in range(runs)]


def assert_runs_are_the_calls(batched, calls):
    assert batched.mean.shape == (len(calls), calls[0].mean.size)
    np.testing.assert_array_equal(batched.mean, np.array([call.mean for call in calls]), strict=True)
    for name in PER_RUN:
        np.testing.assert_array_equal(batched.diagnostics[name], np.array([call.diagnostics[name] for call in calls]))
    for name, value in calls[0].diagnostics.items():
        if name not in PER_RUN:
            assert batched.diagnostics[name] == value, name
    assert batched.ledger == calls[0].ledger


@pytest.mark.parametrize("case", CASES)
def test_batched_runs_are_the_calls_of_iome_in_a_row_on_the_same_generators(case):
    x, options = CASES[case]
    batched = batched_iome(x, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(3), runs=RUNS,
                           rotation_rng=np.random.default_rng(4), **options)
    calls = calls_in_a_row(x, 0.5, np.random.default_rng(3), np.random.default_rng(4), RUNS, **options)
    assert_runs_are_the_calls(batched, calls)
    # independent runs, not one repeated, whose clip thresholds come from the search, not its end
    assert len({call.mean.tobytes() for call in calls}) == RUNS
    thresholds = {call.diagnostics["clip_threshold"] for call in calls}
    assert len(thresholds) > 1 and max(thresholds) < BOUNDS[1] * (1.0 - 2.0**-10)


@pytest.mark.parametrize("case", ["audit-pair", "d3"])
def test_without_a_rotation_rng_all_rotations_are_drawn_from_rng_before_the_normals(case):
    """batched_iome(x, rng=default_rng(s)) = the calls whose rotations come from a copy of
    default_rng(s) and whose normals come from default_rng(s) after all the rotations' draws."""
    x, options = CASES[case]
    batched = batched_iome(x, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(5), runs=RUNS, **options)
    normals = np.random.default_rng(5)
    random_signs(normals, rotations=options.get("rotations", 3), size=next_power_of_two(x.shape[1]), runs=RUNS)
    calls = calls_in_a_row(x, 0.5, normals, np.random.default_rng(5), RUNS, **options)
    assert_runs_are_the_calls(batched, calls)


@pytest.mark.parametrize("runs_per_chunk", [1, 7, RUNS])
def test_the_chunking_of_the_runs_does_not_change_the_outputs(monkeypatch, runs_per_chunk):
    x, options = CASES["d8"]
    expected = batched_iome(x, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(6), runs=RUNS, **options)
    monkeypatch.setattr(IOME_MODULE, "CHUNK_VALUES", runs_per_chunk * x.shape[0] * 8)  # D = 8
    chunked = batched_iome(x, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(6), runs=RUNS, **options)
    np.testing.assert_array_equal(chunked.mean, expected.mean)
    for name in PER_RUN:
        np.testing.assert_array_equal(chunked.diagnostics[name], expected.diagnostics[name])


@pytest.mark.parametrize(("rho", "options"), [(0.25, {}), (1.0, {}), (3.0, {"centre_share": 0.6, "clip_share": 0.3}),
                                              (1e-3, {"clip_share": 1e-4})])
@pytest.mark.parametrize("case", ["d1", "d17"])
def test_the_ledger_is_that_of_one_iome_call_and_sums_to_rho(rho, options, case):
    x = CASES[case][0]
    batched = batched_iome(x, rho=rho, bounds=BOUNDS, rng=np.random.default_rng(7), runs=3, **options)
    single = iome(x, rho=rho, bounds=BOUNDS, rng=np.random.default_rng(7), **options)
    assert batched.ledger == single.ledger
    assert [entry.step for entry in batched.ledger] == ["centre", "clip_threshold", "gaussian_noise"]
    assert ledger_total(batched.ledger) == pytest.approx(rho, rel=1e-12)
    assert batched.rho_total == batched.diagnostics["ledger_total"] == batched.diagnostics["true_rho"]


def test_a_shared_sample_gives_what_its_array_gives():
    x, options = CASES["d3"]
    direct = batched_iome(x, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(8), runs=RUNS, **options)
    shared = batched_iome(SharedSample(x), rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(8), runs=RUNS, **options)
    np.testing.assert_array_equal(shared.mean, direct.mean)


# ---------------------------------------------------------------- bad arguments


def shows(name, value):
    """Regex for ``name=<repr of value>`` as the messages print it."""
    return rf"\b{re.escape(name)}={re.escape(repr(value))}"


@pytest.mark.parametrize("runs", [0, -3, 2.5, True, "10", None, np.int64(0)])
def test_runs_must_be_a_positive_integer_and_the_error_names_it(runs):
    with pytest.raises(ValueError, match=shows("runs", runs)):
        batched_iome(uniform_x(10, 2, 0), rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(0), runs=runs)


def test_runs_whose_rotations_and_results_exceed_the_work_limit_are_refused_at_once():
    with pytest.raises(ValueError, match=r"\bruns=10000000000 is too large"):
        batched_iome(uniform_x(10, 2, 0), rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(0), runs=10**10)


# One bad argument each; iome() raises for it, and batched_iome must raise the same message.
BAD_ARGUMENTS = [
    {"rho": 0.0}, {"rho": -1.0}, {"rho": math.nan}, {"bounds": (1.0, -1.0)}, {"bounds": (0.0,)},
    {"rng": 0}, {"rotation_rng": "seed"}, {"rotations": 0}, {"rotations": True}, {"search_steps": 2.5},
    {"search_steps": 10**6}, {"centre_share": 1.0}, {"clip_share": 0.0}, {"offset_factor": -2.0},
    {"x": np.zeros((0, 3))}, {"x": np.array([[0.0, math.inf]])}, {"x": np.zeros(5)},
    {"rho": 1e-300, "centre_share": 1e-10},
]


@pytest.mark.parametrize("bad", BAD_ARGUMENTS, ids=[repr(sorted(bad)) + str(i) for i, bad in enumerate(BAD_ARGUMENTS)])
def test_every_other_argument_is_checked_as_iome_checks_it(bad):
    arguments = {"x": uniform_x(10, 2, 0), "rho": 1.0, "bounds": BOUNDS, "rng": np.random.default_rng(0)} | bad
    x = arguments.pop("x")
    with pytest.raises(ValueError) as from_iome:
        iome(x, **arguments)
    with pytest.raises(ValueError) as from_batched:
        batched_iome(x, runs=4, **arguments)
    assert str(from_batched.value) == str(from_iome.value)


@pytest.mark.parametrize("x", [scipy.sparse.csr_matrix(np.eye(4)), SharedSample(scipy.sparse.csr_matrix(np.eye(4)))])
def test_sparse_input_is_refused_with_one_clear_error(x):
    with pytest.raises(ValueError, match=r"x is a sparse .* needs a dense n x d array"):
        batched_iome(x, rho=1.0, bounds=(0.0, 1.0), rng=np.random.default_rng(0), runs=4)
