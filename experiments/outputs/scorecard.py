"""The reproduction scorecard: every figure and table of the papers next to the numbers they
publish, compared with this run.

Rows (``results/scorecard.csv``): one per figure and table of the PLAN paper (Figures 1-10,
Table 2), of the user-level paper (Figures 1-3), of the CoinPress paper's mean experiments
(Figures 3 and 4) and covariance headline, and of the IOME paper (Figures 1-9; it publishes no
numbers, its claims are checked), in ``PAPER_ITEMS``, then every figure of this run
that reproduces none of them (ours). A paper item is produced by the config's figures whose
``reproduces`` names it, or by a dedicated rule (Figure 2, the illustrations, Table 2).

Compared values (``results/scorecard_values.csv``): for a figure, every point its panels draw
that the authors' committed result files also have (``config/reference/published_summaries.csv``:
the MEAN over trials, which is what their figures plot, with its standard error sd / sqrt(trials)
on both sides); where a figure has no committed files, the numbers the text quotes
(``published_text_numbers.csv``: medians, whose standard error on our side comes from the
quartiles); published values listed one per row (config ``scorecard.published_values``, e.g.
``published_coinpress.csv``: the CoinPress figures' 10 % trimmed means over 100 trials, from the
authors' result files; ``published_coinpress_covariance.csv``: those of its covariance headline),
against our statistic of the same name, where a value that states its trial count but no standard
error gets ours scaled to that count, se_ours sqrt(trials_ours / trials_paper) (the same
distribution if the reproduction is right); for Table 2 the table under the authors' protocol
(experiments/outputs/tables.py).

Rules, stated before any comparison: a value AGREES when ours / published lies in [0.85, 1.15]
or |z| < 3, z = (ours - published) / sqrt(se_ours^2 + se_published^2) (an unknown published
standard error counts as 0). A mean whose sd exceeds it on either side rests on a few trials and
its wide z would call nearly anything agreeing: such a value is compared on the MEDIAN (the same
rule, each se from the quartiles) AND on the tail, the share of trials above 3x the median (a
pooled two-proportion test, |z| < 3); both must agree. A panel that draws the error relative to
the empirical mean (|error - mean error of the empirical mean|, the private part, as the PLAN
paper's Figure 3(c)) is compared on the error itself and on that private part. The CoinPress
items hold the ratio to [0.9, 1.1] instead
(``PaperItem.band``): trimmed means over 100 trials vary by about 1 %. An item is ``reproduced``
when at least 90 % of its compared values agree, ``partly reproduced`` from 50 %, else ``not
reproduced``; ``not run here`` when it needs a real dataset this run could not obtain (named in
a few words by :func:`not_obtained_note`; why, source by source, is said once, in the report's
"Not reproduced" section); ``not comparable here`` when this run's settings differ from the
paper's (e.g. the smoke config's small n); ``no published numbers`` when neither files nor quoted numbers
exist (the claims of the text are still checked: claims.py); ``not produced`` when the config
has nothing that draws it.

The claims the papers' texts make (``results/claims.csv``) and the headline that counts both tables
are in claims.py, which builds on this module. This one stays whole at about 520 lines: the items,
the rules and the compared values it gathers are one concern, the scorecard's rows.
"""
from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..engine.config import format_value
from ..engine.sources import real_dataset_of
from .fidelity import median_standard_error

AGREE_BAND = (0.85, 1.15)
COINPRESS_BAND = (0.9, 1.1)  # the CoinPress items: trimmed means over 100 trials (about 1 % Monte-Carlo spread)
AGREE_Z = 3.0
REPRODUCED_SHARE = 0.9
PARTLY_SHARE = 0.5
STATUSES = ("reproduced", "partly reproduced", "not reproduced", "not run here", "not comparable here",
            "no published numbers", "not produced", "ours")
PAPER_STATUSES = STATUSES[:-1]


