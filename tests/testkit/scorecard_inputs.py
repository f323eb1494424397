"""The scorecard's synthetic inputs, shared by the tests of the scorecard and of the claims
(tests/experiments/test_scorecard.py, test_claims.py): a Gaussian A summary and the authors' files
for it, a config that draws and compares it, Figure 6's numbers, and the committed results."""
import math

import pandas as pd

from experiments.outputs.scorecard import build_scorecard
from testkit.workflow_runs import REPO

D_VALUES = (16, 32, 64, 128, 256, 512, 1024, 2048)
RHOS = (0.125, 0.25, 0.5, 1.0)
PUBLISHED_NAMES = {"PLAN-E-ULTIMATE++": "PLAN", "Instance optimal": "IOME", "Empirical mean (non-private)":
                   "empirical_mean", "PLAN-NOSCALE": "coordinate_median"}
BASE = {"PLAN": 1.0, "IOME": 1.05, "empirical_mean": 0.3, "coordinate_median": 0.95}


def our_rows(experiment="gaussian_A", factor=None, trials=50, mechanisms=BASE):
    """A Gaussian A summary over d and rho: mean = base * sqrt(d) / sqrt(rho) (empirical mean: no rho),
    sd = 10 % of it; ``factor`` multiplies chosen (mechanism, d) means."""
    rows = []
    for mechanism, base in mechanisms.items():
        for d in D_VALUES:
            for rho in RHOS:
                mean = base * math.sqrt(d) / (1.0 if mechanism == "empirical_mean" else math.sqrt(rho))
                mean *= (factor or {}).get((mechanism, d), 1.0)
                row = {"experiment": experiment, "mechanism": mechanism, "d": d, "rho": rho, "trials": trials}
                for suffix in ("", "_vs_empirical", "_relative_to_empirical"):
                    row.update({f"median{suffix}": mean, f"q25{suffix}": 0.9 * mean, f"q75{suffix}": 1.1 * mean,
                                f"mean{suffix}": mean, f"std{suffix}": 0.1 * mean,
                                f"se{suffix}": 0.1 * mean / math.sqrt(trials)})
                rows.append(row)
    return pd.DataFrame(rows)


def published_rows():
    """The authors' files for the same experiment: exactly the base means."""
    frame = our_rows()
    labels = {ours: theirs for theirs, ours in PUBLISHED_NAMES.items()}
    return pd.DataFrame({
        "experiment": "gaussianA", "source": "x", "algorithm": frame["mechanism"].map(labels), "n": 4000,
        "d": frame["d"], "rho": frame["rho"], "alpha": 0, "cov": "u", "ratio": math.nan, "trials": 50,
        "mean": frame["mean"], "sd": frame["std"], "median": frame["median"], "q25": frame["q25"],
        "q75": frame["q75"]})


def config(**changes):
    base = {
        "experiments": {"gaussian_A": {"data": {"source": "gaussian_a", "n": 4000}, "trials": 50},
                        "kosarak": {"data": {"source": "real_dataset", "dataset": "kosarak"}, "trials": 50}},
        "datasets": {"kosarak": {"expect": {"n": 75462}}},
        "figures": {
            "figure3": {"title": "3", "reproduces": "PLAN Figure 3", "panels": [
                {"experiment": "gaussian_A", "title": "(a)", "x": "d", "rho": [0.125, 1.0],
                 "where": {"d": [16, 32, 64, 128, 256, 512, 1024]}, "mechanisms": ["PLAN", "IOME", "empirical_mean"]}]},
            "figure5_real": {"title": "5bc", "reproduces": "PLAN Figure 5 (b), (c)", "panels": [
                {"experiment": "kosarak", "title": "(b)", "x": "rho", "mechanisms": ["PLAN"]}]},
            "mine": {"title": "Our own figure", "panels": [
                {"experiment": "gaussian_A", "title": "(a)", "x": "d", "mechanisms": ["PLAN"]}]},
        },
        "scorecard": {"experiments": {
            "gaussian_A": {"paper": {"n": 4000}, "trials": 50, "published": "gaussianA", "names": PUBLISHED_NAMES},
            "kosarak": {"paper": {"n": 75462}}}},
    }
    for path, value in changes.items():
        target = base
        keys = path.split(".")
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return base


QUOTED = pd.DataFrame([{"item": "PLAN Figure 7", "experiment": "gaussian_A", "mechanism": "IOME", "d": 1024, "rho": 1.0,
                        "statistic": "median", "measure": "error_vs_empirical", "value": 100.0,
                        "quote": "Appendix E: made up"}])


def card(cfg=None, summary=None, **keys):
    table, values = build_scorecard(config=cfg or config(), summary=our_rows() if summary is None else summary,
                                    published=published_rows(), quoted=QUOTED.iloc[0:0], **keys)
    return table.set_index("item"), values


FIGURE6 = pd.DataFrame({
    "scaling": ["first_moment", "second_moment", "even_split", "no_scaling"],
    "std_horizontal": [4.73, 4.47, 5.66, 4.12], "std_vertical": [1.88, 2.24, 1.41, 4.12],
    "expected_l1": [5.27, 5.35, 5.64, 6.58], "expected_l2_squared": [25.9, 25.0, 34.0, 34.0]})


def committed(name):
    return pd.read_csv(REPO / "results" / name, keep_default_na=False)

