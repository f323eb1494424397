"""What the Snakemake scripts call: each job reads its inputs, computes, writes atomically."""
from __future__ import annotations

import pandas as pd

from .config import load_experiments
from .summary import summarise, write_csv_atomically
from .trials import run_cell


def run_cell_job(*, config, experiment, cell, output, log):
    spec = load_experiments(config)[experiment]
    with open(log, "w") as stream:
        frame = run_cell(spec, spec.cell(cell), seed=int(config["seed"]), log=stream)
    write_csv_atomically(frame, output)


def summarise_job(*, cells, grid, output, log):
    frame = pd.concat([pd.read_csv(path) for path in cells], ignore_index=True)
    summary = summarise(frame, grid)
    write_csv_atomically(summary, output)
    with open(log, "w") as stream:
        print(f"{len(cells)} cells, {len(frame)} trial rows -> {len(summary)} summary rows", file=stream)
