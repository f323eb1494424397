"""Compares the outputs of two runs of the workflow (e.g. the smoke config before and after a
change to the code or the configs, docs/configuration.md): every file under results/, figures/
and datasets/processed/ of the two working directories, byte for byte, apart from what a run
measures rather than computes:

- a cell file's ``runtime_s`` column, an audit file's ``seconds`` column and a library
  comparison's ``seconds_per_call`` column (compressed cells are read decompressed);
- a cell file's checksum (``<cell>.sha256``, experiments/engine/cell_files.py), whose digest follows the
  run times: each must match its own cell file, and the two must count the same rows;
- the benchmark files (``*/benchmarks/*.tsv``: wall times and memory) and the run-time table drawn
  from them (``results/run_times.csv``), whose presence alone is compared;
- how a run split its cells into trial shards (``results/<experiment>/shards/``: the layouts its
  jobs recorded, and the shards' benchmark files ``*/benchmarks/shards/``), which is not compared:
  the cells are the same bytes however they were split (docs/configuration.md#trial-shards);
- the report's "Run times", "Seconds per call" (of the library comparison) and "Provenance"
  sections and the measured columns of its tables (the audits' ``seconds``, the libraries'
  ``seconds_per_call``; results/report.html).

Prints one line per difference and exits 1 if there is any, else 0:

    python scripts/compare_runs.py BEFORE_DIR AFTER_DIR
"""
from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import re
import sys
from pathlib import Path

TREES = ("results", "figures", "datasets/processed")
# the report's sections that a run measures: from these headings to the next one (or the end)
MEASURED_REPORT_SECTIONS = ("runtimes", "libraries-seconds", "provenance")
# how the run split its jobs: shard layouts and shard files (results/<experiment>/shards/), and
# the shards' benchmark files
SHARD_BOOKKEEPING = re.compile(r"results/[^/]+/(shards|benchmarks/shards)/")
# columns that hold measured times, in the result files and the report's tables
MEASURED_COLUMNS = ("runtime_s", "seconds", "seconds_per_call")
RUN_TIMES = "results/run_times.csv"  # the report's run-time table, from the benchmark files
CHECKSUM_SUFFIX = ".sha256"  # a cell file's checksum beside it (experiments/engine/cell_files.py)


def output_files(workdir: Path) -> set[str]:
    """The files of the compared trees, relative to ``workdir``, without the shard bookkeeping."""
    names = {path.relative_to(workdir).as_posix() for tree in TREES for path in (workdir / tree).rglob("*")
             if path.is_file()}
    return {name for name in names if not SHARD_BOOKKEEPING.match(name)}


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.name.endswith(".gz") else data).decode()


def table_without(path: Path, column: str) -> list[list[str]]:
    """The rows of a CSV file (gzipped or not) without ``column``."""
    rows = list(csv.reader(io.StringIO(_text(path))))
    if rows and column in rows[0]:
        index = rows[0].index(column)
        rows = [row[:index] + row[index + 1:] for row in rows]
    return rows


def _table_without_measured_columns(match: re.Match) -> str:
    """An HTML table of the report with the cells of its measured columns emptied: as pandas' Styler
    writes it (a column's cells by its class) or as one card per row (each cell's ``data-label``
    names its column)."""
    table = match.group(0)
    names = "|".join(MEASURED_COLUMNS)
    for column in re.findall(rf'<th [^>]*class="col_heading level0 (col\d+)"[^>]*>(?:{names})</th>', table):
        table = re.sub(rf'(<td [^>]*class="data row\d+ {column}\b[^>]*>)[^<]*(</td>)', r"\1\2", table)
    return re.sub(rf'(<td [^>]*data-label="(?:{names})"[^>]*>)[^<]*(</td>)', r"\1\2", table)


def report_without_measurements(path: Path) -> str:
    """The report page without its run-time and provenance sections (each from its <h2> to the
    next) and without the values of its tables' measured columns."""
    text = path.read_text()
    for section in MEASURED_REPORT_SECTIONS:
        text = re.sub(rf'<h2 id="{section}">.*?(?=<h2 |</body>)', f"<!-- {section} -->", text, flags=re.S)
    return re.sub(r"<table\b.*?</table>", _table_without_measured_columns, text, flags=re.S)


def measured_column(name: str) -> str | None:
    """The column of a result file that holds a measured time, if any."""
    if "/cells/" in name:
        return MEASURED_COLUMNS[0]
    if name.startswith("results/audit/") and name.endswith(".csv"):
        return MEASURED_COLUMNS[1]
    if name.startswith("results/libraries/") and name.endswith(".csv"):
        return MEASURED_COLUMNS[2]
    return None


def checksum_holds(path: Path) -> bool:
    """Whether a ``<file>.sha256`` gives the SHA-256 of the file beside it."""
    target = path.with_name(path.name.removesuffix(CHECKSUM_SUFFIX))
    recorded = path.read_text().split()
    return target.is_file() and bool(recorded) and recorded[0] == hashlib.sha256(target.read_bytes()).hexdigest()


def same_file(name: str, first: Path, second: Path) -> bool:
    if "/benchmarks/" in name or name == RUN_TIMES:
        return True
    if name.endswith(CHECKSUM_SUFFIX):
        return (checksum_holds(first) and checksum_holds(second)
                and first.read_text().split()[1:] == second.read_text().split()[1:])
    if name == "results/report.html":
        return report_without_measurements(first) == report_without_measurements(second)
    column = measured_column(name)
    if column is not None:
        return table_without(first, column) == table_without(second, column)
    return first.read_bytes() == second.read_bytes()


def differences(first: Path, second: Path) -> list[str]:
    """One line per file that is in one run only or differs between the two."""
    first, second = Path(first), Path(second)
    files_first, files_second = output_files(first), output_files(second)
    lines = [f"only in {first}: {name}" for name in sorted(files_first - files_second)]
    lines += [f"only in {second}: {name}" for name in sorted(files_second - files_first)]
    lines += [f"differs: {name}" for name in sorted(files_first & files_second)
              if not same_file(name, first / name, second / name)]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path, help="working directory of one run")
    parser.add_argument("second", type=Path, help="working directory of the other run")
    arguments = parser.parse_args(argv)
    for workdir in (arguments.first, arguments.second):
        if not (workdir / "results").is_dir():
            parser.error(f"{workdir} has no results/ folder: not the working directory of a run")
    lines = differences(arguments.first, arguments.second)
    for line in lines:
        print(line)
    compared = len(output_files(arguments.first) | output_files(arguments.second))
    print(f"{compared} files compared: " + (f"{len(lines)} difference(s)" if lines else "identical apart from "
                                             "run times and provenance"), file=sys.stderr)
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
