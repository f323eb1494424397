"""The plan of a run (experiments/planning/run_plan.py and its parts) without Snakemake: how configs compose, what
the run switch keeps, the targets, paths and resources of the smoke and paper configs, and the
report's inputs when a real dataset could not be obtained (docs/configuration.md)."""
import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from experiments.engine.availability import fetch_settings
from experiments.engine.config import ConfigError, check_table2, load_experiments
from experiments.planning.config_files import compose_configs, load_config
from experiments.planning.resources import MEMORY_MARGIN, MIN_RUNTIME, SMALL_JOB_MEM_MB
from experiments.planning.run_plan import RunPlan
from experiments.planning.validation import one_line_config_error

REPO = Path(__file__).resolve().parents[2]
DEFAULT = REPO / "config" / "config.yaml"
SMOKE = REPO / "config" / "smoke.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def smoke_config():
    return load_config(SMOKE, default=DEFAULT)


def paper_config():
    return load_config(default=DEFAULT)


# --- composing configs ---------------------------------------------------------------------

BASE = {"seed": 1, "experiments": {"a": {"data": {"source": "s", "n": 10}, "grid": {"d": [1, 2], "rho": [1.0]}}},
        "audits": {"x": {}, "y": {"runs": 5}}, "datasets": {"pos": {"expect": {"n": 3, "d": 4}}}}
OVERLAY = {"experiments": {"a": {"grid": {"d": [3]}}, "b": {"trials": 2}}, "audits": {"y": {"budget": 1.0}},
           "datasets": {"pos": {"expect": None}}, "seed": 2}


def test_configs_compose_dicts_key_by_key_and_replace_lists_scalars_and_null():
    composed = compose_configs(BASE, OVERLAY)
    assert composed["seed"] == 2
    # the grid dict merges: d replaced (a list), rho kept from the base
    assert composed["experiments"]["a"] == {"grid": {"d": [3], "rho": [1.0]}, "data": {"source": "s", "n": 10}}
    assert composed["experiments"]["b"] == {"trials": 2}
    assert composed["audits"] == {"y": {"budget": 1.0, "runs": 5}, "x": {}}
    assert composed["datasets"]["pos"]["expect"] is None
    # the overlay's keys first, then the base's others (what Snakemake's double merge gives)
    assert list(composed) == ["experiments", "audits", "datasets", "seed"]
    assert list(composed["experiments"]["a"]) == ["grid", "data"]
    assert BASE["experiments"]["a"]["grid"]["d"] == [1, 2]  # the inputs are left alone
    assert compose_configs(BASE) == BASE


SNAKEFILE_SEEING_ITS_CONFIG = """
import json

configfile: "config/config.yaml"

with open("seen.json", "w") as stream:
    json.dump(config, stream)

rule all:
    input: []
"""


def snakemake_config(workdir, *overlays):
    """The config a Snakefile with our `configfile:` line sees with ``--configfile overlays``."""
    (workdir / "Snakefile").write_text(SNAKEFILE_SEEING_ITS_CONFIG)
    paths = []
    for index, overlay in enumerate(overlays):
        paths.append(workdir / f"overlay{index}.yaml")
        paths[-1].write_text(yaml.safe_dump(overlay, sort_keys=False))
    command = [sys.executable, "-m", "snakemake", "-s", str(workdir / "Snakefile"), "-d", str(workdir), "-n",
               "--configfile", *map(str, paths)]
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((workdir / "seen.json").read_text())


def test_compose_configs_gives_the_config_snakemake_gives_our_snakefile_key_order_included(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(BASE, sort_keys=False))
    second = {"experiments": {"a": {"trials": 4}}, "audits": {"x": {"runs": 1}}}
    seen = snakemake_config(tmp_path, OVERLAY, second)
    composed = compose_configs(BASE, OVERLAY, second)
    assert json.dumps(seen) == json.dumps(composed)
    assert seen["experiments"]["a"]["trials"] == 4 and seen["experiments"]["a"]["grid"]["d"] == [3]
    # and load_config reads the same from the files
    assert load_config(tmp_path / "overlay0.yaml", tmp_path / "overlay1.yaml",
                       default=tmp_path / "config" / "config.yaml") == composed


