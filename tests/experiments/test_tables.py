"""PLAN Table 2 beside the paper's, and its erratum (experiments/outputs/tables.py, config ``table2:``)."""
import copy
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.engine.config import ConfigError, check_table2, exact_twins, load_experiments
from experiments.engine.sources import draw
from experiments.engine.trials import fixed_data_generator
from experiments.jobs.results import table2_erratum_job, table2_job
from experiments.outputs.tables import (
    ERRATUM_COLUMNS,
    TABLE2_COLUMNS,
    erratum_notes,
    fixed_sample_deviations,
    table2,
    table2_caption,
    table2_erratum,
    universe,
)
from experiments.planning.config_files import load_config
from testkit.engine import run_one_cell

REPO = Path(__file__).resolve().parents[2]
REFERENCE = pd.read_csv(REPO / "config/reference/published_table2.csv")
NAMES = {"direct-075": "direct-0.75", "direct-0841": "direct-0.841", "general (k=4)": "general-k4"}
EXACT = {"general-k4": "general-k4-exact"}


def summary(grid, rows):
    """A summary as experiments.engine.summary writes it: (mechanism, sigma label, rho, mean, se) rows."""
    return pd.DataFrame([{"experiment": "x", "mechanism": m, grid: s, "rho": r, "trials": 100, "median": mean,
                          "q25": mean, "q75": mean, "mean": mean, "std": 10 * se, "se": se}
                         for m, s, r, mean, se in rows])


PROTOCOL = summary("sigma", [
    ("direct-0.75", 0.001, 0.01, 0.313 * 1.2, 0.001), ("direct-0.75", 1.0, 0.01, 0.322 * 2.0, 0.002),
    ("direct-0.841", 0.001, 0.01, 0.024 / 1.5, 0.003), ("direct-0.841", 1.0, 0.01, 0.011 / 1.6, 0.004),
    ("general-k4", 0.001, 0.01, 0.007 * 1.5, 0.005), ("general-k4", 1.0, 0.01, 0.006, 0.006),
    ("general-k4-exact", 0.001, 0.01, 7.5, 0.7), ("general-k4-exact", 1.0, 0.01, 0.02, 0.008),
    ("direct-0.9", 1.0, 0.01, 0.3, 0.01),  # not named: left out
])
CORRECTED = summary("variance", [
    ("direct-0.75", 0.001, 0.01, 0.04, 0.001), ("direct-0.75", 1.0, 0.01, 0.05, 0.001),
    ("direct-0.841", 0.001, 0.01, 0.03, 0.001), ("direct-0.841", 1.0, 0.01, 0.035, 0.001),
    ("general-k4", 0.001, 0.01, 0.025, 0.001), ("general-k4", 1.0, 0.01, 0.027, 0.001),
])


# ---------------------------------------------------------------- table2


def test_table2_puts_ours_beside_the_paper_row_by_row_in_the_paper_order():
    table = table2(PROTOCOL, REFERENCE, NAMES)
    assert list(table.columns) == TABLE2_COLUMNS
    assert list(zip(table["sigma"], table["method"])) == [
        (0.001, "direct-075"), (0.001, "direct-0841"), (0.001, "general (k=4)"),
        (1.0, "direct-075"), (1.0, "direct-0841"), (1.0, "general (k=4)")]
    assert (table["rho"] == 0.01).all()  # the paper's rho = 0.001 rows have no cell here: left out
    first = table.iloc[0]
    assert (first["paper"], first["ours"], first["ours_se"]) == (0.313, pytest.approx(0.313 * 1.2), 0.001)
    np.testing.assert_allclose(table["ratio"], [1.2, 1 / 1.5, 1.5, 2.0, 1 / 1.6, 1.0])
    assert list(table["within_factor_1_5"]) == [True, True, True, False, False, True]  # 1.5 itself is within


