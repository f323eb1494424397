"""The reproduction scorecard: every figure and table of the papers next to the numbers they
publish, and the claims their texts make, checked against this run.

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
(experiments/tables.py). Panels that draw the error relative to the empirical mean are compared
on the error itself: the published
files hold per-setting summaries of the error, and the relative measure needs per-trial errors.

Rules, stated before any comparison: a value AGREES when ours / published lies in [0.85, 1.15]
or |z| < 3, z = (ours - published) / sqrt(se_ours^2 + se_published^2) (an unknown published
standard error counts as 0). The CoinPress items hold the ratio to [0.9, 1.1] instead
(``PaperItem.band``): trimmed means over 100 trials vary by about 1 %. An item is ``reproduced``
when at least 90 % of its compared values agree, ``partly reproduced`` from 50 %, else ``not
reproduced``; ``not run here`` when it needs a real dataset this run could not obtain (the
reason is given); ``not comparable here`` when this run's settings differ from the paper's (e.g.
the smoke config's small n); ``no published numbers`` when neither files nor quoted numbers
exist (the claims table still checks the text); ``not produced`` when the config has nothing
that draws it.

Claims (``results/claims.csv``): each quantitative or comparative statement the PLAN paper's text
(and the user-level paper's) makes about a figure or table, the criterion used, and what this run
measures, with the same check run on the authors' files where they cover it.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .config import format_value
from .errata import FIGURE7_COLUMNS
from .fidelity import median_standard_error
from .sources import real_dataset_of
from .summary import STATISTICS

AGREE_BAND = (0.85, 1.15)
COINPRESS_BAND = (0.9, 1.1)  # the CoinPress items: trimmed means over 100 trials (about 1 % Monte-Carlo spread)
AGREE_Z = 3.0
REPRODUCED_SHARE = 0.9
PARTLY_SHARE = 0.5
STATUSES = ("reproduced", "partly reproduced", "not reproduced", "not run here", "not comparable here",
            "no published numbers", "not produced", "ours")
PAPER_STATUSES = STATUSES[:-1]
VERDICTS = ("holds", "does not hold", "not run here", "not comparable here")
VERDICT_PHRASES = {"holds": "hold", "does not hold": "do not hold", "not run here": "not run here",
                   "not comparable here": "not comparable here"}


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


def _match(rows: pd.DataFrame, setting: Mapping[str, float]) -> pd.DataFrame:
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
                row = _match(ours_rows[ours_rows["mechanism"] == series.mechanism], setting)
                paper = _match(theirs, setting)
                if len(row) != 1 or len(paper) != 1:
                    continue
                row, paper = row.iloc[0], paper.iloc[0]
                ours_mean, ours_se = float(row[f"mean{suffix}"]), float(row[f"se{suffix}"])
                paper_mean = float(paper["mean"])
                paper_se = float(paper["sd"]) / math.sqrt(float(paper["trials"]))
                ratio, z, agrees = compare(ours_mean, ours_se, paper_mean, paper_se, band)
                values.append({
                    "item": item, "figure": figure, "panel": plan.title, "experiment": plan.experiment,
                    "mechanism": series.mechanism, "setting": setting_text(setting), "statistic": "mean",
                    "measure": measure, "ours": ours_mean, "ours_se": ours_se, "ours_trials": int(row["trials"]),
                    "paper": paper_mean, "paper_se": paper_se, "paper_trials": int(paper["trials"]),
                    "paper_source": "authors' result files", "ratio": ratio, "z": z, "agrees": agrees,
                })
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
        rows = _match(summary[(summary["experiment"] == listed["experiment"])
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
    """Table 2 under the authors' protocol (experiments/tables.py) against the paper's cells."""
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
                     "ratio_median", "ratio_min", "ratio_max", "worst", "worst_ours", "worst_paper", "worst_ratio",
                     "worst_z", "note"]


def _empty_row(item: str, paper: str, description: str, outputs: Sequence[str]) -> dict:
    row = dict.fromkeys(SCORECARD_COLUMNS, "")
    row.update({"item": item, "paper": paper, "description": description, "outputs": " ".join(outputs),
                "compared": 0, "agree": 0})
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


def build_scorecard(*, config: Mapping, summary: pd.DataFrame, published: pd.DataFrame, quoted: pd.DataFrame,
                    published_values: Sequence[pd.DataFrame] = (), table2: pd.DataFrame | None = None,
                    illustrations: Mapping[str, pd.DataFrame] | None = None,
                    missing: Mapping[str, str] | None = None, produced: Sequence[str] = (),
                    metrics: Mapping | None = None, notes: Mapping[str, str] | None = None,
                    extra_figures: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scorecard, compared values). ``published_values``: tables of published values listed one
    per row (:func:`listed_values`); ``missing``: dataset -> why this run could not obtain it;
    ``produced``: the files of dedicated rules this run built; ``illustrations``: figure name ->
    its numbers; ``notes``: item -> a finding to state in its row (e.g. the Figure 7(b) erratum);
    ``extra_figures``: our figures that reproduce no paper item, name -> title."""
    figures = config.get("figures") or {}
    experiments = config.get("experiments") or {}
    missing = dict(missing or {})
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
        absent = {dataset: missing[dataset] for dataset in sorted(needed) if dataset in missing}
        panel_experiments = list(dict.fromkeys([p["experiment"] for name in names for p in figures[name]["panels"]]
                                               + list(item.experiments)))
        if item.item == "PLAN Table 2" and table2 is not None:
            panel_experiments = ["variance_study_published"]
        reasons = [reason for e in panel_experiments if e in experiments and (reason := comparable(config, e))]
        if absent:
            row["status"] = "not run here"
            row["note"] = "; ".join(f"needs the real dataset {d}, which this run could not obtain: {why}"
                                    for d, why in absent.items())
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
        for note in ((notes or {}).get(item.item), ITEM_NOTES.get(item.item) if row["compared"] else None):
            if note:
                row["note"] = " ".join(filter(None, [row["note"], note]))
        rows.append(row)
    for name, title in (extra_figures or {}).items():
        row = _empty_row(f"ours: {name}", "ours", title, [f"figures/{name}.png", f"figures/{name}.pdf"])
        row["status"] = "ours"
        rows.append(row)
    return pd.DataFrame(rows, columns=SCORECARD_COLUMNS), pd.DataFrame(all_values)


# Findings stated in an item's row (the errata section has the details).
ITEM_NOTES = {
    "PLAN Figure 7": ("Erratum: the IOME medians quoted for Figure 7(b) are not reproducible from the authors' "
                      "published code either, which gives " + " / ".join(f"{v:g}" for v in
                                                                          FIGURE7_COLUMNS["authors_code_T20"])
                      + " at rho = 1 / 0.5 / 0.125 (see the errata)."),
}

ILLUSTRATION_FIGURES = {"PLAN Figure 1": "figure1", "PLAN Figure 6": "figure6", "User-level Figure 1":
                        "userlevel_figure1"}


def illustration_note(item: str, illustrations: Mapping[str, pd.DataFrame]) -> str:
    """An illustration's numbers in one line (its CSV, written by experiments/illustrations.py)."""
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


