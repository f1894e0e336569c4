"""SQL for a process's conversation: its messages, its turns and its LLM calls (m005, m010).

The rules (what an input is, when a turn consumes it, what a turn records)
live in ``vance_cli.processes.inputs`` and ``runtime``; this module only reads and writes
rows. A message whose ``turn`` is NULL is a pending input: stored before any
turn runs, consumed (``turn`` set) only when a turn settles, so a turn that
dies leaves its inputs pending for a retry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from vance_cli.base.clock import utc_now
from vance_cli.state.db import Database, Row

_MESSAGE = ("id, process_id, role, kind, content, created_at, turn, model, tokens_in,"
            " tokens_out, meta")


def add_message(db: Database, process_id: str, role: str, kind: str, content: str, *,
                turn: int | None = None, model: str | None = None,
                tokens_in: int | None = None, tokens_out: int | None = None,
                meta: Mapping[str, Any] | None = None) -> int:
    """Append one message and return its id (``turn`` None: a pending input)."""
    row = db.conn.execute(
        f"INSERT INTO messages ({_MESSAGE.removeprefix('id, ')}) VALUES"
        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (process_id, role, kind, content, utc_now(), turn, model, tokens_in, tokens_out,
         json.dumps(dict(meta or {}), ensure_ascii=False))).fetchall()[0]
    return int(row[0])


def pending_inputs(db: Database, process_id: str) -> list[Row]:
    """Return the inputs no turn has consumed yet, oldest first."""
    return db.query(f"SELECT {_MESSAGE} FROM messages WHERE process_id = ? AND turn IS NULL"
                    " ORDER BY id", (process_id,))


def waiting_counts(db: Database, process_ids: Sequence[str]) -> dict[str, int]:
    """Return how many inputs no turn has consumed yet, per process (absent: none)."""
    if not process_ids:
        return {}
    marks = ", ".join("?" for _ in process_ids)
    rows = db.query(f"SELECT process_id, COUNT(*) AS n FROM messages WHERE turn IS NULL"
                    f" AND process_id IN ({marks}) GROUP BY process_id",
                    tuple(process_ids))
    return {row["process_id"]: int(row["n"]) for row in rows}


def last_message_id(db: Database) -> int:
    """Return the id of the newest message of any process (0: none yet)."""
    row = db.query_one("SELECT MAX(id) AS last FROM messages")
    return int(row["last"] or 0) if row is not None else 0


def replies_after(db: Database, tenant: str, session: str, after_id: int) -> list[Row]:
    """Return the replies of a session's top-level processes newer than ``after_id``.

    Rows: ``id``, ``process_id``, ``recipe``, ``content``, oldest first; a
    child's replies are left out (its parent reports them).
    """
    return db.query(
        "SELECT m.id AS id, m.process_id AS process_id, p.recipe AS recipe,"
        " m.content AS content FROM messages m JOIN processes p ON p.id = m.process_id"
        " WHERE m.id > ? AND m.role = 'assistant' AND p.tenant = ? AND p.session = ?"
        " AND p.parent_process_id IS NULL ORDER BY m.id", (after_id, tenant, session))


def consume(db: Database, ids: Sequence[int], turn: int) -> None:
    """Mark inputs as consumed by ``turn``."""
    if ids:
        marks = ", ".join("?" for _ in ids)
        db.conn.execute(f"UPDATE messages SET turn = ? WHERE id IN ({marks}) AND turn IS NULL",
                        (turn, *ids))


def history(db: Database, process_id: str, limit: int | None = None) -> list[Row]:
    """Return the consumed inputs and the replies of a process, oldest first.

    Args:
        db: the database.
        process_id: the process.
        limit: only the newest ``limit`` messages (still oldest first), or all.
    """
    sql = (f"SELECT {_MESSAGE} FROM messages WHERE process_id = ? AND turn IS NOT NULL"
           " ORDER BY id")
    if limit is not None:
        sql = f"SELECT * FROM ({sql[:-len(' ORDER BY id')]} ORDER BY id DESC LIMIT {int(limit)})" \
              " ORDER BY id"
    return db.query(sql, (process_id,))


def transcript(db: Database, process_id: str) -> list[Row]:
    """Return every message of a process (pending inputs too), oldest first."""
    return db.query(f"SELECT {_MESSAGE} FROM messages WHERE process_id = ? ORDER BY id",
                    (process_id,))


def message_number(db: Database, process_id: str, message_id: int) -> int:
    """Return the place of message ``message_id`` in its process's transcript, from 1."""
    row = db.query("SELECT count(*) AS n FROM messages WHERE process_id = ? AND id <= ?",
                   (process_id, message_id))[0]
    return int(row["n"])


