"""The real datasets of the PLAN binary experiments (DESIGN.md 7): Kosarak and BMS-POS.

Three steps, each usable on its own (the workflow runs them as rules):

- :func:`fetch` obtains the raw file: a local path, a cached download, or a download with
  timeouts, retries, streaming to a temporary file and an atomic rename; the file's sha256 is
  recorded beside it. Anything that prevents it raises :class:`DatasetUnavailable`, whose
  message says how to supply the file by hand.
- :func:`parse` reads a raw file into a binary CSR matrix and its statistics, the way the
  paper's authors read it (DESIGN.md 7).
- :func:`process` parses, checks the statistics against the expected ones and caches the
  matrix (``<name>.npz``) with its statistics (``<name>.json``); :func:`load` reads them back.

Paths are relative to the working directory (the workflow runs from the repository root).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import re
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse

RAW_DIR = Path("datasets/raw")
PROCESSED_DIR = Path("datasets/processed")

STATISTICS = ("n", "d", "tokens", "occurrences")
EXPECT_KEYS = STATISTICS + ("git_blob",)
DEFAULT_MIN_ITEMS = 20  # Kosarak: ann-benchmarks' kosarak-jaccard keeps lines with >= 20 ids

log = logging.getLogger("datasets.real")


@dataclass(frozen=True)
class RealDataset:
    """A dataset the workflow knows how to fetch and parse."""

    name: str
    filename: str
    url: str  # canonical source
    gzipped: bool
    description: str  # one line, for messages and the report


REAL_DATASETS: dict[str, RealDataset] = {
    "kosarak": RealDataset(
        name="kosarak",
        filename="kosarak.dat.gz",
        url="http://fimi.uantwerpen.be/data/kosarak.dat.gz",
        gzipped=True,
        description="Kosarak: click-stream sessions of a Hungarian news portal (FIMI repository)",
    ),
    "pos": RealDataset(
        name="pos",
        filename="BMS-POS.csv",
        url="https://raw.githubusercontent.com/cpearce/HARM/master/datasets/BMS-POS.csv",
        gzipped=False,
        description="BMS-POS: point-of-sale transactions of an electronics retailer (HARM repository)",
    ),
}


class DatasetError(ValueError):
    """Any problem with a real dataset; the message alone says what and what to do."""


class DatasetUnavailable(DatasetError):
    """The raw file could not be obtained (offline, dead URL, HTTP error, corrupt download).

    ``dataset``: its name; ``url``: the URL it would be (or was) downloaded from; ``source``:
    what failed (that URL, or a local path); ``reason``: short; ``how_to_supply``: what the
    user can do instead.
    """

    def __init__(self, *, dataset: str, url: str, reason: str, how_to_supply: str, source: str | None = None):
        self.dataset = dataset
        self.url = url
        self.source = url if source is None else source
        self.reason = reason
        self.how_to_supply = how_to_supply
        super().__init__(
            f"could not obtain dataset {dataset!r} from {self.source}: {reason}. To supply it: {how_to_supply}."
        )

    def __reduce__(self):  # keyword-only __init__: pickling (multiprocessing) needs this
        return (_rebuild_unavailable, (self.dataset, self.url, self.reason, self.how_to_supply, self.source))


def _rebuild_unavailable(dataset, url, reason, how_to_supply, source):
    return DatasetUnavailable(dataset=dataset, url=url, reason=reason, how_to_supply=how_to_supply, source=source)


# --------------------------------------------------------------------------------------------
# fetch

_CHUNK = 1 << 20
_PROGRESS_EVERY_S = 10.0


def fetch(
    name: str,
    *,
    url: str | None = None,
    path: str | os.PathLike | None = None,
    raw_dir: str | os.PathLike = RAW_DIR,
    timeout: tuple[float, float] = (5.0, 60.0),
    retries: int = 3,
    backoff: float = 0.5,
    session=None,
) -> Path:
    """The raw file of dataset ``name``, obtained in this order:

    1. ``path`` given: that file, validated (readable, not an HTML page, a complete gzip for a
       gzipped dataset) but not copied.
    2. ``raw_dir/<filename>`` present: used without any request. Its ``.sha256`` file, when it
       matches, spares the validation; a file without one (placed by hand), or whose content
       changed since, is validated and its hash (re)recorded. An existing file is never
       overwritten: one that fails validation raises, saying to delete it.
    3. Otherwise ``url`` (default: the canonical one) is downloaded with ``requests``
       (``timeout = (connect, read)`` seconds), retried up to ``retries`` times after
       ``backoff * 2**attempt`` seconds on connection errors, timeouts, HTTP 5xx/429 and short
       reads (not on other HTTP errors, HTML pages or corrupt files), streamed into a temporary
       file in ``raw_dir`` and renamed into place only once complete and valid; then
       ``<filename>.sha256`` is written ("<hex>  <filename>", as sha256sum).

    Raises :class:`DatasetUnavailable` (naming the source, the reason and how to supply the
    file by hand) when none of these works; nothing partial is left in ``raw_dir``.
    """
    dataset = _dataset(name)
    url = dataset.url if url is None else str(url)
    raw_dir = Path(raw_dir)
    _check_retry_arguments(timeout=timeout, retries=retries, backoff=backoff)
    target = raw_dir / dataset.filename

    def unavailable(reason: str, source: str | None = None) -> DatasetUnavailable:
        how = (
            f"put it at {target} (or any path and set datasets.{dataset.name}.path in the config),"
            f" or set datasets.{dataset.name}.url to a mirror"
        )
        return DatasetUnavailable(dataset=dataset.name, url=url, reason=reason, how_to_supply=how, source=source)

    if path is not None:
        path = Path(path)
        problem = _validate_file(path, dataset)
        if problem:
            raise unavailable(problem, source=str(path))
        log.info("%s: using the local file %s (no download)", dataset.name, path)
        return path

    if target.exists():
        recorded = _read_recorded_hash(target)
        try:
            digest = _sha256_file(target)
        except OSError as exc:
            problem = f"{target} exists but cannot be read ({exc.strerror or exc})"
            raise unavailable(problem, source=str(target)) from None
        if recorded == digest:
            log.info("%s: using the cached %s (sha256 %s)", dataset.name, target, digest)
            return target
        if recorded is not None:
            log.warning("%s: %s changed since its hash was recorded; checking it again", dataset.name, target)
        problem = _validate_file(target, dataset)
        if problem:
            raise unavailable(f"{target} exists but is not usable ({problem}); delete it to download it again",
                              source=str(target))
        try:
            _write_hash_file(target, digest)
        except OSError as exc:  # a read-only directory: the file is still usable
            log.warning("%s: could not record the sha256 of %s (%s)", dataset.name, target, exc)
        log.info("%s: using %s, placed by hand (sha256 %s)", dataset.name, target, digest)
        return target

    try:
        raw_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise unavailable(f"cannot create {raw_dir} ({exc.strerror or exc})") from None
    _download(dataset, url=url, target=target, timeout=timeout, retries=retries, backoff=backoff,
              session=session, unavailable=unavailable)
    return target


class _Attempt(Exception):
    """A failed download attempt: ``reason`` for the message; ``retry`` if it may be transient."""

    def __init__(self, reason: str, *, retry: bool):
        super().__init__(reason)
        self.reason = reason
        self.retry = retry


def _download(dataset, *, url, target, timeout, retries, backoff, session, unavailable) -> None:
    import requests  # here, not at module level: importing datasets should stay cheap

    own_session = session is None
    if own_session:
        session = requests.Session()
    try:
        for attempt in range(retries + 1):
            try:
                digest = _download_once(dataset, url=url, target=target, timeout=timeout, session=session)
            except _Attempt as failure:
                if not failure.retry or attempt == retries:
                    tries = f" (after {attempt + 1} attempts)" if attempt else ""
                    raise unavailable(failure.reason + tries) from None
                wait = backoff * 2**attempt
                log.warning("%s: attempt %d of %d failed (%s); retrying in %.1f s",
                            dataset.name, attempt + 1, retries + 1, failure.reason, wait)
                time.sleep(wait)
            else:
                break
    finally:
        if own_session:
            session.close()
    # The data file is in place before its hash: a crash in between leaves a file without a
    # .sha256, which the next fetch validates and hashes like a file placed by hand.
    try:
        _write_hash_file(target, digest)
    except OSError as exc:
        log.warning("%s: could not record the sha256 of %s (%s)", dataset.name, target, exc)


def _download_once(dataset, *, url, target, timeout, session) -> str:
    """One attempt: the file in place at ``target`` and its sha256, or :class:`_Attempt`."""
    import requests
    import urllib3

    start = time.monotonic()
    log.info("%s: downloading %s", dataset.name, url)
    # identity: the byte count must be comparable with Content-Length, and a .csv must not
    # arrive compressed.
    try:
        response = session.get(url, stream=True, timeout=timeout, headers={"Accept-Encoding": "identity"})
    except requests.ConnectTimeout:
        raise _Attempt(f"timed out connecting (connect timeout {timeout[0]:g} s)", retry=True) from None
    except requests.Timeout:
        raise _Attempt(f"timed out waiting for the response (read timeout {timeout[1]:g} s)", retry=True) from None
    except requests.ConnectionError as exc:
        raise _Attempt(f"could not connect ({_os_reason(exc)})", retry=True) from None
    except requests.RequestException as exc:  # an invalid URL, too many redirects, ...
        raise _Attempt(f"request failed ({_os_reason(exc)})", retry=False) from None

    fd = name = None
    try:
        with response:
            status = response.status_code
            if status >= 400:
                reason = f"HTTP {status} {response.reason or ''}".rstrip()
                raise _Attempt(reason, retry=status >= 500 or status == 429)
            if "text/html" in response.headers.get("Content-Type", "").lower():
                raise _Attempt("received an HTML page instead of data", retry=False)
            expected = _content_length(response.headers)
            encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
            if dataset.gzipped and encoding in ("gzip", "x-gzip"):
                # Servers that label a .gz file as gzip-encoded: keep the bytes as sent (the file).
                chunks, encoding = response.raw.stream(_CHUNK, decode_content=False), "identity"
            else:
                chunks = response.iter_content(_CHUNK)
            if expected is not None:
                log.info("%s: %.1f MB to download", dataset.name, expected / 1e6)

            try:
                fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
            except OSError as exc:
                raise _Attempt(f"cannot write to {target.parent} ({exc.strerror or exc})", retry=False) from None
            digest = hashlib.sha256()
            received = 0
            head = b""
            last_report = start
            with os.fdopen(fd, "wb") as out:
                fd = None  # owned by `out` now
                try:
                    for chunk in chunks:
                        _write_chunk(out, chunk, target)
                        digest.update(chunk)
                        received += len(chunk)
                        if len(head) < 1024:
                            head += chunk[:1024]
                        now = time.monotonic()
                        if now - last_report >= _PROGRESS_EVERY_S:
                            last_report = now
                            total = f" of {expected / 1e6:.1f}" if expected is not None else ""
                            log.info("%s: %.1f%s MB (%.2f MB/s)", dataset.name, received / 1e6, total,
                                     received / 1e6 / (now - start))
                except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                    # A short read fails inside urllib3's read of a whole chunk: count what it got.
                    received = max(received, _bytes_read(response))
                    if _timed_out(exc):
                        raise _Attempt(f"timed out after {received} bytes (read timeout {timeout[1]:g} s)",
                                       retry=True) from None
                    if expected is not None:
                        raise _Attempt(f"truncated: got {received} of {expected} bytes", retry=True) from None
                    raise _Attempt(f"connection broken after {received} bytes ({_os_reason(exc)})",
                                   retry=True) from None
                _write_chunk(out, b"", target, sync=True)  # flush and fsync before the rename

        if expected is not None and encoding == "identity" and received != expected:
            raise _Attempt(f"truncated: got {received} of {expected} bytes", retry=received < expected)
        if received == 0:
            raise _Attempt("received an empty file", retry=False)
        if _looks_like_html(head):
            raise _Attempt("received an HTML page instead of data", retry=False)
        if dataset.gzipped:
            problem = _gzip_problem(Path(name))
            if problem:
                raise _Attempt(problem, retry=False)
        try:
            os.replace(name, target)
        except OSError as exc:
            raise _Attempt(f"cannot write {target} ({exc.strerror or exc})", retry=False) from None
        name = None
    finally:
        if fd is not None:
            os.close(fd)
        if name is not None:
            _remove_quietly(Path(name))

    seconds = max(time.monotonic() - start, 1e-9)
    log.info("%s: downloaded %.1f MB in %.1f s (%.2f MB/s) to %s", dataset.name, received / 1e6, seconds,
             received / 1e6 / seconds, target)
    return digest.hexdigest()


def _write_chunk(out, chunk: bytes, target: Path, *, sync: bool = False) -> None:
    """Write to the temporary file; a local failure (disk full) is not worth retrying."""
    try:
        out.write(chunk)
        if sync:
            out.flush()
            os.fsync(out.fileno())
    except OSError as exc:
        raise _Attempt(f"cannot write to {target.parent} ({exc.strerror or exc})", retry=False) from None


def _bytes_read(response) -> int:
    """The body bytes urllib3 read from the socket so far (0 if it cannot tell)."""
    try:
        return int(response.raw.tell())
    except (AttributeError, TypeError, ValueError, OSError):
        return 0


def _content_length(headers) -> int | None:
    try:
        value = int(headers["Content-Length"])
    except (KeyError, ValueError):
        return None
    return value if value >= 0 else None


def _chain(exc: BaseException):
    """``exc`` and the exceptions it wraps: requests and urllib3 nest them in args, reason,
    __cause__ and __context__."""
    seen = set()
    stack = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        stack.extend(a for a in getattr(current, "args", ()) if isinstance(a, BaseException))
        stack.extend(e for e in (current.__cause__, current.__context__, getattr(current, "reason", None))
                     if isinstance(e, BaseException))


def _timed_out(exc: BaseException) -> bool:
    import requests
    import urllib3

    timeouts = (requests.Timeout, urllib3.exceptions.TimeoutError, TimeoutError)
    return any(isinstance(e, timeouts) for e in _chain(exc))


def _os_reason(exc: BaseException) -> str:
    """The operating system's words for a connection failure ("Name or service not known",
    "Connection refused"), found in the exception chain, else a shortened message."""
    for current in _chain(exc):
        if isinstance(current, OSError) and current.strerror:
            return current.strerror
    text = str(exc)
    match = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", text)
    if match:
        return match.group(1).strip()
    return (text[:150] + "...") if len(text) > 150 else (text or type(exc).__name__)


def _validate_file(path: Path, dataset: RealDataset) -> str | None:
    """Why a local raw file cannot be used, or None."""
    if not path.is_file():
        return "no such file" if not path.exists() else "not a regular file"
    try:
        with open(path, "rb") as f:
            head = f.read(1024)
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"
    if not head:
        return "empty file"
    if _looks_like_html(head):
        return "an HTML page, not data"
    if dataset.gzipped:
        return _gzip_problem(path)
    return None


def _looks_like_html(head: bytes) -> bool:
    start = head.lstrip()[:9].lower()
    return start.startswith(b"<!doctype") or start.startswith(b"<html")


def _gzip_problem(path: Path) -> str | None:
    """Decompress the whole file (discarding the output): a truncated or damaged gzip fails."""
    try:
        with gzip.open(path, "rb") as f:
            while f.read(16 * _CHUNK):
                pass
    except (gzip.BadGzipFile, EOFError, zlib.error):
        return "corrupt gzip file"
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"
    return None


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(4 * _CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _hash_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _read_recorded_hash(target: Path) -> str | None:
    try:
        fields = _hash_path(target).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    return fields[0].lower() if fields else None


def _write_hash_file(target: Path, digest: str) -> None:
    _write_atomic(_hash_path(target), f"{digest}  {target.name}\n".encode("ascii"))


def _write_atomic(path: Path, content: bytes) -> None:
    """Write via a temporary file in the same directory and a rename: all or nothing."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(name, path)
    except BaseException:
        _remove_quietly(Path(name))
        raise


