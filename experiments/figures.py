"""Paper figures from experiment summaries (DESIGN.md 3, 6 and 11).

A figure is one row of panels side by side, as in the PLAN paper (Figures 3, 4, 8, 10).
Every panel draws, for one experiment, the median l2 error of each mechanism against one
grid parameter (``x``) with the interquartile range as error bars, one line per
(mechanism, rho):

- colour encodes rho (a sequential colormap, the same colour for the same rho in every
  panel of the figure); when no panel of the figure draws more than one rho, colour
  encodes the mechanism instead;
- the mechanism encodes marker and line style. PLAN (the published accounting, the paper's
  curve) is a solid line with filled circles and PLAN-exact, its exactly accounted
  companion (DESIGN.md 5.0), a dashed line with hollow circles; IOME dotted with squares,
  PLAN-noscale dash-dot with triangles, coordinate_median thin dashed with crosses.
  ``empirical_mean`` (non-private) does not depend on rho: it is one thin grey line per
  panel, drawn from the largest drawn rho. Any other mechanism gets a style from a cycle.

Spec of a panel (``figures.<name>.panels[i]`` in the config): ``experiment``, ``x``,
``mechanisms`` (drawn in that order), and optional ``title``, ``measure`` (``error`` or
``error_vs_empirical``), ``rho``, ``where`` (fixed values of the other grid parameters, e.g.
``{d: 1024}`` to draw one dimension of a grid over d and ratio), ``logx`` and ``logy``
(both default true). The y label names the experiment's metric (l2, or l1 / 2 for binary
data) when the job is told it.

``rho`` is a filter: the listed values that the summary has are drawn, the others are
skipped and named in the log. Only a list none of whose values exists is an error. (The
smoke config shares its figure specs with the full config, so it asks for rho values its
tiny grid does not have.) Without ``rho`` every rho of the summary is drawn. Mechanisms,
by contrast, must all exist: a missing mechanism is an error.

Outputs are reproducible: PDF without creation date, PNG without software version, and
both written to a temporary file beside the target and renamed (no partial files).
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display; must precede any pyplot import anywhere in the process

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter, NullLocator  # noqa: E402

from .atomic import write_atomically  # noqa: E402
from .joblog import open_log  # noqa: E402
from .summary import grid_columns  # noqa: E402

MEASURES = ("error", "error_vs_empirical")
PANEL_KEYS = {"experiment", "title", "x", "measure", "rho", "where", "mechanisms", "logx", "logy", "statistic"}
# median: quartile bars (the PLAN paper's figures); mean: a band of one standard error (the
# user-level paper's Monte-Carlo averages, DESIGN.md 5.7)
PANEL_STATISTICS = {"median": ("median", "q25", "q75"), "mean": ("mean", "se")}

PANEL_WIDTH_IN = 5.0
PANEL_HEIGHT_IN = 4.0
PNG_DPI = 150
RHO_COLORMAP = "viridis"
RHO_COLOR_RANGE = (0.0, 0.82)  # leave out the pale yellow end of viridis
NON_PRIVATE_COLOR = "0.45"
NEUTRAL_COLOR = "0.15"  # mechanism legend entries when colour encodes rho

X_LABELS = {"d": "dimension d", "alpha": r"skew exponent $\alpha$", "rho": r"privacy budget $\rho$ (zCDP)",
            "eps": r"privacy budget $\varepsilon$ (pure DP)",
            "ratio": r"share of coordinates with $p = 1/2$ (the rest $p = 0.01$)"}
METRIC_LABELS = {"l2": r"$\ell_2$ error", "l1_half": r"$\ell_1$ error / 2", "l1": r"$\ell_1$ error"}
MEASURE_SUFFIXES = {"error": "", "error_vs_empirical": " vs empirical mean"}


@dataclass(frozen=True)
class Style:
    """How one mechanism is drawn; ``color`` is used when colour encodes the mechanism."""

    label: str
    linestyle: object
    marker: str
    color: str
    hollow: bool = False
    linewidth: float = 1.6
    markersize: float = 5.5
    rho_independent: bool = False  # drawn once, in grey, not coloured by rho


STYLES = {
    "PLAN": Style("PLAN (published accounting)", "-", "o", "C0"),
    "PLAN-exact": Style("PLAN-exact (exact accounting)", "--", "o", "C0", hollow=True),
    "IOME": Style("IOME", ":", "s", "C1", linewidth=1.9),
    "PLAN-noscale": Style("PLAN-noscale", "-.", "^", "C2"),
    "coordinate_median": Style("coordinate median", "--", "x", "C4", linewidth=1.0, markersize=6.5),
    "empirical_mean": Style("empirical mean (non-private)", "-", "", NON_PRIVATE_COLOR, linewidth=1.1,
                            rho_independent=True),
    # binary data (DESIGN.md 5.4, 5.5)
    "PLAN-binary": Style("PLAN (private variances)", "-", "o", "C0"),
    "PLAN-binary-oracle": Style("PLAN (true variances, non-private)", (0, (5, 1.5)), "D", "C3", markersize=4.5),
    "PLAN-binary-noscale": Style("PLAN without scaling", "-.", "^", "C2"),
    "IOME-binary": Style("IOME (T = 10)", ":", "s", "C1", linewidth=1.9),
    # user-level clipping (DESIGN.md 5.7)
    "Laplace": Style("vanilla Laplace", "--", "", "C1"),
    "OPT-wc": Style("OPT-wc (worst-case optimal clipping)", "-", "", "C0"),
    "AKMV": Style("AKMV (private quantile clipping)", "-.", "", "C2"),
}
FALLBACK_LINESTYLES = ("-", "--", "-.", ":")
FALLBACK_MARKERS = ("D", "v", "P", "*", "h", "<", ">", "p")
FALLBACK_COLORS = ("C3", "C5", "C6", "C8", "C9", "C7")


@dataclass(frozen=True)
class Series:
    """One drawn line: a mechanism at one rho (``rho`` None: no rho column, or x is rho)."""

    mechanism: str
    rho: float | None
    x: np.ndarray
    median: np.ndarray
    q25: np.ndarray
    q75: np.ndarray


@dataclass(frozen=True)
class PanelPlan:
    """A validated panel: what to draw and how, no matplotlib objects."""

    index: int
    experiment: str
    title: str
    x: str
    measure: str
    metric: str | None  # the experiment's metric (y label); None: l2
    logx: bool
    logy: bool
    mechanisms: tuple[str, ...]
    rhos: tuple[float, ...]  # drawn rho values (empty without a rho column or when x is rho)
    skipped_rhos: tuple[float, ...]  # requested but absent from the summary
    series: tuple[Series, ...]
    trials: tuple[int, ...]  # distinct trial counts of the drawn rows
    statistic: str = "median"  # median with quartile bars, or mean with a standard-error band

    @property
    def points(self) -> int:
        return sum(len(series.x) for series in self.series)


# ----------------------------------------------------------------------------- data


def read_summaries(paths: Sequence[str | os.PathLike]) -> pd.DataFrame:
    """All summary CSVs in one frame; panels pick their rows by the ``experiment`` column.

    Columns keep the layout of experiments/summary.py: experiment, mechanism, the grid
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


