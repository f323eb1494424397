"""File helpers of the real datasets' steps: a file's sha256 and the ``.sha256`` record beside a
download, atomic writes, and quiet removal."""
from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

CHUNK_BYTES = 1 << 20  # files are read and written in pieces of this size


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(4 * CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def hash_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def read_recorded_hash(target: Path) -> str | None:
    try:
        fields = hash_path(target).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    return fields[0].lower() if fields else None


def write_hash_file(target: Path, digest: str) -> None:
    write_atomic(hash_path(target), f"{digest}  {target.name}\n".encode("ascii"))


def write_atomic(path: Path, content: bytes) -> None:
    """Write ``content`` via a temporary file in the same directory and a rename: all or nothing."""
    write_atomic_with(path, lambda out: out.write(content))


def write_atomic_with(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """``write(out)`` into a temporary file in the same directory, then a rename: all or nothing."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(name, path)
    except BaseException:
        remove_quietly(Path(name))
        raise


def remove_quietly(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
