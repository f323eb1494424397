"""Result files are written atomically (docs/design.md §9): complete, or not there at all."""
from __future__ import annotations

import gzip
import io
import os
import tempfile
from pathlib import Path

import pandas as pd

FLOAT_FORMAT = "%.10g"  # fixed formatting: byte-identical files for identical results


def write_atomically(path, write) -> None:
    """``write(stream)`` into a temporary file beside ``path`` (a binary stream), then rename it
    to ``path``: a killed job never leaves a partial file behind. A ``.gz`` path is
    gzip-compressed with a fixed header (no time stamp, no name), so identical contents give
    identical bytes. The file is readable by everyone (0644)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as raw:
            if path.suffix == ".gz":
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as compressed:
                    write(compressed)
            else:
                write(raw)
        os.chmod(temporary, 0o644)  # mkstemp creates 0600; results are for everyone to read
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_text_atomically(text: str, path) -> None:
    """``text``, UTF-8 encoded, written by :func:`write_atomically`."""
    write_atomically(path, lambda stream: stream.write(text.encode("utf-8")))


def write_csv_atomically(frame: pd.DataFrame, path) -> None:
    """``frame`` as CSV with fixed float formatting, written atomically (gzip-compressed for
    a ``.gz`` path, with a fixed header: :func:`write_atomically`)."""
    write_atomically(path, lambda stream: _write_csv(frame, stream))


def _write_csv(frame: pd.DataFrame, binary_stream) -> None:
    stream = io.TextIOWrapper(binary_stream, encoding="utf-8", newline="")
    frame.to_csv(stream, index=False, float_format=FLOAT_FORMAT)
    stream.flush()
    stream.detach()  # leave the binary stream open for its owner