def plan_panel(panel: Mapping, summary: pd.DataFrame, *, index: int = 0, metrics: Mapping | None = None) -> PanelPlan:
    """Validate one panel spec against the summaries and extract the lines to draw.

    Raises ValueError naming the key for: unknown keys, an experiment without a summary,
    an ``x`` that is not a grid column, an unknown measure, mechanisms absent from the
    summary, a ``rho`` list none of whose values exists, a ``where`` that names no grid
    parameter or a value the summary lacks, grid parameters other than x and rho that vary
    (the panel could not pick one), or non-positive x on a log x axis.
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
    available_experiments = sorted(summary["experiment"].astype(str).unique())
    rows = summary[summary["experiment"] == experiment]
    if rows.empty:
        raise ValueError(
            f"{name}: experiment={experiment!r} has no summary among the inputs "
            f"(experiments in the summaries: {', '.join(available_experiments) or 'none'})"
        )
    rows = rows.dropna(axis="columns", how="all")  # columns of other experiments' grids
    grid = grid_columns(rows)

    measure = panel.get("measure", "error")
    if measure not in MEASURES:
        raise ValueError(f"{name}: measure={measure!r} is not one of {', '.join(MEASURES)}")
    suffix = "" if measure == "error" else "_vs_empirical"
    statistic = panel.get("statistic", "median")
    if statistic not in PANEL_STATISTICS:
        raise ValueError(f"{name}: statistic={statistic!r} is not one of {', '.join(PANEL_STATISTICS)}")
    needed = [f"{column}{suffix}" for column in PANEL_STATISTICS[statistic]]
    missing = [column for column in needed if column not in rows.columns]
    if missing:
        raise ValueError(f"{name}: measure={measure!r} needs column(s) {', '.join(missing)}, absent from the summary")

    x = panel["x"]
    if x not in grid:
        raise ValueError(f"{name}: x={x!r} is not a column of the summary; grid parameters: {', '.join(grid)}")

    where = panel.get("where") or {}
    if not isinstance(where, Mapping):
        raise ValueError(f"{name}: where must map grid parameters to values, got where={where!r}")
    for parameter, value in where.items():
        if parameter not in grid or parameter in (x, "rho"):
            allowed = [column for column in grid if column not in (x, "rho")]
            raise ValueError(f"{name}: where names {parameter!r}, which is not a grid parameter other than x and rho "
                             f"(allowed: {', '.join(allowed) or 'none'})")
        matches = np.isclose(rows[parameter].to_numpy(dtype=float), float(value))
        if not matches.any():
            raise ValueError(f"{name}: where {parameter}={value!r} is not in the summary; available: "
                             f"{_format_values(sorted(rows[parameter].unique()))}")
        rows = rows[matches]

    mechanisms = panel["mechanisms"]
    if isinstance(mechanisms, str) or not mechanisms:
        raise ValueError(f"{name}: mechanisms must be a non-empty list of names, got mechanisms={mechanisms!r}")
    available_mechanisms = list(dict.fromkeys(rows["mechanism"]))
    absent = [mechanism for mechanism in mechanisms if mechanism not in available_mechanisms]
    if absent:
        raise ValueError(
            f"{name}: mechanisms {', '.join(map(repr, absent))} absent from the summary; "
            f"available: {', '.join(available_mechanisms)}"
        )
    if len(set(mechanisms)) != len(mechanisms):
        raise ValueError(f"{name}: mechanisms lists a name twice: {mechanisms!r}")
    rows = rows[rows["mechanism"].isin(mechanisms)]

    has_rho = "rho" in grid
    requested = panel.get("rho")
    if requested is not None:
        if not has_rho:
            raise ValueError(f"{name}: rho={_format_values(requested)} but the summary has no rho column")
        if isinstance(requested, (int, float)):
            requested = [requested]
        available_rhos = sorted(rows["rho"].unique())
        kept = [rho for rho in requested if any(math.isclose(rho, have) for have in available_rhos)]
        if not kept:
            raise ValueError(
                f"{name}: none of rho={_format_values(requested)} is in the summary; "
                f"available: rho={_format_values(available_rhos)}"
            )
        skipped = tuple(float(rho) for rho in requested if rho not in kept)
        rows = rows[np.isclose(rows["rho"].to_numpy()[:, None], np.asarray(kept, float)[None, :]).any(axis=1)]
    else:
        skipped = ()

    fixed = [column for column in grid if column not in (x, "rho")]
    varying = [column for column in fixed if rows[column].nunique(dropna=False) > 1]
    if varying:
        raise ValueError(
            f"{name}: grid parameter(s) {', '.join(varying)} take several values in the summary, "
            f"but a panel draws only x={x!r} and rho; use another experiment or x"
        )

    logx = bool(panel.get("logx", True))
    logy = bool(panel.get("logy", True))
    if logx and (rows[x] <= 0).any():
        raise ValueError(
            f"{name}: logx is true but x={x!r} has values <= 0 ({_format_values(sorted(rows[x].unique()))}); "
            "set logx: false"
        )

    by_rho = has_rho and x != "rho"
    rhos = tuple(sorted(float(rho) for rho in rows["rho"].unique())) if by_rho else ()
    series = []
    for mechanism in mechanisms:
        own = rows[rows["mechanism"] == mechanism]
        if by_rho and mechanism in STYLES and STYLES[mechanism].rho_independent:
            groups = [(None, own[own["rho"] == own["rho"].max()])]
        elif by_rho:
            groups = [(float(rho), group) for rho, group in own.groupby("rho", sort=True)]
        else:
            groups = [(None, own)]
        for rho, group in groups:
            group = group.sort_values(x, kind="stable")
            if group[x].duplicated().any():
                raise ValueError(f"{name}: mechanism {mechanism!r} has several rows per {x}={group[x].iloc[0]!r}")
            centre = group[needed[0]].to_numpy(dtype=float)
            if statistic == "mean":
                se = group[needed[1]].to_numpy(dtype=float)
                low, high = centre - se, centre + se
            else:
                low, high = group[needed[1]].to_numpy(dtype=float), group[needed[2]].to_numpy(dtype=float)
            series.append(Series(mechanism=mechanism, rho=rho, x=group[x].to_numpy(dtype=float),
                                 median=centre, q25=low, q75=high))
    trials = tuple(sorted(int(t) for t in rows["trials"].unique())) if "trials" in rows.columns else ()
    return PanelPlan(
        index=index,
        experiment=experiment,
        title=str(panel.get("title", experiment)),
        x=x,
        measure=measure,
        metric=(metrics or {}).get(experiment),
        logx=logx,
        logy=logy,
        mechanisms=tuple(mechanisms),
        rhos=rhos,
        skipped_rhos=skipped,
        series=tuple(series),
        trials=trials,
        statistic=statistic,
    )


def plan_figure(spec: Mapping, summary: pd.DataFrame, metrics: Mapping | None = None) -> list[PanelPlan]:
    """Validate a figure spec (``title``, ``panels``) and plan every panel; ``metrics`` maps
    experiments to their metric (for the y labels)."""
    if not isinstance(spec, Mapping):
        raise ValueError(f"figure spec must be a mapping with title and panels, got {spec!r}")
    panels = spec.get("panels")
    if not panels or isinstance(panels, (str, Mapping)):
        raise ValueError(f"figure {spec.get('title')!r}: panels must be a non-empty list, got panels={panels!r}")
    return [plan_panel(panel, summary, index=index, metrics=metrics) for index, panel in enumerate(panels)]


# ----------------------------------------------------------------------------- styles


def format_rho(rho: float) -> str:
    """``1/8`` for powers of two below one, ``2`` for those above, otherwise ``0.01``."""
    mantissa, exponent = math.frexp(rho)
    if mantissa == 0.5:
        return f"1/{2 ** (1 - exponent)}" if exponent < 1 else f"{2 ** (exponent - 1)}"
    return f"{rho:g}"


def mechanism_styles(mechanisms: Sequence[str]) -> dict[str, Style]:
    """Known mechanisms keep their style; others get the next style of a fixed cycle, in
    order of first appearance, so a user-added mechanism is always drawn distinguishably."""
    styles = {}
    unknown = 0
    for mechanism in mechanisms:
        if mechanism in styles:
            continue
        if mechanism in STYLES:
            styles[mechanism] = STYLES[mechanism]
        else:
            styles[mechanism] = Style(
                mechanism,
                FALLBACK_LINESTYLES[unknown % len(FALLBACK_LINESTYLES)],
                FALLBACK_MARKERS[unknown % len(FALLBACK_MARKERS)],
                FALLBACK_COLORS[unknown % len(FALLBACK_COLORS)],
            )
            unknown += 1
    return styles


def rho_colors(rhos: Sequence[float]) -> dict[float, tuple]:
    """Evenly spaced colours of a sequential colormap by rank: small rho dark, large rho light."""
    colormap = matplotlib.colormaps[RHO_COLORMAP]
    ordered = sorted(set(rhos))
    low, high = RHO_COLOR_RANGE
    positions = [0.5 * (low + high)] if len(ordered) == 1 else np.linspace(low, high, len(ordered))
    return {rho: colormap(position) for rho, position in zip(ordered, positions)}


# ----------------------------------------------------------------------------- drawing


class PlainLogFormatter(LogFormatter):
    """Log-axis tick labels as plain numbers (0.2, 1, 300) instead of 2 x 10^-1; which
    ticks get a label is left to matplotlib's LogFormatter (decades, and minor ticks when
    the axis spans few decades)."""

    def __call__(self, x, pos=None):
        label = super().__call__(x, pos)
        return f"{x:g}" if label else ""


def _y_label(plan: PanelPlan) -> str:
    if plan.statistic == "mean":
        runs = f"{plan.trials[0]:,} runs" if len(plan.trials) == 1 else "runs"
        metric = METRIC_LABELS.get(plan.metric or "l2", str(plan.metric))
        return f"mean {metric} over {runs} ($\\pm$ 1 s.e.)"
    trials = f"median over {plan.trials[0]} trials" if len(plan.trials) == 1 else "median over trials"
    metric = METRIC_LABELS.get(plan.metric or "l2", str(plan.metric))
    return f"{metric}{MEASURE_SUFFIXES[plan.measure]} ({trials})"


def _format_tick(value: float) -> str:
    return f"{int(value)}" if float(value).is_integer() else f"{value:g}"


OFF_SCALE_FACTOR = 10.0  # log-y axes end at 10x the largest upper quartile of the solid curves


def _cap_companions(ax, plan: PanelPlan, styles: Mapping[str, Style], colors) -> None:
    """Keep the paper's curves readable when a hollow-marker companion (PLAN-exact) explodes:
    end the log-y axis at OFF_SCALE_FACTOR x the largest upper quartile of the other curves
    and mark the companion's off-scale points with arrows at the top edge."""
    anchors = [s.q75[s.q75 > 0] for s in plan.series if not styles[s.mechanism].hollow]
    anchors = [values for values in anchors if values.size]
    if not anchors:
        return
    top = OFF_SCALE_FACTOR * max(float(values.max()) for values in anchors)
    notes = []
    for series in plan.series:
        if not styles[series.mechanism].hollow or not np.any(series.median > top):
            continue
        beyond = series.median > top
        color = colors[series.rho] if colors is not None and series.rho is not None else styles[series.mechanism].color
        ax.plot(series.x[beyond], np.full(int(beyond.sum()), top), linestyle="none", marker="^", markersize=7,
                color=color, clip_on=False, zorder=4)
        notes.append((series.mechanism, float(series.median[beyond].max())))
    if notes:
        ax.set_ylim(top=top)
        worst = {}
        for mechanism, value in notes:
            worst[mechanism] = max(value, worst.get(mechanism, 0.0))
        text = "; ".join(f"{name} off scale (^), up to {value:.3g}" for name, value in worst.items())
        ax.text(0.02, 0.97, text, transform=ax.transAxes, va="top", ha="left", fontsize=8,
                bbox={"facecolor": "white", "edgecolor": "0.8", "alpha": 0.9})


