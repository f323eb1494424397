"""Paper figures from experiment summaries, drawn the way the papers drew them.

It stays one module of about 700 lines because a panel's plan (which rows, statistic and series),
its caption and its drawing all read the same figure spec and :class:`PanelPlan`, whose rules are
stated once below.

A figure is one row of panels side by side. A panel draws, for one experiment, one statistic
of each mechanism's error against one grid parameter (``x``), one line per mechanism and value
of a series parameter (rho by default). How the PLAN paper's figures were drawn (its authors'
plotting notebook, which reads their committed result files):

- every curve is the MEAN error over the trials with +-1 standard deviation bars
  (``statistic: mean_sd``, the default); the extended figures (ours) may draw medians with
  interquartile bars (``median_iqr``), the user-level figures means with a band of one standard
  error (``mean_se``, their Monte-Carlo averages), the CoinPress figures the 10 % trimmed mean, the
  CoinPress paper's statistic, with bars of one standard error (``trimmed_mean_se``);
- COLOUR = mechanism, DASH PATTERN AND MARKER = rho (:mod:`experiments.outputs.styles`, defined once for
  every figure). The non-private empirical mean does not depend on rho: one thin black line
  per panel (drawn from the largest rho);
- "error relative to the empirical mean" (their Figure 3(c)): per setting, the mean error of
  the empirical mean is subtracted from each trial's error of a mechanism and the absolute value
  taken (``measure: error_relative_to_empirical``, computed by experiments/engine/summary.py); the
  distance to the sample mean is ``error_vs_empirical``.

Spec of a figure (``figures.<name>`` in the config): ``title``, ``panels``, and optional
``caption`` (text appended to the generated caption), ``source`` (where the drawing choices come
from, e.g. the authors' notebook), ``reproduces`` (the paper figure it reproduces, e.g.
"PLAN Figure 3"; absent for our own figures). Spec of a panel: ``experiment``, ``x``,
``mechanisms`` (drawn in that order), and optional ``title``, ``measure``, ``statistic``,
``rho`` (the rho values to draw), ``series`` (the grid parameter whose values get the dash and
marker; default rho; ``none``: no series parameter, every grid parameter but x takes one value,
and a family of variants, e.g. CoinPress's iterations t, takes the dash and marker instead,
experiments/outputs/styles.py), ``where`` (values of grid parameters other than rho to keep: one value or a
list, e.g. ``{d: 1024}``, ``{ratio: [0.25, 0.5, 1]}``, or the x values to draw), ``logx`` and
``logy`` (default true), ``y_max`` (where the y axis ends: a point above it, e.g. a mean lifted by
one extreme trial, is marked at the top edge with its value, in the panel and the caption).
A figure of several panels letters their titles (a), (b), ... where the spec does not.

``rho`` and ``where`` lists are filters: listed values the summary lacks are skipped and named in
the log (the smoke config shares its figure specs with the full config, so it asks for values
its tiny grid does not have); only a list none of whose values exists is an error. Mechanisms, by
contrast, must all exist. Every grid parameter other than x and the series must take one value
after filtering.

:mod:`.common` writes the outputs (reproducible bytes, atomically).
"""
from __future__ import annotations

import math
import os
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

from ...engine.metrics import METRICS
from ...engine.summary import grid_columns
from ..styles import (
    BLACK,
    SERIES_LABELS,
    VARIANT_LABELS,
    format_rho,
    mechanism_style,
    series_style,
    series_value_text,
    variant_style,
    variant_value_text,
)
from .common import PANEL_HEIGHT_IN, PANEL_WIDTH_IN, X_LABELS, PlainLogFormatter, lettered

# measure -> the suffix of its columns in a summary (experiments/engine/summary.py); an experiment's
# extra_metrics add error_<metric> and error_<metric>_vs_empirical (measure_suffix)
MEASURES = {"error": "", "error_vs_empirical": "_vs_empirical",
            "error_relative_to_empirical": "_relative_to_empirical"}
# statistic -> (centre, spread columns): mean +- sd bars (the PLAN paper), median with quartile
# bars (our extended figures), mean with a band of one standard error (the user-level paper), the
# 10 % trimmed mean with bars of one standard error (the CoinPress paper)
STATISTICS = {"mean_sd": ("mean", "std"), "median_iqr": ("median", "q25", "q75"), "mean_se": ("mean", "se"),
              "trimmed_mean_se": ("trimmed_mean", "trimmed_mean_se")}
DEFAULT_STATISTIC = "mean_sd"
PANEL_KEYS = {"experiment", "title", "x", "measure", "statistic", "rho", "where", "series", "mechanisms", "logx",
              "logy", "x_label", "y_max"}
FIGURE_KEYS = {"title", "panels", "caption", "source", "reproduces"}
# Mechanisms whose output does not depend on the budget: drawn once per panel, not once per rho.
BUDGET_FREE = {"empirical_mean", "empirical_covariance"}

MIN_FIGURE_WIDTH_IN = 7.0  # a one-panel figure still has room for its title, legend and footer
# Text sizes in points: at 150 dpi a 3-panel figure is 2070 px wide; shown 1200 px wide the
# legend (10.5 pt = 22 px in the PNG) reads at about 13 px.
TITLE_PT, PANEL_TITLE_PT, LABEL_PT, TICK_PT, LEGEND_PT, FOOTER_PT = 13.5, 12, 11, 10, 10.5, 10