def test_without_config_yaml_in_the_working_directory_the_given_file_is_the_whole_config(tmp_path):
    seen = snakemake_config(tmp_path, OVERLAY)
    assert seen == OVERLAY == load_config(tmp_path / "overlay0.yaml", default=None)


# --- the smoke config ----------------------------------------------------------------------

def test_the_smoke_config_runs_every_experiment_of_the_paper_config_and_none_of_its_cells():
    smoke, paper = RunPlan(smoke_config()), RunPlan(paper_config())
    assert list(smoke.experiments) == list(paper.experiments)
    for name, spec in smoke.experiments.items():
        paper_spec = paper.experiments[name]
        assert spec.trials < paper_spec.trials, name
        fingerprints = {spec.fingerprint(cell) for cell in spec.cells()}
        assert not fingerprints & {paper_spec.fingerprint(cell) for cell in paper_spec.cells()}, name
    # the illustrations at tiny sizes too
    assert smoke.illustrations["figure1"]["n"] < paper.illustrations["figure1"]["n"]
    assert smoke.illustrations["figure6"]["samples"] < paper.illustrations["figure6"]["samples"]


def test_the_smoke_config_keeps_five_audits_and_every_table2_method():
    config = smoke_config()
    plan = RunPlan(config)
    assert plan.audits == ["exponential_quantile_published", "gaussian_step", "empirical_mean", "userlevel_laplace",
                           "variance_general_published_k4"]
    assert [config["audits"][name]["runs"] for name in plan.audits] == [300000, 100000, 2000, 20000, 50000]
    # the shrunk variance experiments are cheap: they run every method of the paper's Table 2
    assert plan.table2["names"] == {"direct-075": "direct-0.75", "direct-0841": "direct-0.841",
                                    "direct-09": "direct-0.9", "general (k=1)": "general-k1",
                                    "general (k=4)": "general-k4"}
    assert plan.table2["corrected"] == "variance_study"
    # pos's git blob (the paper file's) is not checked on the tiny file: left out of the fetch settings
    assert config["datasets"]["pos"]["expect"]["git_blob"] is None
    assert plan.dataset_settings["pos"]["expect"] == {"n": 30, "d": 45, "occurrences": 159}
    assert plan.dataset_settings["pos"]["sources"][0]["path"] == "tests/data/BMS-POS_tiny.csv"


SMOKE_STATIC_FIGURES = ["figure3", "figure4", "figure5", "figure7", "figure8", "figure9", "figure10",
                        "userlevel_figure2", "userlevel_figure3", "coinpress_figure3", "coinpress_figure4",
                        "extended_accounting", "extended_rho",
                        "extended_noscale", "extended_binary", "standins", "userlevel_beyond",
                        "libraries_gaussian", "libraries_binary", "libraries_pos_shaped",
                        "coinpress_covariance", "extended_coinpress_covariance",
                        *(f"iome_figure{i}" for i in (1, 2, 3, 4, 5, 6, 9, 10, 11, 12)), "iome_mnist_standin"]


def test_the_smoke_config_targets_before_any_fetch():
    plan = RunPlan(smoke_config())
    targets = plan.targets.static_targets()
    assert len(targets) == len(set(targets))
    real = {"kosarak", "pos", "libraries_kosarak", "libraries_pos", "iome_mnist", "iome_mnist_mvcrec"}
    expected = [f"results/{name}/summary.csv" for name in plan.experiments if name not in real]
    expected += ["results/fidelity/gaussian_A.csv", "results/fidelity/binary_synthetic.csv"]
    expected += [f"figures/{name}.{ext}" for name in SMOKE_STATIC_FIGURES for ext in ("pdf", "png")]
    expected += ["results/variance_study/table2.csv", "results/variance_study/table2_erratum.csv"]
    expected += ["figures/userlevel_worst_case.pdf", "figures/userlevel_worst_case.png"]
    expected += ["results/audit/audit.csv", "figures/audit.pdf", "figures/audit.png"]
    expected += ["results/audit/power_curves.csv", "figures/audit_power.pdf", "figures/audit_power.png"]
    expected += [f"results/libraries/{name}.csv" for name in plan.libraries if name not in real]
    expected += [f"{folder}/{name}.{ext}" for name in ("figure1", "figure6", "userlevel_figure1")
                 for folder, ext in (("figures", "pdf"), ("figures", "png"), ("results/illustrations", "csv"))]
    expected += ["results/report.html"]
    assert sorted(targets) == sorted(expected)
    assert plan.targets.wildcard_patterns()["dataset"] == "kosarak|pos|mnist"