@dataclass(frozen=True)
class PaperItem:
    """A figure or table of one of the papers."""

    item: str  # e.g. "PLAN Figure 3"; config figures name it in ``reproduces``
    description: str
    outputs: tuple[str, ...] = ()  # files of a dedicated rule (config figures add theirs)
    datasets: tuple[str, ...] = ()  # real datasets it needs
    illustration: bool = False  # drawn from the mechanisms, no result to compare
    # the experiments a dedicated rule's output shows: their settings decide comparability
    experiments: tuple[str, ...] = ()
    band: tuple[float, float] = AGREE_BAND  # ours / published within it agrees (module docstring)


PAPER_ITEMS = (
    PaperItem("PLAN Figure 1", "step-by-step illustration of PLAN on 2-D data",
              ("figures/figure1.png", "figures/figure1.pdf"), illustration=True),
    PaperItem("PLAN Figure 2", "histograms of the item variances of Kosarak and POS",
              ("figures/figure2.png", "figures/figure2.pdf"), datasets=("kosarak", "pos"),
              experiments=("kosarak", "pos")),
    PaperItem("PLAN Figure 3", "l2 error on Gaussian A, B and C"),
    PaperItem("PLAN Figure 4", "l2 error at rho = 0.01 and n = 100000"),
    PaperItem("PLAN Figure 5 (a)", "synthetic binary data"),
    PaperItem("PLAN Figure 5 (b), (c)", "Kosarak and POS", datasets=("kosarak", "pos")),
    PaperItem("PLAN Figure 6", "shape of the noise for different scalings",
              ("figures/figure6.png", "figures/figure6.pdf"), illustration=True),
    PaperItem("PLAN Figure 7", "correlated Gaussian data (A', C')"),
    PaperItem("PLAN Figure 8", "Figure 3 with PLAN without scaling"),
    PaperItem("PLAN Figure 9 (a)", "synthetic binary data with PLAN without scaling"),
    PaperItem("PLAN Figure 9 (b), (c)", "Kosarak and POS with PLAN without scaling", datasets=("kosarak", "pos")),
    PaperItem("PLAN Figure 10", "Figure 3 with d = 2048"),
    PaperItem("PLAN Table 2", "variance estimation",
              ("results/variance_study/table2.csv", "results/variance_study/table2_erratum.csv")),
    PaperItem("User-level Figure 1", "the annulus A_{a,b} and the projection onto it",
              ("figures/userlevel_figure1.png", "figures/userlevel_figure1.pdf"), illustration=True),
    PaperItem("User-level Figure 2", "average error, geometric collection"),
    PaperItem("User-level Figure 3", "average error, extreme collection"),
    PaperItem("CoinPress Figure 3", "mean estimation: l2 error against n (d = 50, rho = 0.5, R = 10 sqrt(d))",
              band=COINPRESS_BAND),
    PaperItem("CoinPress Figure 4", "the effect of the prior radius R (d = 50, n = 1000, rho = 0.5)",
              band=COINPRESS_BAND),
    PaperItem("IOME Figure 1", "l2 error against d, Sigma = I, three means (n = 4000, rho = 1/2)"),
    PaperItem("IOME Figure 2", "l2 error against rho, Sigma = I, three means (n = 4000, d = 128)"),
    PaperItem("IOME Figure 3", "l2 error against d, rotated covariance with eigenvalues in [1, kappa]"),
    PaperItem("IOME Figure 4", "Figure 3 with CoinPress's private covariance first (MVCRec-MVMRec)"),
    PaperItem("IOME Figure 5", "the Mahalanobis error of Figure 4's estimates"),
    PaperItem("IOME Figure 6", "l2 error against the prior radius R (kappa = 10, d = 128)"),
    PaperItem("IOME Figure 7", "MNIST: l2 error against rho, Shifted-CM and CoinPress", datasets=("mnist",)),
    PaperItem("IOME Figure 8", "MNIST: l2 error against rho, Shifted-CM and MVCRec-MVMRec", datasets=("mnist",)),
    PaperItem("IOME Figure 9", "the clipping threshold: exact quantiles of the norms against the paper's choice"),
    PaperItem("IOME Figure 10", "local model: l2 error against d, Shifted-CM and GRS's KnownVar and UnkVar "
              "(n = 10^5, eps = 1)"),
    PaperItem("IOME Figure 11", "local model: l2 error against eps (n = 10^5, d = 8)"),
    PaperItem("IOME Figure 12", "local model: l2 error against the prior radius R (n = 10^5, d = 8, eps = 1)"),
    PaperItem("CoinPress covariance", "private covariance: Mahalanobis error against n (d = 10, rho = 0.5, "
              "u = 10 sqrt(d))", band=COINPRESS_BAND),
)
ITEMS_BY_NAME = {item.item: item for item in PAPER_ITEMS}


