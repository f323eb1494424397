"""Fixtures shared by several test modules."""
import shutil

import pytest

from testkit.workflow_runs import REPO, snakemake


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """The working directory of one run of the whole workflow on config/smoke.yaml (with the
    tiny real-format files the smoke config reads through `path:`), made once per session for
    the tests of its outputs (tests/workflow/test_workflow.py) and of its report page in a browser
    (tests/experiments/test_report_browser.py)."""
    workdir = tmp_path_factory.mktemp("smoke_run")
    shutil.copytree(REPO / "config", workdir / "config")
    shutil.copytree(REPO / "tests" / "data", workdir / "tests" / "data")
    snakemake(workdir, "--cores", "2", configfile=workdir / "config" / "smoke.yaml")
    return workdir