METRIC_LABELS = {"l2": r"$\ell_2$ error", "l1_half": r"$\ell_1$ error / 2", "l1": r"$\ell_1$ error",
                 "mahalanobis": "Mahalanobis error", "covariance_mahalanobis": "Mahalanobis (Frobenius) error"}


@dataclass(frozen=True)
class Series:
    """One drawn line: a mechanism at one value of the series parameter (``value`` None: the
    mechanism does not depend on it, or the panel has none). ``low`` and ``high`` are the ends
    of the bars (or band) around ``centre``; ``largest``: each point's largest trial (NaN where the
    summary has no max column)."""

    mechanism: str
    value: float | None
    x: np.ndarray
    centre: np.ndarray
    low: np.ndarray
    high: np.ndarray
    largest: np.ndarray


@dataclass(frozen=True)
class PanelPlan:
    """A validated panel: what to draw and how, no matplotlib objects."""

    index: int
    experiment: str
    title: str
    x: str
    x_label: str  # the x axis's label: the panel's own, else X_LABELS' for x
    measure: str
    metric: str | None  # the experiment's metric (y label); None: l2
    statistic: str
    logx: bool
    logy: bool
    mechanisms: tuple[str, ...]
    series_parameter: str | None  # the grid parameter that tells the lines apart besides the mechanism
    series_values: tuple[float, ...]
    fixed: tuple[tuple[str, float], ...]  # the other grid parameters' single values
    skipped: tuple[str, ...]  # requested filter values absent from the summary, as "rho=0.25"
    series: tuple[Series, ...]
    trials: tuple[int, ...]  # distinct trial counts of the drawn rows
    y_max: float | None = None  # where the y axis ends (off-scale points marked)

    @property
    def points(self) -> int:
        return sum(len(series.x) for series in self.series)


# ----------------------------------------------------------------------------- data


def read_summaries(paths: Sequence[str | os.PathLike]) -> pd.DataFrame:
    """All summary CSVs in one frame; panels pick their rows by the ``experiment`` column.

    Columns keep the layout of experiments/engine/summary.py: experiment, mechanism, the grid
    parameters of every file, trials, then the statistics (and anything added after them).
    """
    if not paths:
        raise ValueError("summaries must list at least one summary CSV, got summaries=[]")
    frames = []
    for path in paths:
        frame = pd.read_csv(path)
        for column in ("experiment", "mechanism", "trials"):
            if column not in frame.columns:
                raise ValueError(f"summary {path} has no {column!r} column (columns: {', '.join(frame.columns)})")
        frames.append(frame)
    grid = list(dict.fromkeys(column for frame in frames for column in grid_columns(frame)))
    order = ["experiment", "mechanism", *grid, "trials"]
    rest = [column for frame in frames for column in frame.columns if column not in order]
    return pd.concat(frames, ignore_index=True, sort=False)[order + list(dict.fromkeys(rest))]


def _panel_name(index: int, panel: Mapping) -> str:
    return f"panel {index + 1} (experiment {panel.get('experiment')!r})"


def _format_values(values) -> str:
    return "[" + ", ".join(f"{value:g}" if isinstance(value, (int, float)) else str(value) for value in values) + "]"


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _keep_values(rows: pd.DataFrame, column: str, requested, name: str) -> tuple[pd.DataFrame, list[str]]:
    """Rows whose ``column`` is one of ``requested`` (a number or a list); the requested values
    the rows lack are returned as skipped; none present is an error."""
    requested = _as_list(requested)
    available = sorted(float(value) for value in rows[column].unique())
    kept = [float(value) for value in requested if any(math.isclose(float(value), have) for have in available)]
    if not kept:
        raise ValueError(f"{name}: none of {column}={_format_values(requested)} is in the summary; "
                         f"available: {column}={_format_values(available)}")
    skipped = [f"{column}={value:g}" for value in requested if float(value) not in kept]
    matches = np.isclose(rows[column].to_numpy(dtype=float)[:, None], np.asarray(kept)[None, :]).any(axis=1)
    return rows[matches], skipped


