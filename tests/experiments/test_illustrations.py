"""The illustration figures (experiments/outputs/illustrations.py, workflow/rules/illustrations.smk):
PLAN paper Figures 1 and 6 and the user-level paper's Figure 1. Each job writes a valid PDF, PNG
and CSV, the same bytes twice; the CSVs hold the mechanisms' own numbers; the drawn geometry
matches them; bad configs stop with one line naming the key."""
import copy
import re
import subprocess
import sys
from pathlib import Path

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.patches import Circle, Ellipse, Polygon
from snakemake.utils import validate

import mechanisms
from experiments.engine.config import ConfigError, check_illustrations
from experiments.jobs.figures import illustration_job
from experiments.outputs import styles
from experiments.outputs.illustrations import (
    ILLUSTRATIONS,
    annulus_table,
    draw,
    figure1,
    figure6,
    generator,
    plan_steps,
    scaling_table,
    userlevel_figure1,
)
from experiments.planning.config_files import load_config
from experiments.planning.validation import one_line_config_error

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SEED = 7
SPECS = {
    "figure1": {"n": 400, "mean": [3.0, -2.0], "std": [4.0, 1.0], "rho": 1.0, "bounds": [-32.0, 32.0]},
    "figure6": {"sensitivities": [4.0, 1.0], "rho": 0.5, "samples": 20000},
    "userlevel_figure1": {"bound": 1.0, "lower": 0.35, "upper": 0.7, "p1": [0.8, 0.15], "p2": [0.1, 0.15]},
}


def run_job(name, directory, spec=None, seed=SEED):
    paths = {key: Path(directory) / f"{name}.{key}" for key in ("pdf", "png", "csv")}
    illustration_job(name=name, spec=spec or SPECS[name], seed=seed, log=Path(directory) / f"{name}.log", **paths)
    return paths


# ----------------------------------------------------------------------------- every job


@pytest.mark.parametrize("name", sorted(ILLUSTRATIONS))
def test_job_writes_a_valid_pdf_png_csv_and_log_with_the_same_bytes_twice(name, tmp_path):
    first = run_job(name, tmp_path / "first")
    second = run_job(name, tmp_path / "second")
    assert first["png"].read_bytes().startswith(PNG_SIGNATURE)
    pdf = first["pdf"].read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    assert len(pd.read_csv(first["csv"])) >= 1
    for key in ("pdf", "png", "csv"):
        assert first[key].read_bytes() == second[key].read_bytes(), key
    log = (tmp_path / "first" / f"{name}.log").read_text()
    assert f"wrote {first['pdf']}" in log
    # nothing but the outputs and the log (no temporary file left behind)
    assert sorted(p.name for p in (tmp_path / "first").iterdir()) == sorted(
        [f"{name}.{key}" for key in ("pdf", "png", "csv", "log")])


def test_the_seed_changes_the_random_illustrations_only():
    for name in ILLUSTRATIONS:
        one, two = (draw(name, SPECS[name], seed=seed).table for seed in (1, 2))
        assert one.equals(two) == (name == "userlevel_figure1"), name


