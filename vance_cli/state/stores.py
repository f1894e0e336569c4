"""Which store holds the state: the SQLite file, or a PostgreSQL server (``state.url``).

``Settings.state_target`` names it: a ``Path`` is the embedded file, a ``str`` a
``postgresql://`` URL. The PostgreSQL module (and psycopg) is imported only for a URL,
so a command with ``state.url`` unset never loads it (docs/teams.md).
"""

from __future__ import annotations

from pathlib import Path

from vance_cli.state.db import Database


def open_state(target: Path | str) -> Database:
    """Open the state store ``target`` names: a SQLite file, or a PostgreSQL URL.

    A SQLite file is created and migrated as needed (``Database.open``); a
    PostgreSQL database must have been migrated (``vance migrate``).

    Raises:
        StateError: as ``Database.open``; a PostgreSQL database is unreachable or
            not migrated, or ``vance[team]`` is not installed.
        StorageError: as ``Database.open``.
    """
    if isinstance(target, Path):
        return Database.open(target)
    from vance_cli.state.pg import PgDatabase  # heavy: psycopg, only when a server is named

    return PgDatabase.connect(target)


def migrate_state(target: Path | str) -> tuple[str, list[str]]:
    """Apply the pending migrations of the store ``target`` names (``vance migrate``).

    Returns:
        What messages call the store (the file, or the URL without its password), and the
        names of the migrations applied now (empty: it was up to date).

    Raises:
        As ``open_state``; a PostgreSQL database is never refused for being unmigrated.
    """
    if isinstance(target, Path):
        db: Database = Database.open(target)
    else:
        from vance_cli.state.pg import PgDatabase  # heavy: psycopg, only for a server

        db = PgDatabase.connect(target, migrating=True)
    try:
        return db.label, list(db.applied)
    finally:
        db.close()