def test_job_paths_of_cells_and_settings():
    plan = RunPlan(smoke_config())
    assert plan.trials.cell_files("gaussian_A") == [f"results/gaussian_A/cells/d={d}_rho={rho}.csv"
                                                    for d in (16, 32) for rho in ("0.125", "0.25")]
    assert plan.trials.setting_outputs("binary_synthetic") == ["results/binary_synthetic/cells/{setting}_rho=0.125.csv",
                                                               "results/binary_synthetic/cells/{setting}_rho=0.5.csv"]
    assert plan.trials.setting_job("binary_synthetic") == "{setting}"
    assert plan.trials.job_cell_ids("binary_synthetic", {"setting": "d=256_ratio=0"}) == ["d=256_ratio=0_rho=0.125",
                                                                                         "d=256_ratio=0_rho=0.5"]
    # a grid of the budget alone: one setting, no wildcard
    assert plan.trials.setting_outputs("kosarak") == ["results/kosarak/cells/rho=0.0625.csv",
                                                      "results/kosarak/cells/rho=0.125.csv"]
    assert plan.trials.setting_job("kosarak") == "all"
    assert plan.trials.job_cell_ids("kosarak", {}) == ["rho=0.0625", "rho=0.125"]
    assert plan.trials.cell_benchmarks("binary_synthetic")[0] == "results/binary_synthetic/benchmarks/d=256_ratio=0.tsv"
    # user-level cells keep every run: compressed
    assert all(path.endswith(".csv.gz") for path in plan.trials.setting_outputs("userlevel_zipf"))
    assert plan.trials.dataset_inputs("pos") == ["datasets/processed/pos.npz"]
    assert plan.trials.dataset_inputs("pos_shaped") == []
    assert "binary_synthetic" in plan.trials.shared_experiments and "gaussian_A" not in plan.trials.shared_experiments
    unshared = plan.trials.unshared_pattern.split("|")
    assert "gaussian_A" in unshared and "kosarak" not in unshared
    settings = plan.trials.setting_fingerprints("binary_synthetic", {"setting": "d=256_ratio=0"})
    assert [json.loads(fingerprint)["cell"] for fingerprint in settings] == [
        {"d": 256, "ratio": 0.0, "rho": 0.125}, {"d": 256, "ratio": 0.0, "rho": 0.5}]


# --- resources -----------------------------------------------------------------------------

def test_a_smoke_cell_asks_for_little_and_a_paper_cell_for_what_it_was_measured_to_need():
    # on 2 cores no job is split into trial shards (tests/experiments/test_shards.py): whole jobs
    small, large = RunPlan(smoke_config(), cores=2), RunPlan(paper_config(), cores=2)
    tiny = {"cell": "d=16_rho=0.125"}
    assert small.resources.job_mem_mb("gaussian_A", tiny) == 700  # the job's Python processes (500 MiB) and the margin
    assert small.resources.job_runtime("gaussian_A", tiny) == MIN_RUNTIME
    # n = 100000, d = 1024 peaked at 3.35 GB measured (experiments/planning/resources.py)
    big = {"cell": "d=1024_rho=0.01"}
    assert large.resources.job_mem_mb("gaussian_A_low", big) >= MEMORY_MARGIN * 3.35e9 / 2**20
    assert large.resources.job_runtime("gaussian_A_low", big) > 10 * MIN_RUNTIME
    assert large.resources.job_priority("gaussian_A_low", big) > small.resources.job_priority("gaussian_A", tiny)
    # a setting job (every rho of a setting): from its data, the densest setting asks for the most
    dense, sparse = {"setting": "d=2048_ratio=1"}, {"setting": "d=256_ratio=0"}
    resources = large.resources
    assert resources.job_mem_mb("binary_synthetic", dense) > resources.job_mem_mb("binary_synthetic", sparse)
    assert resources.job_priority("binary_synthetic", dense) > resources.job_priority("binary_synthetic", sparse)
    # summaries: the small-job default, more for 10^4 user-level runs per cell and mechanism
    assert small.resources.summarise_mem_mb("gaussian_A") == SMALL_JOB_MEM_MB
    assert large.resources.summarise_mem_mb("userlevel_geometric") > SMALL_JOB_MEM_MB


