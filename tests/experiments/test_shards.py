"""Trial shards (experiments/planning/shards.py): a job's trials split into consecutive ranges, run apart and
merged into the bytes of the whole job; how many, and the layout a finished job keeps."""
import copy
import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from experiments.engine.atomic import write_csv_atomically
from experiments.engine.cell_files import merge_shard_files, merge_shards, range_name
from experiments.engine.config import ConfigError, load_experiments
from experiments.engine.trials import run_cells
from experiments.jobs.runs import run_cells_job, run_shard_job
from experiments.planning.config_files import load_config
from experiments.planning.resources import SMALL_JOB_MEM_MB, SMALL_JOB_RUNTIME
from experiments.planning.run_plan import RunPlan
from experiments.planning.shards import (
    read_layout,
    shard_count,
    trial_ranges,
    trial_units,
    write_layout,
)

SEED = 5
REPO = Path(__file__).resolve().parents[2]
DEFAULT = REPO / "config" / "config.yaml"


def tiny_config(**experiment):
    entry = {"data": {"source": "gaussian_a", "n": 300}, "grid": {"d": [8], "rho": [0.5, 1.0]}, "trials": 7,
             "mechanisms": ["iome", {"PLAN": {"algorithm": "plan_gaussian", "accounting": "exact"}},
                            "empirical_mean"]}
    entry.update(experiment)
    return {"seed": SEED, "experiments": {"tiny": entry}}


def spec_of(config, name="tiny"):
    return load_experiments(config)[name]


# --- ranges and counts ------------------------------------------------------------------------

@pytest.mark.parametrize("trials,count", [(7, 1), (7, 2), (7, 3), (7, 7), (7, 20), (50, 11), (1, 4)])
def test_shard_ranges_cover_every_trial_once_in_order_and_differ_by_at_most_one(trials, count):
    spec = dataclasses.replace(spec_of(tiny_config()), trials=trials)
    ranges = trial_ranges(spec, count)
    assert [t for r in ranges for t in r] == list(range(trials))
    assert len(ranges) == min(count, trials)
    assert max(map(len, ranges)) - min(map(len, ranges)) <= 1


def test_a_batched_experiment_splits_only_at_its_batches():
    spec = dataclasses.replace(spec_of(tiny_config()), trials=1050, batch_size=200)
    assert trial_units(spec) == 6
    ranges = trial_ranges(spec, 4)
    assert [t for r in ranges for t in r] == list(range(1050))
    assert all(r.start % 200 == 0 for r in ranges)
    assert all(r.stop % 200 == 0 for r in ranges[:-1]) and ranges[-1].stop == 1050
    assert len(trial_ranges(spec, 50)) == 6  # at most one shard per batch


def test_the_shard_count_follows_the_target_length_unless_the_experiment_gives_it():
    spec = spec_of(tiny_config())
    assert shard_count(spec, work_seconds=1000, target_seconds=120) == 7  # 9 wanted, 7 trials
    assert shard_count(spec, work_seconds=250, target_seconds=120) == 3
    assert shard_count(spec, work_seconds=10, target_seconds=120) == 1
    assert shard_count(spec_of(tiny_config(shards=2)), work_seconds=1000, target_seconds=1) == 2
    assert shard_count(spec_of(tiny_config(shards=50)), work_seconds=1, target_seconds=120) == 7
    with pytest.raises(ValueError, match="at least 1 shard"):
        trial_ranges(spec, 0)


def test_shards_and_shard_seconds_together_are_one_config_error():
    with pytest.raises(ConfigError, match=r"experiments\.tiny: shards and shard_seconds both set"):
        spec_of(tiny_config(shards=2, shard_seconds=30))


def test_the_number_of_shards_is_not_part_of_a_cells_id_or_fingerprint():
    plain, split = spec_of(tiny_config()), spec_of(tiny_config(shards=3))
    assert [c.id for c in plain.cells()] == [c.id for c in split.cells()]
    assert [plain.fingerprint(c) for c in plain.cells()] == [split.fingerprint(c) for c in split.cells()]
    timed = spec_of(tiny_config(shard_seconds=5))
    assert [plain.fingerprint(c) for c in plain.cells()] == [timed.fingerprint(c) for c in timed.cells()]


