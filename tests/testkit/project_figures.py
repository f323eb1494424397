"""Every figure of the project drawn as the workflow draws it, for the figure tests
(tests/experiments/test_figure_texts.py, test_figure_styles.py): the config figures from the
committed summaries, the audit, power and errata figures from the committed tables, the worst-case
figure, the illustrations and PLAN Figure 2 (on made-up sparse data)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from matplotlib.figure import Figure

from experiments.jobs.figures import worst_case_panels
from experiments.outputs.errata import accounting_figure, noscale_figure, noscale_setup
from experiments.outputs.figures.audit import audit_figure, power_figure
from experiments.outputs.figures.dataset_variances import variance_histograms
from experiments.outputs.figures.paper import make_figure, read_summaries
from experiments.outputs.figures.worst_case import worst_case_figure
from experiments.outputs.illustrations import draw
from experiments.planning import paths
from experiments.planning.config_files import load_config
from experiments.planning.run_plan import RunPlan

REPO = Path(__file__).resolve().parents[2]
CONFIG = load_config(REPO / "config" / "config.yaml", default=None)
PLAN = RunPlan(CONFIG)


def committed(path: str) -> Path:
    return REPO / path


def summary_paths(spec) -> list[Path]:
    return [committed(paths.fill(paths.SUMMARY, experiment=experiment))
            for experiment in dict.fromkeys(panel["experiment"] for panel in spec["panels"])]


# The config figures that need a real dataset: their summaries cannot be committed here (docs/results.md).
REAL_DATA_FIGURES = {name for name, spec in CONFIG["figures"].items()
                     if not all(path.exists() for path in summary_paths(spec))}
DRAWN_CONFIG_FIGURES = sorted(set(CONFIG["figures"]) - REAL_DATA_FIGURES)
TABLE_FIGURES = ("audit", "audit_power", "errata_accounting", "errata_noscale")


def config_figure(name: str) -> Figure:
    spec = CONFIG["figures"][name]
    figure, _ = make_figure(spec, read_summaries(summary_paths(spec)), PLAN.report.scorecard_metrics()[name])
    return figure


def table_figure(name: str) -> Figure:
    """One of TABLE_FIGURES from the committed tables."""
    if name == "errata_noscale":
        noscale = noscale_setup(CONFIG, PLAN.experiments)
        summary = committed(paths.fill(paths.SUMMARY, experiment=noscale["experiment"]))
        return noscale_figure(pd.read_csv(summary), pd.read_csv(committed(noscale["reference"])), noscale)
    draw_table, table = {"audit": (audit_figure, paths.AUDIT_TABLE), "audit_power": (power_figure, paths.POWER_TABLE),
                         "errata_accounting": (accounting_figure, paths.ERRATA_ACCOUNTING)}[name]
    return draw_table(pd.read_csv(committed(table)))


def user_level_worst_case_figure() -> Figure:
    """The worst-case figure of the config's user-level experiments, as its job draws it."""
    return worst_case_figure(worst_case_panels(PLAN.targets.worst_case_panels()))


def illustration_figure(name: str) -> Figure:
    return draw(name, CONFIG["illustrations"][name], seed=int(CONFIG["seed"])).figure


def plan_figure_2() -> Figure:
    rng = np.random.default_rng(0)
    matrices = {name: sp.random(2000, columns, density=0.01, format="csr", random_state=rng, data_rvs=np.ones)
                for name, columns in (("kosarak", 3000), ("pos", 1657))}
    return variance_histograms(matrices)
