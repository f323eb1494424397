"""What a cell or setting job asks of a cluster (docs/design.md §10): its peak memory from the size
of one trial's data, its run time from its work, and how much of the memory it is granted the
shared-sample cache may fill (``cache_bytes``; a cache never changes results, only how often
the mechanisms recompute what they derive from the data).

The constants are measured on the 2-core development VM (docs/performance.md; the job base
from ``sacct`` on the single-node Slurm of ``scripts/slurm-local.sh``). The functions give the
estimates; :class:`JobResources`, the run plan's part the rule files read as ``RUN.resources``,
adds the margins and gives every job its request.

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

import dataclasses
import math
from collections.abc import Mapping

from mechanisms.quantiles import MIN_STACK_ROW

from ..audit.power import POWER_MECHANISMS
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


# --- every job's request ---------------------------------------------------------------------

# Resources of the cell and setting jobs (docs/design.md §10), from what the job holds and does
# (experiments/planning/resources.py: the estimates and the measurements behind them):
#   mem_mb  = ceil(1.25 x peak), peak = 500 MiB for the job's Python processes + one trial's
#             arrays (dense: 3.5-4.5 S for S = n x d x 8 bytes of data, the cache's transposed
#             copy and sorted rows included, 8 S below n = 3000; sparse: 150 bytes per nonzero
#             and IOME's counts; user-level: 1.6 x the batch of runs) + the result rows;
#   runtime = ceil(3 x seconds / 60) minutes, at least 5, seconds from the job's work at the
#             slowest rates measured (docs/performance.md: 30 s to start, then per mechanism
#             call 7.5e-8 s per entry of dense data, ...).
# Margins: 25 % on memory (allocations are deterministic: peaks differ little between runs; the
# margin covers the allocator and numpy temporaries the estimate leaves out) and 3x on time (this
# VM ran 2x slower on some days than others; cluster cores differ). The shared-sample cache gets
# the granted mem_mb less what the job holds outside it (JobResources.job_cache_bytes, a rule param), so a
# smaller --set-resources mem_mb shrinks the cache instead of the results changing.
MEMORY_MARGIN = 1.25
RUNTIME_MARGIN = 3.0
MIN_RUNTIME = 5

# The other jobs read summaries or draw figures: measured at most 0.52 GB in a Slurm job on the
# smoke config (sacct MaxRSS: the plugin's job step 186 MB + the rule's Snakemake and script
# 330 MB), where the default config's summaries and figures are little larger; 1 GB and
# 10 minutes (they take seconds) leave the margin.
SMALL_JOB_MEM_MB = 1000
SMALL_JOB_RUNTIME = 10
SUMMARY_ROW_BYTES = 200
# The longest audit (plan_binary, 10^4 runs) took 120 s and 0.5 GB on a loaded machine.
AUDIT_MEM_MB = 2000
# A power-curve job (experiments/audit/power.py) repeats one mechanism's batched audits: 30 s to start,
# then each audit's measured seconds (PowerMechanism.audit_seconds), with the cell jobs' 3x margin.
POWER_START_SECONDS = 30
# Parsing the full Kosarak file peaks at about 0.7 GB in 2 s (benchmarks/bench_parsing.py), plus
# the job's Python processes (0.5 GB), with the cell jobs' 25 % margin; the fetch parses each
# source's file to check it against expect.
DATASET_MEM_MB = 1600
# per source 5 s to connect, 60 s per read, 3 retries with backoff, then a download of about
# 35 MB at worst (Kosarak's FIMI file 33 MB) and its parse (2 s)
FETCH_RUNTIME = 15




def rounded_mb(peak_mb: float) -> int:
    """A memory request in MiB: ``peak_mb`` with the margin, rounded up to 100 MiB."""
    return math.ceil(MEMORY_MARGIN * peak_mb / 100) * 100


def shard_trial_count(wildcards: Mapping) -> int:
    """How many trials a shard job runs: {first} to {last}, inclusive."""
    return int(wildcards.get("last")) - int(wildcards.get("first")) + 1


class JobResources:
    """Memory, wall time and priority of the jobs of a run: the trial jobs (``trials``: the run's
    :class:`~experiments.planning.trial_jobs.TrialJobs`), their shards, the summaries and the
    power curves; the other jobs ask for the small-job constants above."""

    def __init__(self, selection, trials):
        self.selection = selection
        self.trials = trials

    def job_priority(self, experiment: str, wildcards: Mapping) -> int:
        """Largest jobs first, so a run ends on short jobs instead of one long one. The
        logarithm keeps the priorities small numbers; only their order matters."""
        spec = self.selection.experiments[experiment]
        return round(10 * math.log2(sum(spec.work(cell) for cell in self.trials.job_cells(experiment, wildcards))))

    def job_mem_mb(self, experiment: str, wildcards: Mapping, *, whole: bool = False) -> int:
        """Memory request of a cell or setting job, in MiB (Slurm's --mem unit); a job that only
        merges its shards is a small job (``whole``: the job running every trial)."""
        if not whole and self.trials.merges_shards(experiment, wildcards):
            return SMALL_JOB_MEM_MB
        return rounded_mb(peak_mb(self.selection.experiments[experiment],
                                  self.trials.job_cells(experiment, wildcards)))

    def job_cache_bytes(self, experiment: str, wildcards: Mapping, mem_mb: float) -> int:
        """The shared-sample cache of a cell, setting or shard job granted ``mem_mb`` MiB (a rule
        param: the job fills what its request leaves, so a smaller --set-resources mem_mb shrinks
        the cache, never the results)."""
        return cache_bytes(self.selection.experiments[experiment], self.trials.job_cells(experiment, wildcards), mem_mb)

    def job_runtime(self, experiment: str, wildcards: Mapping) -> int:
        """Wall-time request of a cell or setting job, in minutes (a merge of shards: a small job)."""
        if self.trials.merges_shards(experiment, wildcards):
            return SMALL_JOB_RUNTIME
        work = seconds(self.selection.experiments[experiment], self.trials.job_cells(experiment, wildcards))
        return max(MIN_RUNTIME, math.ceil(RUNTIME_MARGIN * work / 60))

    def shard_priority(self, experiment: str, wildcards: Mapping) -> int:
        """A shard's share of its job's priority (largest work first)."""
        spec = self.selection.experiments[experiment]
        trials = shard_trial_count(wildcards)
        work = sum(spec.work(cell) for cell in self.trials.job_cells(experiment, wildcards)) * trials / spec.trials
        return round(10 * math.log2(work))

    def shard_mem_mb(self, experiment: str, wildcards: Mapping) -> int:
        """Memory request of a shard: one trial's data as its whole job, but only its trials' rows."""
        trials = shard_trial_count(wildcards)
        spec = dataclasses.replace(self.selection.experiments[experiment], trials=trials)
        return rounded_mb(peak_mb(spec, self.trials.job_cells(experiment, wildcards)))

    def shard_runtime(self, experiment: str, wildcards: Mapping) -> int:
        """Wall-time request of a shard, in minutes: its share of the job's trials."""
        spec = self.selection.experiments[experiment]
        cells = self.trials.job_cells(experiment, wildcards)
        trials = shard_trial_count(wildcards)
        seconds = START_SECONDS + self.trials.cells_work_seconds(experiment, cells) * trials / spec.trials
        return max(MIN_RUNTIME, math.ceil(RUNTIME_MARGIN * seconds / 60))

    def summarise_mem_mb(self, experiment: str) -> int:
        """A summary reads every trial row of the experiment's cells (10^4 runs per cell and
        mechanism for the user-level ones): SUMMARY_ROW_BYTES per row at the peak, measured."""
        spec = self.selection.experiments[experiment]
        rows = spec.trials * len(spec.mechanisms) * len(spec.cells())
        peak = JOB_BASE_MB + SUMMARY_ROW_BYTES * rows / MIB
        return max(SMALL_JOB_MEM_MB, rounded_mb(peak))

    def power_seconds(self, mechanism: str) -> float:
        """The estimated seconds of a power-curve job: its audits at their measured rates."""
        power = self.selection.audit_power
        spec = POWER_MECHANISMS[mechanism]
        audits = len(power["breaks"]) * power["repetitions"]
        return POWER_START_SECONDS + audits * sum(spec.audit_seconds(runs) for runs in power["runs"])

    def power_runtime(self, mechanism: str) -> int:
        """Wall-time request of a power-curve job, in minutes."""
        return max(MIN_RUNTIME, math.ceil(RUNTIME_MARGIN * self.power_seconds(mechanism) / 60))

    def power_priority(self, mechanism: str) -> int:
        """The power-curve jobs' rank by their estimated seconds (0: the shortest): the longest
        start first, so that on two cores the shortest follows one of them and both end near
        together."""
        ranked = sorted(self.selection.audit_power["mechanisms"], key=self.power_seconds)
        return ranked.index(mechanism)
