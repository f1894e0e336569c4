"""Processes: started runs of a recipe, their statuses, and process_create.

Rules (DESIGN.md §4):
- Statuses are ``INIT`` (created), ``RUNNING`` (a turn runs), ``IDLE``
  (started, waiting for input — a new process with its initial steer queued
  is IDLE), ``BLOCKED``, ``PAUSED``, ``SUSPENDED`` and ``CLOSED`` (terminal,
  with a ``closeReason``). ``TRANSITIONS`` is the one table of legal changes;
  ``transition()`` is the one function that applies them.
- ``name`` is unique per (tenant, session), whatever the status; the database
  enforces it, so of two concurrent creates with one name exactly one wins.
- process_create resolves the recipe through the cascade, takes its engine
  (which must be in the active catalog), merges params (recipe params
  overlaid by the caller's) and records the process. Any error writes nothing.
- ``apply_transition()`` is the one place a status changes: it checks the
  table, writes with compare-and-set on the old status (a concurrent writer
  that got there first makes it a no-op), appends the audit trail and — when
  the new status is CLOSED and the process has a parent — puts one
  ``child_closed`` event into the parent's pending queue, all in the caller's
  transaction (``vance_cli.events`` documents the payload).
- Reads for people (``get_process``, ``list_processes``) first close RUNNING
  processes whose worker died as ``CLOSED/STALE`` (``lifecycle.reap_stale``),
  so nothing stays RUNNING forever.

API for workers and engines (e.g. Slartibartfast):
``create_process`` → ``worker.running(ws, id)`` (RUNNING + heartbeat) →
``Run.close(CloseReason.DONE, result)``; ``lifecycle.close_process`` closes
from any live status; ``lifecycle.wait_process`` / ``stop_process``; the parent reads
its queue with ``events.pending_events`` / ``follow_events``.
"""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from vance_cli.errors import (
    DuplicateProcessName,
    InputError,
    InvalidTransition,
    ProcessNotFound,
    ReservedProcessName,
)
from vance_cli.state import process_store as store
from vance_cli.state.db import Row, utc_now

if TYPE_CHECKING:
    from vance_cli.state.db import Database
    from vance_cli.workspace import Workspace


class Status(StrEnum):
    """Process statuses of the original system (DESIGN.md §4)."""

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


CHILD_CLOSED = "child_closed"
"""Event kind put into the parent's queue when a child process closes."""


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


