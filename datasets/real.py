"""The real datasets of the PLAN binary experiments (DESIGN.md 7): Kosarak and BMS-POS.

Four steps, each usable on its own (the workflow runs them as rules):

- :func:`fetch` obtains one raw file: a local path, a cached download, or a download with
  timeouts, retries, streaming to a temporary file and an atomic rename; the file's sha256 is
  recorded beside it. Anything that prevents it raises :class:`DatasetUnavailable`, whose
  message says how to supply the file by hand.
- :func:`obtain` tries a dataset's list of sources in order (:class:`Source`: a URL or a local
  path, and the file's format) and returns the first file whose parse passes the expected
  statistics; when none does, one :class:`DatasetUnavailable` names every source and why it
  failed.
- :func:`parse` reads a raw file of any of the dataset's formats into a binary CSR matrix and its
  statistics, the way the paper's authors read it (DESIGN.md 7), its rows in a canonical order
  (so every source of the same sessions gives the same bytes).
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
from collections.abc import Mapping
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
class RawFormat:
    """A file format a dataset's raw file can come in."""

    name: str  # the config's `format`
    filename: str  # a download in this format is cached as raw_dir/<filename>
    container: str  # what a file must be before parsing: "gzip", "hdf5" or "text"


@dataclass(frozen=True)
class Source:
    """One place to obtain a dataset's raw file from: a URL to download, or a local path
    (exactly one of the two), with the file's format."""

    format: str
    url: str | None = None
    path: str | None = None

    @property
    def location(self) -> str:
        return self.url if self.url is not None else self.path

    def as_dict(self) -> dict:
        """As the config writes it: {url: ..., format: ...} or {path: ..., format: ...}."""
        if self.url is not None:
            return {"url": self.url, "format": self.format}
        return {"path": self.path, "format": self.format}


@dataclass(frozen=True)
class RealDataset:
    """A dataset the workflow knows how to fetch and parse."""

    name: str
    description: str  # one line, for messages and the report
    formats: tuple[RawFormat, ...]  # the formats it can be read from; the first is its native one
    sources: tuple[Source, ...]  # the default sources, tried in order

    def raw_format(self, name: str | None = None) -> RawFormat:
        """The format called ``name`` (None: the native one); an unknown name raises."""
        if name is None:
            return self.formats[0]
        for raw_format in self.formats:
            if raw_format.name == name:
                return raw_format
        raise DatasetError(f"unknown format {name!r} for dataset {self.name}; known: "
                           f"{', '.join(f.name for f in self.formats)}")


FIMI_KOSARAK_URL = "http://fimi.uantwerpen.be/data/kosarak.dat.gz"
# The file the PLAN authors' script loads: ann-benchmarks' Jaccard benchmark built from the FIMI file.
ANN_BENCHMARKS_KOSARAK_URL = "http://ann-benchmarks.com/kosarak-jaccard.hdf5"
HARM_POS_URL = "https://raw.githubusercontent.com/cpearce/HARM/master/datasets/BMS-POS.csv"

REAL_DATASETS: dict[str, RealDataset] = {
    "kosarak": RealDataset(
        name="kosarak",
        description="Kosarak: click-stream sessions of a Hungarian news portal (FIMI repository)",
        formats=(
            # FIMI's kosarak.dat.gz: gzipped text, one session of item ids per line (parse_kosarak)
            RawFormat(name="fimi", filename="kosarak.dat.gz", container="gzip"),
            # ann-benchmarks' kosarak-jaccard.hdf5: the sessions as flat arrays (parse_ann_benchmarks_hdf5)
            RawFormat(name="ann_benchmarks_hdf5", filename="kosarak-jaccard.hdf5", container="hdf5"),
        ),
        sources=(Source(url=FIMI_KOSARAK_URL, format="fimi"),
                 Source(url=ANN_BENCHMARKS_KOSARAK_URL, format="ann_benchmarks_hdf5")),
    ),
    "pos": RealDataset(
        name="pos",
        description="BMS-POS: point-of-sale transactions of an electronics retailer (HARM repository)",
        # HARM's BMS-POS.csv: one transaction per line, each id followed by a comma (parse_pos)
        formats=(RawFormat(name="bms_pos_csv", filename="BMS-POS.csv", container="text"),),
        sources=(Source(url=HARM_POS_URL, format="bms_pos_csv"),),
    ),
}