def _remove_quietly(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _check_retry_arguments(*, timeout, retries, backoff) -> None:
    try:
        connect, read = timeout
        ok = all(isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0 for t in (connect, read))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise DatasetError(f"timeout must be (connect, read) seconds, both > 0, got timeout={timeout!r}")
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise DatasetError(f"retries must be an integer >= 0, got retries={retries!r}")
    if not isinstance(backoff, (int, float)) or isinstance(backoff, bool) or not backoff >= 0:
        raise DatasetError(f"backoff must be >= 0 seconds, got backoff={backoff!r}")


def _dataset(name: str) -> RealDataset:
    try:
        return REAL_DATASETS[name]
    except (KeyError, TypeError):
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(REAL_DATASETS)}") from None


# --------------------------------------------------------------------------------------------
# parse
#
# Both parsers work on the whole decompressed file as one uint8 array: classify every byte
# with a lookup table, find the token boundaries and the line ends with flatnonzero, read the
# digits column by column (a token has at most 18), re-number the items through a presence
# table, and sort one int64 key per (row, item) pair to order and de-duplicate each row. No
# Python loop runs per line or per token.

_BAD, _DIGIT, _SEPARATOR, _NEWLINE = 0, 1, 2, 3
_MAX_DIGITS = 18  # any 18-digit number fits in int64


