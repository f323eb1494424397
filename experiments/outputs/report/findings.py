"""What the run found, in numbers and words: the fidelity verdicts, the errata of the published
code (accounting, PLAN-noscale, Figure 7(b)), the scorecard, the user-level findings, the
privacy audit and its power curves, and PLAN beside the DP libraries."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from datasets.userlevel import collection_counts

from ...audit.power import FALSE_ALARM_LIMIT, false_alarms
from ...engine.config import format_value
from ..claims import counts, headline
from ..errata import FAIL_FACTOR, figure7_finding, figure7_table, read_authors_code, readable_number
from ..fidelity import target_met, verdict
from ..libraries import experiment_findings, overall_finding, seconds_table
from ..scorecard import coverage, split_not_obtained
from ..styles import mechanism_style
from .html import card_table, figure_entry, folded_table, plural, table_html

# The settings the design's prototype reported for the accounting finding (docs/design.md §5.0).
ACCOUNTING_EXAMPLES = (("gaussian_A", "d=1024_rho=0.125", "1.5", "more than 100"),
                   ("gaussian_C", "d=512_rho=0.125", "6.7", "about 24"))


def fidelity_entries(config: dict, fidelity: list) -> list[dict]:
    """Per fidelity table: its verdict, whether the target is met, a comparability note and the
    table with the targeted rows outside the target marked ``outside``."""
    entries = []
    for path in fidelity:
        experiment = Path(path).stem
        entry = (config.get("fidelity") or {}).get(experiment, {})
        agreement, required_share = entry.get("agreement", "band"), float(entry.get("required_share", 1.0))
        table = pd.read_csv(path)
        targeted = table["target_applies"].astype(bool) if len(table) else pd.Series(dtype=bool)
        inside = table["within_target"].astype(bool) if len(table) else pd.Series(dtype=bool)
        classes = ["outside" if t and not i else "" for t, i in zip(targeted, inside)]
        entries.append({
            "experiment": experiment,
            "met": bool(len(table)) and target_met(table, required_share),
            "verdict": verdict(table, experiment, agreement=agreement, required_share=required_share),
            "note": _comparability_note(config, experiment, table),
            "table": folded_table(table, name=f"fidelity_{experiment}", caption=f"{experiment}: ours vs published",
                                  summary=_fidelity_counts(targeted, inside), row_classes=classes),
        })
    return entries


def _fidelity_counts(targeted: pd.Series, inside: pd.Series) -> str:
    """The folded fidelity table's summary line: settings, targeted ones within the target, outside."""
    within = int((targeted & inside).sum())
    outside = int(targeted.sum()) - within
    return (f"{plural(len(targeted), 'setting')}; {within} of {int(targeted.sum())} targeted within the target"
            + (f", {outside} outside (highlighted)" if outside else ""))


def _comparability_note(config, experiment, table) -> str:
    """Why a run's ratios may be off by design: fewer trials or another n than the published run."""
    notes = []
    if len(table) and (table["ours_trials"] < table["published_trials"]).any():
        notes.append(f"this run has {'/'.join(map(str, sorted(set(table['ours_trials']))))} trials per setting "
                     f"against {'/'.join(map(str, sorted(set(table['published_trials']))))} published, so its medians "
                     "carry more Monte-Carlo spread")
    n, published = _our_n(config, experiment), _published_n(config, experiment)
    if n is not None and published is not None and format_value(n) != published:
        notes.append(f"our n = {n}, the published runs' n = {published}: the errors scale roughly like "
                     "1/sqrt(n), so these ratios are not a fidelity check (run the full config for that)")
    return ("Note: " + "; ".join(notes) + ".") if notes else ""


def _our_n(config, experiment):
    return config.get("experiments", {}).get(experiment, {}).get("data", {}).get("n")


