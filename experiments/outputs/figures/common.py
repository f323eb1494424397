"""What the figure families share: panel sizes, axis labels, plain log-axis tick labels, and how
a figure is written: PDF without creation date and PNG without software version (reproducible
bytes), each to a temporary file beside the target and renamed (no partial files)."""
from __future__ import annotations

import re
from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatter

from ...engine.atomic import write_atomically
from ...engine.joblog import open_log

PANEL_WIDTH_IN = 4.6
PANEL_HEIGHT_IN = 3.8
PNG_DPI = 150

X_LABELS = {"d": "dimension d", "alpha": r"skew exponent $\alpha$", "rho": r"privacy budget $\rho$ (zCDP)",
            "eps": r"privacy budget $\varepsilon$ (pure DP)",
            "ratio": r"share of coordinates with $p = 1/2$ (the rest $p = 0.01$)", "n": "samples n",
            "radius_scale": r"prior radius $R / \sqrt{d}$"}


PANEL_LETTER = re.compile(r"\([a-z]\)(\s|$)")


def lettered(title: str, index: int) -> str:
    """A multi-panel figure's panel title with its letter, "(a) ", "(b) ", ... by position, unless it
    carries one already (a paper's own, e.g. Figure 5's "(b) Kosarak")."""
    return title if PANEL_LETTER.match(title) else f"({chr(ord('a') + index)}) {title}"


class PlainLogFormatter(LogFormatter):
    """Log-axis tick labels as plain numbers (0.2, 1, 300) instead of 2 x 10^-1; which
    ticks get a label is left to matplotlib's LogFormatter (decades, and minor ticks when
    the axis spans few decades)."""

    def __call__(self, x, pos=None):
        label = super().__call__(x, pos)
        return f"{x:g}" if label else ""


def save_figure(fig: Figure, pdf, png) -> None:
    """``fig`` as PDF and PNG, each written atomically with reproducible bytes."""
    write_atomically(pdf, lambda stream: fig.savefig(stream, format="pdf", metadata={"CreationDate": None}))
    write_atomically(png, lambda stream: fig.savefig(stream, format="png", dpi=PNG_DPI, metadata={"Software": None}))


def write_log(log, lines: Sequence[str]) -> None:
    """``lines`` appended to the job's log."""
    with open_log(log) as stream:
        stream.write("\n".join(lines) + "\n")