# ----------------------------------------------------------------------------- comparisons


def compare(ours: float, ours_se: float, paper: float, paper_se: float = 0.0,
            band: tuple[float, float] = AGREE_BAND) -> tuple[float, float, bool]:
    """(ratio, z, agrees) of one value under the rules of the module docstring (``band``: the
    item's)."""
    ratio = ours / paper if paper != 0 else math.nan
    se = math.hypot(ours_se if math.isfinite(ours_se) else 0.0, paper_se if math.isfinite(paper_se) else 0.0)
    z = (ours - paper) / se if se > 0 else (0.0 if ours == paper else math.copysign(math.inf, ours - paper))
    agrees = (band[0] <= ratio <= band[1]) or abs(z) < AGREE_Z
    return ratio, z, bool(agrees)


def item_status(agreeing: int, compared: int) -> str:
    share = agreeing / compared
    if share >= REPRODUCED_SHARE:
        return "reproduced"
    return "partly reproduced" if share >= PARTLY_SHARE else "not reproduced"


@dataclass(frozen=True)
class Published:
    """The authors' result files, in our names: experiment -> (their experiment, their labels ->
    our mechanisms, our measure their error column holds)."""

    frame: pd.DataFrame  # published_summaries.csv

    def rows(self, experiment_map: Mapping, experiment: str, mechanism: str) -> pd.DataFrame:
        entry = experiment_map.get(experiment) or {}
        labels = [label for label, ours in (entry.get("names") or {}).items() if ours == mechanism]
        if not entry.get("published") or not labels:
            return self.frame.iloc[0:0]
        return self.frame[(self.frame["experiment"] == entry["published"]) & self.frame["algorithm"].isin(labels)]


def match_setting(rows: pd.DataFrame, setting: Mapping[str, float]) -> pd.DataFrame:
    for name, value in setting.items():
        if name in rows.columns and rows[name].notna().any():
            rows = rows[np.isclose(rows[name].astype(float), float(value))]
    return rows


def setting_text(setting: Mapping[str, float]) -> str:
    return ", ".join(f"{name}={format_value(value)}" for name, value in setting.items())


def comparable(config: Mapping, experiment: str) -> str | None:
    """None if the experiment runs the paper's setting, else why not (e.g. another n): the data
    parameters the config's ``scorecard.experiments.<experiment>.paper`` lists must be ours (for a
    real dataset, the statistics its fetch verifies), and its trials at least the paper's."""
    entry = ((config.get("scorecard") or {}).get("experiments") or {}).get(experiment) or {}
    ours = dict(((config.get("experiments") or {}).get(experiment) or {}).get("data") or {})
    dataset = real_dataset_of(ours.get("source"), ours)
    if dataset is not None:  # a real dataset's size is what its fetch verifies
        ours.update(((config.get("datasets") or {}).get(dataset) or {}).get("expect") or {})
    differ = [f"{name} = {format_value(ours[name]) if name in ours else 'unset'} here, {format_value(value)} in "
              f"the paper" for name, value in (entry.get("paper") or {}).items()
              if name not in ours or not math.isclose(float(ours[name]), float(value))]
    trials = ((config.get("experiments") or {}).get(experiment) or {}).get("trials")
    paper_trials = entry.get("trials")
    if paper_trials is not None and trials is not None and int(trials) < int(paper_trials):
        differ.append(f"{trials} trials here, {paper_trials} in the paper")
    return f"{experiment}: " + "; ".join(differ) if differ else None


