"""One colour per mechanism in every figure, from the one registry (experiments/outputs/styles.py);
what is not a mechanism in neutral inks; panel letters on every figure of several panels; the
library comparison's series told apart; Figure 10 (a)'s extreme trial marked, not stretching the axis.
The project's figures are drawn as in tests/experiments/test_figure_texts.py (testkit.project_figures)."""
from __future__ import annotations

import re
from collections import defaultdict

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from experiments.audit.power import POWER_MECHANISMS
from experiments.outputs import styles
from experiments.outputs.errata import noscale_setup
from experiments.outputs.figures.common import lettered
from experiments.outputs.figures.paper import BUDGET_FREE, figure_caption, make_figure, plan_figure, read_summaries
from experiments.planning import paths
from testkit.project_figures import (
    CONFIG,
    DRAWN_CONFIG_FIGURES,
    PLAN,
    committed,
    config_figure,
    illustration_figure,
    plan_figure_2,
    summary_paths,
    table_figure,
    user_level_worst_case_figure,
)

NEUTRAL_INKS = {mcolors.to_hex(ink) for ink in (styles.INK, styles.REFERENCE, styles.ALERT)}
MECHANISM_COLOURS = {mcolors.to_hex(style.color) for style in styles.MECHANISM_STYLES.values()}


def hex_colour(colour) -> str:
    return mcolors.to_hex(colour, keep_alpha=False)


def drawn_colours(figure) -> set[str]:
    """The colours of every line, marker, collection and patch the axes draw (not their frames or grids)."""
    colours = set()
    for ax in figure.axes:
        for line in ax.get_lines():
            if line.get_visible() and (len(line.get_xdata()) or line.get_marker() not in (None, "None", "")):
                colours.update({hex_colour(line.get_color()), hex_colour(line.get_markerfacecolor())}
                               if line.get_marker() not in (None, "None", "") else {hex_colour(line.get_color())})
        for collection in ax.collections:
            for colours_of in (collection.get_facecolor(), collection.get_edgecolor()):
                colours.update(hex_colour(c) for c in np.atleast_2d(colours_of) if len(c) and c[3] > 0)
        for patch in ax.patches:
            for colour in (patch.get_facecolor(), patch.get_edgecolor()):
                if colour[3] > 0:
                    colours.add(hex_colour(colour))
    return colours - {"#ffffff"}


# ----------------------------------------------------------------------------- the registry


def one_mechanism(names: set[str]) -> bool:
    """Whether the names are one mechanism: one label (PLAN and PLAN-binary, a family's members), or
    all within one group of styles.SAME_MECHANISM and the names sharing a label with its members."""
    label = {name: styles.MECHANISM_STYLES[name].label for name in names}
    if len(set(label.values())) == 1:
        return True
    for group in styles.SAME_MECHANISM:
        labels = {styles.MECHANISM_STYLES[member].label for member in group}
        if all(name in group or label[name] in labels for name in names):
            return True
    return False


def test_no_two_mechanisms_share_a_colour_unless_they_are_one_mechanism():
    names_by_colour = defaultdict(set)
    for name, style in styles.MECHANISM_STYLES.items():
        names_by_colour[mcolors.to_hex(style.color)].add(name)
    shared = {colour: sorted(names) for colour, names in names_by_colour.items() if not one_mechanism(names)}
    assert shared == {}


def test_the_check_of_one_mechanism_tells_two_mechanisms_apart():
    assert one_mechanism({"PLAN", "PLAN-binary", "PLAN-as-published"})
    assert one_mechanism({"CoinPress-t1", "CoinPress-t10", "CoinPress"})
    assert not one_mechanism({"PLAN", "IOME"})
    assert not one_mechanism({"IOME", "Laplace"})


def test_the_names_listed_as_one_mechanism_exist_and_share_their_colour():
    listed = [name for group in styles.SAME_MECHANISM for name in group]
    assert len(listed) == len(set(listed)), "a name is in two groups"
    for group in styles.SAME_MECHANISM:
        assert group <= set(styles.MECHANISM_STYLES), sorted(group - set(styles.MECHANISM_STYLES))
        assert len({styles.MECHANISM_STYLES[name].color for name in group}) == 1, sorted(group)


def test_the_neutral_inks_are_no_mechanisms_colour_and_the_check_tells_them_apart():
    assert NEUTRAL_INKS.isdisjoint(MECHANISM_COLOURS)
    assert len(NEUTRAL_INKS) == 3


def test_a_mechanisms_own_marker_is_no_other_mechanisms():
    names_by_marker = defaultdict(set)
    for name, style in styles.MECHANISM_STYLES.items():
        if style.marker:
            names_by_marker[style.marker].add(name)
    shared = {marker: sorted(names) for marker, names in names_by_marker.items() if not one_mechanism(names)}
    assert shared == {}


