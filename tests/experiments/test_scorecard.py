"""The reproduction scorecard and the claims of the text (experiments/outputs/scorecard.py)."""
import copy
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from experiments.jobs.results import scorecard_job
from experiments.outputs import scorecard as sc
from experiments.outputs.scorecard import (
    Source,
    build_scorecard,
    check_claims,
    compare,
    counts,
    headline,
    item_status,
    published_source,
)

D_VALUES = (16, 32, 64, 128, 256, 512, 1024, 2048)
RHOS = (0.125, 0.25, 0.5, 1.0)
PUBLISHED_NAMES = {"PLAN-E-ULTIMATE++": "PLAN", "Instance optimal": "IOME", "Empirical mean (non-private)":
                   "empirical_mean", "PLAN-NOSCALE": "coordinate_median"}
BASE = {"PLAN": 1.0, "IOME": 1.05, "empirical_mean": 0.3, "coordinate_median": 0.95}


def our_rows(experiment="gaussian_A", factor=None, trials=50, mechanisms=BASE):
    """A Gaussian A summary over d and rho: mean = base * sqrt(d) / sqrt(rho) (empirical mean: no rho),
    sd = 10 % of it; ``factor`` multiplies chosen (mechanism, d) means."""
    rows = []
    for mechanism, base in mechanisms.items():
        for d in D_VALUES:
            for rho in RHOS:
                mean = base * math.sqrt(d) / (1.0 if mechanism == "empirical_mean" else math.sqrt(rho))
                mean *= (factor or {}).get((mechanism, d), 1.0)
                row = {"experiment": experiment, "mechanism": mechanism, "d": d, "rho": rho, "trials": trials}
                for suffix in ("", "_vs_empirical", "_relative_to_empirical"):
                    row.update({f"median{suffix}": mean, f"q25{suffix}": 0.9 * mean, f"q75{suffix}": 1.1 * mean,
                                f"mean{suffix}": mean, f"std{suffix}": 0.1 * mean,
                                f"se{suffix}": 0.1 * mean / math.sqrt(trials)})
                rows.append(row)
    return pd.DataFrame(rows)


def published_rows():
    """The authors' files for the same experiment: exactly the base means."""
    frame = our_rows()
    labels = {ours: theirs for theirs, ours in PUBLISHED_NAMES.items()}
    return pd.DataFrame({
        "experiment": "gaussianA", "source": "x", "algorithm": frame["mechanism"].map(labels), "n": 4000,
        "d": frame["d"], "rho": frame["rho"], "alpha": 0, "cov": "u", "ratio": math.nan, "trials": 50,
        "mean": frame["mean"], "sd": frame["std"], "median": frame["median"], "q25": frame["q25"],
        "q75": frame["q75"]})


def config(**changes):
    base = {
        "experiments": {"gaussian_A": {"data": {"source": "gaussian_a", "n": 4000}, "trials": 50},
                        "kosarak": {"data": {"source": "real_dataset", "dataset": "kosarak"}, "trials": 50}},
        "datasets": {"kosarak": {"expect": {"n": 75462}}},
        "figures": {
            "figure3": {"title": "3", "reproduces": "PLAN Figure 3", "panels": [
                {"experiment": "gaussian_A", "title": "(a)", "x": "d", "rho": [0.125, 1.0],
                 "where": {"d": [16, 32, 64, 128, 256, 512, 1024]}, "mechanisms": ["PLAN", "IOME", "empirical_mean"]}]},
            "figure5_real": {"title": "5bc", "reproduces": "PLAN Figure 5 (b), (c)", "panels": [
                {"experiment": "kosarak", "title": "(b)", "x": "rho", "mechanisms": ["PLAN"]}]},
            "mine": {"title": "Our own figure", "panels": [
                {"experiment": "gaussian_A", "title": "(a)", "x": "d", "mechanisms": ["PLAN"]}]},
        },
        "scorecard": {"experiments": {
            "gaussian_A": {"paper": {"n": 4000}, "trials": 50, "published": "gaussianA", "names": PUBLISHED_NAMES},
            "kosarak": {"paper": {"n": 75462}}}},
    }
    for path, value in changes.items():
        target = base
        keys = path.split(".")
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return base