# --- the run switch ------------------------------------------------------------------------

def with_run(config, **run):
    config = copy.deepcopy(config)
    config["run"] = {**(config.get("run") or {}), **run}
    return config


def test_an_experiment_switched_off_leaves_the_targets_with_its_fidelity_table_figures_and_erratum():
    config = smoke_config()
    kept = [name for name in config["experiments"] if name != "gaussian_A"]
    plan = RunPlan(with_run(config, experiments=kept))
    targets = plan.targets.static_targets()
    assert "gaussian_A" not in plan.experiments
    assert not [target for target in targets if "/gaussian_A/" in target or target.endswith("/gaussian_A.csv")]
    for figure in ("figure3", "figure8", "figure10", "extended_accounting"):
        assert f"figures/{figure}.png" not in targets and figure not in plan.figures
    assert "figures/figure4.png" in targets and "results/gaussian_B/summary.csv" in targets
    # the PLAN-noscale erratum read gaussian_A's fidelity reference
    assert plan.report.errata_noscale == {} and plan.report.errata_figures == ["figures/errata_accounting.png"]
    assert "gaussian_A" not in plan.report.errata_pairs and "gaussian_B" in plan.report.errata_pairs
    assert "figure3" not in plan.targets.wildcard_patterns()["figure"].split("|")


def test_the_run_switch_can_leave_only_one_experiment_and_the_report():
    config = with_run(smoke_config(), experiments=["gaussian_B"], audits=[], illustrations=[], datasets=[],
                      table2=False, scorecard=False, audit_power=False)
    plan = RunPlan(config)
    assert plan.targets.static_targets() == ["results/gaussian_B/summary.csv", "results/report.html"]
    assert plan.datasets == {} and plan.real_data.dataset_records() == []
    extra = plan.report.report_extra_inputs()
    assert extra["tables"] == [] and extra["scorecard"] == [] and extra["dataset_statuses"] == []
    assert plan.report.report_inputs()["summaries"] == ["results/gaussian_B/summary.csv"]
    assert plan.report.report_inputs()["figures"] == [] and plan.report.report_inputs()["audit"] == []
    assert plan.report.report_inputs()["audit_power"] == [] and "audit_power" not in plan.report.extra_figures()


def test_table2_goes_with_its_protocol_experiment_and_the_erratum_with_the_corrected_one():
    config = smoke_config()
    others = [name for name in config["experiments"] if name != "variance_study"]
    plan = RunPlan(with_run(config, experiments=others))
    assert plan.targets.table2_outputs == ["results/variance_study/table2.csv"] and plan.table2["corrected"] is None
    others.remove("variance_study_published")
    assert RunPlan(with_run(config, experiments=others)).targets.table2_outputs == []