RELATIVE = "_relative_to_empirical"  # the columns of the error relative to the empirical mean's (summary.py)


def heavy_tailed(mean: float, sd: float) -> bool:
    """A mean whose sd exceeds it: a few trials carry it, and its se does not describe them."""
    return sd > mean


def tail_test(ours_above: float, ours_trials: int, paper_above: float, paper_trials: int) -> float:
    """z of the difference of two shares of trials above 3x their median (pooled two-proportion
    test; 0 when neither side has such a trial)."""
    pooled = (ours_above + paper_above) / (ours_trials + paper_trials)
    se = math.sqrt(pooled * (1 - pooled) * (1 / ours_trials + 1 / paper_trials))
    return (ours_above / ours_trials - paper_above / paper_trials) / se if se > 0 else 0.0


class MissingData(LookupError):
    """Numbers a compared value or a claim needs are not in a source (an experiment not run, a
    summary without a column, or not in the authors' files)."""


def compare_summaries(ours: Mapping, ours_suffix: str, paper: Mapping, paper_suffix: str,
                      band: tuple[float, float] = AGREE_BAND) -> dict:
    """One compared value from a row of our summary and one of the authors' (columns mean, sd or
    std, median, q25, q75, trials, above_3x_median, with a suffix): on the mean, or, where either
    side's sd exceeds its mean, on the median AND the share of trials above 3x the median (module
    docstring)."""
    ours_trials, paper_trials = int(ours["trials"]), int(paper["trials"])
    ours_mean, paper_mean = float(ours[f"mean{ours_suffix}"]), float(paper[f"mean{paper_suffix}"])
    ours_sd, paper_sd = float(ours[f"std{ours_suffix}"]), float(paper[f"sd{paper_suffix}"])
    if not (heavy_tailed(ours_mean, ours_sd) or heavy_tailed(paper_mean, paper_sd)):
        ours_se, paper_se = float(ours[f"se{ours_suffix}"]), paper_sd / math.sqrt(paper_trials)
        ratio, z, agrees = compare(ours_mean, ours_se, paper_mean, paper_se, band)
        return {"statistic": "mean", "ours": ours_mean, "ours_se": ours_se, "ours_trials": ours_trials,
                "paper": paper_mean, "paper_se": paper_se, "paper_trials": paper_trials,
                "paper_source": "authors' result files", "ratio": ratio, "z": z, "agrees": agrees}
    tail = f"above_3x_median{ours_suffix}"
    if tail not in ours or pd.isna(ours[tail]):
        raise MissingData(f"{ours['experiment']}, {ours['mechanism']}: a heavy-tailed mean (sd {ours_sd:.3g} > "
                          f"{ours_mean:.3g} or the paper's), and its summary has no {tail} column: it was "
                          f"written before the summaries counted the tail; rerun its `summarise` job")
    medians, ses = [], []
    for row, suffix, trials in ((ours, ours_suffix, ours_trials), (paper, paper_suffix, paper_trials)):
        medians.append(float(row[f"median{suffix}"]))
        ses.append(median_standard_error(float(row[f"q25{suffix}"]), float(row[f"q75{suffix}"]), trials))
    ratio, z, median_agrees = compare(medians[0], ses[0], medians[1], ses[1], band)
    ours_above, paper_above = int(ours[tail]), int(paper[f"above_3x_median{paper_suffix}"])
    tail_z = tail_test(ours_above, ours_trials, paper_above, paper_trials)
    return {"statistic": "median and tail", "ours": medians[0], "ours_se": ses[0], "ours_trials": ours_trials,
            "paper": medians[1], "paper_se": ses[1], "paper_trials": paper_trials,
            "paper_source": "authors' result files", "ratio": ratio, "z": z,
            "agrees": bool(median_agrees and abs(tail_z) < AGREE_Z), "ours_above_3x_median": ours_above,
            "paper_above_3x_median": paper_above, "tail_z": tail_z}


