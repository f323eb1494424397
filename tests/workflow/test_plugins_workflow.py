"""An estimator of one's own through Snakemake (docs/configuration.md, "Your own estimator"): the
example plug-in's cells and audit, reruns when its file changes, and a broken plug-in stopped
before any job."""
import shutil

import pandas as pd

from testkit.workflow_runs import REPO, planned_jobs, snakemake, write_config

EXAMPLE = "examples/plugins/clipped_mean.py:clipped_mean"
CONFIG = {
    "seed": 3,
    "variants": {"ClippedMean": {"algorithm": EXAMPLE, "interval": [-4.0, 4.0]}},
    "experiments": {"plug": {"data": {"source": "gaussian_a", "n": 300}, "grid": {"d": [4], "rho": [0.5, 1.0]},
                             "trials": 2, "mechanisms": ["ClippedMean", "empirical_mean"]}},
    "audits": {"clipped_mean_plugin": {"variant": {"algorithm": EXAMPLE}, "pair": "whole_1d", "budget": 0.25,
                                       "runs": 2000}},
}
TARGETS = ["results/plug/summary.csv", "results/audit/clipped_mean_plugin.csv"]


def test_a_plugin_s_cells_and_audit_run_and_rerun_when_its_file_changes(tmp_path):
    shutil.copytree(REPO / "examples", tmp_path / "examples")  # relative to the working directory
    config = write_config(tmp_path, CONFIG)
    snakemake(tmp_path, "--cores", "2", *TARGETS, configfile=config)
    summary = pd.read_csv(tmp_path / "results/plug/summary.csv")
    assert sorted(summary["mechanism"].unique()) == ["ClippedMean", "empirical_mean"] and len(summary) == 4
    (row,) = pd.read_csv(tmp_path / "results/audit/clipped_mean_plugin.csv").to_dict("records")
    assert row["mechanism"] == f"clipped_mean_plugin: {EXAMPLE}" and row["neighbours"] == "swap"
    assert row["measure"] == "rho-zCDP" and row["claimed"] == 0.25 and row["runs"] == 2000
    unchanged = snakemake(tmp_path, "-n", *TARGETS, configfile=config)
    assert planned_jobs(unchanged, "run_cell") == 0 and planned_jobs(unchanged, "audit") == 0
    plugin = tmp_path / "examples/plugins/clipped_mean.py"
    plugin.write_text(plugin.read_text() + "\n# the estimator, edited\n")
    edited = snakemake(tmp_path, "-n", *TARGETS, configfile=config)
    assert planned_jobs(edited, "run_cell") == 2 and planned_jobs(edited, "audit") == 1, edited.stdout


def test_a_broken_plugin_stops_the_run_before_any_job_with_one_line_naming_the_variant(tmp_path):
    (tmp_path / "mine.py").write_text("def estimate(x, *, rho, bounds):\n    pass\n")
    config = {**CONFIG, "variants": {"Mine": {"algorithm": "mine.py:estimate"}}}
    config["experiments"] = {"plug": {**CONFIG["experiments"]["plug"], "mechanisms": ["Mine"]}}
    result = snakemake(tmp_path, "--cores", "1", configfile=write_config(tmp_path, config), check=False)
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("config error")]
    assert len(lines) == 1 and "variants.Mine.algorithm: plug-in 'mine.py:estimate': takes no keyword argument " \
                                "'rng'" in lines[0], result.stdout + result.stderr
    assert not (tmp_path / "results").exists()
