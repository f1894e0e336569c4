"""Process records: process_create, the one status-change function, lookups.

Rules (docs/processes.md):
- process_create resolves the recipe through the cascade, takes its engine
  (which must be in the active catalog), merges params (recipe params
  overlaid by the caller's) and records the process. Any error writes nothing.
- ``apply_transition()`` is the one place a status changes: it checks the
  table (``model.TRANSITIONS``), writes with compare-and-set on the old
  status (a concurrent writer that got there first makes it a no-op),
  appends the audit trail and — when the new status is CLOSED and the
  process has a parent — puts one ``child_closed`` event into the parent's
  pending queue, all in the caller's transaction.
- Reads only read: ``load_process`` and ``list_processes`` never change a
  row. Stale workers are closed by ``lifecycle.reap_stale``, a named step
  the commands call before they read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.base.clock import utc_now
from vance_cli.base.errors import (
    DuplicateProcessName,
    InputError,
    InvalidTransition,
    ProcessNotFound,
)
from vance_cli.base.names import close_matches
from vance_cli.processes.budget import over_ceiling
from vance_cli.processes.model import (
    CHILD_CLOSED,
    MIN_PREFIX,
    CloseReason,
    Process,
    ProcessSpec,
    Status,
    check_process_name,
    check_transition,
    new_process_id,
)
from vance_cli.recipes.loader import find_recipe
from vance_cli.state import conversation
from vance_cli.state import events as event_store
from vance_cli.state import process_store as store

if TYPE_CHECKING:
    from vance_cli.recipes.loader import Recipe
    from vance_cli.state.db import Database, Row
    from vance_cli.workspace import Workspace





def create_process(ws: Workspace, spec: ProcessSpec, *, found: Recipe | None = None,
                   also: Callable[[Database, Process], None] | None = None,
                   parent_known: bool = False) -> Process:
    """process_create: resolve the recipe, check the engine, record an IDLE process.

    Args:
        ws: workspace (cascade, active catalog, database, tenant and session).
        spec: what to create.
        found: ``spec.recipe`` as the caller found it already (``find_recipe``), or None.
        also: called as ``also(db, process)`` in the creating transaction, after it:
            what it writes is stored with the process or not at all (an
            orchestrator's state naming its new child).
        parent_known: the parent is the caller's own running process: it is not looked up.

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
    name = check_process_name(spec.name, internal=spec.internal)
    recipe = found if found is not None and found.name == spec.recipe else \
        find_recipe(ws, spec.recipe)
    engine = ws.catalog().get(recipe.engine, recipe=recipe.name)
    params = {**recipe.params, **spec.params}
    over = over_ceiling(ws.settings, params)
    if over:
        raise InputError(f"recipe '{recipe.name}': {'; '.join(over)}", field="params.budget")
    if spec.params:
        from vance_cli.recipes import params as engine_params  # heavy: pydantic

        wrong = engine_params.problems(ws.engines.params_model(engine.name), params)
        if wrong:
            raise InputError(f"recipe '{recipe.name}': {'; '.join(wrong)}", field="params")
    settings, db = ws.settings, ws.db
    now = utc_now()
    process_id = new_process_id()
    row: dict[str, Any] = {
        "id": process_id, "tenant": settings.tenant, "session": settings.session,
        "name": name, "recipe": recipe.name, "engine": engine.name,
        "title": spec.title or recipe.title or recipe.name, "goal": spec.goal or spec.steer or "",
        "params": params, "steer_content": spec.steer,
        "status": Status.INIT.value, "close_reason": None, "parent_process_id": spec.parent,
        "outcome": None, "result": None, "prompt": spec.prompt or recipe.prompt or None,
        "spawn_key": spec.spawn_key,
        "created_at": now, "updated_at": now,
    }
    try:
        with db.transaction():
            if spec.parent is not None and not parent_known and \
                    store.get_process(db, settings.tenant, spec.parent) is None:
                raise ProcessNotFound(spec.parent,
                                      message=f"unknown parent process '{spec.parent}'")
            store.insert_process(db, row)
            queue_initial_inputs(db, process_id, row["goal"], spec.steer, spec.yes_tools)
            store.record_transition(db, process_id, None, Status.INIT.value)
            created = change_status(db, process_id, Status.INIT, Status.IDLE, note="started")
            assert created is not None  # inserted INIT in this transaction
            if also is not None:
                also(db, created)
    except db.integrity_errors as exc:
        if store.is_unique_violation(exc):
            raise DuplicateProcessName(name, settings.session, settings.tenant) from None
        raise
    return created


def apply_transition(db: Database, process_id: str, old: Status, new: Status,
                     reason: str | None = None, *, outcome: Mapping[str, Any] | None = None,
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
        outcome: JSON-able outcome stored with the process (replaces the old one when given).
        note: free text for the audit trail.

    Returns:
        True when this call changed the row; False when another writer changed it first.

    Raises:
        InvalidTransition: the table forbids ``old`` → ``new``, or CLOSED without a reason.
    """
    return change_status(db, process_id, old, new, reason, outcome=outcome,
                         note=note) is not None


def change_status(db: Database, process_id: str, old: Status, new: Status,
                  reason: str | None = None, *, outcome: Mapping[str, Any] | None = None,
                  note: str | None = None, notify: bool = True, result: str | None = None,
                  worker_pid: int | None = None, worker: str | None = None,
                  owner: str | None = None, turn: int | None = None) -> Process | None:
    """``apply_transition`` that returns the changed process (``UPDATE … RETURNING``).

    Args:
        db: the state database (inside a transaction).
        process_id: full process id.
        old: the status the caller read (compare-and-set).
        new: target status.
        reason: close reason; required when ``new`` is CLOSED.
        outcome: JSON-able outcome stored with the process, or None.
        note: free text for the audit trail.
        notify: post ``child_closed`` to the parent on a close; False for a child
            whose orchestrator runs it inline and has its answer already
            (docs/engines.md "Children").
        result: also store this result text (a settling turn's reply) in the same update.
        worker_pid: also record the worker that claimed it and stamp its heartbeat.
        worker: also record the claiming worker's identity (``worker.worker_identity``).
        owner: change only while this worker holds it (a settle: docs/teams.md#takeover).
        turn: change only while this is its turn.

    Returns:
        The process as it is now; None when another writer changed its status first.

    Raises:
        InvalidTransition: as ``apply_transition``.
    """
    check_transition(old, new)
    if new is Status.CLOSED and reason is None:
        raise InvalidTransition("closing a process needs a close reason")
    row = store.change_status(db, process_id, old.value, new.value, reason, outcome,
                              result=result, worker_pid=worker_pid, worker=worker,
                              owner=owner, turn=turn)
    if row is None:
        return None
    store.record_transition(db, process_id, old.value, new.value, reason, note)
    if new is Status.CLOSED and notify:
        notify_parent(db, process_id, row=row)
    return Process.from_row(row)


def notify_parent(db: Database, process_id: str, kind: str = CHILD_CLOSED, *,
                  row: Row | None = None) -> bool:
    """Put one event about ``process_id`` into its parent's queue (none without a parent).

    The payload is ``{"processId", "name", "recipe", "engine", "status",
    "closeReason", "result", "outcome"}``: the child as stored now, its
    latest result text and structured outcome. Call it inside a transaction.

    Args:
        db: the state database (inside a transaction).
        process_id: the child's full id.
        kind: ``child_closed`` or ``child_settled``.
        row: the child's row as it is now, if the caller has it (else it is read).

    Returns:
        True when an event was written.
    """
    row = row if row is not None else store.get_by_id(db, process_id)
    if row is None or row["parent_process_id"] is None:
        return False
    child = Process.from_row(row)
    payload = {"processId": child.id, "name": child.name, "recipe": child.recipe,
               "engine": child.engine, "status": child.status.value,
               "closeReason": child.close_reason, "result": child.result,
               "outcome": dict(child.outcome) if child.outcome is not None else None}
    event_store.insert_event(db, child.tenant, row["parent_process_id"], child.id,
                             kind=kind, payload=payload)
    return True


def set_result(ws: Workspace, process_id: str, text: str | None) -> None:
    """Store a process's latest result text (an engine that settles by itself uses it)."""
    with ws.db.transaction():
        store.set_result(ws.db, process_id, text)


def save_state(ws: Workspace, process_id: str, state: Mapping[str, Any] | None) -> None:
    """Store an engine's state of a process (what it has done so far), in its own transaction."""
    with ws.db.transaction():
        store.set_state(ws.db, process_id, state)


def update_params(ws: Workspace, process_id: str, changes: Mapping[str, Any]) -> Process:
    """Merge ``changes`` into a process's params (an engine recording what it set up).

    Raises:
        ProcessNotFound: no such process.
    """
    with ws.db.transaction():
        current = load_process(ws, process_id)
        store.set_params(ws.db, current.id, {**current.params, **changes})
    return load_process(ws, current.id)


def queue_initial_inputs(db: Database, process_id: str, goal: str, steer: str | None,
                         yes_tools: Sequence[str] = ()) -> None:
    """Store a new process's first inputs: its goal (the task) and its steer, when different.

    ``yes_tools`` (``--yes-tools``) go into their meta, for the turn that takes them.
    """
    meta = {"yesTools": list(yes_tools)} if yes_tools else None
    if goal:
        conversation.add_message(db, process_id, "user", "task", goal, meta=meta)
    if steer and steer != goal:
        conversation.add_message(db, process_id, "user", "steer", steer, meta=meta)


def transition(ws: Workspace, process_id: str, new: Status,
               close_reason: CloseReason | str | None = None,
               outcome: Mapping[str, Any] | None = None, note: str | None = None) -> Process:
    """Move a process to ``new``, checked against ``TRANSITIONS``, atomically.

    Args:
        ws: workspace.
        process_id: full process id.
        new: target status.
        close_reason: required when ``new`` is CLOSED.
        outcome: JSON-able outcome stored with the process (e.g. a recipe path).
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
        apply_transition(db, current.id, current.status, new, reason, outcome=outcome, note=note)
    return load_process(ws, current.id)


def load_process(ws: Workspace, ident: str) -> Process:
    """Return a process of this tenant, as stored, by what a person gives.

    Looked up, first hit wins: the full id; the name in the current session
    (names are unique per session); a unique id prefix of at least
    ``MIN_PREFIX`` characters (docs/processes.md "Names and ids").

    A read only: a RUNNING process whose worker died stays RUNNING until
    ``lifecycle.reap_stale`` runs (the commands call it before they read).

    Raises:
        ProcessNotFound: no match, or a prefix that matches several processes.
    """
    tenant = ws.settings.tenant
    row = store.get_process(ws.db, tenant, ident)
    if row is None:
        row = store.find_by_name(ws.db, tenant, ws.settings.session, ident)
    if row is None and len(ident) >= MIN_PREFIX:
        rows = store.find_by_prefix(ws.db, tenant, ident)
        if len(rows) > 1:
            raise ProcessNotFound(ident, message=f"process id prefix '{ident}' is ambiguous")
        row = rows[0] if rows else None
    if row is None:
        session = ws.settings.session
        short = (f" (an id prefix needs at least {MIN_PREFIX} characters)"
                 if len(ident) < MIN_PREFIX else "")
        close = close_matches(ident, store.session_names(ws.db, tenant, session), limit=3)
        hint = f" — did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ProcessNotFound(ident, close=close, message=f"no process with id or name "
                                                          f"'{ident}' in session '{session}'"
                                                          f"{short}{hint}")
    return Process.from_row(row)


def list_processes(ws: Workspace, all_sessions: bool = False,
                   statuses: tuple[Status, ...] = (), limit: int | None = None) -> list[Process]:
    """Return processes of the tenant, newest first.

    Args:
        ws: workspace.
        all_sessions: every session of the tenant instead of the current one.
        statuses: only these statuses when non-empty.
        limit: at most this many.

    A read only, as ``load_process``.
    """
    rows = store.list_processes(
        ws.db, ws.settings.tenant, None if all_sessions else ws.settings.session,
        tuple(s.value for s in statuses), limit=limit,
    )
    return [Process.from_row(r) for r in rows]
