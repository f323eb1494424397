"""Fast Walsh-Hadamard transform and the random rotation of IOME (docs/design.md §5.5).

The normalised Hadamard matrix of size 2^k is the Kronecker product of small Sylvester
Hadamard matrices, so the transform is a few BLAS matrix products on reshaped data,
ping-ponging between two buffers; the dense 2^k x 2^k matrix is never built. Data are
kept in the transposed layout (coordinates x samples), where every product has long
contiguous rows.

The rotation runs its transforms unnormalised (products with +-1 matrices) and scales once
at the end by :func:`rotation_scale`. On integer data (binary rows) every partial sum is then
an integer, exact in float64 whatever the summation order, so any implementation of the
same rotation (the compiled sparse one of :mod:`mechanisms._sparse_rotation` included) gives
bit-identical rotated coordinates.
"""
from __future__ import annotations

import math
from functools import cache

import numpy as np

_MAX_FACTOR_LOG2 = 4  # factors of at most 16: fewer flops than large factors, still BLAS-friendly
ROTATION_CHUNK = 64  # samples rotated together while they sit in cache


def is_power_of_two(value: int) -> bool:
    return value >= 1 and value & (value - 1) == 0


def next_power_of_two(value: int) -> int:
    return 1 << max(int(value) - 1, 0).bit_length()


