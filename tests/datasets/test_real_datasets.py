"""Fetching, parsing and caching the real datasets (datasets/real/, docs/design.md §7).

Downloads go to a real HTTP server on 127.0.0.1 whose answers each test scripts; nothing
here touches the internet. The tiny raw files in tests/data/ (README.md there) are in the
real files' formats; their statistics are checked against a plain-Python reading of their
lines as well as against the constants in that README.
"""

import gzip
import hashlib
import json
import logging
import pickle
import shutil
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

from datasets import real
from datasets.real import (
    REAL_DATASETS,
    DatasetError,
    DatasetUnavailable,
    Source,
    download,
    fetch,
    load,
    obtain,
    parse,
    parsing,
    process,
    sources_of,
)

DATA = Path(__file__).resolve().parents[1] / "data"
TINY = {"kosarak": DATA / "kosarak_tiny.dat.gz", "pos": DATA / "BMS-POS_tiny.csv"}
# the sessions of kosarak_tiny.dat.gz with at least 5 ids, as ann-benchmarks stores them (README.md there)
TINY_HDF5 = DATA / "kosarak_tiny.hdf5"
HDF5 = "ann_benchmarks_hdf5"
# tests/data/README.md
TINY_STATS = {
    ("kosarak", 20): {"n": 12, "d": 116, "tokens": 333, "occurrences": 331},
    ("kosarak", 5): {"n": 32, "d": 118, "tokens": 540, "occurrences": 535},
    ("kosarak", 1): {"n": 40, "d": 118, "tokens": 560, "occurrences": 554},
    ("pos", None): {"n": 30, "d": 45, "tokens": 159, "occurrences": 159},
}
TINY_POS_GIT_BLOB = "d783933ba374ba67b8924544d88b0e08c43421de"
FAST = {"backoff": 0.01, "timeout": (2.0, 2.0)}  # retries within milliseconds in most tests


# --------------------------------------------------------------------------------------------
# plain-Python reference readings


def plain_rows(name: str, text: bytes, *, min_items: int = 20) -> list[list[int]]:
    """The rows as lists of ids, read line by line as the authors did."""
    lines = text.split(b"\n")
    if lines[-1] == b"":  # a final newline ends the last line, it does not start one
        lines.pop()
    if name == "kosarak":
        return [[int(t) for t in line.split()] for line in lines if len(line.split()) >= min_items]
    return [[int(t) for t in line.rstrip(b"\r").split(b",")[:-1]] for line in lines]


def plain_reading(name: str, text: bytes, *, min_items: int = 20) -> tuple[np.ndarray, dict]:
    """The dense matrix, its rows in canonical order (sorted by their sorted distinct ids, a
    prefix first, stably), and the statistics."""
    rows = plain_rows(name, text, min_items=min_items)
    rows = sorted(rows, key=lambda row: sorted(set(row)))
    items = sorted({i for row in rows for i in row})
    column = {item: j for j, item in enumerate(items)}
    dense = np.zeros((len(rows), len(items)))
    for r, row in enumerate(rows):
        for item in row:
            dense[r, column[item]] = 1.0
    stats = {"n": len(rows), "d": len(items), "tokens": sum(map(len, rows)),
             "occurrences": sum(len(set(row)) for row in rows)}
    return dense, stats


def text_of(name: str) -> bytes:
    raw = TINY[name].read_bytes()
    return gzip.decompress(raw) if name == "kosarak" else raw


def write_kosarak(path: Path, text: str) -> Path:
    path.write_bytes(gzip.compress(text.encode("ascii"), mtime=0))
    return path


def write_pos(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("ascii"))
    return path


# --------------------------------------------------------------------------------------------
# downloads from a scripted HTTP server on 127.0.0.1 (the fixture ``server``: conftest.py)



def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dead_url(path: str = "/x") -> str:
    return f"http://127.0.0.1:{closed_port()}{path}"


def entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


HTML_PAGE = b"<!DOCTYPE html>\n<html><body>Service unavailable</body></html>\n"


# --------------------------------------------------------------------------------------------
# fetch


@pytest.mark.parametrize("name", ["kosarak", "pos"])
def test_a_download_leaves_the_file_and_its_sha256_and_parses_to_the_known_statistics(name, server, tmp_path, caplog):
    body = TINY[name].read_bytes()
    url = server.script("/data", ("file", body))
    with caplog.at_level(logging.INFO, logger="datasets.real"):
        path = fetch(name, url=url, raw_dir=tmp_path, **FAST)
    filename = REAL_DATASETS[name].raw_format().filename
    assert path == tmp_path / filename
    assert path.read_bytes() == body
    digest = hashlib.sha256(body).hexdigest()
    assert (tmp_path / f"{filename}.sha256").read_text() == f"{digest}  {filename}\n"
    assert entries(tmp_path) == sorted([filename, f"{filename}.sha256"])
    assert "MB/s" in caplog.text
    _, stats = parse(name, path)
    key = (name, 20 if name == "kosarak" else None)
    assert {k: stats[k] for k in real.STATISTICS} == TINY_STATS[key]
    assert stats["sha256"] == digest


def test_a_gz_file_labelled_as_gzip_encoded_is_kept_as_sent_not_decompressed(server, tmp_path):
    body = TINY["kosarak"].read_bytes()
    url = server.script("/k.gz", ("gzip_encoded", body))
    assert fetch("kosarak", url=url, raw_dir=tmp_path, **FAST).read_bytes() == body


