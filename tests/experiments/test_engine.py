"""The experiment engine: cells, ids, seeds, trials and summaries (docs/design.md §3)."""
import copy

import numpy as np
import pandas as pd
import pytest
import scipy.sparse

from datasets import Sample
from experiments.engine.config import ConfigError, format_value, load_experiments
from experiments.engine.metrics import METRICS
from experiments.engine.sources import DATA_SOURCES, draw
from experiments.engine.summary import summarise
from experiments.engine.trials import (
    data_generator,
    fixed_data_generator,
    mechanism_generator,
    rho_free_generator,
    run_cells,
    stable_id,
)
from experiments.planning.config_files import load_config
from mechanisms import make_mechanism, mechanism_options
from testkit.engine import run_one_cell

TINY = {
    "seed": 7,
    "variants": {"PLAN": {"algorithm": "plan_gaussian", "accounting": "published"}},
    "experiments": {
        "tiny": {
            "data": {"source": "gaussian_a", "n": 200},
            "grid": {"d": [4, 8], "rho": [0.5, 1]},
            "trials": 3,
            "mechanisms": ["PLAN", "iome", {"mean_again": {"algorithm": "empirical_mean"}}, "empirical_mean"],
        }
    },
}


def spec_of(config=TINY):
    return load_experiments(copy.deepcopy(config))["tiny"]


def test_cells_are_the_product_of_the_grid_with_readable_ids():
    assert [cell.id for cell in spec_of().cells()] == ["d=4_rho=0.5", "d=4_rho=1", "d=8_rho=0.5", "d=8_rho=1"]


def reordered_grid(config=TINY):
    """The same config with the grid's keys in reverse order, as a YAML tool may write it."""
    config = copy.deepcopy(config)
    grid = config["experiments"]["tiny"]["grid"]
    config["experiments"]["tiny"]["grid"] = dict(reversed(list(grid.items())))
    assert list(config["experiments"]["tiny"]["grid"]) == ["rho", "d"]
    return config


def test_cell_ids_name_the_data_parameters_in_sorted_order_and_the_budget_last():
    config = copy.deepcopy(TINY)
    config["experiments"]["tiny"].update(data={"source": "gaussian_skewed"},
                                         grid={"rho": [1], "n": [50], "d": [4], "alpha": [2]})
    (cell,) = spec_of(config).cells()
    assert cell.id == "alpha=2_d=4_n=50_rho=1"
    assert spec_of(config).grid_names == ["alpha", "d", "n", "rho"]


def test_the_order_of_the_grid_keys_in_the_yaml_changes_no_cell_fingerprint_or_result():
    original, reordered = spec_of(), spec_of(reordered_grid())
    assert [cell.id for cell in reordered.cells()] == [cell.id for cell in original.cells()]
    assert reordered.grid_names == original.grid_names == ["d", "rho"]
    for cell in original.cells():
        assert reordered.fingerprint(reordered.cell(cell.id)) == original.fingerprint(cell)
    first = run_one_cell(original, original.cell("d=4_rho=1"), seed=7, log=None)
    second = run_one_cell(reordered, reordered.cell("d=4_rho=1"), seed=7, log=None)
    pd.testing.assert_frame_equal(first.drop(columns="runtime_s"), second.drop(columns="runtime_s"))


@pytest.mark.parametrize(("value", "text"), [(1, "1"), (1.0, "1"), (0.125, "0.125"), (2048, "2048"), (0.01, "0.01")])
def test_cell_id_values_do_not_depend_on_how_yaml_typed_them(value, text):
    assert format_value(value) == text


def test_a_new_grid_value_leaves_the_fingerprints_of_existing_cells_unchanged():
    bigger = copy.deepcopy(TINY)
    bigger["experiments"]["tiny"]["grid"]["d"].append(16)
    old, new = spec_of(), spec_of(bigger)
    for cell in old.cells():
        assert new.fingerprint(new.cell(cell.id)) == old.fingerprint(cell)


def test_changing_the_trial_count_changes_every_fingerprint():
    more = copy.deepcopy(TINY)
    more["experiments"]["tiny"]["trials"] = 4
    old, new = spec_of(), spec_of(more)
    assert all(new.fingerprint(new.cell(c.id)) != old.fingerprint(c) for c in old.cells())


