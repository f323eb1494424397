"""A job's log file, shared by the job's own lines and its stderr.

Each workflow script first sends its stderr into its rule's log (so that a failing job's
traceback lands in logs/), then the job function writes its progress lines to the same file.
Both append, so neither overwrites the other; Snakemake removes the log before each job.
"""
from __future__ import annotations

from pathlib import Path


def open_log(path):
    """The job's log opened for appending, line-buffered (lines keep their order with the
    stderr stream's, which workflow/scripts open the same way)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "a", buffering=1)
