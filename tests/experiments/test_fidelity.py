"""The fidelity table: our medians over the published ones (experiments/outputs/fidelity.py)."""
import math

import pandas as pd
import pytest

from experiments.jobs.results import fidelity_job
from experiments.outputs.fidelity import fidelity_table, target_applies, target_met, verdict

NAMES = {"PLAN": "PLAN", "IOME": "IOME", "PLAN-noscale(published)": "coordinate_median",
         "empirical_mean": "empirical_mean"}


def summary(rows):
    """A summary with our columns; rows are (mechanism, d, rho, median)."""
    return pd.DataFrame(
        [{"experiment": "gaussian_A", "mechanism": m, "d": d, "rho": rho, "trials": 50, "median": median,
          "q25": median, "q75": median, "mean": median, "std": 0.0, "median_vs_empirical": median,
          "q25_vs_empirical": median, "q75_vs_empirical": median, "mean_vs_empirical": median,
          "std_vs_empirical": 0.0} for m, d, rho, median in rows]
    )


def reference(rows):
    """A reference table like config/reference/published_gaussian_A_medians.csv."""
    return pd.DataFrame(
        [{"experiment": "gaussian_A", "mechanism": m, "n": 4000, "d": d, "rho": rho, "alpha": 0, "median": median,
          "trials": 50, "q25": median, "q75": median} for m, d, rho, median in rows]
    )


def test_ratio_is_our_median_divided_by_the_published_median():
    table = fidelity_table(summary([("PLAN", 16, 0.5, 1.1)]), reference([("PLAN", 16, 0.5, 1.0)]), NAMES)
    assert table["median_ratio"].tolist() == pytest.approx([1.1])
    assert table[["ours_median", "published_median"]].iloc[0].tolist() == pytest.approx([1.1, 1.0])


def test_rows_match_on_the_shared_grid_columns_and_ignore_reference_only_columns():
    table = fidelity_table(summary([("PLAN", 16, 0.5, 1.0)]), reference([("PLAN", 16, 0.5, 2.0)]), NAMES)
    assert list(table.columns) == ["mechanism", "published_mechanism", "d", "rho", "ours_median", "published_median",
                                   "median_ratio", "ours_trials", "published_trials", "combined_se", "within_band",
                                   "within_target", "target_applies"]


def test_rho_given_as_an_integer_in_one_table_matches_the_float_in_the_other():
    ours = summary([("PLAN", 16, 1.0, 1.0)])
    published = reference([("PLAN", 16, 1, 1.0)])
    assert len(fidelity_table(ours, published, NAMES)) == 1


def test_settings_present_in_only_one_table_get_no_row():
    ours = summary([("PLAN", 16, 0.5, 1.0), ("PLAN", 32, 0.5, 1.0)])
    published = reference([("PLAN", 16, 0.5, 1.0), ("PLAN", 64, 0.5, 1.0)])
    assert fidelity_table(ours, published, NAMES)["d"].tolist() == [16]


def test_published_names_are_mapped_to_our_mechanism_names():
    ours = summary([("coordinate_median", 16, 0.5, 1.0)])
    published = reference([("PLAN-noscale(published)", 16, 0.5, 1.0)])
    row = fidelity_table(ours, published, NAMES).iloc[0]
    assert (row["mechanism"], row["published_mechanism"]) == ("coordinate_median", "PLAN-noscale(published)")


def test_rows_follow_the_order_of_the_names_mapping():
    ours = summary([("IOME", 16, 0.5, 1.0), ("PLAN", 16, 0.5, 1.0)])
    published = reference([("IOME", 16, 0.5, 1.0), ("PLAN", 16, 0.5, 1.0)])
    assert fidelity_table(ours, published, NAMES)["mechanism"].tolist() == ["PLAN", "IOME"]


@pytest.mark.parametrize("ours, inside", [(0.84, False), (0.85, True), (1.0, True), (1.15, True), (1.16, False)])
def test_within_target_holds_exactly_for_ratios_from_0_85_to_1_15(ours, inside):
    table = fidelity_table(summary([("PLAN", 16, 0.5, ours)]), reference([("PLAN", 16, 0.5, 1.0)]), NAMES)
    assert bool(table["within_target"].iloc[0]) is inside


@pytest.mark.parametrize("published, ours", [("PLAN", "PLAN"), ("IOME", "IOME"),
                                             ("PLAN-noscale(published)", "coordinate_median")])
@pytest.mark.parametrize("d, applies", [(16, True), (1024, True), (2048, False)])
def test_target_applies_to_plan_iome_and_coordinate_median_up_to_d_1024(published, ours, d, applies):
    assert target_applies(published, ours, d) is applies


def test_target_applies_to_the_empirical_mean_at_every_d():
    assert target_applies("empirical_mean", "empirical_mean", 2048)


