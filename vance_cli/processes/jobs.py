"""Turns as jobs of a team's queue (procrastinate on the state's PostgreSQL server).

Rules (docs/teams.md#turns-as-jobs):
- In team mode nothing starts a worker process: a turn that is due is a job of
  the task ``vance.turn`` on the queue ``vance``, deferred on vance's own
  connection inside a vance transaction (the one that stores what makes the turn
  due, where the caller has it open), so the job and the input commit together.
- ``lock`` = the process id: one turn at a time per process, on any host;
  ``queueing_lock`` = the process id: at most one turn waits. A second defer
  while one waits is no error (the waiting job takes every pending input).
- ``vance worker`` (``vance_cli.team_worker``) runs the jobs.
- procrastinate is imported only here and there, and only in team mode.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from vance_cli.base.scope import SCOPE_KEYS
from vance_cli.state.db import Database

if TYPE_CHECKING:
    from procrastinate import App
    from procrastinate.types import JSONValue

    from vance_cli.workspace import Workspace

TURN_TASK = "vance.turn"
"""The task that runs a process's due turns (``team_worker.turn``)."""

QUEUE = "vance"
"""The queue turns wait in."""

FINAL = frozenset({"succeeded", "failed", "cancelled", "aborted"})
"""Job statuses after which the job runs no more."""

_APPS: weakref.WeakKeyDictionary[Database, App] = weakref.WeakKeyDictionary()


def app_for(db: Database) -> App:
    """Return the procrastinate app that defers on ``db``'s server (made once per database).

    It shares the store's pool; deferring passes the transaction's own connection.
    """
    app = _APPS.get(db)
    if app is None:
        import procrastinate  # the team extra: loaded only in team mode

        from vance_cli.state.pg import PgDatabase  # deferred: psycopg, team mode only

        assert isinstance(db, PgDatabase)
        app = procrastinate.App(connector=procrastinate.SyncPsycopgConnector())
        app.open(db.pool)
        _APPS[db] = app
    return app


def scope_of(ws: Workspace) -> dict[str, str]:
    """Return the scope a job carries (tenant, project, user, session, lang as resolved)."""
    return {key: str(ws.settings.get(key)) for key in SCOPE_KEYS}


def defer_turn(ws: Workspace, process_id: str, *, retry: bool = False,
               child: bool = False, close: bool = False) -> int | None:
    """Defer a ``vance.turn`` job for the process, in the open transaction or a new one.

    Args:
        ws: workspace on a team's PostgreSQL store.
        process_id: full id of a process with a turn due.
        retry: the job reopens a process closed ``STALE`` first (``vance process run``).
        child: one turn of an orchestrator's child, whose orchestrator reads its report
            (``run_turn(inline=True)``: no events, no wake-up).
        close: (child) a turn that answers closes the child ``DONE``.

    Returns:
        The job's id, or None when a turn of the process already waits in the queue
        (it takes this input too).

    Raises:
        StateError: the server failed.
    """
    from procrastinate.exceptions import AlreadyEnqueued

    from vance_cli.state.pg import PgDatabase  # deferred: psycopg, team mode only

    db = ws.db
    assert isinstance(db, PgDatabase)
    with db.transaction():
        task = app_for(db).configure_task(
            TURN_TASK, lock=process_id, queueing_lock=process_id, queue=QUEUE,
            connection=db.held())
        try:
            with db.transaction():  # a savepoint: a refused queueing lock keeps the rest
                scope: dict[str, JSONValue] = dict(scope_of(ws))
                return int(task.defer(process_id=process_id, scope=scope, retry=retry,
                                      child=child, close=close))
        except AlreadyEnqueued:
            return None


def cancel_turns(ws: Workspace, process_id: str) -> list[int]:
    """Cancel the process's waiting turn and ask its running one to abort, on any host.

    Returns:
        The ids of the jobs cancelled or asked to abort.
    """
    db = ws.db
    app = app_for(db)
    from vance_cli.state.pg import PgDatabase  # deferred: psycopg, team mode only

    assert isinstance(db, PgDatabase)
    done: list[int] = []
    with db.transaction():
        rows = db.query("SELECT id FROM procrastinate_jobs WHERE lock = ? AND status IN"
                        " ('todo', 'doing') ORDER BY id", (process_id,))
        for row in rows:
            if app.job_manager.cancel_job_by_id(int(row[0]), abort=True,
                                                connection=db.held()):
                done.append(int(row[0]))
    return done


def job_status(ws: Workspace, job_id: int) -> str | None:
    """Return a job's status (``todo``, ``doing``, ``succeeded`` …), or None if it is gone."""
    row = ws.db.query_one("SELECT status FROM procrastinate_jobs WHERE id = ?", (job_id,))
    return None if row is None else str(row[0])


def waiting_job(ws: Workspace, process_id: str) -> int | None:
    """Return the id of the process's job that waits or runs, or None."""
    row = ws.db.query_one("SELECT id FROM procrastinate_jobs WHERE lock = ? AND status IN"
                          " ('todo', 'doing') ORDER BY id DESC LIMIT 1", (process_id,))
    return None if row is None else int(row[0])
