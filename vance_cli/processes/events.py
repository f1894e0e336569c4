"""The pending queue: events addressed to a process, e.g. "your child closed".

Rules (docs/processes.md "events"; docs/delegate.md "Slartibartfast fallback"):
- When a process that has a parent closes, one ``child_closed`` event lands
  in the parent's queue, in the same transaction as the close
  (``processes.apply_transition``), with this payload::

      {"processId", "name", "recipe", "engine", "status": "CLOSED",
       "closeReason": "DONE" | "STOPPED" | "STALE" | …,
       "result": "…" | null,       # the child's latest result text
       "outcome": {...} | null}    # e.g. {"recipePath": …} or {"reason": …}

  When a child's turn settles without closing (``IDLE`` with its answer,
  ``BLOCKED`` with its question), a ``child_settled`` event with the same
  payload lands there too (``processes.inputs``).

  Other producers may post their own kinds with ``post_event``.
- Reading does **not** consume (as ``gh`` lists without side effects): an
  event stays pending until acknowledged (``ack_events``, the CLI's
  ``--ack``), so a reader that crashes before showing it loses nothing. An
  acknowledged event keeps its row with ``consumedAt`` set (``--all`` shows
  it). Acknowledging is idempotent.
- Order is the event id (insertion order); ids only grow, so a follower
  remembers the last id it saw and asks for newer ones.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.base.records import frozen
from vance_cli.processes.records import load_process
from vance_cli.state import events as store

if TYPE_CHECKING:
    from vance_cli.state.db import Row
    from vance_cli.workspace import Workspace

FOLLOW_POLL = 0.5
"""Seconds between two looks at the queue in ``follow_events``."""


@frozen
class Event:
    """One event in a process's pending queue.

    Attributes:
        id: grows with every event (order of arrival).
        recipient: the process the event is for (e.g. the parent).
        source: the process it is about (e.g. the child that closed), or None.
        kind: e.g. ``"child_closed"``.
        payload: kind-specific data (see the module docstring).
        created_at: ISO-8601 UTC time it was emitted.
        consumed_at: ISO-8601 UTC time it was acknowledged, or None while pending.
    """

    id: int
    recipient: str
    source: str | None
    kind: str
    payload: Mapping[str, Any]
    created_at: str
    consumed_at: str | None

    @classmethod
    def from_row(cls, row: Row) -> Event:
        """Build an Event from an ``events`` row."""
        return cls(id=row["id"], recipient=row["recipient_process_id"],
                   source=row["source_process_id"], kind=row["kind"],
                   payload=json.loads(row["payload"] or "{}"), created_at=row["created_at"],
                   consumed_at=row["consumed_at"])

    def to_json(self) -> dict[str, Any]:
        """Return the event as ``{"id", "recipient", "source", "kind", "payload", …}``.

        Also ``createdAt`` and ``consumedAt`` (null while the event is pending).
        """
        return {"id": self.id, "recipient": self.recipient, "source": self.source,
                "kind": self.kind, "payload": dict(self.payload), "createdAt": self.created_at,
                "consumedAt": self.consumed_at}


@frozen
class EventQuery:
    """Which queue to read.

    Attributes:
        recipient: full id of the recipient process; None means every process
            of the workspace's session.
        include_consumed: also acknowledged events.
    """

    recipient: str | None = None
    include_consumed: bool = False


def resolve_query(ws: Workspace, recipient: str | None,
                  include_consumed: bool = False) -> EventQuery:
    """Build an EventQuery, resolving a recipient id prefix to the full id.

    Raises:
        ProcessNotFound: ``recipient`` names no process of this tenant.
    """
    full = load_process(ws, recipient).id if recipient else None
    return EventQuery(full, include_consumed)


def pending_events(ws: Workspace, query: EventQuery, after_id: int = 0) -> list[Event]:
    """Return the events ``query`` selects, oldest first, without consuming them.

    Args:
        ws: workspace (tenant, session, database).
        query: which queue.
        after_id: only events newer than this id.
    """
    rows = store.select_events(
        ws.db, ws.settings.tenant, recipient=query.recipient,
        session=None if query.recipient else ws.settings.session, after_id=after_id,
        include_consumed=query.include_consumed)
    return [Event.from_row(r) for r in rows]


def ack_events(ws: Workspace, ids: Sequence[int]) -> int:
    """Mark events consumed (idempotent).

    Returns:
        How many were pending and are now consumed.
    """
    with ws.db.transaction():
        return store.mark_consumed(ws.db, ws.settings.tenant, ids)


def post_event(ws: Workspace, recipient: str, kind: str, payload: Mapping[str, Any],
               source: str | None = None) -> int:
    """Put an event into ``recipient``'s queue (for producers other than a child's close).

    Returns:
        The new event's id.
    """
    with ws.db.transaction():
        return store.insert_event(ws.db, ws.settings.tenant, recipient, source, kind=kind,
                                  payload=payload)


def follow_events(ws: Workspace, query: EventQuery, ack: bool = False,
                  poll: float = FOLLOW_POLL,
                  sleep: Callable[[float], None] = time.sleep) -> Iterator[Event]:
    """Yield the queue's events, then new ones as they arrive, until the caller stops.

    Args:
        ws: workspace.
        query: which queue.
        ack: acknowledge each event once the caller has taken it (when the
            generator is resumed after yielding it), so an event is consumed
            only after it was shown.
        poll: seconds between looks at the queue.
        sleep: pause function (injectable for tests).

    Yields:
        Events, oldest first; never ends by itself (Ctrl-C ends the command).
    """
    last = 0
    while True:
        batch = pending_events(ws, query, after_id=last)
        for event in batch:
            yield event
            last = event.id
            if ack:
                ack_events(ws, [event.id])
        if not batch:
            sleep(poll)
