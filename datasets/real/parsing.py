"""Reading a real dataset's raw file (docs/design.md §7): :func:`parse` reads any of the dataset's
formats, the way the paper's authors read it: a binary dataset into a CSR matrix and its
statistics, its rows in a canonical order (so every source of the same sessions gives the same
bytes); an image dataset (MNIST) into labelled images (:mod:`.image_formats`)."""
from __future__ import annotations

import gzip
import hashlib
import logging
import os
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse

from .catalog import DEFAULT_MIN_ITEMS, DatasetError, dataset_named
from .files import sha256_file
from .image_formats import parse_keras_mnist_npz, parse_mnist_idx

log = logging.getLogger("datasets.real")


# Both parsers work on the whole decompressed file as one uint8 array: classify every byte
# with a lookup table, find the token boundaries and the line ends with flatnonzero, read the
# digits column by column (a token has at most 18), re-number the items through a presence
# table, and sort one int64 key per (row, item) pair to order and de-duplicate each row. No
# Python loop runs per line or per token.

_BAD, _DIGIT, _SEPARATOR, _NEWLINE = 0, 1, 2, 3
_MAX_DIGITS = 18  # any 18-digit number fits in int64


def _byte_classes(separators: bytes) -> np.ndarray:
    table = np.full(256, _BAD, dtype=np.uint8)
    table[ord("0"):ord("9") + 1] = _DIGIT
    table[list(separators)] = _SEPARATOR
    table[ord("\n")] = _NEWLINE
    return table


# Kosarak is read as the authors' source read it, line.split() on bytes: ASCII whitespace.
_KOSARAK_CLASSES = _byte_classes(b" \t\r\x0b\x0c")
# POS: commas separate the fields; "\r" is allowed only in a "\r\n" line end (checked apart).
_POS_CLASSES = _byte_classes(b",")
_POS_CLASSES[ord("\r")] = _SEPARATOR


def parse(name: str, raw_path: str | os.PathLike, *, format: str | None = None,  # noqa: A002
          min_items: int | None = None):
    """Dataset ``name`` read from ``raw_path`` in ``format`` (default: the dataset's native
    one): :func:`parse_kosarak` (fimi), :func:`parse_ann_benchmarks_hdf5` or :func:`parse_pos`,
    each giving a ``scipy.sparse.csr_matrix``; for MNIST :func:`parse_mnist_idx` (``raw_path`` the
    directory of the four IDX files) or :func:`parse_keras_mnist_npz`, giving
    :class:`~datasets.images.LabelledImages`. ``min_items`` applies to Kosarak only, in either
    format (None: its default, 20); giving it for another dataset is an error. The statistics
    name the ``format`` too."""
    dataset = dataset_named(name)
    raw_format = dataset.raw_format(format)
    if dataset.kind == "images":
        if min_items is not None:
            raise DatasetError(f"min_items applies to kosarak only, got min_items={min_items!r} for {name!r}")
        reader = parse_mnist_idx if raw_format.name == "idx" else parse_keras_mnist_npz
        images, statistics = reader(raw_path)
        return images, {**statistics, "format": raw_format.name}
    if dataset.name == "kosarak":
        reader = parse_kosarak if raw_format.name == "fimi" else parse_ann_benchmarks_hdf5
        matrix, statistics = reader(raw_path, min_items=DEFAULT_MIN_ITEMS if min_items is None else min_items)
    elif min_items is not None:
        raise DatasetError(f"min_items applies to kosarak only, got min_items={min_items!r} for {name!r}")
    else:
        matrix, statistics = parse_pos(raw_path)
    return matrix, {**statistics, "format": raw_format.name}


