"""The user-level paper's analytic worst-case errors (docs/design.md §5.7: equations (7), (8)): OPT-wc
against the vanilla Laplace mechanism, one panel per user-level experiment."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from mechanisms.userlevel import worst_case_error_laplace, worst_case_error_opt

from ..styles import mechanism_style
from .common import PANEL_HEIGHT_IN, PANEL_WIDTH_IN, X_LABELS, PlainLogFormatter, lettered

WORST_CASE_TITLE = ("User-level clipping: analytic worst-case errors, OPT-wc (equations (7), (8)) "
                    "against vanilla Laplace")


def worst_case_figure(panels: Sequence[tuple[str, np.ndarray, float, np.ndarray, Sequence[int]]]) -> Figure:
    """One panel per (title, counts, bound U, eps values, dimensions): the worst-case error bound
    of OPT-wc (equation (7) for d = 1, (8) for d >= 2) and the vanilla Laplace mechanism's
    worst-case error, for each d in the panel's dimensions. Bounds on the error (worst bias plus expected noise),
    not expected errors: the Monte-Carlo figures lie below them."""
    columns = min(len(panels), 2)
    rows = -(-len(panels) // columns)
    fig = Figure(figsize=(PANEL_WIDTH_IN * columns, (PANEL_HEIGHT_IN + 0.3) * rows), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for index, (ax, (title, counts, bound, eps_values, dimensions)) in enumerate(zip(axes, panels)):
        eps_values = np.asarray(sorted(eps_values), dtype=float)
        # colour = mechanism (experiments.outputs.styles), dash = d
        for d, dashes in zip(dimensions, ("-", (0, (5, 2.5)), ":", "-.")):
            opt = [worst_case_error_opt(counts, eps=eps, bound=bound, d=d) for eps in eps_values]
            plain = [worst_case_error_laplace(counts, eps=eps, bound=bound, d=d) for eps in eps_values]
            ax.plot(eps_values, opt, color=mechanism_style("OPT-wc").color, linestyle=dashes, linewidth=1.7,
                    label=f"OPT-wc, d = {d}")
            ax.plot(eps_values, plain, color=mechanism_style("Laplace").color, linestyle=dashes, linewidth=1.7,
                    label=f"vanilla Laplace, d = {d}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(PlainLogFormatter(labelOnlyBase=True))
        ax.yaxis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))
        ax.set_title(lettered(title, index) if len(panels) > 1 else title)
        ax.set_xlabel(X_LABELS["eps"])
        ax.set_ylabel(r"worst-case $\ell_1$ error")
        ax.grid(True, which="major", color="0.9", linewidth=0.6)
        ax.legend(frameon=False, fontsize=8)
    fig.suptitle(WORST_CASE_TITLE, fontsize=10)
    return fig
