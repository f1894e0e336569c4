"""Atomic file writes, and bounded reads of files someone else put there.

Reads (``read_limited``; docs/documents.md "Files vance reads"): only a
regular file is opened — never a FIFO (it would block forever), a device
(``/dev/zero`` never ends) or a socket; at most a given number of bytes is
read; and a file inside a layer may not be a link that leads out of it.

Writes: a reader sees the old content or the new, never half a file.

A write goes to a temporary file ``.<name>.<pid>.<random>.tmp`` beside the
destination, then is renamed over it. A writer killed in between leaves its
temporary file behind (a copy of the config, API key included); the next
write of the same file removes such leftovers: those of a process that is
gone, and any older than ``STALE_SECONDS`` (``sweep_leftovers``).
"""

from __future__ import annotations

import os
import stat
import time
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


STALE_SECONDS = 600
"""Age after which a temporary file is a leftover even if its process id is alive again
(process ids are reused); a write takes milliseconds."""


def temp_prefix(path: Path) -> str:
    """Return the name prefix of this process's temporary files for ``path``."""
    return f".{path.name}.{os.getpid()}."


def sweep_leftovers(path: Path) -> list[Path]:
    """Remove temporary files of ``path`` that killed writers left behind; never raises.

    A file ``.<name>.<pid>.<random>.tmp`` is a leftover when process ``pid``
    is gone or the file is older than ``STALE_SECONDS`` (an older name
    without a pid counts by age alone).

    Returns:
        The files removed.
    """
    import glob  # stdlib, off the light paths: only a write sweeps

    removed = []
    now = time.time()
    for name in glob.glob(glob.escape(f".{path.name}.") + "*.tmp", root_dir=path.parent,
                          include_hidden=True):
        leftover = path.parent / name
        pid = name[len(path.name) + 2:].split(".", 1)[0]
        try:
            old = now - leftover.stat().st_mtime > STALE_SECONDS
            if old or (pid.isdigit() and not _alive(int(pid))):
                leftover.unlink()
                removed.append(leftover)
        except OSError:  # gone meanwhile, or not ours to remove: the write goes on
            continue
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _write_replace(path: Path, text: str, mode: int | None) -> None:
    import tempfile  # stdlib, off the light paths: only a write needs it

    path.parent.mkdir(parents=True, exist_ok=True)
    sweep_leftovers(path)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), suffix=".tmp", dir=path.parent)
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


class FileRefused(ValueError):
    """A file vance will not read: not a regular file, too large, or a link out of its layer.

    Attributes:
        reason: one line, without the path (the caller names the file).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_limited(path: Path, limit: int, root: Path | None = None) -> bytes:
    """Read a regular file of at most ``limit`` bytes (see the module rules).

    Args:
        path: the file; a symbolic link is followed.
        limit: most bytes read; a larger file is refused, not cut.
        root: the layer folder ``path`` belongs to; a link that resolves
            outside it is refused.

    Raises:
        FileRefused: not a regular file, larger than ``limit``, or outside ``root``.
        OSError: it cannot be read (missing, permission denied …).
    """
    if root is not None:
        # realpath, not Path.resolve: no extra stat per call, and a link loop is left to the
        # stat below (ELOOP, an OSError) where resolve raised RuntimeError
        target = os.path.realpath(path)
        inside = os.path.realpath(root)
        if target != inside and not target.startswith(inside.rstrip(os.sep) + os.sep):
            raise FileRefused(f"a link to {target}, outside its layer: not read")
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise FileRefused(f"not a regular file ({_kind(mode)}): not read")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # never blocks on a FIFO
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the stat above
            raise FileRefused("not a regular file: not read")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"larger than {limit:,} bytes: not read")
    return data


def not_utf8(exc: UnicodeDecodeError) -> str:
    """Say where a file's bytes stop being UTF-8: ``not UTF-8: byte 0xff at offset 0``."""
    bad = bytes(exc.object[exc.start:exc.start + 1])
    return f"not UTF-8: byte 0x{bad.hex() or '??'} at offset {exc.start}"