def illustration_claims(illustrations: Mapping[str, pd.DataFrame]) -> list[dict]:
    """The claims of the PLAN paper's Appendix C about Figure 6, checked on its numbers (the noise of
    each scaling; experiments/illustrations.py, mechanisms/scaling.py)."""
    frame = illustrations.get("figure6")
    claims = [
        ("In both cases we use most of the privacy budget for the horizontal axis which allows us to add less "
         "noise than the orange line where the budget is split evenly.",
         "both moment-optimal scalings' horizontal noise std below the even split's", "std_horizontal", "even_split"),
        ("But we are still able to add less noise to the vertical axis as opposed to the brown line without "
         "scaling.", "both moment-optimal scalings' vertical noise std below no scaling's", "std_vertical",
         "no_scaling"),
    ]
    rows = []
    for quote, criterion, column, other in claims:
        row = {"item": "PLAN Figure 6", "claim": quote, "criterion": criterion,
               "authors_files": "not checked: an illustration", "verdict_on_files": ""}
        if frame is None or frame.empty:
            rows.append(row | {"measured": "Figure 6 is not in this run's config", "verdict": "not run here"})
            continue
        stds = frame.set_index("scaling")[column]
        ours = [stds["first_moment"], stds["second_moment"]]
        rows.append(row | {
            "measured": f"{column.replace('_', ' ')}: first moment {ours[0]:.3g}, second moment {ours[1]:.3g}, "
                        f"{other.replace('_', ' ')} {stds[other]:.3g}",
            "verdict": "holds" if all(value < stds[other] for value in ours) else "does not hold"})
    lemma = {"item": "PLAN Figure 6", "claim": "Lemma C.2: the p-th moment of the noise is minimized for s_i "
             "proportional to Delta_i^(2/(p+2)).", "criterion": "among the drawn scalings, gamma = 2/3 has the "
             "smallest E||eta||_1 and gamma = 1/2 the smallest E||eta||_2^2",
             "authors_files": "not checked: an illustration", "verdict_on_files": ""}
    if frame is None or frame.empty:
        rows.append(lemma | {"measured": "Figure 6 is not in this run's config", "verdict": "not run here"})
    else:
        by = frame.set_index("scaling")
        best_l1, best_l2 = by["expected_l1"].idxmin(), by["expected_l2_squared"].idxmin()
        rows.append(lemma | {
            "measured": f"smallest E||eta||_1: {best_l1.replace('_', ' ')} ({by['expected_l1'].min():.4g}); smallest "
                        f"E||eta||_2^2: {best_l2.replace('_', ' ')} ({by['expected_l2_squared'].min():.4g})",
            "verdict": "holds" if (best_l1, best_l2) == ("first_moment", "second_moment") else "does not hold"})
    return rows


# ----------------------------------------------------------------------------- claims


class Source:
    """Summary statistics by (experiment, mechanism, setting), ours or the authors' files.
    ``suffixes``: experiment -> the suffix of the columns that hold its published measure (ours:
    "_vs_empirical" for the real datasets, whose files hold the error against the empirical
    frequencies)."""

    def __init__(self, frame: pd.DataFrame, name: str, suffixes: Mapping[str, str] | None = None):
        self.frame = frame
        self.name = name
        self.suffixes = dict(suffixes or {})

    def rows(self, experiment: str, mechanism: str, **setting) -> pd.DataFrame:
        rows = self.frame[(self.frame["experiment"] == experiment) & (self.frame["mechanism"] == mechanism)]
        return _match(rows, setting)

    def value(self, experiment: str, mechanism: str, statistic: str = "mean", **setting) -> float:
        rows = self.rows(experiment, mechanism, **setting)
        if statistic in STATISTICS:
            statistic += self.suffixes.get(experiment, "")
        if len(rows) != 1 or statistic not in rows.columns:
            raise MissingData(f"{self.name}: no {statistic} of {mechanism} in {experiment} at {setting_text(setting)}")
        return float(rows[statistic].iloc[0])

    def values(self, experiment: str, parameter: str, mechanism: str) -> list[float]:
        rows = self.frame[(self.frame["experiment"] == experiment) & (self.frame["mechanism"] == mechanism)]
        if rows.empty or parameter not in rows.columns:
            raise MissingData(f"{self.name}: no {mechanism} rows with {parameter} in {experiment}")
        return sorted(float(v) for v in rows[parameter].dropna().unique())


class MissingData(LookupError):
    """A claim's data are not in a source (an experiment not run, or not in the authors' files)."""


def published_source(published: pd.DataFrame, experiment_map: Mapping, *, table2: pd.DataFrame | None = None,
                     table2_setup: Mapping | None = None) -> Source:
    """The authors' files renamed to our experiments and mechanisms (std = their sd); with
    ``table2`` (results/variance_study/table2.csv), also the paper's own Table 2 as the means of the
    authors'-protocol experiment (``table2_setup``: the config's ``table2``, its names and
    ``protocol``), so that Table 2's claim is checked on the paper's numbers too."""
    frames = []
    setup = dict(table2_setup or {})
    if table2 is not None and setup.get("protocol") and setup.get("names"):
        paper = table2[table2["method"].isin(setup["names"])]
        frames.append(pd.DataFrame({"experiment": setup["protocol"], "mechanism": paper["method"].map(setup["names"]),
                                    "rho": paper["rho"], "sigma": paper["sigma"], "mean": paper["paper"]}))
    for experiment, entry in experiment_map.items():
        names = (entry or {}).get("names") or {}
        if not entry or not entry.get("published") or not names:
            continue
        rows = published[(published["experiment"] == entry["published"]) & published["algorithm"].isin(names)].copy()
        rows["mechanism"] = rows["algorithm"].map(names)
        rows["experiment"] = experiment
        frames.append(rows.rename(columns={"sd": "std"}))
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["experiment", "mechanism"])
    return Source(frame, "the authors' files")


@dataclass(frozen=True)
class Claim:
    """A statement of a paper about a figure or table, the criterion we check it by, and the
    check: ``check(source) -> (measured text, holds)``; it raises MissingData when the source
    lacks the numbers. ``experiments``: what it reads (for "not run here" / "not comparable")."""

    item: str
    quote: str
    criterion: str
    experiments: tuple[str, ...]
    check: Callable[[Source], tuple[str, bool]]
    on_files: bool = True  # also checked on the authors' files


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def _range(values: Sequence[float]) -> str:
    return f"{_fmt(min(values))}-{_fmt(max(values))}" if len(values) > 1 else _fmt(values[0])


def _ratios(source: Source, experiment: str, numerator: str, denominator: str, x: str, rhos, *,
            statistic: str = "mean", xs=None) -> dict[tuple[float, float], float]:
    """numerator / denominator per (rho, x) over the plotted settings."""
    out = {}
    for rho in rhos:
        for value in xs if xs is not None else source.values(experiment, x, numerator):
            out[(rho, value)] = (source.value(experiment, numerator, statistic, rho=rho, **{x: value})
                                 / source.value(experiment, denominator, statistic, rho=rho, **{x: value}))
    return out


PAPER_RHOS = (0.125, 1.0)
D_UP_TO_1024 = (16, 32, 64, 128, 256, 512, 1024)


def _comparable_everywhere(experiment: str, x: str, rhos=PAPER_RHOS, xs=None, low=2 / 3, high=1.5):
    def check(source: Source) -> tuple[str, bool]:
        ratios = _ratios(source, experiment, "PLAN", "IOME", x, rhos, xs=xs)
        return (f"PLAN / IOME mean error {_range(list(ratios.values()))} over {len(ratios)} settings",
                all(low <= r <= high for r in ratios.values()))
    return check


def _plan_better_where(experiment: str, x: str, where: Callable[[float], bool], rhos):
    def check(source: Source) -> tuple[str, bool]:
        xs = [v for v in source.values(experiment, x, "PLAN") if where(v)]
        ratios = _ratios(source, experiment, "PLAN", "IOME", x, rhos, xs=xs)
        return (f"PLAN / IOME mean error {_range(list(ratios.values()))} at {x} in "
                f"{{{', '.join(format_value(v) for v in xs)}}}", all(r < 1 for r in ratios.values()))
    return check