def test_a_range_is_named_by_its_first_and_last_trial():
    assert range_name(range(10, 20)) == "10-19" and range_name(range(0, 1)) == "0-0"


# --- the engine: a shard's rows are the whole job's rows --------------------------------------

def merged_by_shards(spec, cells, ranges, tmp_path, suffix=".csv"):
    """Each cell's file merged from shard files of ``ranges``, as the workflow writes them."""
    merged = {}
    for cell in cells:
        parts = []
        for trials in ranges:
            frame = run_cells(spec, cells, seed=SEED, log=None, trials=trials)[cell.id]
            path = tmp_path / cell.id / f"trials={range_name(trials)}{suffix}"
            write_csv_atomically(frame.drop(columns="runtime_s", errors="ignore"), path)
            parts.append(path)
        merge_shard_files(parts, tmp_path / f"{cell.id}{suffix}")
        merged[cell.id] = (tmp_path / f"{cell.id}{suffix}").read_bytes()
    return merged


def whole(spec, cells, tmp_path, suffix=".csv"):
    frames = run_cells(spec, cells, seed=SEED, log=None)
    files = {}
    for cell_id, frame in frames.items():
        path = tmp_path / f"whole_{cell_id}{suffix}"
        write_csv_atomically(frame.drop(columns="runtime_s", errors="ignore"), path)
        files[cell_id] = path.read_bytes()
    return files


def test_a_per_trial_setting_merged_from_shards_has_the_bytes_of_the_whole_job(tmp_path):
    spec = spec_of(tiny_config())
    cells = spec.settings()["d=8"]
    expected = whole(spec, cells, tmp_path)
    for count in (2, 3, 7):
        assert merged_by_shards(spec, cells, trial_ranges(spec, count), tmp_path / str(count)) == expected


def test_a_fixed_data_experiment_and_a_sparse_shared_one_merge_to_the_whole_job(tmp_path):
    fixed = spec_of(tiny_config(fixed_data=True))
    cells = fixed.settings()["d=8"]
    assert merged_by_shards(fixed, cells, trial_ranges(fixed, 3), tmp_path / "fixed") == whole(fixed, cells,
                                                                                               tmp_path / "fixed")
    binary = spec_of(tiny_config(data={"source": "binary_synthetic", "n": 512}, grid={"d": [64], "ratio": [0.5],
                                                                                     "rho": [0.5, 1.0]},
                                 trials=4, mechanisms=["plan_binary", "iome", "empirical_mean"]))
    cells = binary.settings()["d=64_ratio=0.5"]
    assert merged_by_shards(binary, cells, trial_ranges(binary, 2), tmp_path / "binary") == whole(
        binary, cells, tmp_path / "binary")


def userlevel_config():
    config = load_config(REPO / "config" / "smoke.yaml", default=DEFAULT)
    return {"seed": SEED, "variants": config["variants"],
            "experiments": {"tiny": {**config["experiments"]["userlevel_geometric"], "trials": 500,
                                     "batch_size": 200}}}


def test_a_batched_experiment_merged_from_batch_aligned_shards_has_the_whole_jobs_bytes(tmp_path):
    spec = spec_of(userlevel_config())
    cells = spec.cells()
    ranges = trial_ranges(spec, 2)
    assert [len(r) for r in ranges] == [200, 300]
    assert merged_by_shards(spec, cells, ranges, tmp_path, ".csv.gz") == whole(spec, cells, tmp_path, ".csv.gz")
    with pytest.raises(ValueError, match="do not start and end at batches of 200"):
        run_cells(spec, cells, seed=SEED, log=None, trials=range(100, 300))
    with pytest.raises(ValueError, match="not consecutive trials"):
        run_cells(spec, cells, seed=SEED, log=None, trials=range(400, 600))


# --- merging ----------------------------------------------------------------------------------