def figure_values(item: str, figure: str, spec: Mapping, summary: pd.DataFrame, published: Published,
                  config: Mapping, metrics: Mapping | None = None,
                  band: tuple[float, float] = AGREE_BAND) -> list[dict]:
    """Every drawn point of a figure that the authors' files also have, compared on the mean."""
    from .figures.paper import plan_figure

    experiment_map = (config.get("scorecard") or {}).get("experiments") or {}
    values = []
    for plan in plan_figure(spec, summary, metrics):
        measure = (experiment_map.get(plan.experiment) or {}).get("measure", "error")
        suffix = "" if measure == "error" else "_vs_empirical"
        ours_rows = summary[summary["experiment"] == plan.experiment]
        for series in plan.series:
            theirs = published.rows(experiment_map, plan.experiment, series.mechanism)
            if theirs.empty:
                continue
            value = series.value if series.value is not None else (max(plan.series_values)
                                                                    if plan.series_values else None)
            for x in series.x:
                setting = {**dict(plan.fixed), plan.x: float(x)}
                if plan.series_parameter is not None and value is not None:
                    setting[plan.series_parameter] = float(value)
                row = match_setting(ours_rows[ours_rows["mechanism"] == series.mechanism], setting)
                paper = match_setting(theirs, setting)
                if len(row) != 1 or len(paper) != 1:
                    continue
                row, paper = row.iloc[0], paper.iloc[0]
                where = {"item": item, "figure": figure, "panel": plan.title, "experiment": plan.experiment,
                         "mechanism": series.mechanism, "setting": setting_text(setting)}
                compared = compare_summaries(row, suffix, paper, "", band)
                values.append(where | {"statistic": compared["statistic"], "measure": measure} | compared)
                # a panel of the error relative to the empirical mean's: also its private part, which the
                # paper drew (summary.py), where the authors' file has the empirical mean at the setting
                if plan.measure == "error_relative_to_empirical" and pd.notna(paper.get(f"mean{RELATIVE}")):
                    compared = compare_summaries(row, RELATIVE, paper, RELATIVE, band)
                    values.append(where | {"statistic": compared["statistic"], "measure": "relative_to_empirical"}
                                  | compared)
    return values


# The columns of a table of listed values that are not a setting (listed_values).
LISTED_COLUMNS = {"item", "experiment", "mechanism", "label", "statistic", "measure", "value", "trials", "quote",
                  "source"}
# a statistic -> the column of its standard error in our summary (the median's: from the quartiles)
STANDARD_ERRORS = {"mean": "se", "trimmed_mean": "trimmed_mean_se"}


def listed_values(item: str, table: pd.DataFrame, summary: pd.DataFrame,
                  band: tuple[float, float] = AGREE_BAND) -> list[dict]:
    """The values a table lists for ``item``, one per row (the numbers the text quotes, or a
    published file's values), against our ``statistic`` of the same ``measure`` at the row's
    setting: every column not in LISTED_COLUMNS that the row fills. A row with ``trials`` and no
    standard error gets ours scaled to its trials (module docstring)."""
    values = []
    settings = [column for column in table.columns if column not in LISTED_COLUMNS]
    for listed in table[table["item"] == item].to_dict("records"):
        suffix = "" if listed["measure"] == "error" else "_vs_empirical"
        setting = {name: float(listed[name]) for name in settings if pd.notna(listed[name])}
        rows = match_setting(summary[(summary["experiment"] == listed["experiment"])
                              & (summary["mechanism"] == listed["mechanism"])], setting)
        if len(rows) != 1:
            continue
        row = rows.iloc[0]
        statistic = listed["statistic"]
        ours = float(row[f"{statistic}{suffix}"])
        if statistic in STANDARD_ERRORS:
            ours_se = float(row[f"{STANDARD_ERRORS[statistic]}{suffix}"])
        else:
            ours_se = median_standard_error(float(row[f"q25{suffix}"]), float(row[f"q75{suffix}"]),
                                            int(row["trials"]))
        paper_trials = float(listed.get("trials", math.nan))
        paper_se = ours_se * math.sqrt(int(row["trials"]) / paper_trials) if paper_trials > 0 else math.nan
        if pd.notna(listed.get("quote")):
            paper_source = f"quoted in the text ({listed['quote'].split(':')[0]})"
        else:
            paper_source = str(listed.get("source", ""))
        ratio, z, agrees = compare(ours, ours_se, float(listed["value"]), paper_se, band)
        values.append({
            "item": item, "figure": "", "panel": "", "experiment": listed["experiment"],
            "mechanism": listed["mechanism"], "setting": setting_text(setting), "statistic": statistic,
            "measure": listed["measure"], "ours": ours, "ours_se": ours_se, "ours_trials": int(row["trials"]),
            "paper": float(listed["value"]), "paper_se": paper_se, "paper_trials": paper_trials,
            "paper_source": paper_source, "ratio": ratio, "z": z, "agrees": agrees,
        })
    return values


