"""Helpers of the cluster tests: working directories, the Snakemake commands (local and through
profiles/slurm), the Slurm accounting of a run, and the comparison of two runs' results."""
from __future__ import annotations

import csv
import gzip
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAKEFILE = REPO / "Snakefile"
SCRIPT = REPO / "scripts" / "slurm-local.sh"
# The test cluster's names (scripts/slurm-local.sh); a real cluster has its own.
PARTITION, ACCOUNT = "main", "default"


def copy_inputs(workdir: Path) -> Path:
    """A working directory with the repository's config/ and tests/data/ (the smoke config's
    tiny real-format files), as tests/workflow/test_workflow.py sets up."""
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "config", workdir / "config")
    shutil.copytree(REPO / "tests" / "data", workdir / "tests" / "data")
    return workdir


def snakemake_command(workdir: Path, *args, configfile=None) -> list[str]:
    command = [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "-d", str(workdir), *args]
    if configfile is not None:
        command += ["--configfile", str(configfile)]
    return command


def slurm_command(workdir: Path, *args, configfile=None) -> list[str]:
    """The cluster command of docs/cluster.md with the test cluster's partition and account. The plugin
    polls sacct 5 s after a submission instead of its default 40 s (a small test DAG waits on
    every poll; a shared cluster's admins prefer the default)."""
    return snakemake_command(
        workdir, "--profile", str(REPO / "profiles" / "slurm"),
        "--default-resources", f"slurm_partition={PARTITION}", f"slurm_account={ACCOUNT}",
        "--slurm-init-seconds-before-status-checks", "5", *args, configfile=configfile,
    )


def run(command, *, cwd, timeout, check=True) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def run_id(output: str) -> str:
    """The plugin's run id: every Slurm job of the run has it as its name."""
    match = re.search(r"SLURM run ID: (\S+)", output)
    assert match, output
    return match.group(1)


def submitted_jobs(output: str) -> list[tuple[str, str]]:
    """(rule, wildcard values joined by _) of every job Snakemake submitted (not the local
    target rule), as the plugin writes them into the Slurm comment."""
    jobs = []
    for block in re.split(r"\n(?=\[[^\n]*\]\n)", output):
        match = re.search(r"^(?:rule|checkpoint) (\S+):$", block, re.M)
        if not match:
            continue
        wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.M)
        values = [pair.split("=", 1)[1] for pair in wildcards.group(1).split(", ")] if wildcards else []
        jobs.append((match.group(1), "_".join(values).replace("/", "_")))
    return jobs


def sacct_jobs(cluster, name: str) -> list[dict]:
    """The run's Slurm jobs (allocations, not steps) from the accounting database."""
    result = cluster.run("sacct", "--name", name, "-X", "-n", "-P", "--starttime", "now-7days",
                         "-o", "JobIDRaw,State,Comment,ExitCode")
    jobs = []
    for line in result.stdout.splitlines():
        jobid, state, comment, exit_code = line.split("|", 3)
        match = re.fullmatch(r"rule_(.+?)(?:_wildcards_(.*))?", comment)
        assert match, f"job {jobid} has no rule in its comment: {comment!r}"
        jobs.append({"jobid": jobid, "state": state, "rule": match.group(1), "wildcards": match.group(2) or "",
                     "exit_code": exit_code})
    return jobs


def _csv_without(text: str, column: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    if rows and column in rows[0]:
        index = rows[0].index(column)
        rows = [row[:index] + row[index + 1:] for row in rows]
    return rows


def result_files(workdir: Path) -> list[str]:
    return sorted(p.relative_to(workdir).as_posix() for p in (workdir / "results").rglob("*")
                  if p.is_file() and (p.name.endswith(".csv") or p.name.endswith(".csv.gz")))


def differing_results(first: Path, second: Path) -> list[str]:
    """The result CSVs that differ: cells apart from runtime_s, audits apart from seconds, library
    comparisons apart from seconds_per_call, compressed cells decompressed, every other CSV
    (summaries, fidelity, Table 2, errata) byte for byte."""
    names = result_files(first)
    assert names == result_files(second), (set(names) ^ set(result_files(second)))
    differ = []
    for name in names:
        a, b = (first / name).read_bytes(), (second / name).read_bytes()
        if name.endswith(".gz"):
            same = gzip.decompress(a) == gzip.decompress(b)
        elif "/cells/" in name or name.startswith(("results/audit/", "results/libraries/")):
            # the only measured (not computed) columns: a cell's runtime_s, an audit's seconds, a
            # library comparison's seconds_per_call (scripts/compare_runs.py's MEASURED_COLUMNS)
            timing = ("runtime_s" if "/cells/" in name else
                      "seconds_per_call" if name.startswith("results/libraries/") else "seconds")
            same = _csv_without(a.decode(), timing) == _csv_without(b.decode(), timing)
        else:
            same = a == b
        if not same:
            differ.append(name)
    return differ