def test_a_merge_keeps_one_header_and_every_row_and_writes_gzip_with_fixed_bytes(tmp_path):
    (tmp_path / "a.csv").write_text("x,y\n1,2\n3,4\n")
    (tmp_path / "b.csv").write_text("x,y\n5,6\n")
    assert merge_shard_files([tmp_path / "a.csv", tmp_path / "b.csv"], tmp_path / "m.csv") == 3
    assert (tmp_path / "m.csv").read_text() == "x,y\n1,2\n3,4\n5,6\n"
    for name in ("a", "b"):
        (tmp_path / f"{name}.csv.gz").write_bytes(gzip.compress((tmp_path / f"{name}.csv").read_bytes()))
    merge_shard_files([tmp_path / "a.csv.gz", tmp_path / "b.csv.gz"], tmp_path / "m.csv.gz")
    first = (tmp_path / "m.csv.gz").read_bytes()
    merge_shard_files([tmp_path / "a.csv.gz", tmp_path / "b.csv.gz"], tmp_path / "m.csv.gz")
    assert gzip.decompress(first).decode() == "x,y\n1,2\n3,4\n5,6\n" and (tmp_path / "m.csv.gz").read_bytes() == first


def test_a_shard_with_other_columns_stops_the_merge_naming_it_and_writes_nothing(tmp_path):
    (tmp_path / "a.csv").write_text("x,y\n1,2\n")
    (tmp_path / "b.csv").write_text("x,z\n5,6\n")
    with pytest.raises(ValueError, match=r"b\.csv: its columns \(x,z\) are not those of the first shard \(x,y\)"):
        merge_shard_files([tmp_path / "a.csv", tmp_path / "b.csv"], tmp_path / "m.csv")
    assert not (tmp_path / "m.csv").exists()
    with pytest.raises(ValueError, match="no shard files"):
        merge_shard_files([], tmp_path / "m.csv")


# --- the jobs ---------------------------------------------------------------------------------

def test_shard_jobs_and_their_merge_write_the_cell_files_of_one_job_and_record_the_layout(tmp_path):
    config = tiny_config(share_rho=True)
    spec = spec_of(config)
    cells = spec.settings()["d=8"]
    outputs = [str(tmp_path / "whole" / f"{cell.id}.csv") for cell in cells]
    ids = [cell.id for cell in cells]
    run_cells_job(config=config, experiment="tiny", cells=ids, outputs=outputs, log=str(tmp_path / "w.log"),
                  layout=str(tmp_path / "whole.layout.json"))
    shards, shard_trials = [], []
    for trials in trial_ranges(spec, 3):
        files = [str(tmp_path / "shards" / cell.id / f"trials={range_name(trials)}.csv") for cell in cells]
        run_shard_job(config=config, experiment="tiny", cells=ids, first=trials.start, last=trials.stop - 1,
                      outputs=files, log=str(tmp_path / "s.log"))
        shards += files
        shard_trials += [[cell.id, trials.start, trials.stop - 1] for cell in cells]
    merged = [str(tmp_path / "merged" / f"{cell.id}.csv") for cell in cells]
    # the shards in any order: the job sorts them by their trials
    run_cells_job(config=config, experiment="tiny", cells=ids, outputs=merged, log=str(tmp_path / "m.log"),
                  shards=list(reversed(shards)), shard_trials=list(reversed(shard_trials)),
                  layout=str(tmp_path / "merged.layout.json"))
    for one, other in zip(outputs, merged):
        assert without_runtimes(one) == without_runtimes(other)
    fingerprints = [spec.fingerprint(cell) for cell in cells]
    assert read_layout(tmp_path / "merged.layout.json", fingerprints) == trial_ranges(spec, 3)
    assert read_layout(tmp_path / "whole.layout.json", fingerprints) == [range(7)]
    assert "merged 3 shards, 21 rows" in (tmp_path / "m.log").read_text()
    assert "(trials 0-1 of 7)" in (tmp_path / "s.log").read_text()


def without_runtimes(path):
    import pandas as pd

    return pd.read_csv(path).drop(columns="runtime_s").to_csv(index=False)


