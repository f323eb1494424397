"""What a full reproduction costs: core-hours per experiment and the wall time on k cores,
from the measurements of a finished run (issue 15 part 7; docs/cluster.md "Cost of a full reproduction").

Usage (from the repository root):

    python benchmarks/cost_table.py [RESULTS_DIR] [--job-records .snakemake/metadata]
        [--cores 2 16 64 256] [--layout local|cluster|none] [--markdown FILE] [--csv FILE] [--jobs-csv FILE]
    python benchmarks/cost_table.py --from-jobs results/cost/jobs.csv

Measurements come from the Snakemake benchmark files ``RESULTS_DIR/<experiment>/benchmarks/*.tsv``
(one per cell job, or per setting job: wall ``s``, ``cpu_time``, ``max_rss``; a sharded job's
shards in ``benchmarks/shards/<job>/``). Jobs without a
benchmark file (summaries, figures, errata, report, the audits of runs made before their rule had a
``benchmark:``) are taken, optionally, from the same run's Snakemake job records
(``.snakemake/metadata``: each output's start and end time, its rule, log and inputs), which also
give the dependencies between jobs. ``--jobs-csv`` writes the merged per-job measurements and
``--from-jobs`` reads them back, so the table can be rebuilt without the run's directory.

Core-hours are wall seconds x threads / 3600: what a scheduler reserves for a job, and what decides
how long the run takes. CPU-hours (``cpu_time``) are shown beside them; on a shared VM they are
lower (the job waited for a core part of the time).

The wall time on k cores is list scheduling of the jobs, as Snakemake runs them: a job
starts when its inputs exist and enough cores are free, the longest ready job first (the
workflow's ``priority`` orders cells by their estimated work, which is nearly the same order; the
other rules have priority 0). The lower bound is max(work / k, critical path).

Trial shards (experiments/planning/shards.py) are simulated, not measured: a measured cell or setting job
that the config's layout splits (``TrialJobs.configured_shard_layout``: a local run on the
column's k cores, or a cluster run) becomes its shards, each a start-up and its share of the job's
trials (the measured wall less the measured start-up), and its merge, a start-up and the measured
merge time, which its dependants wait for. The start-ups and the merge time are measured
separately (LOCAL_STARTUP_SECONDS, MERGE_SECONDS); a cluster run's jobs start in
SLURM_STARTUP_SECONDS instead.
"""
from __future__ import annotations

import argparse
import base64
import csv
import heapq
import io
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from experiments.engine.atomic import write_text_atomically
from experiments.engine.config import ConfigError
from experiments.planning.config_files import DEFAULT_CONFIG, load_config
from experiments.planning.run_plan import RunPlan

DEFAULT_CORES = (2, 16, 64, 256)
OTHER_STEPS = "other jobs (summaries, figures, report)"
REQUIRED_COLUMNS = ("s", "max_rss", "cpu_time")

# The start-up of a local job of this workflow: its script process (its benchmark file's `s`) less
# the seconds of its trials (its log's engine line "1/1 trials, 0.0 s"): Python, numpy and the
# mechanisms' imports, the config, writing its files. MERGE_SECONDS: what the merge job of a sharded
# cell spends beyond a start-up (its `s` less the mean of its two shards' `s` in the same round).
# Measured on the 2-core development VM, shared with other work (load 2 to 7), in a fresh clone at
# 09ed93a: 30 rounds (two series of 15), each `snakemake --cores 1 results/gaussian_A/cells/d=16_rho=1.csv
# --configfile C` with C = {experiments: {gaussian_A: {data: {source: gaussian_a, n: 600}, grid:
# {d: [16], rho: [1.0]}, trials: 1}}} (the cell as one job of 1 trial), then with `trials: 2,
# shards: 2` (two shards of 1 trial and their merge). Start-up: median 1.39 s of the 90 jobs of 1
# trial (quartiles 1.21 and 2.05 s; the series' medians 2.05 and 1.28 s). Merge: median -0.11 s of
# 30 (quartiles -0.47 and 0.13 s): a merge takes no longer than a start-up, within its noise.
LOCAL_STARTUP_SECONDS = 1.4
MERGE_SECONDS = 0.0
# A Slurm job's start-up: not measured for this table, the earlier measurement on the one-machine
# Slurm of docs/cluster.md (smoke config, "10-17 s per job however small"), its upper end.
SLURM_STARTUP_SECONDS = 17.0
LAYOUTS = ("local", "cluster", "none")