def test_cell_work_is_trials_times_mechanisms_times_n_times_d():
    spec = spec_of()
    assert [spec.work(cell) for cell in spec.cells()] == [3 * 4 * 200 * 4] * 2 + [3 * 4 * 200 * 8] * 2
    scalar = copy.deepcopy(TINY)
    scalar["experiments"]["tiny"].update(data={"source": "gaussian_scalar", "n": 50},
                                         grid={"variance": [1.0], "rho": [1]})
    (cell,) = spec_of(scalar).cells()
    assert spec_of(scalar).work(cell) == 3 * 4 * 50  # no d: one column


def test_stable_ids_are_pinned_so_seeds_never_change_between_versions():
    assert stable_id("gaussian_A") == 0x46269B58
    assert stable_id("d=1024_rho=0.25") == 0xFE8A1DD0


def cell_of(cell_id, spec=None):
    return (spec or spec_of()).cell(cell_id)


def test_the_data_of_a_trial_are_keyed_by_the_setting_so_every_rho_sees_the_same_data():
    low, high = cell_of("d=4_rho=0.5"), cell_of("d=4_rho=1")
    assert data_generator(7, "tiny", low, 0).random() == data_generator(7, "tiny", high, 0).random()
    draws = {
        data_generator(7, "tiny", high, 0).random(),
        data_generator(7, "tiny", high, 1).random(),
        data_generator(7, "tiny", cell_of("d=8_rho=1"), 0).random(),
        data_generator(8, "tiny", high, 0).random(),
        data_generator(7, "other", high, 0).random(),
    }
    assert len(draws) == 5


def test_a_mechanism_draws_its_noise_per_cell_and_its_rotation_per_setting():
    low, high = cell_of("d=4_rho=0.5"), cell_of("d=4_rho=1")
    noise = {mechanism_generator(7, "tiny", cell, 0, "iome").random() for cell in (low, high)}
    assert len(noise) == 2
    rotation = {rho_free_generator(7, "tiny", cell, 0, "iome").random() for cell in (low, high)}
    assert len(rotation) == 1
    streams = {
        mechanism_generator(7, "tiny", high, 0, "iome").random(),
        mechanism_generator(7, "tiny", high, 0, "PLAN").random(),
        rho_free_generator(7, "tiny", high, 0, "iome").random(),
        rho_free_generator(7, "tiny", high, 0, "PLAN").random(),
        rho_free_generator(7, "tiny", high, 1, "iome").random(),
        data_generator(7, "tiny", high, 0).random(),
    }
    assert len(streams) == 6


@pytest.fixture(scope="module")
def cell_frame():
    spec = spec_of()
    return run_one_cell(spec, spec.cell("d=8_rho=0.5"), seed=7, log=None)


def test_run_cell_gives_one_row_per_trial_and_mechanism(cell_frame):
    assert len(cell_frame) == 3 * 4
    assert list(cell_frame["mechanism"][:4]) == ["PLAN", "iome", "mean_again", "empirical_mean"]
    assert set(cell_frame["d"]) == {8} and set(cell_frame["rho"]) == {0.5}


def test_all_mechanisms_of_a_trial_see_the_same_data(cell_frame):
    means = cell_frame[cell_frame["mechanism"].isin(["mean_again", "empirical_mean"])]
    per_trial = means.groupby("trial")["error"].nunique()
    assert (per_trial == 1).all()
    assert np.allclose(means["error_vs_empirical"], 0.0)
    assert cell_frame.groupby("trial")["error"].first().nunique() == 3  # trials differ


def test_run_cell_is_reproducible_and_records_the_ledger(cell_frame):
    spec = spec_of()
    again = run_one_cell(spec, spec.cell("d=8_rho=0.5"), seed=7, log=None)
    pd.testing.assert_frame_equal(cell_frame.drop(columns="runtime_s"), again.drop(columns="runtime_s"))
    plan = cell_frame[cell_frame["mechanism"] == "PLAN"]
    assert (plan["true_rho"] > 3 * 0.5).all()
    assert np.allclose(cell_frame[cell_frame["mechanism"] == "iome"]["ledger_total"], 0.5)