def start_turn(db: Database, process_id: str, number: int, pid: int) -> None:
    """Record that turn ``number`` started under worker ``pid``."""
    db.conn.execute("INSERT INTO turns (process_id, number, started_at, outcome, worker_pid)"
                    " VALUES (?, ?, ?, 'RUNNING', ?)", (process_id, number, utc_now(), pid))


def end_turn(db: Database, process_id: str, number: int, outcome: str,
             reason: str | None = None) -> None:
    """Record how turn ``number`` ended (``IDLE``, ``BLOCKED``, ``DONE``, ``FAILED`` …)."""
    db.conn.execute("UPDATE turns SET ended_at = ?, outcome = ?, reason = ? WHERE"
                    " process_id = ? AND number = ?",
                    (utc_now(), outcome, reason, process_id, number))


def newest_input(db: Database, process_id: str) -> int | None:
    """Return the id of the newest input (a user message) of a process, or None."""
    row = db.query_one("SELECT max(id) FROM messages WHERE process_id = ? AND role = 'user'",
                       (process_id,))
    return None if row is None or row[0] is None else int(row[0])


def taken_by(db: Database, message_id: int) -> int | None:
    """Return the number of the turn that consumed an input, or None while it waits."""
    row = db.query_one("SELECT turn FROM messages WHERE id = ?", (message_id,))
    return None if row is None or row[0] is None else int(row[0])


def turn_reply(db: Database, process_id: str, number: int) -> str | None:
    """Return the reply turn ``number`` stored (its last), or None."""
    row = db.query_one("SELECT content FROM messages WHERE process_id = ? AND turn = ? AND"
                       " role = 'assistant' AND kind = 'reply' ORDER BY id DESC LIMIT 1",
                       (process_id, number))
    return None if row is None else str(row[0])


def running_turn(db: Database, process_id: str) -> Row | None:
    """Return the newest turn of a process still recorded ``RUNNING`` (number, started_at)."""
    return db.query_one("SELECT number, started_at FROM turns WHERE process_id = ? AND"
                        " outcome = 'RUNNING' ORDER BY number DESC LIMIT 1", (process_id,))


def end_running_turns(db: Database, process_id: str, outcome: str, reason: str) -> int:
    """End every turn of a process still recorded ``RUNNING`` (a stop, a reap); return how many."""
    cursor = db.conn.execute("UPDATE turns SET ended_at = ?, outcome = ?, reason = ? WHERE"
                             " process_id = ? AND outcome = 'RUNNING'",
                             (utc_now(), outcome, reason, process_id))
    return int(cursor.rowcount)


def turns(db: Database, process_id: str) -> list[Row]:
    """Return the turns of a process, oldest first."""
    return db.query("SELECT process_id, number, started_at, ended_at, outcome, worker_pid,"
                    " reason FROM turns WHERE process_id = ? ORDER BY number", (process_id,))