def plan_panel(panel: Mapping, summary: pd.DataFrame, *, index: int = 0, metrics: Mapping | None = None) -> PanelPlan:
    """Validate one panel spec against the summaries and extract the lines to draw.

    Raises ValueError naming the key for: unknown keys, an experiment without a summary, an
    ``x`` or ``series`` that is not a grid column, an unknown measure or statistic (or one whose
    columns the summary lacks), mechanisms absent from the summary, a ``rho`` or ``where`` list
    none of whose values exists, a ``where`` that names no grid parameter, grid parameters other
    than x and the series that still vary (the panel could not pick one), or non-positive x on a
    log x axis.
    """
    if not isinstance(panel, Mapping):
        raise ValueError(f"panels[{index}] must be a mapping, got {panel!r}")
    name = _panel_name(index, panel)
    unknown = sorted(set(panel) - PANEL_KEYS)
    if unknown:
        raise ValueError(f"{name}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(PANEL_KEYS))}")
    for key in ("experiment", "x", "mechanisms"):
        if key not in panel:
            raise ValueError(f"{name}: missing required key {key!r}")
    experiment = panel["experiment"]
    rows = summary[summary["experiment"] == experiment]
    if rows.empty:
        available = sorted(summary["experiment"].astype(str).unique())
        raise ValueError(f"{name}: experiment={experiment!r} has no summary among the inputs "
                         f"(experiments in the summaries: {', '.join(available) or 'none'})")
    rows = rows.dropna(axis="columns", how="all")  # columns of other experiments' grids
    grid = grid_columns(rows)

    measure = panel.get("measure", "error")
    if measure_suffix(measure) is None:
        raise ValueError(f"{name}: measure={measure!r} is not one of {', '.join(MEASURES)}, or error_<metric> "
                         f"(or error_<metric>_vs_empirical) of a metric in {', '.join(sorted(METRICS))}")
    statistic = panel.get("statistic", DEFAULT_STATISTIC)
    if statistic not in STATISTICS:
        raise ValueError(f"{name}: statistic={statistic!r} is not one of {', '.join(STATISTICS)}")
    needed = [f"{column}{measure_suffix(measure)}" for column in STATISTICS[statistic]]
    missing = [column for column in needed if column not in rows.columns]
    if missing:
        raise ValueError(f"{name}: measure={measure!r} with statistic={statistic!r} needs column(s) "
                         f"{', '.join(missing)}, absent from the summary")

    x = panel["x"]
    if x not in grid:
        raise ValueError(f"{name}: x={x!r} is not a column of the summary; grid parameters: {', '.join(grid)}")

    mechanisms = panel["mechanisms"]
    if isinstance(mechanisms, str) or not mechanisms:
        raise ValueError(f"{name}: mechanisms must be a non-empty list of names, got mechanisms={mechanisms!r}")
    if len(set(mechanisms)) != len(mechanisms):
        raise ValueError(f"{name}: mechanisms lists a name twice: {mechanisms!r}")
    available_mechanisms = list(dict.fromkeys(rows["mechanism"]))
    absent = [mechanism for mechanism in mechanisms if mechanism not in available_mechanisms]
    if absent:
        raise ValueError(f"{name}: mechanisms {', '.join(map(repr, absent))} absent from the summary; "
                         f"available: {', '.join(available_mechanisms)}")
    rows = rows[rows["mechanism"].isin(mechanisms)]

    has_rho = "rho" in grid
    skipped: list[str] = []
    if panel.get("rho") is not None:
        if not has_rho:
            raise ValueError(f"{name}: rho={_format_values(_as_list(panel['rho']))} but the summary has no rho column")
        rows, dropped = _keep_values(rows, "rho", panel["rho"], name)
        skipped += dropped

    where = panel.get("where") or {}
    if not isinstance(where, Mapping):
        raise ValueError(f"{name}: where must map grid parameters to values, got where={where!r}")
    for parameter, value in where.items():
        if parameter not in grid or parameter == "rho":
            allowed = [column for column in grid if column != "rho"]
            raise ValueError(f"{name}: where names {parameter!r}, which is not a grid parameter other than rho "
                             f"(allowed: {', '.join(allowed) or 'none'}; rho has its own key)")
        rows, dropped = _keep_values(rows, parameter, value, f"{name}: where")
        skipped += dropped

    series_parameter = panel.get("series", "rho" if has_rho and x != "rho" else None)
    if series_parameter == "none":
        series_parameter = None
    if series_parameter is not None and (series_parameter not in grid or series_parameter == x):
        allowed = [column for column in grid if column != x]
        raise ValueError(f"{name}: series={series_parameter!r} is not a grid parameter other than x "
                         f"(allowed: {', '.join(allowed + ['none'])})")
    families = [mechanism for mechanism in mechanisms if mechanism_style(mechanism).variant]
    if series_parameter is not None and families:
        raise ValueError(f"{name}: {', '.join(families)} take their dash and marker from their "
                         f"{mechanism_style(families[0]).variant[0]} (experiments/outputs/styles.py), which the series "
                         f"{series_parameter!r} would take too: draw one value of it (rho: or where:) with "
                         "series: none")

    others = [column for column in grid if column not in (x, series_parameter)]
    varying = [column for column in others if rows[column].nunique(dropna=False) > 1]
    if varying:
        raise ValueError(f"{name}: grid parameter(s) {', '.join(varying)} take several values in the summary, but "
                         f"a panel draws x={x!r} and one series ({series_parameter}); filter them with where "
                         "(or rho), or draw them as the series")
    fixed = tuple((column, float(rows[column].iloc[0])) for column in others if len(rows))

    logx = bool(panel.get("logx", True))
    logy = bool(panel.get("logy", True))
    y_max = panel.get("y_max")
    if y_max is not None and (isinstance(y_max, bool) or not isinstance(y_max, (int, float)) or not y_max > 0):
        raise ValueError(f"{name}: y_max must be a positive number (where the y axis ends), got y_max={y_max!r}")
    if logx and (rows[x] <= 0).any():
        raise ValueError(f"{name}: logx is true but x={x!r} has values <= 0 "
                         f"({_format_values(sorted(rows[x].unique()))}); set logx: false")

    series_values = tuple(sorted(float(v) for v in rows[series_parameter].unique())) if series_parameter else ()
    series = []
    for mechanism in mechanisms:
        own = rows[rows["mechanism"] == mechanism]
        if series_parameter is None:
            groups = [(None, own)]
        elif series_parameter == "rho" and mechanism in BUDGET_FREE:
            groups = [(None, own[own["rho"] == own["rho"].max()])]
        else:
            groups = [(float(value), group) for value, group in own.groupby(series_parameter, sort=True)]
        for value, group in groups:
            group = group.sort_values(x, kind="stable")
            if group[x].duplicated().any():
                raise ValueError(f"{name}: mechanism {mechanism!r} has several rows per {x}={group[x].iloc[0]!r}")
            series.append(_series(mechanism, value, group, x, statistic, needed, f"max{measure_suffix(measure)}"))
    trials = tuple(sorted(int(t) for t in rows["trials"].unique())) if "trials" in rows.columns else ()
    return PanelPlan(index=index, experiment=experiment, title=str(panel.get("title", experiment)), x=x,
                     x_label=str(panel.get("x_label", X_LABELS.get(x, x))), measure=measure,
                     metric=(metrics or {}).get(experiment), statistic=statistic, logx=logx,
                     logy=logy, mechanisms=tuple(mechanisms), series_parameter=series_parameter,
                     series_values=series_values, fixed=fixed, skipped=tuple(skipped), series=tuple(series),
                     trials=trials, y_max=None if y_max is None else float(y_max))