QUOTED = pd.DataFrame([{"item": "PLAN Figure 7", "experiment": "gaussian_A", "mechanism": "IOME", "d": 1024, "rho": 1.0,
                        "statistic": "median", "measure": "error_vs_empirical", "value": 100.0,
                        "quote": "Appendix E: made up"}])


def card(cfg=None, summary=None, **keys):
    table, values = build_scorecard(config=cfg or config(), summary=our_rows() if summary is None else summary,
                                    published=published_rows(), quoted=QUOTED.iloc[0:0], **keys)
    return table.set_index("item"), values


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
    table, values = card(missing={"kosarak": "offline"})
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
                                    missing={"kosarak": "offline"})
    private = values[values["measure"] == "relative_to_empirical"]
    assert len(private) == len(values) / 2 == 7 * 2 * 2 + 7  # every drawn value twice: the error, its private part
    assert set(private.loc[~private["agrees"], "mechanism"]) == {"PLAN"}  # the doubled private part
    assert values.loc[values["measure"] == "error", "agrees"].all()
    assert table.set_index("item").loc["PLAN Figure 3", "agree"] == 2 * (7 * 2 * 2 + 7) - 7 * 2


def test_a_figure_off_by_a_factor_is_not_reproduced_and_the_worst_value_is_named():
    factor = {("PLAN", d): 2.0 for d in D_VALUES} | {("IOME", d): 2.0 for d in D_VALUES}
    table, _ = card(summary=our_rows(factor=factor), missing={"kosarak": "offline"})
    row = table.loc["PLAN Figure 3"]
    assert row["agree"] == 7 and row["status"] == "not reproduced"  # only the empirical mean agrees
    assert row["worst_ratio"] == pytest.approx(2.0) and row["worst"].startswith(("PLAN", "IOME"))


def test_half_the_values_off_is_partly_reproduced():
    factor = {("IOME", d): 2.0 for d in D_VALUES}
    table, _ = card(summary=our_rows(factor=factor), missing={"kosarak": "offline"})
    assert table.loc["PLAN Figure 3", "status"] == "partly reproduced"


def test_an_item_on_a_missing_dataset_is_not_run_here_with_the_reason():
    table, _ = card(missing={"kosarak": "could not connect"})
    row = table.loc["PLAN Figure 5 (b), (c)"]
    assert row["status"] == "not run here" and "kosarak" in row["note"] and "could not connect" in row["note"]
    assert table.loc["PLAN Figure 2", "status"] == "not run here"


def test_a_run_with_other_settings_is_not_comparable_and_says_why():
    cfg = config()
    cfg["experiments"]["gaussian_A"]["data"]["n"] = 600
    table, values = card(cfg=cfg, missing={"kosarak": "offline"})
    row = table.loc["PLAN Figure 3"]
    assert row["status"] == "not comparable here" and "n = 600 here, 4000 in the paper" in row["note"]
    assert values.empty


def test_fewer_trials_than_the_paper_is_not_comparable():
    cfg = config()
    cfg["experiments"]["gaussian_A"]["trials"] = 3
    table, _ = card(cfg=cfg, missing={"kosarak": "offline"})
    assert "3 trials here, 50 in the paper" in table.loc["PLAN Figure 3", "note"]


def test_items_nothing_draws_are_not_produced_and_our_figures_are_listed_as_ours():
    table, _ = card(missing={"kosarak": "offline"}, extra_figures={"mine": "Our own figure"})
    assert table.loc["PLAN Figure 4", "status"] == "not produced"
    assert table.loc["ours: mine", "status"] == "ours"
    assert len([item for item in table.index if not item.startswith("ours")]) == len(sc.PAPER_ITEMS)


