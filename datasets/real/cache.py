"""The processed real datasets (docs/design.md §7): :func:`process` parses a raw file, checks its
statistics against the expected ones and caches the data (``<name>.npz``: a binary dataset's CSR
matrix, an image dataset's labelled pixels) with its statistics (``<name>.json``); :func:`load`
reads them back."""
from __future__ import annotations

import decimal
import json
import logging
import math
import numbers
import os
import re
from pathlib import Path

import numpy as np
import scipy.sparse

from datasets.images import DIGITS, SPLITS, LabelledImages

from .catalog import DEFAULT_MIN_ITEMS, PROCESSED_DIR, DatasetError, RealDataset, dataset_named
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
    ``processed_dir/<name>.npz`` and ``<name>.json`` (its statistics and format, ``min_items``
    for Kosarak and the ``expect`` checked). The npz of a binary dataset is its CSR matrix, rows
    in canonical order; of an image dataset the arrays ``images`` (n x d uint8), ``labels`` and
    ``split`` (codes of the JSON's ``splits``, train first) of :class:`LabelledImages`.

    ``expect``: for a binary dataset any of n, d, tokens, occurrences, git_blob (POS only) with
    the values the paper's figures used; for an image dataset any of the statistics
    :data:`~datasets.real.catalog.IMAGE_STATISTICS` names, train_pixel_mean checked to the
    precision it is written with (docs/design.md §7). None checks nothing (logged as a warning).
    A mismatch raises one :class:`DatasetError` naming every expected and found value, the
    file's sha256 and how to override, and writes nothing. Both files are written atomically,
    the JSON last, so its presence means the data are complete. Returns the JSON's content.
    """
    dataset = dataset_named(name)
    expect = check_expect(expect, dataset)
    if dataset.name == "kosarak" and min_items is None:
        min_items = DEFAULT_MIN_ITEMS
    data, statistics = parse(dataset.name, raw_path, format=format, min_items=min_items)
    if expect is None:
        log.warning("%s: no expected statistics given, so nothing about %s is verified", dataset.name, raw_path)
    else:
        verify_statistics(dataset, statistics, expect, raw_path)
    record = {"name": dataset.name, **statistics}
    if dataset.name == "kosarak":
        record["min_items"] = min_items
    if dataset.kind == "images":
        record["splits"] = list(SPLITS)
    record["expect"] = expect

    processed_dir = Path(processed_dir)
    processed_dir.mkdir(parents=True, exist_ok=True)
    npz_path, json_path = _processed_paths(dataset.name, processed_dir)
    remove_quietly(json_path)  # the old statistics must not describe the new data, even briefly
    if dataset.kind == "images":
        # uncompressed, with numpy's fixed zip timestamps: the same arrays give the same bytes
        write_atomic_with(npz_path, lambda out: np.savez(out, images=data.images, labels=data.labels,
                                                         split=data.split))
    else:
        write_atomic_with(npz_path, lambda out: scipy.sparse.save_npz(out, data, compressed=False))
    write_atomic(json_path, (json.dumps(record, indent=2) + "\n").encode("utf-8"))
    log.info("%s: wrote %s and %s", dataset.name, npz_path, json_path)
    return record


def load(name: str, *, processed_dir: str | os.PathLike = PROCESSED_DIR
         ) -> tuple[scipy.sparse.csr_matrix | LabelledImages, dict]:
    """The data and statistics that :func:`process` cached for dataset ``name``: the CSR matrix
    of a binary dataset, the :class:`LabelledImages` of an image dataset."""
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
    if dataset.kind == "images":
        return _load_images(npz_path, record, broken), record
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


def _load_images(npz_path: Path, record, broken) -> LabelledImages:
    """The labelled images of an image dataset's npz, checked against its JSON ``record``."""
    try:
        with np.load(npz_path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in ("images", "labels", "split")}
    except FileNotFoundError:
        raise broken(f"is missing ({npz_path} not found)") from None
    except Exception as exc:  # numpy/zipfile raise many kinds for a damaged file
        raise broken(f"has an unreadable {npz_path} ({type(exc).__name__}: {exc})") from None
    images = arrays["images"]
    if (not isinstance(record, dict) or images.ndim != 2 or images.dtype != np.uint8
            or arrays["labels"].shape != images.shape[:1] or arrays["split"].shape != images.shape[:1]):
        raise broken(f"is not what the parse step writes ({npz_path})")
    found = {"n": images.shape[0], "d": images.shape[1],
             "n_train": int(np.count_nonzero(arrays["split"] == SPLITS.index("train"))),
             "label_counts": np.bincount(arrays["labels"], minlength=DIGITS).tolist()}
    wrong = [f"{key} {record.get(key)!r} in the JSON, {value} in the arrays" for key, value in found.items()
             if record.get(key) != value]
    if wrong:
        raise broken(f"is inconsistent ({'; '.join(wrong)})")
    return LabelledImages(**arrays)


def _processed_paths(name: str, processed_dir: Path) -> tuple[Path, Path]:
    return processed_dir / f"{name}.npz", processed_dir / f"{name}.json"


def check_expect(expect, dataset: RealDataset) -> dict | None:
    if expect is None:
        return None
    if not isinstance(expect, dict):
        raise DatasetError(f"expect for {dataset.name} must be a mapping of statistics, got {expect!r}")
    known = dataset.expect_keys
    unknown = sorted(str(key) for key in expect if key not in known)
    if unknown:
        raise DatasetError(f"unknown key(s) in expect for {dataset.name}: {', '.join(unknown)};"
                           f" known: {', '.join(known)}")
    checked = {}
    for key in known:  # a fixed order, for the message and the JSON
        if key not in expect:
            continue
        value = expect[key]
        if key == "git_blob":
            if dataset.name != "pos":
                raise DatasetError(f"expect key git_blob applies to pos only, got it for {dataset.name}")
            if not isinstance(value, str) or not re.fullmatch(r"[0-9a-fA-F]{40}", value):
                raise DatasetError(f"expect git_blob for {dataset.name} must be 40 hex digits, got {value!r}")
            value = value.lower()
        elif key in _PER_DIGIT:
            if (not isinstance(value, (list, tuple)) or len(value) != DIGITS
                    or not all(_is_count(count) for count in value)):
                raise DatasetError(f"expect {key} for {dataset.name} must be a list of {DIGITS} integers >= 0 (one"
                                   f" per digit 0..9), got {value!r}")
            value = [int(count) for count in value]
        elif key in _WRITTEN_PRECISION:
            if (isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value)
                    or not 0 <= value <= 1):
                raise DatasetError(f"expect {key} for {dataset.name} must be a number in [0, 1], got {value!r}")
            value = float(value)
        elif not _is_count(value):
            raise DatasetError(f"expect {key} for {dataset.name} must be an integer >= 0, got {value!r}")
        checked[key] = value
    return checked


