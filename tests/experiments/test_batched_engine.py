"""The engine's budget families and its batched Monte-Carlo runner (docs/design.md §3, §5.7): user-level
experiments sweep eps with ledgers in eps, their runs are drawn and evaluated in batches with one
seed key per batch, and every existing (rho, per-trial) experiment keeps its cells, fingerprints
and seeds."""
import copy
import gzip

import numpy as np
import pandas as pd
import pytest

import mechanisms
from experiments.engine.atomic import write_csv_atomically
from experiments.engine.config import ConfigError, load_experiments
from experiments.engine.sources import draw
from experiments.engine.summary import summarise
from experiments.engine.trials import data_generator, mechanism_generator, run_cells
from testkit.engine import run_one_cell

USERLEVEL = {
    "seed": 5,
    "variants": {"OPT-wc": {"algorithm": "opt_worst_case", "average_users": True},
                 "AKMV": {"algorithm": "akmv", "average_users": True}},
    "experiments": {
        "users": {
            "data": {"source": "userlevel", "collection": "geometric", "M": 3, "bound": 65},
            "grid": {"eps": [0.5, 2.0]},
            "trials": 50,
            "batch_size": 20,
            "metric": "l1",
            "mechanisms": ["laplace", "OPT-wc", "AKMV"],
        }
    },
}


def spec_of(config=USERLEVEL, name="users"):
    return load_experiments(copy.deepcopy(config))[name]


def changed(**entry):
    config = copy.deepcopy(USERLEVEL)
    config["experiments"]["users"].update(entry)
    return config


def test_the_budget_is_the_mechanism_family_s_eps_for_the_user_level_mechanisms_and_rho_otherwise():
    assert {name: mechanisms.budget_name(name) for name in ("laplace", "opt_worst_case", "akmv")} == dict.fromkeys(
        ("laplace", "opt_worst_case", "akmv"), "eps")
    zcdp = ("plan_gaussian", "iome", "plan_binary", "empirical_mean")
    assert {mechanisms.budget_name(name) for name in zcdp} == {"rho"}
    spec = spec_of()
    assert spec.budget == "eps" and [cell.id for cell in spec.cells()] == ["eps=0.5", "eps=2"]
    assert [cell.budget for cell in spec.cells()] == [0.5, 2.0]
    assert spec.batch_size == 20 and spec.share_rho and spec.cell_suffix == ".csv.gz"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"grid": {"rho": [0.5]}}, r"experiments\.users\.grid\.rho: not a parameter"),
        ({"mechanisms": ["laplace", "iome"]},
         r"experiments\.users\.mechanisms: mixes privacy budgets \(laplace: eps, iome: rho\)"),
        ({"metric": "l2"}, r"experiments\.users\.metric: 'l2' has no batched form"),
        ({"data": {"source": "gaussian_a", "n": 10}, "grid": {"eps": [1.0], "d": [2]}},
         r"experiments\.users\.data\.source: 'gaussian_a' cannot draw a batch of runs"),
    ],
)
def test_budget_and_batching_errors_name_the_key(entry, message):
    with pytest.raises(ConfigError, match=message):
        load_experiments(changed(**entry))


def test_an_eps_experiment_without_an_eps_grid_is_named():
    config = changed(grid={"L": [2]})
    with pytest.raises(ConfigError, match=r"experiments\.users\.grid: needs an eps list"):
        load_experiments(config)


def test_batch_size_is_refused_for_per_trial_mechanisms():
    config = {"seed": 1, "experiments": {"t": {"data": {"source": "gaussian_a", "n": 50},
                                               "grid": {"d": [2], "rho": [1]},
                                               "trials": 2, "batch_size": 5, "mechanisms": ["iome"]}}}
    with pytest.raises(ConfigError, match=r"experiments\.t\.batch_size: only for batched mechanisms"):
        load_experiments(config)


def test_a_generated_eps_grid_is_log_spaced_plus_the_jump_points_of_opt_wc():
    spec = spec_of(changed(grid={"eps": {"logspace": [0.05, 5, 41], "jump_points": 1}}))
    values = [cell.budget for cell in spec.cells()]
    assert values == sorted(values) and len(values) == len(set(values))
    jumps = [2 / k for k in range(1, 41)]
    assert all(any(value == jump for value in values) for jump in jumps)  # exact, not rounded
    logspaced = [float(f"{v:.4g}") for v in np.geomspace(0.05, 5, 41)]
    assert set(logspaced) <= set(values) and len(values) == len(set(logspaced) | set(jumps))


