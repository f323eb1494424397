"""Configs and files for workflow runs on a real-format dataset (POS), and a URL where nothing listens."""
import json
import socket
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
