"""Time the real-dataset parsers (datasets/real/) on synthetic files of the real size and format.

The real files cannot be downloaded here (docs/design.md §7), so this writes stand-ins into a
temporary directory, from a seeded numpy Generator (the same bytes every run):

- Kosarak-like: 990,002 lines of space-separated item ids, gzipped. Line lengths are heavy
  tailed like Kosarak's: about 7.6 % of the lines have 20 ids or more (Lomax tail above 20,
  mean about 55), the others about 4 ids; ids 1..41,270 with Zipf-like popularity, mostly
  distinct within a line, with an occasional repeated id.
- POS-like: 515,596 lines "id,id,...,id," (every line ends with a comma, the format the
  authors' reading line.split(",")[:-1] implies), about 6.5 ids per line, ids 0..1,656
  Zipf-like.

Each file is written, then parsed, in fresh subprocesses of their own (on Linux a process's
peak RSS includes its parent's size when it was forked, so the parent stays small, about 50 MB
with numpy, and the parsing child's peak RSS is that file's alone): one untimed warm-up call, then the median of 3
timed calls of ``datasets.real.parse``, then one timed ``process`` (parse, check the statistics,
write the .npz and the .json). One BLAS thread, as the other benchmark.

Run:  .venv/bin/python benchmarks/bench_parsing.py [--quick] [--markdown]
--quick writes files 10 times smaller. Exits 0 even when the 20 s target is missed (MISSED).
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

SEED = 20240807
REPEATS = 3
TARGET_S = 20.0

KOSARAK_LINES = 990_002
KOSARAK_ITEMS = 41_270
KOSARAK_LONG_FRACTION = 75_462 / 990_002  # the sessions with >= 20 ids the paper kept
POS_LINES = 515_596
POS_ITEMS = 1_657


def zipf_ids(rng: np.random.Generator, size: int, *, items: int, first_id: int, exponent: float = 1.0) -> np.ndarray:
    """``size`` ids in first_id..first_id+items-1, popularity ~ 1/rank^exponent, ranks mapped
    to ids through a fixed random permutation (popular items are not simply the small ids)."""
    weights = np.arange(1, items + 1, dtype=np.float64) ** -exponent
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    ranks = np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), items - 1)
    return rng.permutation(items)[ranks] + first_id


def mostly_distinct(rng: np.random.Generator, ids: np.ndarray, lengths: np.ndarray, *, items: int, first_id: int,
                    repeat_rate: float) -> np.ndarray:
    """Redraw (uniformly) the ids repeated within a line, then repeat the previous id of the
    line at a rate of ``repeat_rate`` per id: the occasional duplicates of the real files."""
    ids = ids.copy()
    line = np.repeat(np.arange(lengths.size), lengths)
    order = np.lexsort((ids, line))
    same = (line[order][1:] == line[order][:-1]) & (ids[order][1:] == ids[order][:-1])
    repeated = order[1:][same]
    ids[repeated] = rng.integers(first_id, first_id + items, size=repeated.size)
    copy = np.flatnonzero(rng.random(ids.size) < repeat_rate)
    copy = copy[(copy > 0) & (line[copy] == line[np.maximum(copy - 1, 0)])]
    ids[copy] = ids[copy - 1]
    return ids


def render(ids: np.ndarray, lengths: np.ndarray, *, separator: bytes, separator_before_newline: bool) -> bytes:
    """The text of the lines: the ids of each line in decimal, ``separator`` between them (and
    after the last one too if ``separator_before_newline``), "\\n" after each line. Vectorised:
    every id gets a slot of its digit count plus one byte."""
    ids = ids.astype(np.int64)
    digits = np.ones(ids.size, dtype=np.int64)
    for power in range(1, 19):
        digits += ids >= 10**power
    last = np.cumsum(lengths) - 1  # the last id of each line
    width = digits + 1
    if separator_before_newline:
        width[last] += 1
    offsets = np.cumsum(width) - width
    buffer = np.empty(int(width.sum()), dtype=np.uint8)
    for position in range(int(digits.max())):
        has = np.flatnonzero(digits > position)
        buffer[offsets[has] + digits[has] - 1 - position] = ord("0") + (ids[has] // 10**position) % 10
    buffer[offsets + digits] = ord(separator)
    buffer[offsets[last] + digits[last] + (1 if separator_before_newline else 0)] = ord("\n")
    return buffer.tobytes()


def write_kosarak_like(path: Path, *, lines: int, rng: np.random.Generator) -> None:
    long = rng.random(lines) < KOSARAK_LONG_FRACTION
    lengths = np.minimum(rng.geometric(1 / 4.3, size=lines), 19)
    tail = 20 + np.floor(rng.pareto(1.6, size=lines) * 21.4).astype(np.int64)
    lengths = np.where(long, np.minimum(tail, 2498), lengths)
    ids = zipf_ids(rng, int(lengths.sum()), items=KOSARAK_ITEMS, first_id=1)
    ids = mostly_distinct(rng, ids, lengths, items=KOSARAK_ITEMS, first_id=1, repeat_rate=2e-5)
    text = render(ids, lengths, separator=b" ", separator_before_newline=False)
    path.write_bytes(gzip.compress(text, compresslevel=6, mtime=0))


def write_pos_like(path: Path, *, lines: int, rng: np.random.Generator) -> None:
    lengths = np.minimum(rng.geometric(1 / 6.5, size=lines), 164)
    ids = zipf_ids(rng, int(lengths.sum()), items=POS_ITEMS, first_id=0)
    ids = mostly_distinct(rng, ids, lengths, items=POS_ITEMS, first_id=0, repeat_rate=2e-5)
    path.write_bytes(render(ids, lengths, separator=b",", separator_before_newline=True))


def measure(name: str, path: Path) -> dict:
    """In this process: parse ``path`` as dataset ``name``, REPEATS times after a warm-up."""
    from datasets import real

    real.parse(name, path)  # warm-up: imports, page cache
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        matrix, stats = real.parse(name, path)
        times.append(time.perf_counter() - start)
        del matrix
    with tempfile.TemporaryDirectory() as processed:
        expect = {key: stats[key] for key in real.STATISTICS}
        start = time.perf_counter()
        real.process(name, path, processed_dir=processed, expect=expect)
        process_s = time.perf_counter() - start
        npz_mb = (Path(processed) / f"{name}.npz").stat().st_size / 1e6
    return {"seconds": statistics.median(times), "times": times, "process_seconds": process_s,
            "npz_mb": npz_mb, "stats": stats, "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


WRITERS = {"kosarak": write_kosarak_like, "pos": write_pos_like}


def write_in_subprocess(name: str, path: Path, lines: int) -> bool:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--write", name, str(path), str(lines)])
    return proc.returncode == 0


def run_in_subprocess(name: str, path: Path) -> dict | None:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure", name, str(path)],
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        print(f"  parsing {path.name} failed with exit code {proc.returncode}", file=sys.stderr)
        return None
    return json.loads(proc.stdout)


def table(rows: list[tuple[str, int, Path, dict | None]], markdown: bool) -> str:
    header = ["file", "lines", "size (MB)", "ids read (kept rows)", "rows kept", "d", "nonzeros",
              "parse s (median of 3)", "process s", "npz (MB)", "peak RSS (MB)", f"<= {TARGET_S:g} s"]
    body = []
    for filename, lines, path, res in rows:
        size = f"{path.stat().st_size / 1e6:.1f}"
        if res is None:
            body.append([filename, str(lines), size] + ["-"] * 8 + ["FAILED"])
            continue
        s = res["stats"]
        body.append([filename, f"{lines:,}", size, f"{s['tokens']:,}", f"{s['n']:,}", f"{s['d']:,}",
                     f"{s['occurrences']:,}", f"{res['seconds']:.2f}", f"{res['process_seconds']:.2f}",
                     f"{res['npz_mb']:.1f}", f"{res['peak_rss_kib'] * 1024 / 1e6:.0f}",
                     "yes" if res["seconds"] <= TARGET_S else "MISSED"])
    if markdown:
        return "\n".join("| " + " | ".join(cells) + " |" for cells in [header, ["---"] * len(header)] + body)
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    return "\n".join("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
                     for r in [header, ["-" * w for w in widths]] + body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="files 10 times smaller")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--measure", nargs=2, metavar=("NAME", "PATH"), help=argparse.SUPPRESS)  # child modes
    parser.add_argument("--write", nargs=3, metavar=("NAME", "PATH", "LINES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure[0], Path(args.measure[1]))))
        return 0
    if args.write:
        name, path, lines = args.write
        WRITERS[name](Path(path), lines=int(lines), rng=np.random.default_rng(SEED))
        return 0

    scale = 10 if args.quick else 1
    files = [("kosarak", "kosarak_like.dat.gz", KOSARAK_LINES // scale),
             ("pos", "BMS-POS_like.csv", POS_LINES // scale)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_parsing_") as directory:
        for name, filename, lines in files:
            path = Path(directory) / filename
            start = time.perf_counter()
            if not write_in_subprocess(name, path, lines):
                print(f"  writing {filename} failed", file=sys.stderr)
                return 1
            print(f"wrote {filename}: {lines} lines, {path.stat().st_size / 1e6:.1f} MB in "
                  f"{time.perf_counter() - start:.1f} s; parsing ...", file=sys.stderr, flush=True)
            rows.append((filename, lines, path, run_in_subprocess(name, path)))
        quick = " (--quick: 1/10 size)" if args.quick else ""
        print(f"datasets.real.parse on synthetic files of the real format{quick}."
              f" Seconds: median of {REPEATS} calls after a warm-up; process: one call (parse + write .npz"
              " and .json).\nPeak RSS: whole process per file (fresh subprocess). MB = 10^6 bytes. Kosarak kept rows:"
              " lines with >= 20 ids.\n")
        print(table(rows, args.markdown))
    return 1 if any(r[3] is None for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
