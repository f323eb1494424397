"""Running the trials of one cell (DESIGN.md 3).

Trial t of a cell draws its data from SeedSequence(seed, spawn_key=(experiment, cell, t, 0))
and mechanism m from (experiment, cell, t, 1, m), with stable integer ids of the names, so
results do not depend on cores, order or machine, and all mechanisms of a trial see the
same data.
"""
from __future__ import annotations

import math
import sys
import time
import zlib

import numpy as np
import pandas as pd

import mechanisms
from datasets import column_means

from .config import Cell, ExperimentSpec, required_sample_options
from .metrics import METRICS
from .sources import draw

DIAGNOSTICS = ("true_rho", "ledger_total", "clip_threshold", "fraction_clipped")


def stable_id(name: str) -> int:
    """A 32-bit id of a name that is the same on every machine and Python run."""
    return zlib.crc32(name.encode("utf-8"))


def trial_generators(seed: int, experiment: str, cell_id: str, trial: int, mechanism_names):
    """The data generator and one generator per mechanism for one trial."""
    key = (stable_id(experiment), stable_id(cell_id), trial)
    data = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key + (0,)))
    per_mechanism = {
        name: np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key + (1, stable_id(name))))
        for name in mechanism_names
    }
    return data, per_mechanism


def run_cell(spec: ExperimentSpec, cell: Cell, *, seed: int, log=sys.stderr) -> pd.DataFrame:
    """All trials of one cell: one row per trial and mechanism."""
    params = dict(cell.params)
    rho = float(params.pop("rho"))
    data_params = {**dict(spec.data), **params}
    functions = {m.name: mechanisms.make_mechanism(m.algorithm, **m.options_dict()) for m in spec.mechanisms}
    from_sample = {m.name: required_sample_options(m.algorithm) for m in spec.mechanisms}
    call_arguments = {m.name: mechanisms.call_arguments(m.algorithm) for m in spec.mechanisms}
    metric = METRICS[spec.metric]
    rows = []
    started = time.perf_counter()
    buffers, wanted, spare_data = [], None, None
    for trial in range(spec.trials):
        data_rng, mechanism_rngs = trial_generators(seed, spec.id, cell.id, trial, functions)
        sample = draw(spec.source, data_params, data_rng, out=spare_data)
        empirical_mean = column_means(sample.x)
        # The mechanisms of a trial share what they derive from dense data without randomness
        # (sorted coordinate rows, the transposed copy): same results, computed once, into
        # the previous trial's arrays, and only what the previous trial's mechanisms reused.
        # Sparse data go to the mechanisms as they are.
        shared = None if sample.is_sparse else mechanisms.SharedSample(sample.x, buffers=buffers, wanted=wanted)
        for name, function in functions.items():
            extra = {option: getattr(sample, f"true_{option}") for option in from_sample[name]}
            if "bounds" in call_arguments[name]:
                extra["bounds"] = sample.bounds
            tic = time.perf_counter()
            estimate = function(sample.x if shared is None else shared, rho=rho, rng=mechanism_rngs[name], **extra)
            runtime = time.perf_counter() - tic
            error, error_vs_empirical = metric(estimate.mean, sample, empirical_mean)
            row = {"experiment": spec.id, **dict(cell.params), "trial": trial, "mechanism": name,
                   "error": error, "error_vs_empirical": error_vs_empirical, "runtime_s": runtime}
            row.update({key: float(estimate.diagnostics.get(key, math.nan)) for key in DIAGNOSTICS})
            rows.append(row)
        if shared is not None:
            wanted = shared.recalled
            buffers = shared.release()
            spare_data = sample.x  # the next trial draws into it
        del shared, sample
        if log is not None and (trial + 1 == spec.trials or (trial + 1) % max(1, spec.trials // 5) == 0):
            print(f"{spec.id} {cell.id}: {trial + 1}/{spec.trials} trials, "
                  f"{time.perf_counter() - started:.1f} s", file=log, flush=True)
    return pd.DataFrame(rows)
