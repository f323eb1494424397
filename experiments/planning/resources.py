"""What a cell or setting job asks of a cluster (docs/design.md §10): its peak memory from the size
of one trial's data, its run time from its work, and how much of the memory it is granted the
shared-sample cache may fill (``cache_bytes``; a cache never changes results, only how often
the mechanisms recompute what they derive from the data).

The constants are measured on the 2-core development VM (docs/performance.md; the job base
from ``sacct`` on the single-node Slurm of ``scripts/slurm-local.sh``). These functions give the
estimates; the margins on top are the workflow's (``experiments/planning/workflow_plan.py``).

Three kinds of job, by their data:

- dense (the Gaussian sources): one trial holds the data (n x d float64, S bytes), IOME's
  rotated work array (n x D', D' = d rounded up to a power of two), PLAN's temporaries (about
  S / 2), and in the cache the transposed copy and the sorted coordinate rows (2 S), plus the
  merged published stack of 3 copies (3 S more) where rows are short enough to merge it
  (n < ``mechanisms.quantiles.MIN_STACK_ROW`` = 3000). Measured: n = 100000, d = 1024 (S =
  781 MiB) peaks at 3.35 GB in the script, 4.0 S over the interpreter; n = 2000, d = 2048 at
  7.6 S; with no cache at all, 2.3 S.
- sparse (binary sources and the real datasets, CSR): about 150 bytes per nonzero over a
  job of 50 trials (drawing the rows and the previous trial's recycled arrays: Kosarak-shaped
  0.81 GB, POS-shaped 0.56 GB, synthetic d = 2048, ratio 1 0.50 GB), numba's compiler
  (100 MiB) and, in the cache, IOME's rotated counts (D' x 2^T int32 per IOME variant).
- batched (user-level): a batch of runs (runs x n x d float64, X bytes) and the mechanisms'
  work on it, 1.6 X + 100 MiB (d = 8 geometric: 0.44 GB for X = 0.29 GB), no shared-sample cache.

Every job also holds its result rows (about 64 bytes each, one per trial, mechanism and cell)
and ``JOB_BASE_MB`` for its Python processes: in a Slurm job, two Snakemake processes (the
plugin's job step and the rule's, 186 MB each in ``sacct``) and the script's interpreter with
numpy, scipy, pandas and the engine (92 MB).
"""
from __future__ import annotations

import math

from mechanisms.quantiles import MIN_STACK_ROW

from ..engine.config import Cell, ExperimentSpec
from ..engine.sources import REAL_DATASET_SOURCES, source_defaults

MIB = 1 << 20
JOB_BASE_MB = 500
NUMBA_MB = 100
ROW_BYTES = 64
SPARSE_BYTES_PER_NONZERO = 150
BATCH_FACTOR, BATCH_EXTRA_MB = 1.6, 100
# the binary generators and the sources reading a binary real dataset (MNIST's images are dense)
SPARSE_SOURCES = frozenset({"binary_synthetic", "kosarak_shaped", "pos_shaped"}
                           | {source for source, kind in REAL_DATASET_SOURCES.items() if kind == "binary"})

# Time, in seconds on the development VM on a slow day (docs/performance.md, at 4e1f4f0).
START_SECONDS = 30.0  # a Slurm job's two Snakemake start-ups and the script's imports
CALL_SECONDS = 0.004  # one mechanism call on tiny data (Table 2: 500 calls at n = 10000 in 2 s)
DENSE_SECONDS = 7.5e-8  # per mechanism call and entry of the n x d data (slowest: Figure 4b, n = 100000, d = 64)
SPARSE_ROW_SECONDS = 6e-10  # per trial and n D' log2 D' (IOME's rotation of every row: Kosarak- and POS-shaped)
SPARSE_NONZERO_SECONDS = 1.5e-7  # per trial and nonzero (drawing the rows and their statistics)
SPARSE_CALL_SECONDS = (0.02, 1e-8)  # per mechanism call and budget value: fixed, and per nonzero
BATCHED_SECONDS = 2.5e-8  # per mechanism call, budget value, run and sample value (d = 1 geometric)
CELL_WRITE_SECONDS = 0.1  # writing one compressed cell of 10^4 runs


def job_kind(spec: ExperimentSpec) -> str:
    """"batched", "sparse" or "dense" (any other source: its data as an n x d array)."""
    if spec.batch_size is not None:
        return "batched"
    return "sparse" if spec.source in SPARSE_SOURCES else "dense"


def _parameters(spec: ExperimentSpec, cell: Cell) -> dict:
    return {**source_defaults(spec.source), **dict(spec.size_hint), **dict(spec.data), **dict(cell.params)}


