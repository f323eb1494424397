"""Faults on the cluster (docs/design.md §10): a cell job cancelled while it runs is retried (the
profile's ``retries``) and the results equal an undisturbed run's; a job over its memory request
is killed by Slurm and the run ends naming the rule and the resource."""
from __future__ import annotations

import subprocess
import time

import pytest
import yaml

from cluster_helpers import differing_results, run, run_id, sacct_jobs, slurm_command, snakemake_command

pytestmark = pytest.mark.cluster

# One slow cell (about 15 s of work: cancelled while it computes) and a quick one.
SLOW = {
    "seed": 5,
    "experiments": {
        "slow": {
            "data": {"source": "gaussian_a", "n": 20000},
            "grid": {"d": [8, 512], "rho": [0.5]},
            "trials": 6,
            "mechanisms": [{"PLAN": {"algorithm": "plan_gaussian", "accounting": "exact"}}, "iome"],
        }
    },
}
SLOW_CELL = "results/slow/cells/d=512_rho=0.5.csv"
SLOW_LOG = "logs/slow/cells/d=512_rho=0.5.log"
TARGET = "results/slow/summary.csv"

# One cell whose data alone (n x d x 8 bytes = 410 MB) exceed a 600 MiB request with the job's
# Python processes.
BIG = {
    "seed": 3,
    "experiments": {
        "big": {
            "data": {"source": "gaussian_a", "n": 50000},
            "grid": {"d": [1024], "rho": [0.5]},
            "trials": 2,
            "mechanisms": [{"PLAN": {"algorithm": "plan_gaussian", "accounting": "exact"}}, "iome"],
        }
    },
}
BIG_CELL = "results/big/cells/d=1024_rho=0.5.csv"


def write_config(workdir, config):
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def squeue(slurm):
    """(jobid, state, comment) of the cluster's queued and running jobs."""
    lines = slurm.run("squeue", "-h", "-o", "%A|%T|%k").stdout.splitlines()
    return [tuple(line.split("|", 2)) for line in lines]


def test_a_cell_job_cancelled_while_it_runs_is_retried_and_the_results_equal_an_undisturbed_run(slurm, tmp_path):
    local, cluster = tmp_path / "local", tmp_path / "slurm"
    run(snakemake_command(local, "--cores", "1", TARGET, configfile=write_config(local, SLOW)), cwd=local, timeout=600)
    command = slurm_command(cluster, TARGET, configfile=write_config(cluster, SLOW))
    with subprocess.Popen(command, cwd=cluster, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        cancelled, deadline = None, time.monotonic() + 300
        while cancelled is None and time.monotonic() < deadline and process.poll() is None:
            # cancel the slow cell's job once its script has started computing (it opened its log)
            running = [job for job, state, comment in squeue(slurm)
                       if state == "RUNNING" and comment.endswith("_wildcards_slow_d=512_rho=0.5")]
            if running and (cluster / SLOW_LOG).exists():
                time.sleep(1)
                slurm.run("scancel", running[0])
                cancelled = running[0]
            time.sleep(0.5)
        try:
            output, _ = process.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
            pytest.fail(f"Snakemake did not finish within 10 minutes of the cancellation:\n{output}")
    assert cancelled, f"the slow cell's job was never seen running:\n{output}"
    assert process.returncode == 0, output
    jobs = [job for job in sacct_jobs(slurm, run_id(output)) if job["wildcards"] == "slow_d=512_rho=0.5"]
    states = {job["jobid"]: job["state"] for job in jobs}
    assert states[cancelled].startswith("CANCELLED"), states
    assert [state for jobid, state in states.items() if jobid != cancelled] == ["COMPLETED"], states
    assert "Trying to restart job" in output
    assert differing_results(local, cluster) == []
    assert (cluster / SLOW_CELL).is_file()


def test_a_cell_job_over_its_memory_request_fails_naming_the_rule_and_mem_mb(slurm, tmp_path):
    # --retries 0: the profile's two retries would repeat the same kill with the same request
    command = slurm_command(tmp_path, "--set-resources", "run_cell:mem_mb=600", "--retries", "0", BIG_CELL,
                            configfile=write_config(tmp_path, BIG))
    result = run(command, cwd=tmp_path, timeout=600, check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    lines = [line for line in output.splitlines() if line.startswith("CLUSTER RESOURCES:")]
    assert len(lines) == 1, output
    assert "rule run_cell (experiment=big, cell=d=1024_rho=0.5)" in lines[0]
    assert "out of memory" in lines[0] and "mem_mb=600" in lines[0] and "--set-resources run_cell:mem_mb=" in lines[0]
    assert [job["state"] for job in sacct_jobs(slurm, run_id(output))] in (["FAILED"], ["OUT_OF_MEMORY"])
    assert not (tmp_path / BIG_CELL).exists()
