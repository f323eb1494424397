"""The CoinPress covariance reproduction (docs/design.md §5.12, §6): the covariance_mahalanobis metric,
the engine running the covariance registry entries (a d x d release) with the source's prior ball,
the config's experiment against the authors' headline, the published values, and the scorecard item
computed from small synthetic summaries (not the full run)."""
import copy
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from datasets import Sample
from experiments.engine.config import load_experiments
from experiments.engine.metrics import METRICS, covariance_mahalanobis
from experiments.outputs.scorecard import COINPRESS_BAND, ITEMS_BY_NAME, build_scorecard
from experiments.planning.config_files import load_config
from mechanisms import covariance_schedule, gaussian_tail_radius
from testkit.engine import run_one_cell

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = pd.read_csv(REPO / "config" / "reference" / "published_coinpress_covariance.csv")
ITEM = "CoinPress covariance"


@pytest.fixture(scope="module")
def config():
    return load_config(default=REPO / "config" / "config.yaml")


# ----------------------------------------------------------------------------- the metric


def sample(x, std):
    return Sample(x=x, true_mean=np.zeros(x.shape[1]), true_std=std, bounds=(-1.0, 1.0))


def test_the_metric_is_the_frobenius_norm_of_the_whitened_estimate_minus_the_identity():
    std = np.array([1.0, 2.0, 0.5])
    estimate = np.array([[1.2, 0.4, 0.0], [0.4, 4.0, 0.1], [0.0, 0.1, 0.3]])
    x = np.random.default_rng(0).standard_normal((50, 3))
    error, _ = covariance_mahalanobis(estimate, sample(x, std), x.mean(axis=0))
    whitened = estimate / np.outer(std, std)
    assert error == pytest.approx(np.linalg.norm(whitened - np.eye(3)), rel=1e-14)
    assert error == pytest.approx(math.sqrt(0.2**2 + (0.4 / 2) ** 2 * 2 + (0.1 / 1) ** 2 * 2 + 0.2**2), rel=1e-12)
    assert covariance_mahalanobis(np.diag(std**2), sample(x, std), x.mean(axis=0))[0] == 0.0
    assert METRICS["covariance_mahalanobis"] is covariance_mahalanobis


def test_against_the_sample_covariance_the_sample_covariance_scores_zero_and_a_singular_one_nan():
    x = np.random.default_rng(1).standard_normal((200, 4)) * np.array([1.0, 3.0, 0.2, 1.0]) + 5.0
    own = np.cov(x, rowvar=False, bias=True)
    _, versus = covariance_mahalanobis(own, sample(x, np.ones(4)), x.mean(axis=0))
    assert versus == pytest.approx(0.0, abs=1e-12)
    values, vectors = np.linalg.eigh(own)
    inverse_root = vectors @ np.diag(values**-0.5) @ vectors.T
    estimate = own + 0.1 * np.eye(4)
    _, versus = covariance_mahalanobis(estimate, sample(x, np.ones(4)), x.mean(axis=0))
    assert versus == pytest.approx(np.linalg.norm(inverse_root @ estimate @ inverse_root - np.eye(4)), rel=1e-10)
    few = x[:3]  # n <= d: the sample covariance is singular
    assert math.isnan(covariance_mahalanobis(own, sample(few, np.ones(4)), few.mean(axis=0))[1])
    unknown = Sample(x=x, true_mean=None, true_std=None, bounds=(-1.0, 1.0))
    assert math.isnan(covariance_mahalanobis(own, unknown, x.mean(axis=0))[0])


# ----------------------------------------------------------------------------- the engine


def test_the_engine_runs_the_covariance_entries_with_the_sources_prior_ball():
    config = {"variants": {"cov": {"algorithm": "coinpress_covariance", "steps": 2, "covariance_bound": 4.0},
                           "cov-radius": {"algorithm": "coinpress_covariance", "steps": 1,
                                          "covariance_bound": "prior_radius"},
                           "mvc-mvm": {"algorithm": "coinpress_whitened_mean", "mean_steps": 3},
                           "sample": {"algorithm": "empirical_covariance"}},
              "experiments": {"tiny": {"data": {"source": "coinpress_gaussian", "n": 800, "d": 4, "radius_scale": 10},
                                       "grid": {"rho": [0.5]}, "trials": 3, "metric": "covariance_mahalanobis",
                                       "mechanisms": ["cov", "cov-radius", "sample"]},
                              "tiny_mean": {"data": {"source": "coinpress_gaussian", "n": 800, "d": 4,
                                                     "radius_scale": 10},
                                            "grid": {"rho": [0.5]}, "trials": 3, "mechanisms": ["mvc-mvm"]}}}
    specs = load_experiments(config)
    frame = run_one_cell(specs["tiny"], specs["tiny"].cells()[0], seed=3, log=None).set_index(["mechanism", "trial"])
    gamma = gaussian_tail_radius(4, 0.1)
    assert np.allclose(frame.loc["cov", "clip_threshold"], gamma) and np.allclose(frame.loc["cov", "ledger_total"], 0.5)
    assert (frame.loc["cov", "error"] < 1.5).all() and (frame.loc["cov", "error_vs_empirical"] < 1.5).all()
    assert np.allclose(frame.loc["sample", "error_vs_empirical"], 0.0, atol=1e-12)
    assert (frame.loc["sample", "error"] < 0.4).all()
    # u = R / sqrt(d) of the source's ball B(0, 10 sqrt(d)): 10, so the t = 1 noise is u times that of the rows'
    assert covariance_schedule(800, 4, rho=0.5, covariance_bound=10.0, steps=1).covariance_bound == 10.0
    assert frame.loc["cov-radius", "error"].notna().all()
    mean = run_one_cell(specs["tiny_mean"], specs["tiny_mean"].cells()[0], seed=3, log=None)
    assert np.allclose(mean["ledger_total"], 0.5) and (mean["error"] < 0.5).all()