def _byte_classes(separators: bytes) -> np.ndarray:
    table = np.full(256, _BAD, dtype=np.uint8)
    table[ord("0"):ord("9") + 1] = _DIGIT
    table[list(separators)] = _SEPARATOR
    table[ord("\n")] = _NEWLINE
    return table


# Kosarak is read as the authors' source read it, line.split() on bytes: ASCII whitespace.
_KOSARAK_CLASSES = _byte_classes(b" \t\r\x0b\x0c")
# POS: commas separate the fields; "\r" is allowed only in a "\r\n" line end (checked apart).
_POS_CLASSES = _byte_classes(b",")
_POS_CLASSES[ord("\r")] = _SEPARATOR


def parse(name: str, raw_path: str | os.PathLike, *, min_items: int | None = None
          ) -> tuple[scipy.sparse.csr_matrix, dict]:
    """:func:`parse_kosarak` or :func:`parse_pos` by dataset name. ``min_items`` applies to
    Kosarak only (None: its default, 20); giving it for POS is an error."""
    dataset = _dataset(name)
    if dataset.name == "kosarak":
        return parse_kosarak(raw_path, min_items=DEFAULT_MIN_ITEMS if min_items is None else min_items)
    if min_items is not None:
        raise DatasetError(f"min_items applies to kosarak only, got min_items={min_items!r} for {name!r}")
    return parse_pos(raw_path)


