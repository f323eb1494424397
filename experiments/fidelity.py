"""Fidelity table: our medians against the published ones (config/reference/README.md).

One row per setting and mechanism present in both our summary and the reference table:
our median over the published median, with both trial counts. With 50 trials a median has
a few per cent of Monte-Carlo spread, so a ratio in [0.85, 1.15] is agreement.

The target (``target_applies``) is the issue's: every PLAN (published accounting) and IOME
ratio for d <= 1024, and coordinate_median (budget share 0.25, published accounting) against
the published PLAN-noscale curve (DESIGN.md 5.3 errata) likewise. We also hold the
non-private empirical mean to it, at every d: it checks that our data match the published
data (n, d, scale). Its spread is no wider than the private mechanisms', and if it is off,
none of the other ratios mean anything.
"""
from __future__ import annotations

import pandas as pd

from .config import format_value
from .summary import STATISTICS, write_csv_atomically

LOW, HIGH = 0.85, 1.15  # agreement band for a ratio of medians over 50 trials

# (published mechanism, ours) -> largest d the target covers (None: every d).
TARGETS = {
    ("PLAN", "PLAN"): 1024,
    ("IOME", "IOME"): 1024,
    ("PLAN-noscale(published)", "coordinate_median"): 1024,
    ("empirical_mean", "empirical_mean"): None,
}

_NOT_GRID = {"experiment", "mechanism", "trials", *STATISTICS, *(f"{s}_vs_empirical" for s in STATISTICS)}


def grid_columns(summary: pd.DataFrame) -> list[str]:
    """The grid parameters of a summary (DESIGN.md 3): every column that is not a key or a statistic."""
    return [column for column in summary.columns if column not in _NOT_GRID]


def target_applies(published: str, ours: str, d=None) -> bool:
    """Whether the agreement target covers this row (see the module docstring)."""
    if (published, ours) not in TARGETS:
        return False
    max_d = TARGETS[(published, ours)]
    return max_d is None or d is None or float(d) <= max_d


def fidelity_table(summary: pd.DataFrame, reference: pd.DataFrame, names: dict) -> pd.DataFrame:
    """Rows for the settings and mechanisms in both tables, matched on every grid column of
    ``summary`` that the reference also has (reference-only columns such as n are ignored).

    ``names`` maps published mechanism names to ours; the row order follows ``names`` and
    then our summary's order."""
    shared = [column for column in grid_columns(summary) if column in reference.columns]
    if not shared:
        raise ValueError(f"summary and reference share no grid column (summary grid: {grid_columns(summary)})")
    experiments = set(reference["experiment"]) if "experiment" in reference.columns else set()
    ours_experiment = set(summary["experiment"])
    if len(experiments) > 1:
        reference = reference[reference["experiment"].isin(ours_experiment)]

    def keyed(frame):
        frame = frame.copy()
        frame["_key"] = list(zip(*(frame[column].map(format_value) for column in shared)))
        return frame

    ours, published = keyed(summary), keyed(reference)
    rows = []
    for published_name, our_name in names.items():
        mine = ours[ours["mechanism"] == our_name]
        theirs = published[published["mechanism"] == published_name]
        if theirs["_key"].duplicated().any():
            raise ValueError(f"reference has several {published_name!r} rows per setting of {shared}: "
                             "it varies a parameter that our grid does not")
        theirs = {match["_key"]: match for _, match in theirs.iterrows()}
        for _, row in mine.iterrows():
            if row["_key"] not in theirs:
                continue
            match = theirs[row["_key"]]
            ratio = row["median"] / match["median"] if match["median"] > 0 else float("nan")
            rows.append(
                {
                    "mechanism": our_name,
                    "published_mechanism": published_name,
                    **{column: row[column] for column in shared},
                    "ours_median": row["median"],
                    "published_median": match["median"],
                    "ratio": ratio,
                    "ours_trials": int(row["trials"]),
                    "published_trials": int(match["trials"]),
                    "within_target": bool(LOW <= ratio <= HIGH),
                    "target_applies": target_applies(published_name, our_name, row["d"] if "d" in shared else None),
                }
            )
    columns = ["mechanism", "published_mechanism", *shared, "ours_median", "published_median", "ratio",
               "ours_trials", "published_trials", "within_target", "target_applies"]
    return pd.DataFrame(rows, columns=columns)


def verdict(table: pd.DataFrame, experiment: str = "") -> str:
    """One line: how many targeted ratios lie in [0.85, 1.15], and which do not."""
    targeted = table[table["target_applies"].astype(bool)]
    outside = targeted[~targeted["within_target"].astype(bool)]
    prefix = f"{experiment}: " if experiment else ""
    head = (f"{prefix}{len(targeted) - len(outside)} of {len(targeted)} targeted ratios within "
            f"{LOW:g}..{HIGH:g} ({len(table)} settings matched)")
    if targeted.empty:
        return head + "; no row is covered by the target"
    if outside.empty:
        return head + "; target met"
    grid = [c for c in table.columns if c not in {"mechanism", "published_mechanism", "ours_median", "published_median",
                                                  "ratio", "ours_trials", "published_trials", "within_target",
                                                  "target_applies"}]
    listed = ", ".join(
        f"{row['mechanism']} " + " ".join(f"{c}={format_value(row[c])}" for c in grid) + f" ({row['ratio']:.3g})"
        for _, row in outside.head(5).iterrows()
    )
    more = f" and {len(outside) - 5} more" if len(outside) > 5 else ""
    return head + f"; target NOT met, outside: {listed}{more}"


def fidelity_job(*, summary, reference, names, output, log):
    """Snakemake job: results/fidelity/<experiment>.csv from a summary and a reference CSV."""
    ours = pd.read_csv(summary)
    table = fidelity_table(ours, pd.read_csv(reference), dict(names))
    write_csv_atomically(table, output)
    experiment = ", ".join(dict.fromkeys(ours["experiment"].astype(str)))
    with open(log, "w") as stream:
        print(verdict(table, experiment), file=stream)
