"""Estimators of one's own through the experiments (docs/configuration.md, "Your own estimator"):
the worked example beside PLAN through the engine, the config's checks before any cell runs,
the checks after every call with nothing written, fingerprints that follow the plug-in's file,
and the audit of a configured variant on a named pair."""
import copy
import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mechanisms
from experiments.audit.audits import CONTROL_FACTORS, PAIRS, VARIANT_AUDIT_RUNS, run_audit
from experiments.engine.cell_files import read_cell_file
from experiments.engine.config import (
    ConfigError,
    audit_fingerprint,
    check_audits,
    configured_audit,
    load_experiments,
    required_sample_options,
)
from experiments.engine.sources import draw
from experiments.engine.summary import summarise
from experiments.engine.trials import data_generator, mechanism_generator, run_cells
from experiments.jobs.runs import run_cells_job
from experiments.planning.config_files import load_config
from experiments.planning.run_plan import RunPlan
from mechanisms.audit import draw_statistics
from testkit.engine import run_one_cell

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = "examples/plugins/clipped_mean.py:clipped_mean"


def write(folder, name, text):
    path = Path(folder) / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def at_repo(monkeypatch):
    """The repository root as the working directory, as snakemake runs: the example's path is relative."""
    monkeypatch.chdir(REPO)
    return REPO


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def tiny(mechanisms_list, *, variants=None, budget="rho", grid=None, **experiment):
    return {
        "seed": 5,
        "variants": variants or {},
        "experiments": {"tiny": {"data": {"source": "gaussian_a", "n": 300}, "grid": grid or {"d": [4], budget: [0.5]},
                                 "trials": 3, "mechanisms": mechanisms_list, **experiment}},
    }


# ---------------------------------------------------------------- the worked example through the engine


def test_the_example_config_runs_the_example_plugin_beside_plan_exact(at_repo):
    config = load_config("config/examples/plugin.yaml")
    plan = RunPlan(config)
    assert list(plan.experiments) == ["plugin_gaussian"] and plan.audits == ["clipped_mean_plugin"]
    spec = plan.experiments["plugin_gaussian"]
    assert [m.name for m in spec.mechanisms] == ["PLAN-exact", "ClippedMean", "empirical_mean"]
    assert plan.trials.plugin_inputs("plugin_gaussian") == ["examples/plugins/clipped_mean.py"]
    cells = spec.settings()["d=16"]
    short = copy.deepcopy(config)
    short["experiments"]["plugin_gaussian"]["trials"] = 4
    spec = load_experiments(short)["plugin_gaussian"]
    frames = run_cells(spec, cells, seed=config["seed"], log=None)
    assert sorted(frames) == ["d=16_rho=0.25", "d=16_rho=1"]
    for cell in cells:
        frame = frames[cell.id]
        assert list(frame["mechanism"].unique()) == ["PLAN-exact", "ClippedMean", "empirical_mean"]
        ours = frame[frame["mechanism"] == "ClippedMean"]
        assert len(ours) == 4 and (ours["true_rho"] == cell.budget).all()
        for trial in range(4):
            # the engine gave the plug-in the trial's plain data, the source's universe, the cell's
            # rho and its own stream: a direct call with the same ones gives the same error
            sample = draw("gaussian_a", {"n": 2000, "d": 16}, data_generator(config["seed"], spec.id, cell, trial))
            direct = mechanisms.make_mechanism(EXAMPLE, interval=(-4.0, 4.0))(
                sample.x, rho=cell.budget, bounds=sample.bounds,
                rng=mechanism_generator(config["seed"], spec.id, cell, trial, "ClippedMean"))
            error = float(np.linalg.norm(direct.mean - sample.true_mean))
            assert ours["error"].iloc[trial] == pytest.approx(error, rel=1e-12)


