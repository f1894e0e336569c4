"""What differs between the two stores' SQL, and the small types both share.

Rules (docs/teams.md#one-sql-two-stores):
- vance's SQL is written once, in the subset SQLite and PostgreSQL both run:
  ``?`` placeholders, ``INSERT … RETURNING id`` for a new row's id (never
  ``lastrowid``), ``UPDATE … RETURNING``, text timestamps from
  ``base.clock.utc_now`` (never the database's ``now()``), and ``rowid`` only
  on ``processes``, whose PostgreSQL twin has an identity column of that name.
- A dialect turns that SQL into what its driver takes (``translate``) and
  names the statements that differ: how a write transaction takes the
  write lock.
- DDL differs most (``AUTOINCREMENT`` against identity columns, ``REAL``
  against ``DOUBLE PRECISION``): each migration has a twin per dialect
  (``migrations.py``, ``migrations_pg.py``).
- Notifications (``LISTEN``/``NOTIFY``) are PostgreSQL's alone: ``with_notify``
  makes an insert notify a channel in its own statement; ``Database.listen``
  gives a ``Listener`` there and None on SQLite (its readers poll).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from vance_cli.base.records import frozen


class Row(Protocol):
    """A result row: by column name or by position, ``keys()``, and ``dict(row)``."""

    def __getitem__(self, key: int | str, /) -> Any:
        """Return a column by name or position."""

    def keys(self) -> list[str]:
        """Return the column names."""

    def __iter__(self) -> Iterator[Any]:
        """Iterate over the values."""

    def __len__(self) -> int:
        """Return the number of columns."""


class Cursor(Protocol):
    """What ``Connection.execute`` returns: the rows and the count of rows changed."""

    @property
    def rowcount(self) -> int:
        """Rows the statement changed."""

    def fetchone(self) -> Any:
        """Return the first row, or None."""

    def fetchall(self) -> list[Any]:
        """Return every row."""


class Listener(Protocol):
    """A connection of its own that listens on one channel (PostgreSQL's ``LISTEN``)."""

    def wait(self, timeout: float) -> list[str] | None:
        """Return the payloads that arrived within ``timeout`` seconds (at the first one).

        Returns:
            The payloads (empty: none came in time), or None when the connection failed:
            the caller polls instead.
        """

    def close(self) -> None:
        """Stop listening and close the connection."""


class Connection(Protocol):
    """What store code calls on ``db.conn``: ``execute`` with ``?`` placeholders."""

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        """Run one statement."""


WRITE_LOCK_KEY = 0x76616E6365
"""The PostgreSQL advisory lock every write transaction takes (``vance`` in hex)."""


@frozen
class Dialect:
    """One store's SQL.

    Attributes:
        name: ``sqlite`` or ``postgresql``.
        begin: the statements that open a write transaction and take the write lock.
        paramstyle_percent: the driver takes ``%s`` (``?`` is rewritten, ``%`` doubled).
        notifies: the store has ``NOTIFY`` (``with_notify`` adds one).
    """

    name: str
    begin: tuple[str, ...]
    paramstyle_percent: bool = False
    notifies: bool = False

    def translate(self, sql: str) -> str:
        """Return ``sql`` as this dialect's driver takes it (placeholders)."""
        if not self.paramstyle_percent:
            return sql
        return sql.replace("%", "%%").replace("?", "%s")

    def with_notify(self, insert: str, channel: str, column: str) -> str:
        """Return ``insert`` so that its rows also notify ``channel``, in one statement.

        Args:
            insert: an ``INSERT`` without ``RETURNING``.
            channel: the channel (a name of vance's, not user text).
            column: the inserted column whose value is the payload (of the first row).

        Returns:
            On PostgreSQL one statement whose transaction holds the insert and the
            ``pg_notify`` (listeners are told when the rows are there, once); on SQLite
            ``insert`` itself. No row inserted (a conflict): no notification.
        """
        if not self.notifies:
            return insert
        return (f"WITH added AS ({insert} RETURNING {column})"
                f" SELECT pg_notify('{channel}', {column}) FROM added LIMIT 1")


SQLITE = Dialect("sqlite", ("BEGIN IMMEDIATE",))
"""SQLite: ``BEGIN IMMEDIATE`` takes the one write lock up front."""

POSTGRES = Dialect("postgresql", ("BEGIN", f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})"),
                   paramstyle_percent=True, notifies=True)
"""PostgreSQL: a transaction-scoped advisory lock serialises writers as ``BEGIN IMMEDIATE``
does, so every read-then-write of the store code keeps SQLite's guarantees."""
