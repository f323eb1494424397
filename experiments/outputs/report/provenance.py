"""The provenance of a page: the code's commit and state, the packages, the config's hash, the
seed, the date and the machine."""
from __future__ import annotations

import datetime
import hashlib
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

PACKAGES = ("numpy", "scipy", "pandas", "matplotlib", "snakemake", "pyyaml", "jinja2")
REPOSITORY = Path(__file__).resolve().parents[2]


def config_hash(config: dict) -> str:
    """sha256 of the config as canonical JSON (sorted keys, no whitespace)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def git_state(repository=REPOSITORY) -> tuple[str, str]:
    """(commit, "clean"/"dirty") of the code's repository; ("unknown", reason) without git.

    The generated outputs do not count: a run rewrites the committed results and figures
    (Snakemake deletes a job's outputs before it runs), which says nothing about the code."""
    try:
        commit = subprocess.run(["git", "-C", str(repository), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=20, check=True).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(repository), "status", "--porcelain", "--", ".", ":(exclude)results",
             ":(exclude)figures"], capture_output=True, text=True, timeout=20, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError) as error:
        return "unknown", f"no git information ({type(error).__name__})"
    return commit, ("dirty (uncommitted changes)" if status.strip() else "clean")


def package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def provenance(config: dict, *, now=None) -> dict:
    commit, tree = git_state()
    now = now or datetime.datetime.now(datetime.UTC)
    rebuilt = bool(config.get("from_committed"))
    # the switch changes what runs, not the results: the hash is the computing run's config's
    config = {key: value for key, value in config.items() if key != "from_committed"}
    return {
        "results": "drawn again from the committed results (make report)" if rebuilt else "computed by this run",
        "git commit": commit,
        "work tree": tree,
        **{name: package_version(name) for name in PACKAGES},
        "python": sys.version.split()[0],
        "seed": config.get("seed", "not set"),
        "config sha256": config_hash(config),
        "date (UTC)": now.isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "CPU count": os.cpu_count(),
    }