def _published_n(config, experiment):
    """The n of the published runs, from the experiment's fidelity reference (None if unknown)."""
    path = (config.get("fidelity") or {}).get(experiment, {}).get("reference")
    if not path or not Path(path).is_file():
        return None
    values = pd.read_csv(path).get("n")
    return None if values is None or values.nunique() != 1 else format_value(values.iloc[0])


def accounting_erratum(errata_table) -> dict | None:
    """The published-accounting finding (docs/design.md §5.0) measured in this run; None without pairs."""
    table = pd.read_csv(errata_table) if errata_table else pd.DataFrame()
    if table.empty:
        return None
    fails = table["exact_fails"].astype(bool)
    factor = table["published_true_rho_over_rho"].dropna()
    worst = table[fails].sort_values("ratio", ascending=False)
    listed = "; ".join(f"{r.experiment} {r.setting} {readable_number(r.published_median)} \u2192 "
                       f"{readable_number(r.exact_median)} ({readable_number(r.ratio)}\u00d7)"
                       for r in worst.head(10).itertuples())
    verdict_text = f"{int(fails.sum())} of {len(table)} settings fail under exact accounting"
    if fails.any():
        verdict_text += ": " + listed + (" \u2026" if fails.sum() > 10 else "")
    examples = []
    for experiment, setting, before, after in ACCOUNTING_EXAMPLES:
        row = table[(table["experiment"] == experiment) & (table["setting"] == setting)]
        here = (f"this run: {readable_number(row['published_median'].iloc[0])} \u2192 "
                f"{readable_number(row['exact_median'].iloc[0])}"
                if len(row) else "not in this run's grid")
        examples.append(f"{experiment} {setting}: {before} \u2192 {after} ({here})")
    return {
        "true_rho": ({"median": f"{factor.median():.3g}", "min": f"{factor.min():.4g}", "max": f"{factor.max():.4g}",
                      "count": len(factor)} if len(factor) else None),
        "settings": len(table),
        "experiments": table["experiment"].nunique(),
        "fail_factor": f"{FAIL_FACTOR:g}",
        "fails": bool(fails.any()),
        "verdict": verdict_text,
        "design_examples": examples,
        "fails_table": (folded_table(table[fails].drop(columns=["measure"]), name="errata_fails",
                                     summary=f"The {plural(int(fails.sum()), 'setting')} where exact accounting "
                                             "fails")
                        if fails.any() else None),
        "table": folded_table(table, name="errata_accounting", row_classes=["fails" if f else "" for f in fails],
                              summary=f"Every setting: {plural(len(table), 'setting')}, {int(fails.sum())} failing "
                                      "under exact accounting" + (" (highlighted)" if fails.any() else "")),
    }


def noscale_erratum(config: dict, errata_noscale) -> dict | None:
    """The PLAN-noscale finding (docs/design.md §5.3) measured in this run; None without its table."""
    noscale = pd.read_csv(errata_noscale) if errata_noscale else pd.DataFrame()
    if noscale.empty:
        return None
    cm = noscale["coordinate_median_over_published"].dropna()
    ns = noscale["noscale_over_published"].dropna()
    summary = []
    if len(cm):
        summary.append(f"coordinate_median / published curve: median {cm.median():.3g} "
                       f"(range {cm.min():.3g}\u2013{cm.max():.3g}, {len(cm)} settings)")
    if len(ns):
        summary.append(f"PLAN-noscale as specified / published curve: median {ns.median():.3g} "
                       f"(range {ns.min():.3g}\u2013{ns.max():.3g})")
    experiment = str(noscale["experiment"].iloc[0]) if "experiment" in noscale.columns else ""
    n, published = _our_n(config, experiment), _published_n(config, experiment)
    note = ""
    if n is not None and published is not None and format_value(n) != published:
        note = (f"Note: {experiment} has n = {n} in this config, the published curve n = {published}: the ratios "
                "compare different sample sizes; only the full config checks the finding.")
    return {"summary": summary, "note": note,
            "table": folded_table(noscale, name="errata_noscale",
                                  summary=f"Every setting: {plural(len(noscale), 'setting')}")}


