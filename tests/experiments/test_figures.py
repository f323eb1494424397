"""Paper figures from summaries (experiments/outputs/figures/paper.py, experiments/outputs/styles.py):
drawn as the papers drew them (mean +- sd, colour = mechanism, dash and marker = rho)."""
import re

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from matplotlib.container import ErrorbarContainer

from experiments.jobs.figures import figure_job
from experiments.outputs import styles
from experiments.outputs.figures.common import PANEL_WIDTH_IN
from experiments.outputs.figures.paper import figure_caption, isolated_points, make_figure, read_summaries
from experiments.outputs.styles import format_rho

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MECHANISMS = ["PLAN", "PLAN-exact", "PLAN-noscale", "coordinate_median", "IOME", "empirical_mean"]
FACTOR = {name: 1.0 + 0.25 * i for i, name in enumerate(MECHANISMS)}
SUFFIXES = ("", "_vs_empirical", "_relative_to_empirical")


def summary_rows(experiment, x, xs, rhos, mechanisms=MECHANISMS, trials=5):
    """A summary as experiments/engine/summary.py writes it, with made-up but distinct numbers: each
    measure's statistics scaled from one base value (median m, quartiles 0.8 m and 1.25 m, mean
    1.1 m, sd 0.3 m, se 0.1 m)."""
    rows = []
    for mechanism in mechanisms:
        for value in xs:
            for rho in rhos:
                base = FACTOR.get(mechanism, 3.0) * (1.0 + value) / rho
                row = {"experiment": experiment, "mechanism": mechanism, x: value, "rho": rho, "trials": trials}
                for suffix, scale in zip(SUFFIXES, (1.0, 0.5, 0.25)):
                    m = 0.0 if mechanism == "empirical_mean" and suffix == "_vs_empirical" else scale * base
                    row.update({f"median{suffix}": m, f"q25{suffix}": 0.8 * m, f"q75{suffix}": 1.25 * m,
                                f"mean{suffix}": 1.1 * m, f"std{suffix}": 0.3 * m, f"se{suffix}": 0.1 * m})
                rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture
def summaries(tmp_path):
    """Two summary CSVs: exp_d over d (three rho values), exp_alpha over alpha (two)."""
    paths = []
    for frame in (summary_rows("exp_d", "d", [16, 32, 64], [0.25, 0.5, 1.0]),
                  summary_rows("exp_alpha", "alpha", [0.0, 1.0, 2.0], [0.5, 1.0])):
        path = tmp_path / f"{frame['experiment'][0]}.csv"
        frame.to_csv(path, index=False)
        paths.append(path)
    return paths


@pytest.fixture
def summary(summaries):
    return read_summaries(summaries)


def panel(**changes):
    return {"experiment": "exp_d", "title": "(a) over d", "x": "d",
            "mechanisms": ["PLAN", "PLAN-exact", "IOME"]} | changes


def spec(*panels, **keys):
    return {"title": "Test figure", "panels": list(panels) or [panel()]} | keys


def drawn(ax):
    """label -> ErrorbarContainer of every line drawn in ``ax``."""
    return {container.get_label(): container for container in ax.containers if isinstance(container, ErrorbarContainer)}


def data_line(container):
    return container.lines[0]


def bar_ends(container):
    """(low, high) of each error bar of a container."""
    return np.array([segment[:, 1] for segment in container.lines[2][0].get_segments()])


def colour(container):
    return mcolors.to_hex(data_line(container).get_color())


def run_job(summaries, directory, figure_spec, name="figure"):
    paths = {key: directory / f"{name}.{key}" for key in ("pdf", "png", "log")}
    figure_job(spec=figure_spec, summaries=summaries, **paths)
    return paths


# ----------------------------------------------------------------------------- the job


def test_job_writes_a_valid_png_pdf_and_a_log_naming_every_panel_and_the_caption(summaries, tmp_path):
    figure_spec = spec(panel(), panel(experiment="exp_alpha", title="(b) over alpha", x="alpha", logx=False))
    paths = run_job(summaries, tmp_path / "out", figure_spec)
    assert paths["png"].read_bytes().startswith(PNG_SIGNATURE)
    pdf = paths["pdf"].read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    log = paths["log"].read_text()
    assert "2 panel(s)" in log
    assert "panel 1 '(a) over d': experiment=exp_d" in log and "panel 2 '(b) over alpha': experiment=exp_alpha" in log
    assert "9 lines, 27 points" in log  # 3 mechanisms x 3 rho x 3 d
    assert "caption: Mean over 5 trials; bars: \u00b11 standard deviation" in log


