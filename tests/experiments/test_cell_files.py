"""Cell and shard files are checked when read (experiments/engine/cell_files.py, docs/design.md §9): a file
cut short or edited by hand, rows missing or repeated, or an error that is not a number stops the
run with one error naming the file and how to recompute it, never a summary."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.engine.cell_files import CellFileError, checksum_path, read_cell_file, write_cell_file
from experiments.jobs.runs import run_cells_job, run_shard_job, summarise_job

MECHANISMS = ["PLAN", "IOME"]
TRIALS = range(40)


def cell_frame(trials=TRIALS, mechanisms=MECHANISMS, seed=0):
    rng = np.random.default_rng(seed)
    rows = [{"experiment": "tiny", "d": 4, "rho": 0.5, "trial": trial, "mechanism": name,
             "error": float(rng.uniform(0.4, 0.5)), "error_vs_empirical": float(rng.uniform(0.4, 0.5))}
            for trial in trials for name in mechanisms]
    return pd.DataFrame(rows)


@pytest.fixture(params=[".csv", ".csv.gz"])
def written(tmp_path, request):
    path = tmp_path / f"d=4_rho=0.5{request.param}"
    write_cell_file(cell_frame(), path)
    return path


def test_a_written_file_reads_back_with_its_checksum(written):
    frame = read_cell_file(written, trials=TRIALS, mechanisms=MECHANISMS)
    assert len(frame) == 80 and checksum_path(written).read_text().split()[1] == "80"


def test_a_file_cut_to_half_its_size_is_refused_naming_it_and_the_way_to_recompute_it(written):
    data = written.read_bytes()
    written.write_bytes(data[:len(data) // 2])
    with pytest.raises(CellFileError, match=rf"{written.name}: its bytes do not match the SHA-256 recorded .*"
                                            r"Delete it .* run snakemake again"):
        read_cell_file(written, trials=TRIALS, mechanisms=MECHANISMS)


def test_one_number_changed_by_hand_is_refused(tmp_path):
    path = tmp_path / "cell.csv"
    write_cell_file(cell_frame(), path)
    text = path.read_text()
    first_error = text.splitlines()[1].split(",")[5]
    path.write_text(text.replace(first_error, "0.9", 1))
    with pytest.raises(CellFileError, match="changed or cut afterwards"):
        read_cell_file(path, trials=TRIALS, mechanisms=MECHANISMS)


@pytest.mark.parametrize(("frame", "message"), [
    (cell_frame(trials=range(20)), "holds 40 rows where its 40 trials of 2 mechanisms make 80"),
    (pd.concat([cell_frame(trials=range(39)), cell_frame(trials=range(1))]),
     "not each trial of 0-39 once per mechanism: trial 39 of mechanism '(IOME|PLAN)' is missing"),
    (cell_frame(trials=range(1, 41)), "trial 0 of mechanism '(IOME|PLAN)' is missing"),
    (cell_frame(mechanisms=["PLAN", "Other"]), r"is missing"),
    (cell_frame().drop(columns="trial"), "no column 'trial'"),
    (cell_frame().assign(error=lambda f: np.where(f.index == 7, np.nan, f.error)),
     r"1 value\(s\) of 'error' are not finite numbers, the first at trial 3, mechanism 'IOME'"),
    (cell_frame().assign(error_vs_empirical=lambda f: np.where(f.index == 0, np.inf, f.error)),
     "'error_vs_empirical' are not finite"),
])
def test_rows_that_are_not_the_config_s_trials_and_mechanisms_are_refused(tmp_path, frame, message):
    """Checked against the config even where the checksum matches (a file written by older or other code)."""
    path = tmp_path / "cell.csv"
    write_cell_file(frame, path)
    with pytest.raises(CellFileError, match=message):
        read_cell_file(path, trials=TRIALS, mechanisms=MECHANISMS)


def test_an_error_column_the_source_has_no_truth_for_is_nan_throughout_and_accepted(tmp_path):
    path = tmp_path / "real.csv"
    write_cell_file(cell_frame().assign(error=np.nan), path)
    assert read_cell_file(path, trials=TRIALS, mechanisms=MECHANISMS)["error"].isna().all()


def refused_by_iome(frame):
    """IOME's rows as a refusal writes them (experiments/engine/trials.py): no errors, a reason."""
    iome = frame["mechanism"] == "IOME"
    frame = frame.assign(refused=np.where(iome, "too little data", None))
    frame.loc[iome, ["error", "error_vs_empirical"]] = np.nan
    return frame


def test_the_rows_of_a_refusal_have_no_errors_and_are_accepted(tmp_path):
    path = tmp_path / "refused.csv"
    write_cell_file(refused_by_iome(cell_frame()), path)
    frame = read_cell_file(path, trials=TRIALS, mechanisms=MECHANISMS)
    assert frame[frame["mechanism"] == "IOME"]["error"].isna().all()