def parse_kosarak(raw_path: str | os.PathLike, *, min_items: int = DEFAULT_MIN_ITEMS
                  ) -> tuple[scipy.sparse.csr_matrix, dict]:
    """Kosarak as the PLAN paper used it (DESIGN.md 7): the gzipped FIMI file, one session per
    line of item ids separated by whitespace; keep the lines with at least ``min_items`` ids,
    duplicates counted (``len(line.split()) >= min_items``, ann-benchmarks' kosarak-jaccard
    filter); one binary row per kept line (an id repeated in a line is one 1); the items that
    occur in the kept rows re-numbered 0..D-1 in increasing order of their ids.

    A line is what ends with "\\n" (a last line without one counts too); lines with too few
    ids, empty ones included, are dropped. Every byte must be a digit, whitespace or a line
    end (a bad one anywhere raises, naming its line and token).

    Returns the CSR matrix (float64 ones, sorted int32 indices, canonical) and the statistics
    ``n`` (rows kept), ``d`` (distinct items), ``tokens`` (ids read in the kept rows,
    duplicates counted), ``occurrences`` (nonzeros), ``sha256`` and ``source_file``.
    """
    if not isinstance(min_items, int) or isinstance(min_items, bool) or min_items < 1:
        raise DatasetError(f"min_items must be an integer >= 1, got min_items={min_items!r}")
    raw_path = Path(raw_path)
    raw, text = _read(raw_path, gzipped=True)
    b = np.frombuffer(text, dtype=np.uint8)
    classes = _KOSARAK_CLASSES[b]
    _check_bytes(classes, text, raw_path, separators=b" \t\r\x0b\x0c\n")
    newlines = np.flatnonzero(classes == _NEWLINE)
    starts, ends = _runs(classes == _DIGIT)
    lengths = ends - starts
    _check_lengths(lengths, starts, text, raw_path, separators=b" \t\r\x0b\x0c\n")
    line_of = np.searchsorted(newlines, starts)  # 0-based line of each token
    per_line = np.bincount(line_of, minlength=_line_count(b, newlines))
    kept_lines = per_line >= min_items
    if not kept_lines.any():
        raise DatasetError(f"{raw_path}: no line has at least {min_items} item ids (min_items={min_items})")
    kept = kept_lines[line_of]
    row_number = np.cumsum(kept_lines) - 1  # a kept line's row
    rows = row_number[line_of[kept]]
    values = _read_integers(b, starts[kept], lengths[kept])
    matrix = _binary_csr(rows, values, n=int(np.count_nonzero(kept_lines)))
    statistics = _statistics(matrix, tokens=values.size, raw=raw, raw_path=raw_path)
    log.info("kosarak: kept %d of %d lines (at least %d ids); %d items, %d ids, %d nonzeros",
             statistics["n"], per_line.size, min_items, statistics["d"], statistics["tokens"],
             statistics["occurrences"])
    return matrix, statistics


