"""SharedSample: the mechanisms of one trial share what they derive from the data without
randomness. Passing it instead of the array must never change a result."""
import numpy as np
import pytest
import scipy.sparse

import mechanisms as M
from datasets.synthetic import gaussian_skewed

SAMPLE = gaussian_skewed(n=601, d=40, alpha=2.0, rng=np.random.default_rng(0))

# Every registry algorithm, with the options that pick a different code path.
CALLS = [
    ("plan_gaussian", {}),
    ("plan_gaussian", {"accounting": "published"}),
    ("plan_gaussian", {"accounting": "published", "groups": 4}),
    ("plan_gaussian", {"quantile": "binary_search", "accounting": "published"}),
    ("plan_noscale", {"accounting": "published"}),
    ("plan_noscale", {}),
    ("plan_oracle", {"std": SAMPLE.true_std, "accounting": "published"}),
    ("coordinate_median", {"accounting": "published", "budget_share": 0.25}),
    ("coordinate_median", {}),
    ("iome", {}),
    ("empirical_mean", {}),
    ("variance_direct", {}),
    ("variance_general", {"groups": 4}),
    ("clipped_mean", {}),
    ("clipped_mean", {"threshold": "exact"}),
]


def run(x, index, algorithm, options):
    estimate = M.REGISTRY[algorithm](x, rho=0.4, bounds=SAMPLE.bounds, rng=np.random.default_rng(index), **options)
    return estimate.mean.tobytes() + repr(estimate.ledger).encode()


TRANSPOSED_BYTES = 8 * 40 * 601
SORTED_BYTES = 8 * 40 * (601 + 2)  # the sorted coordinates, padded
STACK_BYTES = 8 * 40 * (3 * 601 + 2)  # the merged published stack, padded (merged at this n)


@pytest.mark.parametrize(("cache_bytes", "kept_bytes"), [
    (0, 0), (250_000, TRANSPOSED_BYTES), (900_000, TRANSPOSED_BYTES + SORTED_BYTES),
    (1 << 30, TRANSPOSED_BYTES + SORTED_BYTES + STACK_BYTES),
])
def test_every_mechanism_gives_the_same_bytes_on_a_shared_sample_used_in_sequence(cache_bytes, kept_bytes):
    """0 keeps nothing, 250 kB the transposed copy, 900 kB also the sorted coordinates that every
    PLAN variant and the coordinate median share, 1 GiB also the merged published stack."""
    shared = M.SharedSample(SAMPLE.x, cache_bytes=cache_bytes)
    for index, (algorithm, options) in enumerate(CALLS):
        assert run(shared, index, algorithm, options) == run(SAMPLE.x, index, algorithm, options), algorithm
    assert shared.kept_bytes == kept_bytes


def test_a_sample_built_in_the_previous_samples_arrays_gives_the_same_bytes_and_reuses_them():
    """The engine passes each trial's sample the arrays the previous one kept, so they are
    not faulted in anew; stale contents must never leak into a result."""
    other = gaussian_skewed(n=601, d=40, alpha=2.0, rng=np.random.default_rng(1))
    first = M.SharedSample(other.x)
    for index, (algorithm, options) in enumerate(CALLS):
        run(first, index, algorithm, options)
    buffers = first.release()
    assert first.x is None and first.kept_bytes == 0
    ids = {id(array) for array in buffers}
    shared = M.SharedSample(SAMPLE.x, buffers=buffers)
    for index, (algorithm, options) in enumerate(CALLS):
        assert run(shared, index, algorithm, options) == run(SAMPLE.x, index, algorithm, options), algorithm
    assert shared.kept(("transposed",)) is not None and id(shared.kept(("transposed",))) in ids
    reused = shared.release()
    assert {id(array) for array in reused} == ids  # no array of these shapes was allocated anew


def test_a_buffer_is_recycled_only_for_its_shape_and_comes_back_writable():
    kept = np.zeros((3, 4))
    kept.setflags(write=False)
    shared = M.SharedSample(SAMPLE.x, buffers=[kept])
    fresh = shared.buffer((4, 3))
    assert fresh is not kept and fresh.shape == (4, 3)
    again = shared.buffer((3, 4))
    assert again is kept and again.flags.writeable
    assert shared.buffer((3, 4)) is not kept  # handed out once


def test_kept_arrays_are_read_only_and_computed_once():
    shared = M.SharedSample(SAMPLE.x)
    calls = []

    def compute(out):
        calls.append(1)
        out[:] = 0.0
        return out

    first = shared.derived(("test",), (5,), compute)
    assert shared.derived(("test",), (5,), compute) is first and len(calls) == 1
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 1.0


def test_the_budget_holds_when_a_computation_keeps_something_itself():
    shared = M.SharedSample(SAMPLE.x, cache_bytes=100)

    def zeros(out):
        out[:] = 0.0
        return out

    def outer_from_inner(out):
        return np.add(shared.derived(("inner",), (10,), zeros), 1.0, out=out)

    outer = shared.derived(("outer",), (10,), outer_from_inner)
    assert np.array_equal(outer, np.ones(10))  # computed and returned, but not kept
    assert shared.kept_bytes == 80


