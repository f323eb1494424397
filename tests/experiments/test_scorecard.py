"""The reproduction scorecard (experiments/outputs/scorecard.py); the claims are in test_claims.py."""
import math

import pandas as pd
import pytest

from experiments.jobs.results import scorecard_job
from experiments.outputs import scorecard as sc
from experiments.outputs.claims import counts, headline
from experiments.outputs.scorecard import build_scorecard, compare, item_status
from testkit.scorecard_inputs import (
    D_VALUES,
    FIGURE6,
    QUOTED,
    REPO,
    card,
    committed,
    config,
    our_rows,
    published_rows,
)

# ----------------------------------------------------------------------------- rules


@pytest.mark.parametrize(("ours", "se", "paper", "agrees"), [
    (1.14, 0.0, 1.0, True),     # inside the band
    (1.16, 0.0, 1.0, False),    # outside the band, no standard error
    (2.0, 0.4, 1.0, True),      # outside the band, |z| = 2.5 < 3
    (2.0, 0.3, 1.0, False),     # |z| = 3.3
    (0.84, 0.0, 1.0, False),
])
def test_a_value_agrees_inside_the_band_or_within_three_standard_errors(ours, se, paper, agrees):
    ratio, z, result = compare(ours, se, paper, 0.0)
    assert ratio == pytest.approx(ours / paper)
    assert result is agrees


def test_an_unknown_published_standard_error_counts_as_zero():
    _, z, _ = compare(2.0, 0.5, 1.0, math.nan)
    assert z == pytest.approx(2.0)


@pytest.mark.parametrize(("agree", "compared", "status"), [(9, 10, "reproduced"), (89, 100, "partly reproduced"),
                                                           (5, 10, "partly reproduced"), (4, 10, "not reproduced")])
def test_the_share_of_agreeing_values_decides_the_status(agree, compared, status):
    assert item_status(agree, compared) == status


def test_the_tail_test_is_the_pooled_two_proportion_z():
    # the issue's example: ours 26 of 200 trials above 3x the median, the authors' 9 of 50
    pooled = 35 / 250
    expected = (26 / 200 - 9 / 50) / math.sqrt(pooled * (1 - pooled) * (1 / 200 + 1 / 50))
    assert sc.tail_test(26, 200, 9, 50) == pytest.approx(expected) == pytest.approx(-0.911, abs=1e-3)
    assert sc.tail_test(0, 50, 0, 50) == 0.0


def summary_row(mean, sd, median, q25, q75, above=None, trials=200, suffix=""):
    row = {"experiment": "gaussian_A", "mechanism": "PLAN", "trials": trials, f"mean{suffix}": mean,
           f"std{suffix}": sd, f"se{suffix}": sd / math.sqrt(trials), f"median{suffix}": median,
           f"q25{suffix}": q25, f"q75{suffix}": q75}
    if above is not None:
        row[f"above_3x_median{suffix}"] = above
    return pd.Series(row)


def paper_row(mean, sd, median, q25, q75, above, trials=50):
    return pd.Series({"trials": trials, "mean": mean, "sd": sd, "median": median, "q25": q25, "q75": q75,
                      "above_3x_median": above})


