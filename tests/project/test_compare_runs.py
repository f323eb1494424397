"""scripts/compare_runs.py: two runs' outputs compared byte for byte apart from what a run
measures (cell run times, audit seconds, benchmark files, the report's run times and provenance)."""
import gzip
import hashlib
from pathlib import Path

import pandas as pd
import pytest

from experiments.outputs.report.html import card_table, table_html
from testkit.workflow_runs import compare_runs

CELL = "results/tiny/cells/d=8_rho=1.csv"
BATCHED_CELL = "results/users/cells/eps=1.csv.gz"
AUDIT = "results/audit/iome.csv"
LIBRARY = "results/libraries/libraries_tiny.csv"


def report_page(*, body: str, seconds: float, runtime: str, commit: str) -> str:
    """A page shaped like results/report.html: tables as the report writes them (experiments/outputs/report/:
    a Styler table and the audit's, one card per row) with measured seconds, the run-time and provenance
    sections."""
    audit = card_table(pd.DataFrame({"audit": ["iome"], "eps_lower": [0.25], "seconds": [seconds]}), name="audit")
    repeated = table_html(pd.DataFrame({"audit": ["iome"], "eps_lower": [0.25], "seconds": [seconds]}), name="again")
    return (f"<html><body>\n<h2 id=\"results\">Results</h2>\n<p>{body}</p>\n<h2 id=\"runtimes\">Run times</h2>\n"
            f"<p>{runtime}</p>\n<h2 id=\"audit\">Audit</h2>\n{audit}\n{repeated}\n"
            f"<h2 id=\"libraries-seconds\">Seconds</h2>\n"
            f"<p>{runtime} per call</p>\n<h2 id=\"provenance\">Provenance</h2>\n"
            f"<p>{commit}</p>\n</body>\n</html>\n")


def write_run(workdir: Path, *, runtime: float, error: float = 0.5, body: str = "the same findings",
              png: bytes = b"\x89PNG one") -> Path:
    files = {
        CELL: pd.DataFrame({"d": [8], "rho": [1.0], "mechanism": ["PLAN"], "trial": [0], "error": [error],
                            "runtime_s": [runtime]}).to_csv(index=False).encode(),
        BATCHED_CELL: gzip.compress(f"eps,mechanism,error,runtime_s\n1,Laplace,0.1,{runtime}\n".encode(), mtime=0),
        AUDIT: f"audit,eps_lower,seconds\niome,0.25,{runtime * 3}\n".encode(),
        LIBRARY: f"rho,mechanism,mean_error,seconds_per_call\n1,OpenDP,{error * 4},{runtime / 2}\n".encode(),
        "results/tiny/benchmarks/d=8_rho=1.tsv": f"s\tmax_rss\n{runtime}\t{100 + runtime}\n".encode(),
        "results/run_times.csv": f"experiment,jobs,wall s (sum)\ntiny,1,{runtime}\n".encode(),
        "results/tiny/summary.csv": b"d,rho,mechanism,median\n8,1,PLAN,0.5\n",
        "figures/figure3.png": png,
        "datasets/processed/pos.json": b'{"n": 30}\n',
        "results/report.html": report_page(body=body, seconds=runtime * 3, runtime=f"{runtime} s in all",
                                           commit=f"commit {runtime}").encode(),
    }
    files[CELL + ".sha256"] = f"{hashlib.sha256(files[CELL]).hexdigest()} 1\n".encode()  # its digest follows runtime_s
    for name, data in files.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_bytes(data)
    return workdir


def test_runs_that_differ_only_in_what_they_measured_are_identical(tmp_path, capsys):
    first = write_run(tmp_path / "first", runtime=1.25)
    second = write_run(tmp_path / "second", runtime=7.5)
    assert compare_runs.differences(first, second) == []
    assert compare_runs.main([str(first), str(second)]) == 0
    assert "11 files compared: identical" in capsys.readouterr().err


@pytest.mark.parametrize(("change", "differing"), [
    ({"error": 0.75}, [CELL, LIBRARY]),
    ({"body": "other findings"}, ["results/report.html"]),
    ({"png": b"\x89PNG two"}, ["figures/figure3.png"]),
])
def test_a_computed_value_that_differs_is_reported(tmp_path, capsys, change, differing):
    first = write_run(tmp_path / "first", runtime=1.25)
    second = write_run(tmp_path / "second", runtime=1.25, **change)
    assert compare_runs.differences(first, second) == [f"differs: {name}" for name in sorted(differing)]
    assert compare_runs.main([str(first), str(second)]) == 1
    assert f"differs: {differing[0]}" in capsys.readouterr().out


def test_a_checksum_that_does_not_match_its_own_cell_file_or_counts_other_rows_is_reported(tmp_path):
    first = write_run(tmp_path / "first", runtime=1.25)
    second = write_run(tmp_path / "second", runtime=7.5)
    checksum = second / (CELL + ".sha256")
    digest = checksum.read_text().split()[0]
    checksum.write_text(f"{digest} 2\n")
    assert compare_runs.differences(first, second) == [f"differs: {CELL}.sha256"]
    checksum.write_text(f"{'0' * 64} 1\n")
    assert compare_runs.differences(first, second) == [f"differs: {CELL}.sha256"]


def test_a_file_of_one_run_only_is_reported(tmp_path):
    first = write_run(tmp_path / "first", runtime=1.25)
    second = write_run(tmp_path / "second", runtime=1.25)
    (second / "figures/extra.pdf").write_bytes(b"%PDF")
    (second / AUDIT).unlink()
    assert compare_runs.differences(first, second) == [f"only in {first}: {AUDIT}",
                                                       f"only in {second}: figures/extra.pdf"]


def test_how_a_run_split_its_cells_into_trial_shards_is_not_compared(tmp_path):
    first = write_run(tmp_path / "first", runtime=1.25)
    second = write_run(tmp_path / "second", runtime=1.25)
    (first / "results/tiny/shards").mkdir()
    (first / "results/tiny/shards/d=8_rho=1.layout.json").write_text('{"trials": [[0, 1]]}')
    bookkeeping = ("results/tiny/shards/d=8_rho=1.layout.json",
                   "results/tiny/benchmarks/shards/d=8_rho=1/trials=0-0.tsv")
    for name in bookkeeping:
        (second / name).parent.mkdir(parents=True, exist_ok=True)
        (second / name).write_text("split otherwise")
    assert compare_runs.differences(first, second) == []
    # a file of that name elsewhere is compared as any other
    (second / "results/shards.csv").write_text("x")
    assert compare_runs.differences(first, second) == [f"only in {second}: results/shards.csv"]


def test_the_report_is_compared_without_its_measured_sections_and_columns(tmp_path):
    path = tmp_path / "report.html"
    path.write_text(report_page(body="the findings", seconds=4.904, runtime="12 s in all", commit="abc123"))
    stripped = compare_runs.report_without_measurements(path)
    assert "4.904" not in stripped and "12 s in all" not in stripped and "abc123" not in stripped
    assert "per call" not in stripped  # the library comparison's seconds per call
    # the computed values and the other sections stay
    assert "the findings" in stripped and "0.25" in stripped and "iome" in stripped
    assert '<h2 id="audit">' in stripped and "</body>" in stripped


def test_a_folder_that_is_no_run_is_an_error(tmp_path):
    write_run(tmp_path / "run", runtime=1.0)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as error:
        compare_runs.main([str(tmp_path / "run"), str(tmp_path / "empty")])
    assert error.value.code == 2
