"""The PostgreSQL store: the state database on a server, through psycopg 3 and a pool.

Loaded only when ``state.url`` names a ``postgresql://`` server (``db.open_state``);
needs ``vance[team]``. Rules (docs/teams.md):
- The store code's SQL runs unchanged: ``dialect.POSTGRES`` rewrites ``?`` to
  ``%s``; rows read by name and by position as SQLite's do.
- One pool per open database. A ``transaction()`` holds one pooled connection
  for its thread until it ends; a statement outside a transaction borrows a
  connection for itself (autocommit) and returns its rows already read.
- A write transaction takes the one advisory write lock first (as SQLite's
  ``BEGIN IMMEDIATE``), waiting up to ``LOCK_TIMEOUT_S``; nested ones are
  SAVEPOINTs.
- The database is migrated only by ``vance migrate``: opening one that needs
  a migration raises ``StateError`` naming that command.
- ``listen`` opens a connection of its own, outside the pool, for ``LISTEN``
  (a follower waits on it); a failure there makes the caller poll, never raises.
- Failures name the server by its URL without the password: a lock not had in
  time is ``DatabaseLocked``, an unreachable server or any other failure of
  the database ``StateError``; a broken constraint or bad SQL (a bug of vance)
  stays as psycopg raised it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql as pg_sql
from psycopg.rows import RowMaker
from psycopg_pool import ConnectionPool, PoolTimeout

from vance_cli.base.config import mask_url
from vance_cli.base.errors import DatabaseLocked, StateError, VanceError
from vance_cli.state.db import Database
from vance_cli.state.dialect import POSTGRES, Connection, Cursor, Listener
from vance_cli.state.migrations import migrate, pending

LOCK_TIMEOUT_S = 30
"""How long a writer waits for the write lock (as SQLite's busy timeout)."""

CONNECT_TIMEOUT_S = 10
"""How long opening a connection to the server may take."""

POOL_MAX = 8
"""Connections one open database keeps at most (threads of one worker share them)."""


class PgRow(tuple[Any, ...]):
    """A row read by column name or position, as ``sqlite3.Row``."""

    _names: tuple[str, ...]

    def __new__(cls, values: Sequence[Any], names: tuple[str, ...]) -> PgRow:
        """Return the row of ``values`` named ``names``."""
        row = super().__new__(cls, values)
        row._names = names
        return row

    def __getitem__(self, key: Any) -> Any:
        """Return a column by name, or by position."""
        if isinstance(key, str):
            try:
                return super().__getitem__(self._names.index(key))
            except ValueError:
                raise IndexError(f"no such column: {key}") from None
        return super().__getitem__(key)

    def keys(self) -> list[str]:
        """Return the column names."""
        return list(self._names)


def _row_factory(cursor: psycopg.Cursor[Any]) -> RowMaker[PgRow]:
    names = tuple(column.name for column in cursor.description or ())
    return lambda values: PgRow(values, names)


class _Result:
    """A statement's rows, read before its connection went back to the pool."""

    def __init__(self, rows: list[PgRow], rowcount: int) -> None:
        self._rows, self._rowcount = rows, rowcount

    @property
    def rowcount(self) -> int:
        return self._rowcount

    def fetchone(self) -> PgRow | None:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[PgRow]:
        return list(self._rows)


class _Statements:
    """``db.conn``: runs a statement in this thread's transaction, else on a pooled connection."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        """Run ``sql`` (``?`` placeholders); a failure of the server becomes a VanceError."""
        db = self._db
        text = POSTGRES.translate(sql)
        params = tuple(parameters)  # never None: psycopg would then leave ``%%`` as it is
        held = db.held()
        try:
            if held is not None:
                return _run(held, text, params)
            with db.pool.connection() as conn:
                return _run(conn, text, params)
        except (psycopg.Error, PoolTimeout) as exc:
            known = db.error(exc)
            if known is None:
                raise
            raise known from None


    def execute_script(self, sql: str) -> None:
        """Run several statements as written (no placeholders), in this thread's transaction.

        For SQL that is not vance's own (the job queue's schema): nothing is rewritten.

        Raises:
            RuntimeError: no transaction is open in this thread.
        """
        held = self._db.held()
        if held is None:
            raise RuntimeError("execute_script runs inside a transaction")
        held.execute(sql)  # not vance's SQL: run as written


def _run(conn: psycopg.Connection[PgRow], sql: str, params: tuple[Any, ...]) -> _Result:
    cur = conn.execute(sql, params)
    rows = cur.fetchall() if cur.description is not None else []
    return _Result(rows, cur.rowcount)


class _Probe:
    """A single connection as ``Connection`` (``?`` placeholders), for the check on opening."""

    def __init__(self, conn: psycopg.Connection[PgRow]) -> None:
        self._conn = conn

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        """Run ``sql`` on the connection."""
        return _run(self._conn, POSTGRES.translate(sql), tuple(parameters))


class PgDatabase(Database):
    """The state database on a PostgreSQL server.

    Args:
        url: the server's ``postgresql://`` URL.
        pool: an open pool of autocommit connections to it.
    """

    dialect = POSTGRES
    integrity_errors = (psycopg.IntegrityError,)

    def __init__(self, url: str, pool: ConnectionPool[psycopg.Connection[PgRow]]) -> None:
        self.url = url
        self.label = mask_url(url)
        self.pool = pool
        self.conn: Connection = _Statements(self)
        self._local = threading.local()

    @classmethod
    def connect(cls, url: str, *, migrating: bool = False) -> PgDatabase:
        """Open a pool to the server at ``url`` and check its schema.

        Args:
            url: ``postgresql://…``.
            migrating: ``vance migrate`` opens it: pending migrations are applied
                (``applied`` names them) instead of refused.

        Raises:
            StateError: the server cannot be reached, or the database needs a
                migration (and ``migrating`` is False).
        """
        label = mask_url(url)
        options = {"autocommit": True, "row_factory": _row_factory,
                   "connect_timeout": CONNECT_TIMEOUT_S}
        try:  # one connection first: an unreachable server fails at once, with its reason
            probe = psycopg.connect(url, autocommit=True, row_factory=_row_factory,
                                    connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as exc:
            raise StateError(f"cannot reach state database {label}: {_first_line(exc)}",
                             url=label) from None
        with probe:
            waiting = [] if migrating else pending(_Probe(probe), POSTGRES)
        if waiting:
            raise StateError(f"state database {label} is not migrated ({len(waiting)}"
                             f" migrations pending, the last {waiting[-1]}): run"
                             " 'vance migrate'", url=label, pending=waiting)

        def configure(conn: psycopg.Connection[Any]) -> None:
            conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT_S}s'")

        pool: ConnectionPool[psycopg.Connection[PgRow]] = ConnectionPool(
            url, min_size=1, max_size=POOL_MAX, open=True, configure=configure,
            kwargs=options, timeout=CONNECT_TIMEOUT_S, name="vance-state", num_workers=1)
        db = cls(url, pool)
        if migrating:
            try:
                db.applied = tuple(migrate(db))
            except BaseException:
                pool.close()
                raise
        return db

    def held(self) -> psycopg.Connection[PgRow] | None:
        """Return the connection of this thread's open transaction, or None."""
        conn: psycopg.Connection[PgRow] | None = getattr(self._local, "conn", None)
        return conn

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """Run a block atomically, holding the write lock; nested calls use a SAVEPOINT.

        Raises:
            DatabaseLocked: the write lock was not had within ``LOCK_TIMEOUT_S``.
            StateError: the server failed (the block was rolled back).

        Yields:
            ``conn``, whose statements now run in the transaction.
        """
        held = self.held()
        if held is not None:
            with held.transaction():  # a SAVEPOINT
                yield self.conn
            return
        try:
            with self.pool.connection() as conn:
                self._local.conn = conn
                try:
                    with conn.transaction():
                        for statement in POSTGRES.begin[1:]:  # psycopg sends the BEGIN
                            conn.execute(statement)
                        yield self.conn
                finally:
                    self._local.conn = None
        except (psycopg.Error, PoolTimeout) as exc:
            known = self.error(exc)
            if known is None:
                raise
            raise known from None

    def error(self, exc: BaseException) -> VanceError | None:
        """Return the VanceError a psycopg failure stands for, or None for a bug of vance."""
        if isinstance(exc, pg_errors.LockNotAvailable):
            return DatabaseLocked(f"state database {self.label}: {_first_line(exc)} (another"
                                  " process holds its lock)", url=self.label)
        if isinstance(exc, psycopg.IntegrityError | psycopg.ProgrammingError):
            return None
        if isinstance(exc, psycopg.Error | PoolTimeout):
            return StateError(f"state database {self.label}: {_first_line(exc)}",
                              url=self.label)
        return None

    def listen(self, channel: str) -> Listener | None:
        """Return a listener on ``channel``: a connection of its own (autocommit), or None.

        None when the server cannot be reached or refuses ``LISTEN``: the caller polls.
        """
        conn: psycopg.Connection[Any] | None = None
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
            conn.execute(pg_sql.SQL("LISTEN {}").format(pg_sql.Identifier(channel)))
        except psycopg.Error:
            if conn is not None:
                conn.close()
            return None
        return _Listener(conn)

    def close(self) -> None:
        """Close the pool (and every connection it holds)."""
        self.pool.close()


class _Listener:
    """``Listener`` on one psycopg connection that has run ``LISTEN``."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def wait(self, timeout: float) -> list[str] | None:
        """Return the payloads that came within ``timeout`` seconds; None: the connection failed."""
        try:
            return [n.payload for n in self._conn.notifies(timeout=timeout, stop_after=1)]
        except psycopg.Error:
            return None

    def close(self) -> None:
        """Close the connection (which ends its ``LISTEN``)."""
        self._conn.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