class DatasetError(ValueError):
    """Any problem with a real dataset; the message alone says what and what to do."""


class DatasetUnavailable(DatasetError):
    """The raw file could not be obtained (offline, dead URL, HTTP error, corrupt download,
    or, from :func:`obtain`, no source gave data with the expected statistics).

    ``dataset``: its name; ``url``: the URL it would be (or was) downloaded from (None when
    several sources were tried); ``source``: what failed (that URL, a local path, or "any of
    its N sources"); ``reason``: short; ``how_to_supply``: what the user can do instead;
    ``tried``: from :func:`obtain`, one dict per source tried (its url or path, format, and
    the reason it failed).
    """

    def __init__(self, *, dataset: str, url: str | None, reason: str, how_to_supply: str, source: str | None = None,
                 tried: tuple = ()):
        self.dataset = dataset
        self.url = url
        self.source = url if source is None else source
        self.reason = reason
        self.how_to_supply = how_to_supply
        self.tried = tuple(tried)
        super().__init__(
            f"could not obtain dataset {dataset!r} from {self.source}: {reason}. To supply it: {how_to_supply}."
        )

    def __reduce__(self):  # keyword-only __init__: pickling (multiprocessing) needs this
        return (_rebuild_unavailable, (self.dataset, self.url, self.reason, self.how_to_supply, self.source,
                                       self.tried))


def _rebuild_unavailable(dataset, url, reason, how_to_supply, source, tried):
    return DatasetUnavailable(dataset=dataset, url=url, reason=reason, how_to_supply=how_to_supply, source=source,
                              tried=tried)


# --------------------------------------------------------------------------------------------
# fetch

_CHUNK = 1 << 20
_PROGRESS_EVERY_S = 10.0


def fetch(
    name: str,
    *,
    url: str | None = None,
    path: str | os.PathLike | None = None,
    format: str | None = None,  # noqa: A002 (the config's word)
    raw_dir: str | os.PathLike = RAW_DIR,
    timeout: tuple[float, float] = (5.0, 60.0),
    retries: int = 3,
    backoff: float = 0.5,
    session=None,
) -> Path:
    """The raw file of dataset ``name`` in ``format`` (default: the dataset's native one),
    obtained in this order:

    1. ``path`` given: that file, validated (readable, not an HTML page, a complete gzip or an
       HDF5 file as the format needs) but not copied.
    2. ``raw_dir/<the format's filename>`` present: used without any request. Its ``.sha256``
       file, when it matches, spares the validation; a file without one (placed by hand), or
       whose content changed since, is validated and its hash (re)recorded. An existing file is
       never overwritten: one that fails validation raises, saying to delete it.
    3. Otherwise ``url`` (default: the dataset's default source of that format) is downloaded
       with ``requests`` (``timeout = (connect, read)`` seconds), retried up to ``retries``
       times after ``backoff * 2**attempt`` seconds on connection errors, timeouts, HTTP
       5xx/429 and short reads (not on other HTTP errors, HTML pages or corrupt files),
       streamed into a temporary file in ``raw_dir`` and renamed into place only once complete
       and valid; then ``<filename>.sha256`` is written ("<hex>  <filename>", as sha256sum).

    Raises :class:`DatasetUnavailable` (naming the source, the reason and how to supply the
    file by hand) when none of these works; nothing partial is left in ``raw_dir``.
    """
    dataset = _dataset(name)
    raw_format = dataset.raw_format(format)
    if url is None:
        url = next((source.url for source in dataset.sources
                    if source.format == raw_format.name and source.url is not None), None)
        if url is None and path is None:
            raise DatasetError(f"dataset {dataset.name} has no default URL for format {raw_format.name};"
                               " give url= or path=")
    url = None if url is None else str(url)
    raw_dir = Path(raw_dir)
    _check_retry_arguments(timeout=timeout, retries=retries, backoff=backoff)
    target = raw_dir / raw_format.filename

    def unavailable(reason: str, source: str | None = None) -> DatasetUnavailable:
        how = (
            f"put it at {target} (or any path, listed as {{path: <file>, format: {raw_format.name}}} under"
            f" datasets.{dataset.name}.sources in the config), or list a mirror there as"
            f" {{url: <mirror>, format: {raw_format.name}}}"
        )
        return DatasetUnavailable(dataset=dataset.name, url=url, reason=reason, how_to_supply=how, source=source)

    if path is not None:
        path = Path(path)
        problem = _validate_file(path, raw_format)
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
        problem = _validate_file(target, raw_format)
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
    _download(dataset, raw_format, url=url, target=target, timeout=timeout, retries=retries, backoff=backoff,
              session=session, unavailable=unavailable)
    return target


