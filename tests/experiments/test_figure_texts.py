"""Every figure reads cleanly: drawn as the workflow draws it (the config figures from the committed
summaries, the audit, power and errata figures from the committed tables, the worst-case figure,
the illustrations and PLAN Figure 2), no two of its texts overlap and none leaves the canvas,
measured with matplotlib's text extents after the layout.

The texts are those a reader sees: titles, axis labels, the tick labels of ticks inside the axes'
limits, annotations, figure texts and legend texts.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from experiments.jobs.figures import worst_case_job
from experiments.outputs.errata import accounting_figure, noscale_figure, noscale_setup
from experiments.outputs.figures.audit import audit_figure, power_figure
from experiments.outputs.figures.dataset_variances import variance_histograms
from experiments.outputs.figures.paper import make_figure, read_summaries
from experiments.outputs.illustrations import draw
from experiments.planning import paths
from experiments.planning.config_files import load_config
from experiments.planning.run_plan import RunPlan

REPO = Path(__file__).resolve().parents[2]
CONFIG = load_config(REPO / "config" / "config.yaml", default=None)
PLAN = RunPlan(CONFIG)
TOLERANCE_PX = 0.5  # extents touching within half a pixel (antialiasing) are not an overlap


def committed(path: str) -> Path:
    return REPO / path


def summary_paths(spec) -> list[Path]:
    return [committed(paths.fill(paths.SUMMARY, experiment=experiment))
            for experiment in dict.fromkeys(panel["experiment"] for panel in spec["panels"])]


# The config figures that need a real dataset: their summaries cannot be committed here (docs/results.md).
REAL_DATA_FIGURES = {name for name, spec in CONFIG["figures"].items()
                     if not all(path.exists() for path in summary_paths(spec))}


def visible_texts(figure: Figure) -> list:
    """Every visible, non-empty text of ``figure`` but the tick labels of ticks outside their axes'
    limits (matplotlib keeps those, and does not draw them)."""
    hidden = set()
    for ax in figure.findobj(Axes):  # inset axes too, which figure.axes leaves out
        for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            low, high = min(limits), max(limits)
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if not low <= tick.get_loc() <= high:
                    hidden.update((tick.label1, tick.label2))
    return [text for text in figure.findobj(Text)
            if text not in hidden and text.get_visible() and text.get_text().strip()]


def text_problems(figure: Figure) -> list[str]:
    """Each pair of overlapping texts and each text beyond the canvas, in words."""
    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    width, height = figure.bbox.width, figure.bbox.height
    extents = [(text.get_text(), text.get_window_extent(renderer)) for text in visible_texts(figure)]
    problems = [f"{label!r} leaves the canvas" for label, box in extents
                if box.x0 < -TOLERANCE_PX or box.y0 < -TOLERANCE_PX
                or box.x1 > width + TOLERANCE_PX or box.y1 > height + TOLERANCE_PX]
    for (first, a), (second, b) in itertools.combinations(extents, 2):
        overlap_x = min(a.x1, b.x1) - max(a.x0, b.x0)
        overlap_y = min(a.y1, b.y1) - max(a.y0, b.y0)
        if overlap_x > TOLERANCE_PX and overlap_y > TOLERANCE_PX:
            problems.append(f"{first[:60]!r} overlaps {second[:60]!r} ({overlap_x:.0f} x {overlap_y:.0f} px)")
    return problems


# ----------------------------------------------------------------------------- the check itself

def test_the_check_names_overlapping_texts_and_a_text_off_the_canvas():
    figure = Figure(figsize=(3, 2))
    ax = figure.subplots()
    ax.set_title("a title")
    ax.text(0.5, 0.5, "first text", transform=ax.transAxes)
    ax.text(0.52, 0.5, "second text", transform=ax.transAxes)
    figure.text(0.9, 0.5, "far beyond the right edge of the canvas")
    problems = text_problems(figure)
    assert any("'first text' overlaps 'second text'" in problem for problem in problems), problems
    assert "'far beyond the right edge of the canvas' leaves the canvas" in problems


def test_the_check_passes_a_clean_figure_and_ignores_ticks_outside_the_limits():
    figure = Figure(figsize=(4, 3), layout="constrained")
    ax = figure.subplots()
    ax.plot([1, 2, 3], [1, 4, 9])
    ax.set_xticks([0, 1, 2, 3, 40], labels=["zero", "1", "2", "3", "forty"])  # 0 and 40 outside the limits
    ax.set_xlim(0.5, 3.5)
    ax.set_title("clean")
    assert text_problems(figure) == []


# ----------------------------------------------------------------------------- the project's figures

def test_only_the_real_data_figures_lack_committed_summaries():
    real = {"figure5_real", "figure9_real", "iome_figure7", "iome_figure8", "libraries_real"}
    assert REAL_DATA_FIGURES == real


@pytest.mark.parametrize("name", sorted(set(CONFIG["figures"]) - REAL_DATA_FIGURES))
def test_a_config_figure_drawn_from_the_committed_summaries_reads_cleanly(name):
    spec = CONFIG["figures"][name]
    figure, _ = make_figure(spec, read_summaries(summary_paths(spec)), PLAN.report.scorecard_metrics()[name])
    assert text_problems(figure) == []


def test_the_audit_power_and_errata_figures_from_the_committed_tables_read_cleanly():
    noscale = noscale_setup(CONFIG, PLAN.experiments)
    noscale_summary = committed(paths.fill(paths.SUMMARY, experiment=noscale["experiment"]))
    figures = {
        "audit": audit_figure(pd.read_csv(committed(paths.AUDIT_TABLE))),
        "audit_power": power_figure(pd.read_csv(committed(paths.POWER_TABLE))),
        "errata_accounting": accounting_figure(pd.read_csv(committed(paths.ERRATA_ACCOUNTING))),
        "errata_noscale": noscale_figure(pd.read_csv(noscale_summary), pd.read_csv(committed(noscale["reference"])),
                                         noscale),
    }
    assert {name: text_problems(figure) for name, figure in figures.items()} == {name: [] for name in figures}


def test_the_worst_case_figure_reads_cleanly(tmp_path, monkeypatch):
    drawn = {}
    monkeypatch.setattr("experiments.jobs.figures.save_figure", lambda figure, pdf, png: drawn.update(figure=figure))
    worst_case_job(panels=PLAN.targets.worst_case_panels(), pdf=None, png=None, log=str(tmp_path / "log"))
    assert text_problems(drawn["figure"]) == []


@pytest.mark.parametrize("name", sorted(CONFIG["illustrations"]))
def test_an_illustration_reads_cleanly(name):
    assert text_problems(draw(name, CONFIG["illustrations"][name], seed=int(CONFIG["seed"])).figure) == []


def test_plan_figure_2_reads_cleanly():
    rng = np.random.default_rng(0)
    matrices = {name: sp.random(2000, columns, density=0.01, format="csr", random_state=rng, data_rvs=np.ones)
                for name, columns in (("kosarak", 3000), ("pos", 1657))}
    assert text_problems(variance_histograms(matrices)) == []