def test_job_leaves_no_file_behind_when_the_spec_is_bad(summaries, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ValueError):
        run_job(summaries, out, spec(panel(x="n")))
    assert list(out.iterdir()) == []


def test_same_input_gives_identical_pdf_and_png_bytes(summaries, tmp_path):
    first = run_job(summaries, tmp_path / "first", spec())
    second = run_job(summaries, tmp_path / "second", spec())
    assert first["pdf"].read_bytes() == second["pdf"].read_bytes()
    assert first["png"].read_bytes() == second["png"].read_bytes()
    assert b"CreationDate" not in first["pdf"].read_bytes()
    assert b"Software" not in first["png"].read_bytes()


def test_outputs_are_readable_by_everyone(summaries, tmp_path):
    paths = run_job(summaries, tmp_path, spec())
    assert paths["pdf"].stat().st_mode & 0o044 == 0o044
    assert paths["png"].stat().st_mode & 0o044 == 0o044


# ----------------------------------------------------------------------------- layout


def test_one_row_with_one_axes_per_panel_titled_as_specified(summary):
    figure_spec = spec(panel(), panel(experiment="exp_alpha", title="(b)", x="alpha", logx=False), panel(title="(c)"))
    fig, _ = make_figure(figure_spec, summary)
    assert len(fig.axes) == 3
    assert [ax.get_title() for ax in fig.axes] == ["(a) over d", "(b)", "(c)"]
    assert len({ax.get_position().y0 for ax in fig.axes}) == 1  # side by side
    assert fig.get_suptitle() == "Test figure"
    assert fig.get_figwidth() == pytest.approx(3 * PANEL_WIDTH_IN)


def test_panel_titles_must_be_unique(summary):
    with pytest.raises(ValueError, match=re.escape("panel titles must be unique, repeated: ['(a) over d']")):
        make_figure(spec(panel(), panel()), summary)


def test_one_line_per_mechanism_and_rho(summary):
    fig, _ = make_figure(spec(panel()), summary)
    labels = set(drawn(fig.axes[0]))
    assert labels == {f"{m} rho={r}" for m in ["PLAN", "PLAN-exact", "IOME"] for r in ["1/4", "1/2", "1"]}


def test_by_default_points_are_the_mean_with_bars_of_one_standard_deviation(summary):
    fig, plans = make_figure(spec(panel()), summary)
    assert plans[0].statistic == "mean_sd"
    container = drawn(fig.axes[0])["IOME rho=1/2"]
    x, y = data_line(container).get_data()
    expected = summary_rows("exp_d", "d", [16, 32, 64], [0.5], ["IOME"])
    np.testing.assert_allclose(x, [16, 32, 64])
    np.testing.assert_allclose(y, expected["mean"])
    np.testing.assert_allclose(bar_ends(container), np.c_[expected["mean"] - expected["std"],
                                                          expected["mean"] + expected["std"]])


def test_median_iqr_draws_the_median_with_quartile_bars(summary):
    fig, _ = make_figure(spec(panel(statistic="median_iqr")), summary)
    container = drawn(fig.axes[0])["PLAN rho=1"]
    expected = summary_rows("exp_d", "d", [16, 32, 64], [1.0], ["PLAN"])
    np.testing.assert_allclose(data_line(container).get_data()[1], expected["median"])
    np.testing.assert_allclose(bar_ends(container), expected[["q25", "q75"]].to_numpy())


def test_mean_se_draws_the_mean_with_a_band_of_one_standard_error(summary):
    fig, _ = make_figure(spec(panel(statistic="mean_se", mechanisms=["PLAN"], rho=1.0)), summary)
    ax = fig.axes[0]
    (line,) = [line for line in ax.lines if line.get_label() == "PLAN rho=1"]
    expected = summary_rows("exp_d", "d", [16, 32, 64], [1.0], ["PLAN"])
    np.testing.assert_allclose(line.get_ydata(), expected["mean"])
    (band,) = ax.collections
    vertices = band.get_paths()[0].vertices[:, 1]
    assert vertices.min() == pytest.approx((expected["mean"] - expected["se"]).min())
    assert vertices.max() == pytest.approx((expected["mean"] + expected["se"]).max())


