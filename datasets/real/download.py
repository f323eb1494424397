"""Obtaining a real dataset's raw file (docs/design.md §7): :func:`fetch` gets one file (a local path,
a cached download, or a download with timeouts, retries, streaming to a temporary file and an
atomic rename; the file's sha256 is recorded beside it), and :func:`obtain` tries a dataset's
sources in order until one gives a file whose parse passes the expected statistics. Anything
that prevents it raises :class:`~datasets.real.catalog.DatasetUnavailable`, whose message says
how to supply the file by hand."""
from __future__ import annotations

import gzip
import hashlib
import logging
import os
import re
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

from .cache import check_expect, verify_statistics
from .catalog import (
    DEFAULT_MIN_ITEMS,
    RAW_DIR,
    DatasetError,
    DatasetUnavailable,
    RawFormat,
    RealDataset,
    Source,
    dataset_named,
    sources_of,
)
from .files import CHUNK_BYTES, hash_path, read_recorded_hash, remove_quietly, sha256_file, write_hash_file
from .parsing import check_min_items, parse

log = logging.getLogger("datasets.real")

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

    1. ``path`` given: that file, validated (readable, not an HTML page, a complete gzip, an
       HDF5 file or a zip archive as the format needs) but not copied.
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

    A format of several files (MNIST's ``idx``, :attr:`RawFormat.members`) is obtained the same
    way file by file: ``path`` is the directory holding them, ``url`` the base URL their names are
    appended to, and they are cached in the directory ``raw_dir/<the format's filename>``, each
    with its ``.sha256``: a file already there is used (never overwritten) and only the missing
    ones are downloaded, so each file is complete or absent, and an interrupted fetch resumes.
    The result is then that directory.

    Raises :class:`DatasetUnavailable` (naming the source, the reason and how to supply the
    file by hand) when none of these works; nothing partial is left in ``raw_dir``.
    """
    dataset = dataset_named(name)
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

    def unavailable(reason: str, source: str | None = None, location: str | None = url) -> DatasetUnavailable:
        return DatasetUnavailable(dataset=dataset.name, url=location, reason=reason,
                                  how_to_supply=_how_to_supply_format(dataset, raw_format, target), source=source)

    if path is not None:
        path = Path(path)
        problem = _validate_location(path, raw_format)
        if problem:
            raise unavailable(problem, source=str(path))
        log.info("%s: using the local %s %s (no download)", dataset.name,
                 "directory" if raw_format.members else "file", path)
        return path

    missing = [file for file in raw_format.files(target) if not _use_existing(dataset, raw_format, file, unavailable)]
    if not missing:
        return target
    try:
        missing[0].parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise unavailable(f"cannot create {missing[0].parent} ({exc.strerror or exc})") from None
    if not raw_format.members:
        _download(dataset, raw_format, url=url, target=target, timeout=timeout, retries=retries, backoff=backoff,
                  session=session, unavailable=unavailable)
        return target
    try:
        for file in missing:
            file_url = raw_format.member_url(url, file.name)

            def member_unavailable(reason: str, file=file, file_url=file_url) -> DatasetUnavailable:
                return unavailable(f"{file.name}: {reason}", location=file_url)

            _download(dataset, raw_format, url=file_url, target=file, timeout=timeout, retries=retries,
                      backoff=backoff, session=session, unavailable=member_unavailable)
    except DatasetUnavailable:
        if not any(target.iterdir()):  # nothing was obtained: no empty directory either
            target.rmdir()
        raise
    return target


def _use_existing(dataset: RealDataset, raw_format: RawFormat, target: Path, unavailable) -> bool:
    """Whether the raw file ``target`` is there to use (False: absent). A file whose recorded
    sha256 matches is used as it is; one without (placed by hand), or changed since, is validated
    and its hash (re)recorded; one that fails raises, saying to delete it (never overwritten)."""
    if not target.exists():
        return False
    recorded = read_recorded_hash(target)
    try:
        digest = sha256_file(target)
    except OSError as exc:
        problem = f"{target} exists but cannot be read ({exc.strerror or exc})"
        raise unavailable(problem, source=str(target)) from None
    if recorded == digest:
        log.info("%s: using the cached %s (sha256 %s)", dataset.name, target, digest)
        return True
    if recorded is not None:
        log.warning("%s: %s changed since its hash was recorded; checking it again", dataset.name, target)
    problem = _validate_file(target, raw_format)
    if problem:
        raise unavailable(f"{target} exists but is not usable ({problem}); delete it to download it again",
                          source=str(target))
    try:
        write_hash_file(target, digest)
    except OSError as exc:  # a read-only directory: the file is still usable
        log.warning("%s: could not record the sha256 of %s (%s)", dataset.name, target, exc)
    log.info("%s: using %s, placed by hand (sha256 %s)", dataset.name, target, digest)
    return True


def _how_to_supply_format(dataset: RealDataset, raw_format: RawFormat, target: Path) -> str:
    """How to supply the raw file(s) of one format by hand: where a download would go, a local
    copy's config entry, or a mirror's."""
    if raw_format.members:
        return (f"put the files {', '.join(raw_format.members)} in {target}/ (or in any directory, listed as"
                f" {{path: <directory>, format: {raw_format.name}}} under datasets.{dataset.name}.sources in the"
                f" config), or list a mirror there as {{url: <base URL of the files>, format: {raw_format.name}}}")
    return (f"put it at {target} (or any path, listed as {{path: <file>, format: {raw_format.name}}} under"
            f" datasets.{dataset.name}.sources in the config), or list a mirror there as"
            f" {{url: <mirror>, format: {raw_format.name}}}")


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

    For a format of several files (MNIST's ``idx``) the same holds file by file: the files this
    source downloaded are deleted, those that were there before are kept.

    Returns {"raw": the file's path (a format of several files: their directory), "source": the
    source used (as :meth:`Source.as_dict`), "sha256", "statistics": the dataset's statistics
    (:attr:`RealDataset.statistics`: n, d, tokens, occurrences for a binary dataset), "tried": the
    sources that failed before it, with their reasons}. Raises :class:`DatasetUnavailable`
    naming every source and why it failed, and how to supply the file, when none works; a bad
    argument raises :class:`DatasetError` before anything is fetched.
    """
    dataset = dataset_named(name)
    sources = sources_of(dataset.name, dataset.sources if sources is None else sources)
    expect = check_expect(expect, dataset)
    if dataset.name == "kosarak":
        min_items = DEFAULT_MIN_ITEMS if min_items is None else min_items
        check_min_items(min_items)
    elif min_items is not None:
        raise DatasetError(f"min_items applies to kosarak only, got min_items={min_items!r} for {name!r}")
    raw_dir = Path(raw_dir)
    tried = []
    failed_files = set()  # files in raw_dir that failed: not to be tried again for a later source
    for source in sources:
        raw_format = dataset.raw_format(source.format)
        target = None if source.url is None else raw_dir / raw_format.filename
        if target in failed_files:
            tried.append({**source.as_dict(), "reason": f"not downloaded: {target} is there and failed above;"
                                                        " delete it to download it from here"})
            continue
        files = [] if target is None else raw_format.files(target)
        present = [file for file in files if file.exists()]  # what a failure keeps
        try:
            raw = fetch(dataset.name, url=source.url, path=source.path, format=source.format, raw_dir=raw_dir,
                        **fetch_options)
            _, statistics = parse(dataset.name, raw, format=source.format, min_items=min_items)
            if expect is not None:
                verify_statistics(dataset, statistics, expect, raw)
        except DatasetUnavailable as failure:
            reason = failure.reason
            if failure.source in {str(file) for file in present}:  # a file already there is unusable
                failed_files.add(target)
        except DatasetError as failure:  # the file is there but does not parse, or not to expect
            reason = str(failure)
            downloaded = [file for file in files if file not in present and file.exists()]
            for file in downloaded:
                remove_quietly(file)
                remove_quietly(hash_path(file))
            if downloaded:
                reason += f" The download was deleted ({', '.join(map(str, downloaded))})."
            if present:
                failed_files.add(target)
                kept = ", ".join(map(str, present))
                reason += (f" {kept} was kept; delete it to download it again." if len(present) == 1 else
                           f" {kept} were kept; delete them to download them again.")
        else:
            log.info("%s: using %s (%s)", dataset.name, source.location, source.format)
            return {"raw": str(raw), "source": source.as_dict(), "sha256": statistics["sha256"],
                    "statistics": {key: statistics[key] for key in dataset.statistics}, "tried": tried}
        log.warning("%s: source %s (%s) failed: %s", dataset.name, source.location, source.format, reason)
        tried.append({**source.as_dict(), "reason": reason})
    raise DatasetUnavailable(
        dataset=dataset.name, url=sources[0].url if len(sources) == 1 else None,
        source=sources[0].location if len(sources) == 1 else f"any of its {len(sources)} sources",
        reason=tried[0]["reason"] if len(tried) == 1 else "; ".join(
            f"({number}) {_describe(entry)}: {entry['reason']}" for number, entry in enumerate(tried, 1)),
        how_to_supply=_how_to_supply(dataset, sources, raw_dir), tried=tried,
    )




def _describe(entry: dict) -> str:
    """A source as a message names it: its url or path and its format."""
    return f"{entry.get('url') or entry.get('path')} [{entry['format']}]"


def _how_to_supply(dataset: RealDataset, sources: tuple[Source, ...], raw_dir: Path) -> str:
    """Where a downloaded file is looked for (the formats of the URL sources), and how to add
    a local copy or a mirror to the config."""
    formats = " or ".join(raw_format.name for raw_format in dataset.formats)
    local = "<file or directory>" if any(raw_format.members for raw_format in dataset.formats) else "<file>"
    config = (f"list a local copy as {{path: {local}, format: {formats}}} first under datasets.{dataset.name}.sources"
              f" in the config, or a mirror as {{url: <mirror>, format: {formats}}}")
    url_formats = list(dict.fromkeys(dataset.raw_format(source.format) for source in sources if source.url is not None))
    if not url_formats:
        return config
    if not any(raw_format.members for raw_format in url_formats):
        places = " or ".join(f"{raw_dir / raw_format.filename} (format {raw_format.name})"
                             for raw_format in url_formats)
        return f"put the file at {places}, or {config}"
    places = " or ".join(
        f"the files {', '.join(raw_format.members)} in {raw_dir / raw_format.filename}/ (format {raw_format.name})"
        if raw_format.members else f"the file {raw_dir / raw_format.filename} (format {raw_format.name})"
        for raw_format in url_formats)
    return f"put {places}, or {config}"


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
        write_hash_file(target, digest)
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
                chunks, encoding = response.raw.stream(CHUNK_BYTES, decode_content=False), "identity"
            else:
                chunks = response.iter_content(CHUNK_BYTES)
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
            remove_quietly(Path(name))

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


def _validate_location(path: Path, raw_format: RawFormat) -> str | None:
    """Why a local source cannot be used, or None: a file, or for a format of several files the
    directory holding them, each file validated."""
    if not raw_format.members:
        return _validate_file(path, raw_format)
    if not path.is_dir():
        return "no such directory" if not path.exists() else "not a directory (give the directory of the files)"
    for file in raw_format.files(path):
        problem = _validate_file(file, raw_format)
        if problem:
            return f"{file.name}: {problem}"
    return None


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
    """Why a complete file cannot be of ``raw_format`` (a damaged gzip or zip, not HDF5), or None."""
    if raw_format.container == "gzip":
        return _gzip_problem(path)
    if raw_format.container == "hdf5":
        import h5py  # here, not at module level: importing datasets should stay cheap

        return None if h5py.is_hdf5(path) else "not an HDF5 file"
    if raw_format.container == "npz":
        return _zip_problem(path)
    return None


def _looks_like_html(head: bytes) -> bool:
    start = head.lstrip()[:9].lower()
    return start.startswith(b"<!doctype") or start.startswith(b"<html")


def _gzip_problem(path: Path) -> str | None:
    """Decompress the whole file (discarding the output): a truncated or damaged gzip fails."""
    try:
        with gzip.open(path, "rb") as f:
            while f.read(16 * CHUNK_BYTES):
                pass
    except (gzip.BadGzipFile, EOFError, zlib.error):
        return "corrupt gzip file"
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"
    return None


def _zip_problem(path: Path) -> str | None:
    """Read every member of the zip archive (a NumPy .npz) and check its CRC: a truncated or
    damaged archive fails."""
    try:
        with zipfile.ZipFile(path) as archive:
            damaged = archive.testzip()
    except (zipfile.BadZipFile, EOFError, zlib.error):
        return "not a complete zip archive (a NumPy .npz is one)"
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"
    return f"corrupt zip archive (its member {damaged} fails its CRC)" if damaged is not None else None


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
