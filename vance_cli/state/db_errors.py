"""SQLite's failures read as vance errors that name the database file.

Rules (docs/exit-codes.md):
- Every failure of the state database names its file: a SQLite error the
  environment causes becomes a ``StorageError`` (the write was refused:
  ``cannot write PATH: …``, with ``errno``) or a ``StateError``
  (``state database PATH: …``); one that means a bug of vance
  (``IntegrityError``, ``ProgrammingError`` …) stays as it is.
- ``SQLITE_FULL`` is ``cannot write PATH: database or disk is full``
  (``ENOSPC``); ``SQLITE_READONLY`` is ``cannot write PATH: …``.
- SQLite reports many refused writes only as ``disk I/O error``
  (``SQLITE_IOERR_*``: growing the WAL index on a full disk, a file size
  limit) or ``unable to open database file`` (``SQLITE_CANTOPEN``: a
  read-only folder). For those the folder is probed with what SQLite needed
  (the file opened for writing, ``PROBE_BYTES`` written beside it); the OS
  error the probe meets names the cause (``No space left on device``,
  ``Read-only file system``, ``Operation not permitted``).
- A busy database past the wait (``SQLITE_BUSY``, ``SQLITE_LOCKED``) says it is
  locked by another process.
"""

from __future__ import annotations

import errno as errnos
import os
import sqlite3
import tempfile
from pathlib import Path

from vance_cli.base.errors import (
    STORAGE_ERRNOS,
    DatabaseLocked,
    StateError,
    StorageError,
    VanceError,
)

REFUSED_WRITES = {sqlite3.SQLITE_FULL: "ENOSPC", sqlite3.SQLITE_READONLY: None}
"""SQLite result codes (primary) that mean the environment refuses the write, with the
errno name a StorageError reports (None: the probe's, if it finds one)."""

PROBED = frozenset({sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY,
                    sqlite3.SQLITE_PERM})
"""Primary codes whose cause the folder probe looks for (SQLite's text names none)."""

LOCKED = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
"""Primary codes of a database another connection holds past the wait."""

PROBE_BYTES = 65_536
"""Bytes the probe writes: more than the 32 KiB WAL index SQLite creates first, so a
disk too full for it fails the probe as well."""


def database_error(exc: BaseException, path: Path, opening: bool = False) -> VanceError | None:
    """Return the VanceError a SQLite failure of the database at ``path`` stands for.

    Args:
        exc: what SQLite raised.
        path: the database file.
        opening: the failure happened while opening (the message says ``cannot open``).

    Returns:
        A ``StorageError`` for a refused write, a ``StateError`` for any other
        ``OperationalError`` or plain ``DatabaseError``, both naming ``path``;
        None for anything else (a bug of vance, or not a SQLite error).
    """
    if not (isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in REFUSED_WRITES and primary not in PROBED:  # full: the reason is known
        return StorageError(f"cannot write {path}: {exc}", path=str(path),
                            errno=REFUSED_WRITES[primary])
    refused = probe(path) if primary in PROBED else None
    if refused is not None:
        name = errnos.errorcode.get(refused.errno or 0)
        return StorageError(f"cannot write {path}: {exc} ({refused.strerror or refused})",
                            path=str(path), errno=name)
    if primary == sqlite3.SQLITE_READONLY:
        return StorageError(f"cannot write {path}: {exc}", path=str(path), errno=None)
    if primary in LOCKED:
        return DatabaseLocked(f"state database {path}: {exc} (another process holds its lock)",
                              path=str(path))
    prefix = "cannot open state database" if opening else "state database"
    return StateError(f"{prefix} {path}: {exc}", path=str(path))


def probe(path: Path) -> OSError | None:
    """Try the writes SQLite needs at ``path``; return the OS error one meets, else None.

    Opens the file (when it exists) for writing, then writes ``PROBE_BYTES``
    to a temporary file in its folder and removes it. Only errors of
    ``STORAGE_ERRNOS`` count (the environment refusing the write).
    """
    try:
        if path.exists():
            os.close(os.open(path, os.O_RDWR))
        fd, name = tempfile.mkstemp(prefix=".vance-probe-", suffix=".tmp", dir=path.parent)
        try:
            left = memoryview(bytes(PROBE_BYTES))
            while left:  # a nearly full disk takes part of a write, then refuses the rest
                left = left[os.write(fd, left):]
        finally:
            os.close(fd)
            os.unlink(name)
    except OSError as exc:
        return exc if exc.errno in STORAGE_ERRNOS else None
    return None