def _approaches_empirical(source: Source) -> tuple[str, bool]:
    parts, holds = [], True
    for rho in (0.5, 1.0):
        alphas = source.values("gaussian_B", "alpha", "PLAN")
        ratios = [source.value("gaussian_B", "PLAN", rho=rho, alpha=a) / source.value("gaussian_B", "empirical_mean",
                                                                                       rho=rho, alpha=a)
                  for a in alphas]
        parts.append(f"rho {format_value(rho)}: " + ", ".join(f"{_fmt(r)}" for r in ratios))
        holds &= all(later <= earlier * 1.02 for earlier, later in zip(ratios, ratios[1:])) and ratios[-1] < ratios[0]
    return ("PLAN / empirical mean, mean error, alpha = 0 to 2: " + "; ".join(parts), holds)


def _iome_less_robust(source: Source) -> tuple[str, bool]:
    parts, holds = [], True
    for alpha in source.values("gaussian_B_low", "alpha", "PLAN"):
        cv = {m: source.value("gaussian_B_low", m, "std", rho=0.01, alpha=alpha)
              / source.value("gaussian_B_low", m, rho=0.01, alpha=alpha) for m in ("PLAN", "IOME")}
        parts.append(f"alpha {format_value(alpha)}: PLAN {_fmt(cv['PLAN'])}, IOME {_fmt(cv['IOME'])}")
        holds &= cv["IOME"] > cv["PLAN"]
    return "sd / mean: " + "; ".join(parts), holds


def _advantage_grows(experiment: str, statistic: str, rhos=PAPER_RHOS, xs=D_UP_TO_1024):
    def check(source: Source) -> tuple[str, bool]:
        parts, holds = [], True
        for rho in rhos:
            ratios = [source.value(experiment, "IOME", statistic, rho=rho, d=d)
                      / source.value(experiment, "PLAN", statistic, rho=rho, d=d) for d in xs]
            parts.append(f"rho {format_value(rho)}: d = {xs[0]}: {_fmt(ratios[0])}, d = {xs[-1]}: {_fmt(ratios[-1])}")
            holds &= ratios[-1] > ratios[0]
        return "IOME / PLAN " + statistic.replace("_", " ") + ": " + "; ".join(parts), holds
    return check


def _lower_and_growing_variance(source: Source) -> tuple[str, bool]:
    ds = source.values("gaussian_C_low", "d", "PLAN")
    ratios = [source.value("gaussian_C_low", "PLAN", "mean_relative_to_empirical", rho=0.01, d=d)
              / source.value("gaussian_C_low", "IOME", "mean_relative_to_empirical", rho=0.01, d=d) for d in ds]
    sds = [source.value("gaussian_C_low", "PLAN", "std_relative_to_empirical", rho=0.01, d=d) for d in ds]
    return (f"PLAN / IOME {_range(ratios)}; PLAN's sd from {_fmt(sds[0])} (d = {format_value(ds[0])}) to "
            f"{_fmt(sds[-1])} (d = {format_value(ds[-1])})", all(r < 1 for r in ratios) and sds[-1] > sds[0])


PLOTTED_SHARES = (0.25, 0.5)  # Figure 5(a)'s shares of p = 1/2 items below 1 (its third is 1)


def _binary_advantage(source: Source) -> tuple[str, bool]:
    parts, holds = [], True
    for d in source.values("binary_synthetic", "d", "PLAN-binary"):
        gains = [source.value("binary_synthetic", "IOME-binary", rho=0.5, d=d, ratio=r)
                 / source.value("binary_synthetic", "PLAN-binary", rho=0.5, d=d, ratio=r) for r in PLOTTED_SHARES]
        parts.append(f"D = {format_value(d)}: " + ", ".join(_fmt(g) for g in gains))
        holds &= all(g > 1 for g in gains) and all(a >= b for a, b in zip(gains, gains[1:]))
    shares = ", ".join(format_value(r) for r in PLOTTED_SHARES)
    return f"IOME / PLAN mean error at rho = 1/2 for shares {shares}: " + "; ".join(parts), holds


def _across_experiments(first: str, second: str, mechanism: str, rhos=PAPER_RHOS, low=1.0, high=math.inf,
                        statistic: str = "mean", xs=D_UP_TO_1024):
    def check(source: Source) -> tuple[str, bool]:
        ratios = [source.value(first, mechanism, statistic, rho=rho, d=d)
                  / source.value(second, mechanism, statistic, rho=rho, d=d) for rho in rhos for d in xs]
        return (f"{mechanism} {first} / {second} {statistic} error {_range(ratios)} over {len(ratios)} settings",
                all(low <= r <= high for r in ratios))
    return check


def _noscale_vs(experiment: str, x: str, other: str, noscale: str, better: bool, xs_filter=None,
                rhos=PAPER_RHOS, share=1.0):
    """noscale / other below 1 (``better``) or PLAN below noscale, at ``share`` of the settings."""
    def check(source: Source) -> tuple[str, bool]:
        xs = [v for v in source.values(experiment, x, noscale) if xs_filter is None or xs_filter(v)]
        ratios = [source.value(experiment, noscale, rho=rho, **{x: v}) / source.value(experiment, other, rho=rho,
                                                                                         **{x: v})
                  for rho in rhos for v in xs]
        wins = sum((r < 1) if better else (r > 1) for r in ratios)
        label = f"{noscale} / {other} mean error"
        return (f"{label} {_range(ratios)}; {'below' if better else 'above'} 1 in {wins} of {len(ratios)} settings",
                wins >= share * len(ratios))
    return check


def _figure9_ratios(source: Source, other: str) -> list[float]:
    """PLAN without scaling / ``other``, mean error, at Figure 9(a)'s points (rho = 1/2, every D,
    shares 1/4, 1/2 and 1)."""
    return [source.value("binary_synthetic", "PLAN-binary-noscale", rho=0.5, d=d, ratio=r)
            / source.value("binary_synthetic", other, rho=0.5, d=d, ratio=r)
            for d in source.values("binary_synthetic", "d", "PLAN-binary-noscale") for r in (0.25, 0.5, 1.0)]


def _binary_noscale_vs_iome(source: Source) -> tuple[str, bool]:
    ratios = _figure9_ratios(source, "IOME-binary")
    below = sum(r < 1 for r in ratios)
    return (f"PLAN without scaling / IOME mean error {_range(ratios)}; below 1 in {below} of {len(ratios)} settings",
            below >= 0.9 * len(ratios))


def _binary_slight_gap(source: Source) -> tuple[str, bool]:
    ratios = _figure9_ratios(source, "PLAN-binary")
    return f"PLAN without scaling / PLAN mean error {_range(ratios)}", all(r <= 1.25 for r in ratios)


def _real_data_ratios(source: Source, experiment: str) -> dict[float, float]:
    return {rho: source.value(experiment, "IOME-binary", rho=rho) / source.value(experiment, "PLAN-binary", rho=rho)
            for rho in source.values(experiment, "rho", "PLAN-binary")}


def _real_data_large_rho(source: Source) -> tuple[str, bool]:
    ratios = _real_data_ratios(source, "kosarak")
    large = {rho: r for rho, r in ratios.items() if rho >= 0.25}
    return ("IOME / PLAN mean error: " + ", ".join(f"rho {format_value(rho)}: {_fmt(r)}" for rho, r in ratios.items()),
            bool(large) and all(r > 1 for r in large.values()))


def _real_data_advantage_shrinks(source: Source) -> tuple[str, bool]:
    ratios = _real_data_ratios(source, "pos")
    values = list(ratios.values())
    return ("IOME / PLAN mean error: " + ", ".join(f"rho {format_value(rho)}: {_fmt(r)}" for rho, r in ratios.items()),
            all(r > 1 for r in values) and all(b <= a for a, b in zip(values, values[1:])))


