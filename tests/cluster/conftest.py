"""A real single-node Slurm with accounting for the tests in this folder (docs/design.md §10):
``scripts/slurm-local.sh up`` once per session, ``down`` at its end, whatever the outcome.

These tests run with ``make test-cluster`` (marker ``cluster``; ``make test`` leaves them out:
they install packages and start daemons as root). Under CI (CI=true) they never skip: a machine
that cannot start the daemons fails them, with the daemons' logs. Elsewhere, without root,
apt-get or the Slurm plugin, they skip and say why.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster_helpers import SCRIPT, job_processes

# Slurm's default KillWait (30 s, SIGTERM to SIGKILL) and the Epilog after it
JOB_END_SECONDS = 60
SLURM_COMMANDS = ("munged", "mariadbd", "slurmdbd", "slurmctld", "slurmd", "sbatch", "sacct")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def cannot_run_reason() -> str | None:
    if os.geteuid() != 0:
        return "not root: scripts/slurm-local.sh installs Slurm with apt-get and starts its daemons"
    if not shutil.which("apt-get") and not all(shutil.which(command) for command in SLURM_COMMANDS):
        return "Slurm is not installed and there is no apt-get to install it (Debian/Ubuntu)"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return (f"snakemake-executor-plugin-slurm is not installed for {sys.executable} "
                "(pip install -r requirements.txt)")
    return None


@dataclass
class Cluster:
    state: Path
    env: dict

    def run(self, *command, check=True, timeout=120) -> subprocess.CompletedProcess:
        result = subprocess.run(list(command), env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def logs(self) -> str:
        return self.run(str(SCRIPT), "logs", check=False).stderr


@pytest.fixture(scope="session")
def slurm():
    reason = cannot_run_reason()
    if reason:
        if in_ci():
            pytest.fail(f"the Slurm cluster tests cannot run in CI: {reason}")
        pytest.skip(f"Slurm cluster tests skipped: {reason}")
    # under /tmp, readable by the munge and mysql users (pytest's own temporary folders are not)
    state = Path(tempfile.mkdtemp(prefix="slurm-local-", dir="/tmp"))
    state.chmod(0o755)
    cluster = Cluster(state=state, env={**os.environ, "SLURM_LOCAL_DIR": str(state)})
    up = cluster.run(str(SCRIPT), "up", check=False, timeout=1200)
    try:
        if up.returncode != 0:
            pytest.fail(f"scripts/slurm-local.sh up failed ({up.returncode}); its output and the daemons' logs:\n"
                        f"{up.stdout}\n{up.stderr}")
        yield cluster
    finally:
        down = cluster.run(str(SCRIPT), "down", check=False, timeout=300)
        status = cluster.run(str(SCRIPT), "status", check=False)
        if down.returncode != 0 or "running (pid" in status.stdout:
            pytest.fail(f"scripts/slurm-local.sh down left daemons running:\n{status.stdout}\n{down.stderr}")
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(autouse=True)
def no_job_process_left():
    """After each test, within a minute, no process of a Slurm job is left (a cancelled job's
    processes included: the test cluster's Epilog, scripts/slurm-epilog.sh, kills them). The
    allocation the tests themselves may run in is not one of them."""
    yield
    own = os.environ.get("SLURM_JOB_ID")
    deadline = time.monotonic() + JOB_END_SECONDS
    while (left := [p for p in job_processes() if p[1] != own]) and time.monotonic() < deadline:
        time.sleep(1)
    assert not left, "processes of ended Slurm jobs are still running:\n" + "\n".join(
        f"pid {pid} (job {job}): {command}" for pid, job, command in left)
