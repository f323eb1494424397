"""Paper figures from summaries (experiments/figures.py; DESIGN.md 5.0, 6 and 11)."""
import re

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from matplotlib.container import ErrorbarContainer

from experiments.figures import figure_job, format_rho, make_figure, read_summaries

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MECHANISMS = ["PLAN", "PLAN-exact", "PLAN-noscale", "coordinate_median", "IOME", "empirical_mean"]
FACTOR = {name: 1.0 + 0.25 * i for i, name in enumerate(MECHANISMS)}


def summary_rows(experiment, x, xs, rhos, mechanisms=MECHANISMS, trials=5):
    """A summary as experiments/summary.py writes it, with made-up but distinct numbers."""
    rows = []
    for mechanism in mechanisms:
        for value in xs:
            for rho in rhos:
                median = FACTOR.get(mechanism, 3.0) * (1.0 + value) / rho
                vs_empirical = 0.0 if mechanism == "empirical_mean" else 0.5 * median
                rows.append({
                    "experiment": experiment, "mechanism": mechanism, x: value, "rho": rho, "trials": trials,
                    "median": median, "q25": 0.8 * median, "q75": 1.25 * median, "mean": median, "std": 0.1,
                    "median_vs_empirical": vs_empirical, "q25_vs_empirical": 0.8 * vs_empirical,
                    "q75_vs_empirical": 1.25 * vs_empirical, "mean_vs_empirical": vs_empirical,
                    "std_vs_empirical": 0.0,
                })
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


def spec(*panels):
    return {"title": "Test figure", "panels": list(panels) or [panel()]}


def drawn(ax):
    """label -> ErrorbarContainer of every line drawn in ``ax``."""
    return {container.get_label(): container for container in ax.containers if isinstance(container, ErrorbarContainer)}


def data_line(container):
    return container.lines[0]


def run_job(summaries, directory, figure_spec, name="figure"):
    paths = {key: directory / f"{name}.{key}" for key in ("pdf", "png", "log")}
    figure_job(spec=figure_spec, summaries=summaries, **paths)
    return paths


# ----------------------------------------------------------------------------- the job


def test_job_writes_a_valid_png_pdf_and_a_log_naming_every_panel(summaries, tmp_path):
    figure_spec = spec(panel(), panel(experiment="exp_alpha", title="(b) over alpha", x="alpha", logx=False))
    paths = run_job(summaries, tmp_path / "out", figure_spec)
    assert paths["png"].read_bytes().startswith(PNG_SIGNATURE)
    pdf = paths["pdf"].read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    log = paths["log"].read_text()
    assert "2 panel(s)" in log
    assert "panel 1 '(a) over d': experiment=exp_d" in log and "panel 2 '(b) over alpha': experiment=exp_alpha" in log
    assert "9 lines, 27 points" in log  # 3 mechanisms x 3 rho x 3 d


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
    assert fig.get_figwidth() == pytest.approx(15.0)


def test_one_line_per_mechanism_and_rho(summary):
    fig, _ = make_figure(spec(panel()), summary)
    labels = set(drawn(fig.axes[0]))
    assert labels == {f"{m} rho={r}" for m in ["PLAN", "PLAN-exact", "IOME"] for r in ["1/4", "1/2", "1"]}


def test_points_sit_at_the_true_x_values_with_median_and_quartiles(summary):
    fig, _ = make_figure(spec(panel()), summary)
    container = drawn(fig.axes[0])["IOME rho=1/2"]
    x, y = data_line(container).get_data()
    expected = summary_rows("exp_d", "d", [16, 32, 64], [0.5], ["IOME"])
    np.testing.assert_allclose(x, [16, 32, 64])
    np.testing.assert_allclose(y, expected["median"])
    segments = container.lines[2][0].get_segments()
    np.testing.assert_allclose([segment[:, 1] for segment in segments], expected[["q25", "q75"]].to_numpy())


