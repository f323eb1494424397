"""What the Snakemake scripts call: each job reads its inputs, computes, writes atomically."""
from __future__ import annotations

import pandas as pd

from .config import load_experiments
from .summary import summarise, write_csv_atomically
from .trials import run_cell, run_setting


def run_cell_job(*, config, experiment, cell, output, log):
    spec = load_experiments(config)[experiment]
    with open(log, "w") as stream:
        frame = run_cell(spec, spec.cell(cell), seed=int(config["seed"]), log=stream)
    write_csv_atomically(frame, output)


def run_setting_job(*, config, experiment, setting, outputs, log):
    """Every rho of one setting in one job (``share_rho``): ``outputs`` are the cells' files,
    written only once every trial is done."""
    spec = load_experiments(config)[experiment]
    cells = spec.settings()[setting]
    paths = {path.rsplit("/", 1)[-1].removesuffix(".csv"): path for path in outputs}
    if sorted(paths) != sorted(cell.id for cell in cells):
        raise ValueError(f"outputs {sorted(paths)} are not the cells {[c.id for c in cells]} of setting {setting!r}")
    with open(log, "w") as stream:
        frames = run_setting(spec, cells, seed=int(config["seed"]), log=stream)
    for cell_id, frame in frames.items():
        write_csv_atomically(frame, paths[cell_id])


def summarise_job(*, cells, grid, output, log):
    frame = pd.concat([pd.read_csv(path) for path in cells], ignore_index=True)
    summary = summarise(frame, grid)
    write_csv_atomically(summary, output)
    with open(log, "w") as stream:
        print(f"{len(cells)} cells, {len(frame)} trial rows -> {len(summary)} summary rows", file=stream)
