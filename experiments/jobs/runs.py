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
from ..planning.shards import merge_shard_files, parse_range, write_layout


def _cache_bytes(spec, cells, mem_mb, log):
    """The shared-sample cache of a job granted ``mem_mb`` MiB (None: the engine's default)."""
    if mem_mb is None:
        return None
    cache = cache_bytes(spec, cells, mem_mb)
    print(f"mem_mb={mem_mb}: shared-sample cache up to {cache / MIB:.0f} MiB "
          f"(estimated peak {peak_mb(spec, cells):.0f} MiB)", file=log)
    return cache


def _cell_paths(spec, cells, outputs, what) -> dict[str, str]:
    """cell id -> its file among ``outputs`` (named <cell id><suffix>, or <cell id>/<shard><suffix>)."""
    def cell_id(path):
        parts = path.split("/")
        return parts[-2] if parts[-1].startswith("trials=") else parts[-1].removesuffix(spec.cell_suffix)

    paths = {cell_id(path): path for path in outputs}
    if sorted(paths) != sorted(cell.id for cell in cells):
        raise ValueError(f"{what} {sorted(paths)} are not the cells {[c.id for c in cells]} of {spec.id}")
    return paths


def _merge_or_run(spec, cells, *, config, outputs, shards, layout, log, mem_mb):
    """The cells' files: merged from their ``shards`` (experiments/planning/shards.py), or computed here
    when the job is not split; then the layout it was made from, for later runs (``layout``)."""
    paths = _cell_paths(spec, cells, outputs, "outputs")
    shards = [shards] if isinstance(shards, str) else list(shards)
    with open_log(log) as stream:
        if shards:
            by_cell = {cell.id: [] for cell in cells}
            for path in sorted(shards, key=lambda path: _shard_range(spec, path).start):
                by_cell[path.split("/")[-2]].append(path)
            # every cell's shards checked (their trials, checksums and rows) before any cell file is written
            names = [mechanism.name for mechanism in spec.mechanisms]
            for cell in cells:
                ranges = [_shard_range(spec, path) for path in by_cell[cell.id]]
                if [t for r in ranges for t in r] != list(range(spec.trials)):
                    raise ValueError(f"{spec.id} {cell.id}: shards {[str(r) for r in ranges]} do not cover "
                                     f"its {spec.trials} trials once")
                for path, trials in zip(by_cell[cell.id], ranges):
                    read_cell_file(path, trials=trials, mechanisms=names)
            for cell in cells:
                rows = merge_shard_files(by_cell[cell.id], paths[cell.id])
                record_checksum(paths[cell.id], rows=rows)
                print(f"{cell.id}: merged {len(by_cell[cell.id])} shards, {rows} rows", file=stream)
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


def _shard_range(spec, path: str) -> range:
    name = path.rsplit("/", 1)[-1].removesuffix(spec.cell_suffix)
    return parse_range(name.removeprefix("trials="))


def run_cell_job(*, config, experiment, cell, output, log, mem_mb=None, shards=(), layout=None):
    """One cell: merged from its ``shards``' files if it was split, else run here; ``mem_mb`` (the
    job's memory request) bounds the shared-sample cache; ``layout``: where to record the shards."""
    spec = load_experiments(config)[experiment]
    _merge_or_run(spec, [spec.cell(cell)], config=config, outputs=[output], shards=shards, layout=layout,
                  log=log, mem_mb=mem_mb)


def run_setting_job(*, config, experiment, setting, outputs, log, mem_mb=None, shards=(), layout=None):
    """Every rho of one setting in one job (``share_rho``): ``outputs`` are the cells' files,
    written only once every trial is done (or merged from the setting's ``shards``). ``mem_mb``
    bounds the shared-sample cache."""
    spec = load_experiments(config)[experiment]
    _merge_or_run(spec, spec.settings()[setting], config=config, outputs=outputs, shards=shards, layout=layout,
                  log=log, mem_mb=mem_mb)


def run_shard_job(*, config, experiment, first, last, outputs, log, cell=None, setting=None, mem_mb=None):
    """Trials ``first``..``last`` of a ``cell`` job or a ``setting`` job: each cell's rows in its
    shard file (``outputs``), as the cell file holds them."""
    spec = load_experiments(config)[experiment]
    chosen = [spec.cell(cell)] if cell is not None else spec.settings()[setting]
    paths = _cell_paths(spec, chosen, outputs, "shard outputs")
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