def errata(config: dict, errata_table, errata_figures: list, errata_noscale=None, *, page_dir) -> dict:
    figures = {Path(path).stem: path for path in errata_figures}
    return {
        "accounting": accounting_erratum(errata_table),
        "accounting_figure": (figure_entry(figures["errata_accounting"], "PLAN median l2 error: exact (y) vs "
                                           "published (x) accounting, every Gaussian setting", page_dir=page_dir)
                              if "errata_accounting" in figures else None),
        "noscale": noscale_erratum(config, errata_noscale),
        "noscale_figure": (figure_entry(figures["errata_noscale"], "Published PLAN-noscale curve vs our "
                                        "coordinate_median and PLAN-noscale as specified", page_dir=page_dir)
                           if "errata_noscale" in figures else None),
    }


STATUS_CLASSES = {"reproduced": "st-good", "partly reproduced": "st-partly", "not reproduced": "st-bad",
                  "not run here": "st-absent", "not comparable here": "st-absent", "no published numbers": "st-plain",
                  "not produced": "st-absent", "ours": "st-plain", "holds": "st-good", "does not hold": "st-bad"}


def _format_number(value) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{float(value):.3g}"


def dataset_anchor(dataset: str) -> str:
    """The id of a data set's entry in the page's "Not reproduced" section."""
    return "not-reproduced-" + re.sub(r"[^a-z0-9]+", "-", dataset.lower()).strip("-")


def _not_obtained(text: str, dataset_anchors: dict[str, str]) -> tuple[list[dict], str]:
    """A row's text that starts with the scorecard's not-obtained note, as (the data sets, each with
    the anchor of its entry in "Not reproduced", the rest of the text); ([], text) when the text
    names none or one of them has no entry on this page (the note is then shown as written)."""
    datasets, rest = split_not_obtained(text)
    if not datasets or any(dataset not in dataset_anchors for dataset in datasets):
        return [], text
    return [{"dataset": dataset, "href": "#" + dataset_anchors[dataset]} for dataset in datasets], rest


def scorecard_entries(config: dict, scorecard, *, figure_anchors: set[str], has_tables: bool,
                      dataset_anchors: dict[str, str]) -> dict | None:
    """The scorecard section from (results/scorecard.csv, scorecard_values.csv, claims.csv): the
    headline with the counts, one row per item with links to its figures on this page, every
    compared value (folded) and the claims of the text. A row on a data set this run could not
    obtain names it with a link to its entry in "Not reproduced" (``dataset_anchors``: data set ->
    id), where the sources tried are listed once for all rows."""
    if not scorecard:
        return None
    table_path, values_path, claims_path = scorecard
    table, claims = pd.read_csv(table_path, keep_default_na=False), pd.read_csv(claims_path, keep_default_na=False)
    values = pd.read_csv(values_path) if Path(values_path).stat().st_size > 1 else pd.DataFrame()
    rows = []
    for row in table.to_dict("records"):
        links = []
        for output in str(row["outputs"]).split():
            stem, suffix = Path(output).stem, Path(output).suffix
            if suffix == ".png" and f"figure-{stem}" in figure_anchors:
                links.append({"label": stem, "href": f"#figure-{stem}"})
            elif suffix == ".csv" and has_tables and "table2" in stem:
                links.append({"label": Path(output).name, "href": "#tables"})
        compared = int(row["compared"] or 0)
        rows.append({
            "item": row["item"], "description": row["description"], "status": row["status"],
            "status_class": STATUS_CLASSES.get(row["status"], "st-plain"), "links": links,
            "agreement": f"{int(row['agree'])} of {compared} ({100 * float(row['agree_share']):.0f} %)" if compared
            else "",
            "ratios": (f"{_format_number(row['ratio_median'])} ({_format_number(row['ratio_min'])}\u2013"
                       f"{_format_number(row['ratio_max'])})" if compared else ""),
            "worst": (f"{row['worst']}: ours {_format_number(row['worst_ours'])}, paper "
                      f"{_format_number(row['worst_paper'])} (ratio {_format_number(row['worst_ratio'])}, "
                      f"z {_format_number(row['worst_z'])})" if compared else ""),
        })
        rows[-1]["not_obtained"], rows[-1]["note"] = _not_obtained(row["note"], dataset_anchors)
    numbers = counts(table, claims)
    claim_rows = [{**claim, "verdict_class": STATUS_CLASSES.get(claim["verdict"], "st-plain"),
                   "files_class": STATUS_CLASSES.get(claim["verdict_on_files"], "st-plain")}
                  for claim in claims.to_dict("records")]
    for claim in claim_rows:
        claim["not_obtained"], claim["measured"] = _not_obtained(claim["measured"], dataset_anchors)
    folded = None
    if not values.empty:
        agree = int(values["agrees"].astype(bool).sum())
        shown = values[["item", "panel", "experiment", "mechanism", "setting", "statistic", "measure", "ours",
                        "ours_se", "paper", "paper_se", "ratio", "z", "agrees", "paper_source"]]
        folded = folded_table(shown, name="scorecard_values",
                              summary=f"Every compared value: {plural(len(values), 'value')}; {agree} agree",
                              row_classes=["" if a else "outside" for a in values["agrees"]])
    return {"headline": headline(numbers), "coverage": coverage(table), "rows": rows, "claims": claim_rows,
            "compared_values": folded}


