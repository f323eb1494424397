"""A job's log file, shared by the job's own lines and its stderr.

Each workflow script first sends its stderr into its rule's log (so that a failing job's
traceback lands in logs/), then the job function writes its progress lines to the same file.
Both append, so neither overwrites the other; Snakemake removes the log before each job. Its
second statement, :func:`console_errors`, puts a failure's last line on the console as well.
"""
from __future__ import annotations

import sys
from pathlib import Path


def open_log(path):
    """The job's log opened for appending, line-buffered (lines keep their order with the
    stderr stream's, which workflow/scripts open the same way)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "a", buffering=1)


def console_errors(log) -> None:
    """On an uncaught exception, the traceback goes to the job's log (stderr, redirected there) and
    one line, ``error: <type>: <message> (traceback in <log>)``, to the console (the process's
    original stderr), so that a run shows why a job failed, not only where its log is."""
    def report(kind, error, trace):
        sys.__excepthook__(kind, error, trace)
        message = " ".join(str(error).split())
        print(f"error: {kind.__name__}: {message} (traceback in {log})", file=sys.__stderr__, flush=True)

    sys.excepthook = report
