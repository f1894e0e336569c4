"""Waiting for a turn a team's worker runs (``--wait`` in team mode).

Rules (docs/teams.md#the-command-line-in-team-mode):
- The command that deferred the turn (``launch``) follows its job until it ran:
  a final job status, or the process closed. A retried job (a takeover) is the
  same job, so the wait goes on across hosts.
- Live output comes from the stream table (``follow.follow_output``), where the
  worker writes it; the reply of the last turn is what the report carries (and what
  the sink gets when nothing was streamed).
- A job that waits while no worker of the team is alive (no procrastinate
  heartbeat within ``process.stale_timeout``) for that long ends the wait with
  ``NoWorker``: the turn stays queued for when one starts.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from vance_cli.base.errors import NoWorker
from vance_cli.processes.follow import follow_output
from vance_cli.processes.inputs import has_pending
from vance_cli.processes.jobs import FINAL, defer_turn, job_status, waiting_job
from vance_cli.processes.model import Process, Status, TurnEnd
from vance_cli.processes.records import load_process
from vance_cli.processes.runtime import TurnReport
from vance_cli.state import conversation

if TYPE_CHECKING:
    from vance_cli.processes.turn import TurnSink
    from vance_cli.workspace import Workspace

POLL_S = 0.25
"""Seconds between looks at the job while it waits or runs."""


def live_workers(ws: Workspace) -> int:
    """Return how many of the team's workers beat within ``process.stale_timeout``."""
    row = ws.db.query_one("SELECT count(*) FROM procrastinate_workers WHERE last_heartbeat >"
                          " now() - make_interval(secs => ?)",
                          (ws.settings.process_stale_timeout,))
    return int(row[0]) if row else 0


def wait_for_turn(ws: Workspace, process_id: str, job: int | None, *,
                  sink: TurnSink | None = None, before: int | None = None) -> TurnReport:
    """Wait until the process's queued turn ran on a team's worker; return its report.

    Args:
        ws: workspace on a team's store.
        process_id: full id.
        job: the job ``launch`` deferred; None: the turn that already waited (found here).
        sink: status lines (and the turn's text, when the stream table has it).
        before: the process's turns before the job was deferred (None: read now).

    Returns:
        The report of the process's last turn (``number`` None when none ran).

    Raises:
        NoWorker: no worker of the team was alive while the job waited.
    """
    before = load_process(ws, process_id).turns if before is None else before
    job = job if job is not None else waiting_job(ws, process_id)
    told = shown = False
    idle_since: float | None = None
    while job is not None:
        status = job_status(ws, job)
        if status is None or status in FINAL:
            break
        now = load_process(ws, process_id)
        if status == "doing" and now.status is Status.RUNNING and sink is not None:
            shown = follow_output(ws, now, sink.text).shown or shown  # until it settles
            continue
        if status == "todo":
            if sink is not None and not told:
                sink.status(f"queued as job {job}: waiting for a vance worker")
                told = True
            if live_workers(ws) == 0:
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since > ws.settings.process_stale_timeout:
                    raise NoWorker(f"process {process_id} waits in the team's queue (job {job})"
                                   " and no vance worker is running: start one with"
                                   " 'vance worker'", process=process_id, job=job)
            else:
                idle_since = None
        time.sleep(POLL_S)
    return report_of(ws, process_id, before, None if shown else sink)


def report_of(ws: Workspace, process_id: str, before: int,
              sink: TurnSink | None = None, *, first: bool = False) -> TurnReport:
    """Return the report of the last turn after turn ``before``, its reply given to ``sink``.

    ``first``: of the first turn after ``before`` instead (the one that took an input).
    """
    process = load_process(ws, process_id)
    rows = [row for row in conversation.turns(ws.db, process_id) if int(row["number"]) > before]
    if not rows:
        return TurnReport(process)
    last = rows[0] if first else rows[-1]
    number = int(last["number"])
    outcome = str(last["outcome"])
    settle = TurnEnd(outcome) if outcome in TurnEnd.__members__ else None
    if process.status is Status.CLOSED and settle in (TurnEnd.IDLE, None):
        settle = TurnEnd.DONE if process.close_reason == "DONE" else TurnEnd.FAILED
    reply = conversation.turn_reply(ws.db, process_id, number)
    if sink is not None and reply:
        sink.text(reply)
    reason = last["reason"] or (None if settle in (TurnEnd.DONE, TurnEnd.IDLE,
                                                   TurnEnd.BLOCKED) else process.label)
    return TurnReport(process, number, settle, reply, reason)


def run_child_job(ws: Workspace, child: Process, sink: TurnSink, close: bool) -> TurnReport:
    """Run one turn of an orchestrator's child as a job of its own; return its report.

    The ``ChildTurn`` of a team's worker (``runtime.CHILD_RUNNER``): the child's turn
    runs on whichever worker takes it; this thread waits for it. A child whose turn
    already waits or runs, or already ran (an orchestrator's turn run again after a
    takeover), is waited for or read, not deferred twice. The report is the one of the
    turn that took the child's newest input.

    Raises:
        NoWorker: no worker of the team was alive while the job waited.
    """
    newest = conversation.newest_input(ws.db, child.id)
    job = waiting_job(ws, child.id)
    if job is None and has_pending(ws, child.id):
        job = defer_turn(ws, child.id, child=True, close=close)
    if job is not None:
        wait_for_turn(ws, child.id, job, sink=sink)
    taker = None if newest is None else conversation.taken_by(ws.db, newest)
    if taker is not None:
        return report_of(ws, child.id, taker - 1, sink, first=True)
    return report_of(ws, child.id, load_process(ws, child.id).turns - 1, sink)