def table2_values(table: pd.DataFrame) -> list[dict]:
    """Table 2 under the authors' protocol (experiments/outputs/tables.py) against the paper's cells."""
    values = []
    for row in table.itertuples(index=False):
        ratio, z, agrees = compare(float(row.ours), float(row.ours_se), float(row.paper), math.nan)
        values.append({
            "item": "PLAN Table 2", "figure": "", "panel": "", "experiment": "variance_study_published",
            "mechanism": row.method, "setting": f"rho={format_value(row.rho)}, sigma={format_value(row.sigma)}",
            "statistic": "mean", "measure": "relative_std", "ours": float(row.ours), "ours_se": float(row.ours_se),
            "ours_trials": math.nan, "paper": float(row.paper), "paper_se": math.nan, "paper_trials": math.nan,
            "paper_source": "the paper's Table 2", "ratio": ratio, "z": z, "agrees": agrees,
        })
    return values


# ----------------------------------------------------------------------------- the table


SCORECARD_COLUMNS = ["item", "paper", "description", "outputs", "status", "compared", "agree", "agree_share",
                     "median_and_tail", "ratio_median", "ratio_min", "ratio_max", "worst", "worst_ours",
                     "worst_paper", "worst_ratio",
                     "worst_z", "note"]


def _empty_row(item: str, paper: str, description: str, outputs: Sequence[str]) -> dict:
    row = dict.fromkeys(SCORECARD_COLUMNS, "")
    row.update({"item": item, "paper": paper, "description": description, "outputs": " ".join(outputs),
                "compared": 0, "agree": 0, "median_and_tail": 0})
    return row


def _fill_comparison(row: dict, values: Sequence[dict]) -> None:
    ratios = np.array([v["ratio"] for v in values if math.isfinite(v["ratio"])])
    agree = sum(bool(v["agrees"]) for v in values)
    worst = max(values, key=lambda v: (not v["agrees"], abs(math.log(v["ratio"])) if v["ratio"] > 0 else math.inf))
    row.update({
        "status": item_status(agree, len(values)), "compared": len(values), "agree": agree,
        "agree_share": agree / len(values),
        "ratio_median": float(np.median(ratios)) if ratios.size else math.nan,
        "ratio_min": float(ratios.min()) if ratios.size else math.nan,
        "ratio_max": float(ratios.max()) if ratios.size else math.nan,
        "worst": f"{worst['mechanism']}, {worst['experiment']} {worst['setting']} ({worst['statistic']})",
        "worst_ours": worst["ours"], "worst_paper": worst["paper"], "worst_ratio": worst["ratio"],
        "worst_z": worst["z"],
    })
    tails = sum(v["statistic"] == "median and tail" for v in values)
    row["median_and_tail"] = tails
    if tails:
        row["note"] = (f"{tails} of its {len(values)} values judged on the median and the share of trials above 3x "
                       "the median (a mean whose sd exceeds it on either side).")


