"""The claims of the papers' texts and the scorecard's headline (experiments/outputs/claims.py)."""
import copy
import math

import pandas as pd
import yaml

from experiments.outputs import claims as cl
from experiments.outputs.claims import Source, check_claims, counts, headline, published_source
from experiments.outputs.scorecard import PAPER_ITEMS
from testkit.scorecard_inputs import D_VALUES, FIGURE6, REPO, card, committed, config, our_rows, published_rows

# ----------------------------------------------------------------------------- Figure 6's claims


def test_figure6_s_claims_are_checked_on_its_numbers():
    rows = {row["claim"][:20]: row for row in cl.illustration_claims({"figure6": FIGURE6})}
    assert [row["verdict"] for row in rows.values()] == ["holds", "holds", "holds"]
    swapped = FIGURE6.assign(std_horizontal=[6.0, 4.47, 5.66, 4.12])  # the first moment above the even split
    assert cl.illustration_claims({"figure6": swapped})[0]["verdict"] == "does not hold"
    assert {row["verdict"] for row in cl.illustration_claims({})} == {"not run here"}



# ----------------------------------------------------------------------------- the claims about the figures


def claim_rows(summary, cfg=None, missing=None):
    cfg = cfg or config()
    files = published_source(published_rows(), cfg["scorecard"]["experiments"])
    return check_claims(config=cfg, ours=Source(summary, "this run"), files=files,
                        missing=missing or ["kosarak"]).set_index("claim")


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
    assert rows.loc[kosarak, "verdict"] == "not run here"
    assert rows.loc[kosarak, "measured"] == "kosarak not obtained here: the report lists the sources tried."


def test_claims_on_a_run_with_other_settings_are_not_comparable():
    cfg = copy.deepcopy(config())
    cfg["experiments"]["gaussian_A"]["data"]["n"] = 600
    assert claim_rows(our_rows(), cfg=cfg).loc[FIGURE3_A, "verdict"] == "not comparable here"


def test_the_headline_counts_what_the_tables_show():
    table, _ = card(missing=["kosarak"])
    claims = claim_rows(our_rows()).reset_index()
    numbers = counts(table.reset_index(), claims)
    assert numbers["items"] == len(PAPER_ITEMS)
    assert sum(numbers["statuses"].values()) == numbers["items"]
    assert sum(numbers["verdicts"].values()) == len(claims)
    text = headline(numbers)
    assert numbers["papers"] == 4  # PLAN, user-level clipping, CoinPress, IOME
    assert text.startswith(f"Of the {len(PAPER_ITEMS)} figures and tables of the four papers: 1 reproduced,")
    assert f"Of the {len(claims)} claims their texts make about them:" in text


def test_every_claim_names_a_paper_item_and_a_criterion():
    items = {item.item for item in PAPER_ITEMS}
    for claim in cl.CLAIMS:
        assert claim.item in items and claim.criterion and claim.quote



def test_table_2_s_claim_is_checked_on_the_paper_s_own_table_too():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    table2 = committed("variance_study/table2.csv")
    files = cl.published_source(pd.DataFrame(columns=["experiment", "algorithm"]), {}, table2=table2,
                                table2_setup=config["table2"])
    assert files.value("variance_study_published", "general-k1", rho=0.01, sigma=1.0) == 0.02  # the paper's number
    claim = next(claim for claim in cl.CLAIMS if claim.item == "PLAN Table 2")
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
    for experiment, parameters, family in cl.IOME_STATISTICAL:
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
    judged = cl._shifted_cm_vs_best_coinpress(Source(iome_rows(shifted=1.03), "this run"))
    assert judged.holds and judged.share == "20 of 20 settings"  # 3 % above: inside [0, 1.05], not significant
    worse = cl._shifted_cm_vs_best_coinpress(Source(iome_rows(worse=("iome_rho", 64)), "this run"))
    assert not worse.holds and worse.share == "18 of 20 settings"
    assert "significantly outside at Figure 2 at mu 0, rho 64 (vs CoinPress-t1)" in worse.measured


def test_beating_mvmrec_significantly_needs_z_of_two_at_80_percent_of_figure_3():
    assert cl._beats_mvmrec_with_covariance(Source(iome_rows(shifted=0.9), "this run")).holds
    tied = cl._beats_mvmrec_with_covariance(Source(iome_rows(shifted=0.99), "this run"))
    assert not tied.holds and tied.share == "0 of 4 settings"  # 1 % better with 1 % standard errors: a tie


def iome_settings_rows(t10=1.5, offset_sd=0.5, offset_median=1.0):
    """IOME with 20 steps and the doubled offset (mean and median 1, sd 0.1) beside 10 steps (mean ``t10``)
    and the proposed offset (sd ``offset_sd``, median ``offset_median``), 50 trials."""
    rows = []
    for experiment in cl.IOME_SETTINGS:
        for d in (16, 64):
            for rho in (0.125, 1.0):
                for mechanism, mean, sd, median in (("IOME", 1.0, 0.1, 1.0), ("IOME-T10", t10, 0.1, t10),
                                                    ("IOME-offset1", 1.0, offset_sd, offset_median)):
                    rows.append({"experiment": experiment, "mechanism": mechanism, "d": d, "rho": rho, "trials": 50,
                                 "mean": mean, "std": sd, "se": sd / math.sqrt(50), "median": median,
                                 "q25": median - 0.05, "q75": median + 0.05})
    return Source(pd.DataFrame(rows), "this run")


def test_the_iome_settings_claims_read_ten_steps_and_the_proposed_offset():
    assert cl._ten_steps_too_few(iome_settings_rows()).holds
    assert cl._ten_steps_too_few(iome_settings_rows()).share == "8 of 8 settings"
    assert not cl._ten_steps_too_few(iome_settings_rows(t10=1.0)).holds
    assert cl._doubled_offset_more_robust(iome_settings_rows()).holds
    assert not cl._doubled_offset_more_robust(iome_settings_rows(offset_sd=0.1)).holds  # not more robust
    assert not cl._doubled_offset_more_robust(iome_settings_rows(offset_median=0.8)).holds  # the median rose


def test_the_readme_counts_the_iome_claims_the_committed_claims_table_checks():
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    iome = int((committed("claims.csv")["item"].str.startswith("IOME ")).sum())
    assert f"The IOME paper publishes no numbers: its {iome} claims about its figures are checked instead." in text
