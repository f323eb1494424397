"""The Snakemake workflow end to end, through `python -m snakemake` in temporary directories
(docs/design.md §9, §11): lint, dry run, the smoke run, determinism, interruption, bad configs and
incremental grids."""
import copy
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml

from experiments.planning.config_files import load_config
from testkit.workflow_runs import REPO, SNAKEFILE, TINY, planned_jobs, snakemake, write_config


@pytest.fixture
def repo_copy(tmp_path):
    """A working directory with the repository's config folder, as a user would have."""
    shutil.copytree(REPO / "config", tmp_path / "config")
    return tmp_path


def test_lint_finds_nothing():
    # every rule names its conda environment (workflow/envs/plan.yaml, docs/deployment.md): no lint is left
    result = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], cwd=REPO, capture_output=True, text=True)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Lints for" not in output, output
    assert "Congratulations, your workflow is in a good condition!" in output, output


CAPTIONS = REPO / "workflow" / "report"


def caption_phrase(path):
    """The start of a caption's first line without a template expression, as the report shows it."""
    lines = [line for line in path.read_text().splitlines() if line.strip() and "{" not in line]
    return re.match(r"[A-Za-z0-9 ,.:()=/-]+", lines[0]).group(0)[:40].strip()


def test_snakemake_report_of_the_smoke_run_shows_every_figure_and_table_with_its_caption(smoke_run, tmp_path):
    # Snakemake's own report (`snakemake --report`), beside the project's page results/report.html
    rules = "\n".join(path.read_text() for path in (REPO / "workflow" / "rules").glob("*.smk"))
    captions = sorted(CAPTIONS.glob("*.rst"))
    assert len(captions) > 10
    for caption in captions:  # each caption file is used, by a report(...) output or the report: directive
        assert f'"../report/{caption.name}"' in rules, caption.name
    report = tmp_path / "report.zip"
    snakemake(smoke_run, "--report", str(report), configfile=smoke_run / "config" / "smoke.yaml")
    with zipfile.ZipFile(report) as archive:
        page = archive.read("report/report.html").decode()
    for caption in captions:
        assert caption_phrase(caption) in page, caption.name
    # every figure the run drew (its PNG; the PDFs are the same figures) and every table a reader looks at
    config = load_config(smoke_run / "config" / "smoke.yaml", default=smoke_run / "config" / "config.yaml")
    shown = [path.name for path in (smoke_run / "figures").glob("*.png")]
    shown += ["scorecard.csv", "claims.csv", "table2.csv", "table2_erratum.csv", "accounting.csv", "audit.csv",
              "power_curves.csv"]
    shown += [f"{experiment}.csv" for experiment in config["fidelity"]]
    assert len(shown) > 20
    for name in shown:
        assert f'"{name}"' in page, name
    categories = ["Paper figures", "Extended figures", "Errata figures", "Privacy audit", "Fidelity tables",
                  "Table 2", "Scorecard", "Illustrations", "Summaries"]
    for category in categories:
        assert category in page, category


def test_dry_run_of_the_full_config_plans_one_job_per_cell_or_setting(repo_copy):
    result = snakemake(repo_copy, "-n")
    with open(REPO / "config" / "config.yaml") as handle:
        from experiments.engine.config import load_experiments

        experiments = load_experiments(yaml.safe_load(handle))
    shared = {name: spec for name, spec in experiments.items() if spec.share_rho}
    userlevel = {"userlevel_geometric", "userlevel_extreme", "userlevel_simplex", "userlevel_zipf"}
    libraries = {"libraries_binary", "libraries_pos_shaped", "libraries_pos", "libraries_kosarak"}
    iome = {"iome_rho", "iome_mnist", "iome_mnist_mvcrec", "iome_mnist_shaped", "iome_mnist_shaped_mvcrec",
            "iome_local_eps"}
    assert set(shared) == {"binary_synthetic", "kosarak_shaped", "pos_shaped", "kosarak", "pos", *userlevel, *libraries,
                           *iome}
    assert all(experiments[name].batch_size == 10_000 for name in userlevel)
    unshared_cells = sum(len(spec.cells()) for name, spec in experiments.items() if name not in shared)
    assert planned_jobs(result, "run_cell") == unshared_cells
    # The real datasets' jobs join the DAG once the fetch checkpoint has found the files.
    real = {name for name, spec in experiments.items() if spec.dataset}
    assert real == {"kosarak", "pos", "libraries_pos", "libraries_kosarak", "iome_mnist", "iome_mnist_mvcrec"}
    assert planned_jobs(result, "fetch_dataset") == 3  # one per configured dataset: Kosarak, POS and MNIST
    for name, spec in shared.items():
        assert planned_jobs(result, f"run_setting_{name}") == (0 if name in real else len(spec.settings()))
    assert planned_jobs(result, "run_setting_binary_synthetic") == 4 * 5
    assert planned_jobs(result, "summarise") == len(experiments) - len(real)
    output = result.stdout + result.stderr
    # Largest jobs first: the Kosarak-shaped setting (every rho at 75,462 x 27,983) gets the
    # highest priority; among the cells the n = 100000, d = 1024 ones, Table 2's the lowest.
    setting_jobs = re.findall(r"rule (run_setting_\w+):\n(?:.*\n)*?\s+priority: (\d+)", output)
    jobs = {rule: int(value) for rule, value in setting_jobs}
    cell_jobs = re.findall(r"wildcards: experiment=(\w+), cell=(\S+)\n\s+priority: (\d+)", output)
    priorities = {(experiment, cell): int(value) for experiment, cell, value in cell_jobs}
    assert len(priorities) == unshared_cells
    ranked = sorted(priorities, key=priorities.get)
    assert ranked[-1] in {("gaussian_A_low", "d=1024_rho=0.01"), ("gaussian_C_low", "d=1024_rho=0.01")}
    assert ranked[0][0] == "variance_study"
    assert jobs["run_setting_kosarak_shaped"] > max(priorities.values())


