"""Delegation limits, for every engine that starts processes (docs/engines.md "Delegation limits").

Rules:
- One place for the limits on processes starting processes: arthur's
  ``delegate`` action and the children of vogon, zaphod and marvin ask
  ``refusal`` before they start one.
- **Depth**: every engine that starts children (its descriptor delegates or
  orchestrates, arthur included) counts; a process with ``MAX_DEPTH`` of them in its ancestry,
  itself included, starts no more (an arthur whose selector picks an arthur
  recipe cannot nest without end).
- **Children per process**: ``MAX_CHILDREN`` over its whole life.
- **Live processes per session**: ``MAX_LIVE`` not ``CLOSED``.
- **Delegations per turn**: ``MAX_PER_TURN`` (arthur's actions).
- A refusal is a one-line reason naming the limit, for the model and the
  person alike: the caller turns it into a note, never an exception
  (orchestrators, whose children fail as ``CannotRun``, carry it there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vance_cli.processes.model import Process
from vance_cli.processes.records import load_process
from vance_cli.state import process_store as store

if TYPE_CHECKING:
    from vance_cli.workspace import Workspace

MAX_DEPTH = 3
"""Delegating processes a chain may hold (arthur → marvin → zaphod; its heads are leaves)."""

MAX_CHILDREN = 50
"""Children one process may start over its life (marvin's largest plan has 40 nodes)."""

MAX_LIVE = 32
"""Processes of one session that may be open at once (a storm stops here)."""

MAX_PER_TURN = 3
"""Delegations one turn may make (arthur's ``maxActions`` default)."""

MAX_ANCESTRY = 50
"""Parents read at most when a chain is counted."""


def ancestry(ws: Workspace, process: Process) -> list[Process]:
    """Return the process and its parents, nearest first (at most ``MAX_ANCESTRY``)."""
    chain = [process]
    while chain[-1].parent_process_id and len(chain) < MAX_ANCESTRY:
        chain.append(load_process(ws, chain[-1].parent_process_id))
    return chain


def depth(ws: Workspace, process: Process) -> int:
    """Return how many delegating processes stand in the chain, the process itself included."""
    return sum(ws.engines.delegates(p.engine) for p in ancestry(ws, process))


def refusal(ws: Workspace, process: Process, this_turn: int = 0,
            child_delegates: bool = True, counted: bool = True) -> str | None:
    """Say why ``process`` may not start one more process now, or None when it may.

    Args:
        ws: workspace.
        process: the process that would start one.
        this_turn: processes its current turn started already.
        child_delegates: the new process may start processes itself (unknown before the
            selector chose: True); a leaf child is not held by the depth.
        counted: the per-turn and per-process counts apply (arthur); an orchestrator's
            children are bounded by its own params (``maxWorkerSpawns``, ``maxTreeNodes``).

    Returns:
        One line naming the limit, e.g. ``delegation depth limit reached: 3 delegating
        processes in the chain (at most 3)``; None when every limit leaves room.
    """
    if counted and this_turn >= MAX_PER_TURN:
        return (f"delegation limit per turn reached: {this_turn} started this turn"
                f" (at most {MAX_PER_TURN})")
    levels = depth(ws, process) if child_delegates else 0
    if levels >= MAX_DEPTH:
        return (f"delegation depth limit reached: {levels} delegating processes in the chain"
                f" (at most {MAX_DEPTH})")
    children = store.count_children(ws.db, process.id) if counted else 0
    if children >= MAX_CHILDREN:
        return (f"children limit reached: process {process.id} started {children}"
                f" (at most {MAX_CHILDREN})")
    live = store.count_live(ws.db, process.tenant, process.session)
    if live >= MAX_LIVE:
        return (f"live process limit reached: {live} open in session {process.session}"
                f" (at most {MAX_LIVE})")
    return None
