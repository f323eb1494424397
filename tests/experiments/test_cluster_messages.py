"""A Slurm job killed for its memory or time request ends the run with one line naming the rule
and the resource (experiments/planning/cluster.py, the Snakefile's onerror hook); other failures add none.
The logs here are shaped like those of snakemake-executor-plugin-slurm and Slurm 22.05 (the live
case is tests/cluster/test_faults.py)."""
import io

import pytest

from experiments.planning.cluster import report_resource_failures, resource_failures

JOB = """localrule run_cell:
    output: results/big/cells/d=1024_rho=0.5.csv
    log: logs/big/cells/d=1024_rho=0.5.log
    jobid: 0
    wildcards: experiment=big, cell=d=1024_rho=0.5
    resources: tmpdir=/tmp, mem_mb=600, mem=600 MB, mem_mib=573, slurm_partition=main, runtime=5
"""
KILLS = {
    "memory, jobacct_gather": "slurmstepd-vm: error: StepId=86.0 exceeded memory limit (841216000 > 629145600), "
                              "being killed\n"
                              "srun: error: vm: task 0: Killed\n",
    "memory, cgroup": "slurmstepd: error: Detected 1 oom_kill event in StepId=86.0. "
                      "Some of the step tasks have been OOM Killed.\n",
    "time": "slurmstepd-vm: error: *** STEP 86.0 ON vm CANCELLED AT 2026-11-23T01:20:56 DUE TO TIME LIMIT ***\n",
    "other": "Traceback (most recent call last):\nValueError: rho must be > 0, got rho=-1\n",
}


def snakemake_log(slurm_log):
    return (f"Job 2 has been submitted with SLURM jobid 86 (log: {slurm_log}).\n"
            "Error in rule run_cell:\n"
            "    message: SLURM-job '86' failed, SLURM status is: 'FAILED'. Reason: Unknown.\n"
            f"    log: logs/big/cells/d=1024_rho=0.5.log, {slurm_log} (check log file(s) for error details)\n"
            "    external_jobid: 86\n")


@pytest.fixture
def failed_run(tmp_path):
    def write(kill):
        slurm_log = tmp_path / "slurm_logs" / "rule_run_cell" / "big_d=1024_rho=0.5" / "86.log"
        slurm_log.parent.mkdir(parents=True, exist_ok=True)
        slurm_log.write_text(JOB + KILLS[kill])
        return snakemake_log(slurm_log)
    return write


def test_a_job_over_its_memory_names_the_rule_the_request_and_what_it_reached(failed_run):
    [message] = resource_failures(failed_run("memory, jobacct_gather"))
    assert message == ("rule run_cell (experiment=big, cell=d=1024_rho=0.5), Slurm job 86: out of memory: it reached "
                       "802 MiB, over its request mem_mb=600 (MiB); "
                       "ask for more, e.g. --set-resources run_cell:mem_mb=1100")


def test_a_job_killed_by_the_oom_killer_under_cgroups_is_out_of_memory_too(failed_run):
    [message] = resource_failures(failed_run("memory, cgroup"))
    assert "run_cell" in message and "out of memory" in message and "mem_mb=600" in message
    assert message.endswith("--set-resources run_cell:mem_mb=1200")


def test_a_job_over_its_time_limit_names_the_rule_and_runtime(failed_run):
    [message] = resource_failures(failed_run("time"))
    assert "rule run_cell (experiment=big, cell=d=1024_rho=0.5)" in message
    assert "out of time" in message and "runtime=5 (minutes)" in message and message.endswith("run_cell:runtime=10")


def test_a_job_that_failed_for_another_reason_adds_no_line(failed_run):
    assert resource_failures(failed_run("other")) == []


def test_the_hook_prints_one_line_per_failed_job_and_ignores_missing_logs(failed_run, tmp_path):
    log = tmp_path / "run.log"
    log.write_text(failed_run("time") + snakemake_log(tmp_path / "gone.log").replace("86", "87"))
    stream = io.StringIO()
    report_resource_failures([str(log), str(tmp_path / "no-such.log")], stream)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("CLUSTER RESOURCES: rule run_cell")
