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
- ``Database`` is what the store code sees of either store: ``conn.execute``
  with ``?`` placeholders, ``transaction()``, ``query``. ``SqliteDatabase``
  is the embedded file; ``state/pg.py`` the PostgreSQL server, loaded only
  when ``state.url`` names one (``stores.open_state``).
- Every SQLite failure of the database names its file (``db_errors``): one
  refusing a write for want of room or permission is a ``StorageError``, as a
  refused file write is, any other a ``StateError`` (docs/exit-codes.md).
- A database that exists but cannot be written (a read-only home, a full
  disk) is opened read-only (``mode=ro``; ``immutable=1`` when SQLite cannot
  even create the WAL index beside it and no write-ahead log is waiting), so
  read commands work; any write on it raises ``Database.read_only`` at once.
  A database that needs a migration cannot be read so (the error says why).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from vance_cli.base.errors import STORAGE_ERRNOS, StateError, StorageError, VanceError
from vance_cli.state.db_errors import database_error
from vance_cli.state.dialect import SQLITE, Connection, Dialect, Listener, Row
from vance_cli.state.migrations import migrate, pending

FULL_ERRNOS = frozenset({"ENOSPC", "EDQUOT", "EFBIG"})
"""errno names of a refused write that a full disk or a size limit causes (not a read-only
home)."""

BUSY_TIMEOUT_MS = 30_000
"""How long a writer waits for the lock, in milliseconds (8 parallel CLIs need < 1 s each)."""

__all__ = ["Database", "Row", "SqliteDatabase"]


