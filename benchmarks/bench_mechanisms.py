"""Time PLAN and IOME on the rows of the performance table (docs/performance.md#mechanism-benchmarks).

For each row it reports the median wall-clock seconds of 3 timed calls and the peak resident
set size of the process. Every row runs in its own fresh subprocess, so peak RSS belongs to
that row alone; it includes generating the data, which happens before timing and is not
timed. BLAS is limited to one thread, as in the table.

Gaussian rows: one untimed warm-up call first. Binary rows (sparse CSR data from the
Kosarak- and POS-shaped generators of ``datasets.binary``): the warm-up is a call on a tiny
matrix (it loads and compiles what the first call needs, so the timed calls measure the
work, not one-off set-up); IOME's timed calls each rotate and bin the data anew, and the
"further rho" rows time calls at other rho values on one ``SharedSample`` with the same
rotation seed, which reuse the rotation's histogram (what a job of all rho values does).
The batched IOME row times the privacy audit's sampler (docs/design.md §5.8): 10^6 runs of IOME
at once on the audit's pair (``experiments.audit.audits.IOME_X``, rho = 0.25, T = 20); its warm-up is a
call of 1000 runs.

The privacy audit's row times ``batched_plan_binary`` drawing 10^6 runs on the PLAN-binary
audit's pair (``experiments.audit.audits.PLAN_BINARY_X``: n = 100 rows of D = 8 items) at the audit's
rho = 0.25, variant "paper" (docs/design.md §5.8: <= 30 s per pair at 10^6 runs); its warm-up is
a call of 1000 runs on the same pair.

The CoinPress covariance rows (docs/design.md §5.12) time ``coinpress_covariance`` with one step and
with t = 5 (u = sigma_max^2 = 1, the raw rows: Gaussian A has mean 0), and the MVCRec-MVMRec mean
``coinpress_whitened_mean`` with its defaults (one covariance step, ten mean steps), at the size of
the IOME paper's MNIST experiments (d = 784) with n = 6000; one untimed warm-up call first.

The local-model rows (docs/design.md §5.13) time ``iome_local``, ``grs_known_var`` and
``grs_unknown_var`` on one trial of n = 10^5 users in d = 128 (N(0, I), the prior ball of the IOME
paper's local experiments, R = 20 sqrt(d)) at eps = 1, delta = 1e-7 (target: 2 s per call); one
untimed warm-up call first.

Run:  make bench
  or  .venv/bin/python benchmarks/bench_mechanisms.py [--rows plan-exact-a,iome-a] [--markdown]

It is a measurement, not a test: it exits 0 even when a target is missed (marked MISSED),
and non-zero only if a row fails to run.
"""
import os

# One BLAS/OpenMP thread, as in the table of docs/design.md §8. These must be set before numpy is
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
LOCAL_EPS = 1.0  # the local-model rows' eps (delta: the mechanisms' default 1e-7)
DATA_SEED = 20240801  # data for a row
MECH_SEED = 12345  # every call of a mechanism gets a fresh Generator with this seed
REPEATS = 3


FURTHER_RHOS = (0.25, 0.125, 1.0)  # "further rho" rows: calls after a first one at RHO
BINARY_STEPS = 10  # IOME's binary-search steps on binary data (docs/design.md §5.5)
# the audit rows: the privacy audit's batched PLAN-binary and IOME samplers (experiments.audit.audits)
AUDIT_RUNS, AUDIT_RHO, AUDIT_STEPS = 10**6, 0.25, 20


@dataclass(frozen=True)
class Row:
    name: str
    work: str
    mechanism: str  # "plan", "iome", "plan_binary", "iome_further_rho", or the audit samplers (AUDIT_RUNS runs):
    # "plan_binary_audit", "iome_batched"; "coinpress_covariance", "coinpress_whitened_mean"; the local model's
    # "iome_local", "grs_known_var", "grs_unknown_var"
    accounting: str | None  # PLAN only
    data: str  # "A" = gaussian_a, "C" = gaussian_skewed(alpha=2), "pos" / "kosarak" = the shaped stand-ins,
    # "binary_audit" / "iome_audit" = the PLAN-binary / IOME audit's pair (experiments.audit.audits), "local" = N(0, I)
    # with the prior ball of the IOME paper's local experiments (rotated_gaussian, kappa 1, radius_scale 20)
    n: int
    d: int
    published_s: float | None  # the published code (or the authors' runs); None = no counterpart
    target_s: float
    target_mb: float | None = None
    steps: int | None = None  # coinpress_covariance: its number of steps


