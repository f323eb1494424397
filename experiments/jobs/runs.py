"""The experiment runs: one cell or one setting of trials, and an experiment's summary."""
from __future__ import annotations

import pandas as pd

from ..config import load_experiments
from ..joblog import open_log
from ..resources import MIB, cache_bytes, peak_mb
from ..summary import summarise, write_csv_atomically
from ..trials import run_cell, run_setting


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