RUN_ERRORS = {
    "unknown experiment": ({"experiments": ["gaussian_A", "gausian_B"]},
                           r"^run\.experiments: no 'gausian_B' under experiments: \(configured: gaussian_A, "),
    "unknown audit": ({"audits": ["iome", "nope"]}, r"^run\.audits: no 'nope' under audits:"),
    "unknown figure": ({"figures": ["figure99"]}, r"^run\.figures: no 'figure99' under figures:"),
    "unknown illustration": ({"illustrations": ["figure7"]}, r"^run\.illustrations: no 'figure7'"),
    "figure of an experiment switched off": ({"experiments": ["gaussian_A"], "figures": ["figure3"]},
                                             r"^run\.figures: figure 'figure3' draws experiment 'gaussian_B', "
                                             r"which this run does not run"),
    "dataset left out": ({"datasets": ["kosarak"]}, r"^run\.datasets: leaves out 'pos', which experiment 'pos' reads"),
    "table2 without its protocol": ({"experiments": ["gaussian_A"], "table2": True},
                                    r"^run\.table2: its protocol experiment 'variance_study_published' does not run"),
}


def test_the_power_curves_one_job_per_mechanism_the_longest_first_then_a_table_and_a_figure():
    smoke, paper = RunPlan(smoke_config()), RunPlan(paper_config())
    # the smoke config: tiny runs and repetitions, the paper config's mechanisms and claims
    assert paper.audit_power == {"runs": [1000, 10_000, 100_000, 1_000_000], "breaks": [1.0, 1.25, 1.5, 2.0, 4.0],
                                 "repetitions": 100, "mechanisms": {"gaussian_step": 0.25, "userlevel_laplace": 1.0,
                                                                    "exponential_quantile": 0.5}}
    assert smoke.audit_power == {**paper.audit_power, "runs": [1000, 4000], "breaks": [1.0, 4.0], "repetitions": 5}
    assert smoke.targets.power_files == [f"results/audit/power/{name}.csv" for name in
                                 ("gaussian_step", "userlevel_laplace", "exponential_quantile")]
    assert smoke.targets.wildcard_patterns()["mechanism"] == "gaussian_step|userlevel_laplace|exponential_quantile"
    assert smoke.targets.wildcard_patterns()["audit"].split("|") == smoke.audits  # not power_curves, not power/...
    assert smoke.report.extra_figures()["audit_power"].startswith("Privacy audit: power")
    # the two pure-DP tests search every threshold: their jobs are the longest and start first
    assert [paper.resources.power_priority(name) for name in paper.audit_power["mechanisms"]] == [0, 1, 2]
    assert all(smoke.resources.power_runtime(name) == MIN_RUNTIME for name in smoke.audit_power["mechanisms"])
    runtime = paper.resources.power_runtime
    assert MIN_RUNTIME < runtime("gaussian_step") < runtime("exponential_quantile") <= 30
    # switched off, or no section
    off = RunPlan(with_run(smoke_config(), audit_power=False))
    assert off.audit_power == {} and off.targets.power_outputs == [] and off.targets.power_files == []
    assert "results/audit/power_curves.csv" not in off.targets.static_targets()
    config = smoke_config()
    del config["audit_power"]
    assert RunPlan(config).targets.power_outputs == []
    with pytest.raises(ConfigError, match=r"^run\.audit_power: true, but the config has no audit_power: section"):
        RunPlan(with_run(config, audit_power=True))


@pytest.mark.parametrize("case", sorted(RUN_ERRORS))
def test_a_run_switch_naming_what_is_not_there_is_one_config_error(case):
    run, message = RUN_ERRORS[case]
    with pytest.raises(ConfigError, match=message) as error:
        RunPlan(with_run(smoke_config(), **run))
    assert "\n" not in str(error.value)


def test_the_schema_checks_the_run_switch():
    config = with_run(smoke_config(), experiment=["gaussian_A"])
    with pytest.raises(Exception) as error:
        validate(config, str(SCHEMA))
    assert one_line_config_error(error.value).startswith("config error at run: unknown key:")
    validate(with_run(smoke_config(), experiments=["gaussian_A"], table2=False), str(SCHEMA))


# --- real datasets: statuses, targets and the report ----------------------------------------