ROWS = [
    Row("plan-published-a", "PLAN, published accounting, Gaussian A", "plan", "published", "A", 4000, 2048, 3.8, 1.0),
    Row("plan-exact-a", "PLAN, exact accounting, Gaussian A", "plan", "exact", "A", 4000, 2048, None, 0.5),
    Row("iome-a", "IOME, Gaussian A", "iome", None, "A", 4000, 2048, 5.8, 0.4),
    Row("plan-published-c", "PLAN, published accounting, Gaussian C", "plan", "published", "C", 10000, 2048, 8.6, 3.4),
    Row("iome-c", "IOME, Gaussian C", "iome", None, "C", 10000, 2048, 12.7, 1.0),
    Row("plan-binary-pos", "PLAN-binary, POS-shaped", "plan_binary", None, "pos", 515_596, 1_657, 5.7, 0.5),
    Row("plan-binary-kosarak", "PLAN-binary, Kosarak-shaped", "plan_binary", None, "kosarak", 75_462, 27_983, 7.7, 1.0),
    Row("iome-pos", "IOME, POS-shaped (rotation and histogram included)", "iome", None, "pos", 515_596, 1_657,
        420.0, 20.0, 3000.0),
    Row("iome-pos-further-rho", "IOME, POS-shaped, each further rho on the same rotation", "iome_further_rho",
        None, "pos", 515_596, 1_657, None, 2.0, 3000.0),
    Row("iome-kosarak", "IOME, Kosarak-shaped (rotation and histogram included)", "iome", None, "kosarak", 75_462,
        27_983, 850.0, 60.0, 8000.0),
    Row("iome-kosarak-further-rho", "IOME, Kosarak-shaped, each further rho on the same rotation",
        "iome_further_rho", None, "kosarak", 75_462, 27_983, None, 2.0, 8000.0),
    Row("plan-binary-audit", "PLAN-binary batched, audit pair, 10^6 runs at rho = 0.25", "plan_binary_audit", None,
        "binary_audit", 100, 8, None, 30.0),
    Row("iome-audit-batched", "IOME, 10^6 runs at once on the audit's pair (batched_iome, rho = 0.25, T = 20)",
        "iome_batched", None, "iome_audit", 100, 1, None, 30.0),
    Row("coinpress-cov-step", "CoinPress covariance, one step (MVC), Gaussian A", "coinpress_covariance", None, "A",
        6000, 784, None, 0.5, steps=1),
    Row("coinpress-cov-t5", "CoinPress covariance, t = 5 (MVCRec), Gaussian A", "coinpress_covariance", None, "A",
        6000, 784, None, 2.5, steps=5),
    Row("coinpress-whitened-mean", "MVCRec-MVMRec mean (coinpress_whitened_mean, defaults), Gaussian A",
        "coinpress_whitened_mean", None, "A", 6000, 784, None, 1.0),
    Row("iome-local", "Shifted-CM, local model (iome_local, three rounds), eps = 1", "iome_local", None, "local",
        100_000, 128, None, 2.0),
    Row("grs-known-var", "GRS KnownVar coordinate by coordinate, eps = 1", "grs_known_var", None, "local",
        100_000, 128, None, 2.0),
    Row("grs-unknown-var", "GRS UnkVar coordinate by coordinate, eps = 1", "grs_unknown_var", None, "local",
        100_000, 128, None, 2.0),
]
BY_NAME = {row.name: row for row in ROWS}


def _sample(row: Row, rng):
    from datasets import Sample, binary, synthetic

    if row.data == "binary_audit":  # a fixed pair, no draw: only x is used
        from experiments.audit.audits import PLAN_BINARY_X

        return Sample(x=PLAN_BINARY_X, true_mean=None, true_std=None, bounds=(0.0, 1.0))
    if row.data == "iome_audit":
        from experiments.audit.audits import IOME_X

        return IOME_X
    if row.data == "A":
        return synthetic.gaussian_a(n=row.n, d=row.d, rng=rng)
    if row.data == "local":
        return synthetic.rotated_gaussian(n=row.n, d=row.d, rng=rng, kappa=1.0, radius_scale=20.0)
    if row.data == "C":
        return synthetic.gaussian_skewed(n=row.n, d=row.d, alpha=2.0, rng=rng)
    shaped = binary.pos_shaped if row.data == "pos" else binary.kosarak_shaped
    return shaped(n=row.n, d=row.d, rng=rng)