def test_the_example_adds_the_gaussian_noise_its_docstring_states(at_repo):
    """sigma = (b - a) sqrt(d) / (n sqrt(2 rho)): the spread of repeated estimates on one dataset."""
    x = np.random.default_rng(8).normal(size=(400, 3))
    function = mechanisms.make_mechanism(EXAMPLE, interval=(-2.0, 2.0))
    rng = np.random.default_rng(9)
    means = np.array([function(x, rho=0.5, bounds=(-50.0, 50.0), rng=rng).mean for _ in range(4000)])
    sigma = 4.0 * np.sqrt(3) / (400 * np.sqrt(2 * 0.5))
    np.testing.assert_allclose(means.std(axis=0), sigma, rtol=0.05)
    np.testing.assert_allclose(means.mean(axis=0), np.clip(x, -2.0, 2.0).mean(axis=0), atol=4 * sigma / np.sqrt(4000))
    estimate = function(x, rho=0.5, bounds=(-50.0, 50.0), rng=rng)
    assert estimate.ledger == (mechanisms.LedgerEntry("gaussian_mean", 0.5),)
    assert estimate.diagnostics["noise_std"] == pytest.approx(sigma)


AGAIN = """
from mechanisms import iome, laplace, plan_gaussian

def plan_again(x, *, rho, bounds, rng, accounting="exact"):
    return plan_gaussian(x, rho=rho, bounds=bounds, rng=rng, accounting=accounting)

def iome_again(x, *, rho, bounds, rng, rotation_rng=None):
    return iome(x, rho=rho, bounds=bounds, rng=rng, rotation_rng=rotation_rng)

def laplace_again(samples, *, users, eps, bound, rng, batched=False):
    return laplace(samples, users=users, eps=eps, bound=bound, rng=rng, batched=batched)
"""


def test_a_plugin_is_called_exactly_as_the_registered_mechanism_it_wraps(workdir):
    """The same streams (noise per cell, IOME's rotation per setting), data and arguments: a
    plug-in that calls plan_gaussian or iome gives the registered mechanism's rows to the bit."""
    write(workdir, "again.py", AGAIN)
    registered = tiny(["PLAN", "IOME"], variants={"PLAN": {"algorithm": "plan_gaussian"},
                                                  "IOME": {"algorithm": "iome"}},
                      grid={"d": [4], "rho": [0.5, 1.0]})
    plugged = copy.deepcopy(registered)
    plugged["variants"] = {"PLAN": {"algorithm": "again.py:plan_again", "accounting": "exact"},
                           "IOME": {"algorithm": "again.py:iome_again"}}
    registered["variants"]["PLAN"] = {"algorithm": "plan_gaussian", "accounting": "exact"}
    frames = []
    for config in (registered, plugged):
        spec = load_experiments(config)["tiny"]
        frames.append(run_cells(spec, spec.cells(), seed=5, log=None))
    for cell_id in frames[0]:
        pd.testing.assert_frame_equal(frames[0][cell_id].drop(columns="runtime_s"),
                                      frames[1][cell_id].drop(columns="runtime_s"))
    # published accounting books the true cost of every step, more than rho: a plug-in may not
    plugged["variants"]["PLAN"]["accounting"] = "published"
    spec = load_experiments(plugged)["tiny"]
    with pytest.raises(mechanisms.PluginContractError, match=r"'again.py:plan_again': its ledger sums to 1.89"):
        run_cells(spec, spec.cells(), seed=5, log=None)


USER_LEVEL = {"data": {"source": "userlevel", "collection": "geometric", "M": 3, "bound": 65}, "trials": 40,
              "metric": "l1", "grid": {"eps": [0.5, 2.0]}, "batch_size": 20}


def test_a_batched_user_level_plugin_runs_on_the_batched_path_like_the_mechanism_it_wraps(workdir):
    write(workdir, "again.py", AGAIN)
    frames = []
    for algorithm in ("laplace", "again.py:laplace_again"):
        mechanism = {"Laplace": {"algorithm": algorithm}}
        config = {"seed": 5, "experiments": {"users": {**USER_LEVEL, "mechanisms": [mechanism]}}}
        spec = load_experiments(config)["users"]
        assert spec.batch_size == 20 and spec.budget == "eps"
        frames.append(run_cells(spec, spec.cells(), seed=5, log=None))
    for cell_id in frames[0]:
        pd.testing.assert_frame_equal(frames[0][cell_id], frames[1][cell_id])