def add_llm_call(db: Database, process_id: str | None, turn: int | None, purpose: str, *,
                 model: str | None, endpoint: str | None, tokens_in: int | None,
                 tokens_out: int | None, latency_ms: float | None,
                 finish_reason: str | None, error: str | None = None, attempt: int = 1) -> None:
    """Record one LLM call of a process, or of none (``wizard check``); never the key.

    ``attempt``: 1, or more for a call made again by a turn that another worker took
    over (docs/teams.md#takeover).
    """
    db.conn.execute(
        "INSERT INTO llm_calls (process_id, turn, purpose, model, endpoint, tokens_in,"
        " tokens_out, latency_ms, finish_reason, error, created_at, attempt) VALUES"
        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (process_id, turn, purpose, model, endpoint, tokens_in, tokens_out, latency_ms,
         finish_reason, error, utc_now(), attempt))


def llm_totals(db: Database, process_id: str, turn: int | None = None, *,
               before: int | None = None) -> Row:
    """Return ``calls, tokens_in, tokens_out, latency_ms`` summed over a process.

    Only the calls of turn ``turn``, or of the turns before ``before``, when given.
    """
    where = "process_id = ?"
    params: list[Any] = [process_id]
    if turn is not None:
        where += " AND turn = ?"
        params.append(turn)
    if before is not None:
        where += " AND turn < ?"
        params.append(before)
    row = db.query_one("SELECT count(*), coalesce(sum(tokens_in), 0),"
                       " coalesce(sum(tokens_out), 0), coalesce(sum(latency_ms), 0)"
                       f" FROM llm_calls WHERE {where}", params)
    assert row is not None  # an aggregate always has one row
    return row


def start_call(db: Database, process_id: str, turn: int, purpose: str, *,
               model: str | None, endpoint: str | None, tokens_out: int = 0,
               started_at: str | None = None) -> None:
    """Record that turn ``turn`` has an LLM call under way (``calls_in_flight``, m010).

    ``started_at``: when it started (None: now); ``tokens_out``: text chunks come so far.
    """
    db.conn.execute(
        "INSERT INTO calls_in_flight (process_id, turn, purpose, model, endpoint, tokens_out,"
        " started_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (process_id, turn) DO UPDATE"
        " SET purpose = excluded.purpose, model = excluded.model,"
        " endpoint = excluded.endpoint, tokens_out = excluded.tokens_out,"
        " started_at = excluded.started_at",
        (process_id, turn, purpose, model, endpoint, tokens_out, started_at or utc_now()))


def call_progress(db: Database, process_id: str, turn: int, tokens_out: int) -> None:
    """Store the tokens out (text chunks) come so far of turn ``turn``'s call under way."""
    db.conn.execute("UPDATE calls_in_flight SET tokens_out = ? WHERE process_id = ? AND"
                    " turn = ?", (tokens_out, process_id, turn))


def land_call(db: Database, process_id: str, turn: int) -> bool:
    """Remove turn ``turn``'s call under way; False when it was gone (``cut_off_calls``)."""
    cursor = db.conn.execute("DELETE FROM calls_in_flight WHERE process_id = ? AND turn = ?",
                             (process_id, turn))
    return int(cursor.rowcount) > 0


def cut_off_calls(db: Database, process_id: str, error: str) -> int:
    """Store a process's calls under way as LLM calls that failed with ``error``; return how many.

    Their tokens out are the chunks come by the last heartbeat (none: NULL), their
    time the moment they started.
    """
    db.conn.execute(
        "INSERT INTO llm_calls (process_id, turn, purpose, model, endpoint, tokens_in,"
        " tokens_out, latency_ms, finish_reason, error, created_at) SELECT process_id, turn,"
        " purpose, model, endpoint, NULL, NULLIF(tokens_out, 0), NULL, NULL, ?, started_at"
        " FROM calls_in_flight WHERE process_id = ? ORDER BY turn", (error, process_id))
    cursor = db.conn.execute("DELETE FROM calls_in_flight WHERE process_id = ?", (process_id,))
    return int(cursor.rowcount)