def test_the_caption_is_one_line_stating_the_protocol_and_the_count_within_1_5():
    table = table2(PROTOCOL, REFERENCE, NAMES)
    text = table2_caption(table, n=10000, mean=10.0, trials=100, fixed_data=True, bound_stds=5.0)
    assert "\n" not in text
    for part in ["n = 10000 draws of N(10, sigma^2)", "drawn once per setting and reused by all its trials",
                 "universe 10 +- 5 sigma", "rho / 8",
                 "without the normal-quantile conversion", "2k shuffles", "100 trials",
                 "4 of 6 cells are within a factor of 1.5", "0.62 to 2.00"]:
        assert part in text, part
    assert "drawn afresh for every trial" in table2_caption(table, n=5, mean=0.0, trials=2, fixed_data=False,
                                                            bound_stds=5.0)


def test_a_summary_without_any_cell_of_the_paper_raises_one_error_naming_the_config_keys():
    shifted = PROTOCOL.assign(rho=0.5)
    with pytest.raises(ValueError, match=r"table2: no \(rho, sigma, method\) of the paper's Table 2.*table2\.names"):
        table2(shifted, REFERENCE, NAMES)
    with pytest.raises(ValueError, match=r"table2_erratum: no \(rho, sigma, method\)"):
        table2_erratum(REFERENCE, shifted, CORRECTED, NAMES, EXACT)


# ---------------------------------------------------------------- the erratum


def test_the_erratum_has_the_paper_both_protocols_and_the_exact_twin_only_where_there_is_one():
    erratum = table2_erratum(REFERENCE, PROTOCOL, CORRECTED, NAMES, EXACT)
    assert list(erratum.columns) == ERRATUM_COLUMNS
    assert len(erratum) == 6
    k4 = erratum[erratum["method"] == "general (k=4)"].set_index("sigma")
    assert k4.loc[0.001, "exact_accounting"] == 7.5 and k4.loc[1.0, "exact_accounting"] == 0.02
    assert k4.loc[0.001, "corrected"] == 0.025 and k4.loc[0.001, "authors_protocol"] == pytest.approx(0.0105)
    assert erratum[erratum["method"] != "general (k=4)"]["exact_accounting"].isna().all()
    assert erratum[erratum["method"] == "direct-0841"]["corrected"].tolist() == [0.03, 0.035]


# what the one sample of each setting gets wrong: its std, and its 0.841-quantile minus median
FIXED_SAMPLES = {0.001: {"std": 0.0009, "spread": 0.0127}, 1.0: {"std": 0.0004, "spread": 0.0192}}


def notes(deviations):
    erratum = table2_erratum(REFERENCE, PROTOCOL, CORRECTED, NAMES, EXACT)
    return erratum_notes(erratum, names=NAMES, exact=EXACT, deviations=deviations, bound_stds=5.0,
                         corrected_bounds={0.001: (0.0, 20.0), 1.0: (0.0, 20.0)}, protocol_se=PROTOCOL["se"])


def test_the_notes_state_each_difference_once_with_its_numbers():
    sentences = notes(FIXED_SAMPLES)
    topics = ["sigma vs sigma^2", "std vs variance error", "no normal-quantile conversion",
              "data reused across trials", "rho / 8 and half of it", "bounds from the true sigma",
              "the general estimator's accounting"]
    assert [sentence.split(":")[0] for sentence in sentences] == topics
    assert all("\n" not in sentence for sentence in sentences)
    text = dict(zip(topics, sentences))
    assert "variance 1e-06, not 0.001" in text["sigma vs sigma^2"]
    assert "differ by at most 0.268 per method" in text["sigma vs sigma^2"]  # direct-075: 0.644 - 0.3756
    assert "(0.006 to 0.007) are std errors" in text["std vs variance error"]
    assert "0.025 to 0.027" in text["std vs variance error"]
    assert "direct-075 0.376 to 0.644 (bias |Phi^-1(0.75) - 1| = 0.326; corrected 0.04 to 0.05)" in (
        text["no normal-quantile conversion"])
    assert ("misses sigma by 0.09% and 0.04% and whose own 0.841-quantile minus median by 1.27% and 1.92% "
            "(labels 0.001 and 1)") in text["data reused across trials"]
    assert "direct-0841's errors at rho = 0.01 are 0.016 and 0.00687" in text["data reused across trials"]
    assert "at most 0.7)" in text["data reused across trials"]
    assert "eps = sqrt(8 rho / 16) = 0.0707" in text["rho / 8 and half of it"]
    assert "sqrt(4 rho) = 0.2" in text["rho / 8 and half of it"]
    assert "0.01 wide at the label 0.001" in text["bounds from the true sigma"]
    assert "[0, 20] there, 2,000 times wider" in text["bounds from the true sigma"]
    assert ("general (k=4) spends 32 times the rho / 16 it books under swap neighbours (8 times under add/remove), "
            "and at the same rho under exact accounting its error is 0.02 to 7.5 instead of 0.006 to 0.0105"
            ) in text["the general estimator's accounting"]
    assert "add/remove neighbours, which the authors' code assumes" in text["the general estimator's accounting"]


