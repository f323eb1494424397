"""Cell and shard files (docs/design.md §9): written with the SHA-256 of their bytes beside them,
read only after checking the bytes against it and the rows against what the config promises, so
that a cut or edited file stops the run naming itself instead of becoming a summary."""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .atomic import write_text_atomically
from .summary import write_csv_atomically

CHECKSUM_SUFFIX = ".sha256"


class CellFileError(ValueError):
    """A cell or shard file that does not hold what its job wrote or what its config promises."""


def checksum_path(path) -> Path:
    """Where the checksum of ``path`` is kept: beside it, ``<file>.sha256``."""
    return Path(f"{path}{CHECKSUM_SUFFIX}")


def write_cell_file(frame: pd.DataFrame, path) -> None:
    """``frame`` as a cell or shard file (atomically), then its checksum beside it."""
    write_csv_atomically(frame, path)
    record_checksum(path, rows=len(frame))


def record_checksum(path, *, rows: int) -> None:
    """Write ``<path>.sha256``: the SHA-256 of the file's bytes and its number of rows."""
    write_text_atomically(f"{_digest(path)} {int(rows)}\n", checksum_path(path))


def read_cell_file(path, *, trials: range | None = None, mechanisms: Sequence[str] | None = None) -> pd.DataFrame:
    """The rows of a cell or shard file, checked: its bytes against the checksum recorded when it was
    written (a file written before checksums existed has none: its rows are still checked), then,
    given ``trials`` and ``mechanisms``, one row per trial and mechanism, each once, and every error
    finite (or, where the source has no truth to measure against, every value of that column NaN),
    except in the rows of a refusal (a ``refused`` message, no errors).
    Raises :class:`CellFileError` naming the file, what is wrong and how to recompute it."""
    path = Path(path)
    recorded = checksum_path(path)
    if recorded.exists():
        expected = recorded.read_text().split()
        if not expected or expected[0] != _digest(path):
            _fail(path, f"its bytes do not match the SHA-256 recorded when it was written ({recorded}): it was "
                        "changed or cut afterwards")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, EOFError, OSError) as error:
        _fail(path, f"it cannot be read as a table ({type(error).__name__}: {error})")
    if trials is not None and mechanisms is not None:
        _check_rows(path, frame, trials, mechanisms)
    return frame


def forget_checksum(path) -> None:
    """Remove the checksum of a file that is no longer needed (a merged shard)."""
    checksum_path(path).unlink(missing_ok=True)


def _check_rows(path: Path, frame: pd.DataFrame, trials: range, mechanisms: Sequence[str]) -> None:
    missing = [column for column in ("trial", "mechanism", "error") if column not in frame.columns]
    if missing:
        _fail(path, f"it has no column {missing[0]!r}")
    expected = len(trials) * len(mechanisms)
    if len(frame) != expected:
        _fail(path, f"it holds {len(frame)} rows where its {len(trials)} trials of {len(mechanisms)} mechanisms "
                    f"make {expected}")
    keys = pd.MultiIndex.from_arrays([frame["trial"].to_numpy(), frame["mechanism"].astype(str).to_numpy()])
    wanted = pd.MultiIndex.from_product([list(trials), [str(name) for name in mechanisms]])
    if keys.has_duplicates or not keys.sort_values().equals(wanted.sort_values()):
        extra, absent = keys.difference(wanted), wanted.difference(keys)
        if len(absent):
            where = f"trial {int(absent[0][0])} of mechanism {absent[0][1]!r} is missing"
        elif len(extra):
            where = f"trial {extra[0][0]} of mechanism {extra[0][1]!r} does not belong here"
        else:
            where = "a trial of a mechanism repeats"
        _fail(path, f"its rows are not each trial of {trials.start}-{trials.stop - 1} once per mechanism: {where}")
    # a refusal (experiments/engine/trials.py) released nothing: its errors are NaN
    released = frame["refused"].isna().to_numpy() if "refused" in frame.columns else np.ones(len(frame), bool)
    for column in (name for name in frame.columns if name.startswith("error")):
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        if np.all(np.isnan(values[released])):
            continue  # an error the source has no truth for (a real dataset's error against its true mean)
        bad = np.flatnonzero(~np.isfinite(values) & released)
        if bad.size:
            row = frame.iloc[bad[0]]
            _fail(path, f"{bad.size} value(s) of {column!r} are not finite numbers, the first at trial "
                        f"{row['trial']}, mechanism {row['mechanism']!r}: {frame[column].iloc[bad[0]]!r}")


def _fail(path: Path, problem: str):
    raise CellFileError(f"{path}: {problem}. Delete it (and {checksum_path(path).name} if there) and run snakemake "
                        "again: the job that writes it reruns")


def _digest(path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()