@pytest.mark.parametrize(("measure", "suffix", "label"), [
    ("error_vs_empirical", "_vs_empirical", r"$\ell_2$ error vs the sample mean (mean $\pm$ sd)"),
    ("error_relative_to_empirical", "_relative_to_empirical",
     "$\\ell_2$ error relative to the empirical mean\n(mean $\\pm$ sd)"),
])
def test_each_measure_draws_its_own_columns_and_says_so_on_the_y_axis(summary, measure, suffix, label):
    fig, _ = make_figure(spec(panel(measure=measure)), summary)
    _, y = data_line(drawn(fig.axes[0])["PLAN rho=1"]).get_data()
    np.testing.assert_allclose(y, summary_rows("exp_d", "d", [16, 32, 64], [1.0], ["PLAN"])[f"mean{suffix}"])
    assert fig.axes[0].get_ylabel() == label


def test_a_measure_whose_columns_the_summary_lacks_is_an_error(summary):
    thin = summary.drop(columns=[c for c in summary.columns if c.endswith("_relative_to_empirical")])
    with pytest.raises(ValueError, match="needs column\\(s\\) mean_relative_to_empirical, std_relative_to_empirical"):
        make_figure(spec(panel(measure="error_relative_to_empirical")), thin)


def test_log_axes_by_default_with_x_ticks_at_the_dimensions_as_integers(summary):
    fig, _ = make_figure(spec(panel()), summary)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.xaxis.get_transform().base == 2
    np.testing.assert_allclose(ax.get_xticks(), [16, 32, 64])
    assert [label.get_text() for label in ax.get_xticklabels()] == ["16", "32", "64"]
    assert ax.get_xlabel() == "dimension d"


def test_logx_and_logy_false_give_linear_axes(summary):
    fig, _ = make_figure(spec(panel(experiment="exp_alpha", x="alpha", logx=False, logy=False)), summary)
    ax = fig.axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("linear", "linear")
    assert ax.get_xlabel() == r"skew exponent $\alpha$"


def test_a_panel_s_own_x_label_replaces_the_default_for_its_x(summary):
    """The local model's eps is an (eps, delta) claim, not the pure eps the default label names."""
    fig, _ = make_figure(spec(panel(), panel(title="(b)", x_label="privacy budget per user")), summary)
    assert [ax.get_xlabel() for ax in fig.axes[:2]] == ["dimension d", "privacy budget per user"]


def test_on_a_log_axis_a_bar_reaching_zero_is_cut_at_the_bottom_of_the_axis(summary):
    wide = summary.copy()
    wide.loc[(wide["mechanism"] == "IOME") & (wide["d"] == 32), "std"] = 1e9  # mean - sd far below 0
    fig, _ = make_figure(spec(panel()), wide)
    ax = fig.axes[0]
    bottom = ax.get_ylim()[0]
    assert bottom > 0
    low = bar_ends(drawn(ax)["IOME rho=1"])[1, 0]
    assert low == pytest.approx(bottom)


# ----------------------------------------------------------------------------- styles


def test_colour_encodes_the_mechanism_the_same_at_every_rho_and_in_every_panel(summary):
    figure_spec = spec(panel(), panel(experiment="exp_alpha", title="(b)", x="alpha", logx=False))
    fig, _ = make_figure(figure_spec, summary)
    for mechanism in ["PLAN", "PLAN-exact", "IOME"]:
        colours = {colour(c) for ax in fig.axes for label, c in drawn(ax).items() if label.split()[0] == mechanism}
        assert colours == {mcolors.to_hex(styles.MECHANISM_STYLES[mechanism].color)}
    assert len({styles.MECHANISM_STYLES[m].color for m in ["PLAN", "PLAN-exact", "IOME"]}) == 3


def test_dash_and_marker_encode_rho_the_same_for_every_mechanism_and_every_figure(summary):
    first, _ = make_figure(spec(panel()), summary)
    second, _ = make_figure(spec(panel(experiment="exp_alpha", x="alpha", logx=False,
                                       mechanisms=["coordinate_median", "PLAN"])), summary)
    seen = {}
    for fig in (first, second):
        for label, container in drawn(fig.axes[0]).items():
            rho = label.split("rho=")[1]
            line = data_line(container)
            seen.setdefault(rho, set()).add((str(line.get_linestyle()), line.get_marker()))
    assert all(len(style) == 1 for style in seen.values())  # one style per rho across mechanisms and figures
    assert len({next(iter(style)) for style in seen.values()}) == len(seen)  # distinct between rho values
    half = data_line(drawn(first.axes[0])["PLAN rho=1/2"])
    assert half.get_marker() == styles.RHO_STYLES[0.5].marker


