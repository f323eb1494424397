"""The processed real datasets (docs/design.md §7): :func:`process` parses a raw file, checks its
statistics against the expected ones and caches the matrix (``<name>.npz``) with its statistics
(``<name>.json``); :func:`load` reads them back."""
from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

import scipy.sparse

from .catalog import DEFAULT_MIN_ITEMS, EXPECT_KEYS, PROCESSED_DIR, DatasetError, RealDataset, dataset_named
from .files import remove_quietly, write_atomic, write_atomic_with
from .parsing import parse

log = logging.getLogger("datasets.real")


def process(
    name: str,
    raw_path: str | os.PathLike,
    *,
    format: str | None = None,  # noqa: A002 (the config's word)
    processed_dir: str | os.PathLike = PROCESSED_DIR,
    min_items: int | None = None,
    expect: dict | None = None,
) -> dict:
    """Parse dataset ``name`` from ``raw_path`` in ``format`` (default: the dataset's native
    one), check its statistics against ``expect``, and cache it as
    ``processed_dir/<name>.npz`` (the CSR matrix, rows in canonical order) and ``<name>.json``
    (its statistics and format, ``min_items`` for Kosarak and the ``expect`` checked).

    ``expect``: any of n, d, tokens, occurrences, git_blob (POS only) with the values the
    paper's figures used (docs/design.md §7); None checks nothing (logged as a warning). A mismatch
    raises one :class:`DatasetError` naming every expected and found value, the file's sha256
    and how to override, and writes nothing. Both files are written atomically, the JSON last,
    so its presence means the matrix is complete. Returns the JSON's content.
    """
    dataset = dataset_named(name)
    expect = check_expect(expect, dataset)
    if dataset.name == "kosarak" and min_items is None:
        min_items = DEFAULT_MIN_ITEMS
    matrix, statistics = parse(dataset.name, raw_path, format=format, min_items=min_items)
    if expect is None:
        log.warning("%s: no expected statistics given, so nothing about %s is verified", dataset.name, raw_path)
    else:
        verify_statistics(dataset, statistics, expect, raw_path)
    record = {"name": dataset.name, **statistics}
    if dataset.name == "kosarak":
        record["min_items"] = min_items
    record["expect"] = expect

    processed_dir = Path(processed_dir)
    processed_dir.mkdir(parents=True, exist_ok=True)
    npz_path, json_path = _processed_paths(dataset.name, processed_dir)
    remove_quietly(json_path)  # the old statistics must not describe the new matrix, even briefly
    write_atomic_with(npz_path, lambda out: scipy.sparse.save_npz(out, matrix, compressed=False))
    write_atomic(json_path, (json.dumps(record, indent=2) + "\n").encode("utf-8"))
    log.info("%s: wrote %s and %s", dataset.name, npz_path, json_path)
    return record


def load(name: str, *, processed_dir: str | os.PathLike = PROCESSED_DIR) -> tuple[scipy.sparse.csr_matrix, dict]:
    """The matrix and statistics that :func:`process` cached for dataset ``name``."""
    dataset = dataset_named(name)
    npz_path, json_path = _processed_paths(dataset.name, Path(processed_dir))

    def broken(problem: str) -> DatasetError:
        return DatasetError(f"processed dataset {dataset.name!r} {problem}; rerun the workflow's parse step"
                            f" (snakemake datasets/processed/{dataset.name}.npz)")

    try:
        record = json.loads(json_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise broken(f"is missing ({json_path} not found)") from None
    except (OSError, ValueError) as exc:
        raise broken(f"has an unreadable {json_path} ({exc})") from None
    try:
        matrix = scipy.sparse.load_npz(npz_path)
    except FileNotFoundError:
        raise broken(f"is missing ({npz_path} not found)") from None
    except Exception as exc:  # numpy/zipfile raise many kinds for a damaged file
        raise broken(f"has an unreadable {npz_path} ({type(exc).__name__}: {exc})") from None
    if not isinstance(record, dict) or not isinstance(matrix, scipy.sparse.csr_matrix):
        raise broken(f"is not what the parse step writes ({json_path}, {npz_path})")
    found = {"n": matrix.shape[0], "d": matrix.shape[1], "occurrences": matrix.nnz}
    wrong = [f"{key} {record.get(key)!r} in the JSON, {value} in the matrix" for key, value in found.items()
             if record.get(key) != value]
    if wrong:
        raise broken(f"is inconsistent ({'; '.join(wrong)})")
    return matrix, record


def _processed_paths(name: str, processed_dir: Path) -> tuple[Path, Path]:
    return processed_dir / f"{name}.npz", processed_dir / f"{name}.json"


def check_expect(expect, dataset: RealDataset) -> dict | None:
    if expect is None:
        return None
    if not isinstance(expect, dict):
        raise DatasetError(f"expect for {dataset.name} must be a mapping of statistics, got {expect!r}")
    unknown = sorted(str(key) for key in expect if key not in EXPECT_KEYS)
    if unknown:
        raise DatasetError(f"unknown key(s) in expect for {dataset.name}: {', '.join(unknown)};"
                           f" known: {', '.join(EXPECT_KEYS)}")
    checked = {}
    for key in EXPECT_KEYS:  # a fixed order, for the message and the JSON
        if key not in expect:
            continue
        value = expect[key]
        if key == "git_blob":
            if dataset.name != "pos":
                raise DatasetError(f"expect key git_blob applies to pos only, got it for {dataset.name}")
            if not isinstance(value, str) or not re.fullmatch(r"[0-9a-fA-F]{40}", value):
                raise DatasetError(f"expect git_blob for {dataset.name} must be 40 hex digits, got {value!r}")
            value = value.lower()
        elif not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise DatasetError(f"expect {key} for {dataset.name} must be an integer >= 0, got {value!r}")
        checked[key] = value
    return checked


def verify_statistics(dataset: RealDataset, statistics: dict, expect: dict, raw_path) -> None:
    mismatched = [key for key in expect if statistics[key] != expect[key]]
    if not mismatched:
        log.info("%s: statistics as expected (%s)", dataset.name,
                 ", ".join(f"{key} = {value}" for key, value in expect.items()))
        return
    lines = ", ".join(
        f"{key} expected {expect[key]} found {statistics[key]}" + (" (MISMATCH)" if key in mismatched else "")
        for key in expect
    )
    found = ", ".join(f"{key}: {statistics[key]}" for key in expect)
    raise DatasetError(
        f"{dataset.name}: the statistics of {raw_path} (sha256 {statistics['sha256']}) differ from the expected"
        f" ones: {lines}. If this file is the one you want, set datasets.{dataset.name}.expect to the found values"
        f" ({{{found}}}) (or null to skip the check) in your config."
    )
