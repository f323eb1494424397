"""Snakemake runs of the repository's workflow in a temporary folder, the tiny config they use, and
scripts/compare_runs.py (a script, not a package module) to compare two runs."""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
SNAKEFILE = REPO / "Snakefile"

_compare_runs_spec = importlib.util.spec_from_file_location("compare_runs", REPO / "scripts" / "compare_runs.py")
compare_runs = importlib.util.module_from_spec(_compare_runs_spec)
_compare_runs_spec.loader.exec_module(compare_runs)

TINY = {
    "seed": 11,
    "experiments": {
        "tiny": {
            "data": {"source": "gaussian_a", "n": 300},
            "grid": {"d": [8, 16], "rho": [0.5, 1.0]},
            "trials": 2,
            "mechanisms": [
                {"PLAN": {"algorithm": "plan_gaussian", "accounting": "published"}}, "iome", "empirical_mean"
            ],
        }
    },
}


def snakemake(workdir, *args, configfile=None, check=True, timeout=900):
    command = [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "-d", str(workdir), *args]
    if configfile is not None:
        command += ["--configfile", str(configfile)]
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def write_config(workdir, config):
    path = Path(workdir) / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def planned_jobs(result, rule):
    """Jobs of ``rule`` in a dry run's job-stats table (0 if none)."""
    match = re.search(rf"^{rule}\s+(\d+)\s*$", result.stdout + result.stderr, re.M)
    return int(match.group(1)) if match else 0
