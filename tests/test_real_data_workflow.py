"""Real datasets in the workflow (DESIGN.md 7): fetch -> parse -> cells as one DAG, a changed
dataset reruns its cells, a wrong dataset stops with one message, and a machine without the
files builds everything else, the report included, which names what is missing; the run then
ends with the same summary and a non-zero exit status. No internet: a dead local port stands
for an unreachable server, and local files in the real formats for the real ones."""
import functools
import hashlib
import http.server
import json
import re
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from test_workflow import TINY, snakemake, write_config

BINARY_MECHANISMS = ["plan_binary", {"IOME-binary": {"algorithm": "iome", "search_steps": 10}}]


def pos_file(path, *, rows=300, items=40, seed=3):
    """A BMS-POS-format file: comma-separated item ids, each line ending with a comma (the
    authors drop the last field)."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(rows):
        basket = rng.choice(items, size=rng.integers(1, 8), replace=False,
                            p=np.arange(items, 0, -1) / (items * (items + 1) / 2))
        lines.append(",".join(str(item) for item in sorted(basket)) + ",")
    Path(path).write_text("\n".join(lines) + "\n")
    return path


def dead_url():
    """A URL on 127.0.0.1 where nothing listens (connections are refused at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/BMS-POS.csv"


def real_config(*, url=None, path=None, expect=None):
    config = json.loads(json.dumps(TINY))
    config["experiments"]["real"] = {
        "data": {"source": "real_dataset", "dataset": "pos"},
        "grid": {"rho": [0.5, 1.0]},
        "trials": 2,
        "metric": "l1_half",
        "share_rho": True,
        "mechanisms": BINARY_MECHANISMS,
    }
    config["datasets"] = {"pos": {"url": url, "path": path, "expect": expect}}
    config["figures"] = {
        "tinyfig": {"title": "tiny", "panels": [{"experiment": "tiny", "x": "d", "mechanisms": ["PLAN", "iome"]}]},
        "realfig": {"title": "real", "panels": [{"experiment": "real", "x": "rho", "measure": "error_vs_empirical",
                                                  "mechanisms": ["plan_binary", "IOME-binary"]}]},
    }
    return config


def mtimes(workdir, pattern):
    return {path.name: path.stat().st_mtime_ns for path in sorted(Path(workdir).glob(pattern))}


def test_without_the_dataset_everything_else_and_the_report_are_built_and_the_run_ends_naming_it(tmp_path):
    url = dead_url()
    configfile = write_config(tmp_path, real_config(url=url))
    started = time.monotonic()
    result = snakemake(tmp_path, "--cores", "2", configfile=configfile, check=False)
    elapsed = time.monotonic() - started
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    # every other target, the report included
    for name in ["results/tiny/summary.csv", "figures/tinyfig.png", "results/report.html"]:
        assert (tmp_path / name).is_file(), name + "\n" + output
    for name in ["results/real/summary.csv", "figures/realfig.png", "figures/figure2.png",
                 "datasets/processed/pos.npz"]:
        assert not (tmp_path / name).exists(), name
    # the fetch gave up within seconds with the URL, the reason and how to supply the file
    log = (tmp_path / "logs/datasets/fetch_pos.log").read_text()
    assert url in log and "datasets/raw/BMS-POS.csv" in log and "datasets.pos.path" in log
    assert elapsed < 120
    # the console ends with the summary the report has
    tail = output.strip().splitlines()[-8:]
    summary = "\n".join(tail)
    assert "NOT REPRODUCED" in summary and "pos" in summary and url in summary, summary
    assert "left out: real, realfig, figure2" in summary and "datasets.pos.path" in summary
    page = (tmp_path / "results/report.html").read_text()
    assert "Not reproduced" in page and url in page and "datasets/raw/BMS-POS.csv" in page
    # no leftovers: no raw file, no temporary file; the failed status is gone, so the next run tries again
    assert not list((tmp_path / "datasets/raw").glob("BMS-POS*"))
    assert not (tmp_path / "datasets/raw/pos.status.json").exists()

    # The user supplies the file where the message says: only what was missing runs.
    tiny_cells = mtimes(tmp_path, "results/tiny/cells/*.csv")
    pos_file(tmp_path / "datasets/raw/BMS-POS.csv")
    result = snakemake(tmp_path, "--cores", "2", configfile=configfile)
    assert (tmp_path / "results/real/summary.csv").is_file()
    assert (tmp_path / "figures/realfig.png").is_file() and (tmp_path / "figures/figure2.png").is_file()
    assert mtimes(tmp_path, "results/tiny/cells/*.csv") == tiny_cells
    assert "Not reproduced" not in (tmp_path / "results/report.html").read_text()
    assert "NOT REPRODUCED" not in result.stdout + result.stderr


def test_a_local_copy_runs_fetch_parse_and_cells_as_one_dag_and_a_changed_dataset_reruns_its_cells(tmp_path):
    raw = pos_file(tmp_path / "copy-of-BMS-POS.csv")
    configfile = write_config(tmp_path, real_config(url=dead_url(), path=str(raw)))
    snakemake(tmp_path, "--cores", "2", configfile=configfile)
    stats = json.loads((tmp_path / "datasets/processed/pos.json").read_text())
    assert stats["n"] == 300 and stats["d"] <= 40
    summary = pd.read_csv(tmp_path / "results/real/summary.csv")
    assert set(summary["mechanism"]) == {"plan_binary", "IOME-binary"}
    assert summary["median"].isna().all() and (summary["median_vs_empirical"] > 0).all()
    real_cells, tiny_cells = mtimes(tmp_path, "results/real/cells/*.csv"), mtimes(tmp_path, "results/tiny/cells/*.csv")
    assert len(real_cells) == 2

    # nothing to do on a second run
    result = snakemake(tmp_path, "--cores", "2", "-n", configfile=configfile)
    assert "Nothing to be done" in result.stdout + result.stderr

    # a changed dataset: parsed again, its cells rerun, the others stay
    time.sleep(1.1)
    pos_file(raw, seed=4)
    snakemake(tmp_path, "--cores", "2", configfile=configfile)
    new_cells = mtimes(tmp_path, "results/real/cells/*.csv")
    assert all(new_cells[name] > real_cells[name] for name in real_cells)
    assert mtimes(tmp_path, "results/tiny/cells/*.csv") == tiny_cells


def test_statistics_other_than_expected_stop_the_parse_with_one_message_and_leave_nothing(tmp_path):
    raw = pos_file(tmp_path / "BMS-POS.csv")
    expect = {"n": 515596, "d": 1657}
    configfile = write_config(tmp_path, real_config(path=str(raw), expect=expect))
    result = snakemake(tmp_path, "--cores", "2", configfile=configfile, check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "515596" in output and "300" in output and "datasets.pos.expect" in output, output
    assert not (tmp_path / "datasets/processed/pos.npz").exists()
    assert not (tmp_path / "datasets/processed/pos.json").exists()
    assert not (tmp_path / "results/real/summary.csv").exists()


@pytest.mark.parametrize("key", ["url", "path"])
def test_a_changed_source_in_the_config_fetches_again(tmp_path, key):
    raw = pos_file(tmp_path / "BMS-POS.csv")
    config = real_config(url=dead_url(), path=str(raw))
    configfile = write_config(tmp_path, config)
    snakemake(tmp_path, "--cores", "2", configfile=configfile)
    if key == "path":
        other = pos_file(tmp_path / "other.csv", seed=9)
        config["datasets"]["pos"]["path"] = str(other)
    else:
        config["datasets"]["pos"]["url"] = dead_url() + "?mirror"
    configfile = write_config(tmp_path, config)
    result = snakemake(tmp_path, "-n", configfile=configfile)
    assert re.search(r"^fetch_dataset\s+1\s*$", result.stdout + result.stderr, re.M), result.stdout


def test_fetch_status_records_the_raw_file_or_why_and_how_to_supply_it(tmp_path):
    from experiments.availability import fetch_status, read_status, write_status

    raw = pos_file(tmp_path / "mine.csv")
    found = fetch_status("pos", path=str(raw), raw_dir=tmp_path / "raw")
    assert found == {"dataset": "pos", "available": True, "raw": str(raw)}
    url = dead_url()
    missing = fetch_status("pos", url=url, raw_dir=tmp_path / "raw", retries=0)
    assert missing["available"] is False and missing["url"] == url
    assert "Connection refused" in missing["reason"]
    assert "datasets.pos.path" in missing["how_to_supply"] and url in missing["message"]
    write_status(missing, tmp_path / "status.json")
    assert read_status(tmp_path / "status.json") == missing
    assert not list((tmp_path / "raw").glob("*"))  # the failed download left nothing


def test_the_missing_summary_names_each_dataset_what_it_leaves_out_and_how_to_supply_it():
    from experiments.availability import missing_summary, not_reproduced

    statuses = [{"dataset": "pos", "available": True, "raw": "x"},
                {"dataset": "kosarak", "available": False, "url": "http://mirror/k.gz", "reason": "HTTP 404 Not Found",
                 "how_to_supply": "put it at datasets/raw/kosarak.dat.gz", "message": "..."}]
    entries = not_reproduced(statuses, {"kosarak": ["kosarak"], "pos": ["pos"]},
                             {"kosarak": ["figure5_real", "figure2"]})
    assert entries == [{"dataset": "kosarak", "reason": "HTTP 404 Not Found",
                        "how_to_supply": "put it at datasets/raw/kosarak.dat.gz", "url": "http://mirror/k.gz",
                        "experiments": ["kosarak"], "figures": ["figure5_real", "figure2"]}]
    text = missing_summary(entries)
    assert text.startswith("NOT REPRODUCED: 1 dataset(s)")
    for part in ("kosarak (Kosarak", "HTTP 404 Not Found", "[http://mirror/k.gz]",
                 "left out: kosarak, figure5_real, figure2",
                 "to supply it: put it at datasets/raw/kosarak.dat.gz"):
        assert part in text, part
    assert [line for line in text.splitlines() if line.startswith("- ")] == [
        "- kosarak (Kosarak: click-stream sessions of a Hungarian news portal (FIMI repository)): "
        "HTTP 404 Not Found [http://mirror/k.gz]"]


def test_with_the_server_reachable_the_workflow_downloads_verifies_and_builds_everything(tmp_path):
    """What `make figures` does on a machine with internet, with a real HTTP server on
    127.0.0.1 standing in for the dataset's host."""
    served = tmp_path / "server"
    served.mkdir()
    pos_file(served / "BMS-POS.csv")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/BMS-POS.csv"
        workdir = tmp_path / "work"
        workdir.mkdir()
        configfile = write_config(workdir, real_config(url=url, expect={"n": 300}))
        result = snakemake(workdir, "--cores", "2", configfile=configfile)
    finally:
        server.shutdown()
        thread.join()
    assert "NOT REPRODUCED" not in result.stdout + result.stderr
    raw = workdir / "datasets/raw/BMS-POS.csv"
    assert raw.read_bytes() == (served / "BMS-POS.csv").read_bytes()
    recorded = (workdir / "datasets/raw/BMS-POS.csv.sha256").read_text().split()[0]
    assert recorded == hashlib.sha256(raw.read_bytes()).hexdigest()
    assert json.loads((workdir / "datasets/processed/pos.json").read_text())["sha256"] == recorded
    for name in ["results/real/summary.csv", "figures/realfig.png", "figures/figure2.png", "results/report.html"]:
        assert (workdir / name).is_file(), name
    assert "Not reproduced" not in (workdir / "results/report.html").read_text()