def test_every_mechanism_the_project_draws_is_in_the_registry():
    """No figure of the default config falls back to a colour by hash (styles.FALLBACK_COLORS)."""
    drawn = {m for spec in CONFIG["figures"].values() for panel in spec["panels"] for m in panel["mechanisms"]}
    drawn |= {spec.style for spec in POWER_MECHANISMS.values()} | {"OPT-wc", "Laplace"}
    noscale = noscale_setup(CONFIG, PLAN.experiments)
    drawn |= {noscale["coordinate_median"]} | ({noscale["noscale"]} if noscale.get("noscale") else set())
    assert sorted(drawn - set(styles.MECHANISM_STYLES)) == []


# ----------------------------------------------------------------------------- the drawn figures


@pytest.mark.parametrize("name", DRAWN_CONFIG_FIGURES)
def test_a_config_figure_draws_each_panel_in_its_mechanisms_colours_only(name):
    spec = CONFIG["figures"][name]
    figure = config_figure(name)
    for ax, panel in zip(figure.axes, spec["panels"]):
        allowed = {mcolors.to_hex(styles.mechanism_style(m).color) for m in panel["mechanisms"]}
        line_colours = {hex_colour(line.get_color()) for line in ax.get_lines()}
        assert line_colours and line_colours <= allowed, (panel["title"], sorted(line_colours - allowed))


@pytest.mark.parametrize("name", ["audit", "errata_accounting"])
def test_a_figure_of_no_mechanism_draws_in_neutral_inks(name):
    colours = drawn_colours(table_figure(name))
    assert colours and colours <= NEUTRAL_INKS, sorted(colours - NEUTRAL_INKS)


def test_plan_figure_2_draws_in_neutral_inks():
    colours = drawn_colours(plan_figure_2())
    assert colours and colours <= NEUTRAL_INKS, sorted(colours - NEUTRAL_INKS)


def test_the_errata_noscale_figure_draws_the_published_curve_in_the_reference_grey_and_ours_in_their_colours():
    setup = noscale_setup(CONFIG, PLAN.experiments)
    expected = {mcolors.to_hex(styles.REFERENCE),
                mcolors.to_hex(styles.mechanism_style(setup["coordinate_median"]).color)}
    if setup.get("noscale"):
        expected.add(mcolors.to_hex(styles.mechanism_style(setup["noscale"]).color))
    ax = table_figure("errata_noscale").axes[0]
    assert {hex_colour(line.get_color()) for line in ax.get_lines()} == expected


def test_the_power_figure_draws_each_mechanism_in_its_registry_colour():
    figure = table_figure("audit_power")
    table = pd.read_csv(committed(paths.POWER_TABLE))
    for ax, mechanism in zip(figure.axes, dict.fromkeys(table["mechanism"])):
        colours = {hex_colour(line.get_color()) for line in ax.get_lines()} - {mcolors.to_hex(styles.REFERENCE)}
        assert colours == {mcolors.to_hex(styles.mechanism_style(POWER_MECHANISMS[mechanism].style).color)}


@pytest.mark.parametrize("name", ["figure1", "userlevel_figure1"])
def test_an_illustration_uses_no_mechanism_colour_but_plan_exacts_for_its_output(name):
    colours = drawn_colours(illustration_figure(name))
    allowed = {mcolors.to_hex(styles.mechanism_style("PLAN-exact").color)} if name == "figure1" else set()
    assert colours & MECHANISM_COLOURS - {mcolors.to_hex(styles.BLACK)} <= allowed


def panel_titles(figure) -> list[str]:
    return [ax.get_title() for ax in figure.axes if ax.get_visible() and ax.get_title()]


def assert_lettered(titles: list[str]) -> None:
    letters = [re.match(r"\(([a-z])\)", title) for title in titles]
    assert all(letters), titles
    codes = [ord(letter.group(1)) for letter in letters]
    assert codes == list(range(codes[0], codes[0] + len(codes))), titles


@pytest.mark.parametrize("name", sorted(CONFIG["figures"]))
def test_every_config_figure_of_several_panels_letters_them_in_order(name):
    titles = [panel.get("title", panel["experiment"]) for panel in CONFIG["figures"][name]["panels"]]
    if len(titles) > 1:
        assert_lettered(titles)


def test_the_other_figures_of_several_panels_letter_them():
    figures = {"audit_power": table_figure("audit_power"), "figure2": plan_figure_2(),
               "worst_case": user_level_worst_case_figure(),
               "figure1": illustration_figure("figure1")}
    for name, figure in figures.items():
        titles = panel_titles(figure)
        assert len(titles) > 1, name
        assert_lettered(titles)


def test_lettered_adds_a_missing_letter_and_keeps_a_papers_own():
    assert lettered("POS", 1) == "(b) POS"
    assert lettered("(c) POS", 0) == "(c) POS"
    assert lettered("(b)", 1) == "(b)"
    assert lettered("(bounds) unknown", 0) == "(a) (bounds) unknown"


