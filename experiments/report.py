"""One self-contained HTML page for a run (DESIGN.md 3): every figure, the fidelity table,
optional tables (Table 2), run times, the errata (DESIGN.md 5.0, 5.3), the provenance, and the
data sets the run could not use (``not_reproduced``).

The functions below prepare the page's data (tables, verdicts, numbers formatted for display);
``render_report`` fills the jinja2 template ``templates/report.html.j2`` with it. Data tables are
rendered by pandas (``Styler.to_html``), each in a horizontally scrolling box (``table_html``),
long ones folded behind a summary line (``folded_table``; any section can use both). Images are
embedded as base64 PNG, linked to their full-size PNG and PDF, and the CSS is inline, so the
page can be mailed; README "The report page" says how it is laid out and tested in a browser.
"""
from __future__ import annotations

import base64
import datetime
import functools
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import re
import struct
import subprocess
import sys
import urllib.parse
from pathlib import Path

import jinja2
import pandas as pd
from markupsafe import Markup, escape
from pandas.io.formats.style import Styler

from .atomic import write_text_atomically
from .config import format_value
from .errata import FAIL_FACTOR, FIGURE7_FINDING, figure7_table, readable_number
from .fidelity import HIGH, LOW, STANDARD_ERRORS, target_met, verdict
from .figures import FIGURE2_TITLE, WORST_CASE_TITLE, figure_caption
from .joblog import open_log
from .scorecard import PAPER_ITEMS, counts, headline

PACKAGES = ("numpy", "scipy", "pandas", "matplotlib", "snakemake", "pyyaml", "jinja2")
REPOSITORY = Path(__file__).resolve().parents[1]
# Beside this module, so the page renders from any working directory (package data, pyproject.toml).
TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "report.html.j2"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
METRES_PER_INCH = 0.0254
# Figures are shown at their print size, where a CSS inch is 96 px (matplotlib's 10 pt text at
# 13.3 px, the size of the page's table text), shrunk to fit the page down to MIN_FIGURE_SCALE
# of it (10 pt at 10 px, still readable); on a narrower page they scroll inside their box.
CSS_PX_PER_INCH = 96
MIN_FIGURE_SCALE = 0.75
TABLE_CAPTIONS = {
    "table2": "Table 2: average relative error |\u03c3\u0302\u00b2 \u2212 \u03c3\u00b2| / \u03c3\u00b2 of the variance "
              "estimates (DESIGN.md 5.6)",
}
# The settings the design's prototype reported for the accounting finding (DESIGN.md 5.0).
DESIGN_EXAMPLES = (("gaussian_A", "d=1024_rho=0.125", "1.5", "more than 100"),
                   ("gaussian_C", "d=512_rho=0.125", "6.7", "about 24"))
# A text column with a longer entry wraps at a minimum width (CSS class long-text), so that the
# browser does not squeeze it to one word per line beside the other columns; shorter text does
# not wrap (a wide table scrolls inside its box instead).
LONG_TEXT_CHARS = 40


# --- tables -------------------------------------------------------------------------------

