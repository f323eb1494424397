"""Time PLAN and IOME on the Gaussian rows of the performance table (DESIGN.md section 8).

For each row it reports the median wall-clock seconds of 3 timed calls (after one untimed
warm-up call) and the peak resident set size of the process. Every row runs in its own fresh
subprocess, so peak RSS belongs to that row alone; it includes generating the data, which
happens before timing and is not timed. BLAS is limited to one thread, as in the table.

Run:  make bench
  or  .venv/bin/python benchmarks/bench_mechanisms.py [--rows plan-exact-a,iome-a] [--markdown]

It is a measurement, not a test: it exits 0 even when a target is missed (marked MISSED),
and non-zero only if a row fails to run.
"""
import os

# One BLAS/OpenMP thread, as in the DESIGN.md table. These must be set before numpy is
# imported (the BLAS library reads them when it loads); child processes inherit them.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402

RHO = 0.5
DATA_SEED = 20240801  # data for a row
MECH_SEED = 12345  # every call of a mechanism gets a fresh Generator with this seed
REPEATS = 3


@dataclass(frozen=True)
class Row:
    name: str
    work: str
    mechanism: str  # "plan" or "iome"
    accounting: str | None  # PLAN only
    data: str  # "A" = gaussian_a, "C" = gaussian_skewed(alpha=2)
    n: int
    d: int
    published_s: float | None  # the published code on this machine; None = no counterpart
    target_s: float


ROWS = [
    Row("plan-published-a", "PLAN, published accounting, Gaussian A", "plan", "published", "A", 4000, 2048, 3.8, 1.0),
    Row("plan-exact-a", "PLAN, exact accounting, Gaussian A", "plan", "exact", "A", 4000, 2048, None, 0.5),
    Row("iome-a", "IOME, Gaussian A", "iome", None, "A", 4000, 2048, 5.8, 0.4),
    Row("plan-published-c", "PLAN, published accounting, Gaussian C", "plan", "published", "C", 10000, 2048, 8.6, 3.4),
    Row("iome-c", "IOME, Gaussian C", "iome", None, "C", 10000, 2048, 12.7, 1.0),
]
BY_NAME = {row.name: row for row in ROWS}


def measure(row: Row) -> dict:
    """Run one row in this process: median seconds per call and peak RSS (KiB on Linux)."""
    import numpy as np

    import mechanisms
    from datasets.synthetic import gaussian_a, gaussian_skewed

    data_rng = np.random.default_rng(DATA_SEED)
    if row.data == "A":
        sample = gaussian_a(n=row.n, d=row.d, rng=data_rng)
    else:
        sample = gaussian_skewed(n=row.n, d=row.d, alpha=2.0, rng=data_rng)

    def call():
        rng = np.random.default_rng(MECH_SEED)
        if row.mechanism == "plan":
            return mechanisms.plan_gaussian(sample.x, rho=RHO, bounds=sample.bounds, rng=rng,
                                            accounting=row.accounting)
        return mechanisms.iome(sample.x, rho=RHO, bounds=sample.bounds, rng=rng)

    call()  # warm-up
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return {"seconds": statistics.median(times), "times": times,
            "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def run_in_subprocess(row: Row) -> dict | None:
    """Measure ``row`` in a fresh interpreter; None (after showing its stderr) if it failed."""
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--row", row.name, "--json"],
                          stdout=subprocess.PIPE, text=True)  # child's stderr goes straight through
    if proc.returncode != 0:
        print(f"  row {row.name} failed with exit code {proc.returncode}", file=sys.stderr)
        return None
    return json.loads(proc.stdout)


def table(rows: list[Row], results: list[dict | None], markdown: bool) -> str:
    header = ["work", "n", "d", "seconds (median of 3)", "peak RSS (MB)", "published code (s)",
              "target (s)", "meets target"]
    body = []
    for row, res in zip(rows, results):
        published = "-" if row.published_s is None else f"{row.published_s:.1f}"
        if res is None:
            measured = ["FAILED", "-", "FAILED"]
        else:
            meets = "yes" if res["seconds"] <= row.target_s else "MISSED"
            measured = [f"{res['seconds']:.3f}", f"{res['peak_rss_kib'] * 1024 / 1e6:.0f}", meets]
        body.append([row.work, str(row.n), str(row.d), measured[0], measured[1], published,
                     f"<= {row.target_s:.1f}", measured[2]])
    if markdown:
        lines = [header, ["---"] * len(header)] + body
        return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    left = {0}  # left-align the text column, right-align numbers
    fmt = lambda cells: "  ".join(c.ljust(w) if i in left else c.rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in body])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="rows: " + ", ".join(BY_NAME))
    parser.add_argument("--rows", help="comma-separated subset of rows to run (default: all)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--row", choices=BY_NAME, help=argparse.SUPPRESS)  # internal: child mode
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.row:  # child: measure one row, report JSON on stdout
        print(json.dumps(measure(BY_NAME[args.row])))
        return 0

    names = [s.strip() for s in args.rows.split(",") if s.strip()] if args.rows else list(BY_NAME)
    unknown = [s for s in names if s not in BY_NAME]
    if unknown or not names:
        parser.error(f"unknown row(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(BY_NAME)}")
    rows = [BY_NAME[s] for s in names]

    results = []
    for i, row in enumerate(rows, 1):
        print(f"[{i}/{len(rows)}] {row.name}: {row.work}, n={row.n}, d={row.d} ...", file=sys.stderr, flush=True)
        results.append(run_in_subprocess(row))

    print(f"Our code, one BLAS thread, rho = {RHO}. Seconds: median of {REPEATS} timed calls after one "
          "warm-up call.\nPeak RSS: whole process per row (fresh subprocess), including data generation "
          "(not timed). MB = 10^6 bytes.\n")
    print(table(rows, results, args.markdown))
    return 1 if any(res is None for res in results) else 0


if __name__ == "__main__":
    sys.exit(main())