def parse_pos(raw_path: str | os.PathLike) -> tuple[scipy.sparse.csr_matrix, dict]:
    """BMS-POS as the PLAN paper's authors read it (DESIGN.md 7): one transaction per line,
    read as ``line.split(",")[:-1]``, i.e. the comma-separated item ids with the last field
    dropped (empty when the line ends with a comma, as in BMS-POS; a line that does not end
    with a comma loses its last id, which is logged); items re-numbered 0..D-1 in increasing
    order of their ids.

    Every line is a row, an empty one too (a row of zeros, as the authors' reading gives);
    a final "\\n" does not start another row. A line may end with "\\r\\n". Every byte must be
    a digit, a comma or a line end, and every kept field a non-empty id (a bad one raises,
    naming its line and token).

    Returns the CSR matrix (float64 ones, sorted int32 indices, canonical) and the statistics
    ``n``, ``d``, ``tokens`` (ids read, duplicates counted), ``occurrences`` (nonzeros),
    ``sha256``, ``git_blob`` (``git hash-object`` of the file) and ``source_file``.
    """
    raw_path = Path(raw_path)
    raw, text = _read(raw_path, gzipped=False)
    b = np.frombuffer(text, dtype=np.uint8)
    classes = _POS_CLASSES[b]
    _check_bytes(classes, text, raw_path, separators=b",\n")
    returns = np.flatnonzero(b == ord("\r"))
    lone = returns[(returns + 1 >= b.size) | (b[np.minimum(returns + 1, b.size - 1)] != ord("\n"))]
    if lone.size:
        _raise_token(text, int(lone[0]), raw_path, "contains a carriage return that does not end the line",
                     separators=b",\n")
    newlines = np.flatnonzero(classes == _NEWLINE)
    n = _line_count(b, newlines)
    if n == 0:
        raise DatasetError(f"{raw_path}: the file has no lines")
    # Every field ends at a comma or a line end; the fields ending at a comma are exactly
    # line.split(",")[:-1] (the field after a line's last comma is the dropped one).
    separators = np.flatnonzero((b == ord(",")) | (classes == _NEWLINE))
    field_starts = np.empty_like(separators)
    field_starts[:1] = 0
    field_starts[1:] = separators[:-1] + 1
    at_comma = b[separators] == ord(",")
    starts, ends = field_starts[at_comma], separators[at_comma]
    lengths = ends - starts
    if lengths.size and lengths.min() == 0:
        _raise_token(text, int(starts[np.argmin(lengths)]), raw_path, "has an empty item id (two commas in a row,"
                     " or a comma first)", separators=b"\n")
    _check_lengths(lengths, starts, text, raw_path, separators=b",\n")
    if not lengths.size:
        raise DatasetError(f"{raw_path}: no line has an item id followed by a comma (each line is read as"
                           " line.split(',')[:-1])")
    rows = np.searchsorted(newlines, ends)
    values = _read_integers(b, starts, lengths)
    _log_dropped_fields(b, newlines, field_starts, separators, at_comma, raw_path)
    matrix = _binary_csr(rows, values, n=n)
    statistics = _statistics(matrix, tokens=values.size, raw=raw, raw_path=raw_path)
    blob = hashlib.sha1(b"blob %d\0" % len(raw))  # what `git hash-object` hashes
    blob.update(raw)
    statistics["git_blob"] = blob.hexdigest()
    empty = n - int(np.count_nonzero(np.diff(matrix.indptr)))
    log.info("pos: %d rows (%d empty), %d items, %d ids, %d nonzeros", n, empty, statistics["d"],
             statistics["tokens"], statistics["occurrences"])
    return matrix, statistics