def _draw_panel(ax, plan: PanelPlan, *, styles: Mapping[str, Style], colors: Mapping[float, tuple] | None) -> None:
    for series in plan.series:
        style = styles[series.mechanism]
        if style.rho_independent:
            color = NON_PRIVATE_COLOR
        elif colors is not None and series.rho is not None:
            color = colors[series.rho]
        else:
            color = style.color
        median, low, high = series.median, series.q25, series.q75
        if plan.logy:  # non-positive values cannot be drawn on a log axis
            median = np.where(median > 0, median, np.nan)
            low = np.where(low > 0, low, np.nan)
        lower = np.clip(np.nan_to_num(median - low, nan=0.0), 0.0, None)
        upper = np.clip(np.nan_to_num(high - median, nan=0.0), 0.0, None)
        rho_text = "" if series.rho is None else f" rho={format_rho(series.rho)}"
        if plan.statistic == "mean":  # many points: a line with a band of one standard error
            ax.fill_between(series.x, np.where(low > 0, low, np.nan) if plan.logy else low, high,
                            color=color, alpha=0.22, linewidth=0)
            ax.plot(series.x, median, color=color, linestyle=style.linestyle, linewidth=style.linewidth,
                    label=f"{series.mechanism}{rho_text}")
            continue
        ax.errorbar(
            series.x,
            median,
            yerr=np.vstack([lower, upper]),
            color=color,
            linestyle=style.linestyle,
            linewidth=style.linewidth,
            marker=style.marker or None,
            markersize=style.markersize,
            markerfacecolor="none" if style.hollow else color,
            markeredgewidth=1.3 if style.hollow or style.marker == "x" else 0.8,
            elinewidth=0.9,
            capsize=2.5,
            capthick=0.9,
            label=f"{series.mechanism}{rho_text}",
            zorder=3 if style.rho_independent else 2,
        )
    ax.set_title(plan.title)
    ax.set_xlabel(X_LABELS.get(plan.x, plan.x))
    ax.set_ylabel(_y_label(plan))
    ax.grid(True, which="major", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    xs = np.unique(np.concatenate([series.x for series in plan.series]))
    if plan.logx:
        powers_of_two = all(math.frexp(value)[0] == 0.5 for value in xs)
        ax.set_xscale("log", base=2 if powers_of_two else 10)
    if len(xs) <= 12:  # ticks at the actual grid values
        tick_format = format_rho if plan.x == "rho" else _format_tick
        ax.set_xticks(xs, labels=[tick_format(value) for value in xs])
        ax.xaxis.set_minor_locator(NullLocator())
    if plan.logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(PlainLogFormatter(labelOnlyBase=True))
        ax.yaxis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))
        _cap_companions(ax, plan, styles, colors)
    margin = 0.04 if not plan.logx else 0.0
    if margin and len(xs) > 1:
        span = xs[-1] - xs[0]
        ax.set_xlim(xs[0] - margin * span, xs[-1] + margin * span)