def obtain(
    name: str,
    *,
    sources=None,
    min_items: int | None = None,
    expect: dict | None = None,
    raw_dir: str | os.PathLike = RAW_DIR,
    **fetch_options,
) -> dict:
    """The raw file of dataset ``name`` from the first of ``sources`` (default: the dataset's
    own list; :func:`sources_of` accepts) that yields a file which parses, in the source's
    format, to statistics matching ``expect`` (as :func:`process` checks them; None: any file
    that parses). Each source is fetched with :func:`fetch` (``fetch_options``: timeout,
    retries, backoff, session) and parsed; when that fails the next one is tried:

    - a download that fails the check is deleted with its ``.sha256`` (a later source in the
      same format can then download into its place);
    - a file already in ``raw_dir`` that fails is kept, never overwritten; a later URL source of
      its format is not tried (the failure says to delete the file);
    - a local path that fails is left alone.

    Returns {"raw": the file's path, "source": the source used (as :meth:`Source.as_dict`),
    "sha256", "statistics": n, d, tokens, occurrences, "tried": the sources that failed before
    it, with their reasons}. Raises :class:`DatasetUnavailable` naming every source and why it
    failed, and how to supply the file, when none works; a bad argument raises
    :class:`DatasetError` before anything is fetched.
    """
    dataset = _dataset(name)
    sources = sources_of(dataset.name, dataset.sources if sources is None else sources)
    expect = _check_expect(expect, dataset)
    if dataset.name == "kosarak":
        min_items = DEFAULT_MIN_ITEMS if min_items is None else min_items
        _check_min_items(min_items)
    elif min_items is not None:
        raise DatasetError(f"min_items applies to kosarak only, got min_items={min_items!r} for {name!r}")
    raw_dir = Path(raw_dir)
    tried = []
    failed_files = set()  # files in raw_dir that failed: not to be tried again for a later source
    for source in sources:
        target = None if source.url is None else raw_dir / dataset.raw_format(source.format).filename
        if target in failed_files:
            tried.append({**source.as_dict(), "reason": f"not downloaded: {target} is there and failed above;"
                                                        " delete it to download it from here"})
            continue
        downloaded = target is not None and not target.exists()
        try:
            raw = fetch(dataset.name, url=source.url, path=source.path, format=source.format, raw_dir=raw_dir,
                        **fetch_options)
            _, statistics = parse(dataset.name, raw, format=source.format, min_items=min_items)
            if expect is not None:
                _verify(dataset, statistics, expect, raw)
        except DatasetUnavailable as failure:
            reason = failure.reason
            if target is not None and not downloaded:
                failed_files.add(target)
        except DatasetError as failure:  # the file is there but does not parse, or not to expect
            reason = str(failure)
            if downloaded:
                _remove_quietly(target)
                _remove_quietly(_hash_path(target))
                reason += f" The download was deleted ({target})."
            elif target is not None:
                failed_files.add(target)
                reason += f" {target} was kept; delete it to download it again."
        else:
            log.info("%s: using %s (%s)", dataset.name, source.location, source.format)
            return {"raw": str(raw), "source": source.as_dict(), "sha256": statistics["sha256"],
                    "statistics": {key: statistics[key] for key in STATISTICS}, "tried": tried}
        log.warning("%s: source %s (%s) failed: %s", dataset.name, source.location, source.format, reason)
        tried.append({**source.as_dict(), "reason": reason})
    raise DatasetUnavailable(
        dataset=dataset.name, url=sources[0].url if len(sources) == 1 else None,
        source=sources[0].location if len(sources) == 1 else f"any of its {len(sources)} sources",
        reason=tried[0]["reason"] if len(tried) == 1 else "; ".join(
            f"({number}) {_describe(entry)}: {entry['reason']}" for number, entry in enumerate(tried, 1)),
        how_to_supply=_how_to_supply(dataset, sources, raw_dir), tried=tried,
    )


