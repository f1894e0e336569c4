"""A process's inputs: its messages, queueing a steer, and taking events as inputs.

An input stays pending until a turn settles (``runtime``). Rule: docs/processes.md#turns
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import CannotRun
from vance_cli.base.records import frozen
from vance_cli.processes.model import CloseReason, Process, Status
from vance_cli.processes.records import load_process
from vance_cli.state import conversation
from vance_cli.state import events as event_store

if TYPE_CHECKING:
    from vance_cli.state.db import Database, Row
    from vance_cli.workspace import Workspace

PASSIVE_PARAM = "passive"
"""A process whose params set this is a mailbox (the session root): no turn ever runs."""


@frozen
class Message:
    """One message of a process: an input, a reply, an event or a note.

    Attributes:
        id: message id (grows with time).
        role: ``user`` (task, steer), ``assistant`` (a reply), ``event`` (from
            another process) or ``note`` (from vance).
        kind: ``task``, ``steer``, ``reply``, ``child_settled``, ``child_closed`` …
        content: the text.
        created_at: ISO-8601 UTC.
        turn: the turn that consumed (inputs) or wrote (replies) it; None while pending.
        model: the model that wrote a reply.
        tokens_in: prompt tokens of the reply's LLM call(s).
        tokens_out: completion tokens.
        meta: more data (``interrupted``, an event's ``source`` and payload …).
    """

    id: int
    role: str
    kind: str
    content: str
    created_at: str
    turn: int | None
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: Row) -> Message:
        """Build a message from a ``messages`` row."""
        return cls(id=row["id"], role=row["role"], kind=row["kind"], content=row["content"],
                   created_at=row["created_at"], turn=row["turn"], model=row["model"],
                   tokens_in=row["tokens_in"], tokens_out=row["tokens_out"],
                   meta=json.loads(row["meta"] or "{}"))

    def to_json(self) -> dict[str, Any]:
        """Return ``{"role", "kind", "text", "time", "turn", "model", "tokensIn", "tokensOut"}``."""
        out: dict[str, Any] = {"role": self.role, "kind": self.kind, "text": self.content,
                               "time": self.created_at, "turn": self.turn, "model": self.model,
                               "tokensIn": self.tokens_in, "tokensOut": self.tokens_out}
        if self.meta:
            out["meta"] = dict(self.meta)
        return out


def is_passive(process: Process) -> bool:
    """True for a mailbox process (``params.passive``, the session root): it never runs."""
    return process.params.get(PASSIVE_PARAM) is True


def has_pending(ws: Workspace, process_id: str) -> bool:
    """True when the process has inputs or events no turn has taken yet."""
    db = ws.db
    return bool(conversation.pending_inputs(db, process_id)) or bool(
        event_store.select_events(db, ws.settings.tenant, recipient=process_id, limit=1))


def submit(ws: Workspace, process_id: str, text: str, kind: str = "steer",
           yes_tools: Sequence[str] = ()) -> Message:
    """Queue a user input (a steer) for the next turn of a process.

    Args:
        ws: workspace.
        process_id: id or unique prefix.
        text: the message.
        kind: ``steer`` (a person's message) or ``answer`` (to a question).
        yes_tools: tools the command allows (``--yes-tools``), for the turn that takes it.

    Returns:
        The stored input.

    Raises:
        ProcessNotFound: no such process.
        CannotRun: the process is closed (a steer could never be taken).
    """
    process = load_process(ws, process_id)
    if process.status is Status.CLOSED and process.close_reason != CloseReason.STALE.value:
        raise CannotRun(f"process {process.id} is CLOSED/{process.close_reason}: it takes no"
                        " more input", process=process.id)
    with ws.db.transaction():
        message_id = conversation.add_message(
            ws.db, process.id, "user", kind, text,
            meta={"yesTools": list(yes_tools)} if yes_tools else None)
    [row] = [r for r in conversation.pending_inputs(ws.db, process.id) if r["id"] == message_id]
    return Message.from_row(row)


def transcript(ws: Workspace, process_id: str) -> list[Message]:
    """Return every message of a process (pending inputs too), oldest first."""
    return [Message.from_row(r) for r in conversation.transcript(ws.db, process_id)]


def take_events(db: Database, tenant: str, process_id: str) -> None:
    """Move the process's unread events into its messages as pending inputs (caller's tx)."""
    rows = event_store.select_events(db, tenant, recipient=process_id)
    for row in rows:
        payload = json.loads(row["payload"] or "{}")
        conversation.add_message(db, process_id, "event", row["kind"],
                                 describe_event(row["kind"], payload),
                                 meta={"source": row["source_process_id"],
                                       "eventId": row["id"], "payload": payload})
    event_store.mark_consumed(db, tenant, [r["id"] for r in rows])


def describe_event(kind: str, payload: Mapping[str, Any]) -> str:
    """Return an event as text an LLM can read (the child, its status, its result)."""
    who = f"{payload.get('name')} ({payload.get('recipe')}, process {payload.get('processId')})"
    status = str(payload.get("status"))
    if payload.get("closeReason"):
        status += f"/{payload.get('closeReason')}"
    text = f"{who} is {status}."
    if payload.get("result"):
        text += f"\n{payload['result']}"
    outcome = payload.get("outcome")
    if isinstance(outcome, Mapping) and outcome.get("reason"):
        text += f"\nReason: {outcome['reason']}"
    return text
