"""The comparison with the DP libraries (experiments/libraries.py): roles, the table, the seconds per
call and the sentences the report shows, on hand-made trial rows whose answers are known."""
import math

import pandas as pd
import pytest

from experiments.config import ConfigError, ExperimentSpec, MechanismSpec
from experiments.jobs.results import library_comparison_job, report_job
from experiments.libraries import (
    COLUMNS,
    check_libraries,
    comparison_table,
    experiment_findings,
    mechanism_role,
    overall_finding,
    seconds_table,
)
from experiments.styles import mechanism_style
from experiments.workflow_plan import WorkflowPlan, load_config
from testkit.report_inputs import write_inputs

MECHANISMS = (
    MechanismSpec("PLAN-exact", "plan_gaussian", (("accounting", "exact"),)),
    MechanismSpec("PLAN-published", "plan_gaussian", (("accounting", "published"),)),
    MechanismSpec("IOME", "iome", (("search_steps", 20),)),
    MechanismSpec("OpenDP", "opendp_mean", ()),
    MechanismSpec("OpenDP-two-pass", "opendp_mean", (("bounds_from", "quantiles"),)),
    MechanismSpec("diffprivlib", "diffprivlib_mean", (("bounds_from", "given"),)),
    MechanismSpec("empirical_mean", "empirical_mean", ()),
)
SPEC = ExperimentSpec(id="libraries_toy", source="gaussian_a", data=(("n", 100),),
                      grid=(("d", (4,)), ("rho", (0.25, 1.0))), trials=2, metric="l2", mechanisms=MECHANISMS)

# mechanism -> (errors of its two trials at rho 1/4, at rho 1, the ledger's rho / the cell's rho, seconds)
ERRORS = {
    "PLAN-exact": ((1.0, 3.0), (0.5, 0.5), 1.0, 0.002),
    "PLAN-published": ((0.5, 0.5), (0.25, 0.25), 3.76, 0.002),
    "IOME": ((3.0, 5.0), (1.0, 1.0), 1.0, 0.004),
    "OpenDP": ((8.0, 8.0), (2.0, 2.0), 1.0, 0.05),
    "OpenDP-two-pass": ((1.0, 1.0), (1.5, 1.5), 1.0, 0.2),
    "diffprivlib": ((16.0, 16.0), (4.0, 4.0), 1.0, 0.01),
    "empirical_mean": ((0.1, 0.1), (0.1, 0.1), math.inf, 0.0001),
}


def trials() -> pd.DataFrame:
    rows = []
    for rho_index, rho in enumerate((0.25, 1.0)):
        for mechanism, (low, high, spent, seconds) in ERRORS.items():
            for trial, error in enumerate((low, high)[rho_index]):
                rows.append({"experiment": SPEC.id, "d": 4, "rho": rho, "trial": trial, "mechanism": mechanism,
                             "error": error, "error_vs_empirical": error / 2, "runtime_s": seconds * (1 + trial),
                             "true_rho": spent * rho, "ledger_total": rho})
    return pd.DataFrame(rows)


def table() -> pd.DataFrame:
    return comparison_table(trials(), SPEC, reference="PLAN-exact")


def test_roles_follow_the_algorithm_its_recipe_and_the_spend():
    assert [mechanism_role(SPEC, m.name, "PLAN-exact") for m in MECHANISMS] == [
        "reference", "ours", "ours", "library", "library, two-pass", "library", "non-private"]
    roles = table().drop_duplicates("mechanism").set_index("mechanism")["role"]
    assert roles["PLAN-published"] == "over budget"  # its ledger says 3.76 rho
    assert roles["IOME"] == "ours" and roles["empirical_mean"] == "non-private"


def test_the_table_holds_means_standard_errors_ratios_and_seconds():
    frame = table()
    assert list(frame.columns) == COLUMNS
    row = frame[(frame["mechanism"] == "IOME") & (frame["rho"] == 0.25)].iloc[0]
    assert row["mean_error"] == 4.0 and row["median_error"] == 4.0
    assert row["se"] == pytest.approx(math.sqrt(2.0) / math.sqrt(2))  # sd of (3, 5) over sqrt(2) trials
    assert row["ratio_to_reference"] == pytest.approx(4.0 / 2.0)
    assert row["seconds_per_call"] == pytest.approx(0.006)  # median of 0.004 and 0.008
    assert row["trials"] == 2
    published = frame[frame["mechanism"] == "PLAN-published"]
    assert published["true_rho_ratio"].tolist() == pytest.approx([3.76, 3.76])