def measure_suffix(measure: str) -> str | None:
    """The suffix of a measure's columns in a summary: ``MEASURES``, or for the error of an
    experiment's extra metric (``error_mahalanobis``, ``error_mahalanobis_vs_empirical``) the part
    after ``error``; None for anything else."""
    if measure in MEASURES:
        return MEASURES[measure]
    metric = measure.removeprefix("error_").removesuffix("_vs_empirical")
    return measure.removeprefix("error") if measure.startswith("error_") and metric in METRICS else None


def measure_metric(measure: str, metric: str | None) -> str:
    """The metric a measure reports: an extra metric's own, else the experiment's (None: l2)."""
    own = measure.removeprefix("error_").removesuffix("_vs_empirical")
    return own if measure not in MEASURES and own in METRICS else (metric or "l2")


def _series(mechanism, value, group, x, statistic, columns, largest_column) -> Series:
    centre = group[columns[0]].to_numpy(dtype=float)
    largest = (group[largest_column].to_numpy(dtype=float) if largest_column in group.columns
               else np.full(len(group), np.nan))
    if statistic == "median_iqr":
        low, high = group[columns[1]].to_numpy(dtype=float), group[columns[2]].to_numpy(dtype=float)
    else:  # mean +- sd, mean +- se or trimmed mean +- its se
        spread = group[columns[1]].to_numpy(dtype=float)
        low, high = centre - spread, centre + spread
    return Series(mechanism=mechanism, value=value, x=group[x].to_numpy(dtype=float), centre=centre, low=low,
                  high=high, largest=largest)


def check_figure_spec(spec: Mapping) -> None:
    """The figure-level keys: a mapping with ``panels`` (a non-empty list) and known keys only."""
    if not isinstance(spec, Mapping):
        raise ValueError(f"figure spec must be a mapping with title and panels, got {spec!r}")
    unknown = sorted(set(spec) - FIGURE_KEYS)
    if unknown:
        raise ValueError(f"figure {spec.get('title')!r}: unknown key(s) {', '.join(unknown)}; "
                         f"allowed: {', '.join(sorted(FIGURE_KEYS))}")
    panels = spec.get("panels")
    if not panels or isinstance(panels, (str, Mapping)):
        raise ValueError(f"figure {spec.get('title')!r}: panels must be a non-empty list, got panels={panels!r}")


def plan_figure(spec: Mapping, summary: pd.DataFrame, metrics: Mapping | None = None) -> list[PanelPlan]:
    """Validate a figure spec and plan every panel; ``metrics`` maps experiments to their metric
    (for the y labels). Panel titles must be unique within the figure."""
    check_figure_spec(spec)
    plans = [plan_panel(panel, summary, index=index, metrics=metrics) for index, panel in enumerate(spec["panels"])]
    if len(plans) > 1:
        plans = [replace(plan, title=lettered(plan.title, plan.index)) for plan in plans]
    titles = [plan.title for plan in plans]
    repeated = sorted({title for title in titles if titles.count(title) > 1})
    if repeated:
        raise ValueError(f"figure {spec.get('title')!r}: panel titles must be unique, repeated: {repeated}")
    return plans


# ----------------------------------------------------------------------------- captions


def statistic_text(statistic: str, trials: Sequence[int] = ()) -> str:
    """What a curve and its bars are, e.g. "Mean over 50 trials; bars: +-1 standard deviation"."""
    count = f"{trials[0]:,} " if len(trials) == 1 else ""
    unit = "runs" if statistic == "mean_se" else "trials"
    return {
        "mean_sd": f"Mean over {count}{unit}; bars: \u00b11 standard deviation (cut at 0, on a log axis at its bottom)",
        "median_iqr": f"Median over {count}{unit}; bars: interquartile range (25th to 75th percentile)",
        "mean_se": f"Mean over {count}{unit}; band: \u00b11 standard error of the mean",
        "trimmed_mean_se": f"10 % trimmed mean over {count}{unit} (the lowest and highest 10 % dropped); bars: "
                           "\u00b11 standard error",
    }[statistic]


