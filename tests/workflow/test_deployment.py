"""The workflow deployed as a Snakemake module, and its rules' conda environment (docs/deployment.md).

An empty folder gets what a deployment has: a Snakefile with the `module` directive pointing at this
repository's Snakefile, its own config/ (the default config.yaml and the smoke overlay, given with
--configfile and merged over it) and the tiny real-format files the smoke config reads (tests/data/),
nothing else: no config/reference/ (the published numbers are read from the workflow's copy,
workflow/rules/paths.smk). Snakemake runs there without --use-conda and with a `conda` on the PATH
that records every call and fails: every rule names workflow/envs/plan.yaml, and Snakemake reads that
file but must never call conda. What runs: a dry run of the whole smoke config, the dry run with
--use-conda as the control that the recording conda is called, and the whole smoke config, whose
outputs must equal those of the smoke run in the repository (scripts/compare_runs.py).
"""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.workflow_runs import REPO, compare_runs, planned_jobs

CONDA_FRONTENDS = ("conda", "mamba", "micromamba")

DEPLOYMENT_SNAKEFILE = """\
configfile: "config/config.yaml"


module plan:
    snakefile:
        "{snakefile}"
    config:
        config


use rule * from plan
"""


def _path_without_conda():
    """PATH less every folder that holds a conda frontend."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    kept = [f for f in folders if f and not any((Path(f) / name).exists() for name in CONDA_FRONTENDS)]
    return os.pathsep.join(kept)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """(folder, environment, conda call log) of a module deployment with a recording `conda`."""
    root = tmp_path_factory.mktemp("deployment")
    folder = root / "deployed"
    (folder / "config").mkdir(parents=True)
    for name in ("config.yaml", "smoke.yaml"):
        shutil.copy(REPO / "config" / name, folder / "config" / name)
    shutil.copytree(REPO / "tests" / "data", folder / "tests" / "data")
    (folder / "Snakefile").write_text(DEPLOYMENT_SNAKEFILE.format(snakefile=REPO / "Snakefile"))
    fake = root / "bin"
    fake.mkdir()
    calls = root / "conda-calls.log"
    for name in CONDA_FRONTENDS:
        script = fake / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\nexit 1\n')
        script.chmod(0o755)
    env = {**os.environ, "PATH": os.pathsep.join([str(fake), _path_without_conda()])}
    return folder, env, calls


def run(deployment, *args, timeout=600):
    folder, env, _ = deployment
    # no -s: Snakemake reads the deployment's own Snakefile, as a user's `snakemake` would
    command = [sys.executable, "-m", "snakemake", "--configfile", "config/smoke.yaml", *args]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_path_of_the_tests_has_no_real_conda_but_the_recording_one(deployment):
    _, env, _ = deployment
    found = [shutil.which(name, path=env["PATH"]) for name in CONDA_FRONTENDS]
    assert all(path and Path(path).read_text().startswith("#!/bin/sh\necho") for path in found), found


def test_deployed_module_plans_the_whole_smoke_config_without_the_reference_folder(deployment):
    folder, _, calls = deployment
    result = run(deployment, "-n", "--cores", "1")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert not (folder / "config" / "reference").exists()
    # every stage, the ones reading the published numbers included, from the module's rules
    for rule in ("run_cell", "summarise", "fidelity", "table2", "table2_erratum", "scorecard", "report_page"):
        assert planned_jobs(result, rule) >= 1, (rule, output)
    for name in ("published_table2.csv", "published_gaussian_A_medians.csv"):
        assert str(REPO / "config" / "reference" / name) in output, name
    assert not calls.exists(), calls.read_text()


def test_with_use_conda_snakemake_does_call_conda(deployment):
    # the control: the recording conda would have caught a call (here `conda info`, which it fails)
    _, _, calls = deployment
    result = run(deployment, "-n", "--cores", "1", "--use-conda", "figures/userlevel_worst_case.png")
    assert result.returncode != 0
    assert calls.exists() and re.search(r"^conda ", calls.read_text(), re.M), result.stdout + result.stderr
    calls.unlink()


def test_deployed_module_runs_the_smoke_config_without_use_conda_as_the_repository_does(deployment, smoke_run):
    folder, _, calls = deployment
    result = run(deployment, "--cores", "2", timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not calls.exists(), f"Snakemake called conda without --use-conda:\n{calls.read_text()}"
    assert compare_runs.differences(smoke_run, folder) == []
    # The jobs did run under the rules' conda: directive: Snakemake recorded the env file's text with
    # each output (it reads the file, and only --use-conda deploys it).
    records = [json.loads(path.read_text()) for path in (folder / ".snakemake" / "metadata").iterdir()]
    recorded = [r["conda_env"] for r in records if r.get("rule") == "worst_case_figure"]
    assert len(recorded) == 2  # the PNG and the PDF
    env_file = REPO / "workflow" / "envs" / "plan.yaml"
    assert all(base64.b64decode(text) == env_file.read_bytes() for text in recorded)


def test_deployment_page_shows_the_snakefile_the_test_deploys():
    # docs/deployment.md's example is this test's Snakefile, with a placeholder for the path
    page = (REPO / "docs" / "deployment.md").read_text()
    example = DEPLOYMENT_SNAKEFILE.format(snakefile="/path/to/plan-reproduction/Snakefile")
    assert example in page
