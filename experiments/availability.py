"""Which real datasets a run could obtain (DESIGN.md 7; workflow/rules/datasets.smk).

The fetch step is a Snakemake checkpoint that always writes a small status file: either the
raw file it found or downloaded, or why it could not and how to supply it. Targets that need
a missing dataset are left out, every other target (the report included) is built, and the
run ends with :func:`missing_summary` and a non-zero exit status. A failed status is removed
at the end of the run, so the next run tries again.
"""
from __future__ import annotations

import json

from datasets.real import RAW_DIR, REAL_DATASETS, DatasetUnavailable, fetch

from .atomic import write_text_atomically


def fetch_status(dataset: str, *, url=None, path=None, raw_dir=RAW_DIR, **fetch_options) -> dict:
    """Tries to obtain the raw file of ``dataset``; the status as a JSON-able dict."""
    try:
        raw = fetch(dataset, url=url, path=path, raw_dir=raw_dir, **fetch_options)
    except DatasetUnavailable as error:
        return {"dataset": dataset, "available": False, "url": error.url, "reason": error.reason,
                "how_to_supply": error.how_to_supply, "message": str(error)}
    return {"dataset": dataset, "available": True, "raw": str(raw)}


def write_status(status: dict, path) -> None:
    """Written atomically: a status file is complete or absent."""
    write_text_atomically(json.dumps(status, indent=2) + "\n", path)


def read_status(path) -> dict:
    with open(path) as stream:
        return json.load(stream)


def not_reproduced(statuses: list[dict], experiments: dict, figures: dict) -> list[dict]:
    """The report's "not reproduced" entries: per unavailable dataset, the reason, how to
    supply it, and the experiments and figures left out. ``experiments`` and ``figures`` map
    a dataset to the names that need it."""
    return [
        {"dataset": status["dataset"], "reason": status["reason"], "how_to_supply": status["how_to_supply"],
         "url": status.get("url"), "experiments": list(experiments.get(status["dataset"], [])),
         "figures": list(figures.get(status["dataset"], []))}
        for status in statuses if not status["available"]
    ]


def missing_summary(entries: list[dict]) -> str:
    """What the console prints at the end of a run without some datasets (the report's
    "not reproduced" section in text)."""
    lines = [f"NOT REPRODUCED: {len(entries)} dataset(s) could not be obtained; every other target was built."]
    for entry in entries:
        description = REAL_DATASETS[entry["dataset"]].description if entry["dataset"] in REAL_DATASETS else ""
        lines.append(f"- {entry['dataset']}{f' ({description})' if description else ''}: {entry['reason']}"
                     + (f" [{entry['url']}]" if entry.get("url") else ""))
        left_out = entry["experiments"] + entry["figures"]
        if left_out:
            lines.append(f"  left out: {', '.join(left_out)}")
        lines.append(f"  to supply it: {entry['how_to_supply']}")
    lines.append("Supply the files and run the same command again: only what is missing runs.")
    return "\n".join(lines)
