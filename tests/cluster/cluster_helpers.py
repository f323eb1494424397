"""Helpers of the cluster tests: working directories, the Snakemake commands (local and through
profiles/slurm), the Slurm accounting of a run, and the comparison of two runs' results."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from testkit.workflow_runs import compare_runs

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
    if configfile is not None:  # one config file, or a list merged in order
        command += ["--configfile", *map(str, configfile if isinstance(configfile, list) else [configfile])]
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


def result_files(workdir: Path) -> list[str]:
    return sorted(p.relative_to(workdir).as_posix() for p in (workdir / "results").rglob("*")
                  if p.is_file() and (p.name.endswith(".csv") or p.name.endswith(".csv.gz")))


def differing_results(first: Path, second: Path) -> list[str]:
    """The result CSVs that differ, compared as scripts/compare_runs.py compares two runs: apart
    from their measured columns (a cell's runtime_s, an audit's seconds, a library comparison's
    seconds_per_call; compressed cells decompressed), every other CSV byte for byte."""
    names = result_files(first)
    assert names == result_files(second), (set(names) ^ set(result_files(second)))
    return [name for name in names if not compare_runs.same_file(name, first / name, second / name)]


def job_processes() -> list[tuple[int, str, str]]:
    """(pid, job id, command line) of every process carrying a Slurm job's id (SLURM_JOB_ID, or its
    older name SLURM_JOBID, as scripts/slurm-epilog.sh matches them): a job's processes, which must
    end with their job."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            variables = (proc / "environ").read_bytes().split(b"\0")
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # ended meanwhile, or not ours to read
            continue
        job = next((v.split(b"=", 1)[1].decode() for v in variables
                    if v.startswith((b"SLURM_JOB_ID=", b"SLURM_JOBID="))), None)
        if job is not None:
            found.append((int(proc.name), job, command))
    return found