def test_error_vs_empirical_draws_the_vs_empirical_columns(summary):
    fig, _ = make_figure(spec(panel(measure="error_vs_empirical")), summary)
    _, y = data_line(drawn(fig.axes[0])["PLAN rho=1"]).get_data()
    np.testing.assert_allclose(y, summary_rows("exp_d", "d", [16, 32, 64], [1.0], ["PLAN"])["median_vs_empirical"])
    assert fig.axes[0].get_ylabel() == r"$\ell_2$ error vs empirical mean (median over 5 trials)"


def test_y_label_names_the_trial_count_or_says_trials_when_it_varies(tmp_path):
    frame = summary_rows("exp_d", "d", [16, 32], [1.0])
    frame.loc[frame["d"] == 32, "trials"] = 7
    fig, _ = make_figure(spec(panel()), frame)
    assert fig.axes[0].get_ylabel() == r"$\ell_2$ error (median over trials)"
    fig, _ = make_figure(spec(panel()), summary_rows("exp_d", "d", [16, 32], [1.0], trials=50))
    assert fig.axes[0].get_ylabel() == r"$\ell_2$ error (median over 50 trials)"


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


def test_other_x_parameters_are_labelled_by_name(tmp_path):
    frame = summary_rows("exp_n", "n", [100, 1000], [1.0])
    fig, _ = make_figure(spec(panel(experiment="exp_n", x="n")), frame)
    assert fig.axes[0].get_xlabel() == "n"
    assert fig.axes[0].xaxis.get_transform().base == 10


# ----------------------------------------------------------------------------- styles


@pytest.mark.parametrize(
    ("mechanism", "linestyle", "marker", "hollow"),
    [
        ("PLAN", "-", "o", False),
        ("PLAN-exact", "--", "o", True),
        ("IOME", ":", "s", False),
        ("PLAN-noscale", "-.", "^", False),
        ("coordinate_median", "--", "x", False),
    ],
)
def test_mechanism_sets_line_style_and_marker(summary, mechanism, linestyle, marker, hollow):
    fig, _ = make_figure(spec(panel(mechanisms=[mechanism])), summary)
    for container in drawn(fig.axes[0]).values():
        line = data_line(container)
        assert line.get_linestyle() == linestyle
        assert line.get_marker() == marker
        assert (line.get_markerfacecolor() == "none") == hollow


def test_coordinate_median_is_thinner_than_plan(summary):
    fig, _ = make_figure(spec(panel(mechanisms=["PLAN", "coordinate_median"])), summary)
    lines = {label.split()[0]: data_line(c) for label, c in drawn(fig.axes[0]).items()}
    assert lines["coordinate_median"].get_linewidth() < lines["PLAN"].get_linewidth()


def test_colour_encodes_rho_the_same_for_every_mechanism(summary):
    fig, _ = make_figure(spec(panel()), summary)
    lines = drawn(fig.axes[0])
    for rho in ["1/4", "1/2", "1"]:
        colours = {mcolors.to_hex(data_line(lines[f"{m} rho={rho}"]).get_color())
                   for m in ["PLAN", "PLAN-exact", "IOME"]}
        assert len(colours) == 1
    assert len({mcolors.to_hex(data_line(lines[f"PLAN rho={rho}"]).get_color()) for rho in ["1/4", "1/2", "1"]}) == 3


def test_same_rho_has_the_same_colour_in_every_panel(summary):
    figure_spec = spec(panel(), panel(experiment="exp_alpha", x="alpha", logx=False))
    fig, _ = make_figure(figure_spec, summary)
    colour = [mcolors.to_hex(data_line(drawn(ax)["PLAN rho=1/2"]).get_color()) for ax in fig.axes]
    assert colour[0] == colour[1]


