"""The memory limit of a local run (`--resources mem_mb=<MiB>`, which `make figures` passes from
scripts/available_memory.py; docs/setup.md#the-memory-limit-of-a-local-run) on the real workflow:
jobs whose requests do not fit together wait for each other, and a job that asks for more than
the limit runs alone with its request lowered to the limit. When each job ran is read from
Snakemake's job records (.snakemake/metadata: a job starts when Snakemake marks its output
incomplete, before it launches the job, and ends when its output is written), and from Snakemake's
own "Execute N jobs" lines."""
import copy
import itertools

from benchmarks.cost_table import read_job_records
from experiments.planning.run_plan import RunPlan
from testkit.workflow_runs import TINY, snakemake, write_config

# three cell jobs of about a second each, all with the same request
THREE_CELLS = copy.deepcopy(TINY)
THREE_CELLS["experiments"]["tiny"]["grid"] = {"d": [8], "rho": [0.25, 0.5, 1.0]}
SPEC = RunPlan(THREE_CELLS).experiments["tiny"]
CELLS = [f"results/tiny/cells/{cell.id}.csv" for cell in SPEC.cells()]
REQUEST = RunPlan(THREE_CELLS).resources.job_mem_mb("tiny", {"cell": SPEC.cells()[0].id})


def run_cells(workdir, mem_mb, cells=CELLS):
    """Snakemake's output and the (start, end) of each cell job of a run on two cores with the limit."""
    workdir.mkdir()
    # the targets go before --resources, which reads every word up to the next option as a resource
    result = snakemake(workdir, "--cores", "2", *cells, "--resources", f"mem_mb={mem_mb}",
                       configfile=write_config(workdir, THREE_CELLS))
    jobs = [job for job in read_job_records(workdir / ".snakemake" / "metadata") if job["rule"] == "run_cell"]
    assert len(jobs) == len(cells)
    return result.stdout + result.stderr, [(job["start"], job["end"]) for job in jobs]


def overlapping(intervals):
    return [(a, b) for a, b in itertools.combinations(sorted(intervals), 2) if b[0] < a[1]]


def test_jobs_that_do_not_fit_in_the_limit_together_run_one_at_a_time_where_a_large_limit_runs_two(tmp_path):
    assert len({RunPlan(THREE_CELLS).resources.job_mem_mb("tiny", {"cell": cell.id}) for cell in SPEC.cells()}) == 1
    output, intervals = run_cells(tmp_path / "limited", REQUEST + REQUEST // 2)  # one job fits, two do not
    assert overlapping(intervals) == [], intervals
    assert output.count("Execute 1 jobs...") == 3 and "Execute 2 jobs..." not in output, output
    # the control: with room for all three, the two cores run two at once
    output, intervals = run_cells(tmp_path / "control", 4 * REQUEST)
    assert "Execute 2 jobs..." in output, output
    assert overlapping(intervals), intervals


def test_a_job_asking_for_more_than_the_limit_runs_alone_with_its_request_lowered_to_the_limit(tmp_path):
    # Snakemake 9's behaviour that docs/setup.md describes: no error and no warning of its own
    # (scripts/available_memory.py warns for the default config), the request cut to the limit
    limit = REQUEST // 2
    output, intervals = run_cells(tmp_path / "run", limit, cells=CELLS[:2])
    assert overlapping(intervals) == [], intervals
    assert f"mem_mb={limit}, " in output and f"mem_mb={REQUEST}" not in output, output
    for cell in SPEC.cells()[:2]:  # the job itself sees the lowered request (and sizes its cache by it)
        first_line = (tmp_path / "run" / f"logs/tiny/cells/{cell.id}.log").read_text().splitlines()[0]
        assert first_line.startswith(f"mem_mb={limit}: "), first_line
        # the cache that the lowered request leaves, which the original request's would not be
        cache = RunPlan(THREE_CELLS).resources.job_cache_bytes
        assert cache("tiny", {"cell": cell.id}, limit) != cache("tiny", {"cell": cell.id}, REQUEST)
        cache_mib = cache("tiny", {"cell": cell.id}, limit) / 2**20
        assert first_line == f"mem_mb={limit}: shared-sample cache up to {cache_mib:.0f} MiB", first_line