def direct_estimate(spec, mechanism, cell, trial, sample):
    """What the engine must compute: the mechanism called on the plain data with the cell's streams."""
    function = make_mechanism(mechanism.algorithm, **mechanism.options_dict())
    extra = {}
    if "rotation_rng" in mechanism_options(mechanism.algorithm):
        extra["rotation_rng"] = rho_free_generator(7, spec.id, cell, trial, mechanism.name)
    return function(sample.x, rho=cell.budget, bounds=sample.bounds,
                    rng=mechanism_generator(7, spec.id, cell, trial, mechanism.name), **extra)


@pytest.mark.parametrize("trial", [0, 1, 2])
def test_run_cell_gives_the_errors_of_direct_calls_on_the_plain_data(cell_frame, trial):
    """The engine hands every mechanism of a trial one SharedSample, built from trial 1 on
    in the previous trial's arrays; the numbers must be those of calls on the array."""
    spec = spec_of()
    cell = spec.cell("d=8_rho=0.5")
    sample = draw("gaussian_a", {"n": 200, "d": 8}, data_generator(7, "tiny", cell, trial))
    for mechanism in spec.mechanisms:
        estimate = direct_estimate(spec, mechanism, cell, trial, sample)
        row = cell_frame[(cell_frame["trial"] == trial) & (cell_frame["mechanism"] == mechanism.name)]
        assert row["error"].item() == float(np.linalg.norm(estimate.mean - sample.true_mean))


def test_the_rho_values_of_a_setting_run_together_give_the_tables_of_separate_cells(cell_frame):
    spec = spec_of()
    together = run_cells(spec, spec.settings()["d=8"], seed=7, log=None)
    assert list(together) == ["d=8_rho=0.5", "d=8_rho=1"]
    pd.testing.assert_frame_equal(together["d=8_rho=0.5"].drop(columns="runtime_s"),
                                  cell_frame.drop(columns="runtime_s"))
    alone = run_one_cell(spec, spec.cell("d=8_rho=1"), seed=7, log=None)
    pd.testing.assert_frame_equal(together["d=8_rho=1"].drop(columns="runtime_s"), alone.drop(columns="runtime_s"))
    # the same data at both budgets: the empirical mean's errors agree trial by trial
    means = [together[cell][together[cell]["mechanism"] == "empirical_mean"]["error"].to_numpy() for cell in together]
    assert np.array_equal(means[0], means[1])


def test_run_setting_refuses_cells_of_different_settings():
    spec = spec_of()
    with pytest.raises(ValueError, match="one setting"):
        run_cells(spec, [spec.cell("d=4_rho=1"), spec.cell("d=8_rho=1")], seed=7, log=None)


def test_oracle_mechanisms_receive_the_true_standard_deviations():
    config = copy.deepcopy(TINY)
    config["experiments"]["tiny"]["mechanisms"] = ["plan_oracle"]
    spec = spec_of(config)
    frame = run_one_cell(spec, spec.cell("d=4_rho=1"), seed=7, log=None)
    assert len(frame) == 3 and np.all(np.isfinite(frame["error"]))


def test_summary_has_the_statistics_per_mechanism_and_cell_in_config_order(cell_frame):
    summary = summarise(cell_frame, ["d", "rho"])
    assert list(summary.columns[:10]) == ["experiment", "mechanism", "d", "rho", "trials",
                                          "median", "q25", "q75", "mean", "std"]
    assert list(summary["mechanism"]) == ["PLAN", "iome", "mean_again", "empirical_mean"]
    plan = cell_frame[cell_frame["mechanism"] == "PLAN"]["error"]
    assert summary.loc[0, "median"] == pytest.approx(plan.median())
    assert summary.loc[0, "q75"] == pytest.approx(plan.quantile(0.75))