def measure(row: Row) -> dict:
    """Run one row in this process: median seconds per call and peak RSS (KiB on Linux)."""
    import numpy as np

    import mechanisms
    from datasets import binary
    from mechanisms.plan_binary import batched_plan_binary

    sample = _sample(row, np.random.default_rng(DATA_SEED))
    if row.mechanism == "iome_batched":
        from mechanisms.iome import batched_iome

        def batched(runs):
            return batched_iome(sample, rho=AUDIT_RHO, bounds=(-1.0, 1.0), rng=np.random.default_rng(MECH_SEED),
                                runs=runs, search_steps=AUDIT_STEPS)

        batched(1000)  # warm-up
        return _timed(lambda repeat: batched(AUDIT_RUNS))
    shared = mechanisms.SharedSample(sample.x) if row.mechanism == "iome_further_rho" else None

    def call(x=sample.x, bounds=sample.bounds, rho=RHO, runs=AUDIT_RUNS):
        rng = np.random.default_rng(MECH_SEED)
        if row.mechanism == "plan_binary_audit":
            return batched_plan_binary(x, rho=AUDIT_RHO, rng=rng, runs=runs, variant="paper")
        if row.mechanism == "plan":
            return mechanisms.plan_gaussian(x, rho=rho, bounds=bounds, rng=rng, accounting=row.accounting)
        if row.mechanism == "plan_binary":
            return mechanisms.plan_binary(x, rho=rho, rng=rng)
        if row.mechanism == "coinpress_covariance":
            return mechanisms.coinpress_covariance(x, rho=rho, rng=rng, covariance_bound="max_std", steps=row.steps,
                                                   bounds=bounds, max_std=sample.max_std)
        if row.mechanism in ("iome_local", "grs_known_var", "grs_unknown_var"):
            public = {"prior_ball": sample.prior_ball} if row.mechanism.startswith("grs") else {}
            if row.mechanism == "grs_known_var":
                public["max_std"] = sample.max_std
            return mechanisms.REGISTRY[row.mechanism](x, eps=LOCAL_EPS, bounds=bounds, rng=rng, **public)
        if row.mechanism == "coinpress_whitened_mean":
            return mechanisms.coinpress_whitened_mean(x, rho=rho, bounds=bounds, rng=rng, max_std=sample.max_std)
        if row.data in ("A", "C"):
            return mechanisms.iome(x, rho=rho, bounds=bounds, rng=rng)
        # binary data: T = 10 over the published universe, a fixed rotation seed (as the engine's
        # rho-free stream), so that calls on one SharedSample share the rotation
        return mechanisms.iome(x, rho=rho, bounds=bounds, rng=rng, search_steps=BINARY_STEPS,
                               rotation_rng=np.random.default_rng(MECH_SEED + 1))

    if row.data in ("A", "C", "local"):
        call()  # warm-up
    elif row.data == "binary_audit":
        call(runs=1000)  # warm-up on the pair itself
    else:
        tiny = binary.binary_synthetic(n=64, d=100, ratio=0.5, rng=np.random.default_rng(0))
        call(tiny.x, tiny.bounds)  # loads and compiles what the first call needs
    if shared is not None:
        call(shared)  # the first rho: rotates and bins, kept in the sample
    return _timed(lambda repeat: call() if shared is None else call(shared, rho=FURTHER_RHOS[repeat]))


def _timed(work) -> dict:
    """Median seconds of REPEATS calls ``work(repeat)`` and the peak RSS so far (KiB on Linux)."""
    times = []
    for repeat in range(REPEATS):
        start = time.perf_counter()
        work(repeat)
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
    header = ["work", "n", "d", "seconds (median of 3)", "peak RSS (MB)", "published (s)",
              "target", "meets target"]
    body = []
    for row, res in zip(rows, results):
        published = "-" if row.published_s is None else f"{row.published_s:.1f}"
        target = f"<= {row.target_s:g} s" + ("" if row.target_mb is None else f", <= {row.target_mb / 1000:g} GB")
        if res is None:
            measured = ["FAILED", "-", "FAILED"]
        else:
            megabytes = res["peak_rss_kib"] * 1024 / 1e6
            fits = row.target_mb is None or megabytes <= row.target_mb
            meets = "yes" if res["seconds"] <= row.target_s and fits else "MISSED"
            measured = [f"{res['seconds']:.3f}", f"{megabytes:.0f}", meets]
        body.append([row.work, str(row.n), str(row.d), measured[0], measured[1], published, target, measured[2]])
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

    print(f"Our code, one BLAS thread, rho = {RHO} (the audit rows: {AUDIT_RUNS:,} runs per call at rho = "
          f"{AUDIT_RHO}). Seconds: median of {REPEATS} timed calls after one\nwarm-up call (binary rows: on a tiny "
          "matrix; the audit rows: 1000 runs on their pair).\nPeak RSS: whole process per row (fresh subprocess), "
          "including data generation (not timed). MB = 10^6 bytes. Published: the published code on this machine,\n"
          "or the authors' runs where it does not fit (IOME on the real sets: 28 cores, 512 GB).\n")
    print(table(rows, results, args.markdown))
    return 1 if any(res is None for res in results) else 0


if __name__ == "__main__":
    sys.exit(main())