def _worse_at_2048(source: Source) -> tuple[str, bool]:
    plan = source.value("gaussian_A", "PLAN", rho=0.125, d=2048)
    iome = source.value("gaussian_A", "IOME", rho=0.125, d=2048)
    plan_median = source.value("gaussian_A", "PLAN", "median", rho=0.125, d=2048)
    iome_median = source.value("gaussian_A", "IOME", "median", rho=0.125, d=2048)
    return (f"d = 2048, rho = 1/8: mean PLAN {_fmt(plan)} vs IOME {_fmt(iome)} (medians {_fmt(plan_median)} vs "
            f"{_fmt(iome_median)})", plan > iome)


def _high_variance_at_2048(source: Source) -> tuple[str, bool]:
    sds = {rho: source.value("gaussian_C", "PLAN", "std_relative_to_empirical", rho=rho, d=2048) for rho in PAPER_RHOS}
    return (f"PLAN's sd at d = 2048: rho 1/8 {_fmt(sds[0.125])}, rho 1 {_fmt(sds[1.0])}",
            sds[0.125] > 2 * sds[1.0])


def _general_beats_direct(source: Source) -> tuple[str, bool]:
    parts, holds = [], True
    for rho in (0.001, 0.01):
        for sigma in (0.001, 1.0):
            direct = min(source.value("variance_study_published", m, rho=rho, sigma=sigma)
                         for m in ("direct-0.75", "direct-0.841", "direct-0.9"))
            general = {k: source.value("variance_study_published", f"general-k{k}", rho=rho, sigma=sigma)
                       for k in (1, 4)}
            parts.append(f"rho {format_value(rho)}, sigma {format_value(sigma)}: best direct {_fmt(direct)}, "
                         f"k=1 {_fmt(general[1])}, k=4 {_fmt(general[4])}")
            holds &= all(value < direct for value in general.values())
    return "; ".join(parts), holds


def _akmv_near_laplace(experiment: str):
    def check(source: Source) -> tuple[str, bool]:
        eps = source.values(experiment, "eps", "AKMV")
        ratios = [source.value(experiment, "AKMV", eps=e) / source.value(experiment, "Laplace", eps=e) for e in eps]
        return (f"AKMV / Laplace mean error {_range(ratios)} over {len(eps)} eps values",
                all(0.95 <= r <= 1.5 for r in ratios) and np.mean(ratios) >= 1)
    return check


def _opt_beats_laplace(experiment: str):
    def check(source: Source) -> tuple[str, bool]:
        eps = [e for e in source.values(experiment, "eps", "OPT-wc") if e < 1]
        ratios = [source.value(experiment, "Laplace", eps=e) / source.value(experiment, "OPT-wc", eps=e) for e in eps]
        return f"Laplace / OPT-wc mean error for eps < 1: {_range(ratios)}", all(r >= 1.5 for r in ratios)
    return check


def _not_monotone(source: Source) -> tuple[str, bool]:
    eps = source.values("userlevel_geometric", "eps", "OPT-wc")
    errors = [source.value("userlevel_geometric", "OPT-wc", eps=e) for e in eps]
    rises = [(a, b) for (a, ea), (b, eb) in zip(zip(eps, errors), zip(eps[1:], errors[1:])) if eb > ea]
    return (f"OPT-wc's mean error rises between {len(rises)} pairs of consecutive eps"
            + (f" (e.g. {format_value(rises[0][0])} -> {format_value(rises[0][1])})" if rises else ""), bool(rises))


# The IOME paper's Section 6.1 (its lines 172-186; docs/design.md §6.2): criteria written before the runs.
MVMREC = ("CoinPress-t1", "CoinPress-t2", "CoinPress-t3", "CoinPress-t4", "CoinPress-t10")
MVCREC = ("MVCRec-MVMRec-t1", "MVCRec-MVMRec-t2", "MVCRec-MVMRec-t3", "MVCRec-MVMRec-t4", "MVCRec-MVMRec-t5")
FIXED_QUANTILES = ("CM-exact-q50", "CM-exact-q75", "CM-exact-q85", "CM-exact-q95")
# (experiment, the grid parameters of its settings, the CoinPress family it draws)
IOME_STATISTICAL = (("iome_d", ("mu", "d"), MVMREC), ("iome_rho", ("mu", "rho"), MVMREC),
                    ("iome_covariance", ("kappa", "d"), MVMREC), ("iome_mvcrec", ("kappa", "d"), MVCREC),
                    ("iome_R", ("mu", "radius_scale"), MVMREC))
IOME_FIGURES = {"iome_d": "Figure 1", "iome_rho": "Figure 2", "iome_covariance": "Figure 3", "iome_mvcrec": "Figure 4",
                "iome_R": "Figure 6", "iome_mnist": "Figure 7", "iome_mnist_mvcrec": "Figure 8",
                "iome_clipping": "Figure 9 (a)", "iome_clipping_rho": "Figure 9 (b)", "iome_clipping_n": "Figure 9 (c)",
                "iome_local_d": "Figure 10", "iome_local_eps": "Figure 11", "iome_local_R": "Figure 12"}
# the local model's experiments (IOME Figures 10-12) and the parameters of their settings
IOME_LOCAL = (("iome_local_d", ("mu", "d", "eps")), ("iome_local_eps", ("mu", "eps")),
              ("iome_local_R", ("mu", "radius_scale", "eps")))
LOCAL_GAP = 3.0  # "a large gap": the local estimate's error at least this multiple of the non-private mean's


def _settings(source: Source, experiment: str, parameters: Sequence[str], mechanism: str) -> list[dict]:
    """Every combination of the values ``parameters`` take in ``experiment`` (the rows of ``mechanism``)."""
    values = [source.values(experiment, parameter, mechanism) for parameter in parameters]
    return [dict(zip(parameters, combination)) for combination in itertools.product(*values)]


def _where(setting: Mapping[str, float]) -> str:
    return ", ".join(f"{name} {format_value(value)}" for name, value in setting.items())


def _best(source: Source, experiment: str, family: Sequence[str], setting: Mapping,
          statistic: str) -> tuple[str, float]:
    """(the member of ``family`` with the lowest ``statistic`` at ``setting``, that value)."""
    values = {m: source.value(experiment, m, statistic, **setting) for m in family}
    best = min(values, key=values.get)
    return best, values[best]


def _shifted_cm_vs_best_coinpress(source: Source) -> tuple[str, bool]:
    ratios = []
    for experiment, parameters, family in IOME_STATISTICAL:
        for setting in _settings(source, experiment, parameters, "Shifted-CM"):
            best, value = _best(source, experiment, family, setting, "trimmed_mean")
            ratios.append((source.value(experiment, "Shifted-CM", "trimmed_mean", **setting) / value,
                           f"{IOME_FIGURES[experiment]} at {_where(setting)} (vs {best})"))
    above = [(r, where) for r, where in ratios if r > 1.05]
    worst = max(ratios)
    return (f"Shifted-CM / best CoinPress t, trimmed mean: {_range([r for r, _ in ratios])} over {len(ratios)} "
            f"settings; above 1.05 in {len(above)} (largest {_fmt(worst[0])}: {worst[1]})", not above)