def _read(raw_path: Path, *, gzipped: bool) -> tuple[bytes, bytes]:
    """The file's bytes and its text (decompressed for a gzipped file)."""
    try:
        raw = raw_path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read {raw_path} ({exc.strerror or exc})") from None
    if not gzipped:
        return raw, raw
    try:
        return raw, gzip.decompress(raw)
    except (gzip.BadGzipFile, EOFError, zlib.error):
        raise DatasetError(f"{raw_path} is a corrupt gzip file; delete it and fetch it again") from None


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) of every run of True in ``mask``."""
    edges = np.diff(mask.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


def _line_count(b: np.ndarray, newlines: np.ndarray) -> int:
    """Lines end with "\\n"; a last line without one counts too, a final "\\n" starts none."""
    return int(newlines.size + (b.size > 0 and b[-1] != ord("\n")))


def _read_integers(b: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The integers written in decimal at b[starts[i]:starts[i] + lengths[i]] (all digits),
    read one digit position at a time over all tokens."""
    if not starts.size:
        return np.zeros(0, dtype=np.int64)
    values = (b[starts] - ord("0")).astype(np.int64)  # every token has a first digit
    for position in range(1, int(lengths.max())):
        longer = np.flatnonzero(lengths > position)
        values[longer] = values[longer] * 10 + (b[starts[longer] + position] - ord("0"))
    return values


def _binary_csr(rows: np.ndarray, values: np.ndarray, *, n: int) -> scipy.sparse.csr_matrix:
    """The n-row binary matrix with a 1 at (rows[k], item k) for every token k, items
    re-numbered 0..D-1 in increasing order of their ids; rows must be non-decreasing."""
    top = int(values.max())
    if top <= 4 * values.size + (1 << 20):  # a presence table is cheaper than sorting
        present = np.zeros(top + 1, dtype=bool)
        present[values] = True
        new_id = np.cumsum(present, dtype=np.int64) - 1
        columns = new_id[values]
        d = int(new_id[-1]) + 1
    else:
        unique, columns = np.unique(values, return_inverse=True)
        d = unique.size
    # One key per (row, item): sorting it orders every row's items (rows are non-decreasing),
    # and equal neighbours are a repeated id in a row, kept once.
    keys = rows.astype(np.int64) * d + columns
    keys.sort()
    distinct = np.empty(keys.size, dtype=bool)
    distinct[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=distinct[1:])
    keys = keys[distinct]
    key_rows, key_columns = np.divmod(keys, d)
    index_dtype = np.int32 if max(keys.size, d) < np.iinfo(np.int32).max else np.int64
    indptr = np.zeros(n + 1, dtype=index_dtype)
    np.cumsum(np.bincount(key_rows, minlength=n), out=indptr[1:])
    matrix = scipy.sparse.csr_matrix(
        (np.ones(keys.size), key_columns.astype(index_dtype), indptr), shape=(n, d), copy=False
    )
    matrix.has_sorted_indices = True
    matrix.has_canonical_format = True
    return matrix