def figure7_erratum(summaries: list, authors_code: str | None = None) -> dict:
    """The Figure 7(b) finding (experiments.outputs.errata): its text and the table of quoted, authors'
    code (``authors_code``: the table scripts/authors_figure7.py writes) and this run's IOME medians."""
    frames = [pd.read_csv(path) for path in summaries]
    corr = next((frame for frame in frames if (frame["experiment"] == "gaussian_C_corr").any()), None)
    authors = read_authors_code(authors_code) if authors_code else None
    table = figure7_table(corr, authors)
    table = table.rename(columns={"quoted": "quoted by the paper", "authors_code_T20": "authors' code (T = 20)",
                                  "authors_code_T10": "authors' code (T = 10)",
                                  "ours_same_data": "our IOME on the same data",
                                  "this_run": "this run", "this_run_trials": "this run's trials"})
    return {"text": figure7_finding(authors), "table": table_html(table, name="errata_figure7"),
            "has_run": corr is not None}


# The user-level mechanisms (docs/design.md §5.7) in a sentence each, by algorithm.
USERLEVEL_MECHANISMS = {
    "laplace": "the mean of all samples plus Laplace noise scaled to the largest user's contribution "
               "U max m_l / sum m; no clipping, no bias.",
    "opt_worst_case": "worst-case optimal clipping (Rameshwar and Tandon, Theorem III.1): clips each user's samples "
                      "(here the user's average) to an interval chosen from the public counts alone, "
                      "so that about 2d/eps users are clipped; minimises the worst-case error.",
    "akmv": "Amin et al. 2019, for users: spends eps/2 on a private quantile of the user sums "
            "(exponential mechanism) as the clipping threshold, then releases the clipped mean with eps/2.",
}


def userlevel_entries(config: dict, summaries: list) -> dict | None:
    """The user-level section: what each mechanism is, and per experiment one paragraph of what
    the run found, computed from its summary (mean errors over the Monte-Carlo runs)."""
    experiments = {name: entry for name, entry in (config.get("experiments") or {}).items()
                   if entry.get("data", {}).get("source") == "userlevel"}
    frames = [frame for path in summaries for frame in [pd.read_csv(path)]
              if frame["experiment"].iloc[0] in experiments]
    if not frames:
        return None
    variants = config.get("variants") or {}
    algorithms = {}
    findings = []
    for frame in frames:
        name = frame["experiment"].iloc[0]
        entry = experiments[name]
        for mechanism in dict.fromkeys(frame["mechanism"]):
            algorithms[mechanism] = variants.get(mechanism, {}).get("algorithm", mechanism)
        findings.append({"experiment": name, "beyond_paper": _beyond_paper(entry["data"]),
                         "text": _userlevel_finding(frame, algorithms, _unclipped_from(entry["data"]))})
    mechanisms_text = [{"name": mechanism, "text": USERLEVEL_MECHANISMS.get(algorithm, algorithm)}
                       for mechanism, algorithm in algorithms.items()]
    return {"mechanisms": mechanisms_text, "findings": findings}


