"""Memory layout helpers: the mechanisms work on data transposed to (coordinates x samples)."""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse

from ._validation import check_data, check_sparse

_TRANSPOSE_ROWS = 64  # rows copied at a time: source and target blocks stay in cache
WORK_ARRAY = "work"  # the scratch name of every mechanism's (coordinates x samples) work array: one array serves all


def transposed_copy(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A C-contiguous copy of ``x.T`` (into ``out`` if given), copied in row blocks (a plain
    strided copy of a large array is several times slower)."""
    n, d = x.shape
    out = np.empty((d, n)) if out is None else out
    for start in range(0, n, _TRANSPOSE_ROWS):
        out[:, start:start + _TRANSPOSE_ROWS] = x[start:start + _TRANSPOSE_ROWS].T
    return out


class Workspace:
    """Reusable scratch arrays, so blocked loops do not allocate (and page-fault) anew
    for every block. ``get`` returns a C-contiguous array of the requested shape backed
    by a buffer kept under ``name``; ``computed`` keeps results that every block shares."""

    def __init__(self) -> None:
        self._buffers: dict[str, np.ndarray] = {}
        self._results: dict[tuple, np.ndarray] = {}

    def computed(self, key: tuple, compute) -> np.ndarray:
        """``compute()``, evaluated once per ``key`` for the life of this workspace."""
        if key not in self._results:
            self._results[key] = compute()
        return self._results[key]

    def get(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        size = int(np.prod(shape))
        buffer = self._buffers.get(name)
        if buffer is None or buffer.size < size:
            buffer = np.empty(size)
            self._buffers[name] = buffer
        return buffer[:size].reshape(shape)


class SharedSample:
    """One sample that several mechanisms see (a trial of an experiment).

    What the mechanisms derive from it without randomness (the transposed copy, the sorted
    rows of the per-coordinate quantiles, IOME's rotated-coordinate counts for a rotation) is
    computed once and kept, up to ``cache_bytes`` in total (arrays of any dtype, counted by
    their bytes); beyond that the mechanisms compute as if given the array. Every mechanism
    accepts it in place of ``x`` and returns the same bytes as for ``x``. The kept arrays
    are read-only, and ``x`` must not change while the sample is in use.

    ``x`` is a dense array (validated as by ``check_data``) or a scipy.sparse matrix (validated
    as by ``check_sparse`` and held as CSR, never densified). Mechanisms that need dense data
    refuse a sample holding a sparse matrix with the same error as the matrix itself; the
    dense-only helpers (:func:`transposed_of`, :meth:`scratch`) are not used on it.

    ``buffers`` (what :meth:`release` returned for the previous trial) are reused for the
    arrays it keeps: fresh large arrays page-fault on every trial, reused ones only once.
    ``wanted`` (the previous trial's :attr:`recalled`) limits what is recorded for later
    mechanisms (:meth:`worth_recording`) to what they asked for: recording rows nobody reads
    costs a pass over memory.
    """

    # 2 GiB: room for the transposed copy and the sorted coordinates at n = 100000, d = 1024.
    def __init__(self, x, *, cache_bytes: int = 2 << 30, buffers=(), wanted=None) -> None:
        self.x = check_sparse(x) if scipy.sparse.issparse(x) else check_data(x)
        self.cache_bytes = int(cache_bytes)
        self._kept: dict[tuple, np.ndarray] = {}
        self._spare = list(buffers)
        self._scratch: dict[str, np.ndarray] = {}
        self.wanted = None if wanted is None else frozenset(wanted)
        self._recalled: set[tuple] = set()

    @property
    def recalled(self) -> frozenset:
        """The keys a mechanism asked for and found kept."""
        return frozenset(self._recalled)

    def worth_recording(self, key: tuple) -> bool:
        """Whether to record ``key`` for later mechanisms: without ``wanted``, always."""
        return self.wanted is None or key in self.wanted

    def release(self) -> list[np.ndarray]:
        """Forget the data and everything kept; returns the arrays this sample used, for the
        next sample's ``buffers``. Spare buffers it did not use are dropped: with ``wanted``
        the next sample will not ask for them either (rows recorded in a first trial that no
        mechanism read)."""
        arrays = list(self._kept.values()) + list(self._scratch.values())
        self.x, self._kept, self._spare, self._scratch = None, {}, [], {}
        return arrays

    def scratch(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """A writable work array under ``name`` that the mechanisms of this sample take in
        turn (each overwrites it); it is recycled like the kept arrays."""
        array = self._scratch.get(name)
        if array is None or array.shape != shape:
            array = self._scratch[name] = self.buffer(shape)
        return array

    @property
    def kept_bytes(self) -> int:
        return sum(array.nbytes for array in self._kept.values())

    def kept(self, key: tuple):
        """The array kept under ``key``, or None."""
        array = self._kept.get(key)
        if array is not None:
            self._recalled.add(key)
        return array

    def has_room(self, nbytes: int) -> bool:
        return self.kept_bytes + nbytes <= self.cache_bytes

    def buffer(self, shape: tuple[int, ...], dtype=np.float64) -> np.ndarray:
        """An uninitialised writable array of ``shape`` and ``dtype``, recycled if one of that
        shape and dtype is spare."""
        for index, spare in enumerate(self._spare):
            if spare.shape == shape and spare.dtype == dtype:
                spare = self._spare.pop(index)
                spare.setflags(write=True)
                return spare
        return np.empty(shape, dtype=dtype)

    def keep(self, key: tuple, array: np.ndarray) -> None:
        """Keep ``array`` (made read-only) under ``key`` if it fits."""
        if key not in self._kept and self.has_room(array.nbytes):
            array.setflags(write=False)
            self._kept[key] = array

    def derived(self, key: tuple, shape: tuple[int, ...], compute, dtype=np.float64):
        """``compute(out)`` into a buffer of ``shape`` and ``dtype``, kept under ``key`` if it
        fits in the cache. Returns None when it is not kept and does not fit, so the caller can
        take its own route."""
        if key in self._kept:
            return self.kept(key)
        if not self.has_room(np.dtype(dtype).itemsize * math.prod(shape)):
            return None
        array = compute(self.buffer(shape, dtype))
        self.keep(key, array)  # ``compute`` may itself have kept something: keep checks again
        return array


def sample_data(x):
    """The data a mechanism was given as ``x``: the array or sparse matrix itself, or the one a
    :class:`SharedSample` holds (the mechanisms validate it with ``check_data`` or
    ``check_sparse``)."""
    return x.x if isinstance(x, SharedSample) else x


def transposed_of(x, data: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``data.T``; ``x`` is what the mechanism was given (``data``
    validated from it). A :class:`SharedSample` keeps one and returns it read-only, so a
    caller that writes must check ``flags.writeable``."""
    if isinstance(x, SharedSample):
        kept = x.derived(("transposed",), data.shape[::-1], lambda out: transposed_copy(data, out))
        if kept is not None:
            return kept
    return transposed_copy(data)