def test_a_setting_s_shard_files_and_their_trials_are_listed_cell_by_cell_in_the_same_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no recorded layouts
    config = tiny_config(share_rho=True, shards=3)
    plan = RunPlan(config)
    job = {"setting": "d=8"}
    ids = plan.trials.job_cell_ids("tiny", job)
    assert ids == [cell.id for cell in spec_of(config).settings()["d=8"]] and len(ids) > 1
    ranges = plan.trials.shard_layout("tiny", "d=8")
    assert plan.trials.shard_trials("tiny", job) == [[cell, r.start, r.stop - 1] for cell in ids for r in ranges]
    shard_file = plan.trials.shard_file
    assert plan.trials.shard_inputs("tiny", job) == [shard_file("tiny", cell, r) for cell in ids for r in ranges]


def test_a_job_told_of_other_cells_or_shards_than_its_files_stops_before_writing(tmp_path):
    config = tiny_config(share_rho=True)
    ids = [cell.id for cell in spec_of(config).settings()["d=8"]]
    outputs = [str(tmp_path / f"{cell}.csv") for cell in ids]
    with pytest.raises(ValueError, match=r"1 outputs for the 2 cells"):
        run_cells_job(config=config, experiment="tiny", cells=ids, outputs=outputs[:1], log=str(tmp_path / "w.log"))
    with pytest.raises(ValueError, match="2 shard files but 1 shard trial ranges"):
        run_cells_job(config=config, experiment="tiny", cells=ids, outputs=outputs, log=str(tmp_path / "w.log"),
                      shards=outputs, shard_trials=[[ids[0], 0, 6]])
    assert not any(Path(path).exists() for path in outputs)


def test_a_merge_with_a_missing_shard_names_the_trials_it_lacks_and_writes_no_cell(tmp_path):
    config = tiny_config()
    spec = spec_of(config)
    cell = spec.cells()[0]
    files, shard_trials = [], []
    for trials in trial_ranges(spec, 3)[:2]:
        path = str(tmp_path / cell.id / f"trials={range_name(trials)}.csv")
        run_shard_job(config=config, experiment="tiny", cells=[cell.id], first=trials.start, last=trials.stop - 1,
                      outputs=[path], log=str(tmp_path / "s.log"))
        files.append(path)
        shard_trials.append([cell.id, trials.start, trials.stop - 1])
    output = tmp_path / f"{cell.id}.csv"
    with pytest.raises(ValueError, match=rf"tiny {cell.id}: shards .* do not cover its 7 trials once"):
        run_cells_job(config=config, experiment="tiny", cells=[cell.id], outputs=[str(output)],
                      log=str(tmp_path / "m.log"), shards=files, shard_trials=shard_trials,
                      layout=str(tmp_path / "layout.json"))
    assert not output.exists() and not (tmp_path / "layout.json").exists()



def test_a_merge_whose_cells_were_split_differently_names_both_layouts_and_writes_no_cell(tmp_path):
    config = tiny_config(share_rho=True)
    spec = spec_of(config)
    cells = spec.settings()["d=8"]
    shards = []
    for cell, count in zip(cells, (2, 3)):
        for trials in trial_ranges(spec, count):
            path = str(tmp_path / cell.id / f"trials={range_name(trials)}.csv")
            run_shard_job(config=config, experiment="tiny", cells=[cell.id], first=trials.start,
                          last=trials.stop - 1, outputs=[path], log=str(tmp_path / "s.log"))
            shards.append((path, cell.id, trials))
    outputs = {cell.id: str(tmp_path / f"{cell.id}.csv") for cell in cells}
    with pytest.raises(ValueError, match=rf"tiny {cells[1].id}: shards \['0-1', '2-3', '4-6'\] differ from the "
                                         r"job's other cells \(\['0-2', '3-6'\]\)"):
        merge_shards(outputs, shards, experiment="tiny", trials=7, mechanisms=[m.name for m in spec.mechanisms])
    assert not any(Path(path).exists() for path in outputs.values())

# --- the layout a finished job keeps ------------------------------------------------------------