def test_quoted_numbers_are_compared_with_our_median_and_its_quartile_standard_error():
    cfg = config()
    cfg["figures"]["figure7"] = {"title": "7", "reproduces": "PLAN Figure 7", "panels": [
        {"experiment": "gaussian_A", "title": "(a)", "x": "d", "mechanisms": ["PLAN"], "rho": 1.0}]}
    cfg["scorecard"]["experiments"]["gaussian_A"].pop("published")  # no files: only the quote
    table, values = build_scorecard(config=cfg, summary=our_rows(), published=published_rows(), quoted=QUOTED,
                                    missing={"kosarak": "offline"})
    (value,) = values.to_dict("records")
    ours = 1.05 * math.sqrt(1024)
    assert value["ours"] == pytest.approx(ours) and value["paper"] == 100.0
    assert value["statistic"] == "median" and value["paper_source"].startswith("quoted in the text (Appendix E")
    assert table.set_index("item").loc["PLAN Figure 7", "status"] == "not reproduced"


FIGURE6 = pd.DataFrame({
    "scaling": ["first_moment", "second_moment", "even_split", "no_scaling"],
    "std_horizontal": [4.73, 4.47, 5.66, 4.12], "std_vertical": [1.88, 2.24, 1.41, 4.12],
    "expected_l1": [5.27, 5.35, 5.64, 6.58], "expected_l2_squared": [25.9, 25.0, 34.0, 34.0]})


def test_an_illustration_without_numbers_says_what_it_drew():
    table, _ = card(missing={"kosarak": "offline"}, produced=["figures/figure6.png", "figures/figure6.pdf"],
                    illustrations={"figure6": FIGURE6})
    row = table.loc["PLAN Figure 6"]
    assert row["status"] == "no published numbers"
    assert row["note"] == ("an illustration, drawn from the project's mechanisms: noise std (horizontal, vertical): "
                           "first moment (4.73, 1.88); second moment (4.47, 2.24); even split (5.66, 1.41); "
                           "no scaling (4.12, 4.12)")


def test_figure6_s_claims_are_checked_on_its_numbers():
    rows = {row["claim"][:20]: row for row in sc.illustration_claims({"figure6": FIGURE6})}
    assert [row["verdict"] for row in rows.values()] == ["holds", "holds", "holds"]
    swapped = FIGURE6.assign(std_horizontal=[6.0, 4.47, 5.66, 4.12])  # the first moment above the even split
    assert sc.illustration_claims({"figure6": swapped})[0]["verdict"] == "does not hold"
    assert {row["verdict"] for row in sc.illustration_claims({})} == {"not run here"}


def test_a_note_for_an_item_is_added_to_its_row():
    table, _ = card(missing={"kosarak": "offline"}, notes={"PLAN Figure 3": "See the errata."})
    assert table.loc["PLAN Figure 3", "note"].endswith("See the errata.")


# ----------------------------------------------------------------------------- claims


def claim_rows(summary, cfg=None, missing=None):
    cfg = cfg or config()
    files = published_source(published_rows(), cfg["scorecard"]["experiments"])
    return check_claims(config=cfg, ours=Source(summary, "this run"), files=files,
                        missing=missing or {"kosarak": "offline"}).set_index("claim")


FIGURE3_A = "Figure 3 (a) shows Gaussian A, where plan and iome have comparable accuracy."
FIGURE10_A = ("In Figure 10 (a) we see plan and iome have comparable accuracy until d = 2048, when plan performs "
              "worse (for rho = 0.125).")


def test_a_claim_that_holds_in_this_run_and_in_the_authors_files():
    rows = claim_rows(our_rows())
    row = rows.loc[FIGURE3_A]
    assert row["verdict"] == "holds" and row["verdict_on_files"] == "holds"
    assert row["measured"] == "PLAN / IOME mean error 0.952; inside [0.667, 1.5] in 14 of 14 settings"
    assert row["share"] == row["share_on_files"] == "14 of 14 settings"


def test_a_claim_can_fail_in_this_run_and_hold_in_the_files():
    factor = {("PLAN", d): 3.0 for d in D_VALUES}
    row = claim_rows(our_rows(factor=factor)).loc[FIGURE3_A]
    assert row["verdict"] == "does not hold" and row["verdict_on_files"] == "holds"


