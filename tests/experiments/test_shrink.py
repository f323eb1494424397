"""The smoke config's rule (``shrink:``, experiments/engine/config.py): every experiment shrunk, an
experiment added to config/config.yaml later too, with no edit to config/smoke.yaml."""
import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from experiments.engine.config import ConfigError, load_experiments
from experiments.planning.config_files import compose_configs, load_config, shrink_config, shrink_experiments
from experiments.planning.run_plan import RunPlan

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
RULE = {"trials": 3, "n": 600, "d": 32, "grid_values": 2}


def config_with(experiments, rule=RULE, figures=None):
    return {"seed": 1, "experiments": experiments, "shrink": copy.deepcopy(rule), "figures": figures or {}}


GAUSSIAN = {"data": {"source": "gaussian_a", "n": 4000}, "grid": {"d": [16, 64, 256], "rho": [0.125, 0.5, 1.0]},
            "trials": 50, "mechanisms": ["PLAN", "empirical_mean"]}


def test_the_rule_caps_trials_n_d_and_keeps_the_first_grid_values():
    shrunk = shrink_experiments(config_with({"a": GAUSSIAN, "b": {**GAUSSIAN, "data": {"source": "gaussian_a",
                                                                                      "d": 512},
                                                                  "grid": {"n": [100, 1000, 9000], "rho": [1.0]}}}))
    assert shrunk["a"]["trials"] == 3 and shrunk["a"]["data"] == {"source": "gaussian_a", "n": 600}
    assert shrunk["a"]["grid"] == {"d": [16, 32], "rho": [0.125, 0.5]}  # 64 capped at d = 32
    assert shrunk["b"]["data"]["d"] == 32 and shrunk["b"]["grid"] == {"n": [100, 600], "rho": [1.0]}
    assert GAUSSIAN["trials"] == 50 and GAUSSIAN["grid"]["d"] == [16, 64, 256]  # the config is left as it was


def test_a_source_default_above_a_cap_is_capped_and_n_star_parameters_count_as_n():
    shrunk = shrink_experiments(config_with({
        "shaped": {"data": {"source": "pos_shaped"}, "grid": {"rho": [1.0]}, "trials": 5, "mechanisms": ["PLAN"]},
        "images": {"data": {"source": "mnist_shaped", "digit": 0}, "grid": {"rho": [1.0]}, "trials": 5,
                   "mechanisms": ["PLAN"]}}))
    assert shrunk["shaped"]["data"] == {"source": "pos_shaped", "n": 600, "d": 32}
    assert shrunk["images"]["data"] == {"source": "mnist_shaped", "digit": 0, "n_train": 600, "n_test": 600}


def test_a_logspace_grid_keeps_its_first_values_written_out():
    entry = {**GAUSSIAN, "grid": {"eps": {"logspace": [0.05, 5, 41]}}}
    assert shrink_experiments(config_with({"u": entry}))["u"]["grid"] == {"eps": [0.05, 0.0561]}


def test_grid_values_a_figure_panel_draws_are_kept_uncapped_one_per_filter():
    figures = {"f": {"panels": [{"experiment": "a", "x": "rho", "where": {"d": 256}, "rho": [0.25, 1.0]},
                                {"experiment": "a", "x": "rho", "where": {"d": [64, 16]}},
                                {"experiment": "other", "x": "rho", "where": {"d": 64}}]}}
    shrunk = shrink_experiments(config_with({"a": GAUSSIAN}, figures=figures))
    # d: 256 (first panel), 16 already serves the second; rho: 1.0 (the first panel's), then the first value
    assert shrunk["a"]["grid"] == {"d": [16, 256], "rho": [0.125, 1.0]}


def test_the_rule_is_idempotent_so_jobs_given_the_shrunk_config_see_what_was_planned():
    config = load_config(REPO / "config" / "smoke.yaml", default=REPO / "config" / "config.yaml")
    assert shrink_experiments(config) == config["experiments"]


def test_overrides_win_over_the_rule():
    rule = {**RULE, "overrides": {"a": {"trials": 300, "data": {"n": 3000}, "grid": {"rho": [0.01]}}}}
    shrunk = shrink_experiments(config_with({"a": GAUSSIAN}, rule=rule))["a"]
    assert (shrunk["trials"], shrunk["data"], shrunk["grid"]) == (300, {"source": "gaussian_a", "n": 3000},
                                                                  {"d": [16, 32], "rho": [0.01]})


def test_without_the_key_nothing_changes():
    config = {"seed": 1, "experiments": {"a": GAUSSIAN}}
    assert shrink_experiments(config) is config["experiments"] and shrink_config(config) is config
    paper = load_config(default=REPO / "config" / "config.yaml")
    assert "shrink" not in paper and load_experiments(paper)["gaussian_A"].trials == 50


@pytest.mark.parametrize(("rule", "message"), [
    ({"trials": 0}, r"^shrink\.trials: needs an integer >= 1, got 0$"),
    ({"n": "600"}, r"^shrink\.n: needs an integer >= 1, got '600'$"),
    ({"grid_values": True}, r"^shrink\.grid_values: needs an integer >= 1"),
    ({"dims": 3}, r"^shrink\.dims: unknown key"),
    ({"overrides": {"nowhere": {"trials": 2}}}, r"^shrink\.overrides\.nowhere: no such experiment"),
    ({"overrides": {"a": 2}}, r"^shrink\.overrides\.a: needs a mapping"),
])
def test_a_bad_value_is_one_config_error_naming_the_key(rule, message):
    with pytest.raises(ConfigError, match=message):
        shrink_experiments(config_with({"a": GAUSSIAN}, rule=rule))
    with pytest.raises(ConfigError, match=message):  # the run's plan applies the rule
        RunPlan(config_with({"a": GAUSSIAN}, rule=rule))


def test_the_schema_names_a_bad_shrink_value():
    config = load_config(REPO / "config" / "smoke.yaml", default=REPO / "config" / "config.yaml")
    validate(copy.deepcopy(config), str(SCHEMA))
    config["shrink"]["d"] = 0
    with pytest.raises(Exception, match="shrink"):
        validate(config, str(SCHEMA))


def test_an_experiment_added_to_the_paper_config_runs_shrunk_in_the_smoke_config_with_no_edit(tmp_path):
    paper = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    paper["experiments"]["newcomer"] = {
        "data": {"source": "gaussian_skewed", "n": 50000, "d": 4096},
        "grid": {"alpha": [0.0, 0.5, 1.0, 2.0], "rho": {"logspace": [0.01, 1, 9]}},
        "trials": 200, "mechanisms": ["PLAN", "IOME", "empirical_mean"]}
    smoke = yaml.safe_load((REPO / "config" / "smoke.yaml").read_text())
    config = shrink_config(compose_configs(paper, smoke))
    validate(copy.deepcopy(config), str(SCHEMA))
    assert config["experiments"]["newcomer"] == {
        "data": {"source": "gaussian_skewed", "n": 600, "d": 32},
        "grid": {"alpha": [0.0, 0.5], "rho": [0.01, 0.01778]}, "trials": 2,
        "mechanisms": ["PLAN", "IOME", "empirical_mean"]}
    plan = RunPlan(config)
    spec = plan.experiments["newcomer"]
    assert (spec.trials, len(spec.cells())) == (2, 4)
    # every shipped experiment too: at most 2 trials unless overridden, n and d within the caps
    overridden = set(smoke["shrink"]["overrides"])
    for name, spec in plan.experiments.items():
        data = dict(spec.data)
        assert spec.trials <= 2 or name in overridden, name
        assert data.get("n", 0) <= 600 and data.get("d", 0) <= 32, name