def test_a_heavy_tailed_mean_is_judged_on_the_median_and_the_tail_not_on_its_wide_z():
    # the PLAN, Gaussian A, d = 2048, rho = 1/8: ours 97.5 +- 634 against 8.48, |z| < 3 on the mean
    ours, paper = summary_row(97.5, 634.0, 3.3, 2.6, 4.4, above=26), paper_row(8.48, 13.1, 3.36, 2.5, 4.6, above=9)
    assert compare(97.5, 634.0 / math.sqrt(200), 8.48, 13.1 / math.sqrt(50))[2]  # what the mean alone says
    value = sc.compare_summaries(ours, "", paper, "")
    assert value["statistic"] == "median and tail" and value["agrees"]
    assert (value["ours"], value["paper"]) == (3.3, 3.36) and value["ratio"] == pytest.approx(3.3 / 3.36)
    assert value["tail_z"] == pytest.approx(sc.tail_test(26, 200, 9, 50))
    assert value["ours_se"] == pytest.approx(sc.median_standard_error(2.6, 4.4, 200))
    # the same medians with a tail the paper's trials do not have: does not agree
    heavier = sc.compare_summaries(summary_row(97.5, 634.0, 3.3, 2.6, 4.4, above=90), "", paper, "")
    assert heavier["tail_z"] > 3 and not heavier["agrees"]
    # the same tails with another median: does not agree
    shifted = sc.compare_summaries(summary_row(97.5, 634.0, 6.6, 5.2, 8.8, above=26), "", paper, "")
    assert abs(shifted["z"]) > 3 and not shifted["agrees"]


def test_a_heavy_tail_on_the_paper_s_side_alone_also_moves_the_comparison_to_median_and_tail():
    value = sc.compare_summaries(summary_row(2.0, 1.0, 2.0, 1.5, 2.5, above=0), "",
                                 paper_row(2.4, 9.8, 0.8, 0.6, 1.2, above=2), "")
    assert value["statistic"] == "median and tail" and not value["agrees"]  # medians 2.0 against 0.8


def test_a_mean_with_a_small_sd_is_compared_on_the_mean():
    value = sc.compare_summaries(summary_row(1.0, 0.3, 0.9, 0.8, 1.1), "", paper_row(1.02, 0.3, 0.9, 0.8, 1.1, 0), "")
    assert value["statistic"] == "mean" and value["agrees"] and "tail_z" not in value
    assert value["ours_se"] == pytest.approx(0.3 / math.sqrt(200))
    assert value["paper_se"] == pytest.approx(0.3 / math.sqrt(50))


def test_a_heavy_tailed_value_from_a_summary_without_its_tail_is_an_error_naming_the_job():
    with pytest.raises(sc.MissingData, match=r"gaussian_A, PLAN: a heavy-tailed mean .*above_3x_median.*summarise"):
        sc.compare_summaries(summary_row(97.5, 634.0, 3.3, 2.6, 4.4), "", paper_row(8.48, 13.1, 3.36, 2.5, 4.6, 9), "")


# ----------------------------------------------------------------------------- the scorecard


def test_a_figure_whose_drawn_means_match_the_files_is_reproduced_and_only_drawn_points_are_compared():
    table, values = card(missing=["kosarak"])
    row = table.loc["PLAN Figure 3"]
    # 7 d x 2 rho for PLAN and IOME, the empirical mean once per d (at the largest rho)
    assert row["compared"] == 7 * 2 * 2 + 7 and row["agree"] == row["compared"]
    assert row["status"] == "reproduced"
    assert set(values["setting"].str.extract(r"rho=([\d.]+)")[0]) == {"0.125", "1"}
    assert "d=2048" not in " ".join(values["setting"])
    assert row["outputs"] == "figures/figure3.png figures/figure3.pdf"


def test_a_panel_of_the_error_relative_to_the_empirical_mean_also_compares_its_private_part():
    cfg = config()
    cfg["figures"]["figure3"]["panels"][0]["measure"] = "error_relative_to_empirical"
    published = published_rows()
    published["mean_relative_to_empirical"], published["sd_relative_to_empirical"] = published["mean"], published["sd"]
    for statistic in ("median", "q25", "q75"):
        published[f"{statistic}_relative_to_empirical"] = published[statistic]
    published.loc[published["algorithm"] == "PLAN-E-ULTIMATE++", "mean_relative_to_empirical"] *= 2
    table, values = build_scorecard(config=cfg, summary=our_rows(), published=published, quoted=QUOTED.iloc[0:0],
                                    missing=["kosarak"])
    private = values[values["measure"] == "relative_to_empirical"]
    assert len(private) == len(values) / 2 == 7 * 2 * 2 + 7  # every drawn value twice: the error, its private part
    assert set(private.loc[~private["agrees"], "mechanism"]) == {"PLAN"}  # the doubled private part
    assert values.loc[values["measure"] == "error", "agrees"].all()
    assert table.set_index("item").loc["PLAN Figure 3", "agree"] == 2 * (7 * 2 * 2 + 7) - 7 * 2


