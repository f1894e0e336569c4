"""Taking over a turn whose worker died (team mode: a stalled job run again elsewhere).

Rules (docs/teams.md#takeover):
- A turn job that finds its process ``RUNNING`` under another worker is a retry
  of a job whose worker stopped beating (procrastinate's stalled-job retry). It
  adopts the process with compare-and-set on the old worker, counting one
  takeover; the cut-off turn ends ``STALE`` ("its worker was lost") and its LLM
  call under way is recorded as cut off. The inputs were never consumed (a turn
  consumes them when it settles), so the new turn takes them again: a turn runs
  at least once, and the calls it makes again are recorded with ``attempt`` 2, 3 ….
- It waits first while the old worker still beats (at most one stale timeout): a
  worker whose process heartbeat is fresh keeps its turn.
- Past ``process.max_takeovers`` the process closes ``STALE`` instead, as stale
  detection closes a dead local worker's.
- The old worker, if it still runs somewhere (a zombie), loses: its heartbeat no
  longer lands, and its settle compares on the worker and is refused.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from vance_cli.base.clock import parse_time
from vance_cli.processes.lifecycle import CUT_OFF
from vance_cli.processes.model import CloseReason, Process, Status
from vance_cli.processes.records import apply_transition, load_process
from vance_cli.state import conversation
from vance_cli.state import process_store as store

if TYPE_CHECKING:
    from vance_cli.workspace import Workspace

def adopt(ws: Workspace, process_id: str, worker: str) -> Process:
    """Take over the process's turn for ``worker`` if another worker holds it RUNNING.

    Args:
        ws: workspace.
        process_id: full id.
        worker: this attempt's identity.

    Returns:
        The process afterwards: RUNNING under ``worker`` (taken over), ``CLOSED/STALE``
        (past ``process.max_takeovers``), or as it was (not RUNNING, or already ours).
    """
    _until_silent(ws, process_id, worker)
    db = ws.db
    closed: Process | None = None
    with db.transaction():
        current = load_process(ws, process_id)
        if current.status is not Status.RUNNING or current.worker == worker:
            return current
        limit = ws.settings.process_max_takeovers
        if current.takeovers >= limit:
            reason = (f"its worker {current.worker} was lost, and its turns were taken over"
                      f" {current.takeovers} times already (process.max_takeovers {limit})")
            apply_transition(db, current.id, Status.RUNNING, Status.CLOSED,
                             CloseReason.STALE.value, outcome={"reason": reason}, note=reason)
            conversation.end_running_turns(db, current.id, "STALE", reason)
            conversation.cut_off_calls(db, current.id, CUT_OFF)
            closed = load_process(ws, current.id)
        else:
            reason = f"its worker {current.worker} was lost: taken over by {worker}"
            row = store.take_over(db, current.id, current.worker, worker, os.getpid())
            if row is None:  # another writer came first: leave it as it is now
                return load_process(ws, current.id)
            conversation.end_running_turns(db, current.id, "STALE", reason)
            conversation.cut_off_calls(db, current.id, CUT_OFF)
            store.record_transition(db, current.id, Status.RUNNING.value,
                                    Status.RUNNING.value, None, reason)
            return Process.from_row(row)
    ws.engines.run_close_hooks(ws, [closed])
    return closed


def _until_silent(ws: Workspace, process_id: str, worker: str) -> None:
    """Wait while another worker still beats for the process (bounded by one stale timeout).

    The job queue retries a job when its worker's queue heartbeat is old; the
    process's own heartbeat is stamped at other moments and may be a little
    younger. A worker that still beats keeps its turn: wait until it is silent for
    ``process.stale_timeout``, or the process leaves it.
    """
    timeout = ws.settings.process_stale_timeout
    deadline = time.monotonic() + timeout + 1.0
    while time.monotonic() < deadline:
        current = load_process(ws, process_id)
        if current.status is not Status.RUNNING or current.worker == worker or \
                current.heartbeat_at is None:
            return
        age = (datetime.now(UTC) - parse_time(current.heartbeat_at)).total_seconds()
        if age >= timeout:
            return
        time.sleep(min(0.5, timeout - age + 0.05))