def test_the_error_relative_to_the_empirical_mean_is_each_trial_s_distance_to_its_mean_error(cell_frame):
    summary = summarise(cell_frame, ["d", "rho"], empirical="empirical_mean")
    reference = cell_frame[cell_frame["mechanism"] == "empirical_mean"]["error"].mean()
    plan = cell_frame[cell_frame["mechanism"] == "PLAN"]["error"]
    row = summary[summary["mechanism"] == "PLAN"].iloc[0]
    assert row["mean_relative_to_empirical"] == pytest.approx((plan - reference).abs().mean())
    assert row["std_relative_to_empirical"] == pytest.approx((plan - reference).abs().std(ddof=1))
    assert row["median_relative_to_empirical"] == pytest.approx((plan - reference).abs().median())
    # the columns come last, so older readers of a summary see the same layout
    assert list(summary.columns[-10:]) == [f"{s}_relative_to_empirical" for s in
                                           ("median", "q25", "q75", "mean", "std", "se", "trimmed_mean",
                                            "trimmed_mean_se", "max", "above_3x_median")]


def test_the_summary_counts_the_tail_the_largest_value_and_the_trials_above_3x_the_median():
    errors = [1.0, 1.0, 2.0, 2.0, 3.0, 6.5, 40.0]  # median 2: two trials above 6
    trials = pd.DataFrame({"experiment": "e", "mechanism": "m", "d": 4, "trial": range(7), "error": errors})
    row = summarise(trials, ["d"]).iloc[0]
    assert row["max"] == 40.0 and row["above_3x_median"] == 2
    assert summarise(trials.assign(error=[2.0] * 7), ["d"]).iloc[0]["above_3x_median"] == 0


def test_without_an_empirical_mean_the_summary_has_no_relative_columns(cell_frame):
    summary = summarise(cell_frame, ["d", "rho"])
    assert not [column for column in summary.columns if column.endswith("_relative_to_empirical")]


def test_an_empirical_mechanism_absent_from_the_trials_is_an_error(cell_frame):
    with pytest.raises(ValueError, match="empirical='mean_of_nothing' is not a mechanism of the trials"):
        summarise(cell_frame, ["d", "rho"], empirical="mean_of_nothing")


def test_the_spec_names_its_empirical_mean_mechanism():
    assert spec_of().empirical_mechanism == "mean_again"  # the first of the two empirical means
    config = copy.deepcopy(TINY)
    config["experiments"]["tiny"]["mechanisms"] = ["plan_oracle"]
    assert spec_of(config).empirical_mechanism is None


def broken(path, value):
    config = copy.deepcopy(TINY)
    target = config
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return config


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("experiments", "tiny", "mechanisms"), ["no_such_mechanism"],
         r"experiments\.tiny\.mechanisms\[0\].*no_such_mechanism"),
        (("experiments", "tiny", "data"), {"source": "nowhere", "n": 5}, r"experiments\.tiny\.data\.source.*nowhere"),
        (("experiments", "tiny", "grid"), {"d": [4], "rho": [1], "colour": [1]}, r"experiments\.tiny\.grid\.colour"),
        (("experiments", "tiny", "grid"), {"d": [4]}, r"experiments\.tiny\.grid.*rho"),
        # ``out`` is how the engine recycles arrays, not a data parameter
        (("experiments", "tiny", "data"), {"source": "gaussian_a", "n": 5, "out": 1}, r"experiments\.tiny\.data\.out"),
        (("variants", "PLAN"), {"algorithm": "plan_gaussian", "acounting": "exact"}, r"variants\.PLAN\.acounting"),
        (("experiments", "tiny", "metric"), "l7", r"experiments\.tiny\.metric.*l7"),
    ],
)
def test_semantic_config_errors_name_the_key(path, value, message):
    with pytest.raises(ConfigError, match=message):
        load_experiments(broken(path, value))


REAL = {"data": {"source": "real_dataset", "dataset": "kosarak"}, "grid": {"rho": [0.5]}, "trials": 1,
        "metric": "l1_half", "mechanisms": ["plan_binary"]}


@pytest.mark.parametrize(
    ("experiment", "datasets", "message"),
    [
        (REAL, {}, r"experiments\.real\.data\.dataset: 'kosarak' is not configured under datasets"),
        ({**REAL, "data": {"source": "real_dataset"}, "grid": {"dataset": ["kosarak"], "rho": [0.5]}},
         {"kosarak": {}}, r"experiments\.real\.grid\.dataset: a real dataset is fixed per experiment"),
        ({**REAL, "data": {"source": "real_dataset"}}, {"kosarak": {}}, r"experiments\.real: .*needs \['dataset'\]"),
    ],
)
def test_an_experiment_on_a_real_dataset_must_name_one_configured_dataset(experiment, datasets, message):
    with pytest.raises(ConfigError, match=message):
        load_experiments({"seed": 1, "experiments": {"real": experiment}, "datasets": datasets})


