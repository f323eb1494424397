"""The privacy audit's power curves (experiments/audit/power.py): the repeated-audit runner, its seeds and
checks, the jobs that write the curves and the table, and their figure (experiments/outputs/figures/audit.py).

Runs are small (10^3 and 10^4 draws per dataset, a few repetitions), so that the whole module takes
seconds; the outcomes asserted keep wide margins (measured at these seeds in the comments)."""
import math

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest

from experiments.audit.power import (
    COLUMNS,
    FALSE_ALARM_LIMIT,
    POWER_MECHANISMS,
    audit_generator,
    false_alarms,
    least_runs,
    power_curve,
    power_interval,
)
from experiments.engine.config import ConfigError, check_audit_power
from experiments.jobs.audit import power_figure_job, power_job, power_table_job
from experiments.outputs import styles
from experiments.outputs.figures.audit import power_figure
from mechanisms.quantiles import em_epsilon


def curve(mechanism="userlevel_laplace", **changes):
    settings = {"seed": 7, "runs": [1000], "breaks": [1, 4], "repetitions": 3, "progress": None, **changes}
    return power_curve(mechanism, **settings)


# ----------------------------------------------------------------------------- the runner


def test_rows_name_the_claim_and_count_the_flagged_audits_with_their_interval():
    table = curve(runs=[1000, 2000])
    assert list(table.columns) == COLUMNS
    assert table[["runs", "break"]].values.tolist() == [[1000, 1.0], [1000, 4.0], [2000, 1.0], [2000, 4.0]]
    assert (table["mechanism"] == "userlevel_laplace").all() and (table["measure"] == "eps").all()
    assert (table["claim"] == 1.0).all() and (table["repetitions"] == 3).all()
    assert (table["power"] == table["flagged"] / 3).all()
    assert ((table["power_low"] <= table["power"]) & (table["power"] <= table["power_high"])).all()
    # eps x 4 against the claim 1 on a tight pair: every audit flags it, with a bound near 4 (3.1 measured)
    broken = table[table["break"] == 4.0]
    assert (broken["flagged"] == 3).all() and (broken["median_lower"] > 2.0).all()


def test_the_same_seed_gives_the_same_rows_byte_for_byte_and_another_seed_other_bounds(tmp_path):
    first, second = curve(), curve()
    pd.testing.assert_frame_equal(first, second)
    assert first.to_csv(index=False) == second.to_csv(index=False)
    assert not np.array_equal(curve(seed=8)["median_lower"], first["median_lower"])


def test_each_break_and_runs_has_its_own_seeds_so_adding_one_changes_no_other_row():
    small = curve(breaks=[1, 4])
    larger = curve(breaks=[1, 1.5, 4])
    pd.testing.assert_frame_equal(larger[larger["break"] != 1.5].reset_index(drop=True), small)
    # 1 and 1.0 are the same key; the key is (seed, mechanism, break, runs, repetition)
    draw = audit_generator(7, "gaussian_step", 1, 1000, 0).random()
    assert draw == audit_generator(7, "gaussian_step", 1.0, 1000, 0).random()
    others = [audit_generator(8, "gaussian_step", 1, 1000, 0), audit_generator(7, "userlevel_laplace", 1, 1000, 0),
              audit_generator(7, "gaussian_step", 1.25, 1000, 0), audit_generator(7, "gaussian_step", 1, 1001, 0),
              audit_generator(7, "gaussian_step", 1, 1000, 1)]
    assert len({draw, *(generator.random() for generator in others)}) == 6


@pytest.mark.parametrize("mechanism", list(POWER_MECHANISMS))
def test_the_correct_mechanism_is_rarely_flagged(mechanism):
    table = curve(mechanism, runs=[1000], breaks=[1], repetitions=40)
    # at most the 5 % the confidence allows, with room for chance (0 of 40 measured for each)
    assert int(table["flagged"].iloc[0]) <= 5


@pytest.mark.parametrize("mechanism", list(POWER_MECHANISMS))
def test_a_huge_break_is_always_flagged_at_modest_runs(mechanism):
    table = curve(mechanism, runs=[10_000], breaks=[8], repetitions=5)
    assert int(table["flagged"].iloc[0]) == 5