def _best_t_depends_on_sigma(source: Source) -> tuple[str, bool]:
    """The loss of using the t that is best at one kappa at another kappa (same d), largest over d."""
    parts, losses = [], []
    for experiment, family in (("iome_covariance", MVMREC), ("iome_mvcrec", MVCREC)):
        kappas = source.values(experiment, "kappa", family[0])
        for d in source.values(experiment, "d", family[0]):
            errors = {k: {m: source.value(experiment, m, "trimmed_mean", kappa=k, d=d) for m in family}
                      for k in kappas}
            best = {k: min(e, key=e.get) for k, e in errors.items()}
            loss = max(errors[b][best[a]] / errors[b][best[b]] for a in kappas for b in kappas)
            losses.append((loss, f"{IOME_FIGURES[experiment]}, d = {format_value(d)}"))
            parts.append(f"{IOME_FIGURES[experiment]} d = {format_value(d)}: "
                         + "/".join(best[k].rsplit("-", 1)[1] for k in kappas))
    worst = max(losses)
    return (f"best t at kappa {'/'.join(format_value(k) for k in kappas)}: " + "; ".join(parts)
            + f"; largest loss from another kappa's best t: {_fmt(worst[0])}x ({worst[1]})", worst[0] >= 1.1)


def _beats_mvmrec_with_covariance(source: Source) -> tuple[str, bool]:
    ratios = [_best(source, "iome_covariance", MVMREC, setting, "trimmed_mean")[1]
              / source.value("iome_covariance", "Shifted-CM", "trimmed_mean", **setting)
              for setting in _settings(source, "iome_covariance", ("kappa", "d"), "Shifted-CM")]
    return (f"best CoinPress t / Shifted-CM, trimmed mean: {_range(ratios)} over {len(ratios)} settings",
            all(r >= 1.25 for r in ratios))


def _close_to_non_private(source: Source) -> tuple[str, bool]:
    ratios = [source.value("iome_covariance", "Shifted-CM", "trimmed_mean", **setting)
              / source.value("iome_covariance", "empirical_mean", "trimmed_mean", **setting)
              for setting in _settings(source, "iome_covariance", ("kappa", "d"), "Shifted-CM")]
    return (f"Shifted-CM / non-private mean, trimmed mean: {_range(ratios)} over {len(ratios)} settings",
            all(r <= 1.5 for r in ratios))


def _covariance_gain_shrinks(source: Source) -> tuple[str, bool]:
    parts, holds = [], True
    for kappa in source.values("iome_mvcrec", "kappa", MVCREC[0]):
        ds = source.values("iome_mvcrec", "d", MVCREC[0])
        gains = [_best(source, "iome_covariance", MVMREC, {"kappa": kappa, "d": d}, "trimmed_mean")[1]
                 / _best(source, "iome_mvcrec", MVCREC, {"kappa": kappa, "d": d}, "trimmed_mean")[1] for d in ds]
        parts.append(f"kappa {format_value(kappa)}: " + ", ".join(f"d = {format_value(d)}: {_fmt(g)}"
                                                                 for d, g in zip(ds, gains)))
        holds &= gains[0] > 1 and gains[-1] < gains[0]
    return "best MVMRec t / best MVCRec-MVMRec t, trimmed mean: " + "; ".join(parts), holds


def _no_mahalanobis_gain(source: Source) -> tuple[str, bool]:
    ratios = [_best(source, "iome_mvcrec", MVCREC, setting, "trimmed_mean_mahalanobis")[1]
              / source.value("iome_mvcrec", "Shifted-CM", "trimmed_mean_mahalanobis", **setting)
              for setting in _settings(source, "iome_mvcrec", ("kappa", "d"), "Shifted-CM")]
    return (f"best MVCRec-MVMRec t / Shifted-CM, Mahalanobis error (trimmed mean): {_range(ratios)} over "
            f"{len(ratios)} settings", all(r >= 0.9 for r in ratios))


def _translation_invariant(source: Source) -> tuple[str, bool]:
    """Shifted-CM and every CoinPress t: the trimmed mean at mu = 5 and 10 against mu = 0, same setting."""
    ratios, failing = [], []
    for experiment, parameters, family in IOME_STATISTICAL:
        if "mu" not in parameters:
            continue
        other = [p for p in parameters if p != "mu"][0]
        mus = source.values(experiment, "mu", "Shifted-CM")
        for mechanism in ("Shifted-CM", *family):
            for x in source.values(experiment, other, mechanism):
                base = source.rows(experiment, mechanism, mu=mus[0], **{other: x}).iloc[0]
                for mu in mus[1:]:
                    row = source.rows(experiment, mechanism, mu=mu, **{other: x}).iloc[0]
                    ratio, z, agrees = compare(float(row["trimmed_mean"]), float(row["trimmed_mean_se"]),
                                               float(base["trimmed_mean"]), float(base["trimmed_mean_se"]), (0.9, 1.1))
                    ratios.append(ratio)
                    if not agrees:
                        failing.append(f"{mechanism} at {IOME_FIGURES[experiment]}, {other} {format_value(x)}, "
                                       f"mu {format_value(mu)}: {_fmt(ratio)} (z = {z:.2g})")
    return (f"trimmed mean at mu = 5, 10 / at mu = 0: {_range(ratios)} over {len(ratios)} comparisons; outside [0.9, "
            f"1.1] with |z| >= 3 in {len(failing)}" + (f" (e.g. {failing[0]})" if failing else ""), not failing)


def _cm_not_invariant(source: Source) -> tuple[str, bool]:
    ratios = []
    for experiment, other in (("iome_d", "d"), ("iome_rho", "rho")):
        mus = source.values(experiment, "mu", "CM")
        for x in source.values(experiment, other, "CM"):
            ratios.append(source.value(experiment, "CM", "trimmed_mean", mu=mus[-1], **{other: x})
                          / source.value(experiment, "CM", "trimmed_mean", mu=mus[0], **{other: x}))
    return (f"CM's trimmed mean at mu = 10 / at mu = 0: {_range(ratios)} over {len(ratios)} settings of Figures 1 "
            "and 2", all(r >= 1.5 for r in ratios))


def _mnist_beats_coinpress(source: Source) -> tuple[str, bool]:
    ratios = []
    for experiment, family in (("iome_mnist", MVMREC), ("iome_mnist_mvcrec", MVCREC)):
        for setting in _settings(source, experiment, ("digit", "rho"), "Shifted-CM"):
            ratios.append(source.value(experiment, "Shifted-CM", "trimmed_mean", **setting)
                          / _best(source, experiment, family, setting, "trimmed_mean")[1])
    return (f"Shifted-CM / best CoinPress t (MVMRec, Figure 7; MVCRec-MVMRec, Figure 8), trimmed mean of the distance "
            f"to the digit's mean: {_range(ratios)} over {len(ratios)} settings", all(r < 1 for r in ratios))


def _clipping_settings(source: Source) -> list[tuple[str, dict]]:
    return [(experiment, setting) for experiment, parameter in (("iome_clipping", "d"), ("iome_clipping_rho", "rho"),
                                                                ("iome_clipping_n", "n"))
            for setting in _settings(source, experiment, (parameter,), FIXED_QUANTILES[0])]


def _optimal_quantile_varies(source: Source) -> tuple[str, bool]:
    errors = {(experiment, tuple(setting.items())): {m: source.value(experiment, m, "mean", **setting)
                                                     for m in FIXED_QUANTILES}
              for experiment, setting in _clipping_settings(source)}
    best = {key: min(values, key=values.get) for key, values in errors.items()}
    loss = max(errors[b][best[a]] / errors[b][best[b]] for a in errors for b in errors)
    counts = {m: sum(1 for value in best.values() if value == m) for m in FIXED_QUANTILES}
    return ("best fixed quantile (settings): " + ", ".join(f"{m.removeprefix('CM-exact-q')} % ({c})"
                                                            for m, c in counts.items() if c)
            + f"; largest loss from another setting's best quantile: {_fmt(loss)}x", loss >= 1.1)


