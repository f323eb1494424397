"""A job's log under logs/ holds its own lines and, when it fails, its Python traceback: every
workflow script sends its stderr into the log first thing, and the job functions append to
the same file instead of overwriting it; the failure's last line also reaches the console."""
import ast

import pandas as pd
import pytest

from experiments.jobs.audit import audit_table_job
from testkit.real_data import dead_url, path_source, pos_file, real_config, url_source
from testkit.workflow_runs import REPO, snakemake, write_config

SCRIPTS = sorted((REPO / "workflow" / "scripts").glob("*.py"))
REDIRECT = 'sys.stderr = open(snakemake.log[0], "a", buffering=1)'


def test_a_failing_job_leaves_its_traceback_after_its_progress_lines_in_its_log(tmp_path):
    raw = pos_file(tmp_path / "BMS-POS.csv")
    configfile = write_config(tmp_path, real_config(sources=[path_source(raw), url_source(dead_url())]))
    snakemake(tmp_path, "--cores", "2", "results/real/summary.csv", configfile=configfile)
    # A corrupt processed file: the setting job reruns (its input is newer) and raises while loading it.
    (tmp_path / "datasets/processed/pos.npz").write_text("not an npz archive\n")
    result = snakemake(tmp_path, "--cores", "2", "results/real/summary.csv", configfile=configfile, check=False)
    assert result.returncode != 0
    log_path = "logs/real/settings/all.log"
    assert log_path in result.stdout + result.stderr  # Snakemake points to it
    lines = (tmp_path / log_path).read_text().splitlines()
    assert lines[0].startswith("mem_mb="), lines  # the job's own first line, not overwritten
    assert "Traceback (most recent call last):" in lines[1:]
    assert lines[-1].startswith("datasets.real.catalog.DatasetError: processed dataset 'pos' has an unreadable"), \
        lines[-1]
    assert "in run_cells_job" in "\n".join(lines)
    # and the failure's last line on the console, not only in the log
    assert ("error: DatasetError: processed dataset 'pos' has an unreadable" in result.stderr
            and f"(traceback in {log_path})" in result.stderr), result.stderr[-2000:]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_every_workflow_script_sends_its_stderr_to_its_log_before_importing_anything_else(script):
    statements = ast.parse(script.read_text()).body
    found = [i for i, node in enumerate(statements) if ast.dump(node) == ast.dump(ast.parse(REDIRECT).body[0])]
    assert found, f"{script.name} does not send its stderr to its log ({REDIRECT})"
    redirect = found[0]
    imported = [alias.name for node in statements[:redirect] if isinstance(node, ast.Import) for alias in node.names]
    assert all(isinstance(node, ast.Import) for node in statements[:redirect]), script.name
    assert set(imported) <= {"os", "sys"}, imported  # the standard library only: nothing that can fail
    # then the console line of a failure (experiments.engine.joblog.console_errors), before anything else runs
    following = [ast.unparse(node) for node in statements[redirect + 1:redirect + 3]]
    assert following == ["from experiments.engine.joblog import console_errors", "console_errors(snakemake.log[0])"], \
        following


def test_a_job_appends_to_its_log_so_stderr_lines_written_before_and_after_stay(tmp_path):
    rows = tmp_path / "one.csv"
    pd.DataFrame([{"name": "gauss", "violation": False, "control_violation": True}]).to_csv(rows, index=False)
    log = tmp_path / "logs" / "table.log"
    log.parent.mkdir()
    with open(log, "a", buffering=1) as stderr:  # as the workflow scripts open it
        print("a warning", file=stderr)
        audit_table_job(rows=[rows], output=tmp_path / "audit.csv", log=log)
        print("Traceback (most recent call last):", file=stderr)
    assert log.read_text().splitlines() == [
        "a warning",
        "1 audits; violations: none; controls not flagged: none",
        "Traceback (most recent call last):",
    ]
