"""The privacy audit's figure (docs/design.md §5.8): each audit's claimed eps against the lower bounds
it and its positive control found."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

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