def test_the_paper_rho_values_one_eighth_and_one_are_solid_and_dashed_with_distinct_markers():
    assert styles.series_style("rho", 1.0).dashes == "-"
    assert styles.series_style("rho", 0.125).dashes != "-"
    assert styles.series_style("rho", 1.0).marker != styles.series_style("rho", 0.125).marker


def test_a_series_other_than_rho_takes_its_own_styles_and_the_fixed_rho_goes_to_the_title():
    frame = two_dimension_frame()
    ratio_panel = panel(experiment="exp_ratio", x="d", rho=1.0, series="ratio", where={"ratio": [0.0, 1.0]},
                        mechanisms=["PLAN", "IOME"], title="(a) binary")
    fig, plans = make_figure(spec(ratio_panel), frame)
    lines = drawn(fig.axes[0])
    assert set(lines) == {f"{m} ratio={r}" for m in ("PLAN", "IOME") for r in ("0", "1")}
    assert data_line(lines["PLAN ratio=1"]).get_marker() == styles.RATIO_STYLES[1.0].marker
    assert data_line(lines["PLAN ratio=0"]).get_marker() == styles.RATIO_STYLES[0.0].marker
    assert plans[0].fixed == (("rho", 1.0),)
    assert fig.axes[0].get_title() == r"(a) binary ($\rho$ = 1)"


def test_the_empirical_mean_is_one_thin_black_line_drawn_once(summary):
    fig, _ = make_figure(spec(panel(mechanisms=["PLAN", "empirical_mean"])), summary)
    lines = drawn(fig.axes[0])
    assert [label for label in lines if label.startswith("empirical_mean")] == ["empirical_mean"]
    line = data_line(lines["empirical_mean"])
    assert mcolors.to_hex(line.get_color()) == mcolors.to_hex(styles.BLACK)
    assert line.get_linestyle() == "-" and line.get_marker() in ("None", "", None)
    assert line.get_linewidth() < data_line(lines["PLAN rho=1"]).get_linewidth()


def test_an_unknown_mechanism_has_the_same_fallback_colour_in_every_figure(tmp_path):
    frame = summary_rows("exp_d", "d", [16, 32], [0.5, 1.0], ["PLAN", "mine", "other"])
    alone, _ = make_figure(spec(panel(mechanisms=["mine"])), frame)
    together, _ = make_figure(spec(panel(mechanisms=["other", "PLAN", "mine"])), frame)
    assert colour(drawn(alone.axes[0])["mine rho=1"]) == colour(drawn(together.axes[0])["mine rho=1"])
    assert colour(drawn(alone.axes[0])["mine rho=1"]) in {mcolors.to_hex(c) for c in styles.FALLBACK_COLORS}


def test_an_unknown_rho_has_the_same_fallback_style_in_every_figure():
    assert styles.series_style("rho", 0.3) == styles.series_style("rho", 0.3)
    assert styles.series_style("rho", 0.3) in styles.FALLBACK_LINESTYLES


def test_the_legend_lists_each_mechanism_by_colour_and_each_rho_once(summary):
    fig, _ = make_figure(spec(panel(mechanisms=["PLAN", "PLAN-exact", "empirical_mean"])), summary)
    (legend,) = fig.legends
    labels = [text.get_text() for text in legend.get_texts() if text.get_text()]
    assert sorted(labels) == sorted(["mechanism:", r"budget $\rho$:", "PLAN", "PLAN, exact accounting (ours)",
                                     "Empirical mean (non-private)", "1/4", "1/2", "1"])
    # the footer above the legend says what the bars are (wrapped to the figure's width)
    assert " ".join(legend.get_title().get_text().split()) == ("Mean over 5 trials; bars: \u00b11 standard deviation "
                                                               "(cut at 0, on a log axis at its bottom)")
    assert all(not ax.get_legend() for ax in fig.axes)


@pytest.mark.parametrize(("rho", "text"), [(0.125, "1/8"), (0.0625, "1/16"), (1.0, "1"), (2.0, "2"), (0.01, "0.01"),
                                           (0.3, "0.3")])
