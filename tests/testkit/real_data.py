"""Configs and files for workflow runs on a real-format dataset (POS), a URL where nothing listens,
and a scripted HTTP server on 127.0.0.1 for the download tests."""
import contextlib
import http.server
import json
import socket
import threading
import time
from pathlib import Path

import numpy as np

from testkit.workflow_runs import TINY

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


def url_source(url):
    return {"url": url, "format": "bms_pos_csv"}


def path_source(path):
    return {"path": str(path), "format": "bms_pos_csv"}


def real_config(*, sources, expect=None):
    config = json.loads(json.dumps(TINY))
    config["experiments"]["real"] = {
        "data": {"source": "real_dataset", "dataset": "pos"},
        "grid": {"rho": [0.5, 1.0]},
        "trials": 2,
        "metric": "l1_half",
        "share_rho": True,
        "mechanisms": BINARY_MECHANISMS,
    }
    config["datasets"] = {"pos": {"sources": sources, "expect": expect}}
    config["figures"] = {
        "tinyfig": {"title": "tiny", "panels": [{"experiment": "tiny", "x": "d", "mechanisms": ["PLAN", "iome"]}]},
        "realfig": {"title": "real", "panels": [{"experiment": "real", "x": "rho", "measure": "error_vs_empirical",
                                                  "mechanisms": ["plan_binary", "IOME-binary"]}]},
    }
    return config


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


@contextlib.contextmanager
def scripted_server():
    """A :class:`ScriptedServer` serving in a thread while the block runs."""
    httpd = ScriptedServer()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
