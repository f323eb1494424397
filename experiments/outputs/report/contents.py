"""What the run made, as the page lists it: the experiments, the figures in the papers' order,
further tables (Table 2), the run times, and the data sets it could not use."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from markupsafe import Markup

from ...engine.config import format_value
from ..figures.dataset_variances import FIGURE2_TITLE
from ..figures.paper import figure_caption
from ..figures.worst_case import WORST_CASE_TITLE
from ..scorecard import PAPER_ITEMS
from .html import figure_entry, table_html

TABLE_CAPTIONS = {
    "table2": "Table 2: average relative error |\u03c3\u0302\u00b2 \u2212 \u03c3\u00b2| / \u03c3\u00b2 of the variance "
              "estimates (docs/design.md §5.6)",
}

ILLUSTRATION_TITLES = {
    "figure1": "Figure 1: PLAN (Algorithm 1) step by step on 2-D data",
    "figure6": "Figure 6: the shape of the noise for different scalings (Appendix C)",
    "userlevel_figure1": "User-level paper, Figure 1: the annulus A_{a,b} and the projection onto it",
}
# figure name -> the paper item it draws, for the figures not in the config's `figures:`
DEDICATED_FIGURES = {"figure1": "PLAN Figure 1", "figure2": "PLAN Figure 2", "figure6": "PLAN Figure 6",
                     "userlevel_figure1": "User-level Figure 1"}


def figure_titles(config: dict) -> dict:
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
    bars are, and where the drawing choices come from: experiments.outputs.figures.paper.figure_caption)."""
    titles = figure_titles(config)
    specs = config.get("figures") or {}
    entries = []
    for path in sorted(figures, key=lambda path: _figure_order(config, Path(path).stem)):
        name = Path(path).stem
        caption = figure_caption(specs[name]) if name in specs else ""
        item = _paper_item(config, name)
        if item is None:
            caption = " ".join(filter(None, ["Ours: no figure of the papers.", caption]))
        entries.append(figure_entry(path, titles.get(name, name), page_dir=page_dir, caption=caption))
    return entries


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
    with share_rho, and one per trial shard of a split job): jobs, summed wall seconds (``s``),
    summed CPU seconds (``cpu_time``), the longest job and the peak max_rss; a total row."""
    records = []
    for path in benchmarks:
        path = Path(path)
        frame = pd.read_csv(path, sep="\t")
        # results/<experiment>/benchmarks/<job>.tsv, or .../benchmarks/shards/<job>/trials=<range>.tsv
        parts = path.with_suffix("").parts
        where = len(parts) - 1 - parts[::-1].index("benchmarks")
        for _, row in frame.iterrows():
            records.append({"experiment": parts[where - 1], "job": "/".join(parts[where + 1:]).removeprefix("shards/"),
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


def run_times_table(path) -> Markup | None:
    """The run-time table (results/run_times.csv, :func:`run_times`) with its total row marked
    ``total``; None without one or without a job in it."""
    if path is None:
        return None
    table = pd.read_csv(path)
    if table.empty:
        return None
    return table_html(table, name="runtimes",
                      row_classes=["total" if name == "total" else "" for name in table["experiment"]])


def not_reproduced_entries(config: dict, not_reproduced) -> list[dict]:
    """The data sets the run could not use, checked, with the configured titles of the figures
    they leave out."""
    titles = figure_titles(config)
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