def test_rho_is_written_as_a_fraction_for_powers_of_two(rho, text):
    assert format_rho(rho) == text


def test_the_caption_says_what_the_bars_are_and_where_the_choices_come_from(summary):
    figure_spec = spec(panel(), panel(measure="error_relative_to_empirical", title="(c)"),
                       source="the authors' notebook", caption="Extra words.")
    _, plans = make_figure(figure_spec, summary)
    caption = figure_caption(figure_spec, plans)
    assert caption.startswith("Mean over 5 trials; bars: \u00b11 standard deviation")
    assert "Colour: mechanism; dash pattern and marker: budget rho." in caption
    assert "(c): |error - mean error of the empirical mean| per trial" in caption
    assert caption.endswith("Extra words. Drawn as: the authors' notebook")


# ----------------------------------------------------------------------------- filters


def test_rho_list_is_a_filter_and_absent_values_are_logged(summaries, tmp_path):
    paths = run_job(summaries, tmp_path, spec(panel(experiment="exp_alpha", x="alpha", logx=False, rho=[0.25, 0.5])))
    log = paths["log"].read_text()
    assert "rho=[0.5] (requested but absent, skipped: rho=0.25)" in log
    assert "3 lines, 9 points" in log


def test_rho_list_without_any_present_value_is_an_error(summary):
    message = "none of rho=[0.125, 2] is in the summary; available: rho=[0.25, 0.5, 1]"
    with pytest.raises(ValueError, match=re.escape(message)):
        make_figure(spec(panel(rho=[0.125, 2.0])), summary)


def test_where_on_x_keeps_only_the_listed_x_values(summary):
    _, plans = make_figure(spec(panel(where={"d": [16, 32, 128]})), summary)
    assert all(list(series.x) == [16, 32] for series in plans[0].series)
    assert plans[0].skipped == ("d=128",)