def _cell(value) -> tuple[str, str]:
    """(text, css class) of a table cell: numbers with 4 significant digits, right-aligned."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, (bool,)) or str(value) in {"True", "False"}:
        return str(value), "text"
    if isinstance(value, (int,)) or (isinstance(value, float) and not math.isnan(value) and float(value).is_integer()
                                     and abs(value) < 1e15):
        return format_value(value), ""
    if isinstance(value, float):
        return ("" if math.isnan(value) else f"{value:.4g}"), ""
    return str(value), "text"


def table_html(frame: pd.DataFrame, *, name: str, caption: str | None = None, row_classes=None) -> Markup:
    """``frame`` as pandas' HTML table in a horizontally scrolling box (``scroll-box``: the box fits
    the page, a wide table scrolls inside it): cells formatted by ``_cell`` (escaped), text cells
    and the headers of non-numeric columns left-aligned, columns holding text longer than
    ``LONG_TEXT_CHARS`` marked ``long-text`` (wrapped at a minimum width instead of one word per
    line; shorter text is not wrapped), ``row_classes`` (a CSS class per row, or "") on every
    cell of its row. ``name`` makes the table's id, unique on the page; pandas would otherwise
    draw a random one and the page would change from run to run."""
    frame = frame.reset_index(drop=True)  # Styler's cell classes align on a unique index
    row_classes = list(row_classes) if row_classes is not None else [""] * len(frame)
    long_text = {column for column in frame.columns
                 if max((len(_cell(value)[0]) for value in frame[column]), default=0) > LONG_TEXT_CHARS}
    classes = pd.DataFrame([[" ".join(filter(None, (_cell(value)[1], "long-text" if column in long_text else "",
                                                    row_class)))
                             for column, value in zip(frame.columns, row)]
                            for row, row_class in zip(frame.itertuples(index=False), row_classes)],
                           index=frame.index, columns=frame.columns, dtype=object)
    text_columns = [column for column in frame.columns
                    if not pd.api.types.is_numeric_dtype(frame[column]) or pd.api.types.is_bool_dtype(frame[column])]
    styler = (Styler(frame, uuid=re.sub(r"\W", "_", name), cell_ids=False)
              .hide(axis="index")
              .format(lambda value: escape(_cell(value)[0]))
              .format_index(escape="html", axis=1)
              .set_td_classes(classes)
              .set_table_styles({column: [{"selector": "th", "props": "text-align: left"}]
                                 for column in text_columns}, overwrite=False))
    if caption:
        styler = styler.set_caption(escape(caption))  # pandas inserts captions unescaped
    return Markup('<div class="scroll-box">\n') + Markup(styler.to_html()) + Markup("</div>\n")


def folded_table(frame: pd.DataFrame, *, name: str, summary: str, caption: str | None = None,
                 row_classes=None) -> Markup:
    """A long table folded away: ``<details class="folded">`` whose one-line ``<summary>`` (text,
    escaped) gives the counts a reader needs without opening it, e.g. "128 settings; 128 of 128
    within the target"; inside, ``table_html`` of the other arguments."""
    table = table_html(frame, name=name, caption=caption, row_classes=row_classes)
    return Markup('<details class="folded"><summary>{}</summary>\n{}</details>\n').format(summary, table)