def test_a_real_dataset_experiment_knows_its_dataset_and_sizes_its_work_by_the_expected_shape():
    specs = load_experiments({**TINY, "experiments": {"real": REAL, **TINY["experiments"]},
                              "datasets": {"kosarak": {"expect": {"n": 1000, "d": 30, "tokens": 5}}}})
    spec = specs["real"]
    assert spec.dataset == "kosarak" and specs["tiny"].dataset is None
    assert spec.work(spec.cells()[0]) == 1 * 1 * 1000 * 30
    unsized = load_experiments({"seed": 1, "experiments": {"real": REAL}, "datasets": {"kosarak": {"expect": None}}})
    assert unsized["real"].work(unsized["real"].cells()[0]) == 1


def test_the_shipped_configs_load():
    # smoke.yaml merged over config.yaml, as the workflow reads it (docs/configuration.md)
    for overlays in [(), ("config/smoke.yaml",)]:
        experiments = load_experiments(load_config(*overlays, default="config/config.yaml"))
        assert "gaussian_A" in experiments


class UndensifiableCSR(scipy.sparse.csr_matrix):
    """A CSR matrix that fails if anything densifies it."""

    def toarray(self, *args, **kwargs):
        raise AssertionError("a sparse sample was densified")

    todense = toarray

    def __array__(self, *args, **kwargs):
        raise AssertionError("a sparse sample was converted to a dense array")


def sparse_ones(*, n, d, rng):
    """A sparse source for the test: every row has ones in two random columns."""
    columns = np.sort(np.stack([rng.choice(d, size=2, replace=False) for _ in range(n)]), axis=1)
    x = UndensifiableCSR((np.ones(2 * n), columns.ravel(), np.arange(0, 2 * n + 1, 2)), shape=(n, d))
    return Sample(x=x, true_mean=np.full(d, 2.0 / d), true_std=None, bounds=(0.0, 1.0))


def test_a_sparse_sample_reaches_the_mechanisms_without_being_densified(monkeypatch):
    monkeypatch.setitem(DATA_SOURCES, "sparse_ones", sparse_ones)
    config = copy.deepcopy(TINY)
    config["experiments"]["tiny"].update(data={"source": "sparse_ones", "n": 30}, mechanisms=["empirical_mean"])
    spec = spec_of(config)
    frame = run_one_cell(spec, spec.cell("d=8_rho=1"), seed=7, log=None)
    assert len(frame) == 3
    sample = sparse_ones(n=30, d=8, rng=data_generator(7, "tiny", spec.cell("d=8_rho=1"), 0))
    counts = np.bincount(sample.x.indices, minlength=8)
    assert frame["error"].iloc[0] == float(np.linalg.norm(counts / 30 - 2.0 / 8))
    assert (frame["error_vs_empirical"] == 0.0).all()


def test_l1_half_is_half_the_l1_distance_to_the_truth_and_to_the_empirical_mean():
    sample = Sample(x=np.zeros((1, 3)), true_mean=np.array([0.5, 0.25, 0.0]), true_std=None, bounds=(0.0, 1.0))
    error, versus_empirical = METRICS["l1_half"](np.array([0.5, 0.5, 0.5]), sample, np.array([0.0, 0.5, 1.0]))
    assert error == 0.375 and versus_empirical == 0.5


@pytest.mark.parametrize(("metric", "expected"), [("l2", 5.0), ("l1_half", 3.5)])
def test_the_error_against_an_unknown_truth_is_nan_and_the_empirical_error_still_defined(metric, expected):
    sample = Sample(x=np.zeros((1, 2)), true_mean=None, true_std=None, bounds=(0.0, 1.0))
    error, versus_empirical = METRICS[metric](np.array([3.0, 4.0]), sample, np.array([0.0, 0.0]))
    assert np.isnan(error) and versus_empirical == expected


