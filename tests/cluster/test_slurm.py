"""The whole smoke config through a real Slurm (scripts/slurm-local.sh) with profiles/slurm and
snakemake-executor-plugin-slurm, against a local run of the same config (docs/design.md §10)."""
from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from cluster_helpers import (
    copy_inputs,
    differing_results,
    run,
    run_id,
    sacct_jobs,
    slurm_command,
    snakemake_command,
    submitted_jobs,
)

pytestmark = pytest.mark.cluster


# Through Slurm, a cell experiment, a setting experiment and a batched one run as trial shards
# (separate Slurm jobs, each with its own resource request, merged by the cell or setting job);
# the local run does not split them: the results must still be the same bytes.
SHARDED = {"gaussian_A": 2, "binary_synthetic": 2, "userlevel_geometric": 2}


@pytest.fixture(scope="module")
def smoke_runs(slurm, tmp_path_factory):
    """The smoke config run locally and, with some experiments in trial shards, through Slurm, each
    in its own copy of the inputs."""
    root = tmp_path_factory.mktemp("smoke")
    local, cluster = copy_inputs(root / "local"), copy_inputs(root / "slurm")
    started = time.monotonic()
    run(snakemake_command(local, "--cores", "2", configfile=local / "config" / "smoke.yaml"), cwd=local, timeout=900)
    local_seconds = time.monotonic() - started
    sharded = cluster / "sharded.yaml"
    sharded.write_text(yaml.safe_dump({"experiments": {name: {"shards": k} for name, k in SHARDED.items()}}))
    started = time.monotonic()
    result = run(slurm_command(cluster, configfile=[cluster / "config" / "smoke.yaml", sharded]), cwd=cluster,
                 timeout=1800)
    slurm_seconds = time.monotonic() - started
    print(f"\nsmoke config: local run {local_seconds:.0f} s, through Slurm {slurm_seconds:.0f} s")
    return local, cluster, result.stdout + result.stderr


def test_every_job_of_the_smoke_run_went_through_slurm_and_completed(slurm, smoke_runs):
    _, _, output = smoke_runs
    submitted = Counter(submitted_jobs(output))
    jobs = sacct_jobs(slurm, run_id(output))
    in_slurm = Counter((job["rule"], job["wildcards"]) for job in jobs)
    assert in_slurm == submitted, (in_slurm - submitted, submitted - in_slurm)
    assert {job["state"] for job in jobs} == {"COMPLETED"}, [job for job in jobs if job["state"] != "COMPLETED"]
    rules = {rule for rule, _ in submitted}
    # every stage of the workflow: datasets, cells, settings, summaries, figures, report
    assert {"fetch_dataset", "parse_dataset", "run_cell", "run_setting_kosarak_shaped", "run_setting_userlevel_zipf",
            "summarise", "fidelity", "figure", "figure2", "errata", "report_page"} <= rules
    # the shards: two per cell of gaussian_A (4 cells), per setting of binary_synthetic (4), and the
    # two batches of userlevel_geometric
    assert sum(n for (rule, _), n in submitted.items() if rule == "run_shard") == 8
    assert sum(n for (rule, _), n in submitted.items() if rule == "run_setting_shard_binary_synthetic") == 8
    assert sum(n for (rule, _), n in submitted.items() if rule == "run_setting_shard_userlevel_geometric") == 2
    assert sum(submitted.values()) >= 80


def test_the_smoke_run_through_slurm_gives_the_local_run_results(smoke_runs):
    local, cluster, _ = smoke_runs
    assert differing_results(local, cluster) == []
    for name in ["results/report.html", "figures/figure3.png", "figures/userlevel_worst_case.pdf",
                 "figures/figure2.png"]:
        assert (Path(cluster) / name).stat().st_size > 0, name
