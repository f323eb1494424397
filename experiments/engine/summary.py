"""Summaries over trials (docs/design.md §3): median, quartiles, mean and std per mechanism and cell,
the 10 % trimmed mean with its standard error (the CoinPress paper's statistic), and the tail: the
largest value and the number of trials above 3x the median.

Three measures per trial row: ``error`` (to the truth), ``error_vs_empirical`` (to the sample's
own mean) and, where the experiment runs the non-private empirical mean, the error relative to
the empirical mean as the PLAN paper's Figure 3(c) draws it (its authors' plotting notebook):
|error - mean error of the empirical mean over the cell's trials| (suffix
``_relative_to_empirical``). An experiment's ``extra_metrics`` add the same two measures of
other errors of the same estimates (``error_<metric>``, suffix ``_<metric>``).

Where a mechanism reports the zCDP it truly spends (the cell files' ``true_rho``), the summary
also gives the median over trials of true_rho / rho (``true_rho_over_rho``; the accounting
erratum, docs/design.md §5.0, reads it).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

STATISTICS = ("median", "q25", "q75", "mean", "std", "se", "trimmed_mean", "trimmed_mean_se", "max",
              "above_3x_median")
TAIL_MULTIPLE = 3  # above_3x_median counts the trials above this multiple of the median (the scorecard's tail)
TRIM = 0.1  # the trimmed mean drops floor(TRIM * trials) trials at each end (the CoinPress paper's 10 %)
SUFFIXES = ("", "_vs_empirical", "_relative_to_empirical")
TRUE_RHO_FACTOR = "true_rho_over_rho"
NON_GRID_COLUMNS = {"experiment", "mechanism", "trials", TRUE_RHO_FACTOR,
                    *(f"{s}{suffix}" for s in STATISTICS for suffix in SUFFIXES)}


def _statistics(values: pd.Series, suffix: str = "") -> dict:
    std = values.std(ddof=1)
    return {
        f"median{suffix}": values.median(),
        f"q25{suffix}": values.quantile(0.25),
        f"q75{suffix}": values.quantile(0.75),
        f"mean{suffix}": values.mean(),
        f"std{suffix}": std,
        # the standard error of the mean (the user-level figures' bands, docs/design.md §5.7)
        f"se{suffix}": std / math.sqrt(values.count()) if values.count() else math.nan,
        **dict(zip((f"trimmed_mean{suffix}", f"trimmed_mean_se{suffix}"), trimmed_mean(values.to_numpy(float)))),
        # the tail, which a mean +- se can hide (the scorecard judges heavy tails on it: docs/workflow.md)
        f"max{suffix}": values.max(),
        f"above_3x_median{suffix}": int((values > TAIL_MULTIPLE * values.median()).sum()),
    }


def trimmed_mean(values, trim: float = TRIM) -> tuple[float, float]:
    """(trimmed mean, its standard error) of ``values`` without their NaNs (as the other statistics
    skip them): the mean after dropping the
    floor(trim n) smallest and largest, and the standard error of Tukey and McLaughlin (1963),
    s_w sqrt(n) / h, s_w the standard deviation (ddof 1) of the values winsorized at the same
    cuts and h = n - 2 floor(trim n) the values kept. NaN where nothing is kept (and the standard
    error where fewer than 2 values are)."""
    ordered = np.sort(np.asarray(values, dtype=float))
    ordered = ordered[~np.isnan(ordered)]
    n = ordered.size
    cut = math.floor(trim * n)
    kept = n - 2 * cut
    if kept < 1:
        return math.nan, math.nan
    mean = float(ordered[cut:n - cut].mean())
    if n < 2:
        return mean, math.nan
    winsorized = np.clip(ordered, ordered[cut], ordered[n - cut - 1])
    return mean, float(winsorized.std(ddof=1)) * math.sqrt(n) / kept


def summarise(trials: pd.DataFrame, grid_names: list[str], *, empirical: str | None = None) -> pd.DataFrame:
    """One row per experiment, mechanism and cell with statistics of ``error``, of
    ``error_vs_empirical`` (suffix ``_vs_empirical``) and, when ``empirical`` names the
    experiment's empirical-mean mechanism, of the error relative to it (suffix
    ``_relative_to_empirical``, module docstring), and of every further error column
    ``error_<metric>`` and ``error_<metric>_vs_empirical`` (an experiment's ``extra_metrics``;
    suffixes ``_<metric>`` and ``_<metric>_vs_empirical``). Mechanisms keep their config order."""
    keys = ["experiment", "mechanism", *grid_names]
    order = list(dict.fromkeys(trials["mechanism"]))
    if empirical is not None and empirical not in order:
        raise ValueError(f"empirical={empirical!r} is not a mechanism of the trials ({', '.join(order)})")
    reference = None
    if empirical is not None:
        # per cell: the empirical mean's mean error over the cell's trials
        cells = ["experiment", *grid_names]
        reference = trials[trials["mechanism"] == empirical].groupby(cells, sort=False)["error"].mean()
    extra_columns = [c for c in trials.columns if c.startswith("error_") and c != "error_vs_empirical"]
    # only experiments with a mechanism that reports its true zCDP get the column
    true_rho = "rho" in trials and "true_rho" in trials and trials["true_rho"].notna().any()
    rows = []
    for group_key, group in trials.groupby(keys, sort=False):
        row = dict(zip(keys, group_key))
        row["trials"] = len(group)
        if "refused" in group:  # rows of a mechanism that released nothing (experiments/engine/trials.py)
            row["refused"] = int(group["refused"].notna().sum())
        row.update(_statistics(group["error"]))
        # batched (user-level) cells keep only the error: their target is the sample's own statistic
        if "error_vs_empirical" in group:
            row.update(_statistics(group["error_vs_empirical"], "_vs_empirical"))
        for column in extra_columns:  # an experiment's extra_metrics: error_<metric>[_vs_empirical]
            row.update(_statistics(group[column], column.removeprefix("error")))
        if true_rho:
            row[TRUE_RHO_FACTOR] = (group["true_rho"] / group["rho"]).median()
        if reference is not None:
            cell = tuple(row[key] for key in ["experiment", *grid_names])
            row.update(_statistics((group["error"] - reference.loc[cell if len(cell) > 1 else cell[0]]).abs(),
                                   "_relative_to_empirical"))
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["_order"] = frame["mechanism"].map(order.index)
    return frame.sort_values(["_order", *grid_names], kind="stable").drop(columns="_order").reset_index(drop=True)


def grid_columns(summary: pd.DataFrame) -> list[str]:
    """The grid parameters of a summary: the columns between ``mechanism`` and ``trials``
    (:func:`summarise` writes them there), else every column that is not a key or a statistic."""
    columns = list(summary.columns)
    if "mechanism" in columns and "trials" in columns and columns.index("mechanism") < columns.index("trials"):
        return columns[columns.index("mechanism") + 1:columns.index("trials")]
    return [column for column in columns if column not in NON_GRID_COLUMNS]