def _statistics(matrix, *, tokens: int, raw: bytes, raw_path: Path) -> dict:
    n, d = matrix.shape
    return {
        "n": int(n),
        "d": int(d),
        "tokens": int(tokens),
        "occurrences": int(matrix.nnz),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "source_file": raw_path.name,
    }


def _check_bytes(classes: np.ndarray, text: bytes, raw_path: Path, *, separators: bytes) -> None:
    bad = np.flatnonzero(classes == _BAD)
    if bad.size:
        _raise_token(text, int(bad[0]), raw_path, "is not a non-negative integer item id", separators=separators)


def _check_lengths(lengths, starts, text, raw_path, *, separators: bytes) -> None:
    if lengths.size and lengths.max() > _MAX_DIGITS:
        at = int(starts[np.argmax(lengths)])
        _raise_token(text, at, raw_path, f"is too long for an item id (more than {_MAX_DIGITS} digits)",
                     separators=separators)


def _raise_token(text: bytes, at: int, raw_path: Path, problem: str, *, separators: bytes) -> None:
    """Raise a DatasetError naming the line and the token that holds byte ``at``."""
    line = text.count(b"\n", 0, at) + 1
    left = at
    while left > 0 and at - left < 60 and text[left - 1] not in separators:
        left -= 1
    right = at
    while right < len(text) and right - at < 60 and text[right] not in separators:
        right += 1
    token = text[left:right].decode("utf-8", errors="replace")
    raise DatasetError(f"{raw_path}, line {line}: {token!r} {problem}")


def _log_dropped_fields(b, newlines, field_starts, separators, at_comma, raw_path) -> None:
    """Log how many lines lose an id to the authors' reading (their last field not empty)."""
    last_starts = field_starts[~at_comma]  # fields ending at a "\n"
    last_ends = separators[~at_comma]
    last_ends = last_ends - (b[np.maximum(last_ends - 1, 0)] == ord("\r"))  # "\r\n" ends a line too
    dropped = int(np.count_nonzero(last_ends > last_starts))
    final_start = int(separators[-1]) + 1 if separators.size else 0
    dropped += final_start < b.size  # a last line without "\n" whose last field is not empty
    if dropped:
        log.warning("%s: %d lines do not end with a comma; their last item id is dropped, as in the authors'"
                    " reading line.split(',')[:-1]", raw_path.name, dropped)


# --------------------------------------------------------------------------------------------
# process and load


