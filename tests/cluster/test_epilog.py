"""The test cluster's Epilog (scripts/slurm-epilog.sh) kills what an ended job left, and nothing
else. It needs no Slurm, so it runs in ``make test`` (no ``cluster`` marker)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from cluster_helpers import REPO

EPILOG = REPO / "scripts" / "slurm-epilog.sh"
# ignores SIGTERM, as the Snakemake job process left behind by a cancelled job did
STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"


def start(**variables) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLURM_")}
    # its own session, as a process orphaned by its job step is no longer its step's child
    return subprocess.Popen([sys.executable, "-c", STUBBORN], env={**env, **variables}, start_new_session=True)


def ended(process: subprocess.Popen, seconds: float = 10) -> bool:
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_the_epilog_kills_every_process_of_its_job_and_spares_other_jobs_and_itself():
    left = start(SLURM_JOB_ID="987654")
    old_name = start(SLURM_JOBID="987654")
    other_job = start(SLURM_JOB_ID="987655")
    no_job = start()
    try:
        time.sleep(0.5)  # their environments are readable once they run
        result = subprocess.run([str(EPILOG)], env={**os.environ, "SLURM_JOB_ID": "987654"},
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert ended(left) and left.returncode == -9
        assert ended(old_name) and old_name.returncode == -9
        assert f"job 987654: killing pid {left.pid}" in result.stderr
        assert not ended(other_job, 1) and not ended(no_job, 0)
        assert str(other_job.pid) not in result.stderr
    finally:
        for process in (left, old_name, other_job, no_job):
            process.kill()
            process.wait()


def test_the_epilog_without_a_job_id_stops_naming_it():
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLURM_")}
    missing = subprocess.run([str(EPILOG)], env=env, capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "SLURM_JOB_ID" in missing.stderr
    bad = subprocess.run([str(EPILOG)], env={**env, "SLURM_JOB_ID": "12; rm"}, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "SLURM_JOB_ID must be a job id, got '12; rm'" in bad.stderr