def test_a_figure_off_by_a_factor_is_not_reproduced_and_the_worst_value_is_named():
    factor = {("PLAN", d): 2.0 for d in D_VALUES} | {("IOME", d): 2.0 for d in D_VALUES}
    table, _ = card(summary=our_rows(factor=factor), missing=["kosarak"])
    row = table.loc["PLAN Figure 3"]
    assert row["agree"] == 7 and row["status"] == "not reproduced"  # only the empirical mean agrees
    assert row["worst_ratio"] == pytest.approx(2.0) and row["worst"].startswith(("PLAN", "IOME"))


def test_half_the_values_off_is_partly_reproduced():
    factor = {("IOME", d): 2.0 for d in D_VALUES}
    table, _ = card(summary=our_rows(factor=factor), missing=["kosarak"])
    assert table.loc["PLAN Figure 3", "status"] == "partly reproduced"


def test_an_item_on_a_missing_dataset_is_not_run_here_and_names_it_in_a_few_words():
    table, _ = card(missing=["kosarak"])
    row = table.loc["PLAN Figure 5 (b), (c)"]
    # why each source failed is said once, in the report's "Not reproduced" section, not in every row
    assert row["status"] == "not run here"
    assert row["note"] == "kosarak not obtained here: the report lists the sources tried."
    assert table.loc["PLAN Figure 2", "status"] == "not run here"


def test_a_not_obtained_note_gives_back_its_datasets_and_other_text_gives_none():
    note = sc.not_obtained_note(["kosarak", "pos"])
    assert note == "kosarak, pos not obtained here: the report lists the sources tried."
    assert sc.split_not_obtained(note + " See the errata.") == (["kosarak", "pos"], "See the errata.")
    other = "nothing in this run's config draws it"
    assert sc.split_not_obtained(other) == ([], other)


def test_a_run_with_other_settings_is_not_comparable_and_says_why():
    cfg = config()
    cfg["experiments"]["gaussian_A"]["data"]["n"] = 600
    table, values = card(cfg=cfg, missing=["kosarak"])
    row = table.loc["PLAN Figure 3"]
    assert row["status"] == "not comparable here" and "n = 600 here, 4000 in the paper" in row["note"]
    assert values.empty


def test_fewer_trials_than_the_paper_is_not_comparable():
    cfg = config()
    cfg["experiments"]["gaussian_A"]["trials"] = 3
    table, _ = card(cfg=cfg, missing=["kosarak"])
    assert "3 trials here, 50 in the paper" in table.loc["PLAN Figure 3", "note"]


def test_items_nothing_draws_are_not_produced_and_our_figures_are_listed_as_ours():
    table, _ = card(missing=["kosarak"], extra_figures={"mine": "Our own figure"})
    assert table.loc["PLAN Figure 4", "status"] == "not produced"
    assert table.loc["ours: mine", "status"] == "ours"
    assert len([item for item in table.index if not item.startswith("ours")]) == len(sc.PAPER_ITEMS)


def test_quoted_numbers_are_compared_with_our_median_and_its_quartile_standard_error():
    cfg = config()
    cfg["figures"]["figure7"] = {"title": "7", "reproduces": "PLAN Figure 7", "panels": [
        {"experiment": "gaussian_A", "title": "(a)", "x": "d", "mechanisms": ["PLAN"], "rho": 1.0}]}
    cfg["scorecard"]["experiments"]["gaussian_A"].pop("published")  # no files: only the quote
    table, values = build_scorecard(config=cfg, summary=our_rows(), published=published_rows(), quoted=QUOTED,
                                    missing=["kosarak"])
    (value,) = values.to_dict("records")
    ours = 1.05 * math.sqrt(1024)
    assert value["ours"] == pytest.approx(ours) and value["paper"] == 100.0
    assert value["statistic"] == "median" and value["paper_source"].startswith("quoted in the text (Appendix E")
    assert table.set_index("item").loc["PLAN Figure 7", "status"] == "not reproduced"