def write_statuses(folder, plan, available):
    """Fetch statuses as the checkpoint writes them: ``available`` datasets found, the others not."""
    paths = {}
    for dataset, settings in plan.dataset_settings.items():
        found = dataset in available
        status = {"dataset": dataset, "available": found, "settings": settings}
        status |= {"raw": f"datasets/raw/{dataset}.raw"} if found else {
            "tried": [{"path": "nowhere.csv", "format": "bms_pos_csv", "reason": "no such file"}],
            "reason": "no source gave the data", "how_to_supply": "put the file at nowhere.csv", "message": "missing"}
        paths[dataset] = folder / f"{dataset}.status.json"
        paths[dataset].write_text(json.dumps(status))
    return paths


def plan_with_statuses(tmp_path, available, config=None):
    config = config or smoke_config()
    plan = RunPlan(config)
    paths = write_statuses(tmp_path, plan, available)
    return RunPlan(config, status_file=paths.__getitem__), paths


def test_with_every_dataset_the_report_shows_everything(tmp_path):
    plan, _ = plan_with_statuses(tmp_path, {"kosarak", "pos", "mnist"})
    inputs = plan.report.report_inputs()
    assert len(inputs["summaries"]) == len(plan.experiments) == 45
    assert inputs["fidelity"] == [f"results/fidelity/{name}.csv" for name in ("gaussian_A", "binary_synthetic",
                                                                              "kosarak", "pos")]
    assert inputs["references"][0] == "config/reference/published_gaussian_A_medians.csv"
    assert inputs["dataset_figures"] == ["figures/figure2.png"]
    assert "figures/figure5_real.png" in inputs["figures"] and "figures/userlevel_worst_case.png" in inputs["figures"]
    assert inputs["figures"][-3:] == ["figures/figure1.png", "figures/figure6.png", "figures/userlevel_figure1.png"]
    assert inputs["audit"] == ["results/audit/audit.csv", "figures/audit.png"]
    assert inputs["audit_power"] == ["results/audit/power_curves.csv", "figures/audit_power.png"]
    pngs = inputs["figures"] + inputs["dataset_figures"] + inputs["audit"][1:] + inputs["audit_power"][1:]
    assert inputs["figure_pdfs"] == [path[:-4] + ".pdf" for path in pngs]
    assert inputs["run_times"] == ["results/run_times.csv"]
    assert "results/kosarak/benchmarks/all.tsv" in plan.report.run_time_benchmarks()
    assert plan.report.report_extra_inputs()["dataset_statuses"] == [
        f"results/datasets/{name}.status.json" for name in ("kosarak", "pos", "mnist")]
    assert plan.report.report_extra_inputs()["scorecard"] == ["results/scorecard.csv", "results/scorecard_values.csv",
                                                       "results/claims.csv"]
    scorecard = plan.report.scorecard_inputs()
    assert scorecard["table2"] == plan.targets.table2_outputs
    assert scorecard["published"].endswith("published_summaries.csv")
    assert plan.targets.dataset_targets("pos") == plan.targets.dataset_targets("kosarak")
    assert "figures/figure2.png" in plan.targets.dataset_targets("pos")
    assert "results/pos/summary.csv" in plan.targets.dataset_targets("pos")


def test_without_a_dataset_the_report_and_targets_leave_out_what_needs_it_and_the_run_names_it(tmp_path, capsys):
    plan, paths = plan_with_statuses(tmp_path, {"kosarak", "mnist"})
    inputs = plan.report.report_inputs()
    assert "results/pos/summary.csv" not in inputs["summaries"] and "results/kosarak/summary.csv" in inputs["summaries"]
    assert "results/fidelity/pos.csv" not in inputs["fidelity"]
    assert not {"figures/figure5_real.png", "figures/figure9_real.png"} & set(inputs["figures"])
    assert inputs["dataset_figures"] == []
    targets = plan.targets.dataset_targets("kosarak")
    assert "results/fidelity/kosarak.csv" in targets and "figures/figure2.png" not in targets
    assert plan.targets.dataset_targets("pos") == []
    assert set(plan.real_data.status_files_read) == {"kosarak", "pos", "mnist"}
    with pytest.raises(SystemExit) as exit:
        plan.real_data.finish_datasets(sys.stderr)
    assert exit.value.code == 1
    printed = capsys.readouterr().err
    assert "NOT REPRODUCED: 1 dataset(s)" in printed
    assert "left out: pos, libraries_pos, libraries_real, figure5_real, figure9_real, figure2" in printed
    assert not paths["pos"].exists() and paths["kosarak"].exists()  # the next run tries pos again


