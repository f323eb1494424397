"""Time what a workflow job spends before its first trial (docs/performance.md#start-up-cost-of-a-job).

Every phase runs in fresh processes, in a clean copy of the committed tree (``git clone`` of
``--revision``, default HEAD: what a new checkout on a cluster runs), one untimed warm-up run
first (it writes the copy's .pyc files), then the median of ``--runs`` runs:

- interpreter: ``python -c pass``, the interpreter a job runs (its site, the venv's .pth files);
- preamble: a ``script:`` job's process starts with the preamble Snakemake writes into the script
  (snakemake/script/__init__.py, ``PythonScript.generate_preamble``): it extends sys.path, unpickles
  the job's ``snakemake`` object (its config included) and imports snakemake.logging and
  snakemake.iocontainers. The preamble generated for a cell job, timed in the process;
- imports: ``import experiments.jobs.runs`` after the preamble's imports (what run_cells.py
  imports), and from ``python -X importtime`` the largest packages the project's
  modules import, each under the project module that imports it first;
- numba: the first and second call of PLAN-binary and IOME-binary (IOME on sparse input, the only
  compiled path) on a small CSR matrix in a new process, with numba's on-disk cache (``cache=True``,
  next to mechanisms/_rotation_kernels.py) emptied ("cold": compiled) or as the previous process
  left it ("warm"); NUMBA_DEBUG_CACHE tells whether the kernels were loaded or compiled and saved;
- draw: the first trial's data of a few sources (experiments.engine.sources.draw) at the sizes of
  config/config.yaml, in a new process (a trial shard draws only its own trials' data);
- parse: what Snakemake runs for the Snakefile, in one process: snakemake.api's imports (they
  include the Slurm executor plugin, which runs ``scontrol show config`` when it is imported), the
  project modules the .smk files import (with the largest packages they pull in), reading
  config/config.yaml and validating it with Snakemake's own functions, and RunPlan(config),
  whose steps one profiled run breaks down;
- snakemake: whole commands in the copy: ``scontrol show config`` (where it is installed; every
  Snakemake start waits for it), ``snakemake --version``, ``--list-rules`` (parses the Snakefile) and
  ``-n`` on one cell file (parses, then builds the DAG of that one job), as a cluster job's
  Snakemake does twice (the job's own and the job step's);
- job: a one-trial cell job as Snakemake runs it: the generated preamble and
  workflow/scripts/run_cells.py in a new process (gaussian_A, one cell, ``trials: 1``).

One BLAS thread, as the cell jobs. It prints what it measured and judges nothing.

Run:  .venv/bin/python benchmarks/bench_startup.py [--runs 5] [--phases imports,parse] [--revision HEAD]
(about 6 minutes for all phases with 5 runs on the 2-core VM, half of it waiting for scontrol
where Slurm is installed but not running).
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import pstats  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROJECT_PACKAGES = ("mechanisms", "datasets", "experiments")
PHASES = ("interpreter", "preamble", "imports", "numba", "draw", "parse", "snakemake", "job")
JOB_EXPERIMENT, JOB_CELL = "gaussian_A", "d=16_rho=0.125"  # a cheap cell of the full config
CELL_TARGET = f"results/{JOB_EXPERIMENT}/cells/{JOB_CELL}.csv"
# (config experiment whose data: it draws, the grid values of the drawn cell)
DRAWS = [
    ("gaussian_A_low", {"d": 1024}),
    ("gaussian_A", {"d": 2048}),
    ("binary_synthetic", {"d": 2048, "ratio": 0.5}),
    ("kosarak_shaped", {}),
    ("pos_shaped", {}),
]
MIN_CONTRIBUTOR_S = 0.01  # smaller imports are summed under "other"
MARK = "--- measured from here"


@dataclass
class Row:
    phase: str
    what: str
    seconds: list[float] = field(default_factory=list)
    note: str = ""


# ----------------------------------------------------------------------------- running children


def run(command: list[str], copy: Path, *, env: dict | None = None, timeout: float = 600) -> tuple[float, str, str]:
    """Wall seconds of ``command`` in the copy (its packages first on the path), its stdout and stderr."""
    full_env = {**os.environ, "PYTHONPATH": str(copy), **(env or {})}
    start = time.perf_counter()
    done = subprocess.run(command, cwd=copy, env=full_env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, done.stdout, done.stderr


def python_code(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


def repeated(runs: int, measure) -> list:
    """``measure()`` once untimed (it writes the copy's .pyc files), then ``runs`` times."""
    measure()
    return [measure() for _ in range(runs)]


def timings(results: list[dict]) -> dict[str, list[float]]:
    """The runs' in-process timings (dicts of seconds), key by key."""
    merged = defaultdict(list)
    for result in results:
        for key, seconds in result.items():
            merged[key].append(seconds)
    return merged


# ----------------------------------------------------------------------------- -X importtime


@dataclass
class ImportNode:
    name: str
    self_s: float
    cumulative_s: float
    depth: int
    children: list = field(default_factory=list)


def import_tree(stderr: str) -> list[ImportNode]:
    """The top-level imports of ``python -X importtime`` output after MARK, with their children
    (each import is printed after the imports it caused, two spaces deeper)."""
    pending: list[ImportNode] = []
    for line in stderr.split(MARK, 1)[-1].splitlines():
        if not line.startswith("import time:") or "[us]" in line:
            continue
        self_us, cumulative_us, name = line[len("import time:"):].split("|")
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        node = ImportNode(name.strip(), int(self_us) / 1e6, int(cumulative_us) / 1e6, depth)
        while pending and pending[-1].depth > depth:
            node.children.insert(0, pending.pop())
        pending.append(node)
    return pending


def is_project(name: str) -> bool:
    return name.split(".")[0] in PROJECT_PACKAGES


def import_contributors(roots: list[ImportNode]) -> dict[str, float]:
    """Seconds by contributor: each package a project module imports (its whole subtree,
    labelled "<package> (by <project module>)") and the project modules' own code."""
    contributors: dict[str, float] = defaultdict(float)

    def visit(node: ImportNode) -> None:
        contributors["project modules' own code"] += node.self_s
        for child in node.children:
            if is_project(child.name):
                visit(child)
            else:
                contributors[f"{child.name} (by {node.name})"] += child.cumulative_s

    for root in roots:
        if is_project(root.name):  # not what the measured code imports itself (e.g. Snakemake's YAML loader)
            visit(root)
    return dict(contributors)


def contributor_rows(phase: str, runs: list[dict[str, float]]) -> list[Row]:
    """Rows of the contributors whose median is at least MIN_CONTRIBUTOR_S, the rest as "other"."""
    names = {name for contributors in runs for name in contributors}
    by_name = {name: [contributors.get(name, 0.0) for contributors in runs] for name in names}
    large = sorted((n for n in names if statistics.median(by_name[n]) >= MIN_CONTRIBUTOR_S),
                   key=lambda n: -statistics.median(by_name[n]))
    other = [sum(c.get(n, 0.0) for n in names - set(large)) for c in runs]
    return ([Row(phase, f"  {name}", by_name[name]) for name in large]
            + [Row(phase, f"  smaller imports (each < {MIN_CONTRIBUTOR_S} s)", other)])


def importtime_rows(phase: str, code: str, copy: Path, runs: int) -> list[Row]:
    def measure():
        return import_contributors(import_tree(run([sys.executable, "-X", "importtime", "-c", code], copy)[2]))

    return contributor_rows(phase, repeated(runs, measure))


# ----------------------------------------------------------------------------- the phases


def interpreter(copy: Path, runs: int) -> list[Row]:
    walls = repeated(runs, lambda: run([sys.executable, "-c", "pass"], copy)[0])
    return [Row("interpreter", "python -c pass (whole process)", walls)]


def cell_job_preamble(copy: Path, config: dict, output_dir: Path) -> str:
    """The preamble Snakemake writes into run_cells.py for the cell JOB_EXPERIMENT/JOB_CELL."""
    from snakemake.iocontainers import InputFiles, Log, OutputFiles, Params, ResourceList, Wildcards
    from snakemake.script import PythonScript
    from snakemake.sourcecache import LocalSourceFile

    script = LocalSourceFile(str(copy / "workflow/scripts/run_cells.py"))
    return PythonScript.generate_preamble(
        script, None, None, None,
        InputFiles(), OutputFiles([str(output_dir / f"{JOB_CELL}.csv")]),
        Params(fromdict={"spec": "fingerprint", "seed": config["seed"], "experiment": JOB_EXPERIMENT,
                         "cells": [JOB_CELL], "layout": None, "shard_trials": [], "cache_bytes": None}),
        Wildcards(fromdict={"experiment": JOB_EXPERIMENT, "cell": JOB_CELL}), 1,
        ResourceList(fromdict={"_cores": 1, "_nodes": 1, "mem_mb": 700, "runtime": 5, "tmpdir": tempfile.gettempdir()}),
        Log([str(output_dir / f"{JOB_CELL}.log")]), config, "run_cell",
        None, None, None, None, None, 0, None, True, None, True,
        preamble_addendum=f"__real_file__ = __file__; __file__ = {script.path!r};",
    )


def job_config(copy: Path) -> dict:
    """The copy's config as a job receives it (validated, defaults set), the job's experiment
    cut to one trial."""
    import yaml
    from snakemake.utils import validate

    config = yaml.safe_load((copy / "config/config.yaml").read_text())
    validate(config, str(copy / "workflow/schemas/config.schema.yaml"))
    config["experiments"][JOB_EXPERIMENT]["trials"] = 1
    return config


def preamble(copy: Path, runs: int, config: dict, scratch: Path) -> list[Row]:
    preamble_text = cell_job_preamble(copy, config, scratch)
    script = scratch / "preamble_only.py"
    script.write_text("import time; _start = time.perf_counter()\n" + preamble_text
                      + "print(time.perf_counter() - _start)\n")
    results = repeated(runs, lambda: run([sys.executable, str(script)], copy))
    return [Row("preamble", "Snakemake's script preamble, in the process (whole process: next row)",
                [float(out) for _, out, _ in results],
                note=f"pickled snakemake object {len(pickle.dumps(config, protocol=4)) // 1024} KiB of config"),
            Row("preamble", "interpreter + preamble (whole process)", [wall for wall, _, _ in results])]


PREAMBLE_IMPORTS = "import pickle, snakemake.logging, snakemake.iocontainers\n"


def imports(copy: Path, runs: int) -> list[Row]:
    code = PREAMBLE_IMPORTS + (
        "import sys, time\n"
        f"sys.stderr.write({MARK!r} + '\\n')\n"
        "start = time.perf_counter()\n"
        "import experiments.jobs.runs\n"
        "print(time.perf_counter() - start)\n")
    totals = repeated(runs, lambda: float(run([sys.executable, "-c", code], copy)[1]))
    return ([Row("imports", "import experiments.jobs.runs (after the preamble's imports)", totals)]
            + importtime_rows("imports", code, copy, runs))


NUMBA_PROBE = """
    import json, math, time
    import numpy as np
    import mechanisms
    from datasets import binary_synthetic

    x = binary_synthetic(n=2000, d=256, ratio=0.25, rng=np.random.default_rng(1)).x
    seconds = {}
    for label, call in [
        ("PLAN-binary", lambda: mechanisms.plan_binary(x, rho=0.5, rng=np.random.default_rng(2))),
        ("IOME-binary", lambda: mechanisms.iome(x, rho=0.5, bounds=(0.0, math.sqrt(256)), search_steps=10,
                                                rng=np.random.default_rng(3))),
    ]:
        if label == "IOME-binary":
            start = time.perf_counter()
            import numba
            seconds["import numba (IOME on sparse input imports it)"] = time.perf_counter() - start
        for attempt in ("first", "second"):
            start = time.perf_counter()
            call()
            seconds[f"{label}, {attempt} call"] = time.perf_counter() - start
    print(json.dumps(seconds))
"""


def numba_cache_files(copy: Path) -> list[Path]:
    return sorted((copy / "mechanisms/__pycache__").glob("*.nb[ic]"))


def numba(copy: Path, runs: int) -> list[Row]:
    def measure(cold: bool):
        if cold:
            for path in numba_cache_files(copy):
                path.unlink()
        _, out, err = run(python_code(NUMBA_PROBE), copy, env={"NUMBA_DEBUG_CACHE": "1"})
        *debug, result = out.strip().splitlines()
        loaded = sum("data loaded from" in line for line in debug)
        saved = sum("data saved to" in line for line in debug)
        return json.loads(result), (loaded, saved)

    rows = []
    for cold in (True, False):
        results = repeated(runs, lambda cold=cold: measure(cold))
        cache = {f"loaded {loaded}, compiled and saved {saved}" for _, (loaded, saved) in results}
        label = "cold cache" if cold else "warm cache"
        for key, values in timings([seconds for seconds, _ in results]).items():
            rows.append(Row("numba", f"{key} ({label})", values,
                            note=f"kernels {', '.join(sorted(cache))}" if key.startswith("IOME-binary, first") else ""))
    kernels = {path.name.split("-")[0] for path in numba_cache_files(copy)}
    rows.append(Row("numba", "where the cache is", [], note=f"mechanisms/__pycache__: {len(kernels)} kernels"))
    return rows


def draw(copy: Path, runs: int) -> list[Row]:
    rows = []
    for experiment, grid in DRAWS:
        code = f"""
            import time, numpy as np, yaml
            from experiments.engine.sources import draw
            data = dict(yaml.safe_load(open("config/config.yaml"))["experiments"][{experiment!r}]["data"])
            source = data.pop("source")
            params = {{**data, **{grid!r}}}
            start = time.perf_counter()
            sample = draw(source, params, np.random.default_rng(1))
            print(time.perf_counter() - start, source, *sample.x.shape)
        """
        results = repeated(runs, lambda code=code: run(python_code(code), copy)[1].split())
        seconds = [float(fields[0]) for fields in results]
        source, n, d = results[0][1:]
        where = ", ".join(f"{k}={v}" for k, v in grid.items())
        rows.append(Row("draw", f"{source} ({experiment}{', ' + where if where else ''}): {int(n):,} x {int(d):,}",
                        seconds))
    return rows


def snakefile_imports(copy: Path) -> list[str]:
    """The project modules the Snakefile and its .smk files import at their top level."""
    modules = []
    for path in [copy / "Snakefile", *sorted((copy / "workflow/rules").glob("*.smk"))]:
        for match in re.finditer(r"^(?:from|import) ([\w.]+)", path.read_text(), re.MULTILINE):
            if is_project(match.group(1)) and match.group(1) not in modules:
                modules.append(match.group(1))
    return modules


def parse_code(copy: Path, *, profile: Path | None = None) -> str:
    return f"""
        import importlib, json, sys, time
        steps = {{}}
        start = time.perf_counter()
        import snakemake.api, snakemake.utils
        from snakemake.common.configfile import load_configfile
        steps["snakemake.api's imports (Slurm plugin's scontrol call included)"] = time.perf_counter() - start
        sys.stderr.write({MARK!r} + "\\n")
        start = time.perf_counter()
        for module in {snakefile_imports(copy)!r}:
            importlib.import_module(module)
        steps["the project modules the .smk files import"] = time.perf_counter() - start
        from experiments.planning.run_plan import RunPlan
        start = time.perf_counter()
        config = load_configfile("config/config.yaml")
        steps["configfile: config/config.yaml (Snakemake's loader)"] = time.perf_counter() - start
        start = time.perf_counter()
        snakemake.utils.validate(config, "workflow/schemas/config.schema.yaml")
        steps["validate(config, config.schema.yaml) (Snakemake's)"] = time.perf_counter() - start
        {"import cProfile; profile = cProfile.Profile(); profile.enable()" if profile else ""}
        start = time.perf_counter()
        RunPlan(config)
        steps["RunPlan(config)"] = time.perf_counter() - start
        {f"profile.disable(); profile.dump_stats({str(profile)!r})" if profile else ""}
        print(json.dumps(steps))
    """


def plan_steps(stats_path: Path, copy: Path) -> dict[str, float]:
    """Seconds of each function RunSelection.__init__ (the config's checks, which RunPlan(config)
    runs first) calls, from a profile of RunPlan(config)."""
    stats = pstats.Stats(str(stats_path)).stats
    init = next(key for key in stats if key[0].endswith("planning/selection.py") and key[2] == "__init__")
    steps = {}
    for (filename, _, function), (*_, callers) in stats.items():
        if init in callers:
            module = Path(filename).relative_to(copy).with_suffix("").as_posix().replace("/", ".") \
                if filename.startswith(str(copy)) else Path(filename).name
            steps[f"{module}.{function}" if filename.startswith(str(copy)) else function] = callers[init][3]
    return steps


def parse(copy: Path, runs: int, scratch: Path) -> list[Row]:
    code = textwrap.dedent(parse_code(copy))
    results = repeated(runs, lambda: json.loads(run([sys.executable, "-c", code], copy)[1]))
    rows = [Row("parse", step, values) for step, values in timings(results).items()]
    importtime = importtime_rows("parse", code, copy, runs)
    position = next(i for i, row in enumerate(rows) if row.what.startswith("the project modules")) + 1
    rows[position:position] = importtime
    run(python_code(parse_code(copy, profile=scratch / "plan.prof")), copy)
    steps = plan_steps(scratch / "plan.prof", copy)
    total = sum(steps.values())
    rows += [Row("parse", f"  {name}", [], note=f"{steps[name] / total:.0%} of RunPlan(config) profiled")
             for name in sorted(steps, key=lambda name: -steps[name]) if steps[name] >= 0.01 * total]
    return rows


def snakemake_commands(copy: Path, runs: int) -> list[Row]:
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    commands = [[snakemake, "--version"], [snakemake, "--list-rules"], [snakemake, "-n", CELL_TARGET]]
    if shutil.which("scontrol"):
        commands.insert(0, ["scontrol", "show", "config"])
    rows = []
    for command in commands:
        def measure(command=command):
            start = time.perf_counter()
            subprocess.run(command, cwd=copy, env={**os.environ, "PYTHONPATH": str(copy)}, capture_output=True)
            return time.perf_counter() - start  # scontrol fails where no controller runs: timed all the same

        rows.append(Row("snakemake", " ".join([Path(command[0]).name, *command[1:]]), repeated(runs, measure)))
    return rows


def job(copy: Path, runs: int, config: dict, scratch: Path) -> list[Row]:
    script = scratch / "run_cells_job.py"
    script.write_text(cell_job_preamble(copy, config, scratch) + (copy / "workflow/scripts/run_cells.py").read_text())
    walls = repeated(runs, lambda: run([sys.executable, str(script)], copy)[0])
    return [Row("job", f"run_cells.py, {JOB_EXPERIMENT} {JOB_CELL}, 1 trial (whole process)", walls)]


# ----------------------------------------------------------------------------- main


def clean_copy(revision: str, directory: Path) -> str:
    commit = subprocess.run(["git", "rev-parse", "--verify", f"{revision}^{{commit}}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(directory)], check=True)
    subprocess.run(["git", "checkout", "--quiet", "--detach", commit], cwd=directory, check=True)
    return commit


def print_rows(rows: list[Row]) -> None:
    header = ["phase", "what", "median s", "min-max s", "runs", "note"]
    body = []
    for row in rows:
        if row.seconds:
            spread = f"{min(row.seconds):.3f}-{max(row.seconds):.3f}" if len(row.seconds) > 1 else "-"
            body.append([row.phase, row.what, f"{statistics.median(row.seconds):.3f}", spread,
                         str(len(row.seconds)), row.note])
        else:
            body.append([row.phase, row.what, "-", "-", "-", row.note])
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths]] + body:
        print("  ".join(c.ljust(w) if i in (0, 1, 5) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per measurement (after one warm-up)")
    parser.add_argument("--phases", default=",".join(PHASES), help=f"comma-separated, of {', '.join(PHASES)}")
    parser.add_argument("--revision", default="HEAD", help="the commit to measure (a clean copy of it)")
    args = parser.parse_args()
    phases = args.phases.split(",")
    if unknown := set(phases) - set(PHASES):
        parser.error(f"unknown phases {sorted(unknown)}")

    with tempfile.TemporaryDirectory(prefix="bench_startup_") as directory:
        copy, scratch = Path(directory) / "copy", Path(directory) / "scratch"
        scratch.mkdir()
        commit = clean_copy(args.revision, copy)
        config = job_config(copy)
        print(f"Start-up of a job at {commit[:10]}: medians of {args.runs} fresh processes after one warm-up; "
              f"Python {sys.version.split()[0]}", flush=True)
        measure = {
            "interpreter": lambda: interpreter(copy, args.runs),
            "preamble": lambda: preamble(copy, args.runs, config, scratch),
            "imports": lambda: imports(copy, args.runs),
            "numba": lambda: numba(copy, args.runs),
            "draw": lambda: draw(copy, args.runs),
            "parse": lambda: parse(copy, args.runs, scratch),
            "snakemake": lambda: snakemake_commands(copy, args.runs),
            "job": lambda: job(copy, args.runs, config, scratch),
        }
        rows = []
        for phase in PHASES:
            if phase in phases:
                print(f"  {phase} ...", file=sys.stderr, flush=True)
                rows += measure[phase]()
        print_rows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
