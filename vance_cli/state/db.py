"""Connection to the state database and the one transaction context manager.

Invariants:
- One SQLite file per home (``<state>/vance.db``), WAL mode, so readers never
  block writers and a crashed process never leaves a half-applied change:
  every write runs inside ``transaction()``.
- Writers take the write lock up front (``BEGIN IMMEDIATE``) and wait up to
  ``BUSY_TIMEOUT_MS`` for it, so concurrent ``vance`` processes serialise
  instead of failing with "database is locked".
- ``transaction()`` nests: an inner call is a SAVEPOINT, as sqlite-utils'
  ``Database.atomic``.
- The schema is created and migrated on open (``migrations.py``).
- SQLite refusing a write for want of room or permission (``SQLITE_FULL``,
  ``SQLITE_READONLY``) is a ``StorageError`` naming the database file, as a
  refused file write is (docs/exit-codes.md).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vance_cli.base.errors import STORAGE_ERRNOS, StateError, StorageError
from vance_cli.state.migrations import migrate

REFUSED_WRITES = {sqlite3.SQLITE_FULL: "ENOSPC", sqlite3.SQLITE_READONLY: None}
"""SQLite result codes (primary) that mean the environment refuses the write, with the
errno name a StorageError reports."""

BUSY_TIMEOUT_MS = 30_000
"""How long a writer waits for the lock, in milliseconds (8 parallel CLIs need < 1 s each)."""

Row = sqlite3.Row


class Database:
    """An open state database.

    Args:
        conn: a connection in autocommit mode (``isolation_level=None``).
        path: its file, for messages.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._depth = 0

    @classmethod
    def open(cls, path: Path) -> Database:
        """Open (creating if needed) and migrate the database at ``path``.

        Raises:
            StateError: the path is a folder, or the file cannot be opened or
                is not a vance database.
            StorageError: its folder cannot be created (permission denied,
                read-only file system, disk full).
        """
        if path.is_dir():
            raise StateError(f"cannot open state database {path}: it is a folder, not a "
                             "database file", path=str(path))
        if not _empty_or_sqlite(path):
            raise StateError(f"cannot open state database {path}: file is not a database",
                             path=str(path))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno in STORAGE_ERRNOS:
                raise StorageError.from_os_error(exc, path.parent, writing=True) from None
            raise
        try:
            conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                check_same_thread=False,
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _set_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            db = cls(conn, path)
            migrate(db)
        except sqlite3.DatabaseError as exc:
            refused = refused_write(exc, path)
            if refused is not None:
                raise refused from None
            raise StateError(f"cannot open state database {path}: {exc}", path=str(path)) from None
        return db

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run a block atomically; nested calls use a SAVEPOINT.

        The outermost call starts ``BEGIN IMMEDIATE`` (takes the write lock
        now, waiting up to ``BUSY_TIMEOUT_MS``). Any exception rolls back the
        block and propagates.

        Yields:
            The connection.
        """
        if self._depth == 0:
            self.conn.execute("BEGIN IMMEDIATE")
            begin, commit, rollback = None, "COMMIT", "ROLLBACK"
        else:
            name = f"sp{self._depth}"
            begin, commit, rollback = f"SAVEPOINT {name}", f"RELEASE {name}", (
                f"ROLLBACK TO {name}; RELEASE {name}")
            self.conn.execute(begin)
        self._depth += 1
        try:
            yield self.conn
        except BaseException as exc:
            self._depth -= 1
            if self.conn.in_transaction:  # SQLite may have rolled back itself (disk full)
                for statement in rollback.split("; "):
                    self.conn.execute(statement)
            refused = refused_write(exc, self.path)
            if refused is not None:
                raise refused from None
            raise
        self._depth -= 1
        try:
            self.conn.execute(commit)
        except sqlite3.DatabaseError as exc:
            refused = refused_write(exc, self.path)
            if refused is None:
                raise
            if self._depth == 0 and self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise refused from None

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        """Run a read query and return all rows."""
        return self.conn.execute(sql, params).fetchall()

    def query_one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Row | None:
        """Run a read query and return the first row or None."""
        row: Row | None = self.conn.execute(sql, params).fetchone()
        return row

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


def _empty_or_sqlite(path: Path) -> bool:
    """False for a file SQLite would take for an empty database although it holds a byte.

    SQLite refuses any other file that is no database itself (``file is not a
    database``), but a file of one byte it writes over. Only ``stat`` is used: opening
    and closing the file here would drop the POSIX locks SQLite holds on it for this
    process's other connections, and their writes could be lost.
    """
    try:
        return path.stat().st_size != 1
    except OSError:  # missing, or unreadable: SQLite creates it or says why
        return True


def refused_write(exc: BaseException, path: Path) -> StorageError | None:
    """Return the StorageError for SQLite refusing a write (disk full, read-only), else None."""
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(exc, sqlite3.DatabaseError) or code is None or \
            code & 0xFF not in REFUSED_WRITES:
        return None
    return StorageError(f"cannot write {path}: {exc}", path=str(path),
                        errno=REFUSED_WRITES[code & 0xFF])


def _set_wal(conn: sqlite3.Connection) -> None:
    # Switching to WAL needs a moment of exclusive access; on a brand-new file
    # hit by several processes at once SQLite may answer "locked" without
    # calling the busy handler, so retry briefly.
    for attempt in range(50):
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 49:
                raise
            time.sleep(0.05)