class CostTableError(Exception):
    """A missing or malformed input, named in the message."""


@dataclass(frozen=True)
class Job:
    id: str  # "<experiment>/<cell or setting>", or the job's log path without logs/ and .log
    group: str  # the experiment, "audit", or OTHER_STEPS
    wall_s: float
    cpu_s: float | None = None
    max_rss_mb: float | None = None
    threads: int = 1
    rule: str = ""
    after: tuple[str, ...] = field(default=())  # ids of the jobs whose outputs it reads
    source: str = "benchmark"  # or "record" (Snakemake's job record: wall only), "simulated" (a shard or merge)


def read_benchmark(path: Path) -> dict:
    """One Snakemake benchmark file: {"wall_s", "cpu_s", "max_rss_mb"}; rows of a repeat() are
    summed (the job ran them all), the peak RSS is their maximum."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if not rows:
        raise CostTableError(f"{path}: no measurement row (an empty or header-only benchmark file)")
    missing = [c for c in REQUIRED_COLUMNS if c not in rows[0]]
    if missing:
        raise CostTableError(f"{path}: not a Snakemake benchmark file, missing column(s) {', '.join(missing)}")
    values = {c: [] for c in REQUIRED_COLUMNS}
    for number, row in enumerate(rows, start=2):
        for column in REQUIRED_COLUMNS:
            try:
                value = float(row[column])
            except (TypeError, ValueError):
                raise CostTableError(f"{path}, line {number}: {column}={row[column]!r} is not a number") from None
            if not math.isfinite(value) or value < 0:
                raise CostTableError(f"{path}, line {number}: {column}={row[column]!r} must be finite and >= 0")
            values[column].append(value)
    return {"wall_s": sum(values["s"]), "cpu_s": sum(values["cpu_time"]), "max_rss_mb": max(values["max_rss"])}


def read_benchmarks(results_dir: Path) -> list[Job]:
    """Every RESULTS_DIR/<experiment>/benchmarks/*.tsv as a job of that experiment, and every shard's
    benchmarks/shards/<job>/trials=<first>-<last>.tsv as the job <experiment>/shards/<job>/trials=..."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise CostTableError(f"results directory {results_dir} does not exist")
    paths = sorted(results_dir.glob("*/benchmarks/*.tsv"))
    if not paths:
        raise CostTableError(f"no benchmark files in {results_dir}/<experiment>/benchmarks/*.tsv")
    jobs = []
    for path in paths:
        experiment = path.parent.parent.name
        jobs.append(Job(id=f"{experiment}/{path.stem}", group=experiment, **read_benchmark(path)))
    for path in sorted(results_dir.glob("*/benchmarks/shards/*/*.tsv")):
        experiment = path.parents[3].name
        jobs.append(Job(id=f"{experiment}/shards/{path.parent.name}/{path.stem}", group=experiment,
                        **read_benchmark(path)))
    return jobs


def job_id_of_log(log: str) -> str:
    """logs/<experiment>/cells/<cell>.log -> <experiment>/<cell> (also settings/, and the audits'
    logs/audit/<name>.log), the id of the job's benchmark file; other logs (a shard's
    logs/<experiment>/shards/<job>/trials=<first>-<last>.log among them): the path without logs/
    and .log."""
    parts = Path(log).with_suffix("").parts
    if parts and parts[0] == "logs":
        parts = parts[1:]
    if len(parts) == 3 and parts[1] in ("cells", "settings"):
        parts = (parts[0], parts[2])
    return "/".join(parts)


def _decode_record_path(relative: str) -> str:
    # Snakemake stores one record per output, named by the path's urlsafe base64, split into
    # directories of at most 254 characters whose names start with "@" (persistence/file.py).
    encoded = "".join(part.lstrip("@") for part in Path(relative).parts)
    return base64.urlsafe_b64decode(encoded.encode()).decode()


def read_job_records(metadata_dir: Path) -> list[dict]:
    """The jobs of Snakemake's job records: {"id", "rule", "wall_s", "inputs", "outputs"}; a
    job's outputs share its log, its wall time runs from the first start to the last end."""
    metadata_dir = Path(metadata_dir)
    if not metadata_dir.is_dir():
        raise CostTableError(f"job records directory {metadata_dir} does not exist")
    jobs: dict[str, dict] = {}
    for root, _, files in os.walk(metadata_dir):
        for name in files:
            path = Path(root) / name
            try:
                record = json.loads(path.read_text())
                output = _decode_record_path(str(path.relative_to(metadata_dir)))
                start, end, rule = float(record["starttime"]), float(record["endtime"]), record["rule"]
            except (ValueError, KeyError, TypeError) as error:
                raise CostTableError(f"{path}: not a Snakemake job record ({error})") from None
            key = job_id_of_log(record["log"][0]) if record.get("log") else output
            job = jobs.setdefault(key, {"id": key, "rule": rule, "start": start, "end": end,
                                        "inputs": set(), "outputs": set()})
            job["start"], job["end"] = min(job["start"], start), max(job["end"], end)
            job["inputs"].update(record.get("input") or [])
            job["outputs"].add(output)
    if not jobs:
        raise CostTableError(f"no job records in {metadata_dir}")
    return [{**job, "wall_s": job["end"] - job["start"]} for job in jobs.values()]


def merge_records(jobs: list[Job], records: list[dict]) -> list[Job]:
    """The benchmarked jobs with their dependencies from the records, plus the recorded jobs
    that have no benchmark file (wall time only)."""
    producer = {output: record["id"] for record in records for output in record["outputs"]}
    after = {record["id"]: tuple(sorted({producer[f] for f in record["inputs"] if f in producer} - {record["id"]}))
             for record in records}
    rules = {record["id"]: record["rule"] for record in records}
    merged = [replace(job, after=after.get(job.id, ()), rule=rules.get(job.id, job.rule)) for job in jobs]
    measured = {job.id for job in jobs}
    for record in records:
        if record["id"] not in measured:
            group = "audit" if record["rule"] == "audit" else OTHER_STEPS
            merged.append(Job(id=record["id"], group=group, wall_s=record["wall_s"], rule=record["rule"],
                              after=after[record["id"]], source="record"))
    return merged


# --- trial shards (simulated from the measured jobs) -------------------------------------------

@dataclass(frozen=True)
class Scenario:
    """How a run would take the measured jobs: split into trial shards as a local run on the
    schedule's cores would split them (layout "local"), as a cluster run would ("cluster"), or not
    ("none"); every job starting in ``startup_s``."""
    name: str
    layout: str
    startup_s: float


def scenarios(local_startup_s: float = LOCAL_STARTUP_SECONDS,
              cluster_startup_s: float = SLURM_STARTUP_SECONDS) -> dict[str, Scenario]:
    """The runs the whole-run table compares; --layout chooses one of LAYOUTS for the experiments' rows."""
    return {
        "local": Scenario("sharded as a local run on k cores", "local", local_startup_s),
        "none": Scenario("not sharded (the measured jobs)", "none", local_startup_s),
        "cluster": Scenario(f"sharded as a cluster run, {cluster_startup_s:g} s start-up per job", "cluster",
                            cluster_startup_s),
        "cluster, not sharded": Scenario(f"not sharded, {cluster_startup_s:g} s start-up per job", "none",
                                         cluster_startup_s),
    }


def shard_id(job_id: str, trials: range) -> str:
    """<experiment>/shards/<job>/trials=<first>-<last>, as read_benchmarks and job_id_of_log name
    the shard's benchmark file and log."""
    experiment, _, name = job_id.partition("/")
    return f"{experiment}/shards/{name}/trials={trials.start}-{trials.stop - 1}"


def sharded_job_of(job_id: str) -> str | None:
    """The id of the job a measured shard belongs to (None: the job is no shard)."""
    parts = job_id.split("/")
    if len(parts) == 4 and parts[1] == "shards":
        return f"{parts[0]}/{parts[2]}"
    return None


def shard_rule(rule: str) -> str:
    """The rule of a cell's or setting's shards (workflow/rules/trials.smk)."""
    if rule.startswith("run_setting_"):
        return "run_setting_shard_" + rule.removeprefix("run_setting_")
    return "run_shard"


def shard_layouts(jobs: list[Job], plan: RunPlan) -> dict[str, list[range]]:
    """The trial ranges ``plan``'s config gives each measured cell or setting job of its
    experiments (``TrialJobs.configured_shard_layout``), by job id. Jobs that were measured as
    shards, and those shards, are left out: they already ran as the config split them."""
    measured_as_shards = {sharded_job_of(job.id) for job in jobs} - {None}
    names = {experiment: set(plan.trials.job_names(experiment)) for experiment in plan.experiments}
    layouts = {}
    for job in jobs:
        if job.group not in names or job.id in measured_as_shards or sharded_job_of(job.id):
            continue
        experiment, _, name = job.id.partition("/")
        if experiment != job.group or name not in names[experiment]:
            raise CostTableError(f"{job.id}: not a cell or setting job of experiment {job.group} in the config "
                                 "(did its grid change since the measurement?)")
        layouts[job.id] = plan.trials.configured_shard_layout(experiment, name)
    return layouts


def split_job(job: Job, ranges: Sequence[range], *, startup_s: float, measured_startup_s: float,
              merge_s: float) -> list[Job]:
    """A measured cell or setting job run as shards of its trials ``ranges``, then their merge.
    Its trials cost its wall less the start-up it measured (``measured_startup_s``), evenly per
    trial (for batched experiments, per run); each shard is a start-up (``startup_s``) and its
    trials' share. The merge keeps the job's id, so that its dependants wait for it."""
    trials = sum(len(r) for r in ranges)
    per_trial = max(0.0, job.wall_s - measured_startup_s) / trials
    shards = [Job(id=shard_id(job.id, r), group=job.group, wall_s=startup_s + len(r) * per_trial,
                  max_rss_mb=job.max_rss_mb, threads=job.threads, rule=shard_rule(job.rule), after=job.after,
                  source="simulated")
              for r in ranges]
    merge = Job(id=job.id, group=job.group, wall_s=startup_s + merge_s, threads=job.threads, rule=job.rule,
                after=tuple(shard.id for shard in shards), source="simulated")
    return shards + [merge]


def run_jobs(jobs: list[Job], layouts: Mapping[str, Sequence[range]], *, startup_s: float,
             measured_startup_s: float = LOCAL_STARTUP_SECONDS, merge_s: float = MERGE_SECONDS) -> list[Job]:
    """The jobs as a run would start them: each job that ``layouts`` splits (more than one range)
    as its shards and merge (split_job); every other job as measured, with ``startup_s`` in
    place of the start-up it measured."""
    run = []
    for job in jobs:
        ranges = layouts.get(job.id, ())
        if len(ranges) > 1:
            run += split_job(job, ranges, startup_s=startup_s, measured_startup_s=measured_startup_s,
                             merge_s=merge_s)
        elif startup_s != measured_startup_s:
            run.append(replace(job, wall_s=max(0.0, job.wall_s - measured_startup_s) + startup_s))
        else:
            run.append(job)
    return run


def run_plan(config: Mapping, cores: int | None) -> RunPlan:
    try:
        return RunPlan(config, cores=cores)
    except ConfigError as error:
        raise CostTableError(f"config: {error}") from None


def scheduled_jobs(jobs: list[Job], config: Mapping | None, scenario: Scenario, cores: Sequence[int], *,
                   measured_startup_s: float = LOCAL_STARTUP_SECONDS,
                   merge_s: float = MERGE_SECONDS) -> dict[int, list[Job]]:
    """The jobs of ``scenario`` on each of ``cores``: split per the layout of a local run on those
    cores (``RunPlan(config, cores=k)``), of a cluster run (``cores=None``), or not at all
    (no ``config``: nothing is split)."""
    layouts_by_plan: dict[int | None, dict[str, list[range]]] = {}
    scheduled = {}
    for k in cores:
        layouts: dict[str, list[range]] = {}
        if config is not None and scenario.layout != "none":
            plan_cores = k if scenario.layout == "local" else None
            if plan_cores not in layouts_by_plan:
                layouts_by_plan[plan_cores] = shard_layouts(jobs, run_plan(config, plan_cores))
            layouts = layouts_by_plan[plan_cores]
        scheduled[k] = run_jobs(jobs, layouts, startup_s=scenario.startup_s, measured_startup_s=measured_startup_s,
                                merge_s=merge_s)
    return scheduled


# --- scheduling ----------------------------------------------------------------------------------

def _checked(jobs: list[Job], cores: int) -> dict[str, Job]:
    if cores < 1:
        raise CostTableError(f"cores must be >= 1, got cores={cores}")
    by_id = {job.id: job for job in jobs}
    if len(by_id) != len(jobs):
        raise CostTableError("job ids must be unique")
    return by_id


def _threads(job: Job, cores: int) -> int:
    # Snakemake lowers a job's threads to the cores it was given.
    return max(1, min(job.threads, cores))


def _dependency_graph(jobs: list[Job], by_id: dict[str, Job]) -> tuple[dict[str, set], dict[str, list]]:
    """Each job's unfinished dependencies among ``jobs`` (others are ignored) and its dependants."""
    waiting = {job.id: {d for d in job.after if d in by_id} for job in jobs}
    dependants: dict[str, list[str]] = {job.id: [] for job in jobs}
    for job_id, deps in waiting.items():
        for dep in deps:
            dependants[dep].append(job_id)
    return waiting, dependants


def simulate(jobs: list[Job], cores: int) -> float:
    """Makespan of list scheduling on ``cores``: whenever cores are free, start the longest ready
    job that fits (its dependencies done); dependencies on jobs not in ``jobs`` are ignored."""
    by_id = _checked(jobs, cores)
    waiting, dependants = _dependency_graph(jobs, by_id)
    ready = [job.id for job in jobs if not waiting[job.id]]
    running: list[tuple[float, str]] = []
    now, free, done = 0.0, cores, 0
    while done < len(jobs):
        ready.sort(key=lambda i: (-by_id[i].wall_s, i))
        for job_id in list(ready):
            need = _threads(by_id[job_id], cores)
            if need <= free:
                free -= need
                ready.remove(job_id)
                heapq.heappush(running, (now + by_id[job_id].wall_s, job_id))
        if not running:
            raise CostTableError("the jobs' dependencies form a cycle")
        now, job_id = heapq.heappop(running)
        finished = [job_id]
        while running and running[0][0] == now:
            finished.append(heapq.heappop(running)[1])
        for job_id in finished:
            done += 1
            free += _threads(by_id[job_id], cores)
            for other in dependants[job_id]:
                waiting[other].discard(job_id)
                if not waiting[other]:
                    ready.append(other)
    return now


def critical_path(jobs: list[Job]) -> tuple[float, list[str]]:
    """The longest chain of dependent jobs: (its wall seconds, its job ids in order)."""
    by_id = _checked(jobs, 1)
    waiting, dependants = _dependency_graph(jobs, by_id)
    # jobs in dependency order (Kahn): a job's longest chain is known once its predecessors' are
    ready = [job.id for job in jobs if not waiting[job.id]]
    best: dict[str, tuple[float, list[str]]] = {}
    while ready:
        job_id = ready.pop()
        length, chain = max((best[d] for d in by_id[job_id].after if d in by_id), default=(0.0, []))
        best[job_id] = (length + by_id[job_id].wall_s, chain + [job_id])
        for other in dependants[job_id]:
            waiting[other].discard(job_id)
            if not waiting[other]:
                ready.append(other)
    if len(best) < len(jobs):
        raise CostTableError("the jobs' dependencies form a cycle")
    return max(best.values(), default=(0.0, []))


def lower_bound(jobs: list[Job], cores: int) -> float:
    """max(work / cores, critical path): no schedule on ``cores`` can be shorter."""
    _checked(jobs, cores)
    work = sum(job.wall_s * _threads(job, cores) for job in jobs)
    return max(work / cores, critical_path(jobs)[0])


ALL_MEASURED = "all measured jobs"


def cost_row(name: str, jobs: list[Job], scheduled: Mapping[int, list[Job]] | None = None) -> dict:
    """One row of the table: the measured ``jobs`` (count, core-hours, CPU-hours, the largest job)
    and, for each core count k of ``scheduled``, the wall time of its jobs on k cores (the measured
    jobs as a run would start them there) and the lower bound."""
    largest = max(jobs, key=lambda job: job.wall_s)
    cpu = [job.cpu_s for job in jobs if job.cpu_s is not None]
    rss = [job.max_rss_mb for job in jobs if job.max_rss_mb is not None]
    row = {"experiment": name, "jobs": len(jobs),
           "core_hours": sum(job.wall_s * job.threads for job in jobs) / 3600,
           "cpu_hours": sum(cpu) / 3600 if len(cpu) == len(jobs) else math.nan,
           "largest_job": largest.id, "largest_job_s": largest.wall_s,
           "peak_rss_mb": max(rss) if rss else math.nan}
    for k, run in (scheduled or {}).items():
        row[f"wall_s_{k}_cores"] = simulate(run, k)
        row[f"lower_bound_s_{k}_cores"] = lower_bound(run, k)
    return row


def cost_rows(jobs: list[Job], scheduled: Mapping[int, list[Job]], not_measured: tuple[str, ...] = ()) -> list[dict]:
    """A row per group (experiment, audit, the other steps: its ``scheduled`` jobs on each core
    count, scheduled alone), a row per configured experiment without measurements, and the
    measured jobs in all (the whole run's wall times: run_row)."""
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job.group, []).append(job)
    order = sorted(groups, key=lambda g: (g in ("audit", OTHER_STEPS), g == OTHER_STEPS))
    rows = [cost_row(name, groups[name], {k: [job for job in run if job.group == name] for k, run in scheduled.items()})
            for name in order]
    rows += [{"experiment": name, "jobs": "not measured here"} for name in not_measured if name not in groups]
    rows.append(cost_row(ALL_MEASURED, jobs))
    return rows


def run_row(name: str, scheduled: Mapping[int, list[Job]]) -> dict:
    """The whole run of a scenario on each core count k: its jobs (shards and merges counted),
    core-hours, wall time, lower bound and critical path."""
    row: dict = {"run": name}
    for k, run in scheduled.items():
        row[f"jobs_{k}_cores"] = len(run)
        row[f"core_hours_{k}_cores"] = sum(job.wall_s * _threads(job, k) for job in run) / 3600
        row[f"wall_s_{k}_cores"] = simulate(run, k)
        row[f"lower_bound_s_{k}_cores"] = lower_bound(run, k)
        row[f"critical_path_s_{k}_cores"] = critical_path(run)[0]
    return row


def hours_minutes_seconds(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def markdown_table(rows: list[dict], cores: tuple[int, ...] = DEFAULT_CORES) -> str:
    """The per-experiment table of docs/cluster.md: the measured jobs, and wall times as h:mm:ss."""
    header = (["experiment", "jobs", "core-hours", "CPU-hours", "largest job (wall s, peak RSS GB)"]
              + [f"{k} cores" for k in cores])
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in rows:
        if row["jobs"] == "not measured here":
            cells = [row["experiment"], "not measured here"] + [""] * (len(header) - 2)
        else:
            total = row["experiment"] == ALL_MEASURED
            cpu = "" if math.isnan(row["cpu_hours"]) else f"{row['cpu_hours']:.3f}"
            rss = "" if math.isnan(row["peak_rss_mb"]) else f", {row['peak_rss_mb'] / 1000:.2f}"
            largest = row["largest_job"].split("/", 1)[-1] if not total else row["largest_job"]
            cells = [f"**{row['experiment']}**" if total else row["experiment"], str(row["jobs"]),
                     f"{row['core_hours']:.3f}", cpu, f"{largest} ({row['largest_job_s']:.0f}{rss})"]
            cells += ["" if total else hours_minutes_seconds(row[f"wall_s_{k}_cores"]) for k in cores]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run_table(rows: list[dict], cores: tuple[int, ...] = DEFAULT_CORES) -> str:
    """The whole-run table of docs/cluster.md: per scenario, the wall time on each core count
    (>= its lower bound), then its jobs, core-hours and critical path there."""
    header = ["whole run"] + [f"{k} cores" for k in cores]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in rows:
        walls = [f"{hours_minutes_seconds(row[f'wall_s_{k}_cores'])} "
                 f"(>= {hours_minutes_seconds(row[f'lower_bound_s_{k}_cores'])})" for k in cores]
        details = [f"{row[f'jobs_{k}_cores']} jobs, {row[f'core_hours_{k}_cores']:.3f} core-h, path "
                   f"{hours_minutes_seconds(row[f'critical_path_s_{k}_cores'])}" for k in cores]
        lines.append("| " + " | ".join([f"**{row['run']}**"] + walls) + " |")
        lines.append("| " + " | ".join(["its jobs, core-hours, critical path"] + details) + " |")
    return "\n".join(lines) + "\n"


JOB_COLUMNS = ("id", "group", "rule", "source", "wall_s", "cpu_s", "max_rss_mb", "threads", "after")


def write_jobs_csv(jobs: list[Job], path: Path) -> None:
    handle = io.StringIO(newline="")
    writer = csv.writer(handle)
    writer.writerow(JOB_COLUMNS)
    for job in sorted(jobs, key=lambda j: j.id):
        writer.writerow([job.id, job.group, job.rule, job.source, f"{job.wall_s:.2f}",
                         "" if job.cpu_s is None else f"{job.cpu_s:.2f}",
                         "" if job.max_rss_mb is None else f"{job.max_rss_mb:.2f}",
                         job.threads, " ".join(job.after)])
    write_text_atomically(handle.getvalue(), path)


def read_jobs_csv(path: Path) -> list[Job]:
    path = Path(path)
    if not path.is_file():
        raise CostTableError(f"jobs file {path} does not exist")
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in JOB_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise CostTableError(f"{path}: missing column(s) {', '.join(missing)}")
        jobs = []
        for number, row in enumerate(reader, start=2):
            try:
                jobs.append(Job(id=row["id"], group=row["group"], rule=row["rule"], source=row["source"],
                                wall_s=float(row["wall_s"]), cpu_s=float(row["cpu_s"]) if row["cpu_s"] else None,
                                max_rss_mb=float(row["max_rss_mb"]) if row["max_rss_mb"] else None,
                                threads=int(row["threads"]), after=tuple(row["after"].split())))
            except ValueError as error:
                raise CostTableError(f"{path}, line {number}: {error}") from None
    if not jobs:
        raise CostTableError(f"{path}: no jobs")
    return jobs


def write_rows_csv(rows: list[dict], path: Path) -> None:
    """Rows of either table (their columns joined, in order of appearance)."""
    columns = list(dict.fromkeys(column for row in rows for column in row))
    handle = io.StringIO(newline="")
    writer = csv.DictWriter(handle, fieldnames=columns)
    writer.writeheader()
    for row in rows:
        writer.writerow({c: (f"{v:.3f}" if isinstance(v, float) else v) for c, v in row.items()})
    write_text_atomically(handle.getvalue(), path)


def read_config(configfile: Path) -> dict:
    """The config of a run with ``--configfile configfile``: the file merged over the default
    config/config.yaml as the workflow merges it (docs/configuration.md)."""
    default = Path(DEFAULT_CONFIG)
    if default.is_file() and default.resolve() == configfile.resolve():
        return load_config(default=default)
    return load_config(configfile, default=default if default.is_file() else None)


def with_threads(jobs: list[Job], threads: Mapping[str, int]) -> list[Job]:
    return [replace(job, threads=threads.get(job.rule, job.threads)) for job in jobs]


def seconds_option(name: str, value: float) -> float:
    if not math.isfinite(value) or value < 0:
        raise CostTableError(f"{name} must be a number of seconds >= 0, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", default="results", help="results directory (default: results)")
    parser.add_argument("--job-records",
                        help="the same run's .snakemake/metadata (jobs without benchmark files, dependencies)")
    parser.add_argument("--from-jobs", help="read the per-job measurements from this CSV instead (see --jobs-csv)")
    parser.add_argument("--configfile", default="config/config.yaml",
                        help="the run's config: its experiments without measurements are listed as not measured, "
                             "its shard layouts split the measured jobs (default: config/config.yaml; '': none)")
    parser.add_argument("--cores", type=int, nargs="+", default=list(DEFAULT_CORES))
    parser.add_argument("--layout", choices=LAYOUTS, default="local",
                        help="the experiments' wall times: sharded as a local run on each core count would shard "
                             "them (default), as a cluster run would, or not sharded")
    parser.add_argument("--startup-seconds", type=float, default=LOCAL_STARTUP_SECONDS,
                        help="a local job's start-up, in the measured walls and of each shard and merge of a "
                             f"local run (default {LOCAL_STARTUP_SECONDS:g}, measured)")
    parser.add_argument("--cluster-startup-seconds", type=float, default=SLURM_STARTUP_SECONDS,
                        help="a cluster job's start-up, in place of the local one in every job of a cluster run "
                             f"(default {SLURM_STARTUP_SECONDS:g}, measured on the one-machine Slurm)")
    parser.add_argument("--merge-seconds", type=float, default=MERGE_SECONDS,
                        help=f"a merge job's time beyond its start-up (default {MERGE_SECONDS:g}, measured)")
    parser.add_argument("--threads", action="append", default=[], metavar="RULE=N",
                        help="threads of a rule's jobs (default 1: every rule of this workflow declares threads: 1)")
    parser.add_argument("--markdown", help="also write the Markdown tables here")
    parser.add_argument("--csv", help="write the tables as CSV here")
    parser.add_argument("--jobs-csv", help="write the per-job measurements here")
    args = parser.parse_args(argv)
    try:
        if args.from_jobs:
            jobs = read_jobs_csv(Path(args.from_jobs))
        else:
            jobs = read_benchmarks(Path(args.results))
            if args.job_records:
                jobs = merge_records(jobs, read_job_records(Path(args.job_records)))
        threads = {}
        for item in args.threads:
            rule, _, value = item.partition("=")
            if not value.isdigit() or int(value) < 1:
                raise CostTableError(f"--threads takes RULE=N with N >= 1, got {item!r}")
            threads[rule] = int(value)
        startup_s = seconds_option("--startup-seconds", args.startup_seconds)
        merge_s = seconds_option("--merge-seconds", args.merge_seconds)
        runs = scenarios(startup_s, seconds_option("--cluster-startup-seconds", args.cluster_startup_seconds))
        jobs = with_threads(jobs, threads)
        cores = tuple(args.cores)
        if args.configfile and not Path(args.configfile).is_file():
            raise CostTableError(f"config file {args.configfile} does not exist (--configfile '' for none)")
        config = read_config(Path(args.configfile)) if args.configfile else None
        not_measured = tuple(run_plan(config, None).experiments) if config is not None else ()
        scheduled = {key: {k: with_threads(run, threads) for k, run in
                           scheduled_jobs(jobs, config, scenario, cores, measured_startup_s=startup_s,
                                          merge_s=merge_s).items()}
                     for key, scenario in runs.items()}
        rows = cost_rows(jobs, scheduled[args.layout], not_measured)
        run_rows = [run_row(scenario.name, scheduled[key]) for key, scenario in runs.items()]
    except CostTableError as error:
        print(f"cost_table: {error}", file=sys.stderr)
        return 2
    tables = markdown_table(rows, cores) + "\n" + run_table(run_rows, cores)
    notes = f"\nexperiments' wall times: {runs[args.layout].name}\n"
    for k, run in scheduled[args.layout].items():
        length, chain = critical_path(run)
        notes += f"critical path on {k} cores {length:.0f} s: {' -> '.join(chain)}\n"
    if config is None:
        notes += "no config: nothing is split into shards\n"
    if not any(job.after for job in jobs):
        notes += "no dependencies known (pass --job-records): the dependent steps are not on the critical path\n"
    print(tables + notes, end="")
    if args.markdown:
        write_text_atomically(tables, args.markdown)
    if args.csv:
        write_rows_csv(rows + run_rows, Path(args.csv))
    if args.jobs_csv:
        write_jobs_csv(jobs, Path(args.jobs_csv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