def _beyond_paper(data: dict) -> bool:
    """The paper's experiments are the geometric and extreme collections at d = 1."""
    return not (data.get("collection") in ("geometric", "extreme") and int(data.get("d", 1)) == 1)


def _unclipped_from(data: dict) -> float:
    """The eps from which OPT-wc clips nothing: 2d / (number of users with the largest count)."""
    parameters = {key: data[key] for key in ("M", "L", "m_star", "exponent", "max_count") if key in data}
    counts = collection_counts(data["collection"], **parameters)
    return 2.0 * int(data.get("d", 1)) / int((counts == counts.max()).sum())


def _userlevel_finding(frame: pd.DataFrame, algorithms: dict, unclipped_from: float) -> str:
    by_algorithm = {algorithms[m]: group.set_index("eps")["mean"] for m, group in frame.groupby("mechanism")}
    runs = int(frame["trials"].max())
    parts = [f"{runs:,} runs per eps, {frame['eps'].nunique()} values of eps from "
             f"{format_value(frame['eps'].min())} to {format_value(frame['eps'].max())}."]
    laplace, opt, akmv = (by_algorithm.get(a) for a in ("laplace", "opt_worst_case", "akmv"))
    if laplace is not None and opt is not None:
        gain = (laplace / opt).dropna()
        small = gain[gain.index < unclipped_from]
        if len(small):
            parts.append(f"For eps < {format_value(round(unclipped_from, 4))} OPT-wc's mean error is {small.min():.3g} "
                         f"to {small.max():.3g} times smaller than vanilla Laplace's;")
        large = gain[gain.index >= unclipped_from]
        if len(large):
            parts.append(f"from there, where OPT-wc clips nothing (eps >= 2d / the number of users with the largest "
                         f"count), the ratio is {large.min():.3g} to {large.max():.3g}.")
    if laplace is not None and akmv is not None:
        ratio = (akmv / laplace).dropna()
        low, high = ratio[ratio.index < 0.5], ratio[ratio.index >= 0.5]
        if len(low) and len(high):
            parts.append(f"AKMV / Laplace is {low.min():.3g} to {low.max():.3g} for eps < 0.5 and "
                         f"{high.min():.3g} to {high.max():.3g} from eps = 0.5.")
    return " ".join(parts)


AUDIT_COLUMNS = ["name", "mechanism", "pair", "neighbours", "accounting", "measure", "claimed", "lower_bound",
                 "violation", "expected_violation", "control", "control_lower_bound", "control_violation",
                 "control_runs_needed", "runs", "control_runs", "seconds"]
MEASURE_SYMBOLS = {"rho-zCDP": "rho", "eps-DP": "eps"}