def build_scorecard(*, config: Mapping, summary: pd.DataFrame, published: pd.DataFrame, quoted: pd.DataFrame,
                    published_values: Sequence[pd.DataFrame] = (), table2: pd.DataFrame | None = None,
                    illustrations: Mapping[str, pd.DataFrame] | None = None,
                    missing: Collection[str] = (), produced: Sequence[str] = (),
                    metrics: Mapping | None = None, notes: Mapping[str, str] | None = None,
                    extra_figures: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scorecard, compared values). ``published_values``: tables of published values listed one
    per row (:func:`listed_values`); ``missing``: the datasets this run could not obtain;
    ``produced``: the files of dedicated rules this run built; ``illustrations``: figure name ->
    its numbers; ``notes``: item -> a finding to state in its row (e.g. the Figure 7(b) erratum);
    ``extra_figures``: our figures that reproduce no paper item, name -> title."""
    figures = config.get("figures") or {}
    experiments = config.get("experiments") or {}
    missing = set(missing or ())
    illustrations = dict(illustrations or {})
    published = Published(published)
    rows, all_values = [], []
    for item in PAPER_ITEMS:
        names = [name for name, spec in figures.items() if spec.get("reproduces") == item.item]
        outputs = [f"figures/{name}.{kind}" for name in names for kind in ("png", "pdf")] + [
            path for path in item.outputs if path in produced]
        row = _empty_row(item.item, item.item.split(" ")[0], item.description, outputs or item.outputs)
        needed = set(item.datasets) | {experiments.get(p["experiment"], {}).get("data", {}).get("dataset")
                                       for name in names for p in figures[name]["panels"]} - {None}
        absent = [dataset for dataset in sorted(needed) if dataset in missing]
        panel_experiments = list(dict.fromkeys([p["experiment"] for name in names for p in figures[name]["panels"]]
                                               + list(item.experiments)))
        if item.item == "PLAN Table 2" and table2 is not None:
            panel_experiments = ["variance_study_published"]
        reasons = [reason for e in panel_experiments if e in experiments and (reason := comparable(config, e))]
        if absent:
            row["status"] = "not run here"
            row["note"] = not_obtained_note(absent)
        elif not outputs:
            row["status"] = "not produced"
            row["note"] = "nothing in this run's config draws it"
        elif reasons:
            row["status"] = "not comparable here"
            row["note"] = "this run's settings differ from the paper's: " + "; ".join(reasons)
        else:
            values = []
            for name in names:
                values += figure_values(item.item, name, figures[name], summary, published, config, metrics,
                                        item.band)
            for table in (quoted, *published_values):
                values += listed_values(item.item, table, summary, item.band)
            if item.item == "PLAN Table 2" and table2 is not None:
                values += table2_values(table2)
            if values:
                _fill_comparison(row, values)
                all_values += values
            else:
                row["status"] = "no published numbers"
                if item.illustration:
                    row["note"] = illustration_note(item.item, illustrations)
                else:
                    row["note"] = "no committed result files and no numbers quoted: see the claims of the text"
        note = (notes or {}).get(item.item)
        if note:
            row["note"] = " ".join(filter(None, [row["note"], note]))
        rows.append(row)
    for name, title in (extra_figures or {}).items():
        row = _empty_row(f"ours: {name}", "ours", title, [f"figures/{name}.png", f"figures/{name}.pdf"])
        row["status"] = "ours"
        rows.append(row)
    values = pd.DataFrame(all_values)
    counted = [column for column in ("ours_above_3x_median", "paper_above_3x_median") if column in values]
    return pd.DataFrame(rows, columns=SCORECARD_COLUMNS), values.astype({column: "Int64" for column in counted})


ILLUSTRATION_FIGURES = {"PLAN Figure 1": "figure1", "PLAN Figure 6": "figure6", "User-level Figure 1":
                        "userlevel_figure1"}


def illustration_note(item: str, illustrations: Mapping[str, pd.DataFrame]) -> str:
    """An illustration's numbers in one line (its CSV, written by experiments/outputs/illustrations.py)."""
    frame = illustrations.get(ILLUSTRATION_FIGURES.get(item, ""))
    if frame is None or frame.empty:
        return "an illustration, drawn from the project's mechanisms"
    if item == "PLAN Figure 1":
        row = frame.iloc[0]
        text = (f"n = {int(row['n'])}, rho = {format_value(row['rho'])}: clip threshold "
                f"C = {row['clip_threshold']:.3g} "
                f"({100 * row['fraction_clipped']:.3g} % of the points clipped); the private mean's l2 error "
                f"{row['private_error_l2']:.3g}, the empirical mean's {row['empirical_error_l2']:.3g}")
    elif item == "PLAN Figure 6":
        text = "noise std (horizontal, vertical): " + "; ".join(
            f"{row.scaling.replace('_', ' ')} ({row.std_horizontal:.3g}, {row.std_vertical:.3g})"
            for row in frame.itertuples(index=False))
    else:
        points = frame.set_index("point")
        text = (f"a = {format_value(points['a'].iloc[0])}, b = {format_value(points['b'].iloc[0])}: " + "; ".join(
            f"{p} (l1 norm {points.loc[p, 'l1_norm']:.3g}) -> {q} (l1 norm {points.loc[q, 'l1_norm']:.3g})"
            for p, q in (("p1", "q1"), ("p2", "q2")) if p in points.index and q in points.index))
    return "an illustration, drawn from the project's mechanisms: " + text