def _factor_sizes(size: int) -> tuple[int, ...]:
    log2 = size.bit_length() - 1
    parts = -(-log2 // _MAX_FACTOR_LOG2)
    logs = sorted(log2 // parts + (1 if i < log2 % parts else 0) for i in range(parts))
    return tuple(1 << a for a in logs)


@cache
def hadamard_factor(factor: int, scale: float) -> np.ndarray:
    """The Sylvester Hadamard matrix of order ``factor`` (a power of two) times ``scale``,
    read-only and built once per (factor, scale)."""
    matrix = np.ones((1, 1))
    while matrix.shape[0] < factor:
        matrix = np.block([[matrix, matrix], [matrix, -matrix]])
    matrix = matrix * scale
    matrix.setflags(write=False)
    return matrix


def _transform(current: np.ndarray, scratch: np.ndarray, *, normalised: bool = True):
    """FWHT along the axis of length size of ``current`` (size x width, or runs x size x width:
    each run's block on its own, by the same products), C-contiguous, normalised (H / sqrt(size))
    or not (H), using ``scratch`` (same shape) as the other buffer. Returns (result, free buffer)."""
    size, width = current.shape[-2:]
    before = 1
    for position, factor in enumerate(_factor_sizes(size)):
        after = size // (before * factor)
        # H_size = H_f1 (x) H_f2 (x) ...; the first factor carries the 1 / sqrt(size).
        matrix = hadamard_factor(factor, 1.0 / np.sqrt(size) if position == 0 and normalised else 1.0)
        shape = (-1, factor, after * width)  # (runs x) before blocks
        np.matmul(matrix, current.reshape(shape), out=scratch.reshape(shape))
        current, scratch = scratch, current
        before *= factor
    return current, scratch


def _check_length(length: int, what: str) -> None:
    if not is_power_of_two(length):
        raise ValueError(f"{what} must have a power-of-two length, got {length}")


def fwht(a, *, axis: int = -1) -> np.ndarray:
    """Normalised fast Walsh-Hadamard transform of ``a`` along ``axis`` (default: each row).

    Equals multiplication by H / sqrt(D) with the Sylvester Hadamard matrix H of size D, a
    power of two; batched over all other axes. The input is never modified; the transform
    is its own inverse.
    """
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim == 0:
        raise ValueError("fwht needs at least a 1-D array, got a scalar")
    moved = np.moveaxis(arr, axis, 0)
    _check_length(moved.shape[0], f"fwht's axis {axis}")
    current = np.array(moved.reshape(moved.shape[0], -1), order="C")
    result, _ = _transform(current, np.empty_like(current))
    return np.moveaxis(result.reshape(moved.shape), 0, axis)


def random_signs(rng: np.random.Generator, *, rotations: int, size: int, runs: int | None = None) -> np.ndarray:
    """The random sign diagonals D_1..D_t of the rotation (rotations x size, entries +-1); with
    ``runs``, those of ``runs`` independent rotations (runs x rotations x size), the same draws
    as ``runs`` calls in a row on ``rng``."""
    shape = (rotations, size) if runs is None else (runs, rotations, size)
    return rng.integers(0, 2, size=shape).astype(np.float64) * 2.0 - 1.0


def rotation_scale(size: int, rotations: int) -> float:
    """size^(-rotations / 2): the normalisation of t = ``rotations`` unnormalised transforms,
    applied once at the end (one float, the same for every implementation of the rotation)."""
    return float(size) ** (-0.5 * rotations)


def _apply_rotation(current, scratch, signs, *, inverse):
    """R = (H D_1)...(H D_t) (D_t first) or R^T = (D_t H)...(D_1 H) along the size axis, in the
    buffers: unnormalised transforms, then one scaling (exact on integer data, see the module
    docstring). One rotation (signs t x size, current size x width), or one per run (signs
    runs x t x size, current runs x size x width)."""
    diagonals = signs if signs.ndim == 2 else np.moveaxis(signs, 1, 0)  # t x (runs x) size
    for diagonal in (diagonals if inverse else diagonals[::-1]):
        if not inverse:
            current *= diagonal[..., None]
        current, scratch = _transform(current, scratch, normalised=False)
        if inverse:
            current *= diagonal[..., None]
    current *= rotation_scale(signs.shape[-1], signs.shape[-2])
    return current


def rotate_rows_transposed(x: np.ndarray, signs: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """R x_i for every row of ``x`` (n x d, zero-padded to the rotation's size D), returned
    transposed (D x n), into ``out`` if given. Transposing, padding and rotating run chunk
    by chunk of samples, so each chunk stays in cache for all the products. With one rotation
    per run (signs runs x t x D): every run's, (runs x D x n), each run by the same products
    as alone."""
    runs, size = signs.shape[:-2], signs.shape[-1]
    n, d = x.shape
    out = np.empty(runs + (size, n)) if out is None else out
    values = math.prod(runs) * size
    flat_a = np.empty(values * ROTATION_CHUNK)
    flat_b = np.empty(values * ROTATION_CHUNK)
    for start in range(0, n, ROTATION_CHUNK):
        width = min(ROTATION_CHUNK, n - start)
        current = flat_a[: values * width].reshape(runs + (size, width))
        current[..., :d, :] = x[start:start + width].T
        current[..., d:, :] = 0.0
        out[..., start:start + width] = _apply_rotation(
            current, flat_b[: values * width].reshape(runs + (size, width)), signs, inverse=False
        )
    return out


def _rotate_copy(a, signs, *, inverse):
    arr = np.asarray(a, dtype=np.float64)
    size = signs.shape[-1]
    _check_length(arr.shape[-1], "the rotated axis")
    if arr.shape[-1] != size:
        raise ValueError(f"the rotated axis has length {arr.shape[-1]}, but the signs have size {size}")
    runs = signs.shape[:-2]  # () for one rotation, (k,) for one per run
    if runs and (arr.ndim < 2 or arr.shape[0] != runs[0]):
        raise ValueError(f"the signs of {runs[0]} runs rotate an array of shape ({runs[0]}, ..., {size}), "
                         f"got shape {arr.shape}")
    current = np.array(np.swapaxes(arr.reshape(runs + (-1, size)), -1, -2), order="C")
    result = _apply_rotation(current, np.empty_like(current), signs, inverse=inverse)
    return np.swapaxes(result, -1, -2).reshape(arr.shape)


def rotate(x, signs) -> np.ndarray:
    """Rotate every row of ``x`` (..., D) by R = (H D_1)...(H D_t); returns a new array.
    ``signs``: one rotation (t x D), or one per run (runs x t x D) for ``x`` of shape
    (runs, ..., D), whose ``x[r]`` is rotated by ``signs[r]`` by the products of one rotation."""
    return _rotate_copy(x, signs, inverse=False)


def unrotate(y, signs) -> np.ndarray:
    """Exact inverse of :func:`rotate`: applies R^T = (D_t H)...(D_1 H) to every row of ``y``
    (``signs`` as there)."""
    return _rotate_copy(y, signs, inverse=True)