def test_a_given_config_file_is_merged_over_the_default_config_and_its_run_switch_chooses(repo_copy):
    """--configfile merges over config/config.yaml (dicts key by key): gaussian_A keeps the default
    config's data and grid with the given trials, and the run switch leaves everything else out."""
    overlay = {"experiments": {"gaussian_A": {"trials": 2}},
               "run": {"experiments": ["gaussian_A"], "audits": [], "illustrations": [], "datasets": [],
                       "scorecard": False}}
    result = snakemake(repo_copy, "-n", configfile=write_config(repo_copy, overlay))
    assert planned_jobs(result, "run_cell") == 8 * 4  # the default grid: 8 values of d, 4 of rho
    assert planned_jobs(result, "summarise") == 1 and planned_jobs(result, "fidelity") == 1
    for rule in ("run_setting_binary_synthetic", "figure", "audit", "illustration", "fetch_dataset", "table2",
                 "scorecard", "worst_case_figure"):
        assert planned_jobs(result, rule) == 0, rule
    assert planned_jobs(result, "errata") == 1 and planned_jobs(result, "report_page") == 1
    assert "extended by additional config specified via the command line" in result.stdout + result.stderr


def test_smoke_run_builds_every_figure_summary_and_the_report(smoke_run):
    # the run itself is the fixture (tests/conftest.py), shared with the report's browser test
    repo_copy = smoke_run

    # smoke.yaml merged over config.yaml and its experiments shrunk, as the workflow read it (docs/configuration.md)
    config = load_config(repo_copy / "config" / "smoke.yaml",
                                       default=repo_copy / "config" / "config.yaml")
    audits = config["run"]["audits"]
    expected = [f"results/{experiment}/summary.csv" for experiment in config["experiments"]]
    expected += [f"results/fidelity/{experiment}.csv" for experiment in config["fidelity"]]
    expected += [f"figures/{figure}.{ext}" for figure in [*config["figures"], "figure2", "userlevel_worst_case"]
                 for ext in ("pdf", "png")]
    expected += [f"datasets/processed/{dataset}.{ext}" for dataset in config["datasets"] for ext in ("npz", "json")]
    expected += ["results/audit/audit.csv", "figures/audit.png"]
    expected += [f"figures/{name}.{ext}" for name in config["illustrations"] for ext in ("pdf", "png")]
    expected += [f"results/illustrations/{name}.csv" for name in config["illustrations"]]
    expected += [f"results/audit/{name}.csv" for name in audits]
    expected += [f"results/audit/benchmarks/{name}.tsv" for name in audits]  # for benchmarks/cost_table.py
    power = config["audit_power"]
    expected += ["results/audit/power_curves.csv", "figures/audit_power.pdf", "figures/audit_power.png"]
    expected += [f"results/audit/{folder}/{prefix}{name}.{ext}" for name in power["mechanisms"]
                 for folder, prefix, ext in (("power", "", "csv"), ("benchmarks", "power_", "tsv"))]
    expected += ["results/scorecard.csv", "results/scorecard_values.csv", "results/claims.csv"]
    expected += [f"results/variance_study/{name}" for name in ["table2.csv", "table2.caption.txt", "table2_erratum.csv",
                                                               "table2_erratum.caption.txt",
                                                               "table2_erratum.notes.txt"]]
    expected.append("results/report.html")
    for name in expected:
        path = repo_copy / name
        assert path.is_file() and path.stat().st_size > 0, name
    # only the audits the run switch keeps
    assert sorted(path.stem for path in (repo_copy / "results/audit").glob("*.csv")) == sorted(
        [*audits, "audit", "power_curves"])
    # the power curves: every mechanism, number of runs and break, each with its repetitions; a break of 4 is
    # caught at 4000 runs
    curves = pd.read_csv(repo_copy / "results/audit/power_curves.csv")
    assert len(curves) == len(power["mechanisms"]) * len(power["runs"]) * len(power["breaks"])
    assert (curves["repetitions"] == power["repetitions"]).all()
    assert (curves[(curves["break"] == 4) & (curves["runs"] == 4000)]["power"] == 1.0).all()
    assert "false alarms" in (repo_copy / "logs/audit/power_table.log").read_text()
    for experiment in config["experiments"]:
        summary = pd.read_csv(repo_copy / f"results/{experiment}/summary.csv")
        assert (summary["trials"] == config["experiments"][experiment]["trials"]).all()
    # the smoke config's small sizes are not the paper's: the scorecard says so rather than comparing
    scorecard = pd.read_csv(repo_copy / "results/scorecard.csv").set_index("item")
    assert scorecard.loc["PLAN Figure 3", "status"] == "not comparable here"
    assert "n = 600 here, 4000 in the paper" in scorecard.loc["PLAN Figure 3", "note"]
    # Kosarak from its first source, the ann-benchmarks HDF5 file
    status = yaml.safe_load((repo_copy / "datasets/raw/kosarak.status.json").read_text())
    assert status["source"] == config["datasets"]["kosarak"]["sources"][0]
    assert status["source"]["format"] == "ann_benchmarks_hdf5" and status["tried"] == []