def _plural(count: int, noun: str) -> str:
    """``1 setting``, ``2 settings``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def png_geometry(data: bytes, *, name="PNG") -> tuple[int, int, float | None]:
    """(width, height, dots per inch) of a PNG from its IHDR and pHYs chunks; the resolution is
    None when the file records none (or no unit). ``name`` names the file in the error."""
    if data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise ValueError(f"{name} is not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    position = 8
    while position + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        if kind == b"pHYs":
            x_per_unit, _, unit = struct.unpack(">IIB", data[position + 8:position + 17])
            return width, height, (x_per_unit * METRES_PER_INCH if unit == 1 and x_per_unit else None)
        if kind == b"IDAT":  # pHYs comes before the image data
            break
        position += 12 + length
    return width, height, None


def _figure(path, title: str, *, page_dir, caption: str = "") -> dict:
    """A figure of the page: its title, the PNG embedded (base64), its pixel size and its print
    size in CSS px (a CSS inch is 96 px; a PNG that records no resolution counts as 96 dpi, as
    browsers show it), an anchor id, and links to the full-size PNG and the PDF beside it,
    relative to ``page_dir`` (the directory the page is written to)."""
    path = Path(path)
    pdf = path.with_suffix(".pdf")
    if not pdf.is_file():
        raise ValueError(f"figure {path} has no PDF beside it ({pdf} is missing): the page links to both")
    data = path.read_bytes()
    width, height, dpi = png_geometry(data, name=f"figure {path}")
    return {"title": title, "caption": caption, "anchor": f"figure-{path.stem}",
            "png": base64.b64encode(data).decode("ascii"),
            "width": width, "height": height, "print_width": round(width * CSS_PX_PER_INCH / (dpi or CSS_PX_PER_INCH)),
            "png_link": _relative_link(path, page_dir), "pdf_link": _relative_link(pdf, page_dir)}


def _relative_link(path: Path, page_dir) -> str:
    """The href of ``path`` from a page in ``page_dir`` (POSIX separators, percent-encoded)."""
    return urllib.parse.quote(Path(os.path.relpath(path, page_dir)).as_posix())


ILLUSTRATION_TITLES = {
    "figure1": "Figure 1: PLAN (Algorithm 1) step by step on 2-D data",
    "figure6": "Figure 6: the shape of the noise for different scalings (Appendix C)",
    "userlevel_figure1": "User-level paper, Figure 1: the annulus A_{a,b} and the projection onto it",
}
# figure name -> the paper item it draws, for the figures not in the config's `figures:`
DEDICATED_FIGURES = {"figure1": "PLAN Figure 1", "figure2": "PLAN Figure 2", "figure6": "PLAN Figure 6",
                     "userlevel_figure1": "User-level Figure 1"}


def _figure_titles(config: dict) -> dict:
    titles = {name: spec.get("title", name) for name, spec in (config.get("figures") or {}).items()}
    # drawn from the real datasets or the mechanisms themselves, not from a `figures:` entry
    return {"figure2": FIGURE2_TITLE, "userlevel_worst_case": WORST_CASE_TITLE, **ILLUSTRATION_TITLES, **titles}


def _paper_item(config: dict, name: str) -> str | None:
    spec = (config.get("figures") or {}).get(name)
    return spec.get("reproduces") if spec else DEDICATED_FIGURES.get(name)


def _figure_order(config: dict, name: str) -> tuple:
    """The papers' figures in the papers' order (PAPER_ITEMS), then ours in config order."""
    items = [item.item for item in PAPER_ITEMS]
    item = _paper_item(config, name)
    ours = list(config.get("figures") or {})
    return (items.index(item), 0) if item in items else (len(items), ours.index(name) if name in ours else len(ours))


# --- the page's data ----------------------------------------------------------------------

def experiments_table(config: dict, summaries: list) -> pd.DataFrame:
    """One row per experiment of the summaries: its data, grid, metric, mechanisms and size."""
    rows = []
    for path in summaries:
        summary = pd.read_csv(path)
        for experiment, frame in summary.groupby("experiment", sort=False):
            entry = config.get("experiments", {}).get(experiment, {})
            data = ", ".join(f"{k}={v}" for k, v in entry.get("data", {}).items())
            grid = "; ".join(_grid_text(name, values) for name, values in entry.get("grid", {}).items())
            grid_columns = [c for c in frame.columns if c in entry.get("grid", {})]
            settings = len(frame.drop_duplicates(grid_columns)) if grid_columns else 1
            trials = sorted(set(frame["trials"].astype(int)))
            rows.append({"experiment": experiment, "data": data, "grid": grid, "metric": entry.get("metric", "l2"),
                         "mechanisms": ", ".join(dict.fromkeys(frame["mechanism"])), "settings": settings,
                         "trials per setting": "/".join(map(str, trials))})
    return pd.DataFrame(rows)


def _grid_text(name, values) -> str:
    """``rho \u2208 {0.125, 0.25}``, or the config's generator of a long eps grid as written."""
    if isinstance(values, dict):
        low, high, count = values["logspace"]
        jumps = f" and every 2d/k inside it, d = {values['jump_points']}" if "jump_points" in values else ""
        return f"{name}: {count} log-spaced in [{format_value(low)}, {format_value(high)}]{jumps}"
    return f"{name} \u2208 {{{', '.join(format_value(v) for v in values)}}}"


