"""Write config/reference/published_summaries.csv from the PLAN authors' committed result files.

The authors' repository (ChristianLebeda/PLAN-experiments) holds one file of per-trial errors per
experiment, `experiments_results/<experiment>/dataframe.csv`. This script reads them at the pinned
commit from a local clone (`--authors`: its git directory; no network) and summarises each
setting: trials, mean, sd (ddof 1), median, q25, q75 and the tail the scorecard judges
heavy-tailed values on (max; above_3x_median, the trials above 3x the median); where the setting
has the non-private empirical mean, the same of the error relative to it as the authors' plotting
notebook draws it with `compare_to_empirical_mean` (|error - mean error of the empirical mean over
the setting's trials|; suffix _relative_to_empirical); where the file records seconds per run,
their median (median_time_s). Six significant digits.
`--check` compares with the committed file instead of writing it.

    python scripts/published_summaries.py --authors /path/to/PLAN-experiments/.git [--check]
"""
from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.engine.summary import TAIL_MULTIPLE  # noqa: E402  the tail our summaries count, the same on both sides

OUTPUT = ROOT / "config" / "reference" / "published_summaries.csv"
REPOSITORY = "ChristianLebeda/PLAN-experiments"
COMMIT = "94470ac71ec6d45537edf3168c95dbf29c2ebd93"
EMPIRICAL = "Empirical mean (non-private)"
# experiment -> its label column and setting columns, as the authors named them
SETTINGS = {
    "gaussianA": ("Algorithm", ["n", "d", "rho", "r", "cov"]),
    "gaussianB": ("Algorithm", ["n", "d", "rho", "r", "cov"]),
    "gaussianC": ("Algorithm", ["n", "d", "rho", "r", "cov"]),
    "synthetic": ("label", ["n", "d", "rho", "ratio"]),
    "POS": ("label", ["rho"]),
    "kosarak": ("label", ["rho"]),
}
STATISTICS = ["mean", "sd", "median", "q25", "q75", "max", "above_3x_median"]
RELATIVE = "_relative_to_empirical"
COLUMNS = ["experiment", "source", "algorithm", "n", "d", "rho", "alpha", "cov", "ratio", "trials", *STATISTICS,
           *(f"{statistic}{RELATIVE}" for statistic in STATISTICS), "median_time_s"]


def statistics(errors: pd.Series, suffix: str = "") -> dict:
    median = errors.median()
    return {f"mean{suffix}": errors.mean(), f"sd{suffix}": errors.std(ddof=1), f"median{suffix}": median,
            f"q25{suffix}": errors.quantile(0.25), f"q75{suffix}": errors.quantile(0.75),
            f"max{suffix}": errors.max(), f"above_3x_median{suffix}": int((errors > TAIL_MULTIPLE * median).sum())}


def read_result_file(authors: Path, commit: str, path: str) -> pd.DataFrame:
    shown = subprocess.run(["git", "--git-dir", str(authors), "show", f"{commit}:{path}"], capture_output=True)
    if shown.returncode != 0:
        raise SystemExit(f"error: cannot read {path} at {commit} from {authors} "
                         f"(a clone of {REPOSITORY}?): {shown.stderr.decode().strip()}")
    return pd.read_csv(io.BytesIO(shown.stdout), index_col=0)


def summarise_experiment(experiment: str, frame: pd.DataFrame) -> pd.DataFrame:
    label, settings = SETTINGS[experiment]
    empirical = (frame[frame[label] == EMPIRICAL].groupby(settings, sort=False)["error"].mean()
                 if (frame[label] == EMPIRICAL).any() else None)
    rows = []
    for key, group in frame.groupby([label, *settings]):
        setting = dict(zip(settings, key[1:]))
        errors = group["error"]
        row = {"experiment": experiment, "source": f"experiments_results/{experiment}/dataframe.csv",
               "algorithm": key[0], "n": setting.get("n"), "d": setting.get("d"), "rho": setting["rho"],
               "alpha": setting.get("r"), "cov": setting.get("cov"), "ratio": setting.get("ratio"),
               "trials": len(errors), **statistics(errors)}
        if "time" in group:  # seconds per run (the binary experiments)
            row["median_time_s"] = group["time"].median()
        if empirical is not None:
            row.update(statistics((errors - empirical.loc[key[1:] if len(key) > 2 else key[1]]).abs(), RELATIVE))
        rows.append(row)
    summary = pd.DataFrame(rows, columns=COLUMNS)
    return summary.astype({"n": "Int64", "d": "Int64", "alpha": float, "ratio": float})


def published_summaries(authors: Path, commit: str = COMMIT) -> str:
    frames = [summarise_experiment(experiment, read_result_file(
        authors, commit, f"experiments_results/{experiment}/dataframe.csv")) for experiment in SETTINGS]
    return pd.concat(frames, ignore_index=True).to_csv(index=False, float_format="%.6g", lineterminator="\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors", type=Path, required=True, help=f"the git directory of a clone of {REPOSITORY}")
    parser.add_argument("--commit", default=COMMIT, help="the authors' commit (default: the pinned one)")
    parser.add_argument("--check", action="store_true", help="compare with the committed file, write nothing")
    args = parser.parse_args(argv)
    text = published_summaries(args.authors, args.commit)
    if args.check:
        if OUTPUT.read_text() != text:
            print(f"{OUTPUT.relative_to(ROOT)} differs from the summaries of {REPOSITORY}@{args.commit}",
                  file=sys.stderr)
            return 1
        print(f"{OUTPUT.relative_to(ROOT)} is the summary of {REPOSITORY}@{args.commit}")
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)} from {REPOSITORY}@{args.commit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
