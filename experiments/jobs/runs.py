"""The experiment runs: the trials of one cell or of one setting's cells (or a shard of their
trials), the merge of a split job's shards, and an experiment's summary. A job is told its cells,
its shards' trials and its cache by the rule's params (experiments/planning/trial_jobs.py,
experiments/planning/resources.py); it parses no path."""
from __future__ import annotations

import pandas as pd

from ..engine.atomic import write_csv_atomically
from ..engine.cell_files import merge_shards, read_cell_file, write_cell_file
from ..engine.config import load_experiments
from ..engine.joblog import open_log
from ..engine.summary import summarise
from ..engine.trials import run_cells
from ..planning.resources import MIB
from ..planning.shards import write_layout


def run_cells_job(*, config, experiment, cells, outputs, log, mem_mb=None, cache_bytes=None, shards=(),
                  shard_trials=(), layout=None):
    """The trials of ``cells`` (their ids, in the order of ``outputs``: one cell, or every budget
    value of a setting with ``share_rho``), each cell's file written once every trial is done; for
    a split job merged from its ``shards`` instead (``shard_trials``: each shard file's cell, first
    and last trial). ``cache_bytes`` bounds the shared-sample cache (None: the engine's default),
    sized from ``mem_mb``, the job's granted request; ``layout``: where to record the shards the
    cells were made from, for later runs."""
    spec = load_experiments(config)[experiment]
    chosen = [spec.cell(cell) for cell in cells]
    fingerprints = [spec.fingerprint(cell) for cell in chosen]
    paths = _cell_paths(cells, outputs, "outputs")
    shards = [shards] if isinstance(shards, str) else list(shards)
    if len(shards) != len(shard_trials):
        raise ValueError(f"{len(shards)} shard files but {len(shard_trials)} shard trial ranges")
    with open_log(log) as stream:
        if not shards:
            _log_cache(mem_mb, cache_bytes, stream)
            frames = run_cells(spec, chosen, seed=int(config["seed"]), log=stream, cache_bytes=cache_bytes)
            for cell, frame in frames.items():
                write_cell_file(frame, paths[cell])
            ranges = [range(spec.trials)]
        else:
            ranges = merge_shards(paths, [(path, cell, range(int(first), int(last) + 1))
                                          for path, (cell, first, last) in zip(shards, shard_trials)],
                                  experiment=spec.id, trials=spec.trials,
                                  mechanisms=[mechanism.name for mechanism in spec.mechanisms], log=stream)
    if layout is not None:
        write_layout(layout, fingerprints, ranges)


def run_shard_job(*, config, experiment, cells, first, last, outputs, log, mem_mb=None, cache_bytes=None):
    """Trials ``first``..``last`` of a cell job or a setting job: the rows of each of ``cells``
    (ids, in the order of ``outputs``) in its shard file, as the cell file holds them."""
    spec = load_experiments(config)[experiment]
    paths = _cell_paths(cells, outputs, "shard outputs")
    with open_log(log) as stream:
        _log_cache(mem_mb, cache_bytes, stream)
        frames = run_cells(spec, [spec.cell(cell) for cell in cells], seed=int(config["seed"]), log=stream,
                           cache_bytes=cache_bytes, trials=range(int(first), int(last) + 1))
    for cell, frame in frames.items():
        write_cell_file(frame, paths[cell])


def summarise_job(*, cells, grid, output, log, trials, mechanisms, empirical=None):
    """An experiment's summary from its cell files, each checked (experiments/engine/cell_files.py: its
    checksum, and ``trials`` rows per mechanism of ``mechanisms``); ``empirical``: its
    empirical-mean mechanism (experiments/engine/summary.py)."""
    frame = pd.concat([read_cell_file(path, trials=range(int(trials)), mechanisms=mechanisms) for path in cells],
                      ignore_index=True)
    summary = summarise(frame, grid, empirical=empirical)
    write_csv_atomically(summary, output)
    with open_log(log) as stream:
        print(f"{len(cells)} cells, {len(frame)} trial rows -> {len(summary)} summary rows", file=stream)


def _cell_paths(cells, outputs, what) -> dict[str, str]:
    """cell id -> its file: ``outputs`` are in the order of ``cells``."""
    outputs = [outputs] if isinstance(outputs, str) else list(outputs)
    if len(outputs) != len(cells):
        raise ValueError(f"{len(outputs)} {what} for the {len(cells)} cells {list(cells)}")
    return dict(zip(cells, outputs))


def _log_cache(mem_mb, cache_bytes, stream) -> None:
    """The job's first log line: the request it runs under and the cache that request leaves."""
    if cache_bytes is not None:
        print(f"mem_mb={mem_mb}: shared-sample cache up to {cache_bytes / MIB:.0f} MiB", file=stream)
