"""Cell and shard files (docs/design.md §9): written with the SHA-256 of their bytes beside them,
read only after checking the bytes against it and the rows against what the config promises, so
that a cut or edited file stops the run naming itself instead of becoming a summary."""
from __future__ import annotations

import gzip
import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .atomic import write_atomically, write_csv_atomically, write_text_atomically

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


# --- a job's shards merged into its cell files (experiments/planning/shards.py splits a job) ----

def range_name(trials: range) -> str:
    """``<first>-<last>`` (inclusive), as a shard's file path (experiments/planning/paths.py) and the
    logs name its trials."""
    return f"{trials.start}-{trials.stop - 1}"


def merge_shards(outputs: dict[str, str], shards: Sequence[tuple[str, str, range]], *, experiment: str,
                 trials: int, mechanisms: Sequence[str], log=None) -> list[range]:
    """Each cell's file (``outputs``: cell id -> path) from its shard files (``shards``: (path, cell
    id, trials) in any order). Every shard is checked (its trials cover the cell's ``trials`` once,
    in the same ranges for every cell of the job, its checksum, its rows) before any cell file is
    written; the merged shards' checksums are then forgotten (Snakemake removes the temporary
    shards). Returns the job's layout: the trial ranges its shards share."""
    by_cell = {cell: sorted((shard for shard in shards if shard[1] == cell), key=lambda shard: shard[2].start)
               for cell in outputs}
    layout = None
    for cell, cell_shards in by_cell.items():
        ranges = [shard_trials for _, _, shard_trials in cell_shards]
        if [t for r in ranges for t in r] != list(range(trials)):
            raise ValueError(f"{experiment} {cell}: shards {[range_name(r) for r in ranges]} do not cover "
                             f"its {trials} trials once")
        if layout is not None and ranges != layout:
            raise ValueError(f"{experiment} {cell}: shards {[range_name(r) for r in ranges]} differ from the "
                             f"job's other cells ({[range_name(r) for r in layout]})")
        layout = ranges
        for path, _, shard_trials in cell_shards:
            read_cell_file(path, trials=shard_trials, mechanisms=mechanisms)
    for cell, cell_shards in by_cell.items():
        rows = merge_shard_files([path for path, _, _ in cell_shards], outputs[cell])
        record_checksum(outputs[cell], rows=rows)
        if log is not None:
            print(f"{cell}: merged {len(cell_shards)} shards, {rows} rows", file=log)
    for path, _, _ in shards:
        forget_checksum(path)
    return layout


def _read_text(path: Path) -> str:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", newline="") as stream:
            return stream.read()
    return path.read_text(encoding="utf-8")


def merge_shard_files(paths: Sequence[str | Path], output: str | Path) -> int:
    """One cell file from its shards' files, given in trial order: the first header, then every
    shard's rows. Returns the number of rows. Raises ValueError naming a shard whose header
    differs (a shard of another code or config)."""
    if not paths:
        raise ValueError(f"{output}: no shard files to merge")
    header, rows = None, []
    for path in map(Path, paths):
        text = _read_text(path)
        first_line, _, body = text.partition("\n")
        if header is None:
            header = first_line
        elif first_line != header:
            raise ValueError(f"{path}: its columns ({first_line}) are not those of the first shard ({header})")
        rows.append(body)
    data = (header + "\n" + "".join(rows)).encode("utf-8")
    write_atomically(output, lambda stream: _write_flushed(stream, data))
    return data.count(b"\n") - 1


def _write_flushed(stream, data: bytes) -> None:
    # flushed as a cell file's writer flushes (atomic.write_csv_atomically): a gzip stream then ends
    # with the same sync point, so a merged .csv.gz has the bytes of one written whole
    stream.write(data)
    stream.flush()
