"""Atomic file writes: a reader sees the old content or the new, never half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from vance_cli.base.errors import STORAGE_ERRNOS, StorageError


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` atomically: temp file in the same folder, fsync, rename.

    Readers see the old or the new content, never a half-written file.

    Args:
        path: the destination; its folder is created when missing.
        text: UTF-8 content.
        mode: optional permission bits for the new file (e.g. ``0o600``).

    Raises:
        StorageError: the file system refuses the write (permission denied,
            read-only, disk full: ``errors.STORAGE_ERRNOS``), naming ``path``;
            the old content is kept.
    """
    try:
        _write_replace(path, text, mode)
    except OSError as exc:
        if exc.errno in STORAGE_ERRNOS:
            if exc.filename is not None and Path(exc.filename).parent == path.parent:
                exc.filename = str(path)  # name the file, not our temporary file beside it
            raise StorageError.from_os_error(exc, path, writing=True) from None
        raise


def _write_replace(path: Path, text: str, mode: int | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
