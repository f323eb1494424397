"""The privacy audit's figure (docs/design.md §5.8): the lower bound each audit and its positive
control found, as a multiple of the claim (rho for zCDP claims, eps for pure-DP ones)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

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
    ax.axvline(1.0, color="0.4", linewidth=1.0, zorder=1, label="the claim")
    for column, marker, color, label in (("lower_bound", "o", "C0", "audit"),
                                         ("control_lower_bound", "x", "C3", "positive control (broken copy)")):
        ratios = np.maximum(rows[column].to_numpy(dtype=float) / claimed, RATIO_FLOOR)
        ax.scatter(ratios, y, marker=marker, color=color, zorder=3, label=label)
    for position, ratio, violated in zip(y, rows["lower_bound"] / claimed, rows["violation"].astype(bool)):
        if violated:
            ax.annotate("violation", (ratio, position), xytext=(6, -3), textcoords="offset points", fontsize=8,
                        color="C3")
    ax.set_yticks(y, labels=[f"{name} ({accounting}, {measure})" for name, accounting, measure
                             in zip(rows["name"], rows["accounting"], rows["measure"])])
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.set_xlabel("lower bound / claimed budget (rho for rho-zCDP claims, eps for eps-DP ones; "
                  "a bound of 0 is drawn at the left edge)")
    ax.grid(True, axis="x", which="major", color="0.9", linewidth=0.6)
    fig.legend(loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    ax.set_title(AUDIT_TITLE, fontsize=10)
    return fig