def figure_entries(config: dict, figures: list, *, page_dir) -> list[dict]:
    """The figures in the papers' order, then ours; each with its caption (what the curves and
    bars are, and where the drawing choices come from: experiments.figures.figure_caption)."""
    titles = _figure_titles(config)
    specs = config.get("figures") or {}
    entries = []
    for path in sorted(figures, key=lambda path: _figure_order(config, Path(path).stem)):
        name = Path(path).stem
        caption = figure_caption(specs[name]) if name in specs else ""
        item = _paper_item(config, name)
        if item is None:
            caption = " ".join(filter(None, ["Ours: no figure of the papers.", caption]))
        entries.append(_figure(path, titles.get(name, name), page_dir=page_dir, caption=caption))
    return entries


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
    return (f"{_plural(len(targeted), 'setting')}; {within} of {int(targeted.sum())} targeted within the target"
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


def extra_tables(tables: list) -> list[Markup]:
    """Tables other stages produce (Table 2), captioned by their .caption.txt sidecar if any."""
    rendered = []
    for index, path in enumerate(map(Path, tables)):
        sidecar = path.with_suffix(".caption.txt")
        caption = sidecar.read_text().strip() if sidecar.is_file() else TABLE_CAPTIONS.get(path.stem, str(path))
        rendered.append(table_html(pd.read_csv(path), name=f"table{index}_{path.stem}", caption=caption))
    return rendered


def run_times(benchmarks: list) -> pd.DataFrame:
    """Per experiment (results/<experiment>/benchmarks/<job>.tsv, one per cell, or per setting
    with share_rho): jobs, summed wall seconds (``s``), summed CPU seconds (``cpu_time``), the
    longest job and the peak max_rss; a total row."""
    records = []
    for path in benchmarks:
        path = Path(path)
        frame = pd.read_csv(path, sep="\t")
        for _, row in frame.iterrows():
            records.append({"experiment": path.parent.parent.name, "job": path.stem,
                            "s": pd.to_numeric(row.get("s"), errors="coerce"),
                            "cpu_time": pd.to_numeric(row.get("cpu_time"), errors="coerce"),
                            "max_rss": pd.to_numeric(row.get("max_rss"), errors="coerce")})
    columns = ["experiment", "jobs", "wall s (sum)", "CPU s (sum)", "longest job", "longest job s",
               "peak max_rss MB"]
    if not records:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(records)

    def summarise(name, group):
        longest = group.loc[group["s"].idxmax()] if group["s"].notna().any() else None
        return {"experiment": name, "jobs": len(group), "wall s (sum)": group["s"].sum(),
                "CPU s (sum)": group["cpu_time"].sum(),
                "longest job": "" if longest is None else (longest["job"] if name != "total"
                                                           else f"{longest['experiment']}/{longest['job']}"),
                "longest job s": math.nan if longest is None else longest["s"],
                "peak max_rss MB": group["max_rss"].max()}

    rows = [summarise(name, group) for name, group in frame.groupby("experiment", sort=False)]
    rows.append(summarise("total", frame))
    return pd.DataFrame(rows, columns=columns)


def run_times_table(benchmarks: list) -> Markup | None:
    """The run-time table with its total row marked ``total``; None without benchmark files."""
    table = run_times(benchmarks)
    if table.empty:
        return None
    return table_html(table, name="runtimes",
                      row_classes=["total" if name == "total" else "" for name in table["experiment"]])


def accounting_erratum(errata_table) -> dict | None:
    """The published-accounting finding (DESIGN.md 5.0) measured in this run; None without pairs."""
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
    for experiment, setting, before, after in DESIGN_EXAMPLES:
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
                                     summary=f"The {_plural(int(fails.sum()), 'setting')} where exact accounting "
                                             "fails")
                        if fails.any() else None),
        "table": folded_table(table, name="errata_accounting", row_classes=["fails" if f else "" for f in fails],
                              summary=f"Every setting: {_plural(len(table), 'setting')}, {int(fails.sum())} failing "
                                      "under exact accounting" + (" (highlighted)" if fails.any() else "")),
    }


def noscale_erratum(config: dict, errata_noscale) -> dict | None:
    """The PLAN-noscale finding (DESIGN.md 5.3) measured in this run; None without its table."""
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
                                  summary=f"Every setting: {_plural(len(noscale), 'setting')}")}


def errata(config: dict, errata_table, errata_figures: list, errata_noscale=None, *, page_dir) -> dict:
    figures = {Path(path).stem: path for path in errata_figures}
    return {
        "accounting": accounting_erratum(errata_table),
        "accounting_figure": (_figure(figures["errata_accounting"], "PLAN median l2 error: exact (y) vs published "
                                                                    "(x) accounting, every Gaussian setting",
                                      page_dir=page_dir)
                              if "errata_accounting" in figures else None),
        "noscale": noscale_erratum(config, errata_noscale),
        "noscale_figure": (_figure(figures["errata_noscale"], "Published PLAN-noscale curve vs our "
                                                              "coordinate_median and PLAN-noscale as specified",
                                   page_dir=page_dir)
                           if "errata_noscale" in figures else None),
    }


STATUS_CLASSES = {"reproduced": "st-good", "partly reproduced": "st-partly", "not reproduced": "st-bad",
                  "not run here": "st-absent", "not comparable here": "st-absent", "no published numbers": "st-plain",
                  "not produced": "st-absent", "ours": "st-plain", "holds": "st-good", "does not hold": "st-bad"}


def _format_number(value) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{float(value):.3g}"


def scorecard_entries(config: dict, scorecard, *, figure_anchors: set[str], has_tables: bool) -> dict | None:
    """The scorecard section from (results/scorecard.csv, scorecard_values.csv, claims.csv): the
    headline with the counts, one row per item with links to its figures on this page, every
    compared value (folded) and the claims of the text."""
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
            "note": row["note"],
        })
    numbers = counts(table, claims)
    claim_rows = [{**claim, "verdict_class": STATUS_CLASSES.get(claim["verdict"], "st-plain"),
                   "files_class": STATUS_CLASSES.get(claim["verdict_on_files"], "st-plain")}
                  for claim in claims.to_dict("records")]
    folded = None
    if not values.empty:
        agree = int(values["agrees"].astype(bool).sum())
        shown = values[["item", "panel", "experiment", "mechanism", "setting", "statistic", "ours", "ours_se", "paper",
                        "paper_se", "ratio", "z", "agrees", "paper_source"]]
        folded = folded_table(shown, name="scorecard_values",
                              summary=f"Every compared value: {_plural(len(values), 'value')}; {agree} agree",
                              row_classes=["" if a else "outside" for a in values["agrees"]])
    return {"headline": headline(numbers), "rows": rows, "claims": claim_rows, "compared_values": folded}