def test_settings_group_the_cells_by_everything_but_rho():
    spec = spec_of()
    assert {setting: [cell.id for cell in cells] for setting, cells in spec.settings().items()} == {
        "d=4": ["d=4_rho=0.5", "d=4_rho=1"], "d=8": ["d=8_rho=0.5", "d=8_rho=1"]}
    only_rho = copy.deepcopy(TINY)
    only_rho["experiments"]["tiny"].update(data={"source": "gaussian_a", "n": 5, "d": 2}, grid={"rho": [1, 2]})
    assert list(spec_of(only_rho).settings()) == [""]


def test_the_work_of_a_cell_counts_the_source_defaults_for_n_and_d(monkeypatch):
    def sized(*, rng, n=1000, d=30):
        raise AssertionError("not drawn")

    monkeypatch.setitem(DATA_SOURCES, "sized", sized)
    config = copy.deepcopy(TINY)
    config["experiments"]["tiny"].update(data={"source": "sized"}, grid={"rho": [1]})
    (cell,) = spec_of(config).cells()
    assert spec_of(config).work(cell) == 3 * 4 * 1000 * 30


BINARY = {
    "seed": 7,
    "experiments": {
        "tiny": {
            "data": {"source": "binary_synthetic", "n": 300},
            "grid": {"d": [48], "ratio": [0.5], "rho": [0.5, 1.0]},
            "trials": 2,
            "metric": "l1_half",
            "mechanisms": ["plan_binary", {"IOME-binary": {"algorithm": "iome", "search_steps": 10}}, "empirical_mean"],
        }
    },
}


def test_the_rho_values_of_a_binary_setting_share_iome_s_rotated_counts_without_changing_a_result(monkeypatch):
    import mechanisms._sparse_rotation as sparse_rotation

    computed = []
    original = sparse_rotation.rotated_cumulative_counts

    def counting(*args, **kwargs):
        computed.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(sparse_rotation, "rotated_cumulative_counts", counting)
    spec = spec_of(BINARY)
    together = run_cells(spec, spec.settings()["d=48_ratio=0.5"], seed=7, log=None)
    assert len(computed) == 2  # once per trial, for both rho values
    for cell in spec.cells():
        alone = run_one_cell(spec, cell, seed=7, log=None)
        pd.testing.assert_frame_equal(together[cell.id].drop(columns="runtime_s"), alone.drop(columns="runtime_s"))
    assert len(computed) == 2 + 4
    frame = together["d=48_ratio=0.5_rho=1"]
    assert np.isfinite(frame["error"]).all() and (frame["error_vs_empirical"] >= 0).all()
    assert np.allclose(frame[frame["mechanism"] != "empirical_mean"]["ledger_total"], 1.0)


# ---------------------------------------------------------------- fixed_data (the authors' Table 2 protocol)


def fixed_config(fixed=True):
    config = copy.deepcopy(TINY)
    config["experiments"]["tiny"]["fixed_data"] = fixed
    return config


def test_fixed_data_shows_every_trial_and_rho_of_a_setting_one_sample_and_the_mechanisms_still_differ():
    spec = spec_of(fixed_config())
    tables = run_cells(spec, spec.settings()["d=8"], seed=7, log=None)
    sample = draw("gaussian_a", {"n": 200, "d": 8}, fixed_data_generator(7, "tiny", spec.cell("d=8_rho=1")))
    expected = float(np.linalg.norm(sample.x.mean(axis=0) - sample.true_mean))
    for table in tables.values():
        means = table[table["mechanism"] == "empirical_mean"]["error"]
        assert len(means) == 3 and (means == expected).all()  # the one sample, in every trial and at every rho
        assert table[table["mechanism"] == "PLAN"]["error"].nunique() == 3  # the noise is drawn per trial
    plain = run_one_cell(spec_of(), spec_of().cell("d=8_rho=1"), seed=7, log=None)
    assert plain[plain["mechanism"] == "empirical_mean"]["error"].nunique() == 3  # without it: a sample per trial


def test_fixed_data_runs_each_mechanism_with_its_usual_stream_on_the_one_sample():
    spec = spec_of(fixed_config())
    cell = spec.cell("d=4_rho=0.5")
    frame = run_one_cell(spec, cell, seed=7, log=None)
    sample = draw("gaussian_a", {"n": 200, "d": 4}, fixed_data_generator(7, "tiny", cell))
    plan = next(m for m in spec.mechanisms if m.name == "PLAN")
    for trial in range(3):
        estimate = direct_estimate(spec, plan, cell, trial, sample)
        row = frame[(frame["trial"] == trial) & (frame["mechanism"] == "PLAN")]
        assert row["error"].item() == float(np.linalg.norm(estimate.mean - sample.true_mean))