def test_an_illustration_without_numbers_says_what_it_drew():
    table, _ = card(missing=["kosarak"], produced=["figures/figure6.png", "figures/figure6.pdf"],
                    illustrations={"figure6": FIGURE6})
    row = table.loc["PLAN Figure 6"]
    assert row["status"] == "no published numbers"
    assert row["note"] == ("an illustration, drawn from the project's mechanisms: noise std (horizontal, vertical): "
                           "first moment (4.73, 1.88); second moment (4.47, 2.24); even split (5.66, 1.41); "
                           "no scaling (4.12, 4.12)")


def test_a_note_for_an_item_is_added_to_its_row():
    table, _ = card(missing=["kosarak"], notes={"PLAN Figure 3": "See the errata."})
    assert table.loc["PLAN Figure 3", "note"].endswith("See the errata.")


# ----------------------------------------------------------------------------- the job (its three tables)


def test_the_job_writes_the_three_tables(tmp_path):
    summary_path = tmp_path / "summary.csv"
    our_rows().to_csv(summary_path, index=False)
    published = tmp_path / "published.csv"
    published_rows().to_csv(published, index=False)
    quoted = tmp_path / "quoted.csv"
    QUOTED.to_csv(quoted, index=False)
    status = tmp_path / "kosarak.status.json"
    status.write_text('{"dataset": "kosarak", "available": false, "reason": "offline", "message": "offline"}')
    outputs = {name: tmp_path / f"{name}.csv" for name in ("scorecard", "values", "claims")}
    scorecard_job(config=config(), summaries=[summary_path], published=str(published), quoted=str(quoted),
                     statuses=[status], output=outputs["scorecard"], values_output=outputs["values"],
                     claims_output=outputs["claims"], log=tmp_path / "log")
    table = pd.read_csv(outputs["scorecard"]).set_index("item")
    assert table.loc["PLAN Figure 5 (b), (c)", "status"] == "not run here"
    assert table.loc["PLAN Figure 3", "status"] == "reproduced"
    assert len(pd.read_csv(outputs["values"])) == 35
    assert (tmp_path / "log").read_text().startswith(f"Of the {len(sc.PAPER_ITEMS)} figures and tables of the four "
                                                     "papers")


# ----------------------------------------------------------------------------- the committed results



def test_the_committed_report_states_the_counts_of_the_committed_scorecard():
    numbers = counts(committed("scorecard.csv"), committed("claims.csv"))
    page = (REPO / "results" / "report.html").read_text(encoding="utf-8")
    assert f'<p class="headline">{headline(numbers)}</p>' in page
    assert f"One row per figure and table the scorecard covers ({sc.coverage(committed('scorecard.csv'))})" in page


def test_the_results_page_scorecard_table_is_the_committed_scorecard():
    results = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    assert sc.scorecard_markdown(committed("scorecard.csv")) in results
    assert headline(counts(committed("scorecard.csv"), committed("claims.csv"))) in " ".join(results.split())


def test_the_readme_and_the_design_say_what_the_committed_scorecard_covers_and_no_more():
    """Their coverage sentence is the one the scorecard gives (experiments.outputs.scorecard.coverage)."""
    said = sc.coverage(committed("scorecard.csv"))
    for page in ("README.md", "docs/design.md"):
        text = " ".join((REPO / page).read_text(encoding="utf-8").split())
        assert said in text, (page, said)
        assert "every figure and table" not in text, page