def test_the_mechanisms_claims_and_broken_budgets():
    gaussian, laplace, quantile = (POWER_MECHANISMS[name] for name in
                                   ("gaussian_step", "userlevel_laplace", "exponential_quantile"))
    assert (gaussian.measure, gaussian.claim(0.25), gaussian.broken_budget(0.25, 2)) == ("rho", 0.25, 0.5)
    assert (laplace.measure, laplace.claim(1.0), laplace.broken_budget(1.0, 1.5)) == ("eps", 1.0, 1.5)
    # the break multiplies the exponential mechanism's eps: its rho by the break squared
    assert quantile.measure == "eps" and quantile.budget_name == "rho"
    assert quantile.claim(0.5) == pytest.approx(2.0)
    assert em_epsilon(quantile.broken_budget(0.5, 1.5)) == pytest.approx(1.5 * quantile.claim(0.5))
    table = curve("exponential_quantile", breaks=[1])
    assert table["claim"].iloc[0] == pytest.approx(2.0) and table["measure"].iloc[0] == "eps"
    assert curve("gaussian_step", breaks=[1], budget=0.5)["claim"].iloc[0] == 0.5


def test_progress_has_one_line_per_number_of_runs(capsys):
    import sys

    power_curve("userlevel_laplace", seed=1, runs=[2000, 1000], breaks=[1, 2], repetitions=2, progress=sys.stderr)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("userlevel_laplace: 1000 runs, 4 audits in ") and "s per audit" in lines[0]
    assert lines[1].startswith("userlevel_laplace: 2000 runs") and "flagged per break 1: " in lines[1]


def test_the_power_interval_is_clopper_pearson_and_false_alarms_are_the_break_one_rows():
    assert power_interval(0, 100) == (0.0, pytest.approx(0.0362, abs=1e-4))
    low, high = power_interval(50, 100)
    assert low == pytest.approx(0.3983, abs=1e-4) and high == pytest.approx(0.6017, abs=1e-4)
    assert power_interval(100, 100)[1] == 1.0
    table = pd.DataFrame({"break": [1.0, 1.25, 1], "power": [0.0, 0.5, 0.01]})
    assert false_alarms(table).index.tolist() == [0, 2]
    assert FALSE_ALARM_LIMIT == pytest.approx(0.05)