def test_a_figure_letters_unlettered_panel_titles():
    spec = CONFIG["figures"]["userlevel_beyond"]
    unlettered = {**spec, "panels": [{**panel, "title": panel["title"][4:]} for panel in spec["panels"]]}
    figure, _ = make_figure(unlettered, read_summaries([committed(paths.fill(paths.SUMMARY, experiment=p["experiment"]))
                                                        for p in spec["panels"]]))
    assert panel_titles(figure) == [panel["title"] for panel in spec["panels"]]


# ----------------------------------------------------------------------------- libraries_gaussian


def test_libraries_gaussian_tells_every_series_of_a_panel_apart_by_colour_and_marker():
    spec = CONFIG["figures"]["libraries_gaussian"]
    figure = config_figure("libraries_gaussian")
    for ax, panel in zip(figure.axes, spec["panels"]):
        lines = [line for line in ax.get_lines() if len(line.get_xdata()) > 1]
        private = [line for line in lines if hex_colour(line.get_color()) != mcolors.to_hex(styles.BLACK)]
        markers = [line.get_marker() for line in private]
        assert len(private) == len(panel["mechanisms"]) - 1, panel["title"]
        assert len(set(markers)) == len(markers) and "None" not in markers, (panel["title"], markers)
    legend_texts = [text.get_text() for legend in figure.legends for text in legend.get_texts()]
    assert not [text for text in legend_texts if re.search(r"\^|sigma|_max", text)], legend_texts
    handles = {text.get_text(): handle for legend in figure.legends
               for text, handle in zip(legend.get_texts(), legend.legend_handles)}
    coinpress = styles.MECHANISM_STYLES["CoinPress"]
    assert handles[coinpress.label].get_marker() == coinpress.marker


@pytest.mark.parametrize("name", DRAWN_CONFIG_FIGURES)
def test_a_panel_without_series_gives_its_mechanisms_own_markers_to_all_or_none(name):
    spec = CONFIG["figures"][name]
    for plan in plan_figure(spec, read_summaries(summary_paths(spec))):
        if plan.series_parameter is not None or any(styles.mechanism_style(m).variant for m in plan.mechanisms):
            continue
        own = [styles.mechanism_style(m).marker is not None for m in plan.mechanisms if m not in BUDGET_FREE]
        assert all(own) or not any(own), (name, plan.title)


# ----------------------------------------------------------------------------- bars and outliers


def test_standins_bars_on_a_linear_axis_stop_at_zero():
    figure = config_figure("standins")
    for ax in figure.axes:
        assert ax.get_yscale() == "linear"
        ends = [segment[:, 1] for collection in ax.collections for segment in collection.get_segments()]
        assert ends and min(float(np.min(end)) for end in ends) >= 0.0


def test_figure_10_a_ends_at_y_max_and_marks_the_mean_lifted_by_one_trial():
    spec = CONFIG["figures"]["figure10"]
    panel = spec["panels"][0]
    assert panel["y_max"] == 10
    summary = pd.read_csv(committed(paths.fill(paths.SUMMARY, experiment="gaussian_A")))
    row = summary[(summary["mechanism"] == "PLAN") & (summary["d"] == 2048) & (summary["rho"] == 0.125)].iloc[0]
    assert row["mean"] > 10 > row["median"]  # the committed run still has the extreme trial
    ax = config_figure("figure10").axes[0]
    assert ax.get_ylim()[1] == pytest.approx(10)
    arrows = [line for line in ax.get_lines() if line.get_marker() == "^" and not line.get_clip_on()]
    assert [(list(line.get_xdata()), list(line.get_ydata())) for line in arrows] == [([2048.0], [10.0])]
    assert hex_colour(arrows[0].get_color()) == mcolors.to_hex(styles.MECHANISM_STYLES["PLAN"].color)
    notes = " ".join(text.get_text().replace("\n", " ") for text in ax.texts)
    assert f"{row['mean']:.3g} off scale" in notes and f"largest trial {row['max']:,.0f}" in notes
    assert "(a) Gaussian A: no skew: the y axis ends at 10" in figure_caption(spec)


def test_y_max_must_be_a_positive_number():
    spec = CONFIG["figures"]["figure10"]
    summary = read_summaries([committed(paths.fill(paths.SUMMARY, experiment="gaussian_A"))])
    for bad in (0, -1, "10", True):
        broken = {**spec, "panels": [{**spec["panels"][0], "y_max": bad}]}
        with pytest.raises(ValueError, match=r"panel 1 \(experiment 'gaussian_A'\): y_max must be a positive number"):
            make_figure(broken, summary)


def test_the_check_of_colours_sees_matplotlibs_own_colours_in_lines_collections_and_patches():
    figure = Figure()
    ax = figure.subplots()
    ax.plot([0, 1], [0, 1], color="C0")
    ax.scatter([0], [0], color="C3")
    ax.add_patch(Rectangle((0, 0), 0.5, 0.5, facecolor="C1", edgecolor="C2"))
    assert drawn_colours(figure) == {mcolors.to_hex(c) for c in ("C0", "C1", "C2", "C3")}