def parse_kosarak(raw_path: str | os.PathLike, *, min_items: int = DEFAULT_MIN_ITEMS
                  ) -> tuple[scipy.sparse.csr_matrix, dict]:
    """Kosarak as the PLAN paper used it (docs/design.md §7): the gzipped FIMI file, one session per
    line of item ids separated by whitespace; keep the lines with at least ``min_items`` ids,
    duplicates counted (``len(line.split()) >= min_items``, ann-benchmarks' kosarak-jaccard
    filter); one binary row per kept line (an id repeated in a line is one 1); the items that
    occur in the kept rows re-numbered 0..D-1 in increasing order of their ids.

    A line is what ends with "\\n" (a last line without one counts too); lines with too few
    ids, empty ones included, are dropped. Every byte must be a digit, whitespace or a line
    end (a bad one anywhere raises, naming its line and token).

    Returns the CSR matrix (float64 ones, sorted int32 indices, canonical, rows in the canonical
    order of :func:`_binary_csr`) and the statistics ``n`` (rows kept), ``d`` (distinct items),
    ``tokens`` (ids read in the kept rows, duplicates counted), ``occurrences`` (nonzeros),
    ``sha256`` and ``source_file``.
    """
    check_min_items(min_items)
    raw_path = Path(raw_path)
    raw, text = _read(raw_path, gzipped=True)
    b = np.frombuffer(text, dtype=np.uint8)
    classes = _KOSARAK_CLASSES[b]
    _check_bytes(classes, text, raw_path, separators=b" \t\r\x0b\x0c\n")
    newlines = np.flatnonzero(classes == _NEWLINE)
    starts, ends = _runs(classes == _DIGIT)
    lengths = ends - starts
    _check_lengths(lengths, starts, text, raw_path, separators=b" \t\r\x0b\x0c\n")
    line_of = np.searchsorted(newlines, starts)  # 0-based line of each token
    per_line = np.bincount(line_of, minlength=_line_count(b, newlines))
    kept_lines = per_line >= min_items
    if not kept_lines.any():
        raise DatasetError(f"{raw_path}: no line has at least {min_items} item ids (min_items={min_items})")
    kept = kept_lines[line_of]
    row_number = np.cumsum(kept_lines) - 1  # a kept line's row
    rows = row_number[line_of[kept]]
    values = _read_integers(b, starts[kept], lengths[kept])
    matrix = _binary_csr(rows, values, n=int(np.count_nonzero(kept_lines)))
    statistics = _statistics(matrix, tokens=values.size, sha256=hashlib.sha256(raw).hexdigest(),
                             raw_path=raw_path)
    log.info("kosarak: kept %d of %d lines (at least %d ids); %d items, %d ids, %d nonzeros",
             statistics["n"], per_line.size, min_items, statistics["d"], statistics["tokens"],
             statistics["occurrences"])
    return matrix, statistics


