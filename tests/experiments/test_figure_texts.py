"""Every figure reads cleanly: drawn as the workflow draws it (the config figures from the committed
summaries, the audit, power and errata figures from the committed tables, the worst-case figure,
the illustrations and PLAN Figure 2), no two of its texts overlap and none leaves the canvas,
measured with matplotlib's text extents after the layout.

The texts are those a reader sees: titles, axis labels, the tick labels of ticks inside the axes'
limits, annotations, figure texts and legend texts.
"""
from __future__ import annotations

import itertools

import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from testkit.project_figures import (
    CONFIG,
    DRAWN_CONFIG_FIGURES,
    REAL_DATA_FIGURES,
    TABLE_FIGURES,
    config_figure,
    illustration_figure,
    plan_figure_2,
    table_figure,
    user_level_worst_case_figure,
)

TOLERANCE_PX = 0.5  # extents touching within half a pixel (antialiasing) are not an overlap


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


@pytest.mark.parametrize("name", DRAWN_CONFIG_FIGURES)
def test_a_config_figure_drawn_from_the_committed_summaries_reads_cleanly(name):
    assert text_problems(config_figure(name)) == []


def test_the_audit_power_and_errata_figures_from_the_committed_tables_read_cleanly():
    problems = {name: text_problems(table_figure(name)) for name in TABLE_FIGURES}
    assert problems == {name: [] for name in TABLE_FIGURES}


def test_the_worst_case_figure_reads_cleanly():
    assert text_problems(user_level_worst_case_figure()) == []


@pytest.mark.parametrize("name", sorted(CONFIG["illustrations"]))
def test_an_illustration_reads_cleanly(name):
    assert text_problems(illustration_figure(name)) == []


def test_plan_figure_2_reads_cleanly():
    assert text_problems(plan_figure_2()) == []
