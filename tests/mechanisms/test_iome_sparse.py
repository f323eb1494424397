"""IOME on sparse input (docs/design.md §5.5, cost notes): the same estimate as on the dense array,
shared work across budgets in a SharedSample, rotation_rng, no densifying, clear errors."""
import math

import numpy as np
import pytest
import scipy.sparse

import mechanisms as M
from mechanisms import iome, random_signs
from testkit.sparse import NoDensifying


def binary(seed, n, d, density=0.1):
    return (np.random.default_rng(seed).random((n, d)) < density).astype(np.float64)


def padded_size(d):
    return 1 << (d - 1).bit_length()


def binary_bounds(d):
    """The binary figures' universe (0, sqrt(D')): the centre search runs on [0, 1]."""
    return (0.0, math.sqrt(padded_size(d)))


def run(x, *, rho=0.5, seed=1, rotation_seed=None, **options):
    rotation_rng = None if rotation_seed is None else np.random.default_rng(rotation_seed)
    return iome(x, rho=rho, rng=np.random.default_rng(seed), rotation_rng=rotation_rng, **options)


def as_bytes(estimate):
    d = estimate.diagnostics
    return (estimate.mean.tobytes() + d["rotated_centre"].tobytes() + repr(d["clip_threshold"]).encode()
            + repr(estimate.ledger).encode())


# ---------------------------------------------------------------- sparse equals dense

BINARY_CASES = [(300, 37), (257, 64), (120, 1000), (64, 1), (500, 5)]


@pytest.mark.parametrize("rotations", [1, 3])
@pytest.mark.parametrize("steps", [10, 7])
@pytest.mark.parametrize(("n", "d"), BINARY_CASES)
def test_sparse_iome_equals_dense_iome_on_binary_data(n, d, steps, rotations):
    dense = binary(n * d, n, d)
    options = dict(bounds=binary_bounds(d), search_steps=steps, rotations=rotations)
    expected = run(dense, **options)
    got = run(scipy.sparse.csr_matrix(dense), **options)
    np.testing.assert_array_equal(got.diagnostics["rotated_centre"], expected.diagnostics["rotated_centre"])
    assert got.diagnostics["clip_threshold"] == expected.diagnostics["clip_threshold"]
    np.testing.assert_allclose(got.mean, expected.mean, rtol=0, atol=1e-12)
    assert got.ledger == expected.ledger


@pytest.mark.parametrize("bounds", [(0.0, 40.0), (-3.0, 7.0)])
def test_sparse_iome_equals_dense_iome_on_integer_counts_with_a_general_universe(bounds):
    """Integer data rotate exactly on both paths, whatever the search interval."""
    rng = np.random.default_rng(3)
    dense = (rng.random((400, 50)) < 0.2) * rng.integers(1, 6, (400, 50)).astype(np.float64)
    expected = run(dense, bounds=bounds, search_steps=9)
    got = run(scipy.sparse.csr_matrix(dense), bounds=bounds, search_steps=9)
    np.testing.assert_array_equal(got.diagnostics["rotated_centre"], expected.diagnostics["rotated_centre"])
    assert got.diagnostics["clip_threshold"] == expected.diagnostics["clip_threshold"]
    np.testing.assert_allclose(got.mean, expected.mean, rtol=0, atol=1e-12)