def process(
    name: str,
    raw_path: str | os.PathLike,
    *,
    processed_dir: str | os.PathLike = PROCESSED_DIR,
    min_items: int | None = None,
    expect: dict | None = None,
) -> dict:
    """Parse dataset ``name`` from ``raw_path``, check its statistics against ``expect``, and
    cache it as ``processed_dir/<name>.npz`` (the CSR matrix) and ``<name>.json`` (its
    statistics, ``min_items`` for Kosarak and the ``expect`` checked).

    ``expect``: any of n, d, tokens, occurrences, git_blob (POS only) with the values the
    paper's figures used (DESIGN.md 7); None checks nothing (logged as a warning). A mismatch
    raises one :class:`DatasetError` naming every expected and found value, the file's sha256
    and how to override, and writes nothing. Both files are written atomically, the JSON last,
    so its presence means the matrix is complete. Returns the JSON's content.
    """
    dataset = _dataset(name)
    expect = _check_expect(expect, dataset)
    if dataset.name == "kosarak" and min_items is None:
        min_items = DEFAULT_MIN_ITEMS
    matrix, statistics = parse(dataset.name, raw_path, min_items=min_items)
    if expect is None:
        log.warning("%s: no expected statistics given, so nothing about %s is verified", dataset.name, raw_path)
    else:
        _verify(dataset, statistics, expect, raw_path)
    record = {"name": dataset.name, **statistics}
    if dataset.name == "kosarak":
        record["min_items"] = min_items
    record["expect"] = expect

    processed_dir = Path(processed_dir)
    processed_dir.mkdir(parents=True, exist_ok=True)
    npz_path, json_path = _processed_paths(dataset.name, processed_dir)
    _remove_quietly(json_path)  # the old statistics must not describe the new matrix, even briefly
    fd, temporary = tempfile.mkstemp(dir=processed_dir, prefix=f".{npz_path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            scipy.sparse.save_npz(out, matrix, compressed=False)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, npz_path)
    except BaseException:
        _remove_quietly(Path(temporary))
        raise
    _write_atomic(json_path, (json.dumps(record, indent=2) + "\n").encode("utf-8"))
    log.info("%s: wrote %s and %s", dataset.name, npz_path, json_path)
    return record


def load(name: str, *, processed_dir: str | os.PathLike = PROCESSED_DIR) -> tuple[scipy.sparse.csr_matrix, dict]:
    """The matrix and statistics that :func:`process` cached for dataset ``name``."""
    dataset = _dataset(name)
    npz_path, json_path = _processed_paths(dataset.name, Path(processed_dir))

    def broken(problem: str) -> DatasetError:
        return DatasetError(f"processed dataset {dataset.name!r} {problem}; rerun the workflow's parse step"
                            f" (snakemake datasets/processed/{dataset.name}.npz)")

    try:
        record = json.loads(json_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise broken(f"is missing ({json_path} not found)") from None
    except (OSError, ValueError) as exc:
        raise broken(f"has an unreadable {json_path} ({exc})") from None
    try:
        matrix = scipy.sparse.load_npz(npz_path)
    except FileNotFoundError:
        raise broken(f"is missing ({npz_path} not found)") from None
    except Exception as exc:  # numpy/zipfile raise many kinds for a damaged file
        raise broken(f"has an unreadable {npz_path} ({type(exc).__name__}: {exc})") from None
    if not isinstance(record, dict) or not isinstance(matrix, scipy.sparse.csr_matrix):
        raise broken(f"is not what the parse step writes ({json_path}, {npz_path})")
    found = {"n": matrix.shape[0], "d": matrix.shape[1], "occurrences": matrix.nnz}
    wrong = [f"{key} {record.get(key)!r} in the JSON, {value} in the matrix" for key, value in found.items()
             if record.get(key) != value]
    if wrong:
        raise broken(f"is inconsistent ({'; '.join(wrong)})")
    return matrix, record


def _processed_paths(name: str, processed_dir: Path) -> tuple[Path, Path]:
    return processed_dir / f"{name}.npz", processed_dir / f"{name}.json"


def _check_expect(expect, dataset: RealDataset) -> dict | None:
    if expect is None:
        return None
    if not isinstance(expect, dict):
        raise DatasetError(f"expect for {dataset.name} must be a mapping of statistics, got {expect!r}")
    unknown = sorted(str(key) for key in expect if key not in EXPECT_KEYS)
    if unknown:
        raise DatasetError(f"unknown key(s) in expect for {dataset.name}: {', '.join(unknown)};"
                           f" known: {', '.join(EXPECT_KEYS)}")
    checked = {}
    for key in EXPECT_KEYS:  # a fixed order, for the message and the JSON
        if key not in expect:
            continue
        value = expect[key]
        if key == "git_blob":
            if dataset.name != "pos":
                raise DatasetError(f"expect key git_blob applies to pos only, got it for {dataset.name}")
            if not isinstance(value, str) or not re.fullmatch(r"[0-9a-fA-F]{40}", value):
                raise DatasetError(f"expect git_blob for {dataset.name} must be 40 hex digits, got {value!r}")
            value = value.lower()
        elif not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise DatasetError(f"expect {key} for {dataset.name} must be an integer >= 0, got {value!r}")
        checked[key] = value
    return checked


def _verify(dataset: RealDataset, statistics: dict, expect: dict, raw_path) -> None:
    mismatched = [key for key in expect if statistics[key] != expect[key]]
    if not mismatched:
        log.info("%s: statistics as expected (%s)", dataset.name,
                 ", ".join(f"{key} = {value}" for key, value in expect.items()))
        return
    lines = ", ".join(
        f"{key} expected {expect[key]} found {statistics[key]}" + (" (MISMATCH)" if key in mismatched else "")
        for key in expect
    )
    found = ", ".join(f"{key}: {statistics[key]}" for key in expect)
    raise DatasetError(
        f"{dataset.name}: the statistics of {raw_path} (sha256 {statistics['sha256']}) differ from the expected"
        f" ones: {lines}. If this file is the one you want, set datasets.{dataset.name}.expect to the found values"
        f" ({{{found}}}) (or null to skip the check) in your config."
    )
