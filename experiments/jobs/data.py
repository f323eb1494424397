"""The real datasets: the fetch checkpoint and the parse-and-verify job."""
from __future__ import annotations

import contextlib
import json
import logging
import sys
from pathlib import Path

from datasets.real import DatasetError, process

from ..engine.availability import fetch_status, read_status, write_status
from ..engine.joblog import open_log


def fetch_dataset_job(*, dataset, settings, output, log):
    """The fetch checkpoint: obtains the raw file from the first of the dataset's sources that
    gives the expected data (``settings``: availability.fetch_settings), or records why each
    failed (the workflow then builds everything else and names what is missing)."""
    with open_log(log) as stream, _logging_to(stream):
        status = fetch_status(dataset, settings=settings)
        if status["available"]:
            print(f"{dataset}: raw file {status['raw']} from {status['source']} (sha256 {status['sha256']})",
                  file=stream)
        else:
            print(status["message"], file=stream)
            # the console too (sys.stderr is the log: the script sent it there)
            print(f"WARNING: {status['message']}", file=sys.__stderr__)
    write_status(status, output)


def parse_dataset_job(*, dataset, status, min_items, expect, npz, stats, log):
    """Parses and verifies the raw file the fetch checkpoint recorded in ``status`` (in its
    source's format) into ``npz`` and its statistics ``stats`` (written together by
    datasets.real.process, nothing on a mismatch). A dataset problem, or a status saying the
    dataset could not be obtained (when a target that needs it was asked for by name), ends
    the job with its one message instead of a traceback."""
    processed_dir = Path(npz).parent
    if Path(stats).parent != processed_dir or Path(npz).name != f"{dataset}.npz":
        raise ValueError(f"outputs {npz}, {stats} are not {processed_dir}/{dataset}.npz and .json")
    found = read_status(status)
    options = {"min_items": min_items} if min_items is not None else {}
    with open_log(log) as stream, _logging_to(stream):
        try:
            if not found["available"]:
                raise DatasetError(found["message"])
            statistics = process(dataset, found["raw"], format=found["source"]["format"], processed_dir=processed_dir,
                                 expect=expect, **options)
        except DatasetError as error:
            print(error, file=stream)
            print(f"Error in dataset {dataset}: {error}", file=sys.__stderr__)  # the console, as above
            raise SystemExit(1) from None
        print(json.dumps(statistics, indent=2), file=stream)


@contextlib.contextmanager
def _logging_to(stream):
    """The datasets package's progress messages go to the job's log."""
    logger = logging.getLogger("datasets")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