def test_a_layout_is_read_back_only_for_the_fingerprints_it_was_written_for(tmp_path):
    path = tmp_path / "job.layout.json"
    write_layout(path, ["a", "b"], [range(0, 3), range(3, 7)])
    assert read_layout(path, ["a", "b"]) == [range(0, 3), range(3, 7)]
    assert read_layout(path, ["a", "c"]) is None
    assert read_layout(tmp_path / "missing.json", ["a"]) is None
    path.write_text("{not json")
    assert read_layout(path, ["a", "b"]) is None


# --- the plan ----------------------------------------------------------------------------------

def test_a_long_cell_splits_on_many_cores_or_on_a_cluster_but_not_on_two_cores(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no recorded layouts
    config = load_config(default=DEFAULT)
    job = {"cell": "d=1024_rho=0.01"}
    for cores in (None, 64, 16):
        plan = RunPlan(config, cores=cores)
        ranges = plan.trials.shard_layout("gaussian_A_low", "d=1024_rho=0.01")
        assert len(ranges) > 1, cores
        inputs = plan.trials.shard_inputs("gaussian_A_low", job)
        assert inputs[0] == f"results/gaussian_A_low/shards/d=1024_rho=0.01/trials=0-{ranges[0].stop - 1}.csv"
        assert len(inputs) == len(ranges)
        # the merging job is told each file's cell and trials, in the same order (it parses no path)
        assert plan.trials.shard_trials("gaussian_A_low", job) == [["d=1024_rho=0.01", r.start, r.stop - 1]
                                                                   for r in ranges]
        # the merge is a small job; a shard asks for its trials' share of the time, the memory of one trial
        assert plan.resources.job_mem_mb("gaussian_A_low", job) == SMALL_JOB_MEM_MB
        assert plan.resources.job_runtime("gaussian_A_low", job) == SMALL_JOB_RUNTIME
        shard = {**job, "first": "0", "last": str(ranges[0].stop - 1)}
        whole = RunPlan(config, cores=2).resources.job_mem_mb("gaussian_A_low", job)
        assert 0.9 * whole <= plan.resources.shard_mem_mb("gaussian_A_low", shard) <= whole
        assert plan.resources.shard_runtime("gaussian_A_low", shard) < RunPlan(config, cores=2).resources.job_runtime(
            "gaussian_A_low", job)
    two = RunPlan(config, cores=2)
    assert all(len(two.trials.shard_layout(name, job)) == 1
               for name in two.experiments for job in two.trials.job_names(name))
    assert two.trials.shard_inputs("gaussian_A_low", job) == []
    # at the target length on a cluster: every job's estimated work within 120 s per shard, or one per trial
    cluster = RunPlan(config)
    for name in cluster.experiments:
        spec = cluster.experiments[name]
        for job_name in cluster.trials.job_names(name):
            ranges = cluster.trials.shard_layout(name, job_name)
            work = cluster.trials.job_work_seconds(name, job_name)
            assert work / len(ranges) <= 120 or len(ranges) == trial_units(spec), (name, job_name)


def test_a_recorded_layout_is_kept_when_the_shard_count_changes_and_dropped_when_the_cell_changes(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tiny_config(shards=3)
    plan = RunPlan(config)
    cell = spec_of(config).cells()[0]
    assert len(plan.trials.shard_layout("tiny", cell.id)) == 3
    write_layout(plan.trials.shard_layout_file("tiny", cell.id), [spec_of(config).fingerprint(cell)], [range(7)])
    assert plan.trials.shard_layout("tiny", cell.id) == [range(7)]
    more = tiny_config(shards=5)
    assert RunPlan(more).trials.shard_layout("tiny", cell.id) == [range(7)]
    assert RunPlan(more).trials.shard_inputs("tiny", {"cell": cell.id}) == []
    changed = copy.deepcopy(more)
    changed["experiments"]["tiny"]["trials"] = 9
    assert len(RunPlan(changed).trials.shard_layout("tiny", cell.id)) == 5
    assert json.loads((tmp_path / plan.trials.shard_layout_file("tiny", cell.id)).read_text())["trials"] == [[0, 7]]
