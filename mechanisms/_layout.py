"""Memory layout helpers: the mechanisms work on data transposed to (coordinates x samples)."""
from __future__ import annotations

import numpy as np

_TRANSPOSE_ROWS = 64  # rows copied at a time: source and target blocks stay in cache


def transposed_copy(x: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``x.T``, copied in row blocks (a plain strided copy of a
    large array is several times slower)."""
    n, d = x.shape
    out = np.empty((d, n))
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