MEASURE_TEXTS = {
    "error": "",
    "error_vs_empirical": "the distance to the sample's own (non-private) mean",
    "error_relative_to_empirical": ("|error - mean error of the empirical mean| per trial, the mean taken over the "
                                    "setting's trials (as the authors' notebook draws it)"),
}


def figure_caption(spec: Mapping, plans: Sequence[PanelPlan] = ()) -> str:
    """The caption that says what is drawn: the statistic and its bars, the encodings, special
    measures, the spec's own ``caption`` and the ``source`` of the drawing choices."""
    statistics = list(dict.fromkeys(plan.statistic for plan in plans)) or [
        panel.get("statistic", DEFAULT_STATISTIC) for panel in spec.get("panels", ())[:1]]
    trials = sorted({t for plan in plans for t in plan.trials})
    parts = [statistic_text(statistic, trials if len(trials) == 1 else ()) + "." for statistic in statistics]
    series = list(dict.fromkeys(plan.series_parameter for plan in plans if plan.series_parameter))
    labels = [SERIES_LABELS.get(s, s) for s in series] + list(dict.fromkeys(
        VARIANT_LABELS.get(style.variant[0], style.variant[0]) for plan in plans for m in plan.mechanisms
        if (style := mechanism_style(m)).variant))
    encodings = "Colour: mechanism"
    if labels:
        encodings += "; dash pattern and marker: " + " or ".join(labels).replace(
            "$", "").replace("\\rho", "rho").replace("\\varepsilon", "eps")
    parts.append(encodings + ".")
    for plan in plans:
        if MEASURE_TEXTS.get(plan.measure):
            parts.append(f"{plan.title}: {MEASURE_TEXTS[plan.measure]}.")
    panels = spec.get("panels", ())
    for index, panel in enumerate(panels):
        if isinstance(panel, Mapping) and panel.get("y_max") is not None:
            title = str(panel.get("title", panel.get("experiment")))
            title = lettered(title, index) if len(panels) > 1 else title
            parts.append(f"{title}: the y axis ends at {panel['y_max']:g}; a point above it is marked \u25b2 at the "
                         "top edge with its value and its largest trial (one extreme trial can lift a mean).")
    if spec.get("caption"):
        parts.append(str(spec["caption"]).strip())
    if spec.get("source"):
        parts.append(f"Drawn as: {str(spec['source']).strip()}")
    return " ".join(parts)


# ----------------------------------------------------------------------------- drawing


def _y_label(plan: PanelPlan) -> str:
    metric_name = measure_metric(plan.measure, plan.metric)
    metric = METRIC_LABELS.get(metric_name, metric_name)
    if plan.measure == "error_relative_to_empirical":
        quantity = f"{metric} relative to the empirical mean"
    elif plan.measure.endswith("_vs_empirical"):
        quantity = f"{metric} vs the sample mean"
    else:
        quantity = metric
    spread = {"mean_sd": r"mean $\pm$ sd", "median_iqr": "median, IQR", "mean_se": r"mean $\pm$ se",
              "trimmed_mean_se": r"10 % trimmed mean $\pm$ se"}[plan.statistic]
    # a label longer than the axis is tall runs into the title: the statistic then takes a line of its own
    one_line = f"{quantity} ({spread})"
    return one_line if _visible_length(one_line) <= Y_LABEL_CHARACTERS else f"{quantity}\n({spread})"


Y_LABEL_CHARACTERS = 40  # about what a panel's height holds at LABEL_PT


def _visible_length(text: str) -> int:
    """The characters a label shows: mathtext's $ and commands (``\\ell_2`` shows as two) not counted."""
    return len(re.sub(r"\$|\\[a-zA-Z]+|_", "", text))


def _format_tick(value: float) -> str:
    return f"{int(value)}" if float(value).is_integer() else f"{value:g}"


OFF_SCALE_FACTOR = 10.0  # log-y axes end at 10x the largest bar end of the paper's curves


def _cap_companions(ax, plan: PanelPlan) -> None:
    """Keep the paper's curves readable when a companion of ours (PLAN-exact) explodes: end the
    log-y axis at OFF_SCALE_FACTOR x the largest bar end of the other curves and mark the
    companion's off-scale points with arrows at the top edge."""
    anchors = [s.high[np.isfinite(s.high) & (s.high > 0)] for s in plan.series
               if not mechanism_style(s.mechanism).companion]
    anchors = [values for values in anchors if values.size]
    if not anchors:
        return
    top = OFF_SCALE_FACTOR * max(float(values.max()) for values in anchors)
    worst: dict[str, float] = {}
    for series in plan.series:
        beyond = series.centre > top
        if not mechanism_style(series.mechanism).companion or not beyond.any():
            continue
        ax.plot(series.x[beyond], np.full(int(beyond.sum()), top), linestyle="none", marker="^", markersize=8,
                color=mechanism_style(series.mechanism).color, clip_on=False, zorder=4)
        worst[series.mechanism] = max(float(series.centre[beyond].max()), worst.get(series.mechanism, 0.0))
    if worst:
        ax.set_ylim(top=top)
        text = "; ".join(f"{mechanism_style(name).label} off scale (^), up to {value:.3g}"
                         for name, value in worst.items())
        ax.text(0.02, 0.97, textwrap.fill(text, 48), transform=ax.transAxes, va="top", ha="left", fontsize=9,
                bbox={"facecolor": "white", "edgecolor": "0.8", "alpha": 0.9})