BAD = {
    "no runs": ({"runs": []}, r"^runs: must be a non-empty list"),
    "too few runs": ({"runs": [1000, 5]}, rf"^runs\[1\]: must be an integer >= {least_runs()}"),
    "runs not an integer": ({"runs": [1000.0]}, r"^runs\[0\]: must be an integer"),
    "runs twice": ({"runs": [1000, 1000]}, r"^runs: has a value twice"),
    "break below 1": ({"breaks": [1, 0.5]}, r"^breaks\[1\]: must be a finite number >= 1"),
    "break not finite": ({"breaks": [math.inf]}, r"^breaks\[0\]: must be a finite number"),
    "break twice": ({"breaks": [1, 1.0]}, r"^breaks: has a value twice"),
    "no repetitions": ({"repetitions": 0}, r"^repetitions: must be an integer >= 1"),
    "repetitions a flag": ({"repetitions": True}, r"^repetitions: must be an integer >= 1"),
    "bad budget": ({"budget": -1.0}, r"^mechanisms\.userlevel_laplace\.budget: must be a finite eps > 0"),
    "bad seed": ({"seed": -1}, r"^seed must be an integer >= 0"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_settings_are_value_errors_naming_the_value(case):
    changes, message = BAD[case]
    with pytest.raises(ValueError, match=message):
        curve(**changes)


def test_an_unknown_mechanism_is_a_value_error():
    with pytest.raises(ValueError, match=r"mechanism must be one of \['gaussian_step', 'userlevel_laplace', "):
        curve("plan_exact")


POWER_SECTION = {"runs": [1000, 10_000], "breaks": [1, 2], "repetitions": 10,
                 "mechanisms": {"gaussian_step": {"budget": 0.5}, "userlevel_laplace": None,
                                "exponential_quantile": {}}}


def test_the_config_section_is_checked_and_its_defaults_filled_in():
    power = check_audit_power({"audit_power": POWER_SECTION})
    assert power == {"runs": [1000, 10_000], "breaks": [1.0, 2.0], "repetitions": 10,
                     "mechanisms": {"gaussian_step": 0.5, "userlevel_laplace": 1.0, "exponential_quantile": 0.5}}
    assert check_audit_power({}) == {}


@pytest.mark.parametrize("change, message", [
    ({"runs": [10]}, r"^audit_power\.runs\[0\]: must be an integer >= 12"),
    ({"mechanisms": {"iome": {}}}, r"^audit_power\.mechanisms\.iome: no such mechanism; known: \['gaussian_step'"),
    ({"mechanisms": {}}, r"^audit_power\.mechanisms: must name at least one"),
])
def test_a_bad_config_section_is_one_config_error_naming_the_key(change, message):
    with pytest.raises(ConfigError, match=message) as error:
        check_audit_power({"audit_power": {**POWER_SECTION, **change}})
    assert "\n" not in str(error.value)


# ----------------------------------------------------------------------------- jobs and the figure


def test_the_jobs_write_each_curve_the_table_and_the_figure(tmp_path):
    curves = []
    for mechanism in ("gaussian_step", "userlevel_laplace"):
        output, log = tmp_path / f"power/{mechanism}.csv", tmp_path / f"{mechanism}.log"
        power_job(mechanism=mechanism, budget=None, runs=[1000], breaks=[1, 4], repetitions=2, seed=3,
                  output=output, log=log)
        assert log.read_text().startswith(f"{mechanism}: 1000 runs, 4 audits in ")
        curves.append(output)
    table = tmp_path / "power_curves.csv"
    power_table_job(curves=curves, output=table, log=tmp_path / "table.log")
    frame = pd.read_csv(table)
    assert list(frame.columns) == COLUMNS and frame["mechanism"].tolist() == ["gaussian_step"] * 2 + [
        "userlevel_laplace"] * 2
    assert "2 mechanisms, 4 rows; break 1 (false alarms) flagged 0 of 4 audits" in (tmp_path / "table.log").read_text()
    pngs = []
    for index in range(2):  # the same table gives the same bytes
        pdf, png = tmp_path / f"fig{index}.pdf", tmp_path / f"fig{index}.png"
        power_figure_job(table=table, pdf=pdf, png=png, log=tmp_path / "figure.log")
        assert png.read_bytes().startswith(b"\x89PNG") and pdf.read_bytes().startswith(b"%PDF")
        pngs.append((png.read_bytes(), pdf.read_bytes()))
    assert pngs[0] == pngs[1]


def power_table(mechanisms=("gaussian_step", "userlevel_laplace", "exponential_quantile"), breaks=(1, 1.25, 4),
                runs=(1000, 10_000, 100_000)):
    rows = []
    for mechanism in mechanisms:
        spec = POWER_MECHANISMS.get(mechanism)
        for count in runs:
            for value in breaks:
                power = min(1.0, (value - 1) * math.log10(count) / 4)
                low, high = power_interval(round(power * 100), 100)
                rows.append({"mechanism": mechanism, "measure": spec.measure if spec else "eps",
                             "claim": spec.claim(spec.default_budget) if spec else 1.0, "break": float(value),
                             "runs": count, "repetitions": 100, "flagged": round(power * 100), "power": power,
                             "power_low": low, "power_high": high, "median_lower": 0.1 * value})
    return pd.DataFrame(rows, columns=COLUMNS)


def curves_of(ax):
    """The data lines of a panel (not the error bars' caps, not the false-alarm line)."""
    return [line for line in ax.get_lines() if line.get_linestyle() != "None" and len(line.get_xdata()) > 2]


def test_the_figure_has_a_panel_per_mechanism_with_a_line_per_break_and_the_false_alarm_limit():
    figure = power_figure(power_table())
    axes = figure.get_axes()
    assert len(axes) == 3
    assert [ax.get_title().splitlines()[0] for ax in axes] == [
        f"({letter}) {POWER_MECHANISMS[name].label}"
        for letter, name in zip("abc", ("gaussian_step", "userlevel_laplace", "exponential_quantile"))]
    assert axes[2].get_title().splitlines()[1] == r"claim $\varepsilon$ = 2 (at $\rho$ = 1/2)"
    for ax, key in zip(axes, ("gaussian_step", "Laplace", "exponential_quantile")):
        assert ax.get_xscale() == "log" and ax.get_ylim() == (-0.04, 1.04)
        lines = curves_of(ax)
        assert len(lines) == 3  # one per break
        # colour: the mechanism's, the same as in every figure; dash and marker: the break's
        colour = mcolors.to_hex(styles.MECHANISM_STYLES[key].color)
        assert {mcolors.to_hex(line.get_color()) for line in lines} == {colour}
        assert [line.get_marker() for line in lines] == [styles.BREAK_STYLES[b].marker for b in (1.0, 1.25, 4.0)]
        limit = [line for line in ax.get_lines() if list(line.get_ydata()) == [FALSE_ALARM_LIMIT] * 2]
        assert len(limit) == 1
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels[0] == "\u00d71 (the correct mechanism)" and labels[1:3] == ["\u00d71.25", "\u00d74"]
    assert labels[3].startswith("0.05 = 1 - confidence")


def test_the_figure_draws_an_unlisted_mechanism_in_its_fallback_colour_and_needs_rows():
    figure = power_figure(power_table(mechanisms=("mine",), breaks=(1, 3)))
    lines = curves_of(figure.get_axes()[0])
    colour = mcolors.to_hex(styles.mechanism_style("mine").color)
    assert {mcolors.to_hex(line.get_color()) for line in lines} == {colour}
    with pytest.raises(ValueError, match="the power table has no rows"):
        power_figure(power_table().iloc[:0])