def test_the_measure_can_be_the_distance_to_the_empirical_mean():
    frame = comparison_table(trials(), SPEC, reference="PLAN-exact", measure="error_vs_empirical")
    assert frame[(frame["mechanism"] == "OpenDP") & (frame["rho"] == 1.0)]["mean_error"].item() == 1.0


def test_a_reference_that_spends_more_than_rho_or_has_no_trials_is_refused():
    with pytest.raises(ValueError, match="PLAN-published.*spends more"):
        comparison_table(trials(), SPEC, reference="PLAN-published")
    rows = trials()
    with pytest.raises(ValueError, match="reference 'IOME' has no trials"):
        comparison_table(rows[rows["mechanism"] != "IOME"], SPEC, reference="IOME")


def test_seconds_per_call_one_row_per_mechanism_one_column_per_experiment():
    seconds = seconds_table(table())
    assert list(seconds.columns) == ["mechanism", "libraries_toy"]
    assert seconds.set_index("mechanism").loc["OpenDP-two-pass", "libraries_toy"] == pytest.approx(0.3)


def test_findings_name_the_best_library_of_each_kind_and_where_it_beats_the_reference():
    sentences = experiment_findings(table(), reference="PLAN-exact", labels={"OpenDP": "OpenDP (universe)"})
    text = " ".join(sentences)
    assert sentences[0] == "PLAN-exact: mean error 2 at \u03c1 = 1/4 and 0.5 at \u03c1 = 1."
    # OpenDP 4x and 4x against diffprivlib 8x and 8x: OpenDP is the best with the universe as bounds
    assert "with the universe as its bounds is OpenDP (universe): 4\u00d7 PLAN-exact's error" in text
    # the two-pass recipe beats the reference at rho = 1/4 (1 against 2)
    assert "two-pass recipe for unknown bounds is OpenDP-two-pass: 0.5\u00d7 to 3\u00d7" in text
    assert ("of the libraries of this kind, more accurate than PLAN-exact in 1 of 2 (library, \u03c1) cells: "
            "OpenDP-two-pass at \u03c1 = 1/4.") in text
    assert "PLAN-published spends 3.76 \u03c1, not \u03c1" in text
    assert "IOME: 2\u00d7 PLAN-exact's error." in text


def test_the_overall_sentence_counts_cells_where_the_reference_beats_every_library():
    # rho 1/4: the two-pass OpenDP wins; rho 1: the reference beats all three libraries
    assert overall_finding([table()], references={"libraries_toy": "PLAN-exact"}).startswith(
        "PLAN-exact is more accurate than every library estimator in 1 of 2 (experiment, \u03c1) cells")


def test_the_config_section_is_checked_key_by_key():
    experiments = {SPEC.id: SPEC}
    assert check_libraries({"libraries": {SPEC.id: {"reference": "PLAN-exact"}}}, experiments) == {
        SPEC.id: {"reference": "PLAN-exact", "measure": "error"}}
    for section, message in (
        ({"nope": {"reference": "PLAN-exact"}}, "libraries.nope: no experiment"),
        ({SPEC.id: {"reference": "PLAN"}}, "libraries.libraries_toy.reference: 'PLAN' is not a mechanism"),
        ({SPEC.id: {"reference": "PLAN-exact", "measure": "l1"}}, "libraries.libraries_toy.measure"),
        ({SPEC.id: {"reference": "PLAN-exact", "colour": 1}}, "libraries.libraries_toy.colour: unknown key"),
    ):
        with pytest.raises(ConfigError, match=message):
            check_libraries({"libraries": section}, experiments)
    eps_spec = ExperimentSpec(id="eps_toy", source="userlevel", data=(), grid=(("eps", (1.0,)),), trials=1,
                              metric="l1", mechanisms=(MechanismSpec("Laplace", "laplace", ()),), budget="eps")
    with pytest.raises(ConfigError, match="matched rho-zCDP; 'eps_toy' spends eps"):
        check_libraries({"libraries": {"eps_toy": {"reference": "Laplace"}}}, {"eps_toy": eps_spec})


def test_every_panel_of_the_default_config_draws_its_mechanisms_in_distinct_colours():
    """Distinct colours, except the members of one family (CoinPress's iterations t, ...), which share
    their colour and differ in their dash and marker (experiments/styles.py)."""
    for name, figure in load_config()["figures"].items():
        for panel in figure["panels"]:
            looks = [(mechanism_style(m).color, mechanism_style(m).variant) for m in panel["mechanisms"]]
            assert len(set(looks)) == len(looks), (name, panel["title"], panel["mechanisms"])


