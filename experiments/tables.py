"""Tables of the paper built from summaries."""
from __future__ import annotations

import pandas as pd

from .config import format_value
from .joblog import open_log
from .summary import write_csv_atomically

TABLE2_CAPTION = (
    "Table 2: average relative error |sigma_hat^2 - sigma^2| / sigma^2 of private variance estimates "
    "(n = 10000 draws of N(10, sigma^2), mean over the trials of each cell)."
)


def table2(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per method, one column per (rho, variance) setting, holding the mean relative
    error (DESIGN.md 5.6; the paper reports averages, so the ``mean`` column)."""
    frame = summary.copy()
    frame["setting"] = [f"rho={format_value(r)}, sigma^2={format_value(v)}"
                        for r, v in zip(frame["rho"], frame["variance"])]
    order = list(dict.fromkeys(frame.sort_values(["rho", "variance"])["setting"]))
    table = frame.pivot(index="mechanism", columns="setting", values="mean")
    table = table.loc[list(dict.fromkeys(frame["mechanism"])), order]
    return table.reset_index().rename(columns={"mechanism": "method"})


def table2_job(*, summary, output, log):
    table = table2(pd.read_csv(summary))
    write_csv_atomically(table, output)
    with open(f"{output}.caption.txt", "w") as stream:
        stream.write(TABLE2_CAPTION + "\n")
    with open_log(log) as stream:
        print(f"Table 2: {len(table)} methods x {len(table.columns) - 1} settings", file=stream)
