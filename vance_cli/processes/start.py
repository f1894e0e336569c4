"""Getting a process's turns run: here (``start(wait=True)``) or by detached workers.

Rule: docs/processes.md#where-turns-run
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.base.records import frozen
from vance_cli.processes.inputs import has_pending
from vance_cli.processes.jobs import defer_turn, waiting_job
from vance_cli.processes.launcher import held, launch
from vance_cli.processes.model import CloseReason, Process, StartHow, Status
from vance_cli.processes.queued import wait_for_turn
from vance_cli.processes.records import load_process
from vance_cli.processes.runtime import TurnReport, drive

if TYPE_CHECKING:
    from vance_cli.processes.turn import TurnSink
    from vance_cli.workspace import Workspace

How = StartHow
"""How ``start`` dealt with a process (``model.StartHow``)."""


@frozen
class Started:
    """What ``start`` did with a process.

    Attributes:
        process: the process afterwards.
        how: ``foreground`` (turns ran here), ``background`` (a worker runs them),
            ``waiting_for_llm`` (no LLM is configured: it waits, ``IDLE``),
            ``nothing_to_do`` (no pending input), ``no_engine`` (its engine has no
            local code), ``passive`` (a mailbox), ``running`` (a turn is under way:
            whoever runs it takes the new input next), ``closed`` (no turn can
            run; a ``STALE`` one waits for ``vance process run``).
        report: the last turn's report (foreground only).
        worker_pid: the worker's pid (background; running: the running turn's).
        log: the worker's log file (background only).
        job: in team mode, the ``vance.turn`` job that runs it (background), or None
            when a turn of it already waited in the queue.
    """

    process: Process
    how: How
    report: TurnReport | None = None
    worker_pid: int | None = None
    log: Path | None = None
    job: int | None = None


def start(ws: Workspace, process_id: str, *, wait: bool = False,
          sink: TurnSink | None = None) -> Started:
    """Get a process's pending turns run: here (``wait``) or by a background worker.

    Args:
        ws: workspace.
        process_id: id or unique prefix.
        wait: run the turns in the foreground and return when they settled.
        sink: live output of foreground turns.

    Returns:
        What was done (``Started.how``); without an LLM the process stays ``IDLE``
        with its inputs pending, and ``vance process run`` runs them later. In team
        mode no turn runs here: a job is deferred, and ``wait`` follows it until the
        turn settled on whichever worker ran it (``queued.wait_for_turn``).

    Raises:
        As ``run_turn`` (foreground); OSError: the worker cannot be started;
        NoWorker: (team, ``wait``) no ``vance worker`` took the turn.
    """
    process = load_process(ws, process_id)
    why = held(ws, process)
    if why is not None:
        return Started(process, why,
                       worker_pid=process.worker_pid if why == "running" else None)
    if wait and not ws.settings.team:
        report = drive(ws, process.id, sink=sink)
        return Started(report.process, StartHow.FOREGROUND, report=report)
    launched = launch(ws, process.id)
    if wait:
        report = wait_for_turn(ws, process.id, launched.job, sink=sink)
        return Started(report.process, StartHow.FOREGROUND, report=report, job=launched.job)
    return Started(load_process(ws, process.id), StartHow.BACKGROUND,
                   worker_pid=launched.worker_pid, log=launched.log, job=launched.job)


def run_pending(ws: Workspace, process_id: str, *,
                sink: TurnSink | None = None) -> TurnReport:
    """``vance process run``: run a process's pending turns, reopening a ``STALE`` one first.

    On one machine here (``drive(retry=True)``); in team mode as a job (``retry``) that
    this waits for, on whichever worker runs it (``queued.wait_for_turn``).

    Raises:
        As ``drive``; NoWorker: (team) no ``vance worker`` took the turn.
    """
    if not ws.settings.team:
        return drive(ws, process_id, sink=sink, retry=True)
    process = load_process(ws, process_id)
    stale = process.status is Status.CLOSED and process.close_reason == CloseReason.STALE
    if process.status is Status.RUNNING or waiting_job(ws, process.id) is not None:
        return wait_for_turn(ws, process.id, None, sink=sink)  # one runs or waits already
    if process.status is Status.CLOSED and not stale:
        return drive(ws, process.id, sink=sink, retry=True)  # refused as on one machine
    if not has_pending(ws, process.id):
        return TurnReport(process)
    job = defer_turn(ws, process.id, retry=True)
    return wait_for_turn(ws, process.id, job, sink=sink)


BATCH_PARALLEL = 4
"""Workers a batch starts at most when its processes' params set no ``maxParallel`` (as
zaphod's heads); ``maxParallel`` is bounded to 1 to 10 there too."""


def start_all(ws: Workspace, process_ids: Sequence[str]) -> list[Started]:
    """Get the pending turns of several processes run by background workers (a batch).

    At most ``maxParallel`` workers start (the first process's ``params.maxParallel``,
    else ``BATCH_PARALLEL``); each runs its share of the processes one after the
    other, in order (docs/processes.md "Where turns run"). Processes that cannot
    start now (no LLM, closed, nothing waiting …) are left as ``start`` leaves them.

    Args:
        ws: workspace.
        process_ids: ids or unique prefixes, in order.

    Returns:
        One Started per process, in order (``background`` with its worker's pid).

    Raises:
        ProcessNotFound: an id names no process. OSError: a worker cannot be started.
    """
    if ws.settings.team:  # one job per process; the team's workers share them out
        return [start(ws, pid) for pid in process_ids]
    processes = [load_process(ws, pid) for pid in process_ids]
    waits = [held(ws, p) for p in processes]
    ready = [p for p, why in zip(processes, waits, strict=True) if why is None]
    width = _parallel(ready[0].params) if ready else 1
    pids: dict[str, tuple[int, Path]] = {}
    for lane in range(min(width, len(ready))):
        share = [p.id for p in ready[lane::width]]
        launched = launch(ws, share[0], *share[1:])
        assert launched.worker_pid is not None and launched.log is not None
        pids.update(dict.fromkeys(share, (launched.worker_pid, launched.log)))
    out: list[Started] = []
    for process, why in zip(processes, waits, strict=True):
        if why is not None:
            out.append(Started(process, why, worker_pid=process.worker_pid
                               if why == "running" else None))
        else:
            pid, log = pids[process.id]
            out.append(Started(load_process(ws, process.id), StartHow.BACKGROUND, worker_pid=pid,
                               log=log))
    return out


def _parallel(params: Mapping[str, Any]) -> int:
    value = params.get("maxParallel")
    if isinstance(value, int) and not isinstance(value, bool):
        return max(1, min(10, value))
    return BATCH_PARALLEL
