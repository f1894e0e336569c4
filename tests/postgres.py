"""PostgreSQL for the tests: a database of its own per test, from a migrated template.

The server comes from ``VANCE_TEST_POSTGRES_URL`` (``.ci/postgres start`` prints one, as
``VANCE_STATE_URL=…``), read when this module is imported: the ``vance_home`` fixture clears
every ``VANCE_*`` variable before a test runs. Without it the PostgreSQL run of a test is
skipped with ``SKIP_REASON``.

Each pytest worker (xdist) migrates one template database once; each test gets
``CREATE DATABASE … TEMPLATE`` of it (a file copy on the server, no migration) and drops it
after, so tests and workers never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

ADMIN_URL = os.environ.get("VANCE_TEST_POSTGRES_URL") or None
"""The server's URL (its ``postgres`` database), or None: PostgreSQL runs are skipped."""

SKIP_REASON = ("no PostgreSQL server: set VANCE_TEST_POSTGRES_URL (e.g. the URL"
               " '.ci/postgres start' prints) to run the state and runtime tests on it")

_made: list[str] = []
"""This worker's template database, once made."""


def database_url(name: str) -> str:
    """Return the admin URL with its database replaced by ``name``."""
    assert ADMIN_URL is not None
    parts = urlsplit(ADMIN_URL)
    return urlunsplit(parts._replace(path="/" + name))


def _admin(sql: str) -> None:
    import psycopg

    assert ADMIN_URL is not None
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]  # names made here, not user text


def template() -> str:
    """Return this worker's migrated template database (created on first call)."""
    if not _made:
        from vance_cli.state.pg import PgDatabase

        name = f"vance_tpl_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        _admin(f"CREATE DATABASE {name}")
        PgDatabase.connect(database_url(name), migrating=True).close()
        _made.append(name)
    return _made[0]


def drop_template() -> None:
    """Drop this worker's template database, if it made one."""
    while _made and ADMIN_URL is not None:
        _admin(f"DROP DATABASE IF EXISTS {_made.pop()} WITH (FORCE)")


@contextmanager
def fresh_database(migrated: bool = True) -> Iterator[str]:
    """Create a database of its own and yield its URL; dropped after (connections too).

    Args:
        migrated: copy the migrated template; False: an empty database.
    """
    name = f"vance_t_{uuid.uuid4().hex[:16]}"
    _admin(f"CREATE DATABASE {name}" + (f" TEMPLATE {template()}" if migrated else ""))
    try:
        yield database_url(name)
    finally:
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def team_worker(concurrency: int = 4) -> Iterator[None]:
    """Run a team's worker (``vance worker``) in a thread of this process while the block runs.

    It serves the database ``VANCE_STATE_URL`` names. A job's settings are read when it runs,
    from this process's environment, so what a test sets later (its LLM server) applies.
    """
    import asyncio
    import logging
    import threading

    from vance_cli.base.config import load_settings
    from vance_cli.team_worker import Host

    # a turn a test leaves held keeps the worker's pool after the database is dropped: its
    # reconnect warnings would only be noise on stderr
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    host = Host(load_settings(), None, concurrency)
    ready = threading.Event()
    thread = threading.Thread(target=lambda: asyncio.run(host.run(lambda _: ready.set())),
                              name="vance-team-worker", daemon=True)
    thread.start()
    ready.wait(30)
    try:
        yield
    finally:
        host.stop()
        thread.join(30)  # its running turns end first; one held forever is left behind