def test_per_trial_experiments_keep_their_fingerprints_and_have_no_batches():
    config = {"seed": 1, "experiments": {"t": {"data": {"source": "gaussian_a", "n": 50},
                                               "grid": {"d": [2], "rho": [1]},
                                               "trials": 2, "mechanisms": ["iome"]}}}
    spec = load_experiments(config)["t"]
    assert spec.batch_size is None and spec.cell_suffix == ".csv" and spec.budget == "rho"
    assert "batch_size" not in spec.fingerprint(spec.cells()[0])
    assert "batch_size" in spec_of().fingerprint(spec_of().cells()[0])


def test_a_batched_cell_has_one_row_per_run_and_mechanism_with_the_errors_of_direct_batched_calls():
    spec = spec_of()
    cell = spec.cells()[0]
    frame = run_one_cell(spec, cell, seed=5, log=None)
    assert len(frame) == 50 * 3 and list(frame.columns) == ["experiment", "eps", "trial", "mechanism", "error"]
    assert set(frame.groupby("mechanism")["trial"].apply(lambda t: tuple(t))) == {tuple(range(50))}
    # batch 1 holds runs 20..39: redo it by hand from its seed keys
    data = draw(spec.source, {**dict(spec.data), "runs": 20}, data_generator(5, spec.id, cell, 1))
    for name, algorithm, options in (("laplace", "laplace", {}), ("OPT-wc", "opt_worst_case", {"average_users": True})):
        estimate = mechanisms.REGISTRY[algorithm](data.x, users=data.users, eps=0.5, bound=65.0, batched=True,
                                                  rng=mechanism_generator(5, spec.id, cell, 1, name), **options)
        expected = np.abs(estimate.mean - mechanisms.true_mean(data.x, users=data.users, batched=True)).sum(axis=1)
        mine = frame[(frame["mechanism"] == name) & frame["trial"].between(20, 39)]["error"].to_numpy()
        np.testing.assert_array_equal(mine, expected)


def test_the_eps_values_of_a_batched_setting_run_together_give_the_tables_of_separate_cells_and_share_the_data(
        monkeypatch):
    from experiments.engine import trials

    spec = spec_of()
    calls = []
    monkeypatch.setattr(trials, "draw", lambda *args, **kwargs: calls.append(args[1]["runs"]) or draw(*args, **kwargs))
    together = run_cells(spec, spec.cells(), seed=5, log=None)
    assert calls == [20, 20, 10]  # each batch drawn once for both eps values
    for cell in spec.cells():
        pd.testing.assert_frame_equal(together[cell.id], run_one_cell(spec, cell, seed=5, log=None))


def test_a_mechanism_whose_ledger_is_not_the_cell_s_budget_stops_the_run(monkeypatch):
    spec = spec_of()
    honest = mechanisms.make_mechanism

    def overspending(algorithm, **options):
        function = honest(algorithm, **options)

        def wrapped(*args, **kwargs):
            estimate = function(*args, **kwargs)
            ledger = (*estimate.ledger, mechanisms.PureLedgerEntry("extra", 0.1))
            return mechanisms.Estimate(mean=estimate.mean, ledger=ledger, diagnostics=estimate.diagnostics)

        return wrapped

    monkeypatch.setattr(mechanisms, "make_mechanism", overspending)
    with pytest.raises(RuntimeError, match="spent 0.6 eps, not the cell's 0.5"):
        run_one_cell(spec, spec.cells()[0], seed=5, log=None)


def test_batched_summaries_have_the_mean_and_its_standard_error():
    spec = spec_of()
    frame = run_one_cell(spec, spec.cells()[0], seed=5, log=None)
    summary = summarise(frame, ["eps"])
    laplace = summary[summary["mechanism"] == "laplace"].iloc[0]
    errors = frame[frame["mechanism"] == "laplace"]["error"]
    assert laplace["trials"] == 50
    assert laplace["mean"] == pytest.approx(errors.mean())
    assert laplace["se"] == pytest.approx(errors.std(ddof=1) / np.sqrt(50))
    assert "mean_vs_empirical" not in summary.columns


def test_compressed_cell_files_are_byte_identical_for_identical_results(tmp_path):
    spec = spec_of()
    frame = run_one_cell(spec, spec.cells()[0], seed=5, log=None)
    write_csv_atomically(frame, tmp_path / "a.csv.gz")
    write_csv_atomically(run_one_cell(spec, spec.cells()[0], seed=5, log=None), tmp_path / "b.csv.gz")
    assert (tmp_path / "a.csv.gz").read_bytes() == (tmp_path / "b.csv.gz").read_bytes()
    with gzip.open(tmp_path / "a.csv.gz", "rt") as stream:
        pd.testing.assert_frame_equal(pd.read_csv(stream), pd.read_csv(tmp_path / "a.csv.gz"))
    assert pd.read_csv(tmp_path / "a.csv.gz")["error"].to_numpy() == pytest.approx(frame["error"].to_numpy(), rel=1e-9)