@dataclass(frozen=True, slots=True)
class Process:
    """One process as DESIGN.md §4 shows it.

    Attributes mirror the JSON keys; ``params`` and ``result`` are mappings;
    times are ISO-8601 UTC strings.
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
    close_reason: str | None
    parent_process_id: str | None
    created_at: str
    updated_at: str
    heartbeat_at: str | None = None
    worker_pid: int | None = None
    result: Mapping[str, Any] | None = None

    @classmethod
    def from_row(cls, row: Row) -> Process:
        """Build a Process from a ``processes`` row."""
        return cls(
            id=row["id"], name=row["name"], session=row["session"], tenant=row["tenant"],
            recipe=row["recipe"], engine=row["engine"], title=row["title"], goal=row["goal"],
            params=json.loads(row["params"] or "{}"), steer_content=row["steer_content"],
            status=Status(row["status"]), close_reason=row["close_reason"],
            parent_process_id=row["parent_process_id"], created_at=row["created_at"],
            updated_at=row["updated_at"], heartbeat_at=row["heartbeat_at"],
            worker_pid=row["worker_pid"],
            result=json.loads(row["result"]) if row["result"] else None,
        )

    def to_json(self) -> dict[str, Any]:
        """Return the DESIGN.md §4 process object (plus ``result`` when there is one)."""
        out: dict[str, Any] = {
            "id": self.id, "name": self.name, "session": self.session, "recipe": self.recipe,
            "engine": self.engine, "title": self.title, "goal": self.goal,
            "params": dict(self.params), "steerContent": self.steer_content,
            "status": self.status.value, "closeReason": self.close_reason,
            "parentProcessId": self.parent_process_id, "createdAt": self.created_at,
        }
        if self.result is not None:
            out["result"] = dict(self.result)
        return out


@dataclass(frozen=True, slots=True)
class ProcessSpec:
    """What process_create needs (DESIGN.md §4).

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
    """

    recipe: str
    name: str
    title: str = ""
    goal: str = ""
    steer: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    parent: str | None = None
    internal: bool = False


def new_process_id() -> str:
    """Return a new process id: 16 lower-case hex characters (64 random bits)."""
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


def create_process(ws: Workspace, spec: ProcessSpec) -> Process:
    """process_create: resolve the recipe, check the engine, record an IDLE process.

    Args:
        ws: workspace (cascade, active catalog, database, tenant and session).
        spec: what to create.

    Returns:
        The new process, status ``IDLE``.

    Raises:
        InputError: invalid name (ReservedProcessName: a ``_`` name without
            ``spec.internal``). UnknownRecipe: recipe not in the cascade.
        UnknownEngine: the recipe's engine is not in the active catalog.
        DuplicateProcessName: the name is taken in this (tenant, session).
        ProcessNotFound: the parent id does not exist in this tenant.
        Nothing is written when any of these is raised.
    """
    from vance_cli.recipes import find_recipe

    name = check_process_name(spec.name, internal=spec.internal)
    recipe = find_recipe(ws, spec.recipe)
    engine = ws.catalog().get(recipe.engine, recipe=recipe.name)
    settings, db = ws.settings, ws.db
    now = utc_now()
    process_id = new_process_id()
    row: dict[str, Any] = {
        "id": process_id, "tenant": settings.tenant, "session": settings.session,
        "name": name, "recipe": recipe.name, "engine": engine.name,
        "title": spec.title or recipe.title or recipe.name, "goal": spec.goal or spec.steer or "",
        "params": {**recipe.params, **spec.params}, "steer_content": spec.steer,
        "status": Status.INIT.value, "close_reason": None, "parent_process_id": spec.parent,
        "result": None, "created_at": now, "updated_at": now,
    }
    try:
        with db.transaction():
            if spec.parent is not None and store.get_process(db, settings.tenant,
                                                             spec.parent) is None:
                raise ProcessNotFound(spec.parent,
                                      message=f"unknown parent process '{spec.parent}'")
            store.insert_process(db, row)
            store.record_transition(db, process_id, None, Status.INIT.value)
            apply_transition(db, process_id, Status.INIT, Status.IDLE, note="started")
    except sqlite3.IntegrityError as exc:
        if store.is_unique_violation(exc):
            raise DuplicateProcessName(name, settings.session, settings.tenant) from None
        raise
    return load_process(ws, process_id)


def apply_transition(db: Database, process_id: str, old: Status, new: Status,
                     reason: str | None = None, *, result: Mapping[str, Any] | None = None,
                     note: str | None = None) -> bool:
    """Change a status: the one place every status change goes through.

    Call it inside ``db.transaction()``. Checks ``TRANSITIONS``, updates with
    compare-and-set on ``old``, records the audit trail, and when ``new`` is
    CLOSED and the process has a parent, emits one ``child_closed`` event to
    the parent in the same transaction.

    Args:
        db: the state database (inside a transaction).
        process_id: full process id.
        old: the status the caller read; the change happens only if it still holds.
        new: target status.
        reason: close reason; required when ``new`` is CLOSED.
        result: JSON-able outcome stored with the process (replaces the old one when given).
        note: free text for the audit trail.

    Returns:
        True when this call changed the row; False when another writer changed it first.

    Raises:
        InvalidTransition: the table forbids ``old`` → ``new``, or CLOSED without a reason.
    """
    check_transition(old, new)
    if new is Status.CLOSED and reason is None:
        raise InvalidTransition("closing a process needs a close reason")
    if not store.update_status(db, process_id, old.value, new.value, reason, result):
        return False
    store.record_transition(db, process_id, old.value, new.value, reason, note)
    if new is Status.CLOSED:
        _notify_parent(db, process_id)
    return True


def _notify_parent(db: Database, process_id: str) -> None:
    from vance_cli.state import events as event_store

    row = store.get_by_id(db, process_id)
    if row is None or row["parent_process_id"] is None:
        return
    closed = Process.from_row(row)
    payload = {"processId": closed.id, "name": closed.name, "recipe": closed.recipe,
               "engine": closed.engine, "status": closed.status.value,
               "closeReason": closed.close_reason,
               "result": dict(closed.result) if closed.result is not None else None}
    event_store.insert_event(db, closed.tenant, row["parent_process_id"], closed.id,
                             kind=CHILD_CLOSED, payload=payload)


def check_transition(old: Status, new: Status) -> None:
    """Raise InvalidTransition unless ``TRANSITIONS`` allows ``old`` → ``new``."""
    if new not in TRANSITIONS[old]:
        raise InvalidTransition(
            f"a process cannot go from {old.value} to {new.value}", old=old.value, new=new.value
        )


def transition(ws: Workspace, process_id: str, new: Status,
               close_reason: CloseReason | str | None = None,
               result: Mapping[str, Any] | None = None, note: str | None = None) -> Process:
    """Move a process to ``new``, checked against ``TRANSITIONS``, atomically.

    Args:
        ws: workspace.
        process_id: full process id.
        new: target status.
        close_reason: required when ``new`` is CLOSED.
        result: JSON-able outcome stored with the process (e.g. a recipe path).
        note: free text for the transition audit trail.

    Returns:
        The process after the change.

    Raises:
        ProcessNotFound: no such process.
        InvalidTransition: the table forbids it (e.g. anything after CLOSED).
    """
    db = ws.db
    reason = close_reason.value if isinstance(close_reason, CloseReason) else close_reason
    with db.transaction():
        current = load_process(ws, process_id)
        apply_transition(db, current.id, current.status, new, reason, result=result, note=note)
    return load_process(ws, current.id)


def get_process(ws: Workspace, ident: str) -> Process:
    """Return a process by full id or unique id prefix (≥ 4 characters) in this tenant.

    RUNNING processes whose worker died are closed as STALE first
    (``lifecycle.reap_stale``), so the answer never shows a dead RUNNING.

    Raises:
        ProcessNotFound: no match, or a prefix that matches several processes.
    """
    from vance_cli.lifecycle import reap_stale

    reap_stale(ws)
    return load_process(ws, ident)


def load_process(ws: Workspace, ident: str) -> Process:
    """Return a process by full id or unique prefix, as stored (no stale detection).

    Raises:
        ProcessNotFound: no match, or a prefix that matches several processes.
    """
    tenant = ws.settings.tenant
    row = store.get_process(ws.db, tenant, ident)
    if row is None and len(ident) >= MIN_PREFIX:
        rows = store.find_by_prefix(ws.db, tenant, ident)
        if len(rows) > 1:
            raise ProcessNotFound(ident, message=f"process id prefix '{ident}' is ambiguous")
        row = rows[0] if rows else None
    if row is None:
        short = (f" (an id prefix needs at least {MIN_PREFIX} characters)"
                 if len(ident) < MIN_PREFIX else "")
        raise ProcessNotFound(ident, message=f"no process with id '{ident}'{short}")
    return Process.from_row(row)


def list_processes(ws: Workspace, all_sessions: bool = False,
                   statuses: tuple[Status, ...] = (), limit: int | None = None) -> list[Process]:
    """Return processes of the tenant, newest first.

    Args:
        ws: workspace.
        all_sessions: every session of the tenant instead of the current one.
        statuses: only these statuses when non-empty.
        limit: at most this many.

    RUNNING processes whose worker died are closed as STALE first.
    """
    from vance_cli.lifecycle import reap_stale

    reap_stale(ws)
    rows = store.list_processes(
        ws.db, ws.settings.tenant, None if all_sessions else ws.settings.session,
        tuple(s.value for s in statuses), limit=limit,
    )
    return [Process.from_row(r) for r in rows]
