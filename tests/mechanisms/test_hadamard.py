"""Fast Walsh-Hadamard transform and the random rotation of IOME (docs/design.md §5.5).

The reference is the dense Sylvester matrix ``scipy.linalg.hadamard(D) / sqrt(D)``, built
here only; the package itself never builds it.
"""
import math

import numpy as np
import pytest
from scipy.linalg import hadamard

from mechanisms import fwht, random_signs, rotate, unrotate
from mechanisms.hadamard import ROTATION_CHUNK, rotate_rows_transposed

SIZES = [1, 2, 4, 8, 16, 64, 128, 256, 512, 2048]
NOT_POWERS_OF_TWO = [0, 3, 5, 6, 12, 100, 2047]
TOLERANCE = 1e-12


def normalised_hadamard(size):
    return hadamard(size) / math.sqrt(size)


def explicit_rotation(signs):
    """R = (H D_1)(H D_2)...(H D_t) as a dense matrix, with D_i = diag(signs[i])."""
    size = signs.shape[1]
    h = normalised_hadamard(size)
    rotation = np.eye(size)
    for diagonal in signs:
        rotation = rotation @ (h @ np.diag(diagonal))
    return rotation


def gaussian_rows(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


# ---------------------------------------------------------------- fwht


@pytest.mark.parametrize("size", SIZES)
def test_fwht_of_each_row_equals_the_explicit_normalised_hadamard_matrix(size):
    x = gaussian_rows(size, (5, size))
    np.testing.assert_allclose(fwht(x), x @ normalised_hadamard(size).T, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("size", SIZES)
def test_fwht_along_axis_0_transforms_each_column_of_a_transposed_array(size):
    xt = gaussian_rows(size, (5, size)).T
    np.testing.assert_allclose(fwht(xt, axis=0), normalised_hadamard(size) @ xt, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("size", [4, 64, 512])
def test_fwht_along_a_middle_axis_is_batched_over_the_other_axes(size):
    x = gaussian_rows(size, (3, size, 4))
    expected = np.einsum("jk,ikl->ijl", normalised_hadamard(size), x)
    np.testing.assert_allclose(fwht(x, axis=1), expected, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("size", [1, 8, 2048])
def test_fwht_of_a_1d_vector_equals_the_explicit_normalised_hadamard_matrix(size):
    x = gaussian_rows(size, size)
    np.testing.assert_allclose(fwht(x), normalised_hadamard(size) @ x, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("size", [2, 64, 2048])
def test_fwht_does_not_modify_its_input(size, axis):
    x = gaussian_rows(size, (size, size) if size <= 64 else (3, size))
    if axis == 0:
        x = np.ascontiguousarray(x.T)
    original = x.copy()
    fwht(x, axis=axis)
    np.testing.assert_array_equal(x, original)


@pytest.mark.parametrize("size", SIZES)
def test_fwht_applied_twice_is_the_identity(size):
    x = gaussian_rows(size, (5, size))
    np.testing.assert_allclose(fwht(fwht(x)), x, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("length", NOT_POWERS_OF_TWO)
def test_fwht_rejects_a_length_that_is_not_a_power_of_two_and_names_it(length):
    with pytest.raises(ValueError, match=rf"power-of-two.*\b{length}\b"):
        fwht(np.ones((2, length)))


@pytest.mark.parametrize("length", [3, 100])
def test_fwht_along_axis_0_rejects_a_length_that_is_not_a_power_of_two_and_names_it(length):
    with pytest.raises(ValueError, match=rf"power-of-two.*\b{length}\b"):
        fwht(np.ones((length, 4)), axis=0)


def test_fwht_rejects_a_scalar():
    with pytest.raises(ValueError, match="scalar"):
        fwht(1.0)


# ---------------------------------------------------------------- rotate / unrotate

ROTATION_GRID = [(size, rotations) for size in [1, 2, 16, 256, 1024] for rotations in [1, 3]]


@pytest.mark.parametrize(("size", "rotations"), ROTATION_GRID)
def test_unrotate_undoes_rotate(size, rotations):
    signs = random_signs(np.random.default_rng(1), rotations=rotations, size=size)
    x = gaussian_rows(size, (7, size))
    np.testing.assert_allclose(unrotate(rotate(x, signs), signs), x, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize(("size", "rotations"), ROTATION_GRID)
def test_rotate_undoes_unrotate(size, rotations):
    signs = random_signs(np.random.default_rng(2), rotations=rotations, size=size)
    y = gaussian_rows(size, (7, size))
    np.testing.assert_allclose(rotate(unrotate(y, signs), signs), y, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize(("size", "rotations"), ROTATION_GRID)
def test_rotate_preserves_the_norm_of_every_row(size, rotations):
    signs = random_signs(np.random.default_rng(3), rotations=rotations, size=size)
    x = gaussian_rows(size, (7, size))
    np.testing.assert_allclose(
        np.linalg.norm(rotate(x, signs), axis=1), np.linalg.norm(x, axis=1), rtol=0, atol=TOLERANCE
    )


@pytest.mark.parametrize("rotations", [1, 3])
@pytest.mark.parametrize("size", [16, 32])
def test_rotate_equals_the_explicit_product_of_hadamard_and_sign_matrices(size, rotations):
    signs = random_signs(np.random.default_rng(4), rotations=rotations, size=size)
    x = gaussian_rows(size, (9, size))
    np.testing.assert_allclose(rotate(x, signs), x @ explicit_rotation(signs).T, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("rotations", [1, 3])
@pytest.mark.parametrize("size", [16, 32])
def test_unrotate_equals_the_transpose_of_the_explicit_rotation(size, rotations):
    signs = random_signs(np.random.default_rng(5), rotations=rotations, size=size)
    y = gaussian_rows(size, (9, size))
    np.testing.assert_allclose(unrotate(y, signs), y @ explicit_rotation(signs), rtol=0, atol=TOLERANCE)


def test_rotate_of_a_1d_vector_equals_the_explicit_rotation():
    signs = random_signs(np.random.default_rng(6), rotations=3, size=16)
    x = gaussian_rows(6, 16)
    np.testing.assert_allclose(rotate(x, signs), explicit_rotation(signs) @ x, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("function", [rotate, unrotate])
def test_rotation_does_not_modify_its_input(function):
    signs = random_signs(np.random.default_rng(7), rotations=3, size=64)
    x = gaussian_rows(7, (5, 64))
    original = x.copy()
    function(x, signs)
    np.testing.assert_array_equal(x, original)


@pytest.mark.parametrize("function", [rotate, unrotate])
def test_rotation_rejects_rows_whose_length_is_not_a_power_of_two(function):
    signs = random_signs(np.random.default_rng(8), rotations=1, size=8)
    with pytest.raises(ValueError, match=r"power-of-two.*\b6\b"):
        function(np.ones((2, 6)), signs)


@pytest.mark.parametrize("function", [rotate, unrotate])
def test_rotation_rejects_rows_whose_length_differs_from_the_signs(function):
    signs = random_signs(np.random.default_rng(9), rotations=1, size=8)
    with pytest.raises(ValueError, match=r"length 16.*size 8"):
        function(np.ones((2, 16)), signs)


# ---------------------------------------------------------------- rotate_rows_transposed


@pytest.mark.parametrize(
    ("n", "d", "size"),
    [
        (130, 200, 256),  # d not a power of two, n not a multiple of the chunk size
        (ROTATION_CHUNK, 16, 16),  # exactly one full chunk, no padding
        (2 * ROTATION_CHUNK + 1, 5, 8),  # a one-row last chunk
        (1, 3, 4),
        (3, 1, 1),
    ],
)
def test_rotate_rows_transposed_equals_rotating_the_zero_padded_rows_then_transposing(n, d, size):
    signs = random_signs(np.random.default_rng(10), rotations=3, size=size)
    x = gaussian_rows(n + d, (n, d))
    padded = np.zeros((n, size))
    padded[:, :d] = x
    result = rotate_rows_transposed(x, signs)
    assert result.shape == (size, n)
    np.testing.assert_allclose(result, rotate(padded, signs).T, rtol=0, atol=TOLERANCE)


def test_rotate_rows_transposed_does_not_modify_its_input():
    signs = random_signs(np.random.default_rng(11), rotations=3, size=256)
    x = gaussian_rows(11, (130, 200))
    original = x.copy()
    rotate_rows_transposed(x, signs)
    np.testing.assert_array_equal(x, original)


# ---------------------------------------------------------------- one rotation per run (batched IOME)

RUNS = 4


@pytest.mark.parametrize("size", [1, 4, 32, 256])
@pytest.mark.parametrize("function", [rotate, unrotate])
def test_one_rotation_per_run_rotates_each_run_as_alone_bit_for_bit(function, size):
    signs = random_signs(np.random.default_rng(16), rotations=3, size=size, runs=RUNS)
    for shape in [(RUNS, size), (RUNS, 7, size)]:  # one vector per run, or several rows
        x = gaussian_rows(17, shape)
        together = function(x, signs)
        assert together.shape == shape
        for run in range(RUNS):
            assert together[run].tobytes() == function(x[run], signs[run]).tobytes()


@pytest.mark.parametrize(("n", "d", "size"), [(3, 1, 1), (2 * ROTATION_CHUNK + 1, 5, 8), (70, 32, 32)])
def test_rotate_rows_transposed_with_one_rotation_per_run_is_each_run_alone_bit_for_bit(n, d, size):
    signs = random_signs(np.random.default_rng(18), rotations=3, size=size, runs=RUNS)
    x = gaussian_rows(19, (n, d))
    together = rotate_rows_transposed(x, signs)
    assert together.shape == (RUNS, size, n)
    for run in range(RUNS):
        assert together[run].tobytes() == rotate_rows_transposed(x, signs[run]).tobytes()


@pytest.mark.parametrize("function", [rotate, unrotate])
def test_one_rotation_per_run_rejects_an_array_with_another_number_of_runs(function):
    signs = random_signs(np.random.default_rng(20), rotations=3, size=8, runs=RUNS)
    with pytest.raises(ValueError, match=r"signs of 4 runs.*got shape \(3, 8\)"):
        function(np.ones((3, 8)), signs)


# ---------------------------------------------------------------- random_signs


@pytest.mark.parametrize(("rotations", "size"), [(1, 1), (3, 16), (3, 2048)])
def test_random_signs_are_exactly_plus_or_minus_one_with_one_row_per_rotation(rotations, size):
    signs = random_signs(np.random.default_rng(12), rotations=rotations, size=size)
    assert signs.shape == (rotations, size)
    assert np.all((signs == 1.0) | (signs == -1.0))


def test_random_signs_use_both_signs():
    signs = random_signs(np.random.default_rng(13), rotations=3, size=2048)
    assert 0 < np.count_nonzero(signs == 1.0) < signs.size


def test_random_signs_are_the_same_for_the_same_seed():
    first = random_signs(np.random.default_rng(14), rotations=3, size=256)
    second = random_signs(np.random.default_rng(14), rotations=3, size=256)
    np.testing.assert_array_equal(first, second)


def test_random_signs_differ_for_a_different_seed():
    first = random_signs(np.random.default_rng(14), rotations=3, size=256)
    second = random_signs(np.random.default_rng(15), rotations=3, size=256)
    assert not np.array_equal(first, second)


def test_random_signs_of_several_runs_are_the_draws_of_as_many_calls_in_a_row():
    """rotations x size = 9 is odd: numpy draws the signs from 32-bit halves of 64-bit words,
    and calls in a row continue where the last one stopped, as one call of 7 x 9 signs does."""
    together = random_signs(np.random.default_rng(21), rotations=3, size=3, runs=7)
    rng = np.random.default_rng(21)
    np.testing.assert_array_equal(together, [random_signs(rng, rotations=3, size=3) for _ in range(7)])