def test_the_d_2048_claim_reads_the_means_the_figure_plots():
    factor = {("PLAN", 2048): 10.0}
    row = claim_rows(our_rows(factor=factor)).loc[FIGURE10_A]
    assert row["verdict"] == "holds" and row["measured"].startswith("PLAN / IOME mean error 9.52; above with z >= 2 "
                                                                    "in 1 of 1 settings (medians")
    assert claim_rows(our_rows()).loc[FIGURE10_A, "verdict"] == "does not hold"


def test_claims_on_experiments_not_in_the_run_or_on_missing_data_are_not_run_here():
    rows = claim_rows(our_rows())
    assert rows.loc["The same behavior is observed for smaller rho, as shown in Figure 4 (a).", "verdict"] == \
        "not run here"
    kosarak = [claim for claim in rows.index if claim.startswith("Figure 5 (b) shows Kosarak")][0]
    assert rows.loc[kosarak, "verdict"] == "not run here" and "offline" in rows.loc[kosarak, "measured"]


def test_claims_on_a_run_with_other_settings_are_not_comparable():
    cfg = copy.deepcopy(config())
    cfg["experiments"]["gaussian_A"]["data"]["n"] = 600
    assert claim_rows(our_rows(), cfg=cfg).loc[FIGURE3_A, "verdict"] == "not comparable here"


def test_the_headline_counts_what_the_tables_show():
    table, _ = card(missing={"kosarak": "offline"})
    claims = claim_rows(our_rows()).reset_index()
    numbers = counts(table.reset_index(), claims)
    assert numbers["items"] == len(sc.PAPER_ITEMS)
    assert sum(numbers["statuses"].values()) == numbers["items"]
    assert sum(numbers["verdicts"].values()) == len(claims)
    text = headline(numbers)
    assert numbers["papers"] == 4  # PLAN, user-level clipping, CoinPress, IOME
    assert text.startswith(f"Of the {len(sc.PAPER_ITEMS)} figures and tables of the four papers: 1 reproduced,")
    assert f"Of the {len(claims)} claims their texts make about them:" in text


def test_every_claim_names_a_paper_item_and_a_criterion():
    items = {item.item for item in sc.PAPER_ITEMS}
    for claim in sc.CLAIMS:
        assert claim.item in items and claim.criterion and claim.quote


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

REPO = Path(__file__).resolve().parents[2]


def committed(name):
    return pd.read_csv(REPO / "results" / name, keep_default_na=False)


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


def test_table_2_s_claim_is_checked_on_the_paper_s_own_table_too():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    table2 = committed("variance_study/table2.csv")
    files = sc.published_source(pd.DataFrame(columns=["experiment", "algorithm"]), {}, table2=table2,
                                table2_setup=config["table2"])
    assert files.value("variance_study_published", "general-k1", rho=0.01, sigma=1.0) == 0.02  # the paper's number
    claim = next(claim for claim in sc.CLAIMS if claim.item == "PLAN Table 2")
    judged = claim.check(files)
    assert not judged.holds and "significantly the other way at rho 0.01, sigma 1, k 1" in judged.measured
    row = committed("claims.csv").set_index("claim").loc[claim.quote]
    assert row["verdict_on_files"] == "does not hold" and row["authors_files"] == judged.measured


def test_the_readme_states_the_headline_of_the_committed_scorecard():
    # the README quotes it as a block quote: "> " starts its continuation lines
    readme = (REPO / "README.md").read_text(encoding="utf-8").replace("\n> ", "\n")
    assert headline(counts(committed("scorecard.csv"), committed("claims.csv"))) in " ".join(readme.split())


# ---------------------------------------------------------------- the IOME paper's local model (Figures 10-12)