@pytest.mark.parametrize("status", [503, 429])
def test_a_transient_http_error_is_retried_and_the_download_then_succeeds(status, server, tmp_path):
    body = TINY["pos"].read_bytes()
    url = server.script("/pos.csv", ("status", status), ("file", body))
    path = fetch("pos", url=url, raw_dir=tmp_path, **FAST)
    assert server.count("/pos.csv") == 2
    assert path.read_bytes() == body


def test_retries_wait_backoff_times_two_to_the_attempt_between_attempts(server, tmp_path, monkeypatch):
    waits = []
    monkeypatch.setattr(download.time, "sleep", waits.append)
    url = server.script("/pos.csv", ("status", 503), ("status", 502), ("status", 500),
                        ("file", TINY["pos"].read_bytes()))
    fetch("pos", url=url, raw_dir=tmp_path, retries=3, backoff=0.5)
    assert waits == [0.5, 1.0, 2.0]  # the defaults: 3.5 s in all, so an offline fetch fails within seconds
    assert server.count("/pos.csv") == 4


def test_a_truncated_download_is_retried_then_rejected_and_leaves_nothing_behind(server, tmp_path):
    body = TINY["kosarak"].read_bytes()
    url = server.script("/k.gz", ("truncated", body))
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("kosarak", url=url, raw_dir=tmp_path, retries=2, **FAST)
    assert caught.value.reason.startswith(f"truncated: got {len(body) // 2} of {len(body)} bytes")
    assert server.count("/k.gz") == 3
    assert entries(tmp_path) == []  # no data file, no .sha256, no temporary file


@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "application/octet-stream"])
def test_an_html_page_instead_of_data_is_rejected_at_once(content_type, server, tmp_path):
    url = server.script("/pos.csv", ("file", b"  \n" + HTML_PAGE.upper(), content_type))
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("pos", url=url, raw_dir=tmp_path, **FAST)
    assert caught.value.reason == "received an HTML page instead of data"
    assert server.count("/pos.csv") == 1
    assert entries(tmp_path) == []


@pytest.mark.parametrize("damage", ["cut", "garbage"])
def test_a_corrupt_gzip_is_rejected_and_leaves_nothing_behind(damage, server, tmp_path):
    body = TINY["kosarak"].read_bytes()
    body = body[:-20] if damage == "cut" else b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4
    url = server.script("/k.gz", ("file", body))
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("kosarak", url=url, raw_dir=tmp_path, **FAST)
    assert caught.value.reason == "corrupt gzip file"
    assert entries(tmp_path) == []


def test_a_404_fails_at_once_without_retries(server, tmp_path):
    url = server.script("/gone", ("status", 404))
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("pos", url=url, raw_dir=tmp_path, retries=3, backoff=5.0)  # a retry would take 5 s
    assert caught.value.reason == "HTTP 404 Not Found"
    assert server.count("/gone") == 1
    assert entries(tmp_path) == []


def test_a_dead_url_fails_within_seconds_naming_the_url_the_reason_and_how_to_supply_the_file(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default raw_dir, datasets/raw, relative to here
    url = dead_url("/kosarak.dat.gz")
    start = time.monotonic()
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("kosarak", url=url)  # the default timeouts, retries and backoff
    assert time.monotonic() - start < 5.0
    error = caught.value
    assert (error.dataset, error.url) == ("kosarak", url)
    assert error.reason.startswith("could not connect (Connection refused)")
    message = str(error)
    for part in (url, "could not connect", "datasets/raw/kosarak.dat.gz", "datasets.kosarak.sources",
                 "{path: <file>, format: fimi}", "{url: <mirror>, format: fimi}"):
        assert part in message
    assert error.how_to_supply in message
    assert entries(tmp_path / "datasets" / "raw") == []


def test_a_slow_server_times_out_and_is_reported_as_such(server, tmp_path):
    url = server.script("/slow", ("slow", TINY["pos"].read_bytes(), 1.0))
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("pos", url=url, raw_dir=tmp_path, timeout=(2.0, 0.2), retries=1, backoff=0.0)
    assert caught.value.reason.startswith("timed out")
    assert server.count("/slow") == 2
    assert entries(tmp_path) == []


@pytest.mark.parametrize("name", ["kosarak", "pos"])
def test_a_local_path_is_validated_and_used_in_place_without_any_request(name, server, tmp_path):
    url = server.script("/never", ("file", b"unused"))
    raw_dir = tmp_path / "raw"
    assert fetch(name, url=url, path=TINY[name], raw_dir=raw_dir, **FAST) == TINY[name]
    assert server.requests == []
    assert entries(raw_dir) == []  # not copied


@pytest.mark.parametrize(("content", "reason"), [
    (None, "no such file"),
    (b"", "empty file"),
    (HTML_PAGE, "an HTML page, not data"),
    (b"1 2 3\n", "corrupt gzip file"),  # kosarak is gzipped
])
def test_an_unusable_local_path_raises_naming_the_path_and_the_reason(content, reason, tmp_path):
    path = tmp_path / "mine.dat.gz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("kosarak", path=path, raw_dir=tmp_path / "raw")
    assert caught.value.reason == reason
    assert str(path) in str(caught.value)


def test_a_second_fetch_uses_the_cached_file_without_a_request(server, tmp_path):
    url = server.script("/k.gz", ("file", TINY["kosarak"].read_bytes()))
    first = fetch("kosarak", url=url, raw_dir=tmp_path, **FAST)
    second = fetch("kosarak", url=url, raw_dir=tmp_path, **FAST)
    assert first == second
    assert server.count("/k.gz") == 1


def test_a_raw_file_placed_by_hand_is_accepted_and_its_sha256_recorded(tmp_path):
    shutil.copy(TINY["pos"], tmp_path / "BMS-POS.csv")
    path = fetch("pos", url=dead_url(), raw_dir=tmp_path, **FAST)  # a request would fail
    assert path == tmp_path / "BMS-POS.csv"
    digest = hashlib.sha256(TINY["pos"].read_bytes()).hexdigest()
    assert (tmp_path / "BMS-POS.csv.sha256").read_text() == f"{digest}  BMS-POS.csv\n"


def test_a_corrupt_raw_file_placed_by_hand_raises_and_is_not_overwritten(server, tmp_path):
    url = server.script("/k.gz", ("file", TINY["kosarak"].read_bytes()))
    (tmp_path / "kosarak.dat.gz").write_bytes(b"\x1f\x8b\x08 broken")
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("kosarak", url=url, raw_dir=tmp_path, **FAST)
    assert "corrupt gzip file" in caught.value.reason and "delete it" in caught.value.reason
    assert (tmp_path / "kosarak.dat.gz").read_bytes() == b"\x1f\x8b\x08 broken"
    assert server.requests == []


def test_a_cached_file_that_changed_is_checked_again_and_its_new_sha256_recorded(server, tmp_path):
    url = server.script("/pos.csv", ("file", TINY["pos"].read_bytes()))
    path = fetch("pos", url=url, raw_dir=tmp_path, **FAST)
    path.write_bytes(b"1,2,\n3,\n")
    assert fetch("pos", url=url, raw_dir=tmp_path, **FAST) == path
    assert server.count("/pos.csv") == 1
    assert (tmp_path / "BMS-POS.csv.sha256").read_text().split()[0] == hashlib.sha256(b"1,2,\n3,\n").hexdigest()


def test_an_unknown_dataset_name_is_an_error_listing_the_known_ones(tmp_path):
    with pytest.raises(DatasetError, match="unknown dataset 'retail'; known: kosarak, pos"):
        fetch("retail", raw_dir=tmp_path)


def test_dataset_unavailable_survives_pickling_with_its_attributes():
    tried = ({"url": "http://x/y", "format": "bms_pos_csv", "reason": "HTTP 404 Not Found"},)
    error = DatasetUnavailable(dataset="pos", url="http://x/y", reason="HTTP 404 Not Found", how_to_supply="do z",
                               tried=tried)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.dataset, copy.url, copy.source, copy.reason, copy.how_to_supply, copy.tried, str(copy)) == (
        error.dataset, error.url, error.source, error.reason, error.how_to_supply, tried, str(error))
    assert isinstance(copy, DatasetError) and isinstance(copy, ValueError)


