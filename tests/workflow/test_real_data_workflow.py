"""Real datasets in the workflow (docs/design.md §7): fetch -> parse -> cells as one DAG, a changed
dataset reruns its cells, a wrong dataset stops with one message, and a machine without the
files builds everything else, the report included, which names what is missing; the run then
ends with the same summary and a non-zero exit status. No internet: a dead local port stands
for an unreachable server, and local files in the real formats for the real ones."""
import functools
import gzip
import hashlib
import http.server
import json
import re
import shutil
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from testkit.real_data import BINARY_MECHANISMS, dead_url, path_source, pos_file, real_config, url_source
from testkit.workflow_runs import TINY, planned_jobs, snakemake, write_config


def mtimes(workdir, pattern):
    return {path.name: path.stat().st_mtime_ns for path in sorted(Path(workdir).glob(pattern))}


def test_without_the_dataset_everything_else_and_the_report_are_built_and_the_run_ends_naming_it(tmp_path):
    url = dead_url()
    configfile = write_config(tmp_path, real_config(sources=[url_source(url)]))
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
    assert url in log and "datasets/raw/BMS-POS.csv" in log and "datasets.pos.sources" in log
    assert elapsed < 120
    # the console ends with the summary the report has
    tail = output.strip().splitlines()[-8:]
    summary = "\n".join(tail)
    assert "NOT REPRODUCED" in summary and "pos" in summary and url in summary, summary
    assert f"tried {url} [bms_pos_csv]: could not connect (Connection refused)" in summary, summary
    assert "left out: real, realfig, figure2" in summary and "datasets.pos.sources" in summary
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
    configfile = write_config(tmp_path, real_config(sources=[path_source(raw), url_source(dead_url())]))
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
    configfile = write_config(tmp_path, real_config(sources=[path_source(raw)], expect=expect))
    result = snakemake(tmp_path, "--cores", "2", configfile=configfile, check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "515596" in output and "300" in output and "datasets.pos.expect" in output, output
    assert not (tmp_path / "datasets/processed/pos.npz").exists()
    assert not (tmp_path / "datasets/processed/pos.json").exists()
    assert not (tmp_path / "results/real/summary.csv").exists()


@pytest.mark.parametrize("change", ["url", "path", "order", "expect"])
def test_a_changed_source_in_the_config_fetches_again(tmp_path, change):
    raw = pos_file(tmp_path / "BMS-POS.csv")
    config = real_config(sources=[path_source(raw), url_source(dead_url())])
    configfile = write_config(tmp_path, config)
    snakemake(tmp_path, "--cores", "2", configfile=configfile)
    sources = config["datasets"]["pos"]["sources"]
    if change == "path":
        sources[0] = path_source(pos_file(tmp_path / "other.csv", seed=9))
    elif change == "url":
        sources[1] = url_source(dead_url() + "?mirror")
    elif change == "order":
        sources.reverse()
    else:  # expect decides which source is accepted
        config["datasets"]["pos"]["expect"] = {"n": 300}
    configfile = write_config(tmp_path, config)
    result = snakemake(tmp_path, "-n", configfile=configfile)
    assert re.search(r"^fetch_dataset\s+1\s*$", result.stdout + result.stderr, re.M), result.stdout


def test_fetch_status_records_the_raw_file_or_why_and_how_to_supply_it(tmp_path):
    from datasets.real import parse
    from experiments.engine.availability import fetch_settings, fetch_status, read_status, write_status

    raw = pos_file(tmp_path / "mine.csv")
    url = dead_url()
    settings = fetch_settings("pos", {"sources": [{"url": url}, {"path": str(raw)}], "expect": {"n": 300}})
    assert settings == {"sources": [url_source(url), path_source(raw)], "min_items": None, "expect": {"n": 300}}
    found = fetch_status("pos", settings=settings, raw_dir=tmp_path / "raw", retries=0)
    digest = hashlib.sha256(raw.read_bytes()).hexdigest()
    _, parsed = parse("pos", raw)
    assert found == {"dataset": "pos", "available": True, "settings": settings, "raw": str(raw),
                     "source": path_source(raw), "sha256": digest,
                     "statistics": {key: parsed[key] for key in ("n", "d", "tokens", "occurrences")},
                     "tried": [{**url_source(url), "reason": "could not connect (Connection refused)"}]}
    settings = fetch_settings("pos", {"sources": [{"url": url}]})
    missing = fetch_status("pos", settings=settings, raw_dir=tmp_path / "raw", retries=0)
    assert missing["available"] is False and missing["settings"] == settings
    assert missing["tried"] == [{**url_source(url), "reason": "could not connect (Connection refused)"}]
    assert "Connection refused" in missing["reason"]
    assert "datasets.pos.sources" in missing["how_to_supply"] and url in missing["message"]
    write_status(missing, tmp_path / "status.json")
    assert read_status(tmp_path / "status.json") == missing
    assert not list((tmp_path / "raw").glob("*"))  # the failed download left nothing


def test_the_missing_summary_names_each_dataset_what_it_leaves_out_and_how_to_supply_it():
    from experiments.engine.availability import missing_summary, not_reproduced

    tried = [{"url": "http://mirror/k.gz", "format": "fimi", "reason": "HTTP 404 Not Found"},
             {"path": "/data/k.hdf5", "format": "ann_benchmarks_hdf5", "reason": "no such file"}]
    statuses = [{"dataset": "pos", "available": True, "raw": "x"},
                {"dataset": "kosarak", "available": False, "tried": tried, "reason": "(1) ...; (2) ...",
                 "how_to_supply": "put it at datasets/raw/kosarak.dat.gz", "message": "..."}]
    entries = not_reproduced(statuses, {"kosarak": ["kosarak"], "pos": ["pos"]},
                             {"kosarak": ["figure5_real", "figure2"]})
    assert entries == [{"dataset": "kosarak", "reason": "(1) ...; (2) ...",
                        "how_to_supply": "put it at datasets/raw/kosarak.dat.gz",
                        "url": "http://mirror/k.gz, /data/k.hdf5", "tried": tried,
                        "experiments": ["kosarak"], "figures": ["figure5_real", "figure2"]}]
    text = missing_summary(entries)
    assert text.splitlines() == [
        "NOT REPRODUCED: 1 dataset(s) could not be obtained; every other target was built.",
        "- kosarak (Kosarak: click-stream sessions of a Hungarian news portal (FIMI repository)): "
        "none of its 2 source(s) gave the data",
        "  tried http://mirror/k.gz [fimi]: HTTP 404 Not Found",
        "  tried /data/k.hdf5 [ann_benchmarks_hdf5]: no such file",
        "  left out: kosarak, figure5_real, figure2",
        "  to supply it: put it at datasets/raw/kosarak.dat.gz",
        "Supply the files and run the same command again: only what is missing runs."]


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
        configfile = write_config(workdir, real_config(sources=[url_source(url)], expect={"n": 300}))
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


def test_a_run_reports_only_the_datasets_its_own_targets_need_never_a_status_written_for_another_config(tmp_path):
    """The bug a user saw: after `snakemake results/kosarak/summary.csv --configfile X` (X naming
    a dead URL; exit 1), `snakemake results/userlevel_geometric/summary.csv` with the default
    config built its target, then printed "NOT REPRODUCED: kosarak ..." with X's URL and
    exited 1. Here pos stands for kosarak, config y for the default config."""
    x_url = dead_url().replace("/BMS-POS.csv", "/config-x/BMS-POS.csv")
    y_url = dead_url().replace("/BMS-POS.csv", "/config-y/BMS-POS.csv")
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    x = write_config(tmp_path / "x", real_config(sources=[url_source(x_url)]))
    y = write_config(tmp_path / "y", real_config(sources=[url_source(y_url)]))
    status = tmp_path / "datasets/raw/pos.status.json"

    # The user's first run: the target needs pos, which cannot be obtained; the run says so and
    # removes the failed status (the parse job fails, so the run's hooks run).
    result = snakemake(tmp_path, "--cores", "2", "results/real/summary.csv", configfile=x, check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "NOT REPRODUCED" in output and f"tried {x_url} [bms_pos_csv]" in output, output
    assert not status.exists()

    # A status left behind (here by asking for the status alone, as an interrupted run could)
    result = snakemake(tmp_path, "--cores", "2", "datasets/raw/pos.status.json", configfile=x, check=False)
    assert not read_status_file(status)["available"]

    # The user's second run: another config, a target that needs no real dataset.
    result = snakemake(tmp_path, "--cores", "2", "results/tiny/summary.csv", configfile=y, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert (tmp_path / "results/tiny/summary.csv").is_file()
    assert "NOT REPRODUCED" not in output and x_url not in output, output

    # A run of y that needs pos never takes x's status for its own: with Snakemake's rerun
    # triggers it fetches again from y's source ...
    result = snakemake(tmp_path, "--cores", "2", "results/real/summary.csv", configfile=y, check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert re.search(r"fetch_dataset:\n(.*\n)*?\s+reason: Params have changed", output), output
    summary = output[output.index("NOT REPRODUCED"):]
    assert f"tried {y_url} [bms_pos_csv]" in summary and x_url not in summary, summary
    assert not status.exists()

    # ... and where Snakemake would not (no params trigger), the stale status stops the run,
    # naming it and what to do.
    snakemake(tmp_path, "--cores", "2", "datasets/raw/pos.status.json", configfile=x, check=False)
    result = snakemake(tmp_path, "--cores", "2", "results/real/summary.csv", "--rerun-triggers", "mtime",
                       configfile=y, check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "datasets/raw/pos.status.json was written for other dataset settings" in output, output
    assert "Delete it to fetch the dataset again" in output


def read_status_file(path):
    return json.loads(Path(path).read_text())


KOSARAK_TINY = Path(__file__).resolve().parents[1] / "data" / "kosarak_tiny.dat.gz"
KOSARAK_TINY_HDF5 = Path(__file__).resolve().parents[1] / "data" / "kosarak_tiny.hdf5"


def kosarak_config(sources):
    config = json.loads(json.dumps(TINY))
    config["experiments"] = {"realk": {
        "data": {"source": "real_dataset", "dataset": "kosarak"}, "grid": {"rho": [0.5, 1.0]}, "trials": 2,
        "metric": "l1_half", "share_rho": True, "mechanisms": BINARY_MECHANISMS}}
    config["datasets"] = {"kosarak": {"sources": sources, "min_items": 5, "expect": {"n": 32, "d": 118, "tokens": 540}}}
    config["figures"] = {}
    return config


def cells_without_runtimes(workdir, experiment):
    return {path.name: pd.read_csv(path).drop(columns="runtime_s").to_csv(index=False)
            for path in sorted((Path(workdir) / f"results/{experiment}/cells").glob("*.csv"))}


def test_kosarak_with_the_fimi_host_down_comes_from_the_ann_benchmarks_hdf5_and_gives_the_same_results(tmp_path):
    served = tmp_path / "server"
    served.mkdir()
    (served / "kosarak-jaccard.hdf5").write_bytes(KOSARAK_TINY_HDF5.read_bytes())
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fimi_url = dead_url().replace("BMS-POS.csv", "kosarak.dat.gz")
    hdf5_url = f"http://127.0.0.1:{server.server_address[1]}/kosarak-jaccard.hdf5"
    sources = [{"url": fimi_url, "format": "fimi"}, {"url": hdf5_url, "format": "ann_benchmarks_hdf5"}]
    downloaded, local = tmp_path / "downloaded", tmp_path / "local"
    downloaded.mkdir()
    local.mkdir()
    try:
        configfile = write_config(downloaded, kosarak_config(sources))
        result = snakemake(downloaded, "--cores", "2", "results/realk/summary.csv", configfile=configfile)
    finally:
        server.shutdown()
        thread.join()
    assert "NOT REPRODUCED" not in result.stdout + result.stderr
    status = read_status_file(downloaded / "datasets/raw/kosarak.status.json")
    digest = hashlib.sha256(KOSARAK_TINY_HDF5.read_bytes()).hexdigest()
    assert status["available"] and status["source"] == sources[1] and status["sha256"] == digest
    assert status["raw"] == "datasets/raw/kosarak-jaccard.hdf5"
    assert [entry["url"] for entry in status["tried"]] == [fimi_url]
    assert "could not connect" in status["tried"][0]["reason"]
    assert status["settings"]["sources"] == sources
    record = json.loads((downloaded / "datasets/processed/kosarak.json").read_text())
    assert (record["format"], record["sha256"], record["n"]) == ("ann_benchmarks_hdf5", digest, 32)

    # The FIMI file as the one source, elsewhere: the same processed matrix and the same cells.
    configfile = write_config(local, kosarak_config([{"path": str(KOSARAK_TINY), "format": "fimi"}]))
    snakemake(local, "--cores", "2", "results/realk/summary.csv", configfile=configfile)
    assert read_status_file(local / "datasets/raw/kosarak.status.json")["source"]["format"] == "fimi"
    assert (local / "datasets/processed/kosarak.npz").read_bytes() == \
        (downloaded / "datasets/processed/kosarak.npz").read_bytes()
    cells = cells_without_runtimes(local, "realk")
    assert len(cells) == 2 and cells == cells_without_runtimes(downloaded, "realk")
    assert (local / "results/realk/summary.csv").read_bytes() == (downloaded / "results/realk/summary.csv").read_bytes()


MNIST_TINY = Path(__file__).resolve().parents[1] / "data" / "mnist_tiny"
MNIST_TINY_NPZ = Path(__file__).resolve().parents[1] / "data" / "mnist_tiny.npz"


def mnist_config(sources):
    config = json.loads(json.dumps(TINY))
    config["experiments"] = {"digits": {
        "data": {"source": "mnist", "digit": 0}, "grid": {"rho": [0.5, 1.0]}, "trials": 2, "share_rho": True,
        "mechanisms": [{"IOME": {"algorithm": "iome", "search_steps": 10}}, "empirical_mean"]}}
    config["datasets"] = {"mnist": {"sources": sources, "expect": {"n": 18, "d": 784, "n_train": 12}}}
    config["figures"] = {}
    return config


def test_mnist_from_a_directory_of_idx_files_runs_fetch_parse_and_cells_and_a_changed_file_reparses(tmp_path):
    local = tmp_path / "my-mnist"
    shutil.copytree(MNIST_TINY, local)
    workdir = tmp_path / "work"
    workdir.mkdir()
    sources = [{"path": str(local), "format": "idx"}, {"path": str(MNIST_TINY_NPZ), "format": "keras_npz"}]
    configfile = write_config(workdir, mnist_config(sources))
    result = snakemake(workdir, "--cores", "2", "results/digits/summary.csv", configfile=configfile)
    assert "NOT REPRODUCED" not in result.stdout + result.stderr
    status = read_status_file(workdir / "datasets/raw/mnist.status.json")
    assert status["available"] and status["raw"] == str(local) and status["source"] == sources[0]
    assert status["statistics"]["label_counts"] == [5, 5, 4, 1, 1, 0, 0, 1, 0, 1]
    assert json.loads((workdir / "datasets/processed/mnist.json").read_text())["n_train"] == 12
    summary = pd.read_csv(workdir / "results/digits/summary.csv")
    assert set(summary["mechanism"]) == {"IOME", "empirical_mean"}
    assert summary["median"].isna().all()  # the error against the images' own mean only
    iome = summary[summary["mechanism"] == "IOME"]
    assert (iome["median_vs_empirical"] > 0).all() and len(iome) == 2

    # one of the four files changes (other test labels, the same counts expect checks): parsed again, cells rerun
    time.sleep(1.1)
    labels = local / "t10k-labels-idx1-ubyte.gz"
    labels.write_bytes(gzip.compress(bytes([0, 0, 8, 1, 0, 0, 0, 6]) + bytes([0, 0, 0, 0, 0, 0])))
    result = snakemake(workdir, "-n", "results/digits/summary.csv", configfile=configfile)
    output = result.stdout + result.stderr
    assert planned_jobs(result, "parse_dataset") == 1 and planned_jobs(result, "fetch_dataset") == 0, output
    assert planned_jobs(result, "run_setting_digits") == 1, output
