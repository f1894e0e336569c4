"""SQL for the pending queue: events addressed to a process (table ``events``, m002).

The rules (what an event means, when it is emitted, what listing consumes)
live in ``vance_cli.processes.events`` and ``vance_cli.processes.model``; this module only
reads and writes rows. ``consumed_at`` is NULL until a reader acknowledges
the event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from vance_cli.base.clock import utc_now
from vance_cli.state.db import Database, Row

_COLUMNS = ("id, tenant, recipient_process_id, source_process_id, kind, payload, created_at,"
            " consumed_at")


def insert_event(db: Database, tenant: str, recipient: str, source: str | None, *, kind: str,
                 payload: Mapping[str, Any]) -> int:
    """Append one event to ``recipient``'s queue and return its id (ids only grow)."""
    row = db.conn.execute(
        "INSERT INTO events (tenant, recipient_process_id, source_process_id, kind, payload,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (tenant, recipient, source, kind, json.dumps(dict(payload), ensure_ascii=False),
         utc_now()),
    ).fetchall()[0]
    return int(row[0])


def select_events(db: Database, tenant: str, *, recipient: str | None = None,
                  session: str | None = None, after_id: int = 0,
                  include_consumed: bool = False, limit: int | None = None) -> list[Row]:
    """Return events in id order (oldest first).

    Args:
        db: the database.
        tenant: tenant id.
        recipient: only this recipient process when given.
        session: only recipients that are processes of this session when given.
        after_id: only events with a larger id (for following a queue).
        include_consumed: also events already acknowledged.
        limit: at most this many.
    """
    where, params = ["tenant = ?", "id > ?"], [tenant, after_id]
    if recipient is not None:
        where.append("recipient_process_id = ?")
        params.append(recipient)
    if session is not None:
        where.append("recipient_process_id IN"
                     " (SELECT id FROM processes WHERE tenant = ? AND session = ?)")
        params += [tenant, session]
    if not include_consumed:
        where.append("consumed_at IS NULL")
    sql = f"SELECT {_COLUMNS} FROM events WHERE {' AND '.join(where)} ORDER BY id"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return db.query(sql, params)


def mark_consumed(db: Database, tenant: str, ids: Sequence[int]) -> int:
    """Acknowledge events (idempotent: already consumed ones keep their time).

    Returns:
        How many events changed.
    """
    if not ids:
        return 0
    marks = ", ".join("?" for _ in ids)
    cur = db.conn.execute(
        f"UPDATE events SET consumed_at = ? WHERE tenant = ? AND id IN ({marks})"
        " AND consumed_at IS NULL", (utc_now(), tenant, *ids))
    return cur.rowcount