def test_with_a_single_rho_colour_encodes_the_mechanism(summary):
    fig, _ = make_figure(spec(panel(rho=[0.5])), summary)
    lines = drawn(fig.axes[0])
    assert set(lines) == {"PLAN rho=1/2", "PLAN-exact rho=1/2", "IOME rho=1/2"}
    assert mcolors.to_hex(data_line(lines["PLAN rho=1/2"]).get_color()) != mcolors.to_hex(
        data_line(lines["IOME rho=1/2"]).get_color())
    assert r"$\rho$ = 1/2" in fig.get_suptitle()


def test_empirical_mean_is_one_grey_line_from_one_rho(summary):
    fig, _ = make_figure(spec(panel(mechanisms=["PLAN", "empirical_mean"])), summary)
    lines = drawn(fig.axes[0])
    empirical = [label for label in lines if label.startswith("empirical_mean")]
    assert empirical == ["empirical_mean"]
    line = data_line(lines["empirical_mean"])
    assert mcolors.to_hex(line.get_color()) == mcolors.to_hex("0.45")
    assert line.get_linestyle() == "-" and line.get_marker() in ("None", "", None)


def test_unknown_mechanisms_are_drawn_with_distinct_fallback_styles(tmp_path):
    frame = summary_rows("exp_d", "d", [16, 32], [0.5, 1.0], ["PLAN", "mine", "yours"])
    fig, _ = make_figure(spec(panel(mechanisms=["PLAN", "mine", "yours"])), frame)
    lines = drawn(fig.axes[0])
    styles = {m: (data_line(lines[f"{m} rho=1"]).get_linestyle(), data_line(lines[f"{m} rho=1"]).get_marker())
              for m in ["PLAN", "mine", "yours"]}
    assert len(set(styles.values())) == 3


def test_legend_lists_each_mechanism_and_each_rho_once(summary):
    figure_spec = spec(panel(mechanisms=["PLAN", "PLAN-exact", "empirical_mean"]))
    fig, _ = make_figure(figure_spec, summary)
    (legend,) = fig.legends
    labels = [text.get_text() for text in legend.get_texts() if text.get_text()]
    assert sorted(labels) == sorted(["mechanism:", r"budget $\rho$:", "PLAN (published accounting)",
                                     "PLAN-exact (exact accounting)", "empirical mean (non-private)",
                                     r"$\rho$ = 1/4", r"$\rho$ = 1/2", r"$\rho$ = 1"])
    assert all(not ax.get_legend() for ax in fig.axes)


@pytest.mark.parametrize(("rho", "text"), [(0.125, "1/8"), (0.0625, "1/16"), (1.0, "1"), (2.0, "2"), (0.01, "0.01"),
                                           (0.3, "0.3")])
def test_rho_is_written_as_a_fraction_for_powers_of_two(rho, text):
    assert format_rho(rho) == text


# ----------------------------------------------------------------------------- rho filter


def test_rho_list_is_a_filter_and_absent_values_are_logged(summaries, tmp_path):
    paths = run_job(summaries, tmp_path, spec(panel(experiment="exp_alpha", x="alpha", logx=False, rho=[0.25, 0.5])))
    log = paths["log"].read_text()
    assert "rho=[0.5] (requested but absent, skipped: [0.25])" in log
    assert "3 lines, 9 points" in log