def _legend_entries(plans: Sequence[PanelPlan], styles: Mapping[str, Style], colors) -> list[list[tuple]]:
    """Groups of (handle, label): mechanisms by line style, then rho values by colour."""
    mechanisms = list(dict.fromkeys(m for plan in plans for m in plan.mechanisms))
    mechanism_group = []
    for mechanism in mechanisms:
        style = styles[mechanism]
        color = NON_PRIVATE_COLOR if style.rho_independent else (NEUTRAL_COLOR if colors else style.color)
        handle = Line2D(
            [], [], color=color, linestyle=style.linestyle, linewidth=style.linewidth,
            marker=style.marker or None, markersize=style.markersize,
            markerfacecolor="none" if style.hollow else color,
            markeredgewidth=1.3 if style.hollow or style.marker == "x" else 0.8,
        )
        mechanism_group.append((handle, style.label))
    groups = [mechanism_group]
    if colors:
        groups.append([(Patch(facecolor=color, edgecolor="none"), rf"$\rho$ = {format_rho(rho)}")
                       for rho, color in sorted(colors.items())])
    return groups


def _add_legend(fig: Figure, groups: list[list[tuple]], *, headers: Sequence[str]) -> None:
    """One legend below the panels: a row per group (header, then its entries), wrapped to
    fewer columns if it would be wider than the figure."""
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
        legend = fig.legend(
            [cell[0] for cell in cells], [cell[1] for cell in cells],
            loc="outside lower center", ncols=columns + 1, frameon=False,
            handlelength=3.2, columnspacing=1.4, handletextpad=0.6,
        )
        extent = legend.get_window_extent(renderer)
        if columns == 1 or extent.width <= 0.98 * width:
            # keep the panels' height whatever the number of legend rows
            fig.set_figheight(PANEL_HEIGHT_IN + 0.45 + extent.height / fig.dpi)
            return
        legend.remove()
        columns -= 1