class Database:
    """An open state database, as the store code sees either store.

    Attributes:
        dialect: the SQL this store takes (``state/dialect.py``).
        integrity_errors: what its driver raises for a broken constraint.
        conn: runs one statement (``?`` placeholders); inside ``transaction()``
            it runs in the transaction.
        label: what messages name: the file, or the URL without its password.
        read_only: why the database was opened read-only (raised by every
            write), or None when it is writable.
        applied: the migrations applied when it was opened.
    """

    dialect: ClassVar[Dialect] = SQLITE
    integrity_errors: ClassVar[tuple[type[Exception], ...]] = (sqlite3.IntegrityError,)
    conn: Connection
    label: str
    read_only: StorageError | None = None
    applied: tuple[str, ...] = ()

    @staticmethod
    def open(path: Path) -> SqliteDatabase:
        """Open (creating if needed) and migrate the SQLite database at ``path``.

        Raises:
            As ``SqliteDatabase.open``.
        """
        return SqliteDatabase.open(path)

    def transaction(self) -> contextlib.AbstractContextManager[Connection]:
        """Run a block atomically, holding the write lock; nested calls use a SAVEPOINT."""
        raise NotImplementedError

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run a read query and return all rows."""
        return self.conn.execute(sql, params).fetchall()

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """Run a read query and return the first row or None."""
        row: Row | None = self.conn.execute(sql, params).fetchone()
        return row

    def listen(self, channel: str) -> Listener | None:
        """Return a listener on ``channel`` (a connection of its own), or None: poll instead.

        None on SQLite, which has no notifications, and when the server cannot be reached.
        """
        return None

    def close(self) -> None:
        """Close the connection (or the pool)."""
        raise NotImplementedError


class SqliteDatabase(Database):
    """The embedded store: one SQLite file.

    Args:
        conn: a connection in autocommit mode (``isolation_level=None``).
        path: its file, for messages.
        read_only: why the database was opened read-only (raised by every
            write), or None when it is writable.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path,
                 read_only: StorageError | None = None) -> None:
        self.sqlite = conn
        self.conn = conn
        self.path = path
        self.label = str(path)
        self.read_only = read_only
        self._depth = 0

    @classmethod
    def open(cls, path: Path) -> SqliteDatabase:
        """Open (creating if needed) and migrate the database at ``path``.

        A database that exists but cannot be written is opened read-only.

        Raises:
            StateError: the path is a folder, or the file cannot be opened or
                is not a vance database.
            StorageError: it cannot be created (permission denied, read-only
                file system, disk full), or it is read-only and needs a migration.
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
            if exc.errno not in STORAGE_ERRNOS:
                raise
            refused = StorageError.from_os_error(exc, path.parent, writing=True)
            if not path.is_file():
                raise refused from None
            return cls._open_read_only(path, refused)
        try:
            return cls._open_writable(path)
        except StorageError as exc:
            if not path.is_file():
                raise
            return cls._open_read_only(path, exc)

    @classmethod
    def _open_writable(cls, path: Path) -> SqliteDatabase:
        conn: _Connection | None = None
        try:
            conn = _connect(path)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _set_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            db = cls(conn, path)
            db.applied = tuple(migrate(db))
        except (sqlite3.DatabaseError, VanceError) as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, VanceError):
                raise
            known = database_error(exc, path, opening=True)
            if known is None:
                raise
            raise known from None
        conn.path = path  # from now on its failures name the file
        return db

    @classmethod
    def _open_read_only(cls, path: Path, refused: StorageError) -> SqliteDatabase:
        """Open an existing database for reading only, or raise why it cannot be written."""
        why, name = refused, refused.details.get("errno")
        if name not in FULL_ERRNOS:
            cause = (os.strerror(getattr(errno, name)) if name else
                     refused.message.split(": ", 1)[-1])
            why = StorageError(f"cannot write {path}: the home is read-only ({cause})",
                               path=str(path), errno=name)
        wal = path.with_name(path.name + "-wal")
        modes = ["mode=ro"] + ([] if wal.exists() and wal.stat().st_size else
                               ["mode=ro&immutable=1"])  # immutable would not see the WAL
        for mode in modes:
            conn: _Connection | None = None
            try:
                conn = _connect(path, f"{path.as_uri()}?{mode}")
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                waiting = pending(conn)
            except sqlite3.DatabaseError:
                if conn is not None:
                    conn.close()
                continue
            if waiting:
                conn.close()
                raise StorageError(f"{why.message}; it cannot be read either: it needs the "
                                   f"upgrade {waiting[0]}, which writes", path=str(path),
                                   errno=why.details.get("errno"))
            conn.path = path
            return cls(conn, path, read_only=why)
        raise why

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """Run a block atomically; nested calls use a SAVEPOINT.

        The outermost call starts ``BEGIN IMMEDIATE`` (takes the write lock
        now, waiting up to ``BUSY_TIMEOUT_MS``). Any exception rolls back the
        block and propagates (a SQLite failure as ``db_errors`` reads it).

        Raises:
            StorageError: the database was opened read-only (``read_only``).

        Yields:
            The connection.
        """
        if self.read_only is not None:
            raise self.read_only
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
            if self.sqlite.in_transaction:  # SQLite may have rolled back itself (disk full)
                for statement in rollback.split("; "):
                    self.conn.execute(statement)
            known = database_error(exc, self.path)
            if known is not None:
                raise known from None
            raise
        self._depth -= 1
        try:
            self.conn.execute(commit)
        except (sqlite3.DatabaseError, VanceError) as exc:
            known = exc if isinstance(exc, VanceError) else database_error(exc, self.path)
            if known is None:
                raise
            if self._depth == 0 and self.sqlite.in_transaction:
                sqlite3.Connection.execute(self.sqlite, "ROLLBACK")
            raise known from None

    def close(self) -> None:
        """Close the connection."""
        self.sqlite.close()


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


class _Connection(sqlite3.Connection):
    """A connection whose SQLite failures, once ``path`` is set, name its file (``db_errors``)."""

    path: Path | None = None

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        """Run ``sql``; a failure of the database becomes the VanceError naming ``path``."""
        try:
            return super().execute(sql, parameters)
        except sqlite3.DatabaseError as exc:
            known = None if self.path is None else database_error(exc, self.path)
            if known is None:
                raise
            raise known from None


def _connect(path: Path, uri: str | None = None) -> _Connection:
    """Connect to ``path`` (or the ``file:`` ``uri`` naming it) in autocommit mode, rows as Row."""
    conn = sqlite3.connect(uri or path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False, uri=uri is not None, factory=_Connection)
    conn.row_factory = sqlite3.Row
    return conn


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