def parse_ann_benchmarks_hdf5(raw_path: str | os.PathLike, *, min_items: int = DEFAULT_MIN_ITEMS
                              ) -> tuple[scipy.sparse.csr_matrix, dict]:
    """Kosarak from ann-benchmarks' ``kosarak-jaccard.hdf5``, the file the PLAN authors' script
    loads. ann-benchmarks built it from the FIMI file: the lines with at least 20 ids (duplicates
    counted), each sorted (duplicates kept), shuffled and split into the arrays ``train`` and
    ``test`` of item ids, flat, with ``size_train`` and ``size_test`` the length of each
    session. Read as the authors did: the train sessions, then the test ones; one binary row per
    session with at least ``min_items`` ids (an id repeated in a session is one 1); the items
    that occur re-numbered 0..D-1 in increasing order of their ids. The same sessions as the
    FIMI file therefore give the same rows, and with the canonical row order of
    :func:`_binary_csr` the same matrix, byte for byte (``min_items`` below 20 cannot bring back
    the shorter sessions, which the file does not hold).

    A file that is not HDF5, lacks one of the four arrays, holds anything but one-dimensional
    integer arrays, negative sizes or ids, or sizes that do not add up to the ids raises one
    :class:`DatasetError` naming the problem.

    Returns the matrix and statistics as :func:`parse_kosarak` does (``tokens``: the ids of
    the kept sessions, duplicates counted).
    """
    check_min_items(min_items)
    raw_path = Path(raw_path)
    arrays = _read_ann_benchmarks_arrays(raw_path)
    sizes = np.concatenate([arrays["size_train"], arrays["size_test"]])
    ids = np.concatenate([arrays["train"], arrays["test"]])
    if not sizes.size:
        raise DatasetError(f"{raw_path}: the file holds no sessions (size_train and size_test are empty)")
    kept_sessions = sizes >= min_items
    if not kept_sessions.any():
        raise DatasetError(f"{raw_path}: no session has at least {min_items} item ids (min_items={min_items})")
    session_of = np.repeat(np.arange(sizes.size), sizes)  # the session of each id, train then test
    kept = kept_sessions[session_of]
    row_number = np.cumsum(kept_sessions) - 1  # a kept session's row
    rows = row_number[session_of[kept]]
    values = ids[kept]
    matrix = _binary_csr(rows, values, n=int(np.count_nonzero(kept_sessions)))
    try:
        digest = sha256_file(raw_path)
    except OSError as exc:
        raise DatasetError(f"cannot read {raw_path} ({exc.strerror or exc})") from None
    statistics = _statistics(matrix, tokens=values.size, sha256=digest, raw_path=raw_path)
    log.info("kosarak: kept %d of %d sessions (%d train, %d test; at least %d ids); %d items, %d ids,"
             " %d nonzeros", statistics["n"], sizes.size, arrays["size_train"].size, arrays["size_test"].size,
             min_items, statistics["d"], statistics["tokens"], statistics["occurrences"])
    return matrix, statistics


_ANN_BENCHMARKS_ARRAYS = ("train", "size_train", "test", "size_test")


def _read_ann_benchmarks_arrays(raw_path: Path) -> dict[str, np.ndarray]:
    """The four arrays of an ann-benchmarks set file as int64, checked (see the caller)."""
    import h5py  # here, not at module level: importing datasets should stay cheap

    try:
        with h5py.File(raw_path, "r") as f:
            missing = [name for name in _ANN_BENCHMARKS_ARRAYS if not isinstance(f.get(name), h5py.Dataset)]
            if missing:
                raise DatasetError(f"{raw_path} is not an ann-benchmarks set file: it lacks the array(s)"
                                   f" {', '.join(missing)} (it needs {', '.join(_ANN_BENCHMARKS_ARRAYS)})")
            arrays = {name: f[name][()] for name in _ANN_BENCHMARKS_ARRAYS}
    except OSError as exc:  # h5py's error for a file that is not HDF5, truncated or unreadable
        raise DatasetError(f"{raw_path} is not a readable HDF5 file ({exc}); delete it and fetch it again") from None
    checked = {}
    for name, array in arrays.items():
        array = np.asarray(array)
        if array.ndim != 1 or array.dtype.kind not in "iu":
            raise DatasetError(f"{raw_path}: {name} must be a one-dimensional array of integers, got shape"
                               f" {array.shape} of {array.dtype}")
        if array.size and array.dtype.kind == "i" and array.min() < 0:
            at = int(np.argmax(array < 0))
            what = "session length" if name.startswith("size_") else "item id"
            raise DatasetError(f"{raw_path}: {name}[{at}] = {int(array[at])} is a negative {what}")
        if array.size and array.dtype.kind == "u" and array.max() > np.iinfo(np.int64).max:
            raise DatasetError(f"{raw_path}: {name} holds values beyond int64 ({int(array.max())})")
        checked[name] = array.astype(np.int64, copy=False)
    for part in ("train", "test"):
        total = int(checked[f"size_{part}"].sum())
        if total != checked[part].size:
            raise DatasetError(f"{raw_path}: the sizes do not add up: size_{part} sums to {total} ids, but {part}"
                               f" holds {checked[part].size}")
    return checked