def test_without_fixed_data_the_notes_say_the_trials_drew_fresh_data():
    sentences = notes({})
    assert len(sentences) == 7
    assert sentences[3].startswith("data reused across trials: not in this run")


# ---------------------------------------------------------------- the config section and the jobs


def config_of(name="config/config.yaml"):
    """A shipped config as the workflow reads it: smoke.yaml merged over config.yaml (docs/configuration.md)."""
    overlays = [] if name == "config/config.yaml" else [REPO / name]
    return load_config(*overlays, default=REPO / "config" / "config.yaml")


def test_the_shipped_configs_name_the_protocol_the_corrected_experiment_and_the_exact_twins():
    full = check_table2(config_of(), load_experiments(config_of()))
    assert full["protocol"] == "variance_study_published" and full["corrected"] == "variance_study"
    assert full["names"] == {"direct-075": "direct-0.75", "direct-0841": "direct-0.841", "direct-09": "direct-0.9",
                             "general (k=1)": "general-k1", "general (k=4)": "general-k4"}
    assert full["exact"] == {"general-k1": "general-k1-exact", "general-k4": "general-k4-exact"}
    assert (full["source"], full["data"], full["trials"], full["fixed_data"]) == ("gaussian_std", {"n": 10000}, 100,
                                                                                  True)
    assert set(REFERENCE["method"]) == set(full["names"])
    smoke = check_table2(config_of("config/smoke.yaml"), load_experiments(config_of("config/smoke.yaml")))
    assert smoke["exact"] == full["exact"]  # the smoke config runs every method (its rule shrinks sizes only)


def test_without_a_table2_section_there_is_nothing_to_build():
    config = config_of()
    del config["table2"]
    assert check_table2(config, load_experiments(config)) == {}


@pytest.mark.parametrize(("change", "message"), [
    ({"protocol": "nowhere"}, r"table2\.protocol: no experiment 'nowhere'"),
    ({"protocol": "variance_study"}, r"table2\.protocol: experiment 'variance_study' must sweep sigma and rho with "
                                     r"metric relative_std"),
    ({"corrected": "gaussian_A"}, r"table2\.corrected: experiment 'gaussian_A' must sweep variance"),
    ({"names": {"direct-075": "direct-0.7"}}, r"table2\.names\.direct-075: 'direct-0\.7' is not a mechanism"),
])
def test_a_bad_table2_section_raises_one_config_error_naming_the_key(change, message):
    config = config_of()
    config["table2"].update(change)
    with pytest.raises(ConfigError, match=message):
        check_table2(config, load_experiments(config))


def test_exact_twins_pair_a_published_mechanism_with_the_exact_one_of_otherwise_equal_options():
    config = copy.deepcopy(config_of())
    experiment = config["experiments"]["variance_study_published"]
    experiment["mechanisms"] += [{"general-k4-share": {"algorithm": "std_general", "groups": 4,
                                                       "budget_share": 0.5}}]
    specs = load_experiments(config)["variance_study_published"].mechanisms
    assert exact_twins(specs) == {"general-k1": "general-k1-exact", "general-k4": "general-k4-exact"}