def make_figure(spec: Mapping, summary: pd.DataFrame, metrics: Mapping | None = None) -> tuple[Figure, list[PanelPlan]]:
    """Draw a figure spec from summary rows; returns the Figure and the panel plans."""
    plans = plan_figure(spec, summary, metrics)
    styles = mechanism_styles([m for plan in plans for m in plan.mechanisms])
    all_rhos = sorted({rho for plan in plans for rho in plan.rhos})
    # Colour encodes rho when some panel draws several; otherwise the mechanism.
    colour_by_rho = any(len(plan.rhos) > 1 for plan in plans)
    colors = rho_colors(all_rhos) if colour_by_rho else None

    fig = Figure(figsize=(PANEL_WIDTH_IN * len(plans), PANEL_HEIGHT_IN + 0.9), layout="constrained")
    FigureCanvasAgg(fig)  # attaches itself; needed to measure the legend
    axes = fig.subplots(1, len(plans), squeeze=False)[0]
    for ax, plan in zip(axes, plans):
        _draw_panel(ax, plan, styles=styles, colors=colors)
    title = str(spec.get("title", ""))
    if not colour_by_rho:  # each panel draws at most one rho: say which, once if all share it
        single = {plan.rhos for plan in plans}
        if len(single) == 1 and plans[0].rhos:
            if "rho" not in title:
                title = " ".join(filter(None, [title, rf"($\rho$ = {format_rho(plans[0].rhos[0])})"]))
        else:
            for ax, plan in zip(axes, plans):
                if plan.rhos:
                    ax.set_title(f"{plan.title}\n" + rf"$\rho$ = {format_rho(plan.rhos[0])}")
    if title:
        fig.suptitle(title, fontsize="large")
    groups = _legend_entries(plans, styles, colors)
    _add_legend(fig, groups, headers=["mechanism:", r"budget $\rho$:"][: len(groups)])
    return fig, plans