def test_what_does_not_fit_is_not_computed():
    shared = M.SharedSample(SAMPLE.x, cache_bytes=100)
    assert shared.derived(("big",), (13,), lambda out: pytest.fail("computed although it does not fit")) is None
    assert shared.kept_bytes == 0


def test_a_shared_sample_is_validated_like_an_array():
    bad = SAMPLE.x.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"x must be finite, got x\[3, 2\]=nan"):
        M.SharedSample(bad)


def test_with_wanted_only_what_the_previous_sample_reused_is_recorded():
    """The engine passes the keys the previous trial's mechanisms found kept. Published PLAN's
    sorted coordinates are read by the exact PLAN after it, and its merged stack (merged at
    this n) by the published coordinate median; with IOME after PLAN nobody reads them, and they
    are then not recorded. Results stay the same."""
    sorted_key = ("sorted_coordinates", *SAMPLE.bounds)
    stack_key = ("merged_stack", 0.1, *SAMPLE.bounds)
    shared_calls = [("plan_gaussian", {"accounting": "published"}), ("plan_gaussian", {}),
                    ("coordinate_median", {"accounting": "published", "budget_share": 0.25})]
    first = M.SharedSample(SAMPLE.x)
    for index, (algorithm, options) in enumerate(shared_calls):
        run(first, index, algorithm, options)
    assert first.recalled == {("transposed",), sorted_key, stack_key}

    calls = [("plan_gaussian", {}), ("iome", {})]
    first = M.SharedSample(SAMPLE.x)
    for index, (algorithm, options) in enumerate(calls):
        run(first, index, algorithm, options)
    recalled = first.recalled
    assert recalled == set()
    assert first.kept(sorted_key) is not None  # recorded, though nobody asked for it
    shared = M.SharedSample(SAMPLE.x, buffers=first.release(), wanted=recalled)
    for index, (algorithm, options) in enumerate(calls):
        assert run(shared, index, algorithm, options) == run(SAMPLE.x, index, algorithm, options), algorithm
    assert shared.kept(sorted_key) is None
    # The sorted coordinates' buffer, unused by this sample, is not carried on to the next.
    assert all(array.shape != (SAMPLE.x.shape[1], SAMPLE.x.shape[0] + 2) for array in shared.release())


def test_with_nothing_wanted_no_rows_are_recorded():
    shared = M.SharedSample(SAMPLE.x, wanted=())
    for index, (algorithm, options) in enumerate(CALLS):
        assert run(shared, index, algorithm, options) == run(SAMPLE.x, index, algorithm, options), algorithm
    assert shared.kept_bytes == 8 * SAMPLE.x.size  # the transposed copy only


# ---------------------------------------------------------------- sparse samples and other dtypes

SPARSE = scipy.sparse.csr_matrix((np.random.default_rng(2).random((50, 12)) < 0.2).astype(np.float64))


def test_a_sparse_sample_is_held_as_a_validated_csr_matrix_without_densifying():
    shared = M.SharedSample(scipy.sparse.coo_matrix(SPARSE))
    assert scipy.sparse.issparse(shared.x) and shared.x.format == "csr"
    assert (shared.x != SPARSE).nnz == 0
    bad = SPARSE.copy()
    bad.data[3] = np.inf
    with pytest.raises(ValueError, match=r"x must be finite, got x\[\d+, \d+\]=inf"):
        M.SharedSample(bad)


@pytest.mark.parametrize("algorithm", [name for name in M.REGISTRY
                                       if name not in ("iome", "empirical_mean", "plan_binary", "opendp_mean",
                                                       "diffprivlib_mean", "pydp_mean", "clipped_mean")
                                       and M.budget_name(name) == "rho"])
def test_dense_mechanisms_refuse_a_sparse_sample_as_they_refuse_the_matrix(algorithm):
    options = {"std": np.ones(12)} if algorithm in ("plan_oracle", "coinpress_oracle") else {}
    if algorithm == "coinpress_covariance":
        options["covariance_bound"] = 1.0
    with pytest.raises(ValueError, match=r"\bx\b is a sparse csr_matrix of shape \(50, 12\).*dense"):
        M.REGISTRY[algorithm](M.SharedSample(SPARSE), rho=0.5, bounds=(0.0, 1.0), rng=np.random.default_rng(0),
                              **options)


def test_arrays_of_other_dtypes_are_kept_and_counted_by_their_bytes():
    shared = M.SharedSample(SPARSE, cache_bytes=100)

    def fill(out):
        out[:] = 7
        return out

    small = shared.derived(("int32",), (5, 4), fill, dtype=np.int32)  # 80 bytes
    assert small.dtype == np.int32 and shared.kept_bytes == 80
    assert shared.derived(("int32",), (5, 4), lambda out: pytest.fail("computed again"), dtype=np.int32) is small
    assert shared.derived(("more",), (6,), lambda out: pytest.fail("does not fit"), dtype=np.int32) is None
    assert shared.derived(("fits",), (5,), fill, dtype=np.int32) is not None and shared.kept_bytes == 100


def test_a_spare_buffer_is_recycled_only_for_its_shape_and_dtype():
    spare = np.zeros((3, 4), dtype=np.int32)
    shared = M.SharedSample(SAMPLE.x, buffers=[spare])
    assert shared.buffer((3, 4)) is not spare  # float64 wanted
    assert shared.buffer((3, 4), np.int32) is spare
