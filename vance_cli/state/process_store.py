"""SQL for processes and their status transitions.

The rules (which transitions are legal, what a process looks like) live in
``vance_cli.processes.model``; this module only reads and writes rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from vance_cli.base.clock import utc_now
from vance_cli.state.db import Database, Row

_COLUMNS = (
    "id, tenant, session, name, recipe, engine, title, goal, params, steer_content, status,"
    " close_reason, parent_process_id, outcome, result, turns, prompt, state, created_at,"
    " updated_at, heartbeat_at, worker_pid, worker, takeovers, spawn_key"
)


def insert_process(db: Database, row: Mapping[str, Any]) -> None:
    """Insert one process row (keys as the column names; ``params``/``outcome`` as mappings).

    Raises:
        IntegrityError: the (tenant, session, name) is taken or the parent is unknown (one
            of ``db.integrity_errors``).
    """
    values = dict(row)
    values["params"] = json.dumps(values.get("params") or {}, ensure_ascii=False)
    values["outcome"] = (json.dumps(values["outcome"]) if values.get("outcome") is not None
                         else None)
    values.setdefault("turns", 0)
    values.setdefault("takeovers", 0)
    cols = [c.strip() for c in _COLUMNS.split(",")]
    db.conn.execute(
        f"INSERT INTO processes ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
        [values.get(c) for c in cols],
    )


def record_transition(db: Database, process_id: str, old: str | None, new: str,
                      close_reason: str | None = None, note: str | None = None) -> None:
    """Append a status change to ``process_transitions`` (the audit trail)."""
    db.conn.execute(
        "INSERT INTO process_transitions (process_id, from_status, to_status, close_reason,"
        " note, at) VALUES (?, ?, ?, ?, ?, ?)",
        (process_id, old, new, close_reason, note, utc_now()),
    )


def update_status(db: Database, process_id: str, expected: str, new: str,
                  close_reason: str | None = None, outcome: Mapping[str, Any] | None = None
                  ) -> bool:
    """Change status only if it is still ``expected`` (compare-and-set).

    Returns:
        True when the row changed; False when another writer changed it first.
    """
    return change_status(db, process_id, expected, new, close_reason, outcome) is not None


def change_status(db: Database, process_id: str, expected: str, new: str,
                  close_reason: str | None = None, outcome: Mapping[str, Any] | None = None,
                  *, result: str | None = None, worker_pid: int | None = None,
                  worker: str | None = None, owner: str | None = None,
                  turn: int | None = None) -> Row | None:
    """``update_status`` that returns the changed row (``UPDATE … RETURNING``, no re-read).

    Args:
        db: the state database.
        process_id: full id.
        expected: the status the caller read (compare-and-set).
        new: the status to set.
        close_reason: its close reason (a close), or None.
        outcome: its outcome, or None to keep it.
        result: also store this result text (a settling turn's reply).
        worker_pid: also record the claiming worker's OS pid, with a heartbeat stamp.
        worker: also record the claiming worker's identity.
        owner: change only while this worker holds the process (compare-and-set on
            ``worker`` too: a worker whose turn was taken over settles nothing).
        turn: change only while this is the process's turn (compare-and-set on ``turns``).

    Returns:
        The row as it is now; None when another writer changed the status (or the
        owner, or the turn) first.
    """
    now = utc_now()
    extra = ""
    values: list[Any] = []
    if result is not None:
        extra += ", result = ?"
        values.append(result)
    if worker_pid is not None:
        extra += ", worker_pid = ?, heartbeat_at = ?"
        values += [worker_pid, now]
    if worker is not None:
        extra += ", worker = ?"
        values.append(worker)
    where, also = "", list[Any]()
    if owner is not None:
        where += " AND worker = ?"
        also.append(owner)
    if turn is not None:
        where += " AND turns = ?"
        also.append(turn)
    rows = db.query(
        "UPDATE processes SET status = ?, close_reason = COALESCE(?, close_reason),"
        f" outcome = COALESCE(?, outcome), updated_at = ?{extra} WHERE id = ? AND status = ?"
        f"{where} RETURNING {_COLUMNS}",
        (new, close_reason, json.dumps(outcome) if outcome is not None else None, now,
         *values, process_id, expected, *also),
    )
    return rows[0] if rows else None


def set_result(db: Database, process_id: str, text: str | None) -> None:
    """Store the latest result text of a process (its last reply)."""
    db.conn.execute("UPDATE processes SET result = ?, updated_at = ? WHERE id = ?",
                    (text, utc_now(), process_id))


def set_state(db: Database, process_id: str, state: Mapping[str, Any] | None) -> None:
    """Replace the engine state of a process (JSON), or clear it with None."""
    db.conn.execute("UPDATE processes SET state = ?, updated_at = ? WHERE id = ?",
                    (json.dumps(dict(state), ensure_ascii=False) if state is not None else None,
                     utc_now(), process_id))


def set_params(db: Database, process_id: str, params: Mapping[str, Any]) -> None:
    """Replace the params of a process."""
    db.conn.execute("UPDATE processes SET params = ?, updated_at = ? WHERE id = ?",
                    (json.dumps(dict(params), ensure_ascii=False), utc_now(), process_id))


def next_turn(db: Database, process_id: str) -> int:
    """Count one more turn for the process and return its number (1 for the first)."""
    db.conn.execute("UPDATE processes SET turns = turns + 1 WHERE id = ?", (process_id,))
    row = db.query_one("SELECT turns FROM processes WHERE id = ?", (process_id,))
    return int(row[0]) if row else 0


def count_turn(db: Database, process_id: str) -> Row | None:
    """Count one more turn for the process and return its row as it is now.

    Returns:
        The row (``turns``: the new turn's number), or None when there is no such process.
    """
    rows = db.query(f"UPDATE processes SET turns = turns + 1 WHERE id = ? RETURNING {_COLUMNS}",
                    (process_id,))
    return rows[0] if rows else None


def reopen_stale(db: Database, process_id: str) -> bool:
    """Move a ``CLOSED/STALE`` process back to ``IDLE`` (compare-and-set), for a retry.

    Returns:
        True when the row changed.
    """
    cur = db.conn.execute(
        "UPDATE processes SET status = 'IDLE', close_reason = NULL, updated_at = ?"
        " WHERE id = ? AND status = 'CLOSED' AND close_reason = 'STALE'",
        (utc_now(), process_id))
    return cur.rowcount == 1


def set_worker(db: Database, process_id: str, pid: int | None, worker: str | None) -> None:
    """Record the worker running the process (OS pid, identity) and stamp its heartbeat."""
    db.conn.execute(
        "UPDATE processes SET worker_pid = ?, worker = ?, heartbeat_at = ?, updated_at = ?"
        " WHERE id = ?", (pid, worker, utc_now(), utc_now(), process_id),
    )


def touch_heartbeat(db: Database, process_id: str) -> None:
    """Stamp the heartbeat of a running process with the current time."""
    db.conn.execute("UPDATE processes SET heartbeat_at = ? WHERE id = ?", (utc_now(), process_id))


def stamp_heartbeat(db: Database, process_id: str, worker: str) -> bool:
    """Stamp the heartbeat if the process is still RUNNING under ``worker``.

    Returns:
        False when the process was closed, idled or taken over meanwhile (the
        worker should stop).
    """
    cur = db.conn.execute(
        "UPDATE processes SET heartbeat_at = ? WHERE id = ? AND status = 'RUNNING'"
        " AND worker = ?", (utc_now(), process_id, worker))
    return cur.rowcount == 1


def take_over(db: Database, process_id: str, previous: str | None, worker: str,
              pid: int) -> Row | None:
    """Move a RUNNING process from worker ``previous`` to ``worker`` (compare-and-set).

    Counts one more takeover and stamps the heartbeat.

    Returns:
        The row as it is now, or None when it is no longer RUNNING under ``previous``.
    """
    owner = "worker IS NULL" if previous is None else "worker = ?"
    rows = db.query(
        "UPDATE processes SET worker = ?, worker_pid = ?, heartbeat_at = ?, updated_at = ?,"
        f" takeovers = takeovers + 1 WHERE id = ? AND status = 'RUNNING' AND {owner}"
        f" RETURNING {_COLUMNS}",
        (worker, pid, utc_now(), utc_now(), process_id,
         *(() if previous is None else (previous,))))
    return rows[0] if rows else None


def release_spawn_key(db: Database, process_id: str) -> None:
    """Clear a child's ``spawn_key`` (it failed: the key goes to the child made in its place)."""
    db.conn.execute("UPDATE processes SET spawn_key = NULL WHERE id = ?", (process_id,))


def find_spawned(db: Database, parent_id: str, spawn_key: str) -> Row | None:
    """Return the child of ``parent_id`` spawned under ``spawn_key``, or None."""
    return db.query_one(f"SELECT {_COLUMNS} FROM processes WHERE parent_process_id = ?"
                        " AND spawn_key = ?", (parent_id, spawn_key))


def get_by_id(db: Database, process_id: str) -> Row | None:
    """Return the row with this id in any tenant (for code that already holds a full id)."""
    return db.query_one(f"SELECT {_COLUMNS} FROM processes WHERE id = ?", (process_id,))


def get_process(db: Database, tenant: str, process_id: str) -> Row | None:
    """Return the row with exactly this id in ``tenant``, or None."""
    return db.query_one(f"SELECT {_COLUMNS} FROM processes WHERE tenant = ? AND id = ?",
                        (tenant, process_id))


def find_by_prefix(db: Database, tenant: str, prefix: str, limit: int = 2) -> list[Row]:
    """Return up to ``limit`` rows whose id starts with ``prefix`` (for short ids)."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return db.query(
        f"SELECT {_COLUMNS} FROM processes WHERE tenant = ? AND id LIKE ? ESCAPE '\\' LIMIT ?",
        (tenant, escaped + "%", limit),
    )


def find_by_name(db: Database, tenant: str, session: str, name: str) -> Row | None:
    """Return the process named ``name`` in (tenant, session), or None."""
    return db.query_one(
        f"SELECT {_COLUMNS} FROM processes WHERE tenant = ? AND session = ? AND name = ?",
        (tenant, session, name),
    )


def session_names(db: Database, tenant: str, session: str, limit: int = 1000) -> list[str]:
    """Return the names of the newest ``limit`` processes of (tenant, session)."""
    rows = db.query("SELECT name FROM processes WHERE tenant = ? AND session = ?"
                    " ORDER BY created_at DESC LIMIT ?", (tenant, session, limit))
    return [row["name"] for row in rows]


def list_processes(db: Database, tenant: str, session: str | None = None,
                   statuses: tuple[str, ...] = (), parent: str | None = None,
                   limit: int | None = None) -> list[Row]:
    """Return processes of ``tenant``, newest first, optionally filtered.

    Args:
        db: the database.
        tenant: tenant id.
        session: only this session when given.
        statuses: only these statuses when non-empty.
        parent: only children of this process id when given.
        limit: at most this many rows.
    """
    where, params = ["tenant = ?"], [tenant]
    if session is not None:
        where.append("session = ?")
        params.append(session)
    if statuses:
        where.append(f"status IN ({', '.join('?' for _ in statuses)})")
        params.extend(statuses)
    if parent is not None:
        where.append("parent_process_id = ?")
        params.append(parent)
    sql = f"SELECT {_COLUMNS} FROM processes WHERE {' AND '.join(where)}"
    sql += " ORDER BY created_at DESC, rowid DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return db.query(sql, params)


_CHUNK = 500
"""Ids per statement when removing processes (SQLite limits the bound parameters)."""


def count_children(db: Database, parent_id: str) -> int:
    """Return how many processes were ever started as children of ``parent_id``."""
    row = db.query_one("SELECT count(*) AS n FROM processes WHERE parent_process_id = ?",
                       (parent_id,))
    return int(row["n"]) if row else 0


def count_live(db: Database, tenant: str, session: str) -> int:
    """Return how many processes of a session are not CLOSED."""
    row = db.query_one("SELECT count(*) AS n FROM processes WHERE tenant = ? AND session = ?"
                       " AND status != 'CLOSED'", (tenant, session))
    return int(row["n"]) if row else 0


def delete_closed(db: Database, process_ids: Sequence[str]) -> list[str]:
    """Remove CLOSED processes with everything recorded about them; call inside a transaction.

    Their transitions, turns, messages, LLM calls and the events addressed to
    them go too; their children stay, without a parent. Events they sent to
    other processes stay with their recipients, and decision-log rows keep
    the id they started (a log is history).

    Returns:
        The ids removed (a process no longer CLOSED is kept).
    """
    removed: list[str] = []
    for start in range(0, len(process_ids), _CHUNK):
        ids = list(process_ids[start:start + _CHUNK])
        marks = ", ".join("?" for _ in ids)
        closed = [r["id"] for r in db.query(
            f"SELECT id FROM processes WHERE status = 'CLOSED' AND id IN ({marks})", ids)]
        if not closed:
            continue
        marks = ", ".join("?" for _ in closed)
        for table in ("process_transitions", "turns", "messages", "llm_calls", "tool_grants",
                      "calls_in_flight", "stream_chunks"):
            db.conn.execute(f"DELETE FROM {table} WHERE process_id IN ({marks})", closed)
        db.conn.execute(f"DELETE FROM events WHERE recipient_process_id IN ({marks})", closed)
        db.conn.execute(f"UPDATE processes SET parent_process_id = NULL"
                        f" WHERE parent_process_id IN ({marks})", closed)
        db.conn.execute(f"DELETE FROM processes WHERE id IN ({marks})", closed)
        removed += closed
    return removed


def is_unique_violation(exc: Exception) -> bool:
    """True when ``exc`` is the (tenant, session, name) uniqueness violation (either store)."""
    text = str(exc)
    return ("UNIQUE" in text and "processes.name" in text) or \
        "processes_tenant_session_name_key" in text