# ----------------------------------------------------------------------------- job


def describe(plans: Sequence[PanelPlan], spec: Mapping) -> list[str]:
    """Log lines: one per panel, what was drawn and how many points."""
    lines = [f"figure {spec.get('title', '')!r}: {len(plans)} panel(s)"]
    for plan in plans:
        rho = f"rho={_format_values(plan.rhos)}" if plan.rhos else "rho=n/a"
        if plan.skipped_rhos:
            rho += f" (requested but absent, skipped: {_format_values(plan.skipped_rhos)})"
        lines.append(
            f"panel {plan.index + 1} {plan.title!r}: experiment={plan.experiment} x={plan.x} "
            f"measure={plan.measure} {rho} mechanisms={','.join(plan.mechanisms)} "
            f"trials={_format_values(plan.trials)}: {len(plan.series)} lines, {plan.points} points"
        )
    return lines


def figure_job(*, spec: Mapping, summaries: Sequence[str | os.PathLike], pdf, png, log,
               metrics: Mapping | None = None) -> None:
    """Snakemake entry point (workflow/rules/figures.smk): read ``summaries``, draw ``spec``,
    write ``pdf`` and ``png`` atomically and a short description to ``log``."""
    summary = read_summaries(summaries)
    fig, plans = make_figure(spec, summary, metrics)
    _save_figure(fig, pdf, png)
    _write_log(log, describe(plans, spec) + [f"wrote {pdf} and {png}"])