def test_a_failed_run_names_the_missing_dataset_without_exiting_itself(tmp_path, capsys):
    plan, paths = plan_with_statuses(tmp_path, set())
    plan.real_data.dataset_available("pos")
    plan.real_data.finish_datasets(sys.stderr, failed=True)
    assert "- pos" in capsys.readouterr().err
    assert paths["kosarak"].exists()  # not read by this run: none of its business


def test_a_status_written_for_other_settings_raises_the_given_error(tmp_path):
    plan, paths = plan_with_statuses(tmp_path, {"kosarak", "pos"})

    class Stale(Exception):
        pass

    other = RunPlan(paper_config(), status_file=paths.__getitem__, stale_error=Stale)
    with pytest.raises(Stale, match="was written for other dataset settings"):
        other.real_data.dataset_available("pos")
    assert other.real_data.status_files_read == {}


def committed_plan(tmp_path, monkeypatch, available):
    """A rebuild's plan (``from_committed: true``) in ``tmp_path``, whose results/datasets/ holds
    the committed run's statuses: ``available`` datasets found, the others not."""
    monkeypatch.chdir(tmp_path)
    config = {**smoke_config(), "from_committed": True}
    (tmp_path / "results/datasets").mkdir(parents=True)
    write_statuses(tmp_path / "results/datasets", RunPlan(config), available)
    return RunPlan(config)


def test_a_rebuild_from_the_committed_results_reads_the_committed_statuses_and_parses_nothing(tmp_path, monkeypatch):
    plan = committed_plan(tmp_path, monkeypatch, {"kosarak"})
    assert plan.real_data.dataset_available("kosarak") and not plan.real_data.dataset_available("pos")
    assert plan.real_data.status_files_read["kosarak"] == "results/datasets/kosarak.status.json"
    assert plan.real_data.processed_dataset("kosarak") == []
    assert "results/kosarak/summary.csv" in plan.report.report_inputs()["summaries"]
    assert "results/pos/summary.csv" not in plan.report.report_inputs()["summaries"]


def test_a_rebuild_keeps_the_committed_statuses_and_only_names_what_its_run_missed(tmp_path, monkeypatch, capsys):
    plan = committed_plan(tmp_path, monkeypatch, {"kosarak", "mnist"})
    plan.real_data.dataset_available("pos")
    plan.real_data.finish_datasets(sys.stderr)  # no SystemExit: the rebuild itself succeeded
    assert "whose run could not obtain pos" in capsys.readouterr().err
    assert (tmp_path / "results/datasets/pos.status.json").exists()


def test_a_rebuild_without_a_committed_status_says_which_file_is_missing(tmp_path, monkeypatch):
    plan = committed_plan(tmp_path, monkeypatch, set())
    (tmp_path / "results/datasets/pos.status.json").unlink()
    with pytest.raises(ValueError, match=r"results/datasets/pos.status.json is missing: a rebuild from the committed"):
        plan.real_data.dataset_available("pos")


def test_a_plan_without_a_status_reader_says_so():
    with pytest.raises(RuntimeError, match="no status_file"):
        RunPlan(smoke_config()).real_data.dataset_available("pos")


# --- null in a merged config ------------------------------------------------------------------

def test_null_leaves_a_table2_method_or_an_expected_statistic_out():
    config = paper_config()
    config["table2"]["names"]["direct-075"] = None
    assert "direct-075" not in check_table2(config, load_experiments(config))["names"]
    config["table2"]["names"] = dict.fromkeys(config["table2"]["names"])
    with pytest.raises(ConfigError, match="table2.names: every method is mapped to null"):
        check_table2(config, load_experiments(config))
    entry = {"sources": [{"path": "x.csv"}], "expect": {"n": 3, "git_blob": None}}
    assert fetch_settings("pos", entry)["expect"] == {"n": 3}
