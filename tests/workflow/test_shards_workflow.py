"""Trial shards through Snakemake (experiments/planning/shards.py, docs/configuration.md#trial-shards): a
sharded run writes the cells and summaries of an unsharded one, and changing the shards recomputes
nothing. (tests/cluster/ runs a sharded smoke config through Slurm and compares every file.)"""
import json
import shutil

import pandas as pd
import pytest
import yaml

from experiments.planning.config_files import load_config
from testkit.workflow_runs import REPO, compare_runs, planned_jobs, snakemake

SHARDS = 2


def every_experiment_sharded(workdir, shards):
    """An overlay (merged over config/smoke.yaml) that splits every experiment's jobs into ``shards``."""
    config = load_config(REPO / "config" / "smoke.yaml", default=REPO / "config" / "config.yaml")
    path = workdir / f"shards_{shards}.yaml"
    path.write_text(yaml.safe_dump({"experiments": {name: {"shards": shards} for name in config["experiments"]}}))
    return path


def smoke_summaries():
    """What trial shards can change: every experiment's cells, through its summary (the figures,
    tables and report are drawn from the summaries alone)."""
    config = load_config(REPO / "config" / "smoke.yaml", default=REPO / "config" / "config.yaml")
    return [f"results/{name}/summary.csv" for name in config["experiments"]]


@pytest.fixture(scope="module")
def sharded_smoke_run(tmp_path_factory):
    """The smoke config's cells and summaries with every job split in two, on 2 cores (where nothing
    would be split unasked)."""
    workdir = tmp_path_factory.mktemp("sharded_smoke_run")
    shutil.copytree(REPO / "config", workdir / "config")
    shutil.copytree(REPO / "tests" / "data", workdir / "tests" / "data")
    overlay = every_experiment_sharded(workdir, SHARDS)
    targets = smoke_summaries()
    planned = snakemake(workdir, *targets, "-n", "--cores", "2", "--configfile", "config/smoke.yaml", str(overlay))
    snakemake(workdir, *targets, "--cores", "2", "--configfile", "config/smoke.yaml", str(overlay), timeout=1800)
    return workdir, planned


def test_a_sharded_smoke_run_writes_the_cells_and_summaries_of_the_unsharded_run(smoke_run, sharded_smoke_run):
    workdir, planned = sharded_smoke_run
    # it did split: a shard job per half of every per-trial cell, and of the setting jobs
    assert planned_jobs(planned, "run_shard") == 2 * planned_jobs(planned, "run_cell") > 0
    assert planned_jobs(planned, "run_setting_shard_binary_synthetic") == 2 * planned_jobs(
        planned, "run_setting_binary_synthetic") > 0
    # the smoke's gaussian_A: 2 trials per cell, one per shard
    layout = json.loads((workdir / "results/gaussian_A/shards/d=16_rho=0.125.layout.json").read_text())
    assert layout["trials"] == [[0, 1], [1, 2]]
    # the shard files were temporary: only the merged cells remain
    assert not list(workdir.glob("results/*/shards/*/trials=*"))
    # every cell file and summary of the unsharded run, the same bytes apart from the measured run times
    results = {name for name in compare_runs.output_files(smoke_run) if name.startswith("results/")
               and ("/cells/" in name or name.endswith("/summary.csv"))}
    assert len(results) > 100 and results <= compare_runs.output_files(workdir)
    assert [name for name in sorted(results)
            if not compare_runs.same_file(name, smoke_run / name, workdir / name)] == []


def test_changing_the_number_of_shards_or_dropping_them_recomputes_nothing(sharded_smoke_run):
    workdir, _ = sharded_smoke_run
    for overlay in (every_experiment_sharded(workdir, 3), None):
        extra = [str(overlay)] if overlay else []
        result = snakemake(workdir, *smoke_summaries(), "-n", "--cores", "2", "--configfile", "config/smoke.yaml",
                           *extra)
        output = result.stdout + result.stderr
        assert "Nothing to be done" in output, output


def test_one_full_size_cell_of_the_default_config_sharded_has_the_rows_of_the_whole_job(tmp_path):
    # binary_synthetic at d = 256, ratio = 0: the paper's n = 4096, 50 trials, five rho in one setting job
    target = "results/binary_synthetic/cells/d=256_ratio=0_rho=0.0625.csv"
    tables = {}
    for shards in (1, 4):
        workdir = tmp_path / f"shards_{shards}"
        shutil.copytree(REPO / "config", workdir / "config")
        overlay = workdir / "overlay.yaml"
        overlay.write_text(yaml.safe_dump({"experiments": {"binary_synthetic": {"shards": shards}}}))
        planned = snakemake(workdir, "-n", "--cores", "2", target, "--configfile", str(overlay))
        assert planned_jobs(planned, "run_setting_shard_binary_synthetic") == (0 if shards == 1 else shards)
        snakemake(workdir, "--cores", "2", target, "--configfile", str(overlay))
        cells = sorted(workdir.glob("results/binary_synthetic/cells/d=256_ratio=0_rho=*.csv"))
        assert len(cells) == 5
        tables[shards] = {path.name: pd.read_csv(path).drop(columns="runtime_s").to_csv(index=False)
                          for path in cells}
        assert len(pd.read_csv(cells[0])) == 50 * 5  # 50 trials, five mechanisms
    assert tables[1] == tables[4]