def _mark_above(ax, plan: PanelPlan) -> None:
    """End the y axis at the panel's ``y_max``: each point above it marked \u25b2 at the top edge in its
    colour, and named in a note with its value and its largest trial (bars above it are cut there)."""
    ax.set_ylim(top=plan.y_max)
    notes = []
    for series in plan.series:
        above = series.centre > plan.y_max
        if not above.any():
            continue
        style = mechanism_style(series.mechanism)
        ax.plot(series.x[above], np.full(int(above.sum()), plan.y_max), linestyle="none", marker="^", markersize=9,
                color=style.color, markeredgecolor="white", clip_on=False, zorder=5)
        parameter = "\u03c1" if plan.series_parameter == "rho" else plan.series_parameter
        name = style.label if series.value is None else (
            f"{style.label}, {parameter} = {series_value_text(plan.series_parameter, series.value)}")
        for x, centre, largest in zip(series.x[above], series.centre[above], series.largest[above]):
            worst = f", its largest trial {_readable(largest)}" if np.isfinite(largest) else ""
            notes.append(f"{name}, {plan.x} = {_format_tick(x)}: {_readable(centre)} off scale (\u25b2){worst}")
    if notes:
        ax.text(0.02, 0.97, "\n".join(textwrap.fill(note, 44) for note in notes), transform=ax.transAxes, va="top",
                ha="left", fontsize=9, bbox={"facecolor": "white", "edgecolor": "0.8", "alpha": 0.9})


