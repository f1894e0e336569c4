"""Removing closed processes: ``vance process rm`` and ``vance process prune`` (docs/processes.md).

Rules:
- Only ``CLOSED`` processes are removed: an open one is stopped first
  (``vance process stop``), so no worker is left writing to a process that
  is gone. ``rm`` names them, and takes their closed children along (and
  theirs, down the tree); ``prune`` takes every closed process of the
  session (or of the tenant).
- A removal is one transaction: the processes, their transitions, turns,
  messages, LLM calls and the events addressed to them. Children that are
  still open stay, without a parent; the decision log keeps its rows.
- Planning (``plan_rm``, ``plan_prune``) reads only, so the command can ask
  for confirmation between the plan and ``remove``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from vance_cli.base.errors import InputError
from vance_cli.processes.lifecycle import reap_and_load, reap_stale
from vance_cli.processes.model import Process, Status
from vance_cli.processes.records import list_processes
from vance_cli.state import process_store

if TYPE_CHECKING:
    from vance_cli.workspace import Workspace


def plan_rm(ws: Workspace, idents: Sequence[str]) -> list[Process]:
    """Return the processes ``idents`` name (id, name or prefix), each once, all CLOSED.

    Each named process brings its CLOSED children, and theirs (an open child
    stays, and so does what is under it), listed after their parent.

    Raises:
        ProcessNotFound: an ident names no process.
        InputError: a named process is not CLOSED (``stop`` it first).
    """
    found: dict[str, Process] = {}
    for ident in idents:
        process = reap_and_load(ws, ident)
        if process.status is not Status.CLOSED:
            raise InputError(f"process {process.id} ({process.name}) is {process.status.value}: "
                             f"stop it first with 'vance process stop {process.id}'",
                             id=process.id, status=process.status.value)
        found.setdefault(process.id, process)
    for process in list(found.values()):
        _add_closed_children(ws, process, found)
    return list(found.values())


def _add_closed_children(ws: Workspace, parent: Process, found: dict[str, Process]) -> None:
    """Add the CLOSED descendants of ``parent`` to ``found`` (through closed children only)."""
    pending = [parent.id]
    while pending:
        rows = process_store.list_processes(ws.db, ws.settings.tenant, parent=pending.pop(),
                                            statuses=(Status.CLOSED.value,))
        for child in (Process.from_row(r) for r in reversed(rows)):
            if child.id not in found:
                found[child.id] = child
                pending.append(child.id)


def plan_prune(ws: Workspace, all_sessions: bool = False) -> list[Process]:
    """Return the CLOSED processes of this session (of the tenant with ``all_sessions``)."""
    reap_stale(ws)
    return list_processes(ws, all_sessions=all_sessions, statuses=(Status.CLOSED,))


def remove(ws: Workspace, processes: Sequence[Process]) -> list[str]:
    """Remove ``processes`` (from ``plan_rm``/``plan_prune``) in one transaction.

    Returns:
        The ids removed (one reopened meanwhile is kept).
    """
    with ws.db.transaction():
        return process_store.delete_closed(ws.db, [p.id for p in processes])