LIAR = """
import numpy as np
from mechanisms import Estimate, LedgerEntry, PureLedgerEntry, laplace

CALLS = []

def books_a_quarter(x, *, rho, bounds, rng):
    return Estimate(mean=np.asarray(x).mean(axis=0), ledger=(LedgerEntry("mean", rho / 4),))

def nan_on_the_third_call(x, *, rho, bounds, rng):
    CALLS.append(1)
    mean = np.asarray(x).mean(axis=0) + rng.normal(size=x.shape[1])
    return Estimate(mean=mean * (np.nan if len(CALLS) == 3 else 1.0), ledger=(LedgerEntry("mean", rho),))

def divides_by_zero(x, *, rho, rng):
    return 1 // 0

def batched_liar(samples, *, users, eps, bound, rng, batched=False):
    estimate = laplace(samples, users=users, eps=eps, bound=bound, rng=rng, batched=batched)
    return Estimate(mean=estimate.mean, ledger=(PureLedgerEntry("laplace", 2 * eps),))
"""


def test_a_broken_contract_stops_the_cell_job_naming_where_and_nothing_is_written(workdir):
    write(workdir, "liar.py", LIAR)
    config = tiny(["empirical_mean", "Liar"], variants={"Liar": {"algorithm": "liar.py:books_a_quarter"}})
    output = workdir / "results" / "tiny" / "cells" / "d=4_rho=0.5.csv"
    with pytest.raises(mechanisms.PluginContractError,
                       match=r"experiment tiny, cell d=4_rho=0.5, trial 0, mechanism 'Liar': plug-in "
                             r"'liar.py:books_a_quarter': its ledger sums to 0.125 rho, not the rho=0.5"):
        run_cells_job(config=config, experiment="tiny", cells=["d=4_rho=0.5"], outputs=[str(output)],
                      log=str(workdir / "cell.log"))
    assert not output.exists() and not list(output.parent.glob("*"))


def test_an_exception_inside_a_plugin_stops_the_job_naming_the_variant_and_the_plugin(workdir):
    write(workdir, "liar.py", LIAR)
    config = tiny(["empirical_mean", "Mine"], variants={"Mine": {"algorithm": "liar.py:divides_by_zero"}})
    output = workdir / "results" / "tiny" / "cells" / "d=4_rho=0.5.csv"
    with pytest.raises(mechanisms.PluginError,
                       match=r"experiment tiny, cell d=4_rho=0.5, trial 0, mechanism 'Mine': plug-in "
                             r"'liar.py:divides_by_zero' raised ZeroDivisionError: integer division or modulo by zero"):
        run_cells_job(config=config, experiment="tiny", cells=["d=4_rho=0.5"], outputs=[str(output)],
                      log=str(workdir / "cell.log"))
    assert not output.exists()


def test_every_call_is_checked_so_a_later_trial_s_failure_stops_the_whole_setting_job(workdir):
    write(workdir, "liar.py", LIAR)
    config = tiny(["Flaky"], variants={"Flaky": {"algorithm": "liar.py:nan_on_the_third_call"}},
                  grid={"d": [4], "rho": [0.5, 1.0]}, share_rho=True)
    outputs = [str(workdir / "results" / "tiny" / "cells" / f"d=4_rho={rho}.csv") for rho in ("0.5", "1")]
    # calls: trial 0 at rho 0.5 and 1, then trial 1 at rho 0.5: the third
    with pytest.raises(mechanisms.PluginContractError, match=r"cell d=4_rho=0.5, trial 1, mechanism 'Flaky'.*"
                                                             r"4 non-finite value"):
        run_cells_job(config=config, experiment="tiny", cells=["d=4_rho=0.5", "d=4_rho=1"], outputs=outputs,
                      log=str(workdir / "setting.log"))
    assert not any(Path(path).exists() for path in outputs)