def test_the_jobs_write_the_tables_and_their_sidecars(tmp_path):
    setup = check_table2(config_of("config/smoke.yaml"), load_experiments(config_of("config/smoke.yaml")))
    setup = {**setup, "names": NAMES, "exact": EXACT}
    paths = {name: tmp_path / name for name in ["protocol.csv", "corrected.csv", "reference.csv"]}
    PROTOCOL.to_csv(paths["protocol.csv"], index=False)
    CORRECTED.to_csv(paths["corrected.csv"], index=False)
    REFERENCE.to_csv(paths["reference.csv"], index=False)
    out = tmp_path / "results"
    table2_job(summary=paths["protocol.csv"], reference=paths["reference.csv"], setup=setup,
               output=out / "table2.csv", caption=out / "table2.caption.txt", log=tmp_path / "t.log")
    table = pd.read_csv(out / "table2.csv")
    assert list(table.columns) == TABLE2_COLUMNS and len(table) == 6
    caption = (out / "table2.caption.txt").read_text()
    assert caption.count("\n") == 1 and "4 of 6 cells are within a factor of 1.5" in caption and "n = 600" in caption
    table2_erratum_job(protocol_summary=paths["protocol.csv"], corrected_summary=paths["corrected.csv"],
                       reference=paths["reference.csv"], setup=setup, seed=11, output=out / "erratum.csv",
                       caption=out / "erratum.caption.txt", notes=out / "erratum.notes.txt", log=tmp_path / "e.log")
    assert list(pd.read_csv(out / "erratum.csv").columns) == ERRATUM_COLUMNS
    assert (out / "erratum.caption.txt").read_text().count("\n") == 1
    lines = (out / "erratum.notes.txt").read_text().splitlines()
    assert len(lines) == 7 and lines[3].startswith("data reused across trials: all trials of a setting share")
    assert "[0, 20] there, 2,000 times wider" in lines[5]  # the smoke config's corrected universe, gaussian_scalar's
    assert sorted(p.name for p in out.iterdir()) == ["erratum.caption.txt", "erratum.csv", "erratum.notes.txt",
                                                     "table2.caption.txt", "table2.csv"]  # no temporary files left


def test_the_fixed_sample_deviations_are_those_of_the_sample_the_engine_ran_the_trials_on():
    config = {"seed": 5, "experiments": {"protocol": {
        "data": {"source": "gaussian_std", "n": 3000}, "grid": {"sigma": [0.001, 1.0], "rho": [0.01]},
        "trials": 3, "metric": "l2", "fixed_data": True, "mechanisms": ["empirical_mean"]}}}
    spec = load_experiments(config)["protocol"]
    setup = {"protocol": "protocol", "source": "gaussian_std", "data": {"n": 3000}}
    deviations = fixed_sample_deviations(setup, seed=5, sigmas=[0.001, 1.0])
    for sigma in (0.001, 1.0):
        cell = spec.cell(f"sigma={sigma:g}_rho=0.01")
        frame = run_one_cell(spec, cell, seed=5, log=None)
        sample = draw("gaussian_std", {"n": 3000, "sigma": sigma}, fixed_data_generator(5, "protocol", cell))
        assert (frame["error"] == abs(sample.x.mean() - 10.0)).all()  # the engine ran every trial on this sample
        median, upper = np.quantile(sample.x, [0.5, 0.841])
        assert deviations[sigma] == pytest.approx({"std": abs(np.std(sample.x, ddof=1) - sigma) / sigma,
                                                   "spread": abs(upper - median - sigma) / sigma}, rel=1e-12)
        # sampling errors of n = 3000 draws: about 1.3 % (std) and 3 % (spread) of sigma
        assert deviations[sigma]["std"] < 0.06 and deviations[sigma]["spread"] < 0.15


def test_the_universe_of_a_source_is_read_off_one_draw():
    assert universe("gaussian_scalar", {"n": 10000, "variance": 0.001}) == (0.0, 20.0)
    lo, hi = universe("gaussian_std", {"n": 10000, "sigma": 0.001})
    assert (lo, hi) == (pytest.approx(9.995), pytest.approx(10.005)) and math.isclose(hi - lo, 0.01, rel_tol=1e-9)
