"""Every job asks for threads, memory and time that fit what it does (docs/design.md §10): the cell and
setting jobs' requests, from experiments/planning/resources.py with the margins of
experiments/planning/resources.py, cover the measured peaks and run times of docs/performance.md;
the shared-sample cache fits in the memory requested, and its size never changes results."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from experiments.engine.config import load_experiments
from experiments.engine.trials import run_cells
from experiments.planning import resources
from testkit.engine import run_one_cell

REPO = Path(__file__).resolve().parents[2]
# Python processes of a Slurm job besides the script: the plugin's job step and the rule's
# Snakemake, 186 MB each (sacct MaxRSS of the smoke run on scripts/slurm-local.sh).
SNAKEMAKE_MB = 2 * 186
# job -> (seconds on the slow day of docs/performance.md's tables, the script's peak RSS in MB or None)
MEASURED = {
    ("run_cell", "experiment=gaussian_A_low, cell=d=1024_rho=0.01"): (1251, 3350),
    ("run_cell", "experiment=gaussian_C_low, cell=d=1024_rho=0.01"): (1251, 3350),
    ("run_cell", "experiment=gaussian_C, cell=d=2048_rho=1"): (239, None),
    ("run_cell", "experiment=gaussian_A, cell=d=2048_rho=0.125"): (88, None),
    ("run_cell", "experiment=gaussian_A_corr, cell=d=2048_rho=0.125"): (102, None),
    ("run_cell", "experiment=gaussian_C_corr, cell=d=2048_rho=0.125"): (207, None),
    ("run_cell", "experiment=variance_study, cell=variance=1_rho=0.01"): (2, None),
    ("run_setting_binary_synthetic", "setting=d=2048_ratio=1"): (41, 500),
    ("run_setting_kosarak_shaped", ""): (818, 810),
    ("run_setting_pos_shaped", ""): (325, 560),
    # measured for this test on a loaded VM (Snakemake benchmark files): 41 s, 556 MB
    ("run_setting_userlevel_simplex", ""): (41, 556),
    ("run_setting_userlevel_geometric", ""): (29, 284),
}


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """(rule, wildcards) -> resources of every job of a dry run of the full config."""
    workdir = tmp_path_factory.mktemp("full")
    shutil.copytree(REPO / "config", workdir / "config")
    result = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
                             "-n"],
                            cwd=workdir, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = {}
    for rule, body in re.findall(r"^(?:rule|checkpoint) (\S+):\n((?:    .*\n)+)", result.stdout + result.stderr, re.M):
        if rule == "all":  # the target rule runs nothing
            continue
        wildcards = re.search(r"^    wildcards: (.*)$", body, re.M)
        values = dict(re.findall(r"(\w+)=([^,\s]+)", re.search(r"^    resources: (.*)$", body, re.M).group(1)))
        jobs[rule, wildcards.group(1) if wildcards else ""] = values
    return jobs


@pytest.fixture(scope="module")
def experiments():
    return load_experiments(yaml.safe_load((REPO / "config" / "config.yaml").read_text()))


def test_every_rule_declares_its_threads_memory_and_runtime():
    for path in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        blocks = re.split(r"^ *(?=(?:rule|checkpoint)\b)", path.read_text(), flags=re.M)[1:]
        for block in blocks:
            name = block.split(":", 1)[0]
            assert "threads:" in block and "mem_mb=" in block and "runtime=" in block, f"{path.name}: {name}"


def test_every_planned_job_of_the_full_config_has_a_memory_and_runtime_request(planned):
    assert len(planned) > 200
    for job, values in planned.items():
        assert int(values["mem_mb"]) >= 700 and int(values["runtime"]) >= 5, job


@pytest.mark.parametrize("job", sorted(MEASURED), ids=lambda job: f"{job[0]}[{job[1]}]")
def test_a_cell_or_setting_job_asks_for_its_measured_peak_and_time_with_room_to_spare(planned, job):
    measured_seconds, script_mb = MEASURED[job]
    mem_mb, runtime = int(planned[job]["mem_mb"]), int(planned[job]["runtime"])
    if script_mb is not None:
        needed = script_mb + SNAKEMAKE_MB
        assert needed <= mem_mb <= 2 * needed, (mem_mb, needed)
    # a day twice as slow as the measured slow day still fits; no request is far above the need
    assert 2 * measured_seconds <= 60 * runtime <= max(5 * 60, 20 * measured_seconds), (runtime, measured_seconds)


def test_the_largest_cell_asks_for_about_the_4_gb_it_was_given_before(planned):
    mem_mb = int(planned["run_cell", "experiment=gaussian_A_low, cell=d=1024_rho=0.01"]["mem_mb"])
    assert 4000 <= mem_mb <= 5500


def test_the_cache_of_every_cell_and_setting_job_holds_what_it_wants_within_its_request(planned, experiments):
    checked = 0
    for (rule, wildcards), values in planned.items():
        if not rule.startswith("run_"):
            continue
        names = dict(pair.split("=", 1) for pair in wildcards.split(", ")) if wildcards else {}
        experiment = names.get("experiment", rule.removeprefix("run_setting_"))
        spec = experiments[experiment]
        cells = [spec.cell(names["cell"])] if "cell" in names else spec.settings()[names.get("setting", "")]
        held, wanted = resources.memory_parts(spec, cells)
        granted = int(values["mem_mb"]) * resources.MIB
        assert resources.cache_bytes(spec, cells, int(values["mem_mb"])) >= wanted, (rule, wildcards)
        assert held + wanted <= granted
        checked += 1
    assert checked > 150


def test_the_cache_shrinks_with_the_memory_granted_and_is_never_negative(experiments):
    spec = experiments["gaussian_A_low"]
    cells = [spec.cell("d=1024_rho=0.01")]
    sizes = [resources.cache_bytes(spec, cells, mem_mb) for mem_mb in (100, 1000, 3000, 5000)]
    assert sizes[0] == sizes[1] == 0 and 0 < sizes[2] < sizes[3]


CACHE_CONFIG = {
    "seed": 7,
    "experiments": {
        "dense": {"data": {"source": "gaussian_a", "n": 400}, "grid": {"d": [16], "rho": [0.5, 1.0]}, "trials": 2,
                  "mechanisms": [{"PLAN": {"algorithm": "plan_gaussian", "accounting": "published"}},
                                 {"PLAN-exact": {"algorithm": "plan_gaussian", "accounting": "exact"}},
                                 {"noscale": {"algorithm": "plan_noscale", "accounting": "published"}}, "iome"]},
        "sparse": {"data": {"source": "binary_synthetic", "n": 300, "d": 64},
                   "grid": {"ratio": [0.5], "rho": [0.5, 1.0]},
                   "trials": 2, "metric": "l1_half", "share_rho": True,
                   "mechanisms": [{"IOME-binary": {"algorithm": "iome", "search_steps": 10}},
                                  {"PLAN-binary": {"algorithm": "plan_binary", "variant": "paper"}}]},
    },
}


@pytest.mark.parametrize("experiment", ["dense", "sparse"])
def test_a_job_with_no_cache_room_writes_the_same_cells_as_one_with_a_full_cache(experiment):
    spec = load_experiments(CACHE_CONFIG)[experiment]
    cells = spec.cells()
    tables = []
    for cache in (None, 0):
        frames = run_cells(spec, cells, seed=7, log=None, cache_bytes=cache)
        tables.append({cell: frame.drop(columns="runtime_s").to_csv(index=False) for cell, frame in frames.items()})
    assert tables[0] == tables[1]
    one = run_one_cell(spec, cells[0], seed=7, log=None, cache_bytes=0)
    assert one.drop(columns="runtime_s").to_csv(index=False) == tables[0][cells[0].id]