LOCAL_BASE = {"Shifted-CM-local": 0.5, "KnownVar": 0.8, "UnkVar": 1.2, "empirical_mean": 0.01}
LOCAL_GRIDS = {"iome_local_d": {"d": (2, 4, 8, 16, 32), "eps": (1.0,)},
               "iome_local_eps": {"eps": (0.5, 1.0, 1.5, 2.0, 2.5)},
               "iome_local_R": {"radius_scale": (20, 65, 110, 155, 200), "eps": (1.0,)}}
LOCAL_BEATS_GRS = "Our method even outperforms KnownVar, which is actually not a fair comparison."
LOCAL_GAP = ("However, compared with the central model, there is still a large gap from our LDP algorithm to the "
             "non-private mean, due to the inherent hardness of the local model.")


def local_rows(factor=None, bases=LOCAL_BASE):
    """Summaries of IOME Figures 10-12: trimmed mean = base x sqrt(d) / eps at every mu; ``factor``
    multiplies chosen (mechanism, experiment) trimmed means."""
    rows = []
    for experiment, grid in LOCAL_GRIDS.items():
        names = list(grid)
        for values in pd.MultiIndex.from_product(list(grid.values())):
            for mu in (0, 5, 10):
                setting = dict(zip(names, values)) | {"mu": mu}
                for mechanism, base in bases.items():
                    value = base * math.sqrt(setting.get("d", 8)) / setting["eps"]
                    value *= (factor or {}).get((mechanism, experiment), 1.0)
                    rows.append({"experiment": experiment, "mechanism": mechanism, **setting, "trials": 50,
                                 "trimmed_mean": value, "trimmed_mean_se": 0.01 * value, "mean": value})
    return pd.DataFrame(rows)


def local_claims(summary):
    cfg = config()
    cfg["experiments"] |= {name: {"data": {"source": "rotated_gaussian"}, "trials": 50} for name in LOCAL_GRIDS}
    return check_claims(config=cfg, ours=Source(summary, "this run"), files=Source(pd.DataFrame(
        columns=["experiment", "mechanism"]), "the authors' files"), missing={}).set_index("claim")


def test_the_local_claims_hold_on_a_run_where_shifted_cm_leads_with_a_gap_to_the_non_private_mean():
    rows = local_claims(local_rows())
    beats = rows.loc[LOCAL_BEATS_GRS]
    assert beats["verdict"] == "holds" and beats["share"] == "45 of 45 settings; 45 of 45 settings"
    assert "KnownVar / Shifted-CM-local, trimmed mean 1.6; above with z >= 2 in 45 of 45 settings" in beats["measured"]
    assert "UnkVar / Shifted-CM-local, trimmed mean 2.4; above with z >= 2 in 45 of 45 settings" in beats["measured"]
    gap = rows.loc[LOCAL_GAP]
    assert gap["verdict"] == "holds"
    assert gap["measured"] == ("Shifted-CM-local / non-private mean, trimmed mean 50; above 3 x with z >= 2 in 45 of "
                               "45 settings")


def test_the_local_claims_fail_where_knownvar_wins_one_figure_or_the_gap_closes():
    rows = local_claims(local_rows({("KnownVar", "iome_local_R"): 0.5}))
    assert rows.loc[LOCAL_BEATS_GRS, "verdict"] == "does not hold"
    assert "significantly the other way at Figure 12 at " in rows.loc[LOCAL_BEATS_GRS, "measured"]
    # a tie is not a win: equal trimmed means do not make "outperforms"
    tied = local_claims(local_rows(bases=LOCAL_BASE | {"UnkVar": LOCAL_BASE["Shifted-CM-local"]}))
    assert tied.loc[LOCAL_BEATS_GRS, "verdict"] == "does not hold"
    closed = local_claims(local_rows({("empirical_mean", "iome_local_d"): 20.0}))
    assert closed.loc[LOCAL_GAP, "verdict"] == "does not hold"
    assert "significantly the other way at Figure 10 at " in closed.loc[LOCAL_GAP, "measured"]


# ----------------------------------------------------------------------------- the IOME paper's central claims