def audit_entries(audit, *, page_dir) -> dict | None:
    """The audit section (docs/design.md §5.8) from (results/audit/audit.csv, figures/audit.png): the
    table, the figure and the outcome in plain words."""
    if not audit:
        return None
    table_path, figure_path = audit
    frame = pd.read_csv(table_path)
    violations = frame[frame["violation"].astype(bool)]
    unexpected = frame[frame["violation"].astype(bool) != frame["expected_violation"].astype(bool)]
    powerless = frame[~frame["control_violation"].astype(bool)]
    exact = frame[frame["accounting"] == "exact"]
    outcome = [f"{len(frame)} audits, each with its positive control."]
    outcome.append("Every positive control was flagged, so every audit had the power to find a broken copy."
                   if powerless.empty else
                   f"NOT every control was flagged (no power, so these audits count as failed): "
                   f"{', '.join(powerless['name'])}.")
    exact_flagged = exact[exact["violation"].astype(bool)]
    outcome.append(f"No mechanism under exact accounting was flagged ({len(exact)} audits)." if exact_flagged.empty else
                   f"Flagged under exact accounting: {', '.join(exact_flagged['name'])}.")
    if not violations.empty:
        outcome.append("Violations found: " + "; ".join(
            f"{row['name']} (claims {MEASURE_SYMBOLS[row['measure']]} {row['claimed']:.3g}, "
            f"at least {row['lower_bound']:.3g})"
            for _, row in violations.iterrows()) + ".")
    outcome.append("Every outcome is the one stated before running." if unexpected.empty else
                   f"Outcomes other than expected: {', '.join(unexpected['name'])}.")
    classes = ["fails" if bool(v) else "" for v in frame["violation"]]
    shown = frame[[column for column in AUDIT_COLUMNS if column in frame.columns]]
    passed = powerless.empty and exact_flagged.empty and unexpected.empty
    return {"outcome": " ".join(outcome), "passed": passed,
            "table": card_table(shown, name="audit", row_classes=classes),
            "figure": figure_entry(figure_path, "Privacy audit: the lower bounds found, as multiples of the claims",
                                   page_dir=page_dir)}


POWER_DETECTED = 0.9  # the share of audits at which the report calls a break "caught"


def _runs_text(runs: int) -> str:
    exponent = math.log10(runs)
    return f"10^{round(exponent)}" if math.isclose(exponent, round(exponent)) else f"{runs:g}"


def _claim_text(measure: str, claim: float) -> str:
    return f"{measure} {claim:.4g}"