def parse_pos(raw_path: str | os.PathLike) -> tuple[scipy.sparse.csr_matrix, dict]:
    """BMS-POS as the PLAN paper's authors read it (docs/design.md §7): one transaction per line,
    read as ``line.split(",")[:-1]``, i.e. the comma-separated item ids with the last field
    dropped (empty when the line ends with a comma, as in BMS-POS; a line that does not end
    with a comma loses its last id, which is logged); items re-numbered 0..D-1 in increasing
    order of their ids.

    Every line is a row, an empty one too (a row of zeros, as the authors' reading gives);
    a final "\\n" does not start another row. A line may end with "\\r\\n". Every byte must be
    a digit, a comma or a line end, and every kept field a non-empty id (a bad one raises,
    naming its line and token).

    Returns the CSR matrix (float64 ones, sorted int32 indices, canonical, rows in the canonical
    order of :func:`_binary_csr`) and the statistics ``n``, ``d``, ``tokens`` (ids read,
    duplicates counted), ``occurrences`` (nonzeros), ``sha256``, ``git_blob`` (``git
    hash-object`` of the file) and ``source_file``.
    """
    raw_path = Path(raw_path)
    raw, text = _read(raw_path, gzipped=False)
    b = np.frombuffer(text, dtype=np.uint8)
    classes = _POS_CLASSES[b]
    _check_bytes(classes, text, raw_path, separators=b",\n")
    returns = np.flatnonzero(b == ord("\r"))
    lone = returns[(returns + 1 >= b.size) | (b[np.minimum(returns + 1, b.size - 1)] != ord("\n"))]
    if lone.size:
        _raise_token(text, int(lone[0]), raw_path, "contains a carriage return that does not end the line",
                     separators=b",\n")
    newlines = np.flatnonzero(classes == _NEWLINE)
    n = _line_count(b, newlines)
    if n == 0:
        raise DatasetError(f"{raw_path}: the file has no lines")
    # Every field ends at a comma or a line end; the fields ending at a comma are exactly
    # line.split(",")[:-1] (the field after a line's last comma is the dropped one).
    separators = np.flatnonzero((b == ord(",")) | (classes == _NEWLINE))
    field_starts = np.empty_like(separators)
    field_starts[:1] = 0
    field_starts[1:] = separators[:-1] + 1
    at_comma = b[separators] == ord(",")
    starts, ends = field_starts[at_comma], separators[at_comma]
    lengths = ends - starts
    if lengths.size and lengths.min() == 0:
        _raise_token(text, int(starts[np.argmin(lengths)]), raw_path, "has an empty item id (two commas in a row,"
                     " or a comma first)", separators=b"\n")
    _check_lengths(lengths, starts, text, raw_path, separators=b",\n")
    if not lengths.size:
        raise DatasetError(f"{raw_path}: no line has an item id followed by a comma (each line is read as"
                           " line.split(',')[:-1])")
    rows = np.searchsorted(newlines, ends)
    values = _read_integers(b, starts, lengths)
    _log_dropped_fields(b, newlines, field_starts, separators, at_comma, raw_path)
    matrix = _binary_csr(rows, values, n=n)
    statistics = _statistics(matrix, tokens=values.size, sha256=hashlib.sha256(raw).hexdigest(),
                             raw_path=raw_path)
    blob = hashlib.sha1(b"blob %d\0" % len(raw))  # what `git hash-object` hashes
    blob.update(raw)
    statistics["git_blob"] = blob.hexdigest()
    empty = n - int(np.count_nonzero(np.diff(matrix.indptr)))
    log.info("pos: %d rows (%d empty), %d items, %d ids, %d nonzeros", n, empty, statistics["d"],
             statistics["tokens"], statistics["occurrences"])
    return matrix, statistics