# ----------------------------------------------------------------------------- the config and the published values


def test_the_experiment_is_the_authors_covariance_headline(config):
    spec = load_experiments(config)["coinpress_covariance"]
    assert spec.source == "coinpress_gaussian" and dict(spec.data) == {"d": 10, "radius_scale": 10}
    assert spec.metric == "covariance_mahalanobis" and spec.trials == 100
    assert [dict(cell.params)["n"] for cell in spec.cells()] == [int(n) for n in np.linspace(3000, 8000, 12)]
    assert {dict(cell.params)["rho"] for cell in spec.cells()} == {0.5}
    options = {m.name: m.options_dict() for m in spec.mechanisms}
    for t in range(1, 6):
        assert options[f"CoinPress-cov-t{t}"] == {"steps": t, "covariance_bound": pytest.approx(10 * math.sqrt(10)),
                                                  "psd": "absolute", "update": "code"}
        assert options[f"CoinPress-cov-consistent-t{t}"] == {"steps": t,
                                                             "covariance_bound": pytest.approx(10 * math.sqrt(10))}
    assert "empirical_covariance" in options


def test_the_published_values_are_the_authors_table_one_per_row():
    assert len(PUBLISHED) == 72 and set(PUBLISHED["item"]) == {ITEM}
    assert set(PUBLISHED["statistic"]) == {"trimmed_mean"} and set(PUBLISHED["trials"]) == {100}
    assert set(PUBLISHED["mechanism"]) == {"empirical_covariance", *(f"CoinPress-cov-t{t}" for t in range(1, 6))}
    # spot checks against the authors' files (results/synthetic_cov/*-1.txt): first and last n, every column
    table = PUBLISHED.pivot(index="n", columns="label", values="value")
    assert list(table.index) == [int(n) for n in np.linspace(3000, 8000, 12)]
    assert table.loc[3000].tolist() == [0.191425, 2.84315, 0.5574, 0.305952, 0.353318, 0.396873]
    assert table.loc[8000].tolist() == [0.116828, 1.34013, 0.159818, 0.132781, 0.136147, 0.141445]


def synthetic_summary(config, factor=1.0, relative_se=1e-4, trials=100):
    """Summaries in the layout the scorecard reads, every value the published one times ``factor``."""
    spec = load_experiments(config)["coinpress_covariance"]
    rows = []
    for mechanism in spec.mechanisms:
        for cell in spec.cells():
            params = dict(cell.params)
            match = PUBLISHED[(PUBLISHED["mechanism"] == mechanism.name) & (PUBLISHED["n"] == params["n"])]
            value = factor * float(match["value"].iloc[0]) if len(match) else 1.0
            rows.append({"experiment": "coinpress_covariance", "mechanism": mechanism.name, "n": params["n"],
                         "rho": params["rho"], "trials": trials, "median": value, "q25": value, "q75": value,
                         "mean": value, "std": value, "se": value, "trimmed_mean": value,
                         "trimmed_mean_se": relative_se * value})
    return pd.DataFrame(rows)


def covariance_card(config, summary):
    config = copy.deepcopy(config)
    config["figures"] = {"coinpress_covariance": config["figures"]["coinpress_covariance"]}
    table, values = build_scorecard(config=config, summary=summary, published=pd.DataFrame(
        columns=["experiment", "algorithm"]), quoted=pd.DataFrame(columns=["item"]), published_values=[PUBLISHED])
    return table.set_index("item").loc[ITEM], values


@pytest.mark.parametrize(("factor", "status"), [(1.0, "reproduced"), (1.08, "reproduced"), (1.12, "not reproduced")])
def test_the_scorecard_compares_every_published_value_within_10_percent(config, factor, status):
    assert ITEMS_BY_NAME[ITEM].band == COINPRESS_BAND
    assert config["figures"]["coinpress_covariance"]["reproduces"] == ITEM
    assert "config/reference/published_coinpress_covariance.csv" in config["scorecard"]["published_values"]
    row, values = covariance_card(config, synthetic_summary(config, factor))
    assert row["status"] == status and row["compared"] == 72
    assert np.allclose(values["ratio"], factor)


def test_with_fewer_trials_than_the_paper_the_item_is_not_comparable(config):
    config = copy.deepcopy(config)
    config["experiments"]["coinpress_covariance"]["trials"] = 10
    row, values = covariance_card(config, synthetic_summary(config, trials=10))
    assert row["status"] == "not comparable here" and "10 trials here, 100 in the paper" in row["note"]