def _readable(value: float) -> str:
    """Three significant digits, thousands with separators: 0.151, 97.5, 4,489."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _line_style(plan: PanelPlan, series: Series):
    """(dashes, marker, linewidth) of a line: the series value's style; without one, a family
    member's variant style, a solid line with markers beside such families, or a thin plain line
    (a mechanism that does not depend on the series parameter, e.g. the empirical mean)."""
    if series.value is not None:
        style = series_style(plan.series_parameter, series.value)
        return style.dashes, style.marker, 1.7
    variant = mechanism_style(series.mechanism).variant
    if variant is not None:
        style = variant_style(*variant)
        return style.dashes, style.marker, 1.7
    if series.mechanism not in BUDGET_FREE and any(mechanism_style(m).variant for m in plan.mechanisms):
        return "-", "o", 1.7
    if mechanism_style(series.mechanism).marker:  # its own marker where no series takes the markers
        return "-", mechanism_style(series.mechanism).marker, 1.5
    return "-", None, 1.2


MIN_TICK_GAP = 0.05  # labelled grid values at least this share of the axis apart


def _ticks_at_grid(xs: np.ndarray, logx: bool) -> bool:
    """Whether the x ticks go at the grid values themselves: at most 12 values whose neighbours
    lie at least MIN_TICK_GAP of the axis apart (else their labels would overlap, e.g. the
    CoinPress figures' n = 9181, 10000 on a log axis: matplotlib's own ticks then)."""
    if not 0 < len(xs) <= 12:
        return False
    positions = np.log(xs) if logx else np.asarray(xs, dtype=float)
    span = positions[-1] - positions[0]
    return len(xs) == 1 or bool(np.min(np.diff(positions)) >= MIN_TICK_GAP * span)


TICK_CHARACTER_PT, TICK_PAD_PT = 6.0, 6.0  # a tick label's character at TICK_PT is at most about 6 pt wide


def grid_ticks(xs: Sequence[float], labels: Sequence[str], logx: bool, axis_pt: float) -> list[int]:
    """The indices of the grid values that get a labelled tick on an x axis ``axis_pt`` points
    wide: from the left, each one whose label clears the previous labelled one (half of both
    labels' widths and a pad apart), and the last value always (replacing the one before it if
    they would collide): e.g. rho = 0.005, 0.045, 1/8, ... on a linear axis drops 0.045."""
    positions = np.log(np.asarray(xs, dtype=float)) if logx else np.asarray(xs, dtype=float)
    if len(positions) < 2:
        return list(range(len(positions)))
    scale = axis_pt / (positions[-1] - positions[0])

    def clear(i, j):
        needed = (len(labels[i]) + len(labels[j])) / 2.0 * TICK_CHARACTER_PT + TICK_PAD_PT
        return (positions[j] - positions[i]) * scale >= needed

    kept = [0]
    for index in range(1, len(positions) - 1):
        if clear(kept[-1], index):
            kept.append(index)
    while len(kept) > 1 and not clear(kept[-1], len(positions) - 1):
        kept.pop()
    return kept + [len(positions) - 1]


def isolated_points(values: np.ndarray) -> np.ndarray:
    """The finite values whose neighbours on both sides are missing (NaN) or absent."""
    finite = np.isfinite(np.asarray(values, dtype=float))
    before = np.concatenate([[False], finite[:-1]])
    after = np.concatenate([finite[1:], [False]])
    return finite & ~before & ~after


def _draw_panel(ax, plan: PanelPlan) -> None:
    centres = [s.centre[np.isfinite(s.centre) & (s.centre > 0)] for s in plan.series]
    lows = [s.low[np.isfinite(s.low) & (s.low > 0)] for s in plan.series]
    positive = np.concatenate(centres + lows) if plan.series else np.array([])
    # An error is never negative: a bar reaching below 0 is cut at 0, on a log axis at its bottom (the caption says so).
    bottom = float(positive.min()) / 1.25 if plan.logy and positive.size else None
    for series in plan.series:
        color = mechanism_style(series.mechanism).color
        dashes, marker, width = _line_style(plan, series)
        centre, low, high = series.centre, series.low, series.high
        if plan.logy:
            centre = np.where(centre > 0, centre, np.nan)
            low = np.maximum(low, bottom) if bottom is not None else low
        else:
            low = np.maximum(low, 0.0)
        label = series.mechanism if series.value is None else (
            f"{series.mechanism} {plan.series_parameter}={format_rho(series.value)}")
        if plan.statistic == "mean_se":  # many points: a line with a band
            ax.fill_between(series.x, low, high, color=color, alpha=0.22, linewidth=0)
            ax.plot(series.x, centre, color=color, linestyle=dashes, linewidth=width, marker=marker, markersize=6,
                    label=label)
            # a point without a finite neighbour (the others refused, docs/design.md §6.1) draws no line
            alone = isolated_points(centre)
            if alone.any():
                ax.errorbar(np.asarray(series.x)[alone], centre[alone],
                            yerr=np.vstack([(centre - low)[alone], (high - centre)[alone]]),
                            color=color, linestyle="none", marker="o", markersize=5, capsize=3)
            continue
        lower = np.clip(np.nan_to_num(centre - low, nan=0.0), 0.0, None)
        upper = np.clip(np.nan_to_num(high - centre, nan=0.0), 0.0, None)
        ax.errorbar(series.x, centre, yerr=np.vstack([lower, upper]), color=color, linestyle=dashes, linewidth=width,
                    marker=marker, markersize=6, markerfacecolor=color, markeredgewidth=0.8, elinewidth=1.0,
                    capsize=3, capthick=1.0, zorder=3 if series.value is None else 2, label=label)
    title = plan.title
    if plan.series_parameter != "rho":
        budget = dict(plan.fixed).get("rho")
        if budget is not None and "rho" not in title and "\u03c1" not in title:
            title += rf" ($\rho$ = {format_rho(budget)})"
    ax.set_title(title, fontsize=PANEL_TITLE_PT)
    ax.set_xlabel(plan.x_label, fontsize=LABEL_PT)
    ax.set_ylabel(_y_label(plan), fontsize=LABEL_PT)
    ax.tick_params(labelsize=TICK_PT)
    ax.grid(True, which="major", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    xs = np.unique(np.concatenate([series.x for series in plan.series])) if plan.series else np.array([])
    if plan.logx:
        powers_of_two = all(math.frexp(value)[0] == 0.5 for value in xs)
        ax.set_xscale("log", base=2 if powers_of_two else 10)
    if _ticks_at_grid(xs, plan.logx):
        tick_format = format_rho if plan.x == "rho" else _format_tick
        labels = [tick_format(value) for value in xs]
        # the axis' width before the layout shrinks it a little (the pad leaves room for that)
        kept = grid_ticks(xs, labels, plan.logx, ax.get_position().width * ax.figure.get_figwidth() * 72.0)
        ax.set_xticks(xs[kept], labels=[labels[i] for i in kept])
        ax.xaxis.set_minor_locator(NullLocator())
    elif plan.logx:
        ax.xaxis.set_major_formatter(PlainLogFormatter(labelOnlyBase=True))
        ax.xaxis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))
    if plan.logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(PlainLogFormatter(labelOnlyBase=True))
        ax.yaxis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))
        if bottom is not None:
            ax.set_ylim(bottom=bottom)
        if plan.y_max is None:
            _cap_companions(ax, plan)
    if plan.y_max is not None:
        _mark_above(ax, plan)
    if not plan.logx and len(xs) > 1:
        span = xs[-1] - xs[0]
        ax.set_xlim(xs[0] - 0.04 * span, xs[-1] + 0.04 * span)


def _legend_groups(plans: Sequence[PanelPlan]) -> tuple[list[list[tuple]], list[str]]:
    """Groups of (handle, label) with their headers: the mechanisms by colour, then each series
    parameter's values by dash and marker."""
    mechanisms = list(dict.fromkeys(m for plan in plans for m in plan.mechanisms))
    entries = dict.fromkeys((mechanism_style(m).color, mechanism_style(m).label, _own_marker(plans, m))
                            for m in mechanisms)  # families once
    groups = [[(Line2D([], [], color=color, linewidth=2.6, marker=marker, markersize=7), label)
               for color, label, marker in entries]]
    headers = ["mechanism:"]
    for option in dict.fromkeys(mechanism_style(m).variant[0] for m in mechanisms if mechanism_style(m).variant):
        values = sorted({mechanism_style(m).variant[1] for m in mechanisms
                         if mechanism_style(m).variant and mechanism_style(m).variant[0] == option})
        styles = [variant_style(option, v) for v in values]
        groups.append([(Line2D([], [], color=BLACK, linestyle=style.dashes, linewidth=1.7, marker=style.marker,
                               markersize=6), variant_value_text(option, v)) for v, style in zip(values, styles)])
        headers.append(f"{VARIANT_LABELS.get(option, option)}:")
    for parameter in dict.fromkeys(plan.series_parameter for plan in plans if plan.series_parameter):
        values = sorted({v for plan in plans if plan.series_parameter == parameter for v in plan.series_values})
        drawn = [v for v in values if any(s.value == v for plan in plans for s in plan.series)]
        if not drawn:
            continue
        styles = [series_style(parameter, v) for v in drawn]
        groups.append([(Line2D([], [], color=BLACK, linestyle=style.dashes, linewidth=1.7, marker=style.marker,
                               markersize=6), series_value_text(parameter, v)) for v, style in zip(drawn, styles)])
        headers.append(f"{SERIES_LABELS.get(parameter, parameter)}:")
    return groups, headers