# --------------------------------------------------------------------------------------------
# parse


@pytest.mark.parametrize(("name", "min_items"), [("kosarak", 20), ("kosarak", 5), ("kosarak", 1), ("pos", None)])
def test_parsing_the_tiny_files_gives_the_plain_python_reading(name, min_items):
    matrix, stats = parse(name, TINY[name], min_items=min_items)
    dense, expected = plain_reading(name, text_of(name), min_items=min_items or 20)
    assert {k: stats[k] for k in real.STATISTICS} == expected == TINY_STATS[(name, min_items)]
    np.testing.assert_array_equal(matrix.toarray(), dense)
    assert stats["source_file"] == TINY[name].name
    assert stats["sha256"] == hashlib.sha256(TINY[name].read_bytes()).hexdigest()


@pytest.mark.parametrize("name", ["kosarak", "pos"])
def test_the_parsed_matrix_is_canonical_csr_of_float64_ones_as_the_binary_generators_make(name):
    matrix, _ = parse(name, TINY[name])
    assert isinstance(matrix, scipy.sparse.csr_matrix)
    assert matrix.dtype == np.float64 and np.all(matrix.data == 1.0)
    assert matrix.indices.dtype == np.int32 and matrix.indptr.dtype == np.int32
    row_of_entry = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    same_row = row_of_entry[1:] == row_of_entry[:-1]
    assert np.all(np.diff(matrix.indices)[same_row] > 0)  # sorted, no duplicates
    assert matrix.has_canonical_format


def test_kosarak_keeps_lines_of_at_least_min_items_ids_counting_repeated_ids(tmp_path):
    ids = list(range(100, 120))
    lines = [
        " ".join(map(str, ids)),  # 20 distinct: kept
        " ".join(map(str, ids[:19])),  # 19: dropped
        " ".join(map(str, ids[:19] + [ids[0]])),  # 20 ids, 19 distinct: kept
        " ".join(map(str, ids[:18] + [ids[0]])),  # 19 ids: dropped
    ]
    path = write_kosarak(tmp_path / "k.gz", "\n".join(lines) + "\n")
    matrix, stats = parse("kosarak", path)
    assert (stats["n"], stats["tokens"], stats["occurrences"]) == (2, 40, 39)
    # canonical order: the third line's 19 distinct ids begin the first line's 20, so it comes first
    assert matrix.getnnz(axis=1).tolist() == [19, 20]


def test_kosarak_renumbers_the_items_of_the_kept_rows_in_increasing_order_of_their_ids(tmp_path):
    lines = ["900 5 42 7", "3 1", "42 1000000 5"]  # ids 1 and 3 are only in a dropped line
    path = write_kosarak(tmp_path / "k.gz", "\n".join(lines) + "\n")
    matrix, stats = parse("kosarak", path, min_items=3)
    # kept ids 5, 7, 42, 900, 1000000 -> columns 0..4
    np.testing.assert_array_equal(matrix.toarray(), [[1, 1, 1, 1, 0], [1, 0, 1, 0, 1]])
    assert stats["d"] == 5


