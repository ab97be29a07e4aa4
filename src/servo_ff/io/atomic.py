"""Atomic outputs: a file (or a directory, e.g. a rosbag2 recording) is written under a temporary name in the same
directory, flushed to disk (fsync), then renamed onto its final name. A process killed at any point leaves either
the previous file whole or the new one whole, never half of one; a stray temporary (``.NAME.tmp-…``) may remain.

    with atomic_path("out/mx106.yaml") as tmp:   # any writer that takes a path
        write_something(tmp)
    atomic_write_text("out/summary.json", text)
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path


def _fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_tree(path: Path) -> None:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    for p in files:
        with open(p, "rb") as f:
            os.fsync(f.fileno())


@contextlib.contextmanager
def atomic_path(path: str | Path, directory: bool = False) -> Iterator[Path]:
    """A temporary path next to ``path`` (same suffix, so writers that add or check one behave) to write; on a clean
    exit it is synced and renamed onto ``path``; on an exception it is removed and ``path`` is left untouched.
    ``directory``: the writer creates a directory there (it must not exist yet; a directory ``path`` that exists
    is refused, as the writers that make one refuse it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tag = f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    if directory:  # .NAME.tmp-…/NAME: what the writer names after the directory keeps its final name
        holder = path.with_name(tag)
        holder.mkdir()
        tmp = holder / path.name
    else:  # created with the umask's permissions, as a plain open() would
        holder = tmp = path.with_name(tag + "".join(path.suffixes))
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield tmp
        _fsync_tree(tmp)
        if directory and path.exists():
            raise FileExistsError(f"{path}: exists")
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(holder) if holder.is_dir() else holder.unlink()
    _fsync_dir(path.parent)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """``path`` := ``data``, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """``path`` := ``text``, atomically."""
    return atomic_write_bytes(path, text.encode(encoding))


__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text"]