def figure7_erratum(summaries: list) -> dict:
    """The Figure 7(b) finding (experiments.errata): its text and the table of quoted, authors'
    code and this run's IOME medians."""
    frames = [pd.read_csv(path) for path in summaries]
    corr = next((frame for frame in frames if (frame["experiment"] == "gaussian_C_corr").any()), None)
    table = figure7_table(corr)
    table = table.rename(columns={"quoted": "quoted by the paper", "authors_code_T20": "authors' code (T = 20)",
                                  "authors_code_T10": "authors' code (T = 10)",
                                  "ours_on_their_data": "our IOME on their data",
                                  "this_run": "this run", "this_run_trials": "this run's trials"})
    return {"text": FIGURE7_FINDING, "table": table_html(table, name="errata_figure7"),
            "has_run": corr is not None}


def not_reproduced_entries(config: dict, not_reproduced) -> list[dict]:
    """The data sets the run could not use, checked, with the configured titles of the figures
    they leave out."""
    titles = _figure_titles(config)
    entries = []
    for entry in not_reproduced or ():
        missing = [key for key in ("dataset", "reason", "how_to_supply") if not entry.get(key)]
        if missing:
            raise ValueError(f"not_reproduced entry {entry!r} lacks {', '.join(missing)}")
        figures = _names(entry.get("figures"))
        entries.append({
            "dataset": str(entry["dataset"]), "reason": str(entry["reason"]),
            "how_to_supply": str(entry["how_to_supply"]), "url": str(entry.get("url") or ""),
            "experiments": _names(entry.get("experiments")),
            "figures": [name if titles.get(name, name) == name else f"{titles[name]} ({name})" for name in figures],
        })
    return entries


def _names(value) -> list[str]:
    """A list of names; a single name alone is accepted too."""
    return [value] if isinstance(value, str) else [str(name) for name in value or ()]


# --- provenance ---------------------------------------------------------------------------

def config_hash(config: dict) -> str:
    """sha256 of the config as canonical JSON (sorted keys, no whitespace)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def git_state(repository=REPOSITORY) -> tuple[str, str]:
    """(commit, "clean"/"dirty") of the code's repository; ("unknown", reason) without git.

    The generated outputs do not count: a run rewrites the committed results and figures
    (Snakemake deletes a job's outputs before it runs), which says nothing about the code."""
    try:
        commit = subprocess.run(["git", "-C", str(repository), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=20, check=True).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(repository), "status", "--porcelain", "--", ".", ":(exclude)results",
             ":(exclude)figures"], capture_output=True, text=True, timeout=20, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError) as error:
        return "unknown", f"no git information ({type(error).__name__})"
    return commit, ("dirty (uncommitted changes)" if status.strip() else "clean")


def package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def provenance(config: dict, *, now=None) -> dict:
    commit, tree = git_state()
    now = now or datetime.datetime.now(datetime.UTC)
    return {
        "git commit": commit,
        "work tree": tree,
        **{name: package_version(name) for name in PACKAGES},
        "python": sys.version.split()[0],
        "seed": config.get("seed", "not set"),
        "config sha256": config_hash(config),
        "date (UTC)": now.isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "CPU count": os.cpu_count(),
    }


# --- the page -----------------------------------------------------------------------------

@functools.cache
def template() -> jinja2.Template:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=jinja2.select_autoescape(("html", "html.j2")),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return environment.get_template(TEMPLATE)


# The user-level mechanisms (DESIGN.md 5.7) in a sentence each, by algorithm.
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
    from datasets.userlevel import collection_counts

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


AUDIT_COLUMNS = ["name", "mechanism", "pair", "neighbours", "accounting", "claimed_eps", "delta", "eps_lower",
                 "violation", "expected_violation", "control", "control_eps_lower", "control_violation", "runs",
                 "seconds"]


