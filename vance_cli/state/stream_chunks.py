"""SQL for a turn's live output in batches, for followers on other hosts (m012).

The rules (when a batch is written, what a follower shows) live in
``vance_cli.processes.stream``; this module only reads and writes rows. A
process's rows are those of one turn: the first batch of a turn deletes the
others. Statements run outside a write transaction (no write lock): one
writer per process's turn, and each batch is one statement. On PostgreSQL
that statement also notifies ``CHANNEL`` with the process id.
"""

from __future__ import annotations

from collections.abc import Sequence

from vance_cli.base.clock import utc_now
from vance_cli.state.db import Database, Row

CHANNEL = "vance_stream"
"""The channel every batch notifies, with its process id as the payload."""

TEXT, NOTE, END = "text", "note", "end"
"""Kinds of row: output, a line vance adds (the output was cut), the stream closed."""


def live_turn(db: Database, process_id: str, *, following: bool = False) -> int | None:
    """Return the number of the process's turn under way, or None: no such process.

    That is its turn recorded ``RUNNING``; without one, the next turn (one the worker
    has not claimed yet, or a whole run, whose number is counted when it ends).

    Args:
        db: the store.
        process_id: full id.
        following: for a follower: of a process not RUNNING (read in the same
            statement), its latest turn.
    """
    row = db.query_one("SELECT p.status, p.turns, (SELECT MAX(t.number) FROM turns t WHERE"
                       " t.process_id = p.id AND t.outcome = 'RUNNING') FROM processes p"
                       " WHERE p.id = ?", (process_id,))
    if row is None:
        return None
    if row[2] is not None:
        return int(row[2])
    return int(row[1]) + (0 if following and row[0] != "RUNNING" else 1)


def begin(db: Database, process_id: str, turn: int) -> int:
    """Delete the process's rows; return the last seq stored for ``turn`` (0: none).

    A turn that starts again (another attempt) numbers its rows on after the earlier
    attempt's, so a follower that saw those goes on.
    """
    row = db.query_one("SELECT MAX(seq) FROM stream_chunks WHERE process_id = ? AND turn = ?",
                       (process_id, turn))
    db.conn.execute("DELETE FROM stream_chunks WHERE process_id = ?", (process_id,))
    return int(row[0]) if row is not None and row[0] is not None else 0


def add(db: Database, process_id: str, turn: int,
        rows: Sequence[tuple[int, str, str]]) -> None:
    """Store one batch, ``(seq, kind, text)`` rows, and notify ``CHANNEL`` (PostgreSQL).

    A seq already stored is skipped: a batch written again after a failure whose
    commit did land is not doubled.
    """
    now = utc_now()
    values = ", ".join("(?, ?, ?, ?, ?, ?)" for _ in rows)
    insert = ("INSERT INTO stream_chunks (process_id, turn, seq, kind, text, created_at)"
              f" VALUES {values} ON CONFLICT DO NOTHING")
    params = [value for seq, kind, text in rows
              for value in (process_id, turn, seq, kind, text, now)]
    db.conn.execute(db.dialect.with_notify(insert, CHANNEL, "process_id"), params)


def after(db: Database, process_id: str, turn: int, seq: int) -> list[Row]:
    """Return the rows of the process's ``turn`` past ``seq`` (seq, kind, text), in order."""
    return db.query("SELECT seq, kind, text FROM stream_chunks WHERE process_id = ? AND"
                    " turn = ? AND seq > ? ORDER BY seq", (process_id, turn, seq))
