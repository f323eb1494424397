"""What a full reproduction costs: core-hours per experiment and the wall time on k cores,
from the measurements of a finished run (issue 15 part 7; docs/cluster.md "Cost of a full reproduction").

Usage (from the repository root):

    python benchmarks/cost_table.py [RESULTS_DIR] [--job-records .snakemake/metadata]
        [--cores 2 16 64] [--markdown FILE] [--csv FILE] [--jobs-csv FILE]
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

The wall time on k cores is list scheduling of the measured jobs, as Snakemake runs them: a job
starts when its inputs exist and enough cores are free, the longest ready job first (the
workflow's ``priority`` orders cells by their estimated work, which is nearly the same order; the
other rules have priority 0). The lower bound is max(work / k, critical path).
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
from dataclasses import dataclass, field, replace
from pathlib import Path

from experiments.atomic import write_text_atomically
from experiments.workflow_plan import DEFAULT_CONFIG, load_config

DEFAULT_CORES = (2, 16, 64)
OTHER_STEPS = "other jobs (summaries, figures, report)"
REQUIRED_COLUMNS = ("s", "max_rss", "cpu_time")


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
    source: str = "benchmark"  # or "record" (Snakemake's job record: wall only)


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


def cost_row(name: str, jobs: list[Job], cores: tuple[int, ...]) -> dict:
    """One row of the table: jobs, core-hours, CPU-hours, the largest job, wall time on each k."""
    largest = max(jobs, key=lambda job: job.wall_s)
    cpu = [job.cpu_s for job in jobs if job.cpu_s is not None]
    rss = [job.max_rss_mb for job in jobs if job.max_rss_mb is not None]
    row = {"experiment": name, "jobs": len(jobs),
           "core_hours": sum(job.wall_s * job.threads for job in jobs) / 3600,
           "cpu_hours": sum(cpu) / 3600 if len(cpu) == len(jobs) else math.nan,
           "largest_job": largest.id, "largest_job_s": largest.wall_s,
           "peak_rss_mb": max(rss) if rss else math.nan}
    for k in cores:
        row[f"wall_s_{k}_cores"] = simulate(jobs, k)
        row[f"lower_bound_s_{k}_cores"] = lower_bound(jobs, k)
    return row


def cost_rows(
    jobs: list[Job], cores: tuple[int, ...] = DEFAULT_CORES, not_measured: tuple[str, ...] = ()
) -> list[dict]:
    """A row per group (experiment, audit, the other steps: each scheduled alone), a row per
    configured experiment without measurements, and the whole run (every job, with its
    dependencies)."""
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job.group, []).append(job)
    order = sorted(groups, key=lambda g: (g in ("audit", OTHER_STEPS), g == OTHER_STEPS))
    rows = [cost_row(name, groups[name], cores) for name in order]
    rows += [{"experiment": name, "jobs": "not measured here"} for name in not_measured if name not in groups]
    rows.append(cost_row("total", jobs, cores))
    return rows


def hours_minutes_seconds(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def markdown_table(rows: list[dict], cores: tuple[int, ...] = DEFAULT_CORES) -> str:
    """The table of docs/cluster.md: wall times as h:mm:ss, the total row's lower bounds in parentheses."""
    header = (["experiment", "jobs", "core-hours", "CPU-hours", "largest job (wall s, peak RSS GB)"]
              + [f"{k} cores" for k in cores])
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in rows:
        if row["jobs"] == "not measured here":
            cells = [row["experiment"], "not measured here"] + [""] * (len(header) - 2)
        else:
            total = row["experiment"] == "total"
            cpu = "" if math.isnan(row["cpu_hours"]) else f"{row['cpu_hours']:.3f}"
            rss = "" if math.isnan(row["peak_rss_mb"]) else f", {row['peak_rss_mb'] / 1000:.2f}"
            largest = row["largest_job"].split("/", 1)[-1] if not total else row["largest_job"]
            cells = [f"**{row['experiment']}**" if total else row["experiment"], str(row["jobs"]),
                     f"{row['core_hours']:.3f}", cpu, f"{largest} ({row['largest_job_s']:.0f}{rss})"]
            for k in cores:
                wall = hours_minutes_seconds(row[f"wall_s_{k}_cores"])
                cells.append(f"{wall} (>= {hours_minutes_seconds(row[f'lower_bound_s_{k}_cores'])})" if total else wall)
        lines.append("| " + " | ".join(cells) + " |")
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
    handle = io.StringIO(newline="")
    writer = csv.DictWriter(handle, fieldnames=list(rows[-1]))
    writer.writeheader()
    for row in rows:
        writer.writerow({c: (f"{v:.3f}" if isinstance(v, float) else v) for c, v in row.items()})
    write_text_atomically(handle.getvalue(), path)


def configured_experiments(configfile: Path) -> tuple[str, ...]:
    """The experiments a run with ``--configfile configfile`` runs: the file merged over the
    default config/config.yaml as the workflow merges it, and its run switch (docs/configuration.md)."""
    default = Path(DEFAULT_CONFIG)
    if default.is_file() and default.resolve() == configfile.resolve():
        config = load_config(default=default)
    else:
        config = load_config(configfile, default=default if default.is_file() else None)
    chosen = (config.get("run") or {}).get("experiments")
    return tuple(name for name in config.get("experiments") or {} if chosen is None or name in chosen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", default="results", help="results directory (default: results)")
    parser.add_argument("--job-records",
                        help="the same run's .snakemake/metadata (jobs without benchmark files, dependencies)")
    parser.add_argument("--from-jobs", help="read the per-job measurements from this CSV instead (see --jobs-csv)")
    parser.add_argument("--configfile", default="config/config.yaml",
                        help="its experiments without measurements are listed as not measured "
                             "(default: config/config.yaml)")
    parser.add_argument("--cores", type=int, nargs="+", default=list(DEFAULT_CORES))
    parser.add_argument("--threads", action="append", default=[], metavar="RULE=N",
                        help="threads of a rule's jobs (default 1: every rule of this workflow declares threads: 1)")
    parser.add_argument("--markdown", help="also write the Markdown table here")
    parser.add_argument("--csv", help="write the table as CSV here")
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
        jobs = [replace(job, threads=threads.get(job.rule, job.threads)) for job in jobs]
        cores = tuple(args.cores)
        not_measured = configured_experiments(Path(args.configfile)) if Path(args.configfile).is_file() else ()
        rows = cost_rows(jobs, cores, not_measured)
    except CostTableError as error:
        print(f"cost_table: {error}", file=sys.stderr)
        return 2
    table = markdown_table(rows, cores)
    length, chain = critical_path(jobs)
    notes = f"\ncritical path {length:.0f} s: {' -> '.join(chain)}\n"
    if not any(job.after for job in jobs):
        notes += "no dependencies known (pass --job-records): the dependent steps are not on the critical path\n"
    print(table + notes, end="")
    if args.markdown:
        write_text_atomically(table, args.markdown)
    if args.csv:
        write_rows_csv(rows, Path(args.csv))
    if args.jobs_csv:
        write_jobs_csv(jobs, Path(args.jobs_csv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