REFUSER = """
import numpy as np
from mechanisms import Estimate, LedgerEntry, MechanismRefusal

def declines_small_budgets(x, *, rho, bounds, rng):
    if rho < 1.0:
        raise MechanismRefusal(f"rho={rho} is too little for me")
    return Estimate(mean=np.asarray(x).mean(axis=0) + rng.normal(size=x.shape[1]), ledger=(LedgerEntry("mean", rho),))
"""


def test_a_refusal_is_recorded_as_a_row_without_errors_and_read_back_checked(workdir):
    """mechanisms.MechanismRefusal is an outcome (docs/design.md §6.1): its rows say why and have no
    errors; the other mechanisms' rows, the cell files' checks and the summary go on."""
    write(workdir, "refuser.py", REFUSER)
    # Picky first: the cell's first row is a refusal, and its columns (an extra metric's too) still come in a
    # released row's order
    config = tiny(["Picky", "empirical_mean"], variants={"Picky": {"algorithm": "refuser.py:declines_small_budgets"}},
                  grid={"d": [4], "rho": [0.5, 1.0]}, share_rho=True, extra_metrics=["l1"])
    outputs = [workdir / "results" / "tiny" / "cells" / f"d=4_rho={rho}.csv" for rho in ("0.5", "1")]
    run_cells_job(config=config, experiment="tiny", cells=["d=4_rho=0.5", "d=4_rho=1"],
                  outputs=[str(path) for path in outputs], log=str(workdir / "setting.log"))
    low, high = (read_cell_file(path, trials=range(3), mechanisms=["empirical_mean", "Picky"]) for path in outputs)
    picky = low[low["mechanism"] == "Picky"]
    assert picky["refused"].tolist() == ["rho=0.5 is too little for me"] * 3
    assert picky[["error", "error_vs_empirical", "true_rho"]].isna().all().all()
    assert low[low["mechanism"] == "empirical_mean"]["refused"].isna().all()
    assert np.isfinite(low[low["mechanism"] == "empirical_mean"]["error"]).all()
    assert "refused" not in high.columns and np.isfinite(high["error"]).all()  # no refusal, no column
    assert list(low.columns) == [*high.columns, "refused"]
    summary = summarise(pd.concat([low, high]), ["d", "rho"]).set_index(["mechanism", "rho"])
    assert summary.loc[("Picky", 0.5), "refused"] == 3 and summary.loc[("Picky", 1.0), "refused"] == 0
    assert np.isnan(summary.loc[("Picky", 0.5), "mean"]) and np.isfinite(summary.loc[("Picky", 1.0), "mean"])


def test_a_lying_ledger_stops_a_batched_run_naming_the_batch(workdir):
    write(workdir, "liar.py", LIAR)
    config = {"seed": 5, "experiments": {"users": {**USER_LEVEL, "mechanisms": [{"Liar": {
        "algorithm": "liar.py:batched_liar"}}]}}}
    spec = load_experiments(config)["users"]
    with pytest.raises(mechanisms.PluginContractError, match=r"cell eps=0.5, batch 0, mechanism 'Liar'.*sums to 1.0 "
                                                             r"eps, not the eps=0.5"):
        run_cells(spec, spec.cells(), seed=5, log=None)


def test_a_plugin_cell_s_fingerprint_follows_its_file_and_other_fingerprints_stay(workdir):
    path = write(workdir, "again.py", AGAIN)
    config = tiny(["PLAN", "iome"], variants={"PLAN": {"algorithm": "again.py:plan_again"}})
    spec = load_experiments(config)["tiny"]
    (cell,) = spec.cells()
    before = json.loads(spec.fingerprint(cell))
    assert before["plugin_sources"] == {"PLAN": mechanisms.source_digest("again.py:plan_again")}
    path.write_text(AGAIN + "\n# tuned\n")
    after = json.loads(spec.fingerprint(cell))
    assert after["plugin_sources"] != before["plugin_sources"]
    assert {key: value for key, value in after.items() if key != "plugin_sources"} == \
        {key: value for key, value in before.items() if key != "plugin_sources"}
    registered = load_experiments(tiny(["plan_gaussian", "iome"]))["tiny"]
    assert "plugin_sources" not in json.loads(registered.fingerprint(registered.cells()[0]))


