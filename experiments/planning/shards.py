"""Trial shards: one cell's (or one setting's) trials split into jobs of consecutive trials
(docs/configuration.md#trial-shards; docs/design.md §3).

Trial t's data and randomness are keyed by (experiment, setting, t) alone
(experiments/engine/trials.py), so a shard computes exactly the rows the whole job would, and its
rows are the whole job's rows for its trials. A shard writes each cell's rows as the cell file
would hold them (the same columns, the same fixed float format); the merge
(experiments/engine/cell_files.py) joins them in trial order, one header, so the cell file has
the same bytes as a job that ran every trial. Batched experiments (one seed key
per batch of runs) split only at batch boundaries.

How many shards is not part of a cell's fingerprint. The layout a job was merged from is kept
beside it (``<job>.layout.json``, with the fingerprints of its cells): for the same fingerprints
the workflow keeps asking for that layout, so changing ``shards`` or the cores never recomputes a
finished cell (Snakemake reruns a job whose set of inputs changed).
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from ..engine.atomic import write_text_atomically
from ..engine.config import ExperimentSpec


def trial_units(spec: ExperimentSpec) -> int:
    """How many pieces a job can be split into: its trials, or its batches (batched experiments)."""
    if spec.batch_size is None:
        return spec.trials
    return math.ceil(spec.trials / spec.batch_size)


def trial_ranges(spec: ExperimentSpec, count: int) -> list[range]:
    """The trials of ``count`` shards: consecutive, as equal as the units allow, covering every
    trial once (``count`` is capped at :func:`trial_units`)."""
    if count < 1:
        raise ValueError(f"a job splits into at least 1 shard, got {count}")
    units = trial_units(spec)
    count = min(count, units)
    unit = 1 if spec.batch_size is None else spec.batch_size
    bounds = [min(spec.trials, (units * index // count) * unit) for index in range(count + 1)]
    return [range(first, stop) for first, stop in zip(bounds, bounds[1:])]


def shard_count(spec: ExperimentSpec, work_seconds: float, target_seconds: float) -> int:
    """The shards of a job whose trials take ``work_seconds`` in all: the experiment's ``shards``
    if set, else enough that each takes at most ``target_seconds`` (at most one per unit)."""
    if spec.shards is not None:
        return min(spec.shards, trial_units(spec))
    return max(1, min(trial_units(spec), math.ceil(work_seconds / target_seconds)))


# --- the layout a job was merged from --------------------------------------------------------

def read_layout(path: str | Path, fingerprints: Sequence[str]) -> list[range] | None:
    """The shard ranges recorded at ``path`` for these cell fingerprints; None if there is no
    record, or it was written for other fingerprints (the cells then rerun anyway)."""
    try:
        record = json.loads(Path(path).read_text())
        if record["fingerprints"] != list(fingerprints):
            return None
        return [range(first, stop) for first, stop in record["trials"]]
    except (OSError, ValueError, KeyError, TypeError):
        # missing, half-written by hand or of another format: decided afresh from the config
        return None


def write_layout(path: str | Path, fingerprints: Sequence[str], ranges: Sequence[range]) -> None:
    record = {"fingerprints": list(fingerprints), "trials": [[r.start, r.stop] for r in ranges]}
    write_text_atomically(json.dumps(record) + "\n", path)