def test_a_failing_drawing_leaves_no_file(tmp_path, monkeypatch):
    def broken(self, *args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("matplotlib.figure.Figure.savefig", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        run_job("figure6", tmp_path)
    assert not [name for name in ("figure6.pdf", "figure6.png", "figure6.csv") if (tmp_path / name).exists()]
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def test_unknown_illustration_is_refused():
    with pytest.raises(ValueError, match=r"unknown illustration 'figure7'; known: \['figure1', 'figure6'"):
        draw("figure7", {}, seed=1)


# ----------------------------------------------------------------------------- PLAN paper Figure 1


@pytest.fixture(scope="module")
def steps():
    spec = SPECS["figure1"]
    return plan_steps(n=spec["n"], mean=spec["mean"], std=spec["std"], rho=spec["rho"], bounds=spec["bounds"],
                      seed=SEED)


def test_figure1_private_mean_is_plan_gaussians_output_for_the_same_seed(steps, tmp_path):
    spec = SPECS["figure1"]
    x = np.asarray(spec["mean"]) + np.asarray(spec["std"]) * generator(SEED, "figure1", 0).standard_normal((400, 2))
    direct = mechanisms.plan_gaussian(x, rho=1.0, bounds=(-32.0, 32.0), rng=generator(SEED, "figure1", 1))
    assert np.array_equal(steps.x, x)
    assert np.array_equal(steps.private_mean, direct.mean)
    table = pd.read_csv(run_job("figure1", tmp_path)["csv"])
    row = table.iloc[0]
    assert row["private_mean_1"] == pytest.approx(direct.mean[0], rel=1e-9)
    assert row["private_mean_2"] == pytest.approx(direct.mean[1], rel=1e-9)
    assert row["centre_1"] == pytest.approx(direct.diagnostics["centre"][0], rel=1e-9)
    assert row["scale_2"] == pytest.approx(direct.diagnostics["scale"][1], rel=1e-9)
    assert row["clip_threshold"] == pytest.approx(direct.diagnostics["clip_threshold"], rel=1e-9)
    assert row["fraction_clipped"] == direct.diagnostics["fraction_clipped"]
    assert row["private_error_l2"] == pytest.approx(np.linalg.norm(direct.mean - [3.0, -2.0]), rel=1e-9)
    assert row["empirical_error_l2"] == pytest.approx(np.linalg.norm(x.mean(axis=0) - [3.0, -2.0]), rel=1e-9)
    assert (row["n"], row["rho"], row["true_std_1"]) == (400, 1.0, 4.0)


def test_figure1_ledger_sums_to_rho_under_exact_accounting(steps):
    assert steps.estimate.diagnostics["accounting"] == "exact"
    assert steps.estimate.total == pytest.approx(1.0, rel=1e-12)
    assert {entry.step for entry in steps.estimate.ledger} == {"centre", "variance", "clip_threshold",
                                                               "gaussian_noise"}


def test_figure1_clipped_points_lie_on_the_circle_and_the_others_are_unchanged(steps):
    moved = steps.was_clipped
    assert 0 < moved.sum() < moved.size
    assert np.mean(moved) == steps.estimate.diagnostics["fraction_clipped"]
    norms = np.linalg.norm(steps.clipped, axis=1)
    assert np.allclose(norms[moved], steps.clip_threshold, rtol=1e-12)
    assert np.array_equal(steps.clipped[~moved], steps.scaled[~moved])
    # moved along the ray from the centre: a positive multiple of z
    ratio = steps.clipped[moved] / steps.scaled[moved]
    assert np.allclose(ratio[:, 0], ratio[:, 1], rtol=1e-12) and np.all(ratio < 1)
    # z = (x - centre) b as PLAN's line 5
    assert np.allclose(steps.scaled, (steps.x - steps.estimate.diagnostics["centre"])
                       * steps.estimate.diagnostics["scale"], rtol=1e-14)


def test_figure1_private_mean_is_the_clipped_mean_plus_noise_of_the_recorded_scale(steps):
    """Line 8 rebuilt from the drawn points: (private mean - centre) b - mean of the clipped z is
    the Gaussian noise, whose std the mechanism records (it cannot be several stds away)."""
    noise = (steps.private_mean - steps.centre) * steps.scale - steps.clipped.mean(axis=0)
    noise_std = steps.estimate.diagnostics["noise_std"]
    assert noise_std > 0
    assert np.all(np.abs(noise) < 6 * noise_std)


def test_figure1_draws_four_labelled_equal_aspect_panels_with_the_clip_circle(steps):
    fig = figure1(steps)
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"][:4]
    titles = [ax.get_title() for ax in axes]
    assert [title[:3] for title in titles] == ["(a)", "(b)", "(c)", "(d)"]
    assert all(ax.get_aspect() == 1.0 for ax in axes)
    circles = [patch for patch in axes[2].patches if isinstance(patch, Circle)]
    assert len(circles) == 1 and circles[0].get_radius() == pytest.approx(steps.clip_threshold)
    assert f"C = {steps.clip_threshold:.2f}" in titles[2]
    labels = [text.get_text() for text in fig.legends[0].get_texts()]
    assert "private mean" in labels and "true mean" in labels
    assert "ρ = 1" in fig.get_suptitle()
    width, _ = fig.get_size_inches()
    assert 13 <= width <= 14


# ----------------------------------------------------------------------------- PLAN paper Figure 6


def test_figure6_csv_holds_the_closed_forms_of_each_scaling(tmp_path):
    table = pd.read_csv(run_job("figure6", tmp_path)["csv"])
    assert list(table["scaling"]) == ["first_moment", "second_moment", "even_split", "no_scaling"]
    assert list(table["gamma"]) == pytest.approx([2 / 3, 1 / 2, 1.0, 0.0], rel=1e-9)
    delta = np.array([4.0, 1.0])
    for row in table.itertuples(index=False):
        s = mechanisms.power_scaling(delta, gamma=row.gamma)
        std = mechanisms.noise_std(delta, scaling=s, rho=0.5)
        assert (row.std_horizontal, row.std_vertical) == pytest.approx(tuple(std), rel=1e-8)
        assert row.expected_l1 == pytest.approx(mechanisms.expected_noise_moment(delta, scaling=s, rho=0.5, p=1),
                                                rel=1e-9)
        assert row.expected_l2_squared == pytest.approx(np.sum(std**2), rel=1e-9)
        # 2e4 draws: the sampled stds and moments within 3 % (several standard errors)
        assert (row.sampled_std_horizontal, row.sampled_std_vertical) == pytest.approx(tuple(std), rel=0.03)
        assert row.sampled_l1 == pytest.approx(row.expected_l1, rel=0.03)
        assert row.sampled_l2_squared == pytest.approx(row.expected_l2_squared, rel=0.03)
    # the appendix's numbers for rho = 1/2 (2 rho = 1): std = Delta_bar s
    second = table.set_index("scaling").loc["second_moment"]
    assert (second["std_horizontal"], second["std_vertical"]) == pytest.approx((2 * 5**0.5, 5**0.5), rel=1e-9)


def test_figure6_csv_confirms_the_texts_claims(tmp_path):
    """Appendix C: both moment-optimal scalings add less horizontal noise than the even split
    and less vertical noise than no scaling."""
    table = pd.read_csv(run_job("figure6", tmp_path)["csv"]).set_index("scaling")
    for optimal in ("first_moment", "second_moment"):
        assert table.loc[optimal, "std_horizontal"] < table.loc["even_split", "std_horizontal"]
        assert table.loc[optimal, "std_vertical"] < table.loc["no_scaling", "std_vertical"]
    assert table["expected_l1"].idxmin() == "first_moment"
    assert table["expected_l2_squared"].idxmin() == "second_moment"


def test_figure6_draws_one_standard_deviation_ellipses_plan_in_its_colour_the_others_apart():
    """The paper's own colours (matplotlib's blue, orange, ...) would be PLAN's and IOME's here: PLAN's
    scaling (p = 2) and no scaling take PLAN's and PLAN-noscale's colours, the others neutral inks with
    their own dashes (experiments/outputs/styles.py)."""
    table = scaling_table(sensitivities=np.array([4.0, 1.0]), rho=0.5, samples=10, rng=np.random.default_rng(0))
    fig = figure6(table)
    ellipses = [patch for patch in fig.axes[0].patches if isinstance(patch, Ellipse)]
    assert len(ellipses) == 4
    colours = {"first_moment": styles.INK, "second_moment": styles.MECHANISM_STYLES["PLAN"].color,
               "even_split": styles.INK, "no_scaling": styles.MECHANISM_STYLES["PLAN-noscale"].color}
    for ellipse, row in zip(ellipses, table.itertuples(index=False)):
        assert ellipse.center == (0.0, 0.0)
        assert (ellipse.width, ellipse.height) == pytest.approx((2 * row.std_horizontal, 2 * row.std_vertical))
        assert mcolors.same_color(ellipse.get_edgecolor(), colours[row.scaling])
    looks = {(mcolors.to_hex(e.get_edgecolor()), str(e.get_linestyle())) for e in ellipses}
    assert len(looks) == 4
    assert fig.axes[0].get_aspect() == 1.0


# ----------------------------------------------------------------------------- user-level paper Figure 1


def test_userlevel_figure1_csv_holds_the_annulus_projections(tmp_path):
    table = pd.read_csv(run_job("userlevel_figure1", tmp_path)["csv"]).set_index("point")
    assert list(table.index) == ["p1", "q1", "p2", "q2"]
    expected = mechanisms.annulus_projection([[0.8, 0.15], [0.1, 0.15]], lower=0.35, upper=0.7)
    assert table.loc["q1", ["x1", "x2"]].tolist() == pytest.approx(expected[0].tolist(), rel=1e-9)
    assert table.loc["q2", ["x1", "x2"]].tolist() == pytest.approx(expected[1].tolist(), rel=1e-9)
    assert table.loc["p1", "l1_norm"] == pytest.approx(0.95) and table.loc["p2", "l1_norm"] == pytest.approx(0.25)
    assert table.loc["q1", "l1_norm"] == pytest.approx(0.7, rel=1e-9)  # onto b
    assert table.loc["q2", "l1_norm"] == pytest.approx(0.35, rel=1e-9)  # onto a
    assert (table["a"] == 0.35).all() and (table["b"] == 0.7).all() and (table["U"] == 1.0).all()


def test_userlevel_figure1_draws_the_simplex_the_annulus_and_ticks_a_b_u():
    table = annulus_table(bound=2.0, lower=0.5, upper=1.2, p1=[1.5, 0.3], p2=[0.2, 0.1])
    ax = userlevel_figure1(table).axes[0]
    polygons = [patch for patch in ax.patches if isinstance(patch, Polygon)]
    simplex, annulus = (np.asarray(polygon.get_xy()) for polygon in polygons)
    assert np.allclose(simplex[:3], [[0, 0], [2.0, 0], [0, 2.0]])
    assert np.allclose(annulus[:4], [[0.5, 0], [1.2, 0], [0, 1.2], [0, 0.5]])
    assert mcolors.same_color(polygons[1].get_facecolor()[:3], mcolors.to_rgb(styles.REFERENCE))  # a neutral shade
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["$a$", "$b$", "$U$"]
    assert list(ax.get_xticks()) == [0.5, 1.2, 2.0] and list(ax.get_yticks()) == [0.5, 1.2, 2.0]
    assert ax.get_xlabel() == "$(x)_1$" and ax.get_ylabel() == "$(x)_2$"
    texts = {text.get_text() for text in ax.texts}
    assert {"$p_1$", "$q_1$", "$p_2$", "$q_2$"} <= texts


# ----------------------------------------------------------------------------- config


def full_config():
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def test_both_configs_have_every_illustration_and_pass_the_checks():
    for path in ("config.yaml", "smoke.yaml"):
        # smoke.yaml merged over config.yaml, as the workflow reads it (docs/configuration.md)
        config = load_config(*([REPO / "config" / path] if path == "smoke.yaml" else []),
                             default=REPO / "config" / "config.yaml")
        validate(config, str(SCHEMA))
        assert list(check_illustrations(config)) == ["figure1", "figure6", "userlevel_figure1"], path


CHECK_ERRORS = [
    ("figure1", "bounds", [5.0, -5.0], r"illustrations\.figure1\.bounds: needs lo < hi"),
    ("figure1", "mean", [3.0, 40.0], r"illustrations\.figure1\.mean\[1\]: 40\.0 is outside bounds"),
    ("userlevel_figure1", "lower", 0.8, r"illustrations\.userlevel_figure1: needs 0 < lower < upper < bound"),
    ("userlevel_figure1", "upper", 1.5, r"needs 0 < lower < upper < bound .* upper=1\.5, bound=1\.0"),
    ("userlevel_figure1", "p1", [0.3, 0.2], r"illustrations\.userlevel_figure1\.p1: its l1 norm 0\.5 must be in "
                                            r"\(upper, bound\]"),
    ("userlevel_figure1", "p1", [0.9, 0.3], r"\.p1: its l1 norm 1\.2 must be in \(upper, bound\] = \(0\.7, 1\]"),
    ("userlevel_figure1", "p2", [0.0, 0.0], r"\.p2: its l1 norm 0 must be in \(0, lower\) = \(0, 0\.35\)"),
    ("userlevel_figure1", "p2", [0.3, 0.1], r"\.p2: its l1 norm 0\.4 must be in \(0, lower\)"),
]


@pytest.mark.parametrize("index", range(len(CHECK_ERRORS)))
def test_config_checks_name_the_key(index):
    name, key, value, message = CHECK_ERRORS[index]
    config = full_config()
    config["illustrations"][name][key] = value
    validate(config, str(SCHEMA))  # the schema alone accepts it
    with pytest.raises(ConfigError, match=message):
        check_illustrations(config)


def test_an_illustration_named_like_a_configured_figure_is_refused():
    config = full_config()
    config["figures"]["figure1"] = config["figures"]["figure3"]
    with pytest.raises(ConfigError, match=r"illustrations\.figure1: figures/figure1\.pdf is also the output of "
                                          r"figures\.figure1"):
        check_illustrations(config)


SCHEMA_ERRORS = [
    (("figure1", "n"), 3, r"illustrations\.figure1\.n: 3 is less than the minimum of 10"),
    (("figure1", "std"), [4.0, 0.0], r"illustrations\.figure1\.std\[1\]: 0\.0 is less than or equal to the minimum"),
    (("figure1", "mean"), [1.0], r"illustrations\.figure1\.mean: \[1\.0\] is too short"),
    (("figure1", "rho"), -1, r"illustrations\.figure1\.rho: -1 is less than or equal to the minimum of 0"),
    (("figure6", "sensitivities"), [4.0, 1.0, 2.0], r"illustrations\.figure6\.sensitivities: .* is too long"),
    (("figure6", "samples"), 0, r"illustrations\.figure6\.samples: 0 is less than the minimum of 1"),
    (("userlevel_figure1", "p1"), [0.9, -0.1], r"illustrations\.userlevel_figure1\.p1\[1\]: -0\.1 is less than"),
    (("figure6", "seed"), 3, r"illustrations\.figure6: unknown key: Additional properties are not allowed \('seed'"),
    (("figure2",), {}, r"illustrations: unknown key: .*'figure2'"),
]


@pytest.mark.parametrize("index", range(len(SCHEMA_ERRORS)))
def test_schema_errors_are_one_line_naming_the_key(index):
    path, value, message = SCHEMA_ERRORS[index]
    config = full_config()
    target = config["illustrations"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(Exception) as caught:  # snakemake's WorkflowError around the jsonschema error
        validate(config, str(SCHEMA))
    line = one_line_config_error(caught.value)
    assert re.search(message, line), line
    assert line.startswith("config error at illustrations") and "\n" not in line


def test_required_keys_are_named():
    config = full_config()
    del config["illustrations"]["figure6"]["rho"]
    with pytest.raises(Exception) as caught:
        validate(config, str(SCHEMA))
    assert re.search(r"illustrations\.figure6: 'rho' is a required property", one_line_config_error(caught.value))


# ----------------------------------------------------------------------------- workflow


def snakemake(workdir, *args):
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args]
    return subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=600)


def tiny_config(illustrations):
    config = {"seed": 3, "experiments": {"tiny": {"data": {"source": "gaussian_a", "n": 50}, "grid": {
        "d": [2], "rho": [1.0]}, "trials": 1, "mechanisms": ["empirical_mean"]}}}
    if illustrations is not None:
        config["illustrations"] = illustrations
    return config


def test_the_workflow_builds_exactly_the_configured_illustrations(tmp_path):
    spec = copy.deepcopy(SPECS)
    del spec["figure6"]
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump(tiny_config(spec)))
    result = snakemake(tmp_path, "--cores", "1", "--configfile", str(config_path))
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("figure1", "userlevel_figure1"):
        for path in (f"figures/{name}.pdf", f"figures/{name}.png", f"results/illustrations/{name}.csv"):
            assert (tmp_path / path).stat().st_size > 0, path
        assert "wrote figures/" in (tmp_path / f"logs/illustrations/{name}.log").read_text()
    assert not (tmp_path / "figures/figure6.png").exists()
    # the same bytes as the job function with the config's seed
    direct = run_job("figure1", tmp_path / "direct", spec=SPECS["figure1"], seed=3)
    assert direct["csv"].read_bytes() == (tmp_path / "results/illustrations/figure1.csv").read_bytes()
    assert direct["png"].read_bytes() == (tmp_path / "figures/figure1.png").read_bytes()


def test_a_bad_illustration_config_stops_the_workflow_with_one_line(tmp_path):
    spec = copy.deepcopy(SPECS)
    spec["userlevel_figure1"]["p2"] = [0.5, 0.5]
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump(tiny_config(spec)))
    result = snakemake(tmp_path, "--cores", "1", "--configfile", str(config_path))
    output = result.stdout + result.stderr
    assert result.returncode != 0
    lines = [line for line in output.splitlines() if line.startswith("config error")]
    assert len(lines) == 1 and "illustrations.userlevel_figure1.p2: its l1 norm 1 must be in (0, lower)" in lines[0], \
        output
    assert not (tmp_path / "results").exists() and not (tmp_path / "figures").exists()
