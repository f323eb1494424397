"""What the Snakemake scripts call: each job reads its inputs, computes, writes atomically."""
from __future__ import annotations

import contextlib
import json
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from datasets.real import DatasetError, process

from .availability import fetch_status, read_status, write_status
from .config import load_experiments
from .joblog import open_log
from .resources import MIB, cache_bytes, peak_mb
from .summary import summarise, write_csv_atomically
from .trials import run_cell, run_setting, stable_id


def _cache_bytes(spec, cells, mem_mb, log):
    """The shared-sample cache of a job granted ``mem_mb`` MiB (None: the engine's default)."""
    if mem_mb is None:
        return None
    cache = cache_bytes(spec, cells, mem_mb)
    print(f"mem_mb={mem_mb}: shared-sample cache up to {cache / MIB:.0f} MiB "
          f"(estimated peak {peak_mb(spec, cells):.0f} MiB)", file=log)
    return cache


def run_cell_job(*, config, experiment, cell, output, log, mem_mb=None):
    """One cell; ``mem_mb`` (the job's memory request) bounds the shared-sample cache."""
    spec = load_experiments(config)[experiment]
    with open_log(log) as stream:
        cache = _cache_bytes(spec, [spec.cell(cell)], mem_mb, stream)
        frame = run_cell(spec, spec.cell(cell), seed=int(config["seed"]), log=stream, cache_bytes=cache)
    write_csv_atomically(frame, output)


def run_setting_job(*, config, experiment, setting, outputs, log, mem_mb=None):
    """Every rho of one setting in one job (``share_rho``): ``outputs`` are the cells' files,
    written only once every trial is done. ``mem_mb`` bounds the shared-sample cache."""
    spec = load_experiments(config)[experiment]
    cells = spec.settings()[setting]
    paths = {path.rsplit("/", 1)[-1].removesuffix(spec.cell_suffix): path for path in outputs}
    if sorted(paths) != sorted(cell.id for cell in cells):
        raise ValueError(f"outputs {sorted(paths)} are not the cells {[c.id for c in cells]} of setting {setting!r}")
    with open_log(log) as stream:
        cache = _cache_bytes(spec, cells, mem_mb, stream)
        frames = run_setting(spec, cells, seed=int(config["seed"]), log=stream, cache_bytes=cache)
    for cell_id, frame in frames.items():
        write_csv_atomically(frame, paths[cell_id])


def summarise_job(*, cells, grid, output, log, empirical=None):
    """An experiment's summary; ``empirical``: its empirical-mean mechanism (experiments/summary.py)."""
    frame = pd.concat([pd.read_csv(path) for path in cells], ignore_index=True)
    summary = summarise(frame, grid, empirical=empirical)
    write_csv_atomically(summary, output)
    with open_log(log) as stream:
        print(f"{len(cells)} cells, {len(frame)} trial rows -> {len(summary)} summary rows", file=stream)


def fetch_dataset_job(*, dataset, settings, output, log):
    """The fetch checkpoint: obtains the raw file from the first of the dataset's sources that
    gives the expected data (``settings``: availability.fetch_settings), or records why each
    failed (the workflow then builds everything else and names what is missing)."""
    with open_log(log) as stream, _logging_to(stream):
        status = fetch_status(dataset, settings=settings)
        if status["available"]:
            print(f"{dataset}: raw file {status['raw']} from {status['source']} (sha256 {status['sha256']})",
                  file=stream)
        else:
            print(status["message"], file=stream)
            # the console too (sys.stderr is the log: the script sent it there)
            print(f"WARNING: {status['message']}", file=sys.__stderr__)
    write_status(status, output)


def parse_dataset_job(*, dataset, status, min_items, expect, npz, stats, log):
    """Parses and verifies the raw file the fetch checkpoint recorded in ``status`` (in its
    source's format) into ``npz`` and its statistics ``stats`` (written together by
    datasets.real.process, nothing on a mismatch). A dataset problem, or a status saying the
    dataset could not be obtained (when a target that needs it was asked for by name), ends
    the job with its one message instead of a traceback."""
    processed_dir = Path(npz).parent
    if Path(stats).parent != processed_dir or Path(npz).name != f"{dataset}.npz":
        raise ValueError(f"outputs {npz}, {stats} are not {processed_dir}/{dataset}.npz and .json")
    found = read_status(status)
    options = {"min_items": min_items} if min_items is not None else {}
    with open_log(log) as stream, _logging_to(stream):
        try:
            if not found["available"]:
                raise DatasetError(found["message"])
            statistics = process(dataset, found["raw"], format=found["source"]["format"], processed_dir=processed_dir,
                                 expect=expect, **options)
        except DatasetError as error:
            print(error, file=stream)
            print(f"Error in dataset {dataset}: {error}", file=sys.__stderr__)  # the console, as above
            raise SystemExit(1) from None
        print(json.dumps(statistics, indent=2), file=stream)


@contextlib.contextmanager
def _logging_to(stream):
    """The datasets package's progress messages go to the job's log."""
    logger = logging.getLogger("datasets")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def audit_job(*, name, runs, budget, seed, output, log):
    """One privacy audit and its positive control (DESIGN.md 5.8): one row of
    results/audit/audit.csv. The randomness is keyed by the audit's name under the config seed."""
    from .audits import run_audit

    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(stable_id("audit"), stable_id(name))))
    outcome = run_audit(name, rng=rng, runs=runs, budget=budget)
    row = outcome.as_dict()
    write_csv_atomically(pd.DataFrame([row]), output)
    with open_log(log) as stream:
        print(json.dumps(row, indent=2, default=str), file=stream)


def audit_table_job(*, rows, output, log):
    """All audits in one table, in config order."""
    frame = pd.concat([pd.read_csv(path) for path in rows], ignore_index=True)
    write_csv_atomically(frame, output)
    with open_log(log) as stream:
        flagged = frame[frame["violation"].astype(bool)]["name"].tolist()
        powerless = frame[~frame["control_violation"].astype(bool)]["name"].tolist()
        print(f"{len(frame)} audits; violations: {flagged or 'none'}; controls not flagged: {powerless or 'none'}",
              file=stream)
