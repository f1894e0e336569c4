"""The process model: statuses, the transition table, the process value, name rules.

Rules (docs/processes.md):
- Statuses are ``INIT`` (created), ``RUNNING`` (a turn runs), ``IDLE``
  (started, waiting for input — a new process with its initial steer queued
  is IDLE), ``BLOCKED``, ``PAUSED``, ``SUSPENDED`` and ``CLOSED`` (terminal,
  with a ``closeReason``). ``TRANSITIONS`` is the one table of legal changes;
  ``records.apply_transition`` is the one function that applies them.
- ``name`` is unique per (tenant, session), whatever the status; the database
  enforces it, so of two concurrent creates with one name exactly one wins.

API for workers and engines: ``records.create_process`` →
``worker.running(ws, id)`` (RUNNING + heartbeat) → ``Run.close(CloseReason.DONE,
result)``; ``lifecycle.close_process`` closes from any live status;
``lifecycle.wait_process`` / ``stop_process``; the parent reads its queue with
``events.pending_events`` / ``follow_events``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import InputError, InvalidTransition, ReservedProcessName
from vance_cli.base.records import frozen
from vance_cli.state.db import Row

if TYPE_CHECKING:
    pass


class Status(StrEnum):
    """Process statuses of the original system (docs/processes.md)."""

    INIT = "INIT"
    RUNNING = "RUNNING"
    IDLE = "IDLE"
    BLOCKED = "BLOCKED"
    PAUSED = "PAUSED"
    SUSPENDED = "SUSPENDED"
    CLOSED = "CLOSED"


class CloseReason(StrEnum):
    """Why a process is CLOSED."""

    DONE = "DONE"
    """Finished its work."""
    STOPPED = "STOPPED"
    """Stopped by a person or a cutoff."""
    STALE = "STALE"
    """Failed, or its worker died (no heartbeat); the result says why."""


class TurnEnd(StrEnum):
    """How a turn ends (docs/processes.md "Turns").

    An engine's turn returns the first three; the runtime records the others.
    """

    IDLE = "IDLE"
    """Answered; the process waits for its next input."""
    BLOCKED = "BLOCKED"
    """It asks the person and waits for the answer."""
    DONE = "DONE"
    """Finished: the process closes ``DONE``."""
    FAILED = "FAILED"
    """It failed: the process closes ``STALE`` with the reason."""
    STOPPED = "STOPPED"
    """The process was stopped while the turn ran."""
    INTERRUPTED = "INTERRUPTED"
    """Ctrl-C: the partial reply is kept and the process waits ``IDLE``."""


class StartHow(StrEnum):
    """How starting a process's turns went (``processes.start.start``)."""

    FOREGROUND = "foreground"
    """Its turn ran here."""
    BACKGROUND = "background"
    """A worker runs it."""
    WAITING_FOR_LLM = "waiting_for_llm"
    """No LLM is configured: it waits for one."""
    NOTHING_TO_DO = "nothing_to_do"
    """No input is pending."""
    NO_ENGINE = "no_engine"
    """Its engine has no code here."""
    PASSIVE = "passive"
    """A mailbox: it runs no turns."""
    RUNNING = "running"
    """A turn is under way already."""
    CLOSED = "closed"
    """It is closed."""


JOB_MARK = ":job"
"""What a team job's worker identity has in it (``host:pid:job<id>.<attempt>``)."""


def job_identity(host: str, pid: int, job_id: int, attempt: int) -> str:
    """Return the worker identity of one attempt of a team job (docs/teams.md#takeover)."""
    return f"{host}:{pid}{JOB_MARK}{job_id}.{attempt}"


def is_job_worker(worker: str | None) -> bool:
    """True when ``worker`` is a team job's identity: its liveness is the job queue's."""
    return worker is not None and JOB_MARK in worker


FAILED_LABEL = "FAILED"
"""What people read for a ``STALE`` close that a failed turn made (``Process.label``)."""

CHILD_CLOSED = "child_closed"
"""Event kind put into the parent's queue when a child process closes."""