def test_run_cell_gives_a_plugin_the_true_std_it_requires_unless_the_variant_sets_it(workdir):
    write(workdir, "oracle.py", """
        import numpy as np
        from mechanisms import Estimate, LedgerEntry
        def std_as_mean(x, *, rho, rng, std):
            return Estimate(mean=np.broadcast_to(np.asarray(std, dtype=float), (x.shape[1],)).copy(),
                            ledger=(LedgerEntry("none", rho),))
        """)
    assert required_sample_options("oracle.py:std_as_mean") == ["std"]
    assert required_sample_options("oracle.py:std_as_mean", {"std": 3.0}) == []
    config = tiny(["FromSample", "Given"], variants={"FromSample": {"algorithm": "oracle.py:std_as_mean"},
                                                     "Given": {"algorithm": "oracle.py:std_as_mean", "std": 3.0}})
    spec = load_experiments(config)["tiny"]
    frame = run_one_cell(spec, spec.cells()[0], seed=5, log=None).set_index(["mechanism", "trial"])["error"]
    # gaussian_a: true mean 0, true std 1 in d = 4; the errors are ||std||
    assert frame.loc["FromSample"].to_numpy() == pytest.approx([2.0] * 3)
    assert frame.loc["Given"].to_numpy() == pytest.approx([6.0] * 3)


# ---------------------------------------------------------------- the config's checks before any cell runs


@pytest.mark.parametrize(("source", "variant", "message"), [
    (None, {"algorithm": "missing.py:f"}, r"variants\.Mine\.algorithm: plug-in 'missing.py:f': no file 'missing.py'"),
    ("raise ImportError('needs torch')\n", {"algorithm": "mine.py:f"},
     r"variants\.Mine\.algorithm: plug-in 'mine.py:f': importing mine.py raised ImportError: needs torch"),
    ("def f(x, *, rho, seed): pass\n", {"algorithm": "mine.py:f"},
     r"variants\.Mine\.algorithm: plug-in 'mine.py:f': takes no keyword argument 'rng'"),
    ("def f(x, *, rho, rng, width=1): pass\n", {"algorithm": "mine.py:f", "depth": 2},
     r"variants\.Mine\.depth: mine.py:f has no option 'depth' \(accepted: \['width'\]\)"),
    ("def f(x, *, rho, rng, width): pass\n", {"algorithm": "mine.py:f"},
     r"variants\.Mine: mine.py:f needs option 'width' \(it has no default\); set it here"),
    ("def f(x, *, rho, rng, **more): pass\n", {"algorithm": "mine.py:f", "bounds": [0, 1]},
     r"variants\.Mine\.bounds: mine.py:f has no option 'bounds'"),
    (None, {"algorithm": "plan_gausian"}, r"variants\.Mine\.algorithm: unknown algorithm 'plan_gausian'.*plug-in"),
])
def test_a_bad_plugin_variant_is_one_config_error_naming_the_variant_the_file_and_the_problem(
        workdir, source, variant, message):
    if source is not None:
        write(workdir, "mine.py", source)
    with pytest.raises(ConfigError, match=message) as caught:
        load_experiments(tiny(["iome"], variants={"Mine": variant}))
    assert "\n" not in str(caught.value)


def test_a_pure_dp_plugin_beside_zcdp_mechanisms_is_a_mixed_budget_error(workdir):
    write(workdir, "mine.py", "def f(x, *, eps, bounds, rng): pass\n")
    with pytest.raises(ConfigError, match=r"experiments\.tiny\.mechanisms: mixes privacy budgets \(iome: rho, "
                                          r"Mine: eps\)"):
        load_experiments(tiny(["iome", {"Mine": {"algorithm": "mine.py:f"}}]))


# ---------------------------------------------------------------- the audit of a configured variant