# ----------------------------------------------------------------------------- bad specs


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"experiment": "exp_z"}, "experiment='exp_z' has no summary among the inputs (experiments in the summaries: "
                                  "exp_alpha, exp_d)"),
        ({"x": "n"}, "x='n' is not a column of the summary; grid parameters: d, rho"),
        ({"mechanisms": ["PLAN", "Laplace"]}, "mechanisms 'Laplace' absent from the summary; available: PLAN, "
                                              "PLAN-exact, PLAN-noscale, coordinate_median, IOME, empirical_mean"),
        ({"mechanisms": []}, "mechanisms must be a non-empty list"),
        ({"measure": "mse"}, "measure='mse' is not one of error, error_vs_empirical, error_relative_to_empirical"),
        ({"statistic": "mode"}, "statistic='mode' is not one of mean_sd, median_iqr, mean_se"),
        ({"series": "n"}, "series='n' is not a grid parameter other than x (allowed: rho, none)"),
        ({"experiment": "exp_alpha", "x": "alpha"}, "logx is true but x='alpha' has values <= 0"),
        ({"colour": "red"}, "unknown key(s) colour"),
    ],
    ids=["experiment", "x", "mechanism", "no-mechanisms", "measure", "statistic", "series", "logx-zero",
         "unknown-key"],
)
def test_bad_panel_raises_value_error_naming_the_key(summary, changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make_figure(spec(panel(), panel(**changes, title="(b)")), summary)


def test_bad_panel_error_says_which_panel(summary):
    with pytest.raises(ValueError, match=re.escape("panel 2 (experiment 'exp_d'): x='n'")):
        make_figure(spec(panel(), panel(x="n", title="(b)")), summary)


def test_an_unknown_figure_key_is_an_error(summary):
    with pytest.raises(ValueError, match=re.escape("unknown key(s) colours; allowed: caption, panels, reproduces, "
                                                   "source, title")):
        make_figure(spec(colours="mine"), summary)


def test_a_grid_parameter_that_varies_besides_x_and_the_series_is_an_error():
    frame = pd.concat([summary_rows("exp_d", "d", [16, 32], [1.0]).assign(n=n) for n in (100, 200)])
    frame = frame[["experiment", "mechanism", "d", "n", *frame.columns[3:-1]]]  # grid before trials
    with pytest.raises(ValueError, match="grid parameter\\(s\\) n take several values"):
        make_figure(spec(panel()), frame)


def two_dimension_frame():
    """A summary over ratio and rho at two dimensions d, as the binary experiment writes it."""
    frame = pd.concat([summary_rows("exp_ratio", "ratio", [0.0, 0.5, 1.0], [0.5, 1.0]).assign(d=d)
                       for d in (256, 1024)])
    frame.loc[frame["d"] == 1024, "mean"] *= 10
    return frame[["experiment", "mechanism", "d", "ratio", *[c for c in frame.columns if c not in
                                                             ("experiment", "mechanism", "d", "ratio")]]]


def test_where_draws_one_value_of_another_grid_parameter():
    frame = two_dimension_frame()
    ratio_panel = panel(experiment="exp_ratio", x="ratio", logx=False, mechanisms=["PLAN"], where={"d": 1024})
    _, plans = make_figure(spec(ratio_panel), frame)
    means = np.concatenate([series.centre for series in plans[0].series])
    expected = frame[(frame["d"] == 1024) & (frame["mechanism"] == "PLAN")]["mean"]
    assert sorted(means) == sorted(expected)


@pytest.mark.parametrize(
    ("where", "message"),
    [({"n": 5}, "where names 'n', which is not a grid parameter other than rho (allowed: d, ratio"),
     ({"d": 512}, "none of d=[512] is in the summary; available: d=[256, 1024]"),
     ({"rho": 0.5}, "where names 'rho'")],
    ids=["unknown", "absent-value", "rho"],
)
def test_a_bad_where_names_the_parameter_and_the_values_available(where, message):
    ratio_panel = panel(experiment="exp_ratio", x="ratio", logx=False, mechanisms=["PLAN"], where=where)
    with pytest.raises(ValueError, match=re.escape(message)):
        make_figure(spec(ratio_panel), two_dimension_frame())


def test_without_where_a_grid_over_two_parameters_is_still_an_error():
    ratio_panel = panel(experiment="exp_ratio", x="ratio", logx=False, mechanisms=["PLAN"])
    with pytest.raises(ValueError, match="grid parameter\\(s\\) d take several values"):
        make_figure(spec(ratio_panel), two_dimension_frame())


@pytest.mark.parametrize(("metric", "label"), [(None, r"$\ell_2$ error"), ("l2", r"$\ell_2$ error"),
                                               ("l1_half", r"$\ell_1$ error / 2")])
def test_the_y_label_names_the_metric_of_the_experiment(summary, metric, label):
    fig, _ = make_figure(spec(panel(statistic="median_iqr")), summary,
                         metrics=None if metric is None else {"exp_d": metric})
    assert fig.axes[0].get_ylabel() == f"{label} (median, IQR)"


def test_a_figure_without_panels_is_an_error(summary):
    with pytest.raises(ValueError, match="panels must be a non-empty list"):
        make_figure({"title": "empty", "panels": []}, summary)


def test_columns_after_the_statistics_are_not_grid_parameters(summaries, tmp_path):
    frame = pd.read_csv(summaries[0]).assign(runtime_median=lambda f: np.arange(len(f)))
    frame.to_csv(tmp_path / "extra.csv", index=False)
    fig, _ = make_figure(spec(panel()), read_summaries([tmp_path / "extra.csv", summaries[1]]))
    assert len(drawn(fig.axes[0])) == 9


def test_no_summaries_is_an_error():
    with pytest.raises(ValueError, match=re.escape("summaries must list at least one summary CSV")):
        read_summaries([])


def test_an_exploding_exact_companion_is_capped_and_marked_off_scale(summary):
    exploded = summary.copy()
    exact = (exploded["mechanism"] == "PLAN-exact") & (exploded["d"] == 64)
    exploded.loc[exact, ["median", "q25", "q75"]] = [1e6, 5e5, 2e6]
    fig, _ = make_figure(spec(panel(statistic="median_iqr")), exploded)
    ax = fig.axes[0]
    others = exploded[exploded["mechanism"].isin(["PLAN", "IOME"])]["q75"].max()
    assert ax.get_ylim()[1] == pytest.approx(10 * others)
    assert any("PLAN, exact accounting (ours) off scale" in text.get_text() and "1e+06" in text.get_text()
               for text in ax.texts)
    arrows = [line for line in ax.lines if line.get_marker() == "^" and line.get_linestyle() == "None"]
    assert sum(len(line.get_xdata()) for line in arrows) == 3  # d = 64 at each of the three rho values


def test_the_paper_curves_are_never_capped(summary):
    exploded = summary.copy()
    exploded.loc[(exploded["mechanism"] == "PLAN") & (exploded["d"] == 64), "mean"] = 1e6
    fig, _ = make_figure(spec(panel()), exploded)
    ax = fig.axes[0]
    assert not ax.texts and ax.get_ylim()[1] >= 1e6


def test_item_variances_are_p_one_minus_p_of_the_column_frequencies_without_densifying():
    from experiments.outputs.figures.dataset_variances import item_variances

    dense = np.array([[1, 0, 1, 0], [1, 1, 0, 0], [0, 0, 1, 0]], dtype=float)
    p = dense.mean(axis=0)
    np.testing.assert_allclose(item_variances(scipy.sparse.csr_matrix(dense)), p * (1 - p))


def test_figure2_has_a_histogram_per_dataset_and_the_d_to_the_minus_two_fifths_line(tmp_path):
    from experiments.outputs.figures.dataset_variances import variance_histograms

    rng = np.random.default_rng(5)
    matrices = {name: scipy.sparse.csr_matrix((rng.random((200, d)) < rng.random(d) * 0.3).astype(float))
                for name, d in (("kosarak", 300), ("pos", 40))}
    fig = variance_histograms(matrices)
    axes = fig.axes
    assert len(axes) == 2
    for ax, x in zip(axes, matrices.values()):
        lines = [line for line in ax.get_lines() if line.get_label().startswith("$D^{-2/5}$")]
        assert len(lines) == 1 and lines[0].get_xdata()[0] == pytest.approx(x.shape[1] ** -0.4)
        assert sum(patch.get_height() for patch in ax.patches) == np.count_nonzero(x.getnnz(axis=0))
        assert ax.get_xscale() == "log" and f"D = {x.shape[1]:,}" in ax.get_title()
    assert "Kosarak" in axes[0].get_title() and "POS" in axes[1].get_title()


# ----------------------------------------------------------------------------- families and extra metrics

FAMILY = ["Shifted-CM", "CoinPress-t1", "CoinPress-t2", "CoinPress-t10", "empirical_mean"]


def family_frame():
    """exp_d at one rho with CoinPress's iterations t as separate mechanisms, and an extra metric."""
    frame = summary_rows("exp_d", "d", [16, 32, 64], [0.5], FAMILY)
    frame["mean_mahalanobis"], frame["std_mahalanobis"] = 2 * frame["mean"], 0.1 * frame["mean"]
    return frame


def test_a_family_takes_one_colour_and_its_iterations_the_dash_and_marker():
    fig, plans = make_figure(spec(panel(mechanisms=FAMILY, series="none")), family_frame())
    lines = drawn(fig.axes[0])
    assert set(lines) == set(FAMILY) and plans[0].series_parameter is None
    members = [m for m in FAMILY if m.startswith("CoinPress")]
    assert {colour(lines[m]) for m in members} == {mcolors.to_hex(styles.COINPRESS)}
    looks = {(str(data_line(lines[m]).get_linestyle()), data_line(lines[m]).get_marker()) for m in members}
    assert len(looks) == len(members)  # t = 1, 2, 10 told apart by dash and marker
    assert data_line(lines["CoinPress-t10"]).get_marker() == styles.STEPS_STYLES[10.0].marker
    # beside a family every other private mechanism is a solid line with markers; the empirical mean stays thin
    assert data_line(lines["Shifted-CM"]).get_linestyle() == "-" and data_line(lines["Shifted-CM"]).get_marker() == "o"
    assert data_line(lines["empirical_mean"]).get_marker() in ("None", "", None)
    # the fixed rho goes to the title; the legend lists the family once and its t values
    assert fig.axes[0].get_title() == r"(a) over d ($\rho$ = 1/2)"
    labels = [text.get_text() for text in fig.legends[0].get_texts() if text.get_text()]
    assert labels.count("CoinPress (MVMRec, identity covariance)") == 1
    assert "CoinPress iterations t:" in labels and {"1", "2", "10"} <= set(labels)
    assert "dash pattern and marker: CoinPress iterations t" in figure_caption(spec(), plans)


def test_a_family_in_a_panel_with_a_series_parameter_is_an_error():
    frame = summary_rows("exp_d", "d", [16, 32], [0.5, 1.0], FAMILY)
    with pytest.raises(ValueError, match=r"CoinPress-t1, CoinPress-t2, CoinPress-t10 take their dash and marker from "
                                         r"their steps .* series: none"):
        make_figure(spec(panel(mechanisms=FAMILY)), frame)


def test_series_none_needs_every_other_grid_parameter_fixed():
    frame = summary_rows("exp_d", "d", [16, 32], [0.5, 1.0], FAMILY)
    with pytest.raises(ValueError, match="grid parameter\\(s\\) rho take several values"):
        make_figure(spec(panel(mechanisms=["Shifted-CM"], series="none")), frame)
    _, plans = make_figure(spec(panel(mechanisms=["Shifted-CM"], series="none", rho=1.0)), frame)
    assert plans[0].fixed == (("rho", 1.0),)


def test_an_extra_metric_is_drawn_as_its_own_measure_and_named_on_the_y_axis():
    frame = family_frame().rename(columns={"mean_mahalanobis": "mean_l1", "std_mahalanobis": "std_l1"})
    fig, plans = make_figure(spec(panel(mechanisms=["Shifted-CM"], series="none", measure="error_l1")), frame,
                             metrics={"exp_d": "l2"})
    np.testing.assert_allclose(plans[0].series[0].centre, frame[frame["mechanism"] == "Shifted-CM"]["mean_l1"])
    assert fig.axes[0].get_ylabel().startswith(r"$\ell_1$ error (mean")
    with pytest.raises(ValueError, match="measure='error_nonsense' is not one of"):
        make_figure(spec(panel(mechanisms=["Shifted-CM"], series="none", measure="error_nonsense")), frame)


def test_grid_ticks_drop_a_label_that_would_collide_with_its_left_neighbour_and_keep_the_last():
    from experiments.outputs.figures.paper import grid_ticks

    rhos = [0.005, 0.045, 0.125, 0.245, 0.5]  # IOME Figure 2 on a linear axis: 0.005 and 0.045 collide
    assert grid_ticks(rhos, [format_rho(r) for r in rhos], False, 250.0) == [0, 2, 3, 4]
    assert grid_ticks(rhos, [format_rho(r) for r in rhos], False, 2500.0) == [0, 1, 2, 3, 4]  # room for all
    ds = [16, 64, 256, 1024]
    assert grid_ticks(ds, [str(d) for d in ds], True, 250.0) == [0, 1, 2, 3]
    # the last value is kept, replacing a neighbour it would collide with
    assert grid_ticks([1.0, 2.0, 2.05], ["1", "2", "2.05"], False, 250.0) == [0, 2]
    assert grid_ticks([3.0], ["3"], False, 250.0) == [0]


def test_x_tick_labels_of_a_drawn_panel_never_overlap(summary):
    frame = summary_rows("exp_rho", "n", [100], [0.005, 0.045, 0.125, 0.245, 0.5], ["PLAN"])
    narrow = [panel(experiment="exp_rho", title=title, x="rho", logx=False, mechanisms=["PLAN"]) for title in "abc"]
    fig, _ = make_figure(spec(*narrow), frame)  # three panels side by side, as IOME Figure 2
    fig.canvas.draw()
    ax = fig.axes[0]
    boxes = sorted((label.get_window_extent() for label in ax.get_xticklabels() if label.get_text()),
                   key=lambda box: box.x0)
    assert len(boxes) >= 3 and all(left.x1 < right.x0 for left, right in zip(boxes, boxes[1:]))


def test_a_long_y_label_takes_two_lines_and_stays_within_the_axis_height(summary):
    fig, _ = make_figure(spec(panel(measure="error_relative_to_empirical"), panel(title="(b)")), summary)
    fig.canvas.draw()
    long_label, short_label = (ax.yaxis.get_label() for ax in fig.axes[:2])
    assert "\n" in long_label.get_text() and "\n" not in short_label.get_text()
    axis = fig.axes[0].get_window_extent()
    assert long_label.get_window_extent().height <= axis.height


def test_a_point_whose_neighbours_are_missing_is_drawn_as_a_marker_not_lost_in_a_line():
    """A library that refused every rho but one (docs/design.md §6.1) has one finite mean: a line
    through it draws nothing, so it is marked."""
    nan = float("nan")
    assert isolated_points(np.array([nan, nan, 4.1])).tolist() == [False, False, True]
    assert isolated_points(np.array([1.0, nan, 3.0, 4.0])).tolist() == [True, False, False, False]
    assert isolated_points(np.array([2.0])).tolist() == [True]
    assert not isolated_points(np.array([1.0, 2.0, 3.0])).any()