CHILD_SETTLED = "child_settled"
"""Event kind put into the parent's queue when a child's turn settles without closing
(``IDLE`` with its answer, or ``BLOCKED`` with its question)."""


_LIVE = frozenset({Status.RUNNING, Status.IDLE, Status.BLOCKED, Status.PAUSED, Status.SUSPENDED})

TRANSITIONS: Mapping[Status, frozenset[Status]] = {
    Status.INIT: frozenset({Status.RUNNING, Status.IDLE, Status.CLOSED}),
    Status.RUNNING: _LIVE - {Status.RUNNING} | {Status.CLOSED},
    Status.IDLE: frozenset({Status.RUNNING, Status.PAUSED, Status.SUSPENDED, Status.CLOSED}),
    Status.BLOCKED: _LIVE - {Status.BLOCKED} | {Status.CLOSED},
    Status.PAUSED: frozenset({Status.RUNNING, Status.IDLE, Status.CLOSED}),
    Status.SUSPENDED: frozenset({Status.RUNNING, Status.IDLE, Status.CLOSED}),
    Status.CLOSED: frozenset(),
}
"""Legal status changes: from → allowed targets. CLOSED is terminal."""

MIN_PREFIX = 4
"""Shortest id prefix that finds a process (shorter ones would match too many)."""

NAME_MAX = 200
"""Longest process name, in characters."""
_NAME_BAD = re.compile(r"[\x00-\x1f\x7f]")
RESERVED_PREFIX = "_"
"""Process names starting with this are vance's own (``_session-root``); callers cannot use them."""


@frozen
class Process:
    """One process as docs/processes.md shows it.

    Attributes mirror the JSON keys; ``params`` and ``outcome`` are mappings;
    ``result`` is the latest result text; times are ISO-8601 UTC strings.
    """

    id: str
    name: str
    session: str
    tenant: str
    recipe: str
    engine: str
    title: str
    goal: str
    params: Mapping[str, Any]
    steer_content: str | None
    status: Status
    close_reason: CloseReason | None
    parent_process_id: str | None
    created_at: str
    updated_at: str
    heartbeat_at: str | None = None
    worker_pid: int | None = None
    worker: str | None = None
    takeovers: int = 0
    spawn_key: str | None = None
    outcome: Mapping[str, Any] | None = None
    result: str | None = None
    turns: int = 0
    prompt: str | None = None
    state: Mapping[str, Any] | None = None

    @classmethod
    def from_row(cls, row: Row) -> Process:
        """Build a Process from a ``processes`` row."""
        return cls(
            id=row["id"], name=row["name"], session=row["session"], tenant=row["tenant"],
            recipe=row["recipe"], engine=row["engine"], title=row["title"], goal=row["goal"],
            params=json.loads(row["params"] or "{}"), steer_content=row["steer_content"],
            status=Status(row["status"]),
            close_reason=CloseReason(row["close_reason"]) if row["close_reason"] else None,
            parent_process_id=row["parent_process_id"], created_at=row["created_at"],
            updated_at=row["updated_at"], heartbeat_at=row["heartbeat_at"],
            worker_pid=row["worker_pid"], worker=row["worker"],
            takeovers=int(row["takeovers"] or 0), spawn_key=row["spawn_key"],
            outcome=json.loads(row["outcome"]) if row["outcome"] else None,
            result=row["result"], turns=int(row["turns"] or 0), prompt=row["prompt"],
            state=json.loads(row["state"]) if row["state"] else None,
        )

    @property
    def failed_turn(self) -> bool:
        """True when a turn failed and closed the process (``STALE`` with ``outcome.turn``).

        A worker that died closes it ``STALE`` too, without ``outcome.turn``.
        """
        return self.status is Status.CLOSED and self.close_reason == CloseReason.STALE.value \
            and self.outcome is not None and "turn" in self.outcome

    @property
    def label(self) -> str:
        """Return the status as people read it, e.g. ``IDLE`` or ``CLOSED/DONE``.

        A process closed by a failed turn reads ``CLOSED/FAILED`` (its JSON keeps
        ``closeReason`` ``STALE``); ``CLOSED/STALE`` stays for a worker that died
        (docs/processes.md "Statuses").
        """
        if self.failed_turn:
            return f"{Status.CLOSED.value}/{FAILED_LABEL}"
        return self.status.value + (f"/{self.close_reason}" if self.close_reason else "")

    def to_json(self) -> dict[str, Any]:
        """Return the docs/processes.md process object (with ``result``, ``outcome``, ``state``)."""
        out: dict[str, Any] = {
            "id": self.id, "name": self.name, "session": self.session, "recipe": self.recipe,
            "engine": self.engine, "title": self.title, "goal": self.goal,
            "params": dict(self.params), "steerContent": self.steer_content,
            "status": self.status.value, "closeReason": self.close_reason,
            "parentProcessId": self.parent_process_id, "createdAt": self.created_at,
        }
        out["result"] = self.result
        out["outcome"] = dict(self.outcome) if self.outcome is not None else None
        out["state"] = dict(self.state) if self.state is not None else None
        return out