def sources_of(name: str, specs) -> tuple[Source, ...]:
    """Dataset ``name``'s sources from :class:`Source` objects or mappings as the config writes
    them ({url: ..., format: ...} or {path: ..., format: ...}; format defaults to the dataset's
    native one), checked: exactly one of url and path, a format the dataset has, at least one
    source. A bad entry raises one :class:`DatasetError` naming it."""
    dataset = _dataset(name)
    if isinstance(specs, (str, bytes, Mapping)) or not hasattr(specs, "__iter__"):
        raise DatasetError(f"sources of {dataset.name} must be a list of sources, got {specs!r}")
    sources = []
    for number, spec in enumerate(specs):
        where = f"datasets.{dataset.name}.sources[{number}]"
        if isinstance(spec, Source):
            spec = spec.as_dict()
        if not isinstance(spec, Mapping):
            raise DatasetError(f"{where}: a source is {{url: ...}} or {{path: ...}} with a format, got {spec!r}")
        unknown = sorted(str(key) for key in spec if key not in ("url", "path", "format"))
        if unknown:
            raise DatasetError(f"{where}: unknown key(s) {', '.join(unknown)}; a source has url or path, and format")
        given = [key for key in ("url", "path") if spec.get(key) is not None]
        if len(given) != 1:
            raise DatasetError(f"{where}: give exactly one of url and path, got {spec!r}")
        location = spec[given[0]]
        if not isinstance(location, (str, os.PathLike)) or not str(location):
            raise DatasetError(f"{where}.{given[0]}: must be a non-empty string, got {location!r}")
        try:
            raw_format = dataset.raw_format(spec.get("format"))
        except DatasetError as error:
            raise DatasetError(f"{where}.format: {error}") from None
        sources.append(Source(format=raw_format.name, **{given[0]: str(location)}))
    if not sources:
        raise DatasetError(f"datasets.{dataset.name}.sources: the list is empty; give at least one source")
    return tuple(sources)


def _describe(entry: dict) -> str:
    """A source as a message names it: its url or path and its format."""
    return f"{entry.get('url') or entry.get('path')} [{entry['format']}]"


def _how_to_supply(dataset: RealDataset, sources: tuple[Source, ...], raw_dir: Path) -> str:
    """Where a downloaded file is looked for (the formats of the URL sources), and how to add
    a local copy or a mirror to the config."""
    places = list(dict.fromkeys(
        f"{raw_dir / dataset.raw_format(source.format).filename} (format {source.format})"
        for source in sources if source.url is not None))
    formats = " or ".join(raw_format.name for raw_format in dataset.formats)
    config = (f"list a local copy as {{path: <file>, format: {formats}}} first under datasets.{dataset.name}.sources"
              f" in the config, or a mirror as {{url: <mirror>, format: {formats}}}")
    return f"put the file at {' or '.join(places)}, or {config}" if places else config


class _Attempt(Exception):
    """A failed download attempt: ``reason`` for the message; ``retry`` if it may be transient."""

    def __init__(self, reason: str, *, retry: bool):
        super().__init__(reason)
        self.reason = reason
        self.retry = retry


def _download(dataset, raw_format, *, url, target, timeout, retries, backoff, session, unavailable) -> None:
    import requests  # here, not at module level: importing datasets should stay cheap

    own_session = session is None
    if own_session:
        session = requests.Session()
    try:
        for attempt in range(retries + 1):
            try:
                digest = _download_once(dataset, raw_format, url=url, target=target, timeout=timeout,
                                         session=session)
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


def _download_once(dataset, raw_format, *, url, target, timeout, session) -> str:
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
            if raw_format.container == "gzip" and encoding in ("gzip", "x-gzip"):
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
        problem = _container_problem(Path(name), raw_format)
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


def _validate_file(path: Path, raw_format: RawFormat) -> str | None:
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
    return _container_problem(path, raw_format)


