"""PLAN paper Figure 2: a histogram of the real datasets' per-item variances, with the smallest
variance PLAN-binary allows."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from ..styles import ALERT, INK
from .common import lettered

DATASET_TITLES = {"kosarak": "Kosarak", "pos": "POS"}
FIGURE2_TITLE = "Figure 2: per-item variances of the real datasets and the smallest variance PLAN allows, D^-2/5"


def item_variances(x) -> np.ndarray:
    """p (1 - p) per item of a sparse 0/1 matrix, from its column counts (never densified)."""
    counts = np.bincount(x.indices, minlength=x.shape[1]) if x.nnz else np.zeros(x.shape[1])
    p = counts / x.shape[0]
    return p * (1.0 - p)


def variance_histograms(matrices: Mapping[str, object]) -> Figure:
    """One panel per dataset: a histogram of the items' variances on a log axis, with the
    smallest variance PLAN-binary allows, D^-2/5 (Lemma 5.3; docs/design.md §5.4 clips below it)."""
    fig = Figure(figsize=(5.2 * len(matrices), 3.9), layout="constrained")
    axes = fig.subplots(1, len(matrices), squeeze=False)[0]
    for index, (ax, (name, x)) in enumerate(zip(axes, matrices.items())):
        variances = item_variances(x)
        positive = variances[variances > 0]
        d = x.shape[1]
        floor = d ** -0.4
        low = min(positive.min(), floor) if positive.size else floor
        high = max(positive.max(), floor) if positive.size else 0.25
        bins = np.geomspace(low / 1.05, high * 1.05, 41)
        ax.hist(positive, bins=bins, color=INK, alpha=0.6)  # data, not a mechanism: neutral inks
        ax.axvline(floor, color=ALERT, linewidth=2.0, label=f"$D^{{-2/5}}$ = {floor:.3g}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers, not 3 x 10^1
            axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axis.set_minor_formatter(NullFormatter())
        below = int(np.count_nonzero(variances < floor))
        title = f"{DATASET_TITLES.get(name, name)} (n = {x.shape[0]:,}, D = {d:,}; {below:,} items below the line)"
        ax.set_title(lettered(title, index) if len(matrices) > 1 else title, fontsize=10)
        ax.set_xlabel("item variance p (1 - p)")
        ax.set_ylabel("number of items")
        ax.legend(loc="upper left", frameon=False)
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(FIGURE2_TITLE)
    return fig