def test_the_fixed_sample_has_its_own_stream_keyed_by_the_setting_without_a_trial():
    low, high = cell_of("d=4_rho=0.5"), cell_of("d=4_rho=1")
    assert fixed_data_generator(7, "tiny", low).random() == fixed_data_generator(7, "tiny", high).random()
    keys = [(7, "tiny", low), (7, "tiny", cell_of("d=8_rho=1")), (8, "tiny", low), (7, "other", low)]
    draws = {fixed_data_generator(*key).random() for key in keys}
    draws |= {data_generator(7, "tiny", low, trial).random() for trial in range(3)}
    assert len(draws) == 7


def test_fixed_data_enters_the_fingerprint_only_when_set():
    plain, unset, fixed = spec_of(), spec_of(fixed_config(False)), spec_of(fixed_config())
    for cell in plain.cells():
        assert unset.fingerprint(cell) == plain.fingerprint(cell)
        assert "fixed_data" not in plain.fingerprint(cell)
        assert fixed.fingerprint(cell) != plain.fingerprint(cell)
        assert '"fixed_data": true' in fixed.fingerprint(cell)
    assert [c.id for c in fixed.cells()] == [c.id for c in plain.cells()]


def test_fixed_data_is_refused_for_batched_experiments_naming_the_key():
    config = {"seed": 1, "experiments": {"users": {
        "data": {"source": "userlevel", "collection": "geometric"}, "grid": {"eps": [1.0]}, "trials": 10,
        "metric": "l1", "mechanisms": ["laplace"], "fixed_data": True}}}
    with pytest.raises(ConfigError, match=r"experiments\.users\.fixed_data: only for per-trial experiments"):
        load_experiments(config)


def test_relative_std_is_the_mean_relative_error_of_standard_deviations():
    sample = Sample(x=np.zeros((1, 2)), true_mean=np.zeros(2), true_std=np.array([2.0, 0.5]), bounds=(0.0, 1.0))
    error, versus_empirical = METRICS["relative_std"](np.array([1.0, 0.75]), sample, np.zeros(2))
    assert error == pytest.approx((0.5 + 0.5) / 2) and np.isnan(versus_empirical)
    negative, _ = METRICS["relative_std"](np.array([-2.0, 0.5]), sample, np.zeros(2))
    assert negative == pytest.approx(1.0)  # a negative (direct) estimate is 2 sigma away


def test_an_experiment_on_the_authors_table_2_data_draws_one_column_per_std():
    config = {"seed": 3, "experiments": {"tiny": {
        "data": {"source": "gaussian_std", "n": 400}, "grid": {"sigma": [0.001, 1.0], "rho": [0.01]}, "trials": 4,
        "metric": "relative_std", "fixed_data": True,
        "mechanisms": [{"direct": {"algorithm": "std_direct", "accounting": "published"}}, "std_general"]}}}
    spec = spec_of(config)
    assert [cell.id for cell in spec.cells()] == ["sigma=0.001_rho=0.01", "sigma=1_rho=0.01"]
    frame = run_one_cell(spec, spec.cell("sigma=0.001_rho=0.01"), seed=3, log=None)
    assert len(frame) == 8 and np.all(np.isfinite(frame["error"])) and frame["error_vs_empirical"].isna().all()
    direct = frame[frame["mechanism"] == "direct"]
    true_cost = 0.01 / 16 * (4 + 1 / 0.841**2)  # published: each quantile's true cost, (1 / max(q, 1 - q))^2 its rho
    np.testing.assert_allclose(direct["true_rho"], true_cost, rtol=1e-12)
    np.testing.assert_allclose(direct["ledger_total"], true_cost + 7 * 0.01 / 8, rtol=1e-12)


@pytest.mark.parametrize(("name", "data"), [("mean", {"source": "gaussian_skewed", "n": 50, "alpha": 1.0}),
                                            ("std", {"source": "with_std", "n": 50})])