def _paper_quantile_optimal(source: Source) -> tuple[str, bool]:
    ratios, worst = [], (0.0, "")
    for experiment, setting in _clipping_settings(source):
        best = min(source.value(experiment, m, "mean", **setting) for m in FIXED_QUANTILES)
        ratio = source.value(experiment, "CM-exact-optimal", "mean", **setting) / best
        ratios.append(ratio)
        worst = max(worst, (ratio, f"{IOME_FIGURES[experiment]}, {_where(setting)}"))
    return (f"the paper's quantile / the best fixed quantile, mean error: {_range(ratios)} over {len(ratios)} settings "
            f"(largest at {worst[1]})", all(r <= 1.05 for r in ratios))


def _local_ratios(source: Source, numerator: str, denominator: str) -> list[tuple[float, str]]:
    """numerator / denominator, trimmed mean, at every setting of IOME Figures 10-12."""
    return [(source.value(experiment, numerator, "trimmed_mean", **setting)
             / source.value(experiment, denominator, "trimmed_mean", **setting),
             f"{IOME_FIGURES[experiment]} at {_where(setting)}")
            for experiment, parameters in IOME_LOCAL
            for setting in _settings(source, experiment, parameters, numerator)]


def _local_beats_grs(source: Source) -> tuple[str, bool]:
    parts, holds = [], True
    for baseline in ("KnownVar", "UnkVar"):
        ratios = _local_ratios(source, "Shifted-CM-local", baseline)
        worst = max(ratios)
        parts.append(f"Shifted-CM-local / {baseline}: {_range([r for r, _ in ratios])} over {len(ratios)} settings "
                     f"(largest at {worst[1]})")
        holds &= worst[0] < 1
    return "trimmed mean, " + "; ".join(parts), holds


def _local_gap_to_non_private(source: Source) -> tuple[str, bool]:
    ratios = _local_ratios(source, "Shifted-CM-local", "empirical_mean")
    least = min(ratios)
    return (f"Shifted-CM-local / non-private mean, trimmed mean: {_range([r for r, _ in ratios])} over {len(ratios)} "
            f"settings (smallest at {least[1]})", least[0] >= LOCAL_GAP)


IOME_CLAIMS = (
    Claim("IOME Figure 3", "(1) The best choice of t is sensitive to the unknown Sigma (see Fig. 3 and 4), making it "
          "difficult to tune in practice.", "at some d of Figure 3 (MVMRec) or 4 (MVCRec-MVMRec), the t with the "
          "lowest trimmed mean at one kappa is at least 1.1 times the lowest at another kappa",
          ("iome_covariance", "iome_mvcrec"), _best_t_depends_on_sigma, on_files=False),
    Claim("IOME Figure 1", "(2) The error of our method (Shifted-CM) is always at least as good as COINPRESS with the "
          "best t across a variety of settings.", "Shifted-CM's trimmed mean at most 1.05 times the lowest of "
          "CoinPress's t (MVMRec t = 1, 2, 3, 4, 10; in Figure 4 MVCRec-MVMRec t = 1..5) in every setting of "
          "Figures 1-4 and 6", tuple(e for e, _, _ in IOME_STATISTICAL), _shifted_cm_vs_best_coinpress,
          on_files=False),
    Claim("IOME Figure 3", "(3) When Sigma is not identity, our method outperforms MVMRec significantly (Fig. 3) ...",
          "the lowest trimmed mean of MVMRec's t at least 1.25 times Shifted-CM's in every setting of Figure 3",
          ("iome_covariance",), _beats_mvmrec_with_covariance, on_files=False),
    Claim("IOME Figure 3", "(3) ... and yields errors close to the non-private estimator.", "Shifted-CM's trimmed "
          "mean at most 1.5 times the non-private mean's in every setting of Figure 3", ("iome_covariance",),
          _close_to_non_private, on_files=False),
    Claim("IOME Figure 4", "(4) Estimating Sigma first (i.e., MVCRec-MVMRec) reduces the error in low dimensions, but "
          "the gain diminishes as d gets larger (Fig. 4).", "gain = lowest MVMRec trimmed mean (Figure 3) / lowest "
          "MVCRec-MVMRec trimmed mean (Figure 4), same kappa and d: above 1 at the smallest d and smaller at the "
          "largest d than at the smallest, for every kappa", ("iome_covariance", "iome_mvcrec"),
          _covariance_gain_shrinks, on_files=False),
    Claim("IOME Figure 5", "(5) MVCRec-MVMRec does not really do better in terms of the Mahalanobis error (Fig. 5).",
          "the lowest Mahalanobis trimmed mean of MVCRec-MVMRec's t at least 0.9 times Shifted-CM's in every setting "
          "of Figure 5", ("iome_mvcrec",), _no_mahalanobis_gain, on_files=False),
    Claim("IOME Figure 1", "(6) Both our method and COINPRESS are translation-invariant. This can be verified from "
          "Fig. 1, 2, and 6, where the results are not effected by mu.", "Shifted-CM's and every CoinPress t's "
          "trimmed mean at mu = 5 and 10 within [0.9, 1.1] of their value at mu = 0, or |z| < 3, at every other "
          "setting of Figures 1, 2 and 6", ("iome_d", "iome_rho", "iome_R"), _translation_invariant, on_files=False),
    Claim("IOME Figure 1", "In Fig. 1 and 2, we also include CM, our estimator without this shift operation, which is "
          "indeed affected by mu.", "CM's trimmed mean at mu = 10 at least 1.5 times its value at mu = 0 in every "
          "setting of Figures 1 and 2", ("iome_d", "iome_rho"), _cm_not_invariant, on_files=False),
    Claim("IOME Figure 7", "For empirical mean estimation on the MNIST dataset, we see in Fig. 7 and 8 that our method "
          "outperforms COINPRESS for various privacy levels.", "Shifted-CM's trimmed mean below the lowest of "
          "CoinPress's t (Figure 7: MVMRec; Figure 8: MVCRec-MVMRec) at every digit and rho",
          ("iome_mnist", "iome_mnist_mvcrec"), _mnist_beats_coinpress, on_files=False),
    Claim("IOME Figure 9", "The results in Fig. 9 confirm our theoretical analysis: The optimal tau indeed depends on "
          "n and rho ...", "the fixed quantile (50, 75, 85, 95 %) with the lowest mean error at one setting of Figure "
          "9 (a)-(c) at least 1.1 times the lowest at another setting",
          ("iome_clipping", "iome_clipping_rho", "iome_clipping_n"), _optimal_quantile_varies, on_files=False),
    Claim("IOME Figure 9", "... while our choice attains the optimum.", "the paper's quantile's mean error at most "
          "1.05 times the lowest of the fixed quantiles' in every setting of Figure 9 (a)-(c)",
          ("iome_clipping", "iome_clipping_rho", "iome_clipping_n"), _paper_quantile_optimal, on_files=False),
    Claim("IOME Figure 10", "Our method even outperforms KnownVar, which is actually not a fair comparison.",
          "Shifted-CM-local's trimmed mean below KnownVar's and below UnkVar's in every setting of Figures 10-12",
          tuple(e for e, _ in IOME_LOCAL), _local_beats_grs, on_files=False),
    Claim("IOME Figure 10", "However, compared with the central model, there is still a large gap from our LDP "
          "algorithm to the non-private mean, due to the inherent hardness of the local model.",
          f"Shifted-CM-local's trimmed mean at least {LOCAL_GAP:g} times the non-private mean's in every setting of "
          "Figures 10-12", tuple(e for e, _ in IOME_LOCAL), _local_gap_to_non_private, on_files=False),
)