@frozen
class ProcessSpec:
    """What process_create needs (docs/processes.md).

    Attributes:
        recipe: recipe name, resolved through the cascade.
        name: process name, unique per (tenant, session).
        title: display title ("" → the recipe's title).
        goal: what the process is for (the delegated task).
        steer: initial steer message queued for the process.
        params: caller params, overlaid on the recipe's.
        parent: parent process id.
        internal: True only for processes vance creates itself; allows the
            reserved ``_`` prefix (``RESERVED_PREFIX``), which callers never get.
        prompt: instructions that replace the recipe's prompt (an orchestrator's
            worker with an inline prompt), or None.
        yes_tools: tools the creating command allows (``--yes-tools``): kept on the first
            inputs, so only the turn that takes them may call these without asking.
        spawn_key: a child's key under its parent (``children.spawn``): a turn run again
            finds the child it made instead of making a second one.
    """

    recipe: str
    name: str
    title: str = ""
    goal: str = ""
    steer: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    parent: str | None = None
    internal: bool = False
    prompt: str | None = None
    yes_tools: tuple[str, ...] = ()
    spawn_key: str | None = None


def new_process_id() -> str:
    """Return a new process id: 16 lower-case hex characters (64 random bits)."""
    import secrets  # stdlib, off the light paths: only a started process needs an id

    return secrets.token_hex(8)


def check_process_name(name: str, *, internal: bool = False) -> str:
    """Validate a process name and return it stripped.

    The one name check: ``process create``, ``delegate --name`` and the batch
    ``--name`` prefix all come through here (and ``create_process`` again).

    Args:
        name: the name as given.
        internal: True when vance names its own process (``_session-root``);
            only then may the name start with ``RESERVED_PREFIX``.

    Raises:
        InputError: empty, longer than ``NAME_MAX``, or with control characters.
        ReservedProcessName: starts with ``_`` and ``internal`` is False.
    """
    clean = name.strip() if isinstance(name, str) else ""
    if not clean:
        raise InputError("process name is empty", field="name")
    bad = _NAME_BAD.search(clean)
    if bad:
        raise InputError(f"process name has a control character ({bad.group()!r} at position"
                         f" {bad.start() + 1}); use printable characters only", field="name")
    if len(clean) > NAME_MAX:
        raise InputError(f"process name is {len(clean)} characters long; at most {NAME_MAX}",
                         field="name")
    if clean.startswith(RESERVED_PREFIX) and not internal:
        raise ReservedProcessName(clean)
    return clean


def check_transition(old: Status, new: Status) -> None:
    """Raise InvalidTransition unless ``TRANSITIONS`` allows ``old`` → ``new``."""
    if new not in TRANSITIONS[old]:
        raise InvalidTransition(
            f"a process cannot go from {old.value} to {new.value}", old=old.value, new=new.value
        )