def test_rho_list_without_any_present_value_is_an_error(summary):
    message = "none of rho=[0.125, 2] is in the summary; available: rho=[0.25, 0.5, 1]"
    with pytest.raises(ValueError, match=re.escape(message)):
        make_figure(spec(panel(rho=[0.125, 2.0])), summary)


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
        ({"measure": "mse"}, "measure='mse' is not one of error, error_vs_empirical"),
        ({"experiment": "exp_alpha", "x": "alpha"}, "logx is true but x='alpha' has values <= 0"),
        ({"colour": "red"}, "unknown key(s) colour"),
    ],
    ids=["experiment", "x", "mechanism", "no-mechanisms", "measure", "logx-zero", "unknown-key"],
)
def test_bad_panel_raises_value_error_naming_the_key(summary, changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make_figure(spec(panel(), panel(**changes)), summary)


def test_bad_panel_error_says_which_panel(summary):
    with pytest.raises(ValueError, match=re.escape("panel 2 (experiment 'exp_d'): x='n'")):
        make_figure(spec(panel(), panel(x="n")), summary)


def test_a_grid_parameter_that_varies_besides_x_and_rho_is_an_error():
    frame = pd.concat([summary_rows("exp_d", "d", [16, 32], [1.0]).assign(n=n) for n in (100, 200)])
    frame = frame[["experiment", "mechanism", "d", "n", *frame.columns[3:-1]]]  # grid before trials
    with pytest.raises(ValueError, match="grid parameter\\(s\\) n take several values"):
        make_figure(spec(panel()), frame)


def two_dimension_frame():
    """A summary over ratio and rho at two dimensions d, as the binary experiment writes it."""
    frame = pd.concat([summary_rows("exp_ratio", "ratio", [0.0, 0.5, 1.0], [0.5, 1.0]).assign(d=d)
                       for d in (256, 1024)])
    frame.loc[frame["d"] == 1024, "median"] *= 10
    return frame[["experiment", "mechanism", "d", "ratio", *[c for c in frame.columns if c not in
                                                             ("experiment", "mechanism", "d", "ratio")]]]


def test_where_draws_one_value_of_another_grid_parameter():
    frame = two_dimension_frame()
    ratio_panel = panel(experiment="exp_ratio", x="ratio", logx=False, mechanisms=["PLAN"], where={"d": 1024})
    fig, plans = make_figure(spec(ratio_panel), frame)
    medians = np.concatenate([series.median for series in plans[0].series])
    expected = frame[(frame["d"] == 1024) & (frame["mechanism"] == "PLAN")]["median"]
    assert sorted(medians) == sorted(expected)


@pytest.mark.parametrize(
    ("where", "message"),
    [({"n": 5}, "where names 'n', which is not a grid parameter other than x and rho (allowed: d)"),
     ({"d": 512}, "where d=512 is not in the summary; available: [256, 1024]"),
     ({"ratio": 0.5}, "where names 'ratio'")],
    ids=["unknown", "absent-value", "x-itself"],
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
    fig, _ = make_figure(spec(panel(measure="error_vs_empirical")), summary,
                         metrics=None if metric is None else {"exp_d": metric})
    assert fig.axes[0].get_ylabel() == f"{label} vs empirical mean (median over 5 trials)"


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
    fig, _ = make_figure(spec(panel()), exploded)
    ax = fig.axes[0]
    others = exploded[exploded["mechanism"].isin(["PLAN", "IOME"])]["q75"].max()
    assert ax.get_ylim()[1] == pytest.approx(10 * others)
    assert any("PLAN-exact off scale" in text.get_text() and "1e+06" in text.get_text() for text in ax.texts)
    arrows = [line for line in ax.lines if line.get_marker() == "^"]
    assert sum(len(line.get_xdata()) for line in arrows) == 3  # d = 64 at each of the three rho values


def test_the_axis_is_not_capped_when_every_curve_is_on_scale(summary):
    fig, _ = make_figure(spec(panel()), summary)
    ax = fig.axes[0]
    assert not ax.texts and not [line for line in ax.lines if line.get_marker() == "^"]
    assert ax.get_ylim()[1] >= summary[summary["d"] == 64]["q75"].max()


def test_item_variances_are_p_one_minus_p_of_the_column_frequencies_without_densifying():
    from experiments.figures import item_variances

    dense = np.array([[1, 0, 1, 0], [1, 1, 0, 0], [0, 0, 1, 0]], dtype=float)
    p = dense.mean(axis=0)
    np.testing.assert_allclose(item_variances(scipy.sparse.csr_matrix(dense)), p * (1 - p))


def test_figure2_has_a_histogram_per_dataset_and_the_d_to_the_minus_two_fifths_line(tmp_path):
    from experiments.figures import variance_histograms

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