def test_the_library_experiments_of_the_default_config_compare_at_matched_rho():
    plan = WorkflowPlan(load_config())
    assert set(plan.libraries) == {"libraries_gaussian_A", "libraries_gaussian_C", "libraries_binary",
                                   "libraries_pos_shaped", "libraries_pos", "libraries_kosarak"}
    for name in plan.libraries:
        spec = plan.experiments[name]
        roles = {m.name: mechanism_role(spec, m.name, plan.libraries[name]["reference"]) for m in spec.mechanisms}
        assert list(roles.values()).count("reference") == 1
        assert {"library"} <= set(roles.values())


# ---------------------------------------------------------------- the job and the report's section


def write_cells(tmp_path, spec_name="libraries_gaussian_A"):
    """Cell files of the default config's Gaussian A comparison, one per rho, from ERRORS' pattern:
    every mechanism of the experiment gets the errors of an ERRORS entry of the same role."""
    config = load_config()
    config["experiments"][spec_name]["trials"] = 2  # what the cells hold: the job checks them against it
    mechanisms = config["experiments"][spec_name]["mechanisms"]
    pattern = {"PLAN-exact": "PLAN-exact", "PLAN-as-published": "PLAN-published", "empirical_mean": "empirical_mean"}
    paths = []
    for rho_index, rho in enumerate((0.0625, 0.25, 1.0)):
        rows = []
        for mechanism in mechanisms:
            source = pattern.get(mechanism, "OpenDP-two-pass" if "two-pass" in mechanism else "OpenDP")
            if mechanism in ("IOME", "CoinPress", "CoinPress-oracle"):
                source = "IOME"
            low, high, spent, seconds = ERRORS[source]
            for trial, error in enumerate((low, high)[min(rho_index, 1)]):
                rows.append({"experiment": spec_name, "rho": rho, "trial": trial, "mechanism": mechanism,
                             "error": error, "error_vs_empirical": error, "runtime_s": seconds,
                             "true_rho": spent * rho, "ledger_total": rho})
        path = tmp_path / f"results/{spec_name}/cells/rho={rho:g}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(path, index=False)
        paths.append(path)
    return config, paths


def test_the_job_writes_the_experiment_s_comparison_and_logs_the_sentences(tmp_path):
    config, cells = write_cells(tmp_path)
    output = tmp_path / "results/libraries/libraries_gaussian_A.csv"
    library_comparison_job(config=config, experiment="libraries_gaussian_A", cells=cells, output=output,
                           log=tmp_path / "log", reference="PLAN-exact", measure="error")
    table = pd.read_csv(output)
    assert len(table) == 3 * len(config["experiments"]["libraries_gaussian_A"]["mechanisms"])
    assert set(table[table["mechanism"] == "PLAN-as-published"]["role"]) == {"over budget"}
    assert set(table[table["mechanism"].str.endswith("two-pass")]["role"]) == {"library, two-pass"}
    log = (tmp_path / "log").read_text()
    assert "libraries_gaussian_A: PLAN-exact: mean error 2 at \u03c1 = 1/16 and 0.5 at \u03c1 = 1." in log


def test_the_report_answers_the_question_with_the_numbers_and_the_seconds_per_call(tmp_path):
    config, cells = write_cells(tmp_path)
    output = tmp_path / "results/libraries/libraries_gaussian_A.csv"
    section = {"libraries_gaussian_A": {"reference": "PLAN-exact"}}
    library_comparison_job(config=config, experiment="libraries_gaussian_A", cells=cells, output=output,
                           log=tmp_path / "log", reference="PLAN-exact")
    inputs = write_inputs(tmp_path)
    page_config = {**inputs["config"], "libraries": section,
                   "experiments": {**inputs["config"]["experiments"],
                                   "libraries_gaussian_A": config["experiments"]["libraries_gaussian_A"]}}
    report_job(**{**inputs, "config": page_config, "libraries": [str(output)]})
    html = inputs["output"].read_text(encoding="utf-8")
    assert '<h2 id="libraries">PLAN or my library\'s mean?' in html
    assert '<a href="#libraries">Libraries</a>' in html
    # the labels of experiments/styles.py, not the config names
    assert "The most accurate library with the universe as its bounds is OpenDP, bounds given: 4" in html
    assert "PLAN as published (spends about 3.76 \u03c1) spends 3.76 \u03c1, not \u03c1" in html
    assert "<b>libraries_gaussian_A</b> (source = gaussian_a, n = 4000, d = 64)" in html
    assert "more accurate than every library estimator in 2 of 3 (experiment, \u03c1) cells" in html
    rows = 3 * len(config["experiments"]["libraries_gaussian_A"]["mechanisms"])
    assert 'id="T_libraries_seconds"' in html and f"Every row of results/libraries/: {rows} rows" in html
