"""scripts/authors_figure7.py: the authors' repository at the pinned commit, checked file by file,
their IOME run on Figure 7(b)'s setting, the table the erratum reads; offline it writes nothing."""
import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.outputs.errata import AUTHORS_CODE_COLUMNS, read_authors_code

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("authors_figure7", ROOT / "scripts" / "authors_figure7.py")
authors_figure7 = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = authors_figure7
SPEC.loader.exec_module(authors_figure7)

# A stand-in for their IOME with the same call and the same habits: NumPy's global generator, the
# per-coordinate work fanned out with joblib.
FAKE_METHOD = '''\
import numpy as np
from joblib import Parallel, delayed
from util.parameters import Results


def noisy(column, p):
    return column.mean() + np.random.normal(0, 1 / np.sqrt(p))


def random_rotation_mean(x, d, u, p, T=10, prop=0.25):
    mean = np.array(Parallel(n_jobs=2)(delayed(noisy)(x[:, j], p * T) for j in range(d)))
    return Results(mean, x.mean(axis=0))
'''
FAKE_PARAMETERS = '''\
from dataclasses import dataclass
import numpy as np


@dataclass
class Results:
    mean: np.ndarray
    unclipped_mean: np.ndarray
'''


@pytest.fixture
def fake_authors(tmp_path, monkeypatch):
    """A git repository with the two files the script runs; the script's checksums set to theirs."""
    work = tmp_path / "authors"
    files = {"quantile_binary_search/method.py": FAKE_METHOD, "util/parameters.py": FAKE_PARAMETERS}
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "code"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    monkeypatch.setattr(authors_figure7, "FILES", {path: hashlib.sha256(text.encode()).hexdigest()
                                                   for path, text in files.items()})
    monkeypatch.setattr(authors_figure7, "COMMIT", commit)
    return work / ".git", commit


def test_their_code_runs_on_both_data_sets_and_the_same_seed_gives_the_same_table(fake_authors, tmp_path):
    authors, commit = fake_authors
    tree = authors_figure7.checkout(authors, authors_figure7.URL, commit, tmp_path / "scratch")
    method = authors_figure7.authors_iome(tree)
    first = authors_figure7.run(method, trials=3, seed=5, d=8, n=200, rhos=(1.0,), progress=lambda _: None)
    again = authors_figure7.run(method, trials=3, seed=5, d=8, n=200, rhos=(1.0,), progress=lambda _: None)
    assert first == again  # their global generator seeded, joblib sequential
    keys = [(row["data"], row["implementation"], row["steps"]) for row in first]
    assert keys == [(data, name, steps) for data in ("C'", "C")
                    for name, steps in (("authors' code", 20), ("authors' code", 10), ("ours", 20))]
    # the fake's noise has sd 1 / sqrt(rho T) per coordinate: its distance to the empirical mean near sqrt(d / 20)
    authors20 = first[0]
    assert authors20["trials"] == 3 and 0.2 < authors20["median_vs_empirical"] < 1.5
    assert authors20["mean_vs_truth"] > 0


def test_the_script_writes_the_table_the_erratum_reads_with_its_provenance(fake_authors, tmp_path, monkeypatch):
    authors, commit = fake_authors
    real_run = authors_figure7.run
    monkeypatch.setattr(authors_figure7, "run", lambda method, **kw: real_run(method, d=8, n=200, **kw))
    output = tmp_path / "authors_code_figure7.csv"
    assert authors_figure7.main(["--authors", str(authors), "--trials", "2", "--output", str(output)]) == 0
    table = read_authors_code(output)
    assert list(table.columns) == list(AUTHORS_CODE_COLUMNS) and len(table) == 2 * 3 * 3
    assert set(table["commit"]) == {commit} and set(table["repository"]) == {authors_figure7.REPOSITORY}
    assert set(table["command"]) == {"python scripts/authors_figure7.py --trials 2 --seed 2024"}


def test_offline_it_says_not_run_here_and_writes_nothing(tmp_path, capsys):
    output = tmp_path / "out.csv"
    code = authors_figure7.main(["--url", f"file://{tmp_path}/no-such-repository", "--output", str(output)])
    assert code == 2 and not output.exists()
    assert capsys.readouterr().err.startswith("not run here: could not clone file://")


def test_a_file_that_is_not_the_pinned_one_is_refused(fake_authors, tmp_path, monkeypatch):
    authors, commit = fake_authors
    monkeypatch.setitem(authors_figure7.FILES, "util/parameters.py", "0" * 64)
    with pytest.raises(authors_figure7.NotRunHere, match=r"util/parameters.py at .* has SHA-256 [0-9a-f]{64}, "
                                                         r"expected 0{64}"):
        authors_figure7.checkout(authors, authors_figure7.URL, commit, tmp_path / "scratch")


def test_the_committed_table_is_complete_and_names_the_pinned_commit():
    table = read_authors_code(ROOT / "config" / "reference" / "authors_code_figure7.csv")
    assert set(table["commit"]) == {"94470ac71ec6d45537edf3168c95dbf29c2ebd93"}
    assert np.isfinite(table[["median_vs_empirical", "mean_vs_truth"]].to_numpy()).all()


def test_a_table_without_a_column_or_a_rho_is_an_error(tmp_path):
    committed = pd.read_csv(ROOT / "config" / "reference" / "authors_code_figure7.csv")
    committed.drop(columns="command").to_csv(tmp_path / "a.csv", index=False)
    with pytest.raises(ValueError, match=r"a.csv: no column\(s\) command \(write it with scripts/authors_figure7.py\)"):
        read_authors_code(tmp_path / "a.csv")
    committed[committed["rho"] != 0.5].to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(ValueError, match=r"b.csv: authors' code with 20 steps on C' has rho \[0.125, 1.0\]"):
        read_authors_code(tmp_path / "b.csv")