CLAIMS = (
    Claim("PLAN Figure 3", "Figure 3 (a) shows Gaussian A, where plan and iome have comparable accuracy.",
          "PLAN / IOME mean error within [2/3, 3/2] at every plotted setting (d <= 1024, rho 1/8 and 1)",
          ("gaussian_A",), _comparable_everywhere("gaussian_A", "d", xs=D_UP_TO_1024)),
    Claim("PLAN Figure 4", "The same behavior is observed for smaller rho, as shown in Figure 4 (a).",
          "PLAN / IOME mean error within [2/3, 3/2] at every d (rho = 0.01)", ("gaussian_A_low",),
          _comparable_everywhere("gaussian_A_low", "d", rhos=(0.01,))),
    Claim("PLAN Figure 3", "Figure 3 (b) shows Gaussian B, where plan performs better than iome for alpha > 1.",
          "PLAN's mean error below IOME's at alpha > 1 for rho 1/8 and 1", ("gaussian_B",),
          _plan_better_where("gaussian_B", "alpha", lambda a: a > 1, PAPER_RHOS)),
    Claim("PLAN Figure 3", "For alpha <= 1 the error between plan and iome is similar.",
          "PLAN / IOME mean error within [2/3, 3/2] at alpha <= 1 for rho 1/8 and 1", ("gaussian_B",),
          _comparable_everywhere("gaussian_B", "alpha", xs=(0.0, 0.5, 1.0))),
    Claim("PLAN Figure 3", "Notice how plan approaches the empirical mean as alpha grows for both rho = 0.5 and "
          "rho = 1.", "PLAN / empirical mean error does not grow with alpha (2 % slack) and ends below where it "
          "starts, at rho 1/2 and 1", ("gaussian_B",), _approaches_empirical),
    Claim("PLAN Figure 4", "For smaller values of rho, iome is less robust, as can be seen by the error bars in "
          "Figure 4 (b), whereas plan retains robust error for all values of alpha.",
          "IOME's sd / mean above PLAN's at every alpha (rho = 0.01)", ("gaussian_B_low",), _iome_less_robust),
    Claim("PLAN Figure 3", "As expected, plan increases its advantage over iome as d grows.",
          "IOME / PLAN mean error relative to the empirical mean larger at d = 1024 than at d = 16, for rho 1/8 and "
          "1", ("gaussian_C",), _advantage_grows("gaussian_C", "mean_relative_to_empirical"), on_files=False),
    Claim("PLAN Figure 4", "Figure 4 (c), where plan has a lower error, but the variance increases with d.",
          "PLAN's mean error relative to the empirical mean below IOME's at every d, and its sd larger at the "
          "largest d than at the smallest", ("gaussian_C_low",), _lower_and_growing_variance, on_files=False),
    Claim("PLAN Figure 5 (a)", "Figure 5 (a) shows Binary, where plan has an advantage over iome for [a share of "
          "p = 1/2 items] < 1 which increases as [it] decreases.",
          "IOME / PLAN mean error above 1 at the plotted shares 1/4 and 1/2, and larger at 1/4, at every D (rho "
          "= 1/2)", ("binary_synthetic",), _binary_advantage),
    Claim("PLAN Figure 5 (b), (c)", "Figure 5 (b) shows Kosarak. As we can see, plan outperforms iome for "
          "sufficiently large values of rho.", "PLAN's mean error (against the empirical frequencies) below "
          "IOME's at every rho >= 1/4", ("kosarak",), _real_data_large_rho),
    Claim("PLAN Figure 5 (b), (c)", "Figure 5 (c) shows POS. plan has a slight advantage compared to "
          "Instance-optimal mean estimation in this case, which decreases as rho grows.",
          "PLAN's mean error below IOME's at every rho, and IOME / PLAN not larger at a larger rho", ("pos",),
          _real_data_advantage_shrinks),
    Claim("PLAN Figure 7", "For non-skewed data with random correlations (Gaussian A'), plan and iome provide "
          "similar average l2 error for a given d.", "PLAN / IOME mean error within [2/3, 3/2] at every d <= 1024 "
          "(rho 1/8 and 1)", ("gaussian_A_corr",), _comparable_everywhere("gaussian_A_corr", "d", xs=D_UP_TO_1024),
          on_files=False),
    Claim("PLAN Figure 7", "... with Instance-optimal mean estimation having a slightly larger error than in the "
          "uncorrelated setting.", "IOME's mean error on A' above its error on A at every d <= 1024 (rho 1/8 and 1)",
          ("gaussian_A_corr", "gaussian_A"), _across_experiments("gaussian_A_corr", "gaussian_A", "IOME"),
          on_files=False),
    Claim("PLAN Figure 7", "In the setting of skewed data with a constant correlation coefficient (Figure 7(b)), "
          "plan behaves very similarly to the uncorrelated case.", "PLAN's mean error on C' within [2/3, 3/2] "
          "of its error on C at every d <= 1024 (rho 1/8 and 1)", ("gaussian_C_corr", "gaussian_C"),
          _across_experiments("gaussian_C_corr", "gaussian_C", "PLAN", low=2 / 3, high=1.5), on_files=False),
    Claim("PLAN Figure 7", "In contrast, iome has a much larger average l2 error compared to its results on "
          "uncorrelated data.", "IOME's mean error on C' at least 1.5 times its error on C at every d <= 1024 "
          "(rho 1/8 and 1)", ("gaussian_C_corr", "gaussian_C"),
          _across_experiments("gaussian_C_corr", "gaussian_C", "IOME", low=1.5), on_files=False),
    Claim("PLAN Figure 8", "plan without scaling recovers the behavior from iome, presenting a slight improvement "
          "over iome's error.", "the published no-scaling curve's mean error below IOME's in at least 90 % of the "
          "plotted settings (A, d <= 1024)", ("gaussian_A",),
          _noscale_vs("gaussian_A", "d", "IOME", "coordinate_median", True, lambda d: d <= 1024, share=0.9)),
    Claim("PLAN Figure 8", "Unsurprisingly, it improves over plan in the non-skewed case.",
          "the published no-scaling curve's mean error below PLAN's at every plotted setting of Gaussian A",
          ("gaussian_A",), _noscale_vs("gaussian_A", "d", "PLAN", "coordinate_median", True, lambda d: d <= 1024)),
    Claim("PLAN Figure 8", "However, as soon as data has skew, the coordinate-wise scaling of plan improves the "
          "error.", "PLAN's mean error below the published no-scaling curve's at every alpha > 0 of Gaussian B "
          "(rho 1/8 and 1)", ("gaussian_B",),
          _noscale_vs("gaussian_B", "alpha", "PLAN", "coordinate_median", False, lambda a: a > 0)),
    Claim("PLAN Figure 9 (a)", "As in the Gaussian case, plan without scaling recovers the behavior from iome. It "
          "again improves the average error slightly.", "PLAN without scaling's mean error below IOME's in at least "
          "90 % of the plotted settings (rho = 1/2, shares 1/4, 1/2, 1)", ("binary_synthetic",),
          _binary_noscale_vs_iome),
    Claim("PLAN Figure 9 (a)", "For binary data, there is only a slight gap to the proposed variance-aware scaling.",
          "PLAN without scaling / PLAN mean error at most 1.25 at every plotted setting", ("binary_synthetic",),
          _binary_slight_gap),
    Claim("PLAN Figure 10", "In Figure 10 (a) we see plan and iome have comparable accuracy until d = 2048, when "
          "plan performs worse (for rho = 0.125).", "PLAN's mean error above IOME's at d = 2048, rho = 1/8 (the "
          "figure plots means)", ("gaussian_A",), _worse_at_2048),
    Claim("PLAN Figure 10", "Similarly in Figure 10 (c) we observe that the error reported by plan has a high "
          "variance due to the rank error increasing. Again, this only happens for the smallest rho value.",
          "PLAN's sd (relative to the empirical mean) at d = 2048 and rho = 1/8 more than twice its sd at rho = 1",
          ("gaussian_C",), _high_variance_at_2048, on_files=False),
    Claim("PLAN Table 2", "We summarize that Algorithm 2 is more accurate than direct estimation for both values "
          "of k.", "under the authors' protocol, general k = 1 and k = 4 both below the best direct estimator in "
          "every setting (on the authors' files: the paper's own Table 2)", ("variance_study_published",),
          _general_beats_direct),
    Claim("User-level Figure 2", "the average-case performance of the AKMV mechanism is quite similar to, and a "
          "little worse than, the average-case performance of the vanilla Laplace mechanism",
          "AKMV / Laplace mean error within [0.95, 1.5] at every eps and at least 1 on average",
          ("userlevel_geometric",), _akmv_near_laplace("userlevel_geometric"), on_files=False),
    Claim("User-level Figure 3", "the AKMV mechanism is quite similar to, and a little worse than, the vanilla "
          "Laplace mechanism (extreme collection)", "AKMV / Laplace mean error within [0.95, 1.5] at every eps and "
          "at least 1 on average", ("userlevel_extreme",), _akmv_near_laplace("userlevel_extreme"), on_files=False),
    Claim("User-level Figure 2", "[vanilla Laplace] in turn is significantly worse than the average-case error "
          "incurred by the OPT-worst-case mechanism.", "Laplace / OPT-wc mean error at least 1.5 for every eps < 1",
          ("userlevel_geometric",), _opt_beats_laplace("userlevel_geometric"), on_files=False),
    Claim("User-level Figure 3", "[vanilla Laplace] is significantly worse than OPT-worst-case (extreme "
          "collection).", "Laplace / OPT-wc mean error at least 1.5 for every eps < 1", ("userlevel_extreme",),
          _opt_beats_laplace("userlevel_extreme"), on_files=False),
    Claim("User-level Figure 2", "such behaviour hence results in the (estimates of the) average-case errors not "
          "being monotonic in eps, in Figure 2.", "OPT-wc's mean error rises between some consecutive eps values",
          ("userlevel_geometric",), _not_monotone, on_files=False),
    *IOME_CLAIMS,
)

