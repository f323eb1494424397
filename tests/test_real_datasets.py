"""Fetching, parsing and caching the real datasets (datasets/real.py, DESIGN.md 7).

Downloads go to a real HTTP server on 127.0.0.1 whose answers each test scripts; nothing
here touches the internet. The tiny raw files in tests/data/ (README.md there) are in the
real files' formats; their statistics are checked against a plain-Python reading of their
lines as well as against the constants in that README.
"""

import gzip
import hashlib
import http.server
import json
import logging
import pickle
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

from datasets import real
from datasets.real import REAL_DATASETS, DatasetError, DatasetUnavailable, fetch, load, parse, process

DATA = Path(__file__).resolve().parent / "data"
TINY = {"kosarak": DATA / "kosarak_tiny.dat.gz", "pos": DATA / "BMS-POS_tiny.csv"}
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
    rows = plain_rows(name, text, min_items=min_items)
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
    return gzip.decompress(raw) if REAL_DATASETS[name].gzipped else raw


def write_kosarak(path: Path, text: str) -> Path:
    path.write_bytes(gzip.compress(text.encode("ascii"), mtime=0))
    return path


def write_pos(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("ascii"))
    return path


# --------------------------------------------------------------------------------------------
# a scripted HTTP server on 127.0.0.1


class ScriptedServer(http.server.ThreadingHTTPServer):
    """Answers each path with the actions a test scripted for it, one per request (the last
    one repeats); counts the requests."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), ScriptedHandler)
        self.routes: dict[str, list[tuple]] = {}
        self.requests: list[str] = []
        self.lock = threading.Lock()

    def script(self, path: str, *actions: tuple) -> str:
        self.routes[path] = list(actions)
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def count(self, path: str) -> int:
        return self.requests.count(path)


class ScriptedHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        server = self.server
        with server.lock:
            done = server.count(self.path)
            server.requests.append(self.path)
        actions = server.routes.get(self.path, [("status", 404)])
        kind, *args = actions[min(done, len(actions) - 1)]
        try:
            getattr(self, f"_{kind}")(*args)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def _send(self, status: int, body: bytes, *, content_type="application/octet-stream", length=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def _file(self, body: bytes, content_type="application/octet-stream"):
        self._send(200, body, content_type=content_type)

    def _gzip_encoded(self, body: bytes):
        """A .gz file labelled Content-Encoding: gzip, as some servers do."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _status(self, status: int):
        self._send(status, b"error\n", content_type="text/plain")

    def _truncated(self, body: bytes):
        """Claims the whole body, sends half of it, closes the connection."""
        self._send(200, body[: len(body) // 2], length=len(body))
        self.close_connection = True

    def _slow(self, body: bytes, seconds: float):
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:10])
        self.wfile.flush()
        time.sleep(seconds)
        self.wfile.write(body[10:])

    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture
def server():
    httpd = ScriptedServer()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch):
    """requests honours proxy variables; 127.0.0.1 must be reached directly."""
    for var in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


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
    filename = REAL_DATASETS[name].filename
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
    monkeypatch.setattr(real.time, "sleep", waits.append)
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
    for part in (url, "could not connect", "datasets/raw/kosarak.dat.gz", "datasets.kosarak.path",
                 "datasets.kosarak.url"):
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
    error = DatasetUnavailable(dataset="pos", url="http://x/y", reason="HTTP 404 Not Found", how_to_supply="do z")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.dataset, copy.url, copy.reason, copy.how_to_supply, str(copy)) == (
        error.dataset, error.url, error.reason, error.how_to_supply, str(error))
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
    assert matrix.getnnz(axis=1).tolist() == [20, 19]


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
    assert matrix.getnnz(axis=1).tolist() == [2, 0, 1, 0]
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