# ----------------------------------------------------------------------------- coverage, markdown, statuses


def coverage(scorecard: pd.DataFrame) -> str:
    """What the scorecard covers, per paper in its order, e.g. "31 items: PLAN 13, IOME 12": the
    README and docs/design.md quote it, so that no sentence says it covers more."""
    papers = scorecard[scorecard["status"] != "ours"]
    per_paper = papers.groupby("paper", sort=False).size()
    return f"{len(papers)} items: " + ", ".join(f"{paper} {count}" for paper, count in per_paper.items())


def scorecard_markdown(scorecard: pd.DataFrame) -> str:
    """The papers' rows of a scorecard as a Markdown table (docs/results.md#scorecard): item, status, the
    values that agree, and ours / paper (median and range)."""
    lines = ["| item | status | values that agree | ours / paper: median (range) |", "| --- | --- | --- | --- |"]
    for row in scorecard[scorecard["status"] != "ours"].to_dict("records"):
        compared = int(row["compared"] or 0)
        agree = f"{int(row['agree'])} of {compared}" if compared else ""
        ratios = (f"{float(row['ratio_median']):.3g} ({float(row['ratio_min']):.3g}-{float(row['ratio_max']):.3g})"
                  if compared else "")
        lines.append(f"| {row['item']} | {row['status']} | {agree} | {ratios} |")
    return "\n".join(lines) + "\n"


def read_statuses(paths: Sequence[str | Path]) -> list[str]:
    """The datasets that could not be obtained, from the fetch statuses (experiments.engine.availability)."""
    from ..engine.availability import read_status

    return sorted(status["dataset"] for status in map(read_status, paths) if not status["available"])


# A row that needs a dataset this run could not obtain says so in a few words; the sources tried and
# why each failed are listed once, in the report's "Not reproduced" section, which the report links.
NOT_OBTAINED = re.compile(r"(?P<datasets>[\w-]+(?:, [\w-]+)*) not obtained here: the report lists the sources tried\.")


def not_obtained_note(datasets: Sequence[str]) -> str:
    """The scorecard's and the claims' text for datasets this run could not obtain, e.g. "kosarak, pos
    not obtained here: the report lists the sources tried."."""
    return f"{', '.join(datasets)} not obtained here: the report lists the sources tried."


def split_not_obtained(text: str) -> tuple[list[str], str]:
    """(the datasets :func:`not_obtained_note` names at the start of ``text``, the rest of the text);
    ([], text) when it does not start with such a note."""
    match = NOT_OBTAINED.match(text)
    if not match:
        return [], text
    return match["datasets"].split(", "), text[match.end():].strip()
