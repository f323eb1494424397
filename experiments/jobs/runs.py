"""The experiment runs: one cell or one setting of trials (or a shard of its trials, and their
merge), and an experiment's summary."""
from __future__ import annotations

import pandas as pd

from ..engine.cell_files import forget_checksum, read_cell_file, record_checksum, write_cell_file
from ..engine.config import load_experiments
from ..engine.joblog import open_log
from ..engine.summary import summarise, write_csv_atomically
from ..engine.trials import run_setting
from ..planning.resources import MIB, cache_bytes, peak_mb
from ..planning.shards import merge_shard_files, range_name, write_layout


def _cache_bytes(spec, cells, mem_mb, log):
    """The shared-sample cache of a job granted ``mem_mb`` MiB (None: the engine's default)."""
    if mem_mb is None:
        return None
    cache = cache_bytes(spec, cells, mem_mb)
    print(f"mem_mb={mem_mb}: shared-sample cache up to {cache / MIB:.0f} MiB "
          f"(estimated peak {peak_mb(spec, cells):.0f} MiB)", file=log)
    return cache


def _cell_paths(cells, outputs, what) -> dict[str, str]:
    """cell id -> its file: ``outputs`` are in the order of ``cells`` (the rule's params say which
    cells, experiments/planning/trial_jobs.py; no path is parsed)."""
    outputs = [outputs] if isinstance(outputs, str) else list(outputs)
    if len(outputs) != len(cells):
        raise ValueError(f"{len(outputs)} {what} for the {len(cells)} cells {[cell.id for cell in cells]}")
    return {cell.id: path for cell, path in zip(cells, outputs)}


def _merge_or_run(spec, cells, *, config, outputs, shards, shard_trials, layout, log, mem_mb):
    """The cells' files: merged from their ``shards`` (experiments/planning/shards.py; ``shard_trials``
    gives each shard's cell and first and last trial), or computed here when the job is not split;
    then the layout it was made from, for later runs (``layout``)."""
    paths = _cell_paths(cells, outputs, "outputs")
    shards = [shards] if isinstance(shards, str) else list(shards)
    if len(shards) != len(shard_trials):
        raise ValueError(f"{len(shards)} shard files but {len(shard_trials)} shard trial ranges")
    with open_log(log) as stream:
        if shards:
            by_cell = {cell.id: [] for cell in cells}
            for path, (cell_id, first, last) in sorted(zip(shards, shard_trials), key=lambda shard: shard[1][1]):
                by_cell[cell_id].append((path, range(int(first), int(last) + 1)))
            # every cell's shards checked (their trials, checksums and rows) before any cell file is written
            names = [mechanism.name for mechanism in spec.mechanisms]
            for cell in cells:
                ranges = [trials for _, trials in by_cell[cell.id]]
                if [t for r in ranges for t in r] != list(range(spec.trials)):
                    raise ValueError(f"{spec.id} {cell.id}: shards {[range_name(r) for r in ranges]} do not cover "
                                     f"its {spec.trials} trials once")
                for path, trials in by_cell[cell.id]:
                    read_cell_file(path, trials=trials, mechanisms=names)
            for cell in cells:
                files = [path for path, _ in by_cell[cell.id]]
                rows = merge_shard_files(files, paths[cell.id])
                record_checksum(paths[cell.id], rows=rows)
                print(f"{cell.id}: merged {len(files)} shards, {rows} rows", file=stream)
            for path in shards:  # the merged shards are temporary: Snakemake removes them, this their checksums
                forget_checksum(path)
        else:
            cache = _cache_bytes(spec, cells, mem_mb, stream)
            frames = run_setting(spec, cells, seed=int(config["seed"]), log=stream, cache_bytes=cache)
            for cell_id, frame in frames.items():
                write_cell_file(frame, paths[cell_id])
            ranges = [range(spec.trials)]
    if layout is not None:
        write_layout(layout, [spec.fingerprint(cell) for cell in cells], ranges)


def run_cell_job(*, config, experiment, cell, output, log, mem_mb=None, shards=(), shard_trials=(), layout=None):
    """One cell: merged from its ``shards``' files if it was split (``shard_trials``: each one's
    cell, first and last trial), else run here; ``mem_mb`` (the job's memory request) bounds the
    shared-sample cache; ``layout``: where to record the shards."""
    spec = load_experiments(config)[experiment]
    _merge_or_run(spec, [spec.cell(cell)], config=config, outputs=[output], shards=shards, shard_trials=shard_trials,
                  layout=layout, log=log, mem_mb=mem_mb)


def run_setting_job(*, config, experiment, cells, outputs, log, mem_mb=None, shards=(), shard_trials=(),
                    layout=None):
    """Every rho of one setting in one job (``share_rho``): ``outputs`` are the files of ``cells``
    (their ids, in the same order), written only once every trial is done (or merged from the
    setting's ``shards``). ``mem_mb`` bounds the shared-sample cache."""
    spec = load_experiments(config)[experiment]
    _merge_or_run(spec, [spec.cell(cell) for cell in cells], config=config, outputs=outputs, shards=shards,
                  shard_trials=shard_trials, layout=layout, log=log, mem_mb=mem_mb)


def run_shard_job(*, config, experiment, cells, first, last, outputs, log, mem_mb=None):
    """Trials ``first``..``last`` of a cell job or a setting job: the rows of each of ``cells``
    (ids, in the order of ``outputs``) in its shard file, as the cell file holds them."""
    spec = load_experiments(config)[experiment]
    chosen = [spec.cell(cell) for cell in cells]
    paths = _cell_paths(chosen, outputs, "shard outputs")
    trials = range(int(first), int(last) + 1)
    with open_log(log) as stream:
        cache = _cache_bytes(spec, chosen, mem_mb, stream)
        frames = run_setting(spec, chosen, seed=int(config["seed"]), log=stream, cache_bytes=cache, trials=trials)
    for cell_id, frame in frames.items():
        write_cell_file(frame, paths[cell_id])


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