def test_target_does_not_apply_to_plan_noscale_as_specified_against_the_published_curve():
    assert not target_applies("PLAN-noscale(published)", "PLAN-noscale", 16)


def test_a_reference_that_varies_a_parameter_our_grid_lacks_is_rejected():
    published = pd.concat([reference([("PLAN", 16, 0.5, 1.0)]), reference([("PLAN", 16, 0.5, 2.0)]).assign(n=100)])
    with pytest.raises(ValueError, match="several 'PLAN' rows"):
        fidelity_table(summary([("PLAN", 16, 0.5, 1.0)]), published, NAMES)


def test_verdict_counts_the_targeted_ratios_inside_the_band_and_names_those_outside():
    ours = summary([("PLAN", 16, 0.5, 1.0), ("IOME", 16, 0.5, 2.0)])
    published = reference([("PLAN", 16, 0.5, 1.0), ("IOME", 16, 0.5, 1.0)])
    line = verdict(fidelity_table(ours, published, NAMES), "gaussian_A")
    assert line.startswith("gaussian_A: 1 of 2 targeted ratios within 0.85..1.15")
    assert "NOT met" in line and "IOME d=16 rho=0.5 (2)" in line


def test_fidelity_job_writes_the_csv_and_a_one_line_log(tmp_path):
    summary([("PLAN", 16, 0.5, 1.0)]).to_csv(tmp_path / "summary.csv", index=False)
    reference([("PLAN", 16, 0.5, 1.0)]).to_csv(tmp_path / "reference.csv", index=False)
    output, log = tmp_path / "fidelity" / "gaussian_A.csv", tmp_path / "fidelity.log"
    fidelity_job(summary=tmp_path / "summary.csv", reference=tmp_path / "reference.csv", names=NAMES,
                 output=output, log=log)
    written = pd.read_csv(output)
    assert written["within_target"].tolist() == [True] and written["target_applies"].tolist() == [True]
    assert log.read_text().splitlines() == ["gaussian_A: 1 of 1 targeted ratios within 0.85..1.15 "
                                            "(1 settings matched); target met"]


BINARY_NAMES = {"PLAN(paper), clipped": "PLAN-binary", "instance optimal, clipped": "IOME-binary"}


def binary_summary(median, q25, q75, trials=50):
    return pd.DataFrame([{"experiment": "binary_synthetic", "mechanism": "PLAN-binary", "d": 1024, "ratio": 0.5,
                          "rho": 0.0625, "trials": trials, "median": median, "q25": q25, "q75": q75, "mean": median,
                          "std": 0.0}])


def binary_reference(median, q25, q75, trials=10):
    """Like config/reference/published_binary_synthetic_medians_d256_d1024.csv: a label column."""
    return pd.DataFrame([{"experiment": "binary_synthetic", "label": "PLAN(paper), clipped", "d": 1024.0,
                          "rho": 0.0625, "ratio": 0.5, "median": median, "trials": trials, "q25": q25, "q75": q75,
                          "median_time_s": float("nan")}])


def test_a_reference_with_a_label_column_is_matched_by_label():
    table = fidelity_table(binary_summary(8.6, 8.4, 8.8), binary_reference(8.56, 8.43, 8.71), BINARY_NAMES)
    assert table[["mechanism", "published_mechanism"]].iloc[0].tolist() == ["PLAN-binary", "PLAN(paper), clipped"]
    assert table["median_ratio"].iloc[0] == pytest.approx(8.6 / 8.56)


def test_the_combined_standard_error_comes_from_both_interquartile_ranges_and_trial_counts():
    table = fidelity_table(binary_summary(10.0, 9.0, 11.0, trials=50), binary_reference(10.0, 8.0, 12.0, trials=10),
                           BINARY_NAMES)
    per_iqr = math.sqrt(math.pi / 2) / 1.349
    expected = math.hypot(per_iqr * 2.0 / math.sqrt(50), per_iqr * 4.0 / math.sqrt(10))
    assert table["combined_se"].iloc[0] == pytest.approx(expected)


@pytest.mark.parametrize(("ours", "agreement", "inside"), [
    (12.0, "band", False),       # ratio 1.2, outside the band
    (12.0, "band_or_se", True),  # but within 3 combined standard errors of wide, 10-trial quartiles
    (20.0, "band_or_se", False),  # far outside both
    (10.5, "band", True),
])
def test_band_or_se_also_accepts_a_difference_within_three_combined_standard_errors(ours, agreement, inside):
    table = fidelity_table(binary_summary(ours, ours - 1.0, ours + 1.0), binary_reference(10.0, 8.0, 12.0),
                           BINARY_NAMES, agreement=agreement)
    assert bool(table["within_target"].iloc[0]) is inside
    assert bool(table["within_band"].iloc[0]) is (0.85 <= ours / 10.0 <= 1.15)


