"""Which real datasets a run could obtain (docs/design.md §7; workflow/rules/datasets.smk).

The fetch step is a Snakemake checkpoint that always writes a small status file: either the
raw file it found or downloaded (the first of the dataset's sources whose file parses to the
expected statistics: which source, its format, the file's sha256), or why each source failed
and how to supply the file. Targets that need a missing dataset are left out, every other
target (the report included) is built, and the run ends with :func:`missing_summary` and a
non-zero exit status. A failed status is removed at the end of the run, so the next run tries
again. Every status records the settings it was obtained with (:func:`fetch_settings`), so
that one written for other sources is never taken for the config's (:func:`stale_status`).
"""
from __future__ import annotations

import json

from datasets.real import RAW_DIR, REAL_DATASETS, DatasetUnavailable, obtain, sources_of

from .atomic import write_text_atomically


def fetch_settings(dataset: str, entry: dict) -> dict:
    """What the fetch of a dataset configured as ``entry`` (config ``datasets.<dataset>``)
    depends on: its sources (formats filled in), ``min_items`` and ``expect``, which decide
    which source is accepted. A bad source raises one DatasetError naming it. A statistic of
    ``expect`` set to null is not checked (how a config merged over another drops one)."""
    expect = entry.get("expect")
    return {
        "sources": [source.as_dict() for source in sources_of(dataset, entry.get("sources"))],
        "min_items": entry.get("min_items"),
        "expect": {key: value for key, value in expect.items() if value is not None} if expect else expect,
    }


def fetch_status(dataset: str, *, settings: dict, raw_dir=RAW_DIR, **fetch_options) -> dict:
    """Tries to obtain the raw file of ``dataset`` with ``settings`` (:func:`fetch_settings`);
    the status as a JSON-able dict: the settings, then the file, the source used, its sha256,
    statistics and the sources that failed before it (``tried``), or every source's failure
    (``tried``, ``reason``), how to supply the file and the whole ``message``."""
    try:
        found = obtain(dataset, sources=settings["sources"], min_items=settings["min_items"],
                       expect=settings["expect"], raw_dir=raw_dir, **fetch_options)
    except DatasetUnavailable as error:
        return {"dataset": dataset, "available": False, "settings": settings, "tried": list(error.tried),
                "reason": error.reason, "how_to_supply": error.how_to_supply, "message": str(error)}
    return {"dataset": dataset, "available": True, "settings": settings, **found}


def stale_status(status: dict, settings: dict, path) -> str | None:
    """Why the status read from ``path`` does not belong to the current ``settings`` (it was
    written for other sources, min_items or expect), or None. Snakemake fetches again when the
    settings change (they are the checkpoint's params); this catches the runs where it would
    not (``--rerun-triggers`` without params)."""
    if status.get("settings") == settings:
        return None
    return (f"{path} was written for other dataset settings than this config's (recorded:"
            f" {json.dumps(status.get('settings'))}; configured: {json.dumps(settings)}). Delete it to fetch the"
            f" dataset again (Snakemake does that by itself unless --rerun-triggers leaves out params)")


def write_status(status: dict, path) -> None:
    """Written atomically: a status file is complete or absent."""
    write_text_atomically(json.dumps(status, indent=2) + "\n", path)


def read_status(path) -> dict:
    with open(path) as stream:
        return json.load(stream)


def not_reproduced(statuses: list[dict], experiments: dict, figures: dict) -> list[dict]:
    """The report's "not reproduced" entries: per unavailable dataset, the reason (with several
    sources, each one and why it failed), the sources tried (``tried``; and as one line,
    ``url``, the report's "Source"), how to supply it, and the experiments and figures left out.
    ``experiments`` and ``figures`` map a dataset to the names that need it."""
    return [
        {"dataset": status["dataset"], "reason": status["reason"], "how_to_supply": status["how_to_supply"],
         "url": ", ".join(source.get("url") or source.get("path") for source in status["tried"]),
         "tried": list(status["tried"]), "experiments": list(experiments.get(status["dataset"], [])),
         "figures": list(figures.get(status["dataset"], []))}
        for status in statuses if not status["available"]
    ]


def missing_summary(entries: list[dict]) -> str:
    """What the console prints at the end of a run without some datasets (the report's
    "not reproduced" section in text): per dataset, each source tried and why it failed."""
    lines = [f"NOT REPRODUCED: {len(entries)} dataset(s) could not be obtained; every other target was built."]
    for entry in entries:
        description = REAL_DATASETS[entry["dataset"]].description if entry["dataset"] in REAL_DATASETS else ""
        tried = entry["tried"]
        lines.append(f"- {entry['dataset']}{f' ({description})' if description else ''}: "
                     f"none of its {len(tried)} source(s) gave the data")
        lines += [f"  tried {source.get('url') or source.get('path')} [{source['format']}]: {source['reason']}"
                  for source in tried]
        left_out = entry["experiments"] + entry["figures"]
        if left_out:
            lines.append(f"  left out: {', '.join(left_out)}")
        lines.append(f"  to supply it: {entry['how_to_supply']}")
    lines.append("Supply the files and run the same command again: only what is missing runs.")
    return "\n".join(lines)