def test_a_grid_parameter_named_like_a_summary_column_is_refused_naming_it(name, data, monkeypatch):
    """gaussian_skewed takes a ``mean``; a source with a ``std`` would collide with the summary's
    statistic of that name (the summary would silently hold one of the two)."""
    def source_with_std(*, n, d, rng, std=1.0):
        return draw("gaussian_a", {"n": n, "d": d}, rng)

    monkeypatch.setitem(DATA_SOURCES, "with_std", source_with_std)
    config = copy.deepcopy(TINY)
    config["experiments"]["tiny"].update(data=data, grid={"d": [4], name: [1.0], "rho": [1]})
    with pytest.raises(ConfigError, match=rf"experiments\.tiny\.grid\.{name}: '{name}' is a column of the result"):
        load_experiments(config)


def extra_metric_config(extra=("l1",)):
    config = copy.deepcopy(TINY)
    config["experiments"]["tiny"]["extra_metrics"] = list(extra)
    return config


def test_an_extra_metric_adds_the_error_of_the_same_estimates_to_every_row():
    plain, extra = spec_of(), spec_of(extra_metric_config())
    cell = plain.cell("d=4_rho=1")
    first = run_one_cell(plain, cell, seed=7, log=None)
    second = run_one_cell(extra, extra.cell(cell.id), seed=7, log=None)
    # the same runs: the usual columns unchanged, two more per extra metric
    pd.testing.assert_frame_equal(second[first.columns].drop(columns="runtime_s"), first.drop(columns="runtime_s"))
    assert [c for c in second.columns if c not in first.columns] == ["error_l1", "error_l1_vs_empirical"]
    for trial in range(extra.trials):
        sample = draw("gaussian_a", {"n": 200, "d": 4}, data_generator(7, "tiny", cell, trial))
        empirical = sample.x.mean(axis=0)
        for mechanism in extra.mechanisms:
            name = mechanism.name
            options = ({"rotation_rng": rho_free_generator(7, "tiny", cell, trial, name)}
                       if "rotation_rng" in mechanism_options(mechanism.algorithm) else {})
            rng = mechanism_generator(7, "tiny", cell, trial, name)
            estimate = make_mechanism(mechanism.algorithm, **mechanism.options_dict())(
                sample.x, rho=1.0, bounds=sample.bounds, rng=rng, **options)
            row = second[(second["trial"] == trial) & (second["mechanism"] == name)].iloc[0]
            assert row["error_l1"] == pytest.approx(np.abs(estimate.mean - sample.true_mean).sum(), rel=1e-12)
            assert row["error_l1_vs_empirical"] == pytest.approx(np.abs(estimate.mean - empirical).sum(), rel=1e-12)


def test_the_summary_has_the_statistics_of_every_extra_metric():
    spec = spec_of(extra_metric_config())
    frame = run_one_cell(spec, spec.cell("d=8_rho=0.5"), seed=7, log=None)
    summary = summarise(frame, spec.grid_names, empirical=spec.empirical_mechanism)
    for mechanism, rows in frame.groupby("mechanism"):
        row = summary[summary["mechanism"] == mechanism].iloc[0]
        assert row["mean_l1"] == pytest.approx(rows["error_l1"].mean())
        assert row["median_l1_vs_empirical"] == pytest.approx(rows["error_l1_vs_empirical"].median())
        assert row["mean"] == pytest.approx(rows["error"].mean())


def test_extra_metrics_enter_the_fingerprint_only_when_set():
    plain, extra = spec_of(), spec_of(extra_metric_config())
    for cell in plain.cells():
        assert "extra_metrics" not in plain.fingerprint(cell)
        assert spec_of(extra_metric_config(())).fingerprint(cell) == plain.fingerprint(cell)
        assert extra.fingerprint(cell) != plain.fingerprint(cell)


@pytest.mark.parametrize(("extra", "message"), [
    (["nonsense"], r"experiments\.tiny\.extra_metrics\[0\]: unknown metric 'nonsense'"),
    (["l1", "l2"], r"experiments\.tiny\.extra_metrics\[1\]: 'l2' is already the experiment's metric"),
])
def test_a_bad_extra_metric_is_refused_naming_the_key(extra, message):
    with pytest.raises(ConfigError, match=message):
        load_experiments(extra_metric_config(extra))