def test_kosarak_reads_any_ascii_whitespace_and_a_last_line_without_newline(tmp_path):
    path = write_kosarak(tmp_path / "k.gz", "1  2\t3 \r\n\n4 5 6")
    matrix, stats = parse("kosarak", path, min_items=3)
    assert (stats["n"], stats["d"], stats["tokens"]) == (2, 6, 6)
    np.testing.assert_array_equal(matrix.toarray(), [[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]])


def test_pos_reads_each_line_as_split_on_commas_without_its_last_field(tmp_path):
    # As the authors: line.split(",")[:-1]. A line without a trailing comma loses its last id.
    path = write_pos(tmp_path / "p.csv", "10,20,\n30,40\n50,\n")
    matrix, stats = parse("pos", path)
    np.testing.assert_array_equal(matrix.toarray(), [[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    assert (stats["n"], stats["d"], stats["tokens"]) == (3, 4, 4)


@pytest.mark.parametrize("big", ["100", "123456789012345678"])  # a small id range, and one past the lookup table
def test_pos_renumbers_items_in_increasing_numeric_order_not_text_order(big, tmp_path):
    path = write_pos(tmp_path / "p.csv", f"{big},9,\n20,\n")
    matrix, _ = parse("pos", path)
    np.testing.assert_array_equal(matrix.toarray(), [[1, 0, 1], [0, 1, 0]])  # 9, 20, big -> 0, 1, 2


def test_pos_counts_every_line_as_a_row_but_a_final_newline_starts_none(tmp_path):
    text = "1,2,\n\n3,\r\n4"  # an empty line, a CRLF line, a last line "4" without newline or comma
    matrix, stats = parse("pos", write_pos(tmp_path / "p.csv", text))
    assert stats["n"] == 4
    assert matrix.getnnz(axis=1).tolist() == [0, 0, 2, 1]  # rows [1, 2], [], [3], [] in canonical order
    _, with_final_newline = parse("pos", write_pos(tmp_path / "q.csv", "1,2,\n3,\n"))
    assert with_final_newline["n"] == 2
    dense, expected = plain_reading("pos", text.encode())
    np.testing.assert_array_equal(matrix.toarray(), dense)


def test_pos_logs_how_many_lines_lose_an_id_to_the_authors_reading(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="datasets.real"):
        parse("pos", write_pos(tmp_path / "p.csv", "1,2\n3,\n4,5"))
    assert "2 lines do not end with a comma" in caplog.text


@pytest.mark.parametrize(("name", "text", "line", "token"), [
    ("kosarak", "1 2\n3 4\n5 x6 7\n", 3, "x6"),
    ("kosarak", "1 2\n3 -4\n", 2, "-4"),
    ("kosarak", "1 2 3.5\n", 1, "3.5"),
    ("kosarak", "1 2\n" + "9" * 19 + " 1\n", 2, "9" * 19),
    ("pos", "1,2,\n3,a4,\n", 2, "a4"),
    ("pos", "1,2,\n3, 4,\n", 2, " 4"),
    ("pos", "1,2,\n3,,4,\n", 2, "3,,4,"),
    ("pos", "1,\r2,\n", 1, "\r2"),
])
def test_a_bad_item_id_is_an_error_naming_its_line_and_token(name, text, line, token, tmp_path):
    write = write_kosarak if name == "kosarak" else write_pos
    path = write(tmp_path / "raw", text)
    with pytest.raises(DatasetError) as caught:
        parse(name, path, min_items=1 if name == "kosarak" else None)
    assert f"line {line}: {token!r}" in str(caught.value)


def test_min_items_is_for_kosarak_only(tmp_path):
    with pytest.raises(DatasetError, match="min_items applies to kosarak only"):
        parse("pos", TINY["pos"], min_items=20)


@pytest.mark.parametrize("min_items", [0, -1, 2.5, True, "20"])
def test_min_items_must_be_a_positive_integer(min_items):
    with pytest.raises(DatasetError, match="min_items must be an integer >= 1"):
        parse("kosarak", TINY["kosarak"], min_items=min_items)


def test_a_kosarak_file_without_a_long_enough_line_is_an_error(tmp_path):
    with pytest.raises(DatasetError, match="no line has at least 20 item ids"):
        parse("kosarak", write_kosarak(tmp_path / "k.gz", "1 2 3\n"))


def test_parsing_a_corrupt_gzip_is_an_error_saying_to_fetch_again(tmp_path):
    path = tmp_path / "k.gz"
    path.write_bytes(TINY["kosarak"].read_bytes()[:-30])
    with pytest.raises(DatasetError, match="corrupt gzip file; delete it and fetch it again"):
        parse("kosarak", path)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_pos_git_blob_is_what_git_hash_object_gives():
    _, stats = parse("pos", TINY["pos"])
    by_git = subprocess.run(["git", "hash-object", str(TINY["pos"])], capture_output=True, text=True, check=True)
    assert stats["git_blob"] == by_git.stdout.strip() == TINY_POS_GIT_BLOB


# --------------------------------------------------------------------------------------------
# process and load


@pytest.mark.parametrize("name", ["kosarak", "pos"])
def test_process_writes_the_matrix_and_its_statistics_and_load_gives_them_back(name, tmp_path):
    key = (name, 20 if name == "kosarak" else None)
    expect = dict(TINY_STATS[key])
    if name == "pos":
        expect["git_blob"] = TINY_POS_GIT_BLOB
    record = process(name, TINY[name], processed_dir=tmp_path, expect=expect)
    assert entries(tmp_path) == [f"{name}.json", f"{name}.npz"]
    on_disk = json.loads((tmp_path / f"{name}.json").read_text())
    assert on_disk == record
    assert record["expect"] == expect and record["source_file"] == TINY[name].name
    assert ("min_items" in record) == (name == "kosarak") and record.get("min_items", 20) == 20
    matrix, loaded = load(name, processed_dir=tmp_path)
    assert loaded == record
    dense, _ = plain_reading(name, text_of(name))
    np.testing.assert_array_equal(matrix.toarray(), dense)
    assert matrix.indices.dtype == np.int32 and matrix.has_canonical_format


def test_an_expect_mismatch_is_one_error_naming_every_value_the_sha256_and_the_override_and_writes_nothing(tmp_path):
    expect = {"n": 12, "d": 999, "tokens": 333, "occurrences": 330}
    with pytest.raises(DatasetError) as caught:
        process("kosarak", TINY["kosarak"], processed_dir=tmp_path / "out", expect=expect)
    message = str(caught.value)
    digest = hashlib.sha256(TINY["kosarak"].read_bytes()).hexdigest()
    for part in ("n expected 12 found 12,", "d expected 999 found 116 (MISMATCH)", "tokens expected 333 found 333,",
                 "occurrences expected 330 found 331 (MISMATCH)", f"sha256 {digest}",
                 "set datasets.kosarak.expect to the found values", "{n: 12, d: 116, tokens: 333, occurrences: 331}",
                 "or null to skip the check"):
        assert part in message
    assert "\n" not in message
    assert entries(tmp_path / "out") == []


def test_a_git_blob_mismatch_names_both_blobs(tmp_path):
    with pytest.raises(DatasetError, match=f"git_blob expected {'0' * 40} found {TINY_POS_GIT_BLOB} \\(MISMATCH\\)"):
        process("pos", TINY["pos"], processed_dir=tmp_path, expect={"git_blob": "0" * 40})


def test_unknown_expect_keys_are_an_error_naming_them_before_any_parsing(tmp_path):
    with pytest.raises(DatasetError, match="unknown key\\(s\\) in expect for pos: clicks, rows"):
        process("pos", tmp_path / "does-not-exist.csv", processed_dir=tmp_path, expect={"n": 1, "rows": 2, "clicks": 3})


def test_without_expect_nothing_is_verified_and_a_warning_says_so(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="datasets.real"):
        record = process("pos", TINY["pos"], processed_dir=tmp_path, expect=None)
    assert "nothing" in caplog.text and "verified" in caplog.text
    assert record["expect"] is None


def test_process_passes_min_items_to_the_kosarak_parser_and_records_it(tmp_path):
    record = process("kosarak", TINY["kosarak"], processed_dir=tmp_path, min_items=5)
    assert record["min_items"] == 5 and record["n"] == TINY_STATS[("kosarak", 5)]["n"]


def test_load_of_a_dataset_never_processed_says_to_rerun_the_parse_step(tmp_path):
    with pytest.raises(DatasetError, match=r"rerun the workflow's parse step \(snakemake datasets/processed/pos.npz\)"):
        load("pos", processed_dir=tmp_path)


@pytest.mark.parametrize("damage", ["json-not-json", "json-disagrees", "npz-garbage", "npz-missing"])
def test_load_of_damaged_or_inconsistent_files_says_to_rerun_the_parse_step(damage, tmp_path):
    process("pos", TINY["pos"], processed_dir=tmp_path)
    if damage == "json-not-json":
        (tmp_path / "pos.json").write_text("{")
    elif damage == "json-disagrees":
        record = json.loads((tmp_path / "pos.json").read_text())
        record["occurrences"] += 1
        (tmp_path / "pos.json").write_text(json.dumps(record))
    elif damage == "npz-garbage":
        (tmp_path / "pos.npz").write_bytes(b"not a zip file")
    else:
        (tmp_path / "pos.npz").unlink()
    with pytest.raises(DatasetError, match="rerun the workflow's parse step"):
        load("pos", processed_dir=tmp_path)


# --------------------------------------------------------------------------------------------
# ann-benchmarks' HDF5 and the canonical row order


def write_ann_benchmarks(path: Path, train: list[list[int]], test: list[list[int]], replace=None) -> Path:
    """An ann-benchmarks set file holding these sessions; ``replace`` maps array names to other
    arrays (None leaves that array out)."""
    import h5py

    arrays = {
        "train": np.array([i for ids in train for i in ids], dtype=np.int64),
        "size_train": np.array([len(ids) for ids in train], dtype=np.int64),
        "test": np.array([i for ids in test for i in ids], dtype=np.int64),
        "size_test": np.array([len(ids) for ids in test], dtype=np.int64),
    }
    arrays.update(replace or {})
    with h5py.File(path, "w") as f:
        for name, array in arrays.items():
            if array is not None:
                f.create_dataset(name, data=array)
    return path


def arrays_of(matrix) -> tuple:
    return matrix.shape, matrix.indptr.dtype, matrix.indices.dtype, matrix.indptr.tobytes(), \
        matrix.indices.tobytes(), matrix.data.tobytes()


@pytest.mark.parametrize("min_items", [5, 20])
def test_the_tiny_hdf5_and_the_tiny_fimi_file_give_the_same_matrix_byte_for_byte(min_items):
    fimi, fimi_stats = parse("kosarak", TINY["kosarak"], format="fimi", min_items=min_items)
    hdf5, hdf5_stats = parse("kosarak", TINY_HDF5, format=HDF5, min_items=min_items)
    assert arrays_of(hdf5) == arrays_of(fimi)
    counted = {k: hdf5_stats[k] for k in real.STATISTICS}
    assert counted == {k: fimi_stats[k] for k in real.STATISTICS} == TINY_STATS[("kosarak", min_items)]
    dense, _ = plain_reading("kosarak", text_of("kosarak"), min_items=min_items)
    np.testing.assert_array_equal(hdf5.toarray(), dense)
    assert (hdf5_stats["format"], fimi_stats["format"]) == (HDF5, "fimi")
    assert hdf5_stats["sha256"] == hashlib.sha256(TINY_HDF5.read_bytes()).hexdigest()
    assert hdf5_stats["source_file"] == "kosarak_tiny.hdf5"


def test_the_tiny_hdf5_holds_the_long_fimi_lines_shuffled_sorted_and_split_as_ann_benchmarks_wrote_them():
    import h5py

    with h5py.File(TINY_HDF5) as f:
        sizes = np.concatenate([f["size_train"][()], f["size_test"][()]])
        ids = np.concatenate([f["train"][()], f["test"][()]])
        assert (f["size_train"].size, f["size_test"].size) == (26, 6)
    sessions = [ids[start:start + size].tolist() for start, size in zip(np.cumsum(sizes) - sizes, sizes)]
    lines = plain_rows("kosarak", text_of("kosarak"), min_items=1)
    long_lines = [line for line in lines if len(line) >= 5]
    assert all(session == sorted(session) for session in sessions)  # ann-benchmarks sorted each set
    assert sorted(sessions) == sorted(sorted(line) for line in long_lines)  # duplicates kept
    assert [sorted(line) for line in long_lines] != sessions  # but not in the FIMI order
    assert len(lines) - len(long_lines) == 8  # the short lines only the FIMI file has


def test_hdf5_reads_train_then_test_and_keeps_sessions_of_at_least_min_items_ids_counting_repeats(tmp_path):
    path = write_ann_benchmarks(tmp_path / "k.hdf5", train=[[7, 7, 30], [5, 9]], test=[[30, 100, 5000]])
    matrix, stats = parse("kosarak", path, format=HDF5, min_items=3)
    # kept: [7, 7, 30] (3 ids, 2 distinct) and [30, 100, 5000]; items 7, 30, 100, 5000 -> 0..3
    np.testing.assert_array_equal(matrix.toarray(), [[1, 1, 0, 0], [0, 1, 1, 1]])
    assert (stats["n"], stats["d"], stats["tokens"], stats["occurrences"]) == (2, 4, 6, 5)


@pytest.mark.parametrize(("arrays", "message"), [
    ({"size_test": None}, "lacks the array(s) size_test (it needs train, size_train, test, size_test)"),
    ({"train": None, "test": None}, "lacks the array(s) train, test"),
    ({"size_train": np.array([3, 3])}, "the sizes do not add up: size_train sums to 6 ids, but train holds 5"),
    ({"size_test": np.array([1])}, "the sizes do not add up: size_test sums to 1 ids, but test holds 2"),
    ({"train": np.array([1, 2, -3, 4, 5])}, "train[2] = -3 is a negative item id"),
    ({"size_train": np.array([-1, 6])}, "size_train[0] = -1 is a negative session length"),
    ({"train": np.array([1.0, 2, 3, 4, 5])}, "train must be a one-dimensional array of integers, got shape (5,) of"
                                             " float64"),
    ({"test": np.array([[1], [2]])}, "test must be a one-dimensional array of integers, got shape (2, 1)"),
])
def test_an_invalid_ann_benchmarks_file_is_one_error_naming_the_problem_and_nothing_is_written(arrays, message,
                                                                                             tmp_path):
    path = write_ann_benchmarks(tmp_path / "k.hdf5", train=[[1, 2, 3], [4, 5]], test=[[6, 7]], replace=arrays)
    with pytest.raises(DatasetError) as caught:
        process("kosarak", path, format=HDF5, processed_dir=tmp_path / "out", min_items=1)
    assert message in str(caught.value) and str(path) in str(caught.value)
    assert entries(tmp_path / "out") == []


@pytest.mark.parametrize("content", [b"not an hdf5 file at all\n", None])
def test_a_file_that_is_not_hdf5_or_is_cut_short_is_an_error_saying_to_fetch_it_again(content, tmp_path):
    path = tmp_path / "k.hdf5"
    path.write_bytes(content if content is not None else TINY_HDF5.read_bytes()[:3000])
    with pytest.raises(DatasetError, match="is not a readable HDF5 file .*; delete it and fetch it again"):
        parse("kosarak", path, format=HDF5)


def test_an_hdf5_file_without_a_session_long_enough_is_an_error(tmp_path):
    path = write_ann_benchmarks(tmp_path / "k.hdf5", train=[[1, 2]], test=[[3]])
    with pytest.raises(DatasetError, match="no session has at least 20 item ids"):
        parse("kosarak", path, format=HDF5)


def test_a_format_the_dataset_does_not_have_is_an_error_listing_its_formats():
    with pytest.raises(DatasetError, match="unknown format 'fimi' for dataset pos; known: bms_pos_csv"):
        parse("pos", TINY["pos"], format="fimi")
    with pytest.raises(DatasetError, match="known: fimi, ann_benchmarks_hdf5"):
        parse("kosarak", TINY["kosarak"], format="csv")


def test_rows_in_any_order_give_the_same_bytes_sorted_by_their_sorted_item_ids(tmp_path):
    lines = ["9 3 3 5", "5 9 3", "1", "3 5", "1 2", "3 5 9", "", "2 1 1"]
    rng = np.random.default_rng(5)
    shuffled = [lines[i] for i in rng.permutation(len(lines))]
    first = process("kosarak", write_kosarak(tmp_path / "a.gz", "\n".join(lines) + "\n"),
                    processed_dir=tmp_path / "a", min_items=1)
    second = process("kosarak", write_kosarak(tmp_path / "b.gz", "\n".join(shuffled) + "\n"),
                     processed_dir=tmp_path / "b", min_items=1)
    assert (tmp_path / "a/kosarak.npz").read_bytes() == (tmp_path / "b/kosarak.npz").read_bytes()
    assert {k: first[k] for k in real.STATISTICS} == {k: second[k] for k in real.STATISTICS}
    matrix, _ = load("kosarak", processed_dir=tmp_path / "b")
    # items 1, 2, 3, 5, 9 -> 0..4; rows [0], [0, 1] twice, [2, 3], [2, 3, 4] three times
    assert [row.indices.tolist() for row in matrix] == [[0], [0, 1], [0, 1], [2, 3], [2, 3, 4], [2, 3, 4], [2, 3, 4]]


def test_the_canonical_order_is_pythons_sorted_of_the_rows_on_random_matrices():
    rng = np.random.default_rng(8)
    for _ in range(200):
        rows = [sorted(set(rng.integers(0, 7, size=rng.integers(0, 6)).tolist())) for _ in range(rng.integers(1, 40))]
        indptr = np.concatenate([[0], np.cumsum([len(row) for row in rows])]).astype(np.int32)
        indices = np.array([i for row in rows for i in row], dtype=np.int32)
        order = parsing.canonical_row_order(indptr, indices)
        assert order.tolist() == sorted(range(len(rows)), key=rows.__getitem__)  # stable, prefix first


@pytest.mark.parametrize("min_items", [5, 20])
def test_processing_either_format_writes_identical_npz_files_and_statistics(min_items, tmp_path):
    fimi = process("kosarak", TINY["kosarak"], format="fimi", processed_dir=tmp_path / "fimi", min_items=min_items,
                   expect=TINY_STATS[("kosarak", min_items)])
    hdf5 = process("kosarak", TINY_HDF5, format=HDF5, processed_dir=tmp_path / "hdf5", min_items=min_items,
                   expect=TINY_STATS[("kosarak", min_items)])
    assert (tmp_path / "fimi/kosarak.npz").read_bytes() == (tmp_path / "hdf5/kosarak.npz").read_bytes()
    differ = {"sha256", "source_file", "format"}  # what the raw file itself is
    assert {k: v for k, v in fimi.items() if k not in differ} == {k: v for k, v in hdf5.items() if k not in differ}
    assert (fimi["format"], hdf5["format"]) == ("fimi", HDF5)


# --------------------------------------------------------------------------------------------
# a list of sources


def fimi_source(url_or_path: str) -> dict:
    key = "url" if url_or_path.startswith("http") else "path"
    return {key: url_or_path, "format": "fimi"}


def hdf5_source(url_or_path: str) -> dict:
    key = "url" if url_or_path.startswith("http") else "path"
    return {key: url_or_path, "format": HDF5}


EXPECT_5 = TINY_STATS[("kosarak", 5)]


def test_the_first_source_dead_the_second_hdf5_one_is_downloaded_used_and_recorded(server, tmp_path):
    dead = dead_url("/kosarak.dat.gz")
    url = server.script("/kosarak-jaccard.hdf5", ("file", TINY_HDF5.read_bytes()))
    found = obtain("kosarak", sources=[fimi_source(dead), hdf5_source(url)], min_items=5, expect=EXPECT_5,
                   raw_dir=tmp_path, retries=0)
    digest = hashlib.sha256(TINY_HDF5.read_bytes()).hexdigest()
    assert found["source"] == {"url": url, "format": HDF5}
    assert found["raw"] == str(tmp_path / "kosarak-jaccard.hdf5") and found["sha256"] == digest
    assert found["statistics"] == EXPECT_5
    assert found["tried"] == [{"url": dead, "format": "fimi", "reason": "could not connect (Connection refused)"}]
    assert entries(tmp_path) == ["kosarak-jaccard.hdf5", "kosarak-jaccard.hdf5.sha256"]


def test_every_source_failing_is_one_error_naming_each_source_and_its_reason(server, tmp_path):
    dead = dead_url("/kosarak.dat.gz")
    gone = server.script("/gone.hdf5", ("status", 404))
    missing = tmp_path / "nowhere.dat.gz"
    with pytest.raises(DatasetUnavailable) as caught:
        obtain("kosarak", sources=[fimi_source(dead), hdf5_source(gone), fimi_source(str(missing))],
               raw_dir=tmp_path / "raw", retries=0)
    error = caught.value
    assert error.source == "any of its 3 sources" and error.url is None
    assert [entry["reason"] for entry in error.tried] == [
        "could not connect (Connection refused)", "HTTP 404 Not Found", "no such file"]
    message = str(error)
    for part in (f"(1) {dead} [fimi]: could not connect (Connection refused)",
                 f"(2) {gone} [{HDF5}]: HTTP 404 Not Found", f"(3) {missing} [fimi]: no such file",
                 "put the file at datasets/raw/kosarak.dat.gz (format fimi) or datasets/raw/kosarak-jaccard.hdf5"
                 f" (format {HDF5})".replace("datasets/raw", str(tmp_path / "raw")),
                 "{path: <file>, format: fimi or ann_benchmarks_hdf5} first under datasets.kosarak.sources"):
        assert part in message, part
    assert entries(tmp_path / "raw") == []


def test_a_mismatch_on_one_source_makes_the_next_one_tried(server, tmp_path):
    # the FIMI file at min_items 1 has 40 rows; the HDF5 file holds only the 32 long sessions
    fimi = server.script("/kosarak.dat.gz", ("file", TINY["kosarak"].read_bytes()))
    hdf5 = server.script("/kosarak-jaccard.hdf5", ("file", TINY_HDF5.read_bytes()))
    found = obtain("kosarak", sources=[hdf5_source(hdf5), fimi_source(fimi)], min_items=1,
                   expect={"n": 40}, raw_dir=tmp_path, retries=0)
    assert found["source"] == {"url": fimi, "format": "fimi"}
    [passed_over] = found["tried"]
    assert passed_over["url"] == hdf5
    for part in ("n expected 40 found 32 (MISMATCH)", "The download was deleted", "kosarak-jaccard.hdf5"):
        assert part in passed_over["reason"], part
    assert entries(tmp_path) == ["kosarak.dat.gz", "kosarak.dat.gz.sha256"]  # the mismatching file is gone
    assert server.count("/kosarak-jaccard.hdf5") == 1 and server.count("/kosarak.dat.gz") == 1


def test_a_file_in_raw_dir_that_fails_is_kept_and_no_later_source_of_its_format_downloads_over_it(server, tmp_path):
    shutil.copy(TINY["kosarak"], tmp_path / "kosarak.dat.gz")  # placed by hand; 12 rows at min_items 20
    mirror = server.script("/mirror/kosarak.dat.gz", ("file", TINY["kosarak"].read_bytes()))
    with pytest.raises(DatasetUnavailable) as caught:
        obtain("kosarak", sources=[fimi_source(dead_url()), fimi_source(mirror)], expect={"n": 75462},
               raw_dir=tmp_path, retries=0)
    first, second = caught.value.tried
    assert "n expected 75462 found 12 (MISMATCH)" in first["reason"]
    assert f"{tmp_path / 'kosarak.dat.gz'} was kept; delete it to download it again" in first["reason"]
    assert second["reason"].startswith(f"not downloaded: {tmp_path / 'kosarak.dat.gz'} is there and failed above")
    assert server.requests == []
    assert (tmp_path / "kosarak.dat.gz").read_bytes() == TINY["kosarak"].read_bytes()


def test_a_local_copy_in_either_format_is_used_in_place(tmp_path):
    for source in (fimi_source(str(TINY["kosarak"])), hdf5_source(str(TINY_HDF5))):
        found = obtain("kosarak", sources=[source], min_items=5, expect=EXPECT_5, raw_dir=tmp_path / "raw")
        assert found["raw"] == source["path"] and found["source"] == source and found["tried"] == []
    assert entries(tmp_path / "raw") == []


def test_a_download_in_hdf5_format_that_is_not_hdf5_is_rejected_and_leaves_nothing(server, tmp_path):
    url = server.script("/k.hdf5", ("file", TINY["kosarak"].read_bytes()))  # a gzip, not HDF5
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("kosarak", url=url, format=HDF5, raw_dir=tmp_path, **FAST)
    assert caught.value.reason == "not an HDF5 file"
    assert entries(tmp_path) == []
    with pytest.raises(DatasetUnavailable, match="not an HDF5 file"):
        fetch("kosarak", path=TINY["kosarak"], format=HDF5, raw_dir=tmp_path)


def test_the_default_sources_are_the_fimi_file_then_the_ann_benchmarks_hdf5():
    assert sources_of("kosarak", REAL_DATASETS["kosarak"].sources) == (
        Source(url="http://fimi.uantwerpen.be/data/kosarak.dat.gz", format="fimi"),
        Source(url="http://ann-benchmarks.com/kosarak-jaccard.hdf5", format=HDF5))
    assert [source.format for source in REAL_DATASETS["pos"].sources] == ["bms_pos_csv"]


@pytest.mark.parametrize(("sources", "message"), [
    ([], "datasets.kosarak.sources: the list is empty"),
    ("http://x/k.gz", "sources of kosarak must be a list of sources"),
    ([{"url": "http://x/k.gz", "path": "k.gz"}], r"datasets.kosarak.sources\[0\]: give exactly one of url and path"),
    ([{"format": "fimi"}], r"sources\[0\]: give exactly one of url and path"),
    ([{"url": "http://x"}, {"url": "http://y", "mirror": True}], r"sources\[1\]: unknown key\(s\) mirror"),
    ([{"path": "k.csv", "format": "csv"}], r"sources\[0\].format: unknown format 'csv' for dataset kosarak"),
    ([{"url": ""}], r"sources\[0\].url: must be a non-empty string"),
])
def test_a_bad_source_entry_is_one_error_naming_it(sources, message):
    with pytest.raises(DatasetError, match=message):
        sources_of("kosarak", sources)


def test_a_source_without_format_has_the_datasets_native_one():
    assert sources_of("kosarak", [{"path": "k.gz"}]) == (Source(path="k.gz", format="fimi"),)
    assert sources_of("pos", [{"url": "http://x/p.csv"}]) == (Source(url="http://x/p.csv", format="bms_pos_csv"),)


def test_a_downloaded_hdf5_file_with_an_array_missing_is_deleted_and_the_next_source_used(server, tmp_path):
    broken = write_ann_benchmarks(tmp_path / "broken.hdf5", train=[[1, 2, 3, 4, 5]], test=[[1, 2, 3, 4, 6]],
                                  replace={"size_test": None})
    url = server.script("/kosarak-jaccard.hdf5", ("file", broken.read_bytes()))
    raw_dir = tmp_path / "raw"
    found = obtain("kosarak", sources=[hdf5_source(url), fimi_source(str(TINY["kosarak"]))], min_items=5,
                   expect=EXPECT_5, raw_dir=raw_dir, retries=0)
    assert found["source"] == fimi_source(str(TINY["kosarak"]))
    [passed_over] = found["tried"]
    assert "lacks the array(s) size_test" in passed_over["reason"]
    assert f"The download was deleted ({raw_dir / 'kosarak-jaccard.hdf5'})" in passed_over["reason"]
    assert entries(raw_dir) == []
