"""The background worker's body: a workspace from the launcher's flags, then the turns.

A batch worker (several ids; docs/processes.md "Where turns run") got all
its processes handed over (``RUNNING`` under its pid) and runs them one
after the other. The ones still waiting for their turn keep a heartbeat, so
stale detection, ``vance process wait`` and ``vance process stop`` treat
them as the worker's. ``vance process stop`` of any of them sends this
worker SIGTERM: it ends the running turn only when that turn's process is
the one stopped; a stopped process that waits is skipped when its turn comes.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType

from vance_cli.base.config import load_settings
from vance_cli.base.errors import VanceError
from vance_cli.base.signals import WorkerTerminated, stop_cause
from vance_cli.processes.runtime import TurnReport, drive
from vance_cli.processes.worker import Heartbeat, heartbeat_interval, worker_identity
from vance_cli.state import process_store
from vance_cli.state.stores import open_state
from vance_cli.workspace import Workspace


def run(process_ids: Sequence[str], home: str | None,
        flags: Mapping[str, str | None]) -> tuple[int, str]:
    """Run the processes' pending turns in a workspace of its own, one process after the other.

    Args:
        process_ids: full ids a launcher handed over to this worker, in order.
        home: the ``--home`` folder, or None.
        flags: tenant, project, user, session, lang as the launcher resolved them.

    Returns:
        ``(exit code, one summary line)``: 0 unless a turn failed.

    Raises:
        WorkerTerminated: SIGTERM in the turn of a worker with one process.
    """
    ws = Workspace(load_settings(flags=flags, home=home))
    if len(process_ids) == 1:
        try:
            report = drive(ws, process_ids[0], adopt=True)
        finally:
            ws.close()
        return (1 if report.failed else 0, _summary(report))
    try:
        return _run_batch(ws, process_ids)
    finally:
        ws.close()


def _run_batch(ws: Workspace, process_ids: Sequence[str]) -> tuple[int, str]:
    settings = ws.settings
    interval = heartbeat_interval(settings.process_heartbeat_interval,
                                  settings.process_stale_timeout)
    waiting = {pid: Heartbeat(settings.state_target, pid, worker_identity(), interval)
               for pid in process_ids[1:]}
    for beat in waiting.values():
        beat.start()
    current: list[str] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: _on_sigterm(
        settings.state_target, current, frame))
    lines: list[str] = []
    failed = False
    for process_id in process_ids:
        if process_id in waiting:
            waiting.pop(process_id).stop()
        current[:] = [process_id]
        try:
            report = drive(ws, process_id, adopt=True)
        except BaseException as exc:
            if not isinstance(stop_cause(exc) or exc, WorkerTerminated | VanceError):
                raise
            lines.append(f"process {process_id} skipped: {_why(exc)}")
            continue
        finally:
            current.clear()
        failed = failed or report.failed
        lines.append(_summary(report))
    return (1 if failed else 0, "; ".join(lines))


def _on_sigterm(target: Path | str, current: list[str], frame: FrameType | None) -> None:
    """SIGTERM in a batch worker: end the running turn only if its process was stopped."""
    if not current:
        return
    try:  # a connection of its own: the turn may be inside a transaction of ws.db
        db = open_state(target)
        try:
            row = process_store.get_by_id(db, current[0])
        finally:
            db.close()
    except (sqlite3.Error, VanceError):
        row = None
    if row is None or row["status"] != "RUNNING" or row["worker_pid"] != os.getpid():
        raise WorkerTerminated


def _why(exc: BaseException) -> str:
    return "stopped (SIGTERM)" if isinstance(stop_cause(exc), WorkerTerminated) else str(exc)


def _summary(report: TurnReport) -> str:
    process = report.process
    state = process.status.value + (f"/{process.close_reason}" if process.close_reason else "")
    detail = f": {report.reason}" if report.reason else ""
    return f"process {process.id} turn {report.number} ended {report.settle}, {state}{detail}"