def test_an_unknown_agreement_rule_is_named():
    with pytest.raises(ValueError, match="agreement.*'loose'"):
        fidelity_table(binary_summary(1, 1, 1), binary_reference(1, 1, 1), BINARY_NAMES, agreement="loose")


@pytest.mark.parametrize(("published", "ours"), [("PLAN(paper), clipped", "PLAN-binary"),
                                                 ("PLAN(oracle), clipped", "PLAN-binary-oracle"),
                                                 ("PLAN(noscale), clipped", "PLAN-binary-noscale"),
                                                 ("instance optimal, clipped", "IOME-binary")])
def test_target_applies_to_the_private_binary_outputs_at_every_d(published, ours):
    assert target_applies(published, ours, 2048)


def test_target_does_not_apply_to_the_unclipped_non_private_diagnostics():
    assert not target_applies("PLAN(paper), unclipped", "PLAN-binary", 1024)


def rows_inside(inside, outside):
    return pd.DataFrame({"mechanism": ["PLAN-binary"] * (inside + outside),
                         "median_ratio": [1.0] * inside + [2.0] * outside,
                         "within_target": [True] * inside + [False] * outside, "target_applies": True})


@pytest.mark.parametrize(("inside", "outside", "share", "met"), [(9, 1, 0.9, True), (8, 2, 0.9, False),
                                                                 (9, 1, 1.0, False), (10, 0, 1.0, True)])
def test_the_target_is_met_when_the_required_share_of_targeted_rows_agrees(inside, outside, share, met):
    assert target_met(rows_inside(inside, outside), share) is met
    line = verdict(rows_inside(inside, outside), "binary_synthetic", agreement="band_or_se", required_share=share)
    assert ("NOT met" not in line) is met
    assert line.startswith(f"binary_synthetic: {inside} of {inside + outside} targeted rows agree")


def real_summary(median, median_vs_empirical, experiment="pos"):
    """A real-data summary: the error against the truth is unknown (NaN)."""
    row = {"experiment": experiment, "mechanism": "PLAN-binary", "rho": 0.5, "trials": 50}
    for suffix, value in (("", median), ("_vs_empirical", median_vs_empirical)):
        row.update({f"median{suffix}": value, f"q25{suffix}": value, f"q75{suffix}": value,
                    f"mean{suffix}": value, f"std{suffix}": 0.0})
    return pd.DataFrame([row])


def real_reference():
    """Like config/reference/published_real_data_medians.csv: two experiments, by label."""
    return pd.DataFrame([
        {"experiment": experiment, "label": "PLAN(paper)-clipped", "d": math.nan, "rho": 0.5, "ratio": math.nan,
         "median": median, "trials": 20, "q25": median, "q75": median}
        for experiment, median in (("kosarak", 2.0), ("POS", 0.02))
    ])


def test_measure_error_vs_empirical_compares_our_error_against_the_empirical_frequencies():
    table = fidelity_table(real_summary(math.nan, 0.021), real_reference(), {"PLAN(paper)-clipped": "PLAN-binary"},
                           measure="error_vs_empirical", reference_experiment="POS")
    assert len(table) == 1
    assert table["ours_median"].iloc[0] == 0.021
    assert table["published_median"].iloc[0] == 0.02  # POS's row, not kosarak's
    assert table["median_ratio"].iloc[0] == pytest.approx(1.05)
    assert bool(table["target_applies"].iloc[0])


def test_the_default_measure_is_the_error_against_the_truth():
    table = fidelity_table(real_summary(0.04, 0.021), real_reference(), {"PLAN(paper)-clipped": "PLAN-binary"},
                           reference_experiment="POS")
    assert table["ours_median"].iloc[0] == 0.04


def test_an_unknown_measure_or_reference_experiment_is_named():
    names = {"PLAN(paper)-clipped": "PLAN-binary"}
    with pytest.raises(ValueError, match="measure.*errors"):
        fidelity_table(real_summary(0.04, 0.02), real_reference(), names, measure="errors")
    with pytest.raises(ValueError, match="no experiment 'pos'"):
        fidelity_table(real_summary(0.04, 0.02), real_reference(), names, reference_experiment="pos")


@pytest.mark.parametrize(("published", "unclipped", "ours"),
                         [("PLAN(paper)-clipped", "PLAN(paper)-unclipped", "PLAN-binary"),
                          ("PLAN(oracle)-clipped", "PLAN(oracle)-unclipped", "PLAN-binary-oracle"),
                          ("PLAN(noscale)-clipped", "PLAN(noscale)-unclipped", "PLAN-binary-noscale"),
                          ("instance optimal", "instance optimal unclipped", "IOME-binary")])
def test_target_applies_to_the_private_outputs_on_the_real_datasets(published, unclipped, ours):
    assert target_applies(published, ours)
    assert not target_applies(unclipped, ours)