def test_a_missing_error_beside_a_refusal_is_still_refused(tmp_path):
    frame = refused_by_iome(cell_frame())
    frame.loc[frame.index[0], "error"] = np.nan  # trial 0 of PLAN, which released an estimate
    path = tmp_path / "refused.csv"
    write_cell_file(frame, path)
    with pytest.raises(CellFileError, match=r"1 value\(s\) of 'error' are not finite numbers, the first at trial 0, "
                                            r"mechanism 'PLAN'"):
        read_cell_file(path, trials=TRIALS, mechanisms=MECHANISMS)


def test_a_file_without_a_checksum_is_still_checked_for_its_rows(tmp_path):
    path = tmp_path / "old.csv"
    cell_frame().to_csv(path, index=False)
    assert len(read_cell_file(path, trials=TRIALS, mechanisms=MECHANISMS)) == 80
    cell_frame(trials=range(30)).to_csv(path, index=False)
    with pytest.raises(CellFileError, match="holds 60 rows"):
        read_cell_file(path, trials=TRIALS, mechanisms=MECHANISMS)


def test_an_unreadable_file_is_refused_naming_it(tmp_path):
    path = tmp_path / "cell.csv"
    path.write_text("trial,mechanism,error\n1,PLAN\n2,IOME,0.5,7,8\n")
    with pytest.raises(CellFileError, match=r"cell.csv: it cannot be read as a table \(ParserError"):
        read_cell_file(path)


# ---------------------------------------------------------------- the jobs that read them

def tiny_config(trials=4):
    return {"seed": 3, "experiments": {"tiny": {
        "data": {"source": "gaussian_a", "n": 200, "d": 4}, "grid": {"rho": [0.5]}, "trials": trials,
        "mechanisms": ["empirical_mean", "coordinate_median"]}}}


def test_the_summary_job_refuses_a_cut_cell_file_instead_of_summarising_fewer_trials(tmp_path):
    config = tiny_config()
    cell = tmp_path / "cells" / "rho=0.5.csv"
    run_cells_job(config=config, experiment="tiny", cells=["rho=0.5"], outputs=[str(cell)],
                  log=str(tmp_path / "cell.log"))
    summary = tmp_path / "summary.csv"
    options = dict(grid=["rho"], output=str(summary), log=str(tmp_path / "summary.log"), trials=4,
                   mechanisms=["empirical_mean", "coordinate_median"])
    summarise_job(cells=[str(cell)], **options)
    assert set(pd.read_csv(summary)["trials"]) == {4}
    lines = cell.read_text().splitlines(keepends=True)
    cell.write_text("".join(lines[:len(lines) // 2]))
    summary.unlink()
    with pytest.raises(CellFileError, match="rho=0.5.csv: its bytes do not match"):
        summarise_job(cells=[str(cell)], **options)
    assert not summary.exists()


def test_a_cut_shard_stops_the_merge_before_any_cell_file_is_written_and_merged_checksums_go(tmp_path):
    config = tiny_config(trials=6)
    shards = [str(tmp_path / "shards" / "rho=0.5" / f"trials={first}-{last}.csv") for first, last in ((0, 2), (3, 5))]
    shard_trials = [["rho=0.5", 0, 2], ["rho=0.5", 3, 5]]
    for path, (first, last) in zip(shards, ((0, 2), (3, 5))):
        run_shard_job(config=config, experiment="tiny", first=first, last=last, outputs=[path], cells=["rho=0.5"],
                      log=str(tmp_path / "shard.log"))
    cell = tmp_path / "cells" / "rho=0.5.csv"
    data = Path(shards[1]).read_bytes()
    Path(shards[1]).write_bytes(data[:-40])
    with pytest.raises(CellFileError, match="trials=3-5.csv: its bytes do not match"):
        run_cells_job(config=config, experiment="tiny", cells=["rho=0.5"], outputs=[str(cell)],
                      log=str(tmp_path / "m.log"), shards=shards, shard_trials=shard_trials)
    assert not cell.exists()
    Path(shards[1]).write_bytes(data)  # restored: the merge runs, records the cell's checksum, drops the shards'
    run_cells_job(config=config, experiment="tiny", cells=["rho=0.5"], outputs=[str(cell)],
                  log=str(tmp_path / "m.log"), shards=shards, shard_trials=shard_trials)
    assert len(read_cell_file(cell, trials=range(6), mechanisms=["empirical_mean", "coordinate_median"])) == 12
    assert checksum_path(cell).exists() and not any(checksum_path(path).exists() for path in shards)
