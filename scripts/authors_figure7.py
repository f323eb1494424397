"""Run the PLAN authors' own IOME on Figure 7(b)'s setting and write the table its erratum reads.

Appendix E of the PLAN paper quotes IOME's median l2 distance to the empirical mean on Gaussian C'
(correlation 0.5, alpha = 2, d = 1024, n = 10000) as 22.61 / 45.19 / 66.5 at rho = 1 / 0.5 / 0.125.
This script obtains the authors' repository at the pinned commit (a local clone with `--authors`,
else `git clone` of `--url`; offline it says "not run here" and writes nothing), checks the
SHA-256 of the two files it runs, imports their `random_rotation_mean` and runs it, as their
`simulations/baseline_comparison.py` calls it (p = rho, prop = 0.25, universe (-M, M)), on samples
of our `gaussian_c_corr` and `gaussian_skewed` sources, with 20 binary-search steps (their
setting) and 10; our `mechanisms.iome` runs on the same samples. It writes, per data set,
implementation, steps and rho: the median distance to the empirical mean and the mean distance to
the true mean, with the repository, commit and command
(config/reference/authors_code_figure7.csv; experiments/outputs/errata.py reads it).

Their code draws from NumPy's global generator and fans the per-coordinate searches out with
joblib: the script seeds the global generator (the one place in the project that does, because
their code reads it) and runs joblib sequentially, so the same seed gives the same table.

    python scripts/authors_figure7.py --authors /path/to/PLAN-experiments/.git [--trials 10]
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from datasets import gaussian_c_corr, gaussian_skewed  # noqa: E402
from mechanisms import iome  # noqa: E402

OUTPUT = ROOT / "config" / "reference" / "authors_code_figure7.csv"
REPOSITORY = "ChristianLebeda/PLAN-experiments"
URL = f"https://github.com/{REPOSITORY}.git"
COMMIT = "94470ac71ec6d45537edf3168c95dbf29c2ebd93"
# the files this script runs, with their SHA-256 at COMMIT
FILES = {
    "quantile_binary_search/method.py": "a1fca782b408ad796fa6f280d1b27e92e9fa893fc9ff0c5d37a05f030755bbd0",
    "util/parameters.py": "5a4346205a551f00eea30d2f03be850d972c6dd53f4ab834d2b5741d463bcc4d",
}
RHOS = (1.0, 0.5, 0.125)
STEPS = (20, 10)
DATA = {"C'": gaussian_c_corr, "C": gaussian_skewed}
COLUMNS = ["data", "implementation", "steps", "rho", "trials", "median_vs_empirical", "mean_vs_truth", "repository",
           "commit", "seed", "command"]


class NotRunHere(RuntimeError):
    """The authors' repository could not be obtained (offline, or not at the pinned commit)."""


def checkout(authors: Path | None, url: str, commit: str, into: Path) -> Path:
    """The pinned commit's files this script runs, written under ``into`` and checked."""
    if authors is None:
        authors = into / "clone.git"
        cloned = subprocess.run(["git", "clone", "--quiet", "--bare", url, str(authors)], capture_output=True,
                                text=True)
        if cloned.returncode != 0:
            raise NotRunHere(f"could not clone {url}: {cloned.stderr.strip()}")
    tree = into / "authors"
    for path, digest in FILES.items():
        shown = subprocess.run(["git", "--git-dir", str(authors), "show", f"{commit}:{path}"], capture_output=True)
        if shown.returncode != 0:
            raise NotRunHere(f"{authors} has no {path} at {commit}: {shown.stderr.decode().strip()}")
        actual = hashlib.sha256(shown.stdout).hexdigest()
        if actual != digest:
            raise NotRunHere(f"{path} at {commit} has SHA-256 {actual}, expected {digest}")
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_bytes(shown.stdout)
        (tree / path).parent.joinpath("__init__.py").touch()
    return tree


def authors_iome(tree: Path):
    """Their ``random_rotation_mean``, imported from ``tree``."""
    sys.path.insert(0, str(tree))
    try:
        return importlib.import_module("quantile_binary_search.method").random_rotation_mean
    finally:
        sys.path.remove(str(tree))


def run(random_rotation_mean, *, trials: int, seed: int, d: int = 1024, n: int = 10000, rhos=RHOS, steps=STEPS,
        progress=print) -> list[dict]:
    import joblib

    rows = []
    for name, source in DATA.items():
        for rho in rhos:
            runs = {("authors' code", t): [] for t in steps} | {("ours", steps[0]): []}
            for trial in range(trials):  # one n x d sample in memory at a time
                sample = source(n=n, d=d, alpha=2.0, rng=np.random.default_rng([seed, trial, round(rho * 1000)]))
                empirical = sample.x.mean(axis=0)
                for t in steps:
                    np.random.seed([seed, trial, round(rho * 1000), t])  # their code reads the global generator
                    with joblib.parallel_config(backend="sequential"):
                        estimate = np.asarray(random_rotation_mean(sample.x, d, sample.bounds, rho, t, 0.25).mean)
                    runs[("authors' code", t)].append((estimate, empirical, sample.true_mean))
                ours = iome(sample.x, rho=rho, bounds=sample.bounds, search_steps=steps[0],
                            rng=np.random.default_rng([seed, trial, round(rho * 1000), 1])).mean
                runs[("ours", steps[0])].append((ours, empirical, sample.true_mean))
                progress(f"{name} rho {rho:g}: trial {trial + 1} of {trials}")
            for (implementation, t), estimates in runs.items():
                rows.append({"data": name, "implementation": implementation, "steps": t, "rho": rho, "trials": trials,
                             "median_vs_empirical": float(np.median([np.linalg.norm(e - m) for e, m, _ in estimates])),
                             "mean_vs_truth": float(np.mean([np.linalg.norm(e - mu) for e, _, mu in estimates]))})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors", type=Path, help=f"the git directory of a clone of {REPOSITORY} (else cloned)")
    parser.add_argument("--url", default=URL)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        try:
            tree = checkout(args.authors, args.url, COMMIT, Path(scratch))
        except NotRunHere as error:
            print(f"not run here: {error}", file=sys.stderr)
            return 2
        rows = run(authors_iome(tree), trials=args.trials, seed=args.seed)
    command = shlex.join(["python", "scripts/authors_figure7.py", "--trials", str(args.trials), "--seed",
                          str(args.seed)])
    table = pd.DataFrame(rows).assign(repository=REPOSITORY, commit=COMMIT, seed=args.seed, command=command)
    args.output.write_text(table[COLUMNS].to_csv(index=False, float_format="%.6g", lineterminator="\n"))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