def power_pivot(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per mechanism and break, one column per number of runs: the share of audits that
    flagged a violation and its 95 % Clopper-Pearson interval."""
    runs = sorted(set(frame["runs"].astype(int)))
    rows = []
    for (mechanism, value), group in frame.groupby(["mechanism", "break"], sort=False):
        row = {"mechanism": mechanism, "claim": _claim_text(group["measure"].iloc[0], float(group["claim"].iloc[0])),
               "break": float(value), "audits": int(group["repetitions"].max())}
        for count in runs:
            cell = group[group["runs"].astype(int) == count]
            row[f"{_runs_text(count)} runs"] = ("" if cell.empty else
                                                "{:.2f} ({:.2f}\u2013{:.2f})".format(*cell[["power", "power_low",
                                                                                             "power_high"]].iloc[0]))
        rows.append(row)
    return pd.DataFrame(rows)


def _caught_text(mechanism: str, group: pd.DataFrame) -> str:
    """Per break above 1: the fewest runs at which at least POWER_DETECTED of the audits flagged it."""
    parts = []
    for value, curve in group[~np.isclose(group["break"].astype(float), 1.0)].groupby("break", sort=False):
        caught = curve[curve["power"] >= POWER_DETECTED].sort_values("runs")
        if caught.empty:
            most = curve.sort_values("runs").iloc[-1]
            parts.append(f"x{value:g} not by {_runs_text(int(most['runs']))} runs (power {most['power']:.2f})")
        else:
            parts.append(f"x{value:g} from {_runs_text(int(caught['runs'].iloc[0]))} runs")
    claim = _claim_text(group["measure"].iloc[0], float(group["claim"].iloc[0]))
    found = ", ".join(parts) if parts else "no break above 1"
    return f"{mechanism} (claim {claim}): {found}"


def audit_power_entries(power, *, page_dir) -> dict | None:
    """The audit's power curves (experiments/audit/power.py) from (results/audit/power_curves.csv,
    figures/audit_power.png): the outcome in plain words (the false-alarm rate against its limit,
    and for each mechanism the runs from which each break is caught), the power per break and
    runs, the whole table folded, and the figure."""
    if not power:
        return None
    table_path, figure_path = power
    frame = pd.read_csv(table_path)
    alarms = false_alarms(frame)
    worst = alarms.loc[alarms["power"].idxmax()] if not alarms.empty else None
    passed = alarms.empty or bool((alarms["power"] <= FALSE_ALARM_LIMIT).all())
    outcome = []
    if worst is None:
        outcome.append("No curve has break 1, so the false-alarm rate was not measured.")
    elif int(alarms["flagged"].sum()) == 0:
        outcome.append(f"False alarms (break 1, the correct mechanism): none of {int(alarms['repetitions'].sum())} "
                       f"audits flagged, within the limit {FALSE_ALARM_LIMIT:.2g} = 1 - confidence (95 % upper "
                       f"bound of each share {alarms['power_high'].max():.2g} or less).")
    else:
        outcome.append(f"False alarms (break 1, the correct mechanism): {int(alarms['flagged'].sum())} of "
                       f"{int(alarms['repetitions'].sum())} audits flagged; the largest share, "
                       f"{worst['power']:.2f} ({worst['mechanism']} at {_runs_text(int(worst['runs']))} runs, 95 % "
                       f"interval {worst['power_low']:.2f} to {worst['power_high']:.2f}), is "
                       + ("within" if passed else "ABOVE") + f" the limit {FALSE_ALARM_LIMIT:.2g} = 1 - confidence.")
    outcome.append(f"Flagged in at least {POWER_DETECTED * 100:.0f} % of the audits: " + "; ".join(
        _caught_text(mechanism, group) for mechanism, group in frame.groupby("mechanism", sort=False)) + ".")
    pivot = power_pivot(frame)
    classes = ["fails" if np.isclose(value, 1.0) and not passed else "" for value in pivot["break"]]
    return {
        "outcome": " ".join(outcome), "passed": passed,
        "repetitions": "/".join(map(str, sorted(set(frame["repetitions"].astype(int))))),
        "table": table_html(pivot, name="audit_power", row_classes=classes),
        "full_table": folded_table(frame, name="audit_power_rows",
                                   summary=f"Every row of {Path(table_path).name}: {plural(len(frame), 'row')}, "
                                           "with the flagged counts and the median lower bounds"),
        "figure": figure_entry(figure_path, "Privacy audit: power against mechanisms that spend more than they claim",
                               page_dir=page_dir),
    }


def libraries_entries(config: dict, libraries) -> dict | None:
    """PLAN beside the DP libraries (experiments/outputs/libraries.py) from results/libraries/<experiment>.csv:
    per experiment its data and the sentences that answer "PLAN or my library's mean?", one sentence
    over all of them, the seconds per call, the whole table folded."""
    if not libraries:
        return None
    tables = [pd.read_csv(path) for path in libraries]
    frame = pd.concat(tables, ignore_index=True)
    section = config.get("libraries") or {}
    labels = {mechanism: mechanism_style(mechanism).label for mechanism in frame["mechanism"].unique()}
    experiments = []
    for table in tables:
        name = str(table["experiment"].iloc[0])
        data = (config.get("experiments") or {}).get(name, {}).get("data", {})
        experiments.append({"name": name, "data": ", ".join(f"{key} = {value}" for key, value in data.items()),
                            "sentences": experiment_findings(table, reference=section[name]["reference"],
                                                             labels=labels)})
    references = {entry["name"]: labels[section[entry["name"]]["reference"]] for entry in experiments}
    return {
        "experiments": experiments,
        "overall": overall_finding(tables, references=references, labels=labels),
        "seconds": table_html(seconds_table(frame), name="libraries_seconds"),
        "full_table": folded_table(frame, name="libraries_rows",
                                   summary=f"Every row of results/libraries/: {plural(len(frame), 'row')}, with the "
                                           "standard errors, medians and the rho each ledger spent"),
    }