BROKEN = """
import math
import numpy as np
from mechanisms import Estimate, LedgerEntry, gaussian_sigma

def four_times(x, *, rho, bounds, rng):
    '''A clipped mean whose noise is calibrated for 4 rho while its ledger books rho.'''
    low, high = bounds
    n, d = x.shape
    sigma = gaussian_sigma(sensitivity=(high - low) * math.sqrt(d) / n, rho=4 * rho)
    mean = np.clip(x, low, high).mean(axis=0) + rng.normal(0.0, sigma, size=d)
    return Estimate(mean=mean, ledger=(LedgerEntry("gaussian_mean", rho),))
"""

AUDIT_RUNS = 20_000  # per dataset; measured (seeds 0-4, claim 0.25): example 0.12-0.15, control 0.59-0.66


def audits_config(entries, variants=None):
    return {"seed": 1, "experiments": {}, "variants": variants or {}, "audits": entries}


def test_the_example_plugin_audited_on_whole_1d_is_not_flagged_and_its_control_is(at_repo):
    config = audits_config({"mine": {"variant": "CM", "pair": "whole_1d", "budget": 0.25, "runs": AUDIT_RUNS}},
                           variants={"CM": {"algorithm": EXAMPLE}})
    assert check_audits(config) == ["mine"]
    audit = configured_audit(config, "mine")
    assert audit.mechanism == f"CM: {EXAMPLE}"
    assert (audit.pair, audit.neighbours, audit.accounting) == (PAIRS["whole_1d"].description, "swap", "configured")
    assert (audit.budget_name, audit.measure, audit.budget, audit.runs) == ("rho", "rho", 0.25, AUDIT_RUNS)
    assert audit.control == "noise scale halved (rho x 4)" and not audit.expected_violation
    outcome = run_audit(audit, rng=np.random.default_rng(0))
    assert not outcome.violation and outcome.control_violation and outcome.passed, outcome.as_dict()
    assert outcome.lower_bound < 0.2 < 0.5 < outcome.control_lower_bound
    row = outcome.as_dict()
    assert row["mechanism"] == f"CM: {EXAMPLE}" and row["neighbours"] == "swap" and row["measure"] == "rho-zCDP"


def test_a_plugin_whose_ledger_books_a_quarter_of_its_spend_is_flagged(workdir):
    write(workdir, "broken.py", BROKEN)
    config = audits_config({"lies": {"variant": {"algorithm": "broken.py:four_times"}, "pair": "whole_1d",
                                     "budget": 0.25, "runs": AUDIT_RUNS, "expect_violation": True}})
    audit = configured_audit(config, "lies")
    assert audit.mechanism == "lies: broken.py:four_times" and audit.expected_violation
    outcome = run_audit(audit, rng=np.random.default_rng(1))
    assert outcome.violation and outcome.control_violation and outcome.passed, outcome.as_dict()
    assert outcome.lower_bound > 0.4


def test_a_pure_dp_variant_is_claimed_in_eps_its_control_doubles_eps_and_binary_items_reads_the_item_difference(
        workdir):
    write(workdir, "binary.py", """
        import numpy as np
        from mechanisms import Estimate, PureLedgerEntry
        SEEN = []
        def item_means(x, *, eps, bounds, rng):
            SEEN.append((type(x).__name__, bounds, eps))
            return Estimate(mean=np.asarray(x.mean(axis=0)).ravel(), ledger=(PureLedgerEntry("means", eps),))
        """)
    config = audits_config({"items": {"variant": "Items", "pair": "binary_items", "budget": 0.5}},
                           variants={"Items": {"algorithm": "binary.py:item_means"}})
    audit = configured_audit(config, "items")
    assert (audit.budget_name, audit.measure, audit.runs) == ("eps", "eps", VARIANT_AUDIT_RUNS)
    assert audit.claim(0.5) == 0.5 and audit.control == "noise scale halved (eps x 2)"
    function = mechanisms.make_mechanism("binary.py:item_means")
    seen = sys.modules[function.__module__].SEEN
    for broken, eps in ((False, 0.5), (True, 0.5 * CONTROL_FACTORS["eps"])):
        setup = audit.setup(0.5, broken)
        values = [draw_statistics(setup.mechanism, data, runs=2, rng=np.random.default_rng(0),
                                  statistic=setup.statistic) for data in (setup.x, setup.x_neighbour)]
        # 50 rows hold item 0 and 49 item 1 in x, the other way round in x': mean_0 - mean_1 = +-1/100
        np.testing.assert_allclose(values, [[0.01, 0.01], [-0.01, -0.01]])
        assert seen[-1] == ("csr_matrix", (0.0, 1.0), eps)