def audit_entries(audit, *, page_dir) -> dict | None:
    """The audit section (DESIGN.md 5.8) from (results/audit/audit.csv, figures/audit.png): the
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
            f"{row['name']} (claims eps {row['claimed_eps']:.3g}, at least {row['eps_lower']:.3g})"
            for _, row in violations.iterrows()) + ".")
    outcome.append("Every outcome is the one stated before running." if unexpected.empty else
                   f"Outcomes other than expected: {', '.join(unexpected['name'])}.")
    classes = ["fails" if bool(v) else "" for v in frame["violation"]]
    shown = frame[[column for column in AUDIT_COLUMNS if column in frame.columns]]
    passed = powerless.empty and exact_flagged.empty and unexpected.empty
    return {"outcome": " ".join(outcome), "passed": passed,
            "table": table_html(shown, name="audit", row_classes=classes),
            "figure": _figure(figure_path, "Privacy audit: claimed eps and the lower bounds found", page_dir=page_dir)}


def render_report(*, config, summaries=(), fidelity=(), figures=(), benchmarks=(), errata_table=None,
                  errata_figures=(), errata_noscale=None, tables=(), not_reproduced=None, audit=None,
                  scorecard=None, page_dir="results") -> str:
    """The page. ``not_reproduced``: one dict per data set the run could not use, with keys
    ``dataset``, ``reason``, ``how_to_supply`` and optionally ``experiments`` and ``figures``
    (the names of those left out); shown near the top of the page. ``scorecard``: the paths of
    results/scorecard.csv, scorecard_values.csv and claims.csv (the first section). ``page_dir``: the directory
    the page is written to, from which its links to the full-size figures are relative (each
    figure PNG needs its PDF beside it)."""
    missing = not_reproduced_entries(config, not_reproduced)
    experiments = experiments_table(config, list(summaries))
    extras = extra_tables(list(tables))
    figure_list = figure_entries(config, list(figures), page_dir=page_dir)
    card = scorecard_entries(config, scorecard, figure_anchors={f["anchor"] for f in figure_list},
                             has_tables=bool(extras))
    nav = [("scorecard", "Scorecard")] if card else []
    nav += [("not-reproduced", "Not reproduced")] if missing else []
    userlevel = userlevel_entries(config, list(summaries))
    nav += [("rerun", "Rerun"), *([("experiments", "Experiments")] if not experiments.empty else []),
            ("figures", "Figures"), *([("userlevel", "User-level")] if userlevel else []),
            ("fidelity", "Fidelity"), *([("tables", "Tables")] if extras else []),
            ("runtimes", "Run times"), ("errata", "Errata"), *([("audit", "Audit")] if audit else []),
            ("provenance", "Provenance")]
    return template().render(
        min_figure_scale=MIN_FIGURE_SCALE,
        nav=nav,
        not_reproduced=missing,
        experiments=None if experiments.empty else table_html(experiments, name="experiments"),
        scorecard=card,
        figures=figure_list,
        userlevel=userlevel,
        band=f"{LOW:g}\u2013{HIGH:g}",
        standard_errors=f"{STANDARD_ERRORS:g}",
        fidelity=fidelity_entries(config, list(fidelity)),
        tables=extras,
        run_times=run_times_table(list(benchmarks)),
        errata={**errata(config, errata_table, list(errata_figures), errata_noscale, page_dir=page_dir),
                "figure7": figure7_erratum(list(summaries))},
        audit=audit_entries(audit, page_dir=page_dir),
        provenance=provenance(config),
    )


def report_job(*, config, summaries, fidelity, figures, benchmarks, output, log, errata_table=None,
               errata_figures=(), errata_noscale=None, tables=(), not_reproduced=None, audit=None, scorecard=None):
    """Snakemake job: results/report.html."""
    page = render_report(config=config, summaries=summaries, fidelity=fidelity, figures=figures,
                         benchmarks=benchmarks, errata_table=errata_table, errata_figures=errata_figures,
                         errata_noscale=errata_noscale, tables=tables, not_reproduced=not_reproduced, audit=audit,
                         scorecard=scorecard, page_dir=Path(output).parent)
    write_text_atomically(page, output)
    with open_log(log) as stream:
        print(f"report: {len(figures)} figures, {len(fidelity)} fidelity tables, {len(tables)} extra tables, "
              f"{len(benchmarks)} benchmark files, {len(errata_figures)} errata figures, "
              f"{len(not_reproduced or ())} data sets not reproduced; {len(page)} characters", file=stream)
