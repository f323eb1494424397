"""`make report` (docs/workflow.md#rebuilding-from-the-committed-results) on what a clean clone has:
every tracked file of the repository, copied. It draws every figure, table, the errata, the
scorecard and the report again from the committed results, runs no job that computes them, and
every committed file under results/ and figures/ comes out as committed (scripts/compare_runs.py:
the report's measured run times and provenance aside). When this fails, the committed outputs
disagree with each other or with the code: run `make report` and commit what it rewrote."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testkit.workflow_runs import compare_runs, planned_jobs

REPO = Path(__file__).resolve().parents[2]
# the rules that compute results: a rebuild from the committed results defines none of them
COMPUTING_RULES = ("run_cell", "run_shard", "summarise", "audit", "audit_table", "audit_power", "audit_power_table",
                   "library_comparison", "fetch_dataset", "parse_dataset", "dataset_record", "run_times")


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name]


def copy_files(names, target: Path) -> None:
    for name in names:
        if (REPO / name).is_file():  # a tracked file deleted in the working tree is no clone's either
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    """(clone, committed, the run, the time it started): a copy of the tracked files after `make report`,
    and the committed results/ and figures/ as they were."""
    root = tmp_path_factory.mktemp("rebuild")
    clone, committed = root / "clone", root / "committed"
    names = tracked_files()
    copy_files(names, clone)
    copy_files([name for name in names if name.split("/")[0] in ("results", "figures")], committed)
    venv = Path(sys.prefix)
    started = time.time()
    # the venv this test runs in (not one of the clone's own; -o: never rebuild it here)
    run = subprocess.run(["make", "-o", f"{venv}/.installed", "report", f"VENV={venv}"], cwd=clone,
                         env={**os.environ, "PYTHONPATH": str(clone)}, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, f"make report failed:\n{run.stdout[-4000:]}\n{run.stderr[-8000:]}"
    return clone, committed, run, started


def test_make_report_runs_no_job_that_computes_results(rebuilt):
    _, _, run, _ = rebuilt
    output = run.stdout + run.stderr
    assert planned_jobs(run, "report_page") == 1 and planned_jobs(run, "scorecard") == 1
    assert {rule: planned_jobs(run, rule) for rule in COMPUTING_RULES} == dict.fromkeys(COMPUTING_RULES, 0), output


def test_make_report_rewrites_every_committed_figure(rebuilt):
    clone, _, _, started = rebuilt
    stale = [path.name for path in (clone / "figures").iterdir() if path.stat().st_mtime < started]
    assert stale == [], "committed figures the workflow no longer draws"


def test_make_report_reproduces_every_committed_output(rebuilt):
    clone, committed, _, _ = rebuilt
    differences = compare_runs.differences(committed, clone)
    assert differences == [], "run `make report` and commit what it rewrote:\n" + "\n".join(differences)
