"""The privacy audit's figures (docs/design.md §5.8): the lower bound each audit and its positive
control found, as a multiple of the claim (rho for zCDP claims, eps for pure-DP ones); the
audit's power curves (experiments/audit/power.py)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from ...audit.power import FALSE_ALARM_LIMIT, POWER_MECHANISMS
from ..styles import ALERT, BLACK, INK, REFERENCE, SERIES_LABELS, format_rho, mechanism_style, series_style
from .common import lettered

AUDIT_TITLE = "Privacy audit: lower bounds found (95 % confidence), as multiples of the claim"
RATIO_FLOOR = 1e-2  # a lower bound of 0 (nothing found) is drawn at the axis' left end


def audit_figure(table: pd.DataFrame) -> Figure:
    """One row per audit: the audit's lower bound and its positive control's (a deliberately
    broken copy), each divided by the claim in the claim's own measure, on a log axis. Right of
    the line at 1 is a violation."""
    rows = table.reset_index(drop=True)
    fig = Figure(figsize=(9.0, 0.42 * len(rows) + 2.0), layout="constrained")
    ax = fig.subplots()
    y = np.arange(len(rows))[::-1]
    claimed = rows["claimed"].to_numpy(dtype=float)
    ax.axvline(1.0, color=REFERENCE, linewidth=1.0, zorder=1, label="the claim")
    # neutral inks (experiments/outputs/styles.py): these marks are audits, not mechanisms' curves
    for column, marker, color, label in (("lower_bound", "o", INK, "audit"),
                                         ("control_lower_bound", "x", REFERENCE, "positive control (broken copy)")):
        ratios = np.maximum(rows[column].to_numpy(dtype=float) / claimed, RATIO_FLOOR)
        ax.scatter(ratios, y, marker=marker, color=color, zorder=3, label=label)
    for position, ratio, violated in zip(y, rows["lower_bound"] / claimed, rows["violation"].astype(bool)):
        if violated:
            ax.annotate("violation", (ratio, position), xytext=(0, -6), textcoords="offset points", fontsize=8,
                        ha="center", va="top", color=ALERT)  # below its point, clear of the control's cross
    ax.set_yticks(y, labels=[f"{name} ({accounting}, {measure})" for name, accounting, measure
                             in zip(rows["name"], rows["accounting"], rows["measure"])])
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.set_xlabel("lower bound / claimed budget (rho or eps, the claim's measure)\n"
                  "a bound of 0 is drawn at the left edge")
    ax.grid(True, axis="x", which="major", color="0.9", linewidth=0.6)
    fig.legend(loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle(AUDIT_TITLE, fontsize=10)  # over the whole figure: the long row labels leave the axes narrow
    return fig


POWER_TITLE = "Privacy audit: how often it flags a mechanism that spends more than it claims (95 % confidence)"
POWER_PANEL_INCHES = (4.6, 3.6)
DODGE = 1.045  # neighbouring breaks' points are drawn this factor apart on the runs axis
LIMIT_COLOR = REFERENCE  # the false-alarm limit: a thin grey line (the breaks' lines have the mechanism's colour)


def _power_panel_title(mechanism: str, rows: pd.DataFrame) -> str:
    spec = POWER_MECHANISMS.get(mechanism)
    label = spec.label if spec else mechanism
    measure, claim = rows["measure"].iloc[0], float(rows["claim"].iloc[0])
    symbol = r"\rho" if measure == "rho" else r"\varepsilon"
    claimed = f"claim ${symbol}$ = {claim:.4g}"
    if spec is not None and spec.budget_name != measure:  # the exponential quantile: eps from rho
        claimed += f" (at $\\rho$ = {format_rho(claim * claim / 8.0)})"
    return f"{label}\n{claimed}"


def power_figure(table: pd.DataFrame) -> Figure:
    """The audit's power curves (experiments/audit/power.py): one panel per mechanism, the share of
    repetitions that flagged a violation (its 95 % Clopper-Pearson interval as bars) against the
    runs per dataset (log axis), one line per break (dash and marker: experiments.outputs.styles'
    break styles; colour: the mechanism's), and the false-alarm limit 1 - confidence = 0.05
    that break 1, the correct mechanism, must stay below."""
    mechanisms = list(dict.fromkeys(table["mechanism"]))
    if not mechanisms:
        raise ValueError("the power table has no rows")
    width, height = POWER_PANEL_INCHES
    fig = Figure(figsize=(width * len(mechanisms), height + 1.3), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(mechanisms), sharey=True))
    breaks = list(dict.fromkeys(table["break"].astype(float)))
    for index, (ax, mechanism) in enumerate(zip(axes, mechanisms)):
        rows = table[table["mechanism"] == mechanism]
        color = mechanism_style(POWER_MECHANISMS[mechanism].style if mechanism in POWER_MECHANISMS
                                else mechanism).color
        ax.axhline(FALSE_ALARM_LIMIT, color=LIMIT_COLOR, linewidth=1.0, zorder=1)
        for position, value in enumerate(breaks):
            curve = rows[np.isclose(rows["break"].astype(float), value)].sort_values("runs")
            if curve.empty:
                continue
            style = series_style("break", value)
            runs = curve["runs"].to_numpy(dtype=float) * DODGE ** (position - (len(breaks) - 1) / 2)
            power = curve["power"].to_numpy(dtype=float)
            spread = np.vstack([power - curve["power_low"].to_numpy(dtype=float),
                                curve["power_high"].to_numpy(dtype=float) - power])
            ax.errorbar(runs, power, yerr=np.maximum(spread, 0.0), color=color, linestyle=style.dashes,
                        marker=style.marker, markersize=5, linewidth=1.5, elinewidth=0.8, capsize=2, zorder=3)
        ax.set_xscale("log")
        ticks = sorted(set(rows["runs"].astype(int)))
        ax.set_xticks(ticks, labels=[_runs_label(value) for value in ticks])
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda value, _: ""))
        ax.set_ylim(-0.04, 1.04)
        ax.set_xlabel("runs (draws per dataset)")
        title = _power_panel_title(mechanism, rows)
        ax.set_title(lettered(title, index) if len(mechanisms) > 1 else title, fontsize=10)
        ax.grid(True, which="major", color="0.9", linewidth=0.6)
    axes[0].set_ylabel("share of audits that flag a violation")
    handles = [Line2D([], [], color=BLACK, linestyle=series_style("break", value).dashes, linewidth=1.5,
                      marker=series_style("break", value).marker, markersize=5,
                      label=f"\u00d7{value:g}" + (" (the correct mechanism)" if np.isclose(value, 1.0) else ""))
               for value in breaks]
    handles.append(Line2D([], [], color=LIMIT_COLOR, linewidth=1.0,
                          label=f"{FALSE_ALARM_LIMIT:.2g} = 1 - confidence: the most break 1 may be flagged"))
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=8, frameon=False,
               title=f"{SERIES_LABELS['break']}; colour: mechanism; bars: 95 % Clopper-Pearson interval",
               title_fontsize=8)
    fig.suptitle(POWER_TITLE, fontsize=11)
    return fig


def _runs_label(value: int) -> str:
    """10^k as a power of ten, other values as written."""
    exponent = math.log10(value)
    return f"$10^{{{int(round(exponent))}}}$" if math.isclose(exponent, round(exponent)) else f"{value:g}"