def test_sparse_iome_equals_dense_iome_on_real_valued_sparse_data_to_rounding():
    rng = np.random.default_rng(4)
    dense = (rng.random((500, 70)) < 0.3) * rng.uniform(-2.0, 3.0, (500, 70))
    expected = run(dense, bounds=(-3.0, 3.0), search_steps=10)
    got = run(scipy.sparse.csr_matrix(dense), bounds=(-3.0, 3.0), search_steps=10)
    np.testing.assert_allclose(got.diagnostics["rotated_centre"], expected.diagnostics["rotated_centre"], rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(got.diagnostics["clip_threshold"], expected.diagnostics["clip_threshold"], rtol=1e-12)
    np.testing.assert_allclose(got.mean, expected.mean, rtol=0, atol=1e-10)


def test_sparse_iome_accepts_other_sparse_formats_and_integer_dtypes():
    dense = binary(5, 200, 30)
    expected = run(scipy.sparse.csr_matrix(dense), bounds=binary_bounds(30), search_steps=10)
    for other in (scipy.sparse.csc_matrix(dense.astype(np.int8)), scipy.sparse.coo_array(dense)):
        assert as_bytes(run(other, bounds=binary_bounds(30), search_steps=10)) == as_bytes(expected)


def test_sparse_iome_spends_exactly_rho():
    estimate = run(scipy.sparse.csr_matrix(binary(6, 300, 20)), rho=0.7, bounds=binary_bounds(20), search_steps=10)
    assert math.isclose(M.ledger_total(estimate.ledger), 0.7, rel_tol=1e-12)


# ---------------------------------------------------------------- shared work across budgets

N, D, STEPS = 400, 300, 10
SPARSE = scipy.sparse.csr_matrix(binary(7, N, D))
OPTIONS = dict(bounds=binary_bounds(D), search_steps=STEPS)
COUNTS_BYTES = 4 * padded_size(D) << STEPS


def test_a_second_budget_on_the_same_rotation_reuses_the_counts_and_equals_a_fresh_call():
    shared = M.SharedSample(SPARSE)
    first = run(shared, rho=0.5, seed=1, rotation_seed=9, **OPTIONS)
    assert shared.kept_bytes == COUNTS_BYTES  # int32 counts, counted against cache_bytes
    (key,) = shared._kept
    second = run(shared, rho=0.125, seed=2, rotation_seed=9, **OPTIONS)
    assert key in shared.recalled  # the second call found the counts kept
    assert shared.kept_bytes == COUNTS_BYTES
    assert as_bytes(first) == as_bytes(run(SPARSE, rho=0.5, seed=1, rotation_seed=9, **OPTIONS))
    assert as_bytes(second) == as_bytes(run(SPARSE, rho=0.125, seed=2, rotation_seed=9, **OPTIONS))


def test_another_rotation_or_another_number_of_steps_gets_its_own_counts():
    shared = M.SharedSample(SPARSE)
    run(shared, rotation_seed=9, **OPTIONS)
    other = run(shared, rotation_seed=10, **OPTIONS)
    fewer = run(shared, rotation_seed=9, bounds=OPTIONS["bounds"], search_steps=8)
    assert shared.recalled == frozenset()
    assert shared.kept_bytes == 2 * COUNTS_BYTES + (COUNTS_BYTES >> 2)
    assert as_bytes(other) == as_bytes(run(SPARSE, rotation_seed=10, **OPTIONS))
    assert as_bytes(fewer) == as_bytes(run(SPARSE, rotation_seed=9, bounds=OPTIONS["bounds"], search_steps=8))


@pytest.mark.parametrize("cache_bytes", [0, COUNTS_BYTES - 1])
def test_a_cache_too_small_for_the_counts_keeps_nothing_and_gives_the_same_bytes(cache_bytes):
    shared = M.SharedSample(SPARSE, cache_bytes=cache_bytes)
    for rho, seed in [(0.5, 1), (0.25, 2)]:
        assert as_bytes(run(shared, rho=rho, seed=seed, rotation_seed=9, **OPTIONS)) == as_bytes(
            run(SPARSE, rho=rho, seed=seed, rotation_seed=9, **OPTIONS))
    assert shared.kept_bytes == 0


def test_the_next_samples_counts_reuse_the_previous_samples_array_and_stale_counts_never_leak():
    first = M.SharedSample(scipy.sparse.csr_matrix(binary(8, N, D)))
    run(first, rotation_seed=9, **OPTIONS)
    buffers = first.release()
    shared = M.SharedSample(SPARSE, buffers=buffers)
    assert as_bytes(run(shared, rotation_seed=9, **OPTIONS)) == as_bytes(run(SPARSE, rotation_seed=9, **OPTIONS))
    assert {id(array) for array in shared.release()} == {id(array) for array in buffers}


# ---------------------------------------------------------------- rotation_rng

DENSE = np.random.default_rng(11).normal(1.0, 1.0, (200, 6))
# iome(DENSE, rho=0.5, bounds=(-8, 8), rng=default_rng(5)) before rotation_rng existed, when the
# rotation scaled every transform (the last bits may differ now).
PREVIOUS_MEAN = [1.1842943997220763, 0.9226345042993156, 1.0131334696826557, 0.9805422167135512,
                 0.9060680087185247, 1.1093845039825505]
PREVIOUS_CLIP = 1.9877738952636719


def test_without_rotation_rng_the_dense_result_is_the_previous_codes_up_to_the_last_bits():
    estimate = iome(DENSE, rho=0.5, bounds=(-8.0, 8.0), rng=np.random.default_rng(5))
    np.testing.assert_allclose(estimate.mean, PREVIOUS_MEAN, rtol=1e-12)
    assert estimate.diagnostics["clip_threshold"] == PREVIOUS_CLIP
    signs = estimate.diagnostics["rotation_signs"]
    np.testing.assert_array_equal(signs, random_signs(np.random.default_rng(5), rotations=3, size=8))


@pytest.mark.parametrize("x", [DENSE, scipy.sparse.csr_matrix(binary(12, 200, 6))], ids=["dense", "sparse"])
def test_with_rotation_rng_the_signs_come_from_it_and_everything_else_from_rng_in_the_same_order(x):
    def call(rng, rotation_rng=None):
        return iome(x, rho=0.5, bounds=(-8.0, 8.0), rng=rng, search_steps=10, rotation_rng=rotation_rng)

    estimate = call(np.random.default_rng(5), np.random.default_rng(77))
    np.testing.assert_array_equal(estimate.diagnostics["rotation_signs"],
                                  random_signs(np.random.default_rng(77), rotations=3, size=8))
    # Without rotation_rng the signs are rng's first draws: the same call, split over two generators.
    rng = np.random.default_rng(5)
    random_signs(rng, rotations=3, size=8)
    assert as_bytes(call(rng, np.random.default_rng(5))) == as_bytes(call(np.random.default_rng(5)))


def test_calls_with_different_budgets_and_the_same_rotation_rng_seed_share_the_rotation():
    signs = [run(SPARSE, rho=rho, seed=seed, rotation_seed=3, **OPTIONS).diagnostics["rotation_signs"]
             for rho, seed in [(0.125, 1), (1.0, 2)]]
    np.testing.assert_array_equal(signs[0], signs[1])


# ---------------------------------------------------------------- never densified



def test_sparse_input_is_never_densified():
    x = NoDensifying(binary(13, 300, 40))
    with pytest.raises(AssertionError, match="densified"):
        np.asarray(x)  # the guard works
    expected = run(scipy.sparse.csr_matrix(binary(13, 300, 40)), bounds=binary_bounds(40), search_steps=10)
    assert as_bytes(run(x, bounds=binary_bounds(40), search_steps=10)) == as_bytes(expected)
    assert as_bytes(run(M.SharedSample(x), bounds=binary_bounds(40), search_steps=10)) == as_bytes(expected)


# ---------------------------------------------------------------- bad input


def test_search_steps_too_large_for_the_histogram_is_refused_naming_it():
    x = scipy.sparse.csr_matrix((np.ones(3), ([0, 1, 2], [0, 5, 16000])), shape=(3, 16384))
    with pytest.raises(ValueError, match=r"\bsearch_steps=20\b.*sparse.*use search_steps <= 15"):
        iome(x, rho=0.5, bounds=(0.0, 128.0), rng=np.random.default_rng(0))


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_sparse_entries_are_refused_naming_the_entry(value):
    x = scipy.sparse.csr_matrix(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, value]]))
    with pytest.raises(ValueError, match=rf"x must be finite, got x\[1, 2\]={value}"):
        iome(x, rho=0.5, bounds=(0.0, 2.0), rng=np.random.default_rng(0), search_steps=10)


@pytest.mark.parametrize("bounds", [(1.0, 1.0), (2.0, 0.0), (0.0, math.inf)])
def test_bad_bounds_are_refused_naming_them(bounds):
    with pytest.raises(ValueError, match=r"bounds must be finite with lo < hi, got bounds="):
        iome(SPARSE, rho=0.5, bounds=bounds, rng=np.random.default_rng(0), search_steps=10)


def test_a_bad_rotation_rng_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"rng must be a numpy.random.Generator, got rng=int"):
        iome(SPARSE, rho=0.5, bounds=(0.0, 1.0), rng=np.random.default_rng(0), rotation_rng=5)