def cell_tables_without_runtimes(workdir):
    return {
        path.name: pd.read_csv(path).drop(columns="runtime_s").to_csv(index=False)
        for path in sorted((Path(workdir) / "results/tiny/cells").glob("*.csv"))
    }


def test_two_runs_give_identical_summary_bytes_and_identical_trials(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for workdir, cores in [(first, "1"), (second, "2")]:
        workdir.mkdir()
        snakemake(workdir, "--cores", cores, "results/tiny/summary.csv", configfile=write_config(workdir, TINY))
    summary = "results/tiny/summary.csv"
    assert (first / summary).read_bytes() == (second / summary).read_bytes()
    assert cell_tables_without_runtimes(first) == cell_tables_without_runtimes(second)
    assert len(cell_tables_without_runtimes(first)) == 4


BAD_CONFIGS = {
    "unknown mechanism": (("experiments", "tiny", "mechanisms"), ["iome", "no_such_mechanism"],
                          r"experiments\.tiny\.mechanisms\[1\].*no_such_mechanism"),
    "negative rho": (("experiments", "tiny", "grid", "rho"), [0.5, -1], r"experiments\.tiny\.grid\.rho\[1\].*-1"),
    "unknown key": (("experiments", "tiny", "trails"), 3, r"experiments\.tiny.*'trails'"),
    "empty grid": (("experiments", "tiny", "grid", "d"), [], r"experiments\.tiny\.grid\.d.*empty"),
    "unknown experiment to run": (("run",), {"experiments": ["tiny", "tinny"]},
                                  r"run\.experiments: no 'tinny' under experiments: \(configured: tiny\)"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_config_stops_before_any_job_with_one_line_naming_the_key(tmp_path, case):
    path, value, pattern = BAD_CONFIGS[case]
    config = copy.deepcopy(TINY)
    target = config
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    result = snakemake(tmp_path, "--cores", "1", configfile=write_config(tmp_path, config), check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    lines = [line for line in output.splitlines() if line.startswith("config error")]
    assert len(lines) == 1 and re.search(pattern, lines[0]), output
    assert not (tmp_path / "results").exists()


def test_adding_a_grid_value_computes_only_the_new_cells(tmp_path):
    snakemake(tmp_path, "--cores", "2", "results/tiny/summary.csv", configfile=write_config(tmp_path, TINY))
    bigger = copy.deepcopy(TINY)
    bigger["experiments"]["tiny"]["grid"]["d"].append(32)
    result = snakemake(tmp_path, "-n", "results/tiny/summary.csv", configfile=write_config(tmp_path, bigger))
    assert planned_jobs(result, "run_cell") == 2
    assert planned_jobs(result, "summarise") == 1
    assert "d=32_rho=0.5" in result.stdout + result.stderr


def test_reordering_the_grid_keys_in_the_yaml_recomputes_nothing(tmp_path):
    """What a YAML tool may do to a config: the cells keep their ids, seeds and files."""
    snakemake(tmp_path, "--cores", "2", "results/tiny/summary.csv", configfile=write_config(tmp_path, TINY))
    reordered = copy.deepcopy(TINY)
    reordered["experiments"]["tiny"]["grid"] = {"rho": [1.0, 0.5], "d": [16, 8]}
    result = snakemake(tmp_path, "-n", "results/tiny/summary.csv", configfile=write_config(tmp_path, reordered))
    assert planned_jobs(result, "run_cell") == 0 and planned_jobs(result, "summarise") == 0, result.stdout


def with_shared_rho(config, share):
    """``config`` plus an experiment whose grid is rho alone, each with ``share_rho: share``."""
    config = copy.deepcopy(config)
    config["experiments"]["tiny"]["share_rho"] = share
    only_rho = copy.deepcopy(config["experiments"]["tiny"])
    only_rho.update(data={"source": "gaussian_a", "n": 300, "d": 8}, grid={"rho": [0.5, 1.0]})
    config["experiments"]["only_rho"] = only_rho
    return config


def test_sharing_the_rho_values_of_a_setting_in_one_job_gives_the_files_of_one_job_per_cell(tmp_path):
    tables = {}
    for share in (False, True):
        workdir = tmp_path / f"share_{share}"
        workdir.mkdir()
        config = write_config(workdir, with_shared_rho(TINY, share))
        targets = ["results/tiny/summary.csv", "results/only_rho/summary.csv"]
        planned = snakemake(workdir, "-n", *targets, configfile=config)
        if share:
            assert planned_jobs(planned, "run_cell") == 0
            assert planned_jobs(planned, "run_setting_tiny") == 2  # d = 8 and d = 16, two rho each
            assert planned_jobs(planned, "run_setting_only_rho") == 1
        else:
            assert planned_jobs(planned, "run_cell") == 6
        snakemake(workdir, "--cores", "2", *targets, configfile=config)
        tables[share] = {
            path.relative_to(workdir).as_posix(): pd.read_csv(path).drop(columns="runtime_s").to_csv(index=False)
            for path in sorted(workdir.glob("results/*/cells/*.csv"))
        }
        summaries = [(workdir / target).read_bytes() for target in targets]
        tables[share]["summaries"] = summaries
    assert len(tables[True]) == 7 and tables[True] == tables[False]
    shared = tmp_path / "share_True"
    assert sorted(p.name for p in shared.glob("results/tiny/benchmarks/*.tsv")) == ["d=16.tsv", "d=8.tsv"]
    assert (shared / "results/only_rho/benchmarks/all.tsv").is_file()
    assert "2 rho values" in (shared / "logs/tiny/settings/d=8.log").read_text()


# Cells of a few seconds each, so that the interrupt below lands part-way through the run.
SLOW = copy.deepcopy(TINY)
SLOW["experiments"]["tiny"].update(
    data={"source": "gaussian_a", "n": 3000}, grid={"d": [512], "rho": [0.1 * i for i in range(1, 9)]}, trials=12
)


def test_an_interrupted_run_leaves_no_partial_file_and_a_rerun_computes_only_missing_cells(tmp_path):
    config = write_config(tmp_path, SLOW)
    command = [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "-d", str(tmp_path), "--cores", "1",
               "results/tiny/summary.csv", "--configfile", str(config)]
    # A shell that starts a job in the background (as CI may) leaves SIGINT ignored, and a
    # child would inherit that: restore the default so Python turns it into an interrupt.
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    cells = tmp_path / "results/tiny/cells"
    deadline = time.time() + 300
    while time.time() < deadline and len(list(cells.glob("*.csv"))) < 2:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)
    process.communicate(timeout=120)
    finished = sorted(cells.glob("*.csv"))
    assert 2 <= len(finished) < 8, "the run should be interrupted part-way"
    assert not list(cells.glob(".*")), "no temporary or partial files survive"
    for path in finished:
        assert len(pd.read_csv(path)) == 12 * 3  # every trial of every mechanism
    # Rerun: the missing cells, plus at most the one whose job was finishing at the interrupt
    # (its file is whole, but its job never reported success, so Snakemake redoes it).
    result = snakemake(tmp_path, "-n", "results/tiny/summary.csv", configfile=config)
    missing = 8 - len(finished)
    assert missing <= planned_jobs(result, "run_cell") <= missing + 1
    stamps = {path: path.stat().st_mtime_ns for path in finished}
    snakemake(tmp_path, "--cores", "1", "results/tiny/summary.csv", configfile=config)
    redone = [path for path, stamp in stamps.items() if path.stat().st_mtime_ns != stamp]
    assert len(redone) <= 1
    assert len(pd.read_csv(tmp_path / "results/tiny/summary.csv")) == 8 * 3