def _own_marker(plans: Sequence[PanelPlan], mechanism: str) -> str | None:
    """The mechanism's own marker if some panel draws it with it (no series or family takes the markers)."""
    drawn = {_line_style(plan, series)[1] for plan in plans for series in plan.series
             if series.mechanism == mechanism and series.value is None}
    own = mechanism_style(mechanism).marker
    return own if own in drawn else None


def _add_legend(fig: Figure, groups: list[list[tuple]], *, headers: Sequence[str], footer: str) -> None:
    """One legend below the panels: a row per group (header, then its entries), wrapped to
    fewer columns if it would be wider than the figure; the footer (what the bars are) below."""
    blank = Line2D([], [], linestyle="none", marker=None)
    width = fig.get_figwidth() * fig.dpi
    renderer = fig.canvas.get_renderer()
    columns = max(len(group) for group in groups)
    while True:
        rows = []  # each row: header cell + `columns` entries
        for header, group in zip(headers, groups):
            for start in range(0, len(group), columns):
                chunk = group[start:start + columns]
                chunk = chunk + [(blank, "")] * (columns - len(chunk))
                rows.append([(blank, header if start == 0 else "")] + chunk)
        # legends fill column by column: transpose the rows
        cells = [rows[r][c] for c in range(columns + 1) for r in range(len(rows))]
        legend = fig.legend([cell[0] for cell in cells], [cell[1] for cell in cells], loc="outside lower center",
                            ncols=columns + 1, frameon=False, handlelength=3.4, columnspacing=1.4,
                            handletextpad=0.6, fontsize=LEGEND_PT, title=footer, title_fontsize=FOOTER_PT)
        legend.get_title().set_color("0.3")
        extent = legend.get_window_extent(renderer)
        if columns == 1 or extent.width <= 0.98 * width:
            # keep the panels' height whatever the number of legend rows
            fig.set_figheight(PANEL_HEIGHT_IN + 0.5 + extent.height / fig.dpi)
            return
        legend.remove()
        columns -= 1


def make_figure(spec: Mapping, summary: pd.DataFrame, metrics: Mapping | None = None) -> tuple[Figure, list[PanelPlan]]:
    """Draw a figure spec from summary rows; returns the Figure and the panel plans."""
    plans = plan_figure(spec, summary, metrics)
    width = max(PANEL_WIDTH_IN * len(plans), MIN_FIGURE_WIDTH_IN)
    fig = Figure(figsize=(width, PANEL_HEIGHT_IN + 1.0), layout="constrained")
    FigureCanvasAgg(fig)  # attaches itself; needed to measure the legend
    axes = fig.subplots(1, len(plans), squeeze=False)[0]
    for ax, plan in zip(axes, plans):
        _draw_panel(ax, plan)
    if spec.get("title"):  # wrapped to the figure's width (about 9 characters per inch at this size)
        fig.suptitle(textwrap.fill(str(spec["title"]), int(9 * width)), fontsize=TITLE_PT)
    trials = sorted({t for plan in plans for t in plan.trials})
    footer = textwrap.fill("; ".join(dict.fromkeys(statistic_text(plan.statistic, trials if len(trials) == 1 else ())
                                                   for plan in plans)), int(9.5 * width))
    groups, headers = _legend_groups(plans)
    _add_legend(fig, groups, headers=headers, footer=footer)
    return fig, plans


# ----------------------------------------------------------------------------- the log


def describe(plans: Sequence[PanelPlan], spec: Mapping) -> list[str]:
    """Log lines: one per panel, what was drawn and how many points."""
    lines = [f"figure {spec.get('title', '')!r}: {len(plans)} panel(s)"]
    for plan in plans:
        series = (f"{plan.series_parameter}={_format_values(plan.series_values)}" if plan.series_parameter
                  else "series=none")
        if plan.skipped:
            series += f" (requested but absent, skipped: {', '.join(plan.skipped)})"
        fixed = " ".join(f"{name}={value:g}" for name, value in plan.fixed)
        lines.append(
            f"panel {plan.index + 1} {plan.title!r}: experiment={plan.experiment} x={plan.x} "
            f"measure={plan.measure} statistic={plan.statistic} {series} {fixed} "
            f"mechanisms={','.join(plan.mechanisms)} trials={_format_values(plan.trials)}: "
            f"{len(plan.series)} lines, {plan.points} points"
        )
    return lines

