"""scripts/published_summaries.py: the authors' per-trial result files, read from a local clone at a
commit, summarised per setting (with the tail and the error relative to the empirical mean)."""
import importlib.util
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("published_summaries", ROOT / "scripts" / "published_summaries.py")
published = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = published
SPEC.loader.exec_module(published)

EMPIRICAL = "Empirical mean (non-private)"


def gaussian_file(plan_errors, empirical_errors):
    rows = [("PLAN", e) for e in plan_errors] + [(EMPIRICAL, e) for e in empirical_errors]
    return pd.DataFrame([{"Algorithm": label, "u": "(-1, 1)", "n": 4000, "d": 16, "rho": 0.125, "mean": 0,
                          "cov": "STRATEGY_UNIFORM", "r": 0, "run": run, "error": error}
                         for run, (label, error) in enumerate(rows)])


def authors_repository(tmp_path, plan_errors=(1.0, 2.0, 2.0, 3.0, 9.5), empirical_errors=(1.0, 1.5, 2.0)):
    """A git repository with a tiny result file per experiment, in the authors' columns."""
    work = tmp_path / "authors"
    for experiment in published.SETTINGS:
        folder = work / "experiments_results" / experiment
        folder.mkdir(parents=True)
        if experiment.startswith("gaussian"):
            frame = gaussian_file(plan_errors, empirical_errors)
        elif experiment == "synthetic":
            frame = pd.DataFrame({"label": EMPIRICAL, "run": [0, 1], "error": [0.1, 0.3], "n": 4096, "d": 256,
                                  "rho": 0.0625, "ratio": 0.25, "time": 0.0})
        else:
            frame = pd.DataFrame({"label": "instance optimal", "run": [0, 1], "error": [0.2, 0.4], "rho": 0.5,
                                  "time": 900.0})
        frame.to_csv(folder / "dataframe.csv")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "results"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    return work / ".git", commit


def test_each_setting_gets_its_statistics_its_tail_and_its_error_relative_to_the_empirical_mean(tmp_path):
    authors, commit = authors_repository(tmp_path)
    table = pd.read_csv(io.StringIO(published.published_summaries(authors, commit)))
    plan = table[(table["experiment"] == "gaussianA") & (table["algorithm"] == "PLAN")].iloc[0]
    errors = pd.Series([1.0, 2.0, 2.0, 3.0, 9.5])
    assert plan["trials"] == 5 and plan["mean"] == pytest.approx(errors.mean())
    assert plan["sd"] == pytest.approx(errors.std(ddof=1), rel=1e-5)
    assert (plan["median"], plan["max"], plan["above_3x_median"]) == (2.0, 9.5, 1)  # 9.5 > 3 x 2
    relative = (errors - 1.5).abs()  # the empirical mean's mean error at the setting: 1.5
    assert plan["mean_relative_to_empirical"] == pytest.approx(relative.mean())
    assert plan["median_relative_to_empirical"] == pytest.approx(relative.median())
    assert (plan["n"], plan["d"], plan["alpha"], plan["cov"]) == (4000, 16, 0, "STRATEGY_UNIFORM")
    real = table[table["experiment"] == "POS"].iloc[0]
    assert real["trials"] == 2 and pd.isna(real["mean_relative_to_empirical"])  # no empirical mean in the file
    assert list(table.columns) == published.COLUMNS


def test_the_script_writes_the_table_and_check_fails_once_it_differs(tmp_path, monkeypatch, capsys):
    authors, commit = authors_repository(tmp_path)
    output = tmp_path / "published_summaries.csv"
    monkeypatch.setattr(published, "OUTPUT", output)
    monkeypatch.setattr(published, "ROOT", tmp_path)
    assert published.main(["--authors", str(authors), "--commit", commit]) == 0
    assert published.main(["--authors", str(authors), "--commit", commit, "--check"]) == 0
    output.write_text(output.read_text().replace("9.5", "9.4"))
    assert published.main(["--authors", str(authors), "--commit", commit, "--check"]) == 1
    assert f"differs from the summaries of {published.REPOSITORY}@{commit}" in capsys.readouterr().err


def test_a_commit_the_clone_does_not_have_is_one_error_naming_it(tmp_path):
    authors, _ = authors_repository(tmp_path)
    with pytest.raises(SystemExit, match=r"cannot read experiments_results/gaussianA/dataframe.csv at 0{40}"):
        published.published_summaries(authors, "0" * 40)


def test_the_committed_table_has_the_columns_the_script_writes():
    committed = pd.read_csv(ROOT / "config" / "reference" / "published_summaries.csv")
    assert list(committed.columns) == published.COLUMNS and len(committed) == 1336