def iome_rows(shifted=1.0, coinpress=1.0, worse=None):
    """Summaries of IOME Figures 1-4 and 6: every CoinPress t at ``coinpress``, Shifted-CM at ``shifted``
    (``worse``: (experiment, parameter value) where Shifted-CM is twice its value), se 1 %."""
    rows = []
    for experiment, parameters, family in sc.IOME_STATISTICAL:
        first, second = parameters
        for a in (0, 5) if first == "mu" else (10, 100):
            for b in (16, 64):
                for mechanism in ("Shifted-CM", *family, "empirical_mean"):
                    value = shifted if mechanism == "Shifted-CM" else (0.9 if mechanism == "empirical_mean"
                                                                      else coinpress)
                    if mechanism == "Shifted-CM" and worse == (experiment, b):
                        value *= 2
                    rows.append({"experiment": experiment, "mechanism": mechanism, first: a, second: b, "trials": 100,
                                 "trimmed_mean": value, "trimmed_mean_se": 0.01 * value})
    return pd.DataFrame(rows)


def test_shifted_cm_at_least_as_good_as_the_best_t_is_judged_by_the_band_rule():
    judged = sc._shifted_cm_vs_best_coinpress(Source(iome_rows(shifted=1.03), "this run"))
    assert judged.holds and judged.share == "20 of 20 settings"  # 3 % above: inside [0, 1.05], not significant
    worse = sc._shifted_cm_vs_best_coinpress(Source(iome_rows(worse=("iome_rho", 64)), "this run"))
    assert not worse.holds and worse.share == "18 of 20 settings"
    assert "significantly outside at Figure 2 at mu 0, rho 64 (vs CoinPress-t1)" in worse.measured


def test_beating_mvmrec_significantly_needs_z_of_two_at_80_percent_of_figure_3():
    assert sc._beats_mvmrec_with_covariance(Source(iome_rows(shifted=0.9), "this run")).holds
    tied = sc._beats_mvmrec_with_covariance(Source(iome_rows(shifted=0.99), "this run"))
    assert not tied.holds and tied.share == "0 of 4 settings"  # 1 % better with 1 % standard errors: a tie


def iome_settings_rows(t10=1.5, offset_sd=0.5, offset_median=1.0):
    """IOME with 20 steps and the doubled offset (mean and median 1, sd 0.1) beside 10 steps (mean ``t10``)
    and the proposed offset (sd ``offset_sd``, median ``offset_median``), 50 trials."""
    rows = []
    for experiment in sc.IOME_SETTINGS:
        for d in (16, 64):
            for rho in (0.125, 1.0):
                for mechanism, mean, sd, median in (("IOME", 1.0, 0.1, 1.0), ("IOME-T10", t10, 0.1, t10),
                                                    ("IOME-offset1", 1.0, offset_sd, offset_median)):
                    rows.append({"experiment": experiment, "mechanism": mechanism, "d": d, "rho": rho, "trials": 50,
                                 "mean": mean, "std": sd, "se": sd / math.sqrt(50), "median": median,
                                 "q25": median - 0.05, "q75": median + 0.05})
    return Source(pd.DataFrame(rows), "this run")


def test_the_iome_settings_claims_read_ten_steps_and_the_proposed_offset():
    assert sc._ten_steps_too_few(iome_settings_rows()).holds
    assert sc._ten_steps_too_few(iome_settings_rows()).share == "8 of 8 settings"
    assert not sc._ten_steps_too_few(iome_settings_rows(t10=1.0)).holds
    assert sc._doubled_offset_more_robust(iome_settings_rows()).holds
    assert not sc._doubled_offset_more_robust(iome_settings_rows(offset_sd=0.1)).holds  # not more robust
    assert not sc._doubled_offset_more_robust(iome_settings_rows(offset_median=0.8)).holds  # the median rose


def test_the_readme_counts_the_iome_claims_the_committed_claims_table_checks():
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    iome = int((committed("claims.csv")["item"].str.startswith("IOME ")).sum())
    assert f"The IOME paper publishes no numbers: its {iome} claims about its figures are checked instead." in text