CLAIM_COLUMNS = ["item", "claim", "criterion", "measured", "verdict", "authors_files", "verdict_on_files"]


def check_claims(*, config: Mapping, ours: Source, files: Source, missing: Mapping[str, str],
                 extra: Sequence[dict] = ()) -> pd.DataFrame:
    """One row per claim: what this run measures and whether it holds, and the same on the
    authors' files where they cover it. ``extra``: claims checked elsewhere (the illustrations),
    as rows of the same columns."""
    experiments = config.get("experiments") or {}
    rows = []
    for claim in CLAIMS:
        row = {"item": claim.item, "claim": claim.quote, "criterion": claim.criterion}
        datasets = {experiments.get(e, {}).get("data", {}).get("dataset") for e in claim.experiments} - {None}
        absent = [d for d in sorted(datasets) if d in missing]
        reasons = [reason for e in claim.experiments if e in experiments and (reason := comparable(config, e))]
        if absent or any(e not in experiments for e in claim.experiments):
            row.update(measured="; ".join(f"the real dataset {d} could not be obtained: {missing[d]}" for d in absent)
                       or "not in this run's config", verdict="not run here")
        elif reasons:
            row.update(measured="this run's settings differ from the paper's: " + "; ".join(reasons),
                       verdict="not comparable here")
        else:
            try:
                measured, holds = claim.check(ours)
                row.update(measured=measured, verdict="holds" if holds else "does not hold")
            except MissingData as error:
                row.update(measured=str(error), verdict="not run here")
        row["authors_files"], row["verdict_on_files"] = "not checked: the authors' files do not have it", ""
        if claim.on_files:
            try:
                measured, holds = claim.check(files)
                row["authors_files"], row["verdict_on_files"] = measured, "holds" if holds else "does not hold"
            except MissingData:
                row["authors_files"] = "not in the authors' files"
        rows.append(row)
    rows += [dict(zip(CLAIM_COLUMNS, (r.get(c, "") for c in CLAIM_COLUMNS))) for r in extra]
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


# ----------------------------------------------------------------------------- counts and job


def counts(scorecard: pd.DataFrame, claims: pd.DataFrame) -> dict:
    """What the report's first lines state: items per status (the papers' rows only), the papers
    they come from and claims per verdict."""
    papers = scorecard[scorecard["status"] != "ours"]
    return {
        "items": len(papers),
        "papers": papers["paper"].nunique(),
        "statuses": {status: int((papers["status"] == status).sum()) for status in PAPER_STATUSES},
        "ours": int((scorecard["status"] == "ours").sum()),
        "claims": len(claims),
        "verdicts": {verdict: int((claims["verdict"] == verdict).sum()) for verdict in VERDICTS},
    }


def coverage(scorecard: pd.DataFrame) -> str:
    """What the scorecard covers, per paper in its order, e.g. "31 items: PLAN 13, IOME 12": the
    README and docs/design.md quote it, so that no sentence says it covers more."""
    papers = scorecard[scorecard["status"] != "ours"]
    per_paper = papers.groupby("paper", sort=False).size()
    return f"{len(papers)} items: " + ", ".join(f"{paper} {count}" for paper, count in per_paper.items())


NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def headline(numbers: Mapping) -> str:
    """One sentence with the counts, e.g. "Of the 28 figures and tables of the four papers, 5 are
    reproduced, ..."; states nothing the scorecard does not show."""
    parts = [f"{count} {status}" for status, count in numbers["statuses"].items() if count]
    verdicts = [f"{count} {VERDICT_PHRASES[verdict]}" for verdict, count in numbers["verdicts"].items() if count]
    papers = numbers["papers"]
    papers = NUMBER_WORDS[papers] if papers < len(NUMBER_WORDS) else str(papers)
    return (f"Of the {numbers['items']} figures and tables of the {papers} papers: {', '.join(parts)}. "
            f"Of the {numbers['claims']} claims their texts make about them: {', '.join(verdicts)}.")


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


def read_statuses(paths: Sequence[str | Path]) -> dict[str, str]:
    """dataset -> why it could not be obtained, from the fetch statuses (experiments.availability)."""
    from .availability import read_status

    missing = {}
    for path in paths:
        status = read_status(path)
        if not status["available"]:
            missing[status["dataset"]] = status.get("reason") or status.get("message", "")
    return missing


def scorecard_tables(*, config: Mapping, summary: pd.DataFrame, published: pd.DataFrame, quoted: pd.DataFrame,
                     missing: Mapping[str, str], published_values: Sequence[pd.DataFrame] = (),
                     table2: pd.DataFrame | None = None,
                     illustrations: Mapping[str, pd.DataFrame] | None = None, produced: Sequence[str] = (),
                     metrics: Mapping | None = None, notes: Mapping[str, str] | None = None,
                     extra_figures: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(scorecard, compared values, claims) of this run: ``missing`` the datasets it could not
    obtain (:func:`read_statuses`), ``illustrations`` the illustrations' tables by name."""
    illustrations = dict(illustrations or {})
    scorecard, values = build_scorecard(
        config=config, summary=summary, published=published, quoted=quoted, published_values=published_values,
        table2=table2,
        illustrations=illustrations, missing=missing, produced=produced, metrics=metrics, notes=notes,
        extra_figures=extra_figures)
    experiment_map = (config.get("scorecard") or {}).get("experiments") or {}
    suffixes = {experiment: "_vs_empirical" for experiment, entry in experiment_map.items()
                if (entry or {}).get("measure") == "error_vs_empirical"}
    files = published_source(published, experiment_map, table2=table2, table2_setup=config.get("table2") or {})
    claims = check_claims(config=config, ours=Source(summary, "this run", suffixes), files=files, missing=missing,
                          extra=illustration_claims(illustrations))
    return scorecard, values, claims