def _read(raw_path: Path, *, gzipped: bool) -> tuple[bytes, bytes]:
    """The file's bytes and its text (decompressed for a gzipped file)."""
    try:
        raw = raw_path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read {raw_path} ({exc.strerror or exc})") from None
    if not gzipped:
        return raw, raw
    try:
        return raw, gzip.decompress(raw)
    except (gzip.BadGzipFile, EOFError, zlib.error):
        raise DatasetError(f"{raw_path} is a corrupt gzip file; delete it and fetch it again") from None


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) of every run of True in ``mask``."""
    edges = np.diff(mask.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


def _line_count(b: np.ndarray, newlines: np.ndarray) -> int:
    """Lines end with "\\n"; a last line without one counts too, a final "\\n" starts none."""
    return int(newlines.size + (b.size > 0 and b[-1] != ord("\n")))


def _read_integers(b: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The integers written in decimal at b[starts[i]:starts[i] + lengths[i]] (all digits),
    read one digit position at a time over all tokens."""
    if not starts.size:
        return np.zeros(0, dtype=np.int64)
    values = (b[starts] - ord("0")).astype(np.int64)  # every token has a first digit
    for position in range(1, int(lengths.max())):
        longer = np.flatnonzero(lengths > position)
        values[longer] = values[longer] * 10 + (b[starts[longer] + position] - ord("0"))
    return values


def _binary_csr(rows: np.ndarray, values: np.ndarray, *, n: int) -> scipy.sparse.csr_matrix:
    """The binary matrix of n rows with a 1 at (rows[k], item k) for every token k, items
    re-numbered 0..D-1 in increasing order of their ids, its rows in canonical order.

    Why the canonical order: the same sessions come in different orders from different
    sources (ann-benchmarks shuffled them when it split train and test), and nothing about a
    session's position in a file is data. The columns depend only on the set of ids that
    occur; the rows are then sorted by their sorted column lists (:func:`canonical_row_order`),
    a total order on distinct rows in which equal rows are interchangeable. So the matrix is a
    function of the multiset of sessions alone: any two files holding the same sessions, in any
    order and format, give byte-identical arrays, statistics and results (the trials' seeds
    then decide everything that is random).
    """
    top = int(values.max())
    if top <= 4 * values.size + (1 << 20):  # a presence table is cheaper than sorting
        present = np.zeros(top + 1, dtype=bool)
        present[values] = True
        new_id = np.cumsum(present, dtype=np.int64) - 1
        columns = new_id[values]
        d = int(new_id[-1]) + 1
    else:
        unique, columns = np.unique(values, return_inverse=True)
        d = unique.size
    # One key per (row, item): sorting it orders every row's items (rows are non-decreasing),
    # and equal neighbours are a repeated id in a row, kept once.
    keys = rows.astype(np.int64) * d + columns
    keys.sort()
    distinct = np.empty(keys.size, dtype=bool)
    distinct[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=distinct[1:])
    keys = keys[distinct]
    key_rows, key_columns = np.divmod(keys, d)
    index_dtype = np.int32 if max(keys.size, d) < np.iinfo(np.int32).max else np.int64
    indptr = np.zeros(n + 1, dtype=index_dtype)
    np.cumsum(np.bincount(key_rows, minlength=n), out=indptr[1:])
    indices = key_columns.astype(index_dtype)
    order = canonical_row_order(indptr, indices)
    lengths = np.diff(indptr)[order]
    canonical_indptr = np.zeros(n + 1, dtype=index_dtype)
    np.cumsum(lengths, out=canonical_indptr[1:])
    # row order[i]'s entries move to canonical_indptr[i]:canonical_indptr[i + 1], in one gather
    gather = np.repeat(indptr[:-1][order].astype(np.int64) - canonical_indptr[:-1], lengths) + np.arange(keys.size)
    matrix = scipy.sparse.csr_matrix((np.ones(keys.size), indices[gather], canonical_indptr), shape=(n, d),
                                     copy=False)
    matrix.has_sorted_indices = True
    matrix.has_canonical_format = True
    return matrix