def _padded(d: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(d, 1))))


def expected_nonzeros(spec: ExperimentSpec, cell: Cell) -> float:
    """Expected nonzeros of one trial's sparse data (a real dataset: its expected occurrences or
    tokens from the config's ``expect``, else every entry)."""
    p = _parameters(spec, cell)
    n, d = float(p.get("n", 1)), int(p.get("d", 1))
    if spec.source == "binary_synthetic":
        from datasets.binary import leading_count

        leading = leading_count(float(p["ratio"]), d)
        return n * (leading * float(p.get("high", 0.5)) + (d - leading) * float(p.get("low", 0.01)))
    if "items_per_row" in p:
        return n * float(p["items_per_row"])
    return float(p.get("nonzeros", n * d))


def _samples(spec: ExperimentSpec, cell: Cell) -> int:
    """n of a user-level collection (the sum of its public counts)."""
    from datasets.userlevel import collection_counts

    p = _parameters(spec, cell)
    names = ("M", "L", "m_star", "exponent", "max_count")
    return int(collection_counts(p["collection"], **{k: p[k] for k in names if k in p}).sum())


def _iome_steps(spec: ExperimentSpec) -> list[int]:
    return [int(m.options_dict().get("search_steps", 20)) for m in spec.mechanisms if m.algorithm == "iome"]


def memory_parts(spec: ExperimentSpec, cells: list[Cell]) -> tuple[float, float]:
    """(bytes the job holds outside the cache, bytes the cache wants) for a job running ``cells``
    (one cell, or the cells of one setting)."""
    cell = cells[0]
    rows = ROW_BYTES * spec.trials * len(spec.mechanisms) * len(cells)
    base = JOB_BASE_MB * MIB + rows
    kind, p = job_kind(spec), _parameters(spec, cell)
    if kind == "batched":
        batch = spec.batch_size * _samples(spec, cell) * int(p.get("d", 1)) * 8
        return base + BATCH_FACTOR * batch + BATCH_EXTRA_MB * MIB, 0.0
    n, d = int(p.get("n", 1)), int(p.get("d", 1))
    if kind == "sparse":
        counts = sum(_padded(d) * (1 << steps) * 4 for steps in _iome_steps(spec))
        return base + NUMBA_MB * MIB + SPARSE_BYTES_PER_NONZERO * expected_nonzeros(spec, cell), float(counts)
    size = 8.0 * n * d
    work_array = 8.0 * n * _padded(d) if _iome_steps(spec) else 0.0
    cached = (5 if n < MIN_STACK_ROW else 2) * size
    return base + 1.5 * size + work_array, cached


def peak_mb(spec: ExperimentSpec, cells: list[Cell]) -> float:
    """The job's estimated peak memory in MiB (before any margin)."""
    held, cached = memory_parts(spec, cells)
    return (held + cached) / MIB


def cache_bytes(spec: ExperimentSpec, cells: list[Cell], mem_mb: float) -> int:
    """What the shared-sample cache may hold in a job granted ``mem_mb`` MiB: the grant less
    what the job holds outside the cache (0 if that is more: the mechanisms then recompute
    instead of keeping, with the same results)."""
    held, _ = memory_parts(spec, cells)
    return max(0, int(mem_mb * MIB - held))


def seconds(spec: ExperimentSpec, cells: list[Cell]) -> float:
    """The job's estimated wall time in seconds on one core of the development VM on a slow day
    (before any margin)."""
    cell, calls = cells[0], spec.trials * len(spec.mechanisms) * len(cells)
    kind, p = job_kind(spec), _parameters(spec, cell)
    if kind == "batched":
        values = spec.batch_size * _samples(spec, cell) * int(p.get("d", 1))
        batches = math.ceil(spec.trials / spec.batch_size)
        return START_SECONDS + batches * len(cells) * len(spec.mechanisms) * BATCHED_SECONDS * values \
            + CELL_WRITE_SECONDS * len(cells)
    n, d = float(p.get("n", 1)), int(p.get("d", 1))
    if kind == "sparse":
        nonzeros, padded = expected_nonzeros(spec, cell), _padded(d)
        per_trial = SPARSE_ROW_SECONDS * n * padded * max(1, math.log2(padded)) + SPARSE_NONZERO_SECONDS * nonzeros
        fixed, per_nonzero = SPARSE_CALL_SECONDS
        return START_SECONDS + spec.trials * per_trial + calls * (fixed + per_nonzero * nonzeros)
    return START_SECONDS + calls * (CALL_SECONDS + DENSE_SECONDS * n * d)