@pytest.mark.parametrize(("entry", "variants", "message"), [
    ({"variant": "Nobody", "pair": "whole_1d", "budget": 1}, {},
     r"audits\.mine\.variant: no variant 'Nobody' under variants:"),
    ({"variant": "iome", "pair": "whole_2d", "budget": 1}, {}, r"audits\.mine\.pair: unknown pair 'whole_2d'; known: "
                                                             r"\['binary_items', 'whole_1d'\]"),
    ({"variant": "iome", "budget": 1}, {}, r"audits\.mine\.pair: an audit of a variant needs a neighbouring pair"),
    ({"variant": "iome", "pair": "whole_1d"}, {}, r"audits\.mine\.budget: an audit of a variant needs the budget it "
                                                  r"claims \(iome spends rho\)"),
    ({"variant": "OPT", "pair": "whole_1d", "budget": 1}, {"OPT": {"algorithm": "opt_worst_case"}},
     r"audits\.mine\.variant: OPT is a user-level mechanism \(it takes users, bound, batched"),
    ({"variant": "plan_oracle", "pair": "whole_1d", "budget": 1}, {},
     r"audits\.mine\.variant: plan_oracle takes 'std' from the data sample"),
    ({"variant": {"algorithm": "iome", "colour": 1}, "pair": "whole_1d", "budget": 1}, {},
     r"audits\.mine\.variant\.colour: iome has no option 'colour'"),
    ({"variant": {"algorithm": "missing.py:f"}, "pair": "whole_1d", "budget": 1}, {},
     r"audits\.mine\.variant\.algorithm: plug-in 'missing.py:f': no file"),
    ({"pair": "whole_1d"}, {}, r"audits\.mine: no such audit; known: .*or an audit of a configured variant"),
])
def test_a_bad_variant_audit_is_one_config_error_naming_the_key(workdir, entry, variants, message):
    with pytest.raises(ConfigError, match=message):
        check_audits(audits_config({"mine": entry}, variants))


def test_registered_audits_keep_their_names_and_take_no_variant_keys():
    with pytest.raises(ConfigError, match=r"audits\.gaussian_step\.pair: only for an audit of a configured variant"):
        check_audits(audits_config({"gaussian_step": {"pair": "whole_1d"}}))
    with pytest.raises(ConfigError, match=r"audits\.gaussian_step: 'gaussian_step' is a registered audit; give"):
        check_audits(audits_config({"gaussian_step": {"variant": "iome", "pair": "whole_1d", "budget": 1}}))
    config = audits_config({"gaussian_step": {"runs": 1000}})
    assert configured_audit(config, "gaussian_step").name == "gaussian_step"
    assert audit_fingerprint(config, "gaussian_step") is None


def test_a_variant_audit_s_fingerprint_and_inputs_follow_its_variant_and_plugin_file(workdir):
    path = write(workdir, "broken.py", BROKEN)
    config = audits_config({"lies": {"variant": {"algorithm": "broken.py:four_times"}, "pair": "whole_1d",
                                     "budget": 0.25}})
    config["experiments"] = tiny(["iome"])["experiments"]
    plan = RunPlan(config)
    assert plan.targets.audit_inputs("lies") == ["broken.py"]
    before = plan.targets.audit_fingerprint("lies")
    assert json.loads(before)["plugin_source"] == mechanisms.source_digest("broken.py:four_times")
    path.write_text(BROKEN + "\n# again\n")
    assert plan.targets.audit_fingerprint("lies") != before
    config["audits"]["lies"]["pair"] = "binary_items"
    assert json.loads(audit_fingerprint(config, "lies"))["pair"] == "binary_items"