def _container_problem(path: Path, raw_format: RawFormat) -> str | None:
    """Why a complete file cannot be of ``raw_format`` (a damaged gzip, not HDF5), or None."""
    if raw_format.container == "gzip":
        return _gzip_problem(path)
    if raw_format.container == "hdf5":
        import h5py  # here, not at module level: importing datasets should stay cheap

        return None if h5py.is_hdf5(path) else "not an HDF5 file"
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


def parse(name: str, raw_path: str | os.PathLike, *, format: str | None = None,  # noqa: A002
          min_items: int | None = None) -> tuple[scipy.sparse.csr_matrix, dict]:
    """Dataset ``name`` read from ``raw_path`` in ``format`` (default: the dataset's native
    one): :func:`parse_kosarak` (fimi), :func:`parse_ann_benchmarks_hdf5` or :func:`parse_pos`.
    ``min_items`` applies to Kosarak only, in either format (None: its default, 20); giving it
    for POS is an error. The statistics name the ``format`` too."""
    dataset = _dataset(name)
    raw_format = dataset.raw_format(format)
    if dataset.name == "kosarak":
        reader = parse_kosarak if raw_format.name == "fimi" else parse_ann_benchmarks_hdf5
        matrix, statistics = reader(raw_path, min_items=DEFAULT_MIN_ITEMS if min_items is None else min_items)
    elif min_items is not None:
        raise DatasetError(f"min_items applies to kosarak only, got min_items={min_items!r} for {name!r}")
    else:
        matrix, statistics = parse_pos(raw_path)
    return matrix, {**statistics, "format": raw_format.name}


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

    Returns the CSR matrix (float64 ones, sorted int32 indices, canonical, rows in the canonical
    order of :func:`_binary_csr`) and the statistics ``n`` (rows kept), ``d`` (distinct items),
    ``tokens`` (ids read in the kept rows, duplicates counted), ``occurrences`` (nonzeros),
    ``sha256`` and ``source_file``.
    """
    _check_min_items(min_items)
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
    statistics = _statistics(matrix, tokens=values.size, sha256=hashlib.sha256(raw).hexdigest(),
                             raw_path=raw_path)
    log.info("kosarak: kept %d of %d lines (at least %d ids); %d items, %d ids, %d nonzeros",
             statistics["n"], per_line.size, min_items, statistics["d"], statistics["tokens"],
             statistics["occurrences"])
    return matrix, statistics


def parse_ann_benchmarks_hdf5(raw_path: str | os.PathLike, *, min_items: int = DEFAULT_MIN_ITEMS
                              ) -> tuple[scipy.sparse.csr_matrix, dict]:
    """Kosarak from ann-benchmarks' ``kosarak-jaccard.hdf5``, the file the PLAN authors' script
    loads. ann-benchmarks built it from the FIMI file: the lines with at least 20 ids (duplicates
    counted), each sorted (duplicates kept), shuffled and split into the arrays ``train`` and
    ``test`` of item ids, flat, with ``size_train`` and ``size_test`` the length of each
    session. Read as the authors did: the train sessions, then the test ones; one binary row per
    session with at least ``min_items`` ids (an id repeated in a session is one 1); the items
    that occur re-numbered 0..D-1 in increasing order of their ids. The same sessions as the
    FIMI file therefore give the same rows, and with the canonical row order of
    :func:`_binary_csr` the same matrix, byte for byte (``min_items`` below 20 cannot bring back
    the shorter sessions, which the file does not hold).

    A file that is not HDF5, lacks one of the four arrays, holds anything but one-dimensional
    integer arrays, negative sizes or ids, or sizes that do not add up to the ids raises one
    :class:`DatasetError` naming the problem.

    Returns the matrix and statistics as :func:`parse_kosarak` does (``tokens``: the ids of
    the kept sessions, duplicates counted).
    """
    _check_min_items(min_items)
    raw_path = Path(raw_path)
    arrays = _read_ann_benchmarks_arrays(raw_path)
    sizes = np.concatenate([arrays["size_train"], arrays["size_test"]])
    ids = np.concatenate([arrays["train"], arrays["test"]])
    if not sizes.size:
        raise DatasetError(f"{raw_path}: the file holds no sessions (size_train and size_test are empty)")
    kept_sessions = sizes >= min_items
    if not kept_sessions.any():
        raise DatasetError(f"{raw_path}: no session has at least {min_items} item ids (min_items={min_items})")
    session_of = np.repeat(np.arange(sizes.size), sizes)  # the session of each id, train then test
    kept = kept_sessions[session_of]
    row_number = np.cumsum(kept_sessions) - 1  # a kept session's row
    rows = row_number[session_of[kept]]
    values = ids[kept]
    matrix = _binary_csr(rows, values, n=int(np.count_nonzero(kept_sessions)))
    try:
        digest = _sha256_file(raw_path)
    except OSError as exc:
        raise DatasetError(f"cannot read {raw_path} ({exc.strerror or exc})") from None
    statistics = _statistics(matrix, tokens=values.size, sha256=digest, raw_path=raw_path)
    log.info("kosarak: kept %d of %d sessions (%d train, %d test; at least %d ids); %d items, %d ids,"
             " %d nonzeros", statistics["n"], sizes.size, arrays["size_train"].size, arrays["size_test"].size,
             min_items, statistics["d"], statistics["tokens"], statistics["occurrences"])
    return matrix, statistics


_ANN_BENCHMARKS_ARRAYS = ("train", "size_train", "test", "size_test")


def _read_ann_benchmarks_arrays(raw_path: Path) -> dict[str, np.ndarray]:
    """The four arrays of an ann-benchmarks set file as int64, checked (see the caller)."""
    import h5py  # here, not at module level: importing datasets should stay cheap

    try:
        with h5py.File(raw_path, "r") as f:
            missing = [name for name in _ANN_BENCHMARKS_ARRAYS if not isinstance(f.get(name), h5py.Dataset)]
            if missing:
                raise DatasetError(f"{raw_path} is not an ann-benchmarks set file: it lacks the array(s)"
                                   f" {', '.join(missing)} (it needs {', '.join(_ANN_BENCHMARKS_ARRAYS)})")
            arrays = {name: f[name][()] for name in _ANN_BENCHMARKS_ARRAYS}
    except OSError as exc:  # h5py's error for a file that is not HDF5, truncated or unreadable
        raise DatasetError(f"{raw_path} is not a readable HDF5 file ({exc}); delete it and fetch it again") from None
    checked = {}
    for name, array in arrays.items():
        array = np.asarray(array)
        if array.ndim != 1 or array.dtype.kind not in "iu":
            raise DatasetError(f"{raw_path}: {name} must be a one-dimensional array of integers, got shape"
                               f" {array.shape} of {array.dtype}")
        if array.size and array.dtype.kind == "i" and array.min() < 0:
            at = int(np.argmax(array < 0))
            what = "session length" if name.startswith("size_") else "item id"
            raise DatasetError(f"{raw_path}: {name}[{at}] = {int(array[at])} is a negative {what}")
        if array.size and array.dtype.kind == "u" and array.max() > np.iinfo(np.int64).max:
            raise DatasetError(f"{raw_path}: {name} holds values beyond int64 ({int(array.max())})")
        checked[name] = array.astype(np.int64, copy=False)
    for part in ("train", "test"):
        total = int(checked[f"size_{part}"].sum())
        if total != checked[part].size:
            raise DatasetError(f"{raw_path}: the sizes do not add up: size_{part} sums to {total} ids, but {part}"
                               f" holds {checked[part].size}")
    return checked


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

    Returns the CSR matrix (float64 ones, sorted int32 indices, canonical, rows in the canonical
    order of :func:`_binary_csr`) and the statistics ``n``, ``d``, ``tokens`` (ids read,
    duplicates counted), ``occurrences`` (nonzeros), ``sha256``, ``git_blob`` (``git
    hash-object`` of the file) and ``source_file``.
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
    statistics = _statistics(matrix, tokens=values.size, sha256=hashlib.sha256(raw).hexdigest(),
                             raw_path=raw_path)
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
    """The binary matrix of n rows with a 1 at (rows[k], item k) for every token k, items
    re-numbered 0..D-1 in increasing order of their ids, its rows in canonical order.

    Why the canonical order: the same sessions come in different orders from different
    sources (ann-benchmarks shuffled them when it split train and test), and nothing about a
    session's position in a file is data. The columns depend only on the set of ids that
    occur; the rows are then sorted by their sorted column lists (:func:`_canonical_row_order`),
    a total order on distinct rows in which equal rows are interchangeable. So the matrix is a
    function of the multiset of sessions alone: any two files holding the same sessions, in any
    order and format, give byte-identical arrays, statistics and results (the trials' seeds
    then decide everything that is random).
    """
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
    indices = key_columns.astype(index_dtype)
    order = _canonical_row_order(indptr, indices)
    lengths = np.diff(indptr)[order]
    canonical_indptr = np.zeros(n + 1, dtype=index_dtype)
    np.cumsum(lengths, out=canonical_indptr[1:])
    # row order[i]'s entries move to canonical_indptr[i]:canonical_indptr[i + 1], in one gather
    gather = np.repeat(indptr[:-1][order].astype(np.int64) - canonical_indptr[:-1], lengths) + np.arange(keys.size)
    matrix = scipy.sparse.csr_matrix((np.ones(keys.size), indices[gather], canonical_indptr), shape=(n, d),
                                     copy=False)
    matrix.has_sorted_indices = True
    matrix.has_canonical_format = True
    return matrix


def _canonical_row_order(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The permutation that sorts the rows of a CSR matrix with sorted indices
    lexicographically by their column lists (a row that begins another comes first; an empty
    row first of all); equal rows keep their relative order.

    Vectorised over rows, refined one position at a time: the rows still tied with another on
    their first k columns are sorted by (their tie group, column k), and only the groups that
    are still tied and not finished go on, so the loop runs as long as the longest prefix two
    different rows share, over ever fewer rows.
    """
    n = indptr.size - 1
    lengths = np.diff(indptr)
    order = np.arange(n)
    group = np.zeros(n, dtype=np.int64)  # slot i's tie group: the first slot of its group
    active = np.arange(n)  # slots (positions in order) whose row is tied with another, ascending
    position = 0
    while active.size:
        rows = order[active]
        column = np.full(rows.size, -1, dtype=np.int64)  # -1: the row has ended, it sorts first
        longer = lengths[rows] > position
        column[longer] = indices[indptr[rows[longer]] + position]
        # a group's slots are contiguous and numbered by its first slot, so sorting by group
        # first keeps every group in its slots
        by_key = np.lexsort((column, group[active]))
        order[active] = rows[by_key]
        column, tied_group = column[by_key], group[active][by_key]
        starts = np.ones(active.size, dtype=bool)
        starts[1:] = (tied_group[1:] != tied_group[:-1]) | (column[1:] != column[:-1])
        group[active] = np.maximum.accumulate(np.where(starts, active, 0))
        first = np.flatnonzero(starts)
        size = np.diff(np.append(first, active.size))
        # rows alone in their group are placed; tied rows that ended together are equal
        still_tied = (np.repeat(size, size) > 1) & (column >= 0)
        active = active[still_tied]
        position += 1
    return order


def _statistics(matrix, *, tokens: int, sha256: str, raw_path: Path) -> dict:
    n, d = matrix.shape
    return {
        "n": int(n),
        "d": int(d),
        "tokens": int(tokens),
        "occurrences": int(matrix.nnz),
        "sha256": sha256,
        "source_file": raw_path.name,
    }


def _check_min_items(min_items) -> None:
    if not isinstance(min_items, int) or isinstance(min_items, bool) or min_items < 1:
        raise DatasetError(f"min_items must be an integer >= 1, got min_items={min_items!r}")


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
    format: str | None = None,  # noqa: A002 (the config's word)
    processed_dir: str | os.PathLike = PROCESSED_DIR,
    min_items: int | None = None,
    expect: dict | None = None,
) -> dict:
    """Parse dataset ``name`` from ``raw_path`` in ``format`` (default: the dataset's native
    one), check its statistics against ``expect``, and cache it as
    ``processed_dir/<name>.npz`` (the CSR matrix, rows in canonical order) and ``<name>.json``
    (its statistics and format, ``min_items`` for Kosarak and the ``expect`` checked).

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
    matrix, statistics = parse(dataset.name, raw_path, format=format, min_items=min_items)
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