def canonical_row_order(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The permutation that sorts the rows of a CSR matrix with sorted indices
    lexicographically by their column lists (a row that begins another comes first; an empty
    row first of all); equal rows keep their relative order.

    Vectorised over rows, refined one position at a time: the rows still tied with another on
    their first k columns are sorted by (their tie group, column k), and only the groups that
    are still tied and not finished go on, so the loop runs as long as the longest prefix two
    different rows share, over ever fewer rows.
    """
    n = indptr.size - 1
    lengths = np.diff(indptr)
    order = np.arange(n)
    group = np.zeros(n, dtype=np.int64)  # slot i's tie group: the first slot of its group
    active = np.arange(n)  # slots (positions in order) whose row is tied with another, ascending
    position = 0
    while active.size:
        rows = order[active]
        column = np.full(rows.size, -1, dtype=np.int64)  # -1: the row has ended, it sorts first
        longer = lengths[rows] > position
        column[longer] = indices[indptr[rows[longer]] + position]
        # a group's slots are contiguous and numbered by its first slot, so sorting by group
        # first keeps every group in its slots
        by_key = np.lexsort((column, group[active]))
        order[active] = rows[by_key]
        column, tied_group = column[by_key], group[active][by_key]
        starts = np.ones(active.size, dtype=bool)
        starts[1:] = (tied_group[1:] != tied_group[:-1]) | (column[1:] != column[:-1])
        group[active] = np.maximum.accumulate(np.where(starts, active, 0))
        first = np.flatnonzero(starts)
        size = np.diff(np.append(first, active.size))
        # rows alone in their group are placed; tied rows that ended together are equal
        still_tied = (np.repeat(size, size) > 1) & (column >= 0)
        active = active[still_tied]
        position += 1
    return order


def _statistics(matrix, *, tokens: int, sha256: str, raw_path: Path) -> dict:
    n, d = matrix.shape
    return {
        "n": int(n),
        "d": int(d),
        "tokens": int(tokens),
        "occurrences": int(matrix.nnz),
        "sha256": sha256,
        "source_file": raw_path.name,
    }


def check_min_items(min_items) -> None:
    if not isinstance(min_items, int) or isinstance(min_items, bool) or min_items < 1:
        raise DatasetError(f"min_items must be an integer >= 1, got min_items={min_items!r}")


def _check_bytes(classes: np.ndarray, text: bytes, raw_path: Path, *, separators: bytes) -> None:
    bad = np.flatnonzero(classes == _BAD)
    if bad.size:
        _raise_token(text, int(bad[0]), raw_path, "is not a non-negative integer item id", separators=separators)


def _check_lengths(lengths, starts, text, raw_path, *, separators: bytes) -> None:
    if lengths.size and lengths.max() > _MAX_DIGITS:
        at = int(starts[np.argmax(lengths)])
        _raise_token(text, at, raw_path, f"is too long for an item id (more than {_MAX_DIGITS} digits)",
                     separators=separators)


def _raise_token(text: bytes, at: int, raw_path: Path, problem: str, *, separators: bytes) -> None:
    """Raise a DatasetError naming the line and the token that holds byte ``at``."""
    line = text.count(b"\n", 0, at) + 1
    left = at
    while left > 0 and at - left < 60 and text[left - 1] not in separators:
        left -= 1
    right = at
    while right < len(text) and right - at < 60 and text[right] not in separators:
        right += 1
    token = text[left:right].decode("utf-8", errors="replace")
    raise DatasetError(f"{raw_path}, line {line}: {token!r} {problem}")


def _log_dropped_fields(b, newlines, field_starts, separators, at_comma, raw_path) -> None:
    """Log how many lines lose an id to the authors' reading (their last field not empty)."""
    last_starts = field_starts[~at_comma]  # fields ending at a "\n"
    last_ends = separators[~at_comma]
    last_ends = last_ends - (b[np.maximum(last_ends - 1, 0)] == ord("\r"))  # "\r\n" ends a line too
    dropped = int(np.count_nonzero(last_ends > last_starts))
    final_start = int(separators[-1]) + 1 if separators.size else 0
    dropped += final_start < b.size  # a last line without "\n" whose last field is not empty
    if dropped:
        log.warning("%s: %d lines do not end with a comma; their last item id is dropped, as in the authors'"
                    " reading line.split(',')[:-1]", raw_path.name, dropped)