# Image statistics that are a count per digit, and those compared to the precision written.
_PER_DIGIT = ("label_counts", "train_label_counts")
_WRITTEN_PRECISION = ("train_pixel_mean",)


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def written_tolerance(value: float) -> float:
    """Half a unit in the last decimal of ``value`` as written (its shortest repr): 0.1307 gives
    0.00005, so a statistic quoted to four decimals is checked to four decimals."""
    exponent = decimal.Decimal(repr(float(value))).as_tuple().exponent
    return 0.5 * 10.0 ** exponent


def _agrees(key: str, found, expected) -> bool:
    if key in _WRITTEN_PRECISION:
        return abs(found - expected) <= written_tolerance(expected)
    return found == expected


def _expected_text(key: str, expected) -> str:
    if key in _WRITTEN_PRECISION:
        return f"{expected!r} (+- {written_tolerance(expected):g})"
    return str(expected)


def verify_statistics(dataset: RealDataset, statistics: dict, expect: dict, raw_path) -> None:
    mismatched = [key for key in expect if not _agrees(key, statistics[key], expect[key])]
    if not mismatched:
        log.info("%s: statistics as expected (%s)", dataset.name,
                 ", ".join(f"{key} = {value}" for key, value in expect.items()))
        return
    lines = ", ".join(
        f"{key} expected {_expected_text(key, expect[key])} found {statistics[key]}"
        + (" (MISMATCH)" if key in mismatched else "")
        for key in expect
    )
    found = ", ".join(f"{key}: {statistics[key]}" for key in expect)
    raise DatasetError(
        f"{dataset.name}: the statistics of {raw_path} (sha256 {statistics['sha256']}) differ from the expected"
        f" ones: {lines}. If this file is the one you want, set datasets.{dataset.name}.expect to the found values"
        f" ({{{found}}}) (or null to skip the check) in your config."
    )