def _save_figure(fig: Figure, pdf, png) -> None:
    # Reproducible bytes: no creation date in the PDF, no software version in the PNG.
    write_atomically(pdf, lambda stream: fig.savefig(stream, format="pdf", metadata={"CreationDate": None}))
    write_atomically(png, lambda stream: fig.savefig(stream, format="png", dpi=PNG_DPI, metadata={"Software": None}))


def _write_log(log, lines: Sequence[str]) -> None:
    with open_log(log) as stream:
        stream.write("\n".join(lines) + "\n")


# PLAN paper Figure 2: the real datasets' per-item variances.
DATASET_TITLES = {"kosarak": "Kosarak", "pos": "POS"}
FIGURE2_TITLE = "Figure 2: per-item variances of the real datasets and the smallest variance PLAN allows, D^-2/5"


def item_variances(x) -> np.ndarray:
    """p (1 - p) per item of a sparse 0/1 matrix, from its column counts (never densified)."""
    counts = np.bincount(x.indices, minlength=x.shape[1]) if x.nnz else np.zeros(x.shape[1])
    p = counts / x.shape[0]
    return p * (1.0 - p)


def variance_histograms(matrices: Mapping[str, object]) -> Figure:
    """One panel per dataset: a histogram of the items' variances on a log axis, with the
    smallest variance PLAN-binary allows, D^-2/5 (Lemma 5.3; DESIGN.md 5.4 clips below it)."""
    fig = Figure(figsize=(5.2 * len(matrices), 3.9), layout="constrained")
    axes = fig.subplots(1, len(matrices), squeeze=False)[0]
    for ax, (name, x) in zip(axes, matrices.items()):
        variances = item_variances(x)
        positive = variances[variances > 0]
        d = x.shape[1]
        floor = d ** -0.4
        low = min(positive.min(), floor) if positive.size else floor
        high = max(positive.max(), floor) if positive.size else 0.25
        bins = np.geomspace(low / 1.05, high * 1.05, 41)
        ax.hist(positive, bins=bins, color="C0", alpha=0.85)
        ax.axvline(floor, color="C1", linewidth=2.0, label=f"$D^{{-2/5}}$ = {floor:.3g}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers, not 3 x 10^1
            axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axis.set_minor_formatter(NullFormatter())
        below = int(np.count_nonzero(variances < floor))
        ax.set_title(f"{DATASET_TITLES.get(name, name)} (n = {x.shape[0]:,}, D = {d:,}; "
                     f"{below:,} items below the line)", fontsize=10)
        ax.set_xlabel("item variance p (1 - p)")
        ax.set_ylabel("number of items")
        ax.legend(loc="upper left", frameon=False)
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(FIGURE2_TITLE)
    return fig


def figure2_job(*, datasets: Sequence[str], inputs: Sequence[str | os.PathLike], pdf, png, log) -> None:
    """Snakemake entry point (workflow/rules/datasets.smk): Figure 2 from the processed datasets."""
    from datasets.real import load

    matrices = {name: load(name, processed_dir=Path(path).parent)[0] for name, path in zip(datasets, inputs)}
    _save_figure(variance_histograms(matrices), pdf, png)
    lines = [f"{name}: n = {x.shape[0]}, D = {x.shape[1]}, items below D^-2/5: "
             f"{int(np.count_nonzero(item_variances(x) < x.shape[1] ** -0.4))}" for name, x in matrices.items()]
    _write_log(log, lines + [f"wrote {pdf} and {png}"])


# The user-level paper's analytic worst-case errors (DESIGN.md 5.7: equations (7), (8)).
WORST_CASE_TITLE = ("User-level clipping: analytic worst-case errors, OPT-wc (equations (7), (8)) "
                    "against vanilla Laplace")


def worst_case_figure(panels: Sequence[tuple[str, np.ndarray, float, np.ndarray, Sequence[int]]]) -> Figure:
    """One panel per (title, counts, bound U, eps values, dimensions): the worst-case error bound
    of OPT-wc (equation (7) for d = 1, (8) for d >= 2) and the vanilla Laplace mechanism's
    worst-case error, for each d in the panel's dimensions. Bounds on the error (worst bias plus expected noise),
    not expected errors: the Monte-Carlo figures lie below them."""
    from mechanisms.userlevel import worst_case_error_laplace, worst_case_error_opt

    columns = min(len(panels), 2)
    rows = -(-len(panels) // columns)
    fig = Figure(figsize=(PANEL_WIDTH_IN * columns, (PANEL_HEIGHT_IN + 0.3) * rows), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax, (title, counts, bound, eps_values, dimensions) in zip(axes, panels):
        eps_values = np.asarray(sorted(eps_values), dtype=float)
        for d, color in zip(dimensions, ("C0", "C3", "C2", "C4")):
            opt = [worst_case_error_opt(counts, eps=eps, bound=bound, d=d) for eps in eps_values]
            plain = [worst_case_error_laplace(counts, eps=eps, bound=bound, d=d) for eps in eps_values]
            ax.plot(eps_values, opt, color=color, linestyle="-", linewidth=1.6, label=f"OPT-wc, d = {d}")
            ax.plot(eps_values, plain, color=color, linestyle="--", linewidth=1.2, label=f"vanilla Laplace, d = {d}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(PlainLogFormatter(labelOnlyBase=True))
        ax.yaxis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))
        ax.set_title(title)
        ax.set_xlabel(X_LABELS["eps"])
        ax.set_ylabel(r"worst-case $\ell_1$ error")
        ax.grid(True, which="major", color="0.9", linewidth=0.6)
        ax.legend(frameon=False, fontsize=8)
    fig.suptitle(WORST_CASE_TITLE, fontsize=10)
    return fig


def worst_case_job(*, panels: Sequence[Mapping], pdf, png, log) -> None:
    """Snakemake entry point: ``panels`` are {title, collection parameters, bound, eps} of the
    user-level experiments (workflow/rules/figures.smk)."""
    from datasets.userlevel import collection_counts

    planned = []
    for panel in panels:
        counts = collection_counts(**panel["collection"])
        planned.append((panel["title"], counts, float(panel["bound"]), np.asarray(panel["eps"], dtype=float),
                        tuple(panel["dimensions"])))
    _save_figure(worst_case_figure(planned), pdf, png)
    _write_log(log, [f"{title}: {len(counts)} users, {int(counts.sum())} samples, {len(eps)} eps values"
                     for title, counts, _, eps, _ in planned] + [f"wrote {pdf} and {png}"])


# The privacy audit (DESIGN.md 5.8): claimed eps against the audit's lower bound.
AUDIT_TITLE = "Privacy audit: claimed eps and the lower bounds found (95 % confidence)"


def audit_figure(table: pd.DataFrame) -> Figure:
    """One row per audit: the claimed eps (bar end), the audit's lower bound eps_lower and that
    of its positive control (a deliberately broken copy), on a log axis. A lower bound beyond
    the claim is a violation."""
    rows = table.reset_index(drop=True)
    fig = Figure(figsize=(9.0, 0.42 * len(rows) + 2.0), layout="constrained")
    ax = fig.subplots()
    y = np.arange(len(rows))[::-1]
    floor = 1e-3  # a lower bound of 0 (nothing found) is drawn at the axis' left end
    claimed = rows["claimed_eps"].to_numpy(dtype=float)
    ax.barh(y, claimed, color="0.85", height=0.6, label="claimed eps")
    for column, marker, color, label in (("eps_lower", "o", "C0", "audit: eps lower bound"),
                                         ("control_eps_lower", "x", "C3", "positive control: eps lower bound")):
        values = np.maximum(rows[column].to_numpy(dtype=float), floor)
        ax.scatter(values, y, marker=marker, color=color, zorder=3, label=label)
    for position, bound, violated in zip(y, claimed, rows["violation"].astype(bool)):
        if violated:
            ax.annotate("violation", (bound, position), xytext=(4, -3), textcoords="offset points", fontsize=8,
                        color="C3")
    ax.set_yticks(y, labels=[f"{name} ({accounting})" for name, accounting in zip(rows["name"], rows["accounting"])])
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda value, _: f"{value:g}" if str(f"{value:g}")[0] in "25" else ""))
    ax.set_xlabel(r"$\varepsilon$ (pure, or at the audit's $\delta$; a bound of 0 is drawn at the left edge)")
    ax.grid(True, axis="x", which="major", color="0.9", linewidth=0.6)
    fig.legend(loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    ax.set_title(AUDIT_TITLE, fontsize=10)
    return fig


def audit_figure_job(*, table, pdf, png, log) -> None:
    """Snakemake entry point: the audit figure from results/audit/audit.csv."""
    frame = pd.read_csv(table)
    _save_figure(audit_figure(frame), pdf, png)
    _write_log(log, [f"{len(frame)} audits", f"wrote {pdf} and {png}"])
