"""Slartibartfast as the runtime runs it: one whole process, under its cutoff.

Used for a Slart process started by the async fallback (its background
worker) and for a process of the ``slartibartfast`` recipe that the selector
matched: both run here, the way the sync fallback runs one (the engine in a
thread, the cutoff enforced by ``supervisor.supervise``).

- The cutoff comes from the process: ``params.deadline`` (seconds since the
  epoch) and ``params.timeoutSeconds``, which the fallback sets; a matched
  process has neither and gets ``fallback.timeout`` from now.
- A matched process has no run yet: its run folder and ``audit.json`` are
  created here, and ``params.runId``/``auditFile`` recorded on it.
- When the run generated a recipe, the process's result text names it and
  says how to start or keep it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from vance_cli.engines.slartibartfast.audit import AUDIT_FILE, Audit
from vance_cli.engines.slartibartfast.engine import Control, open_audit, plan_for
from vance_cli.engines.slartibartfast.start import new_run_folder
from vance_cli.engines.slartibartfast.supervisor import supervise
from vance_cli.processes.whole import CloseReason, Process, load_process, set_result, update_params

if TYPE_CHECKING:
    from vance_cli.processes.turn import TurnSink
    from vance_cli.workspace import Workspace


def run_process(ws: Workspace, process: Process, sink: TurnSink, adopt: bool) -> Process:
    """Design a recipe for the process's goal; return the process, closed.

    Args:
        ws: workspace.
        process: a Slart process (its goal is the task).
        sink: progress lines go here.
        adopt: a launcher marked the process RUNNING under this OS process.

    Returns:
        The process, CLOSED (DONE with the recipe, STOPPED, or STALE with the reason).

    Raises:
        OSError: a matched process's run folder or audit cannot be written.
    """
    if not process.params.get("runId"):
        process = _start_run(ws, process)
    timeout = float(process.params.get("timeoutSeconds") or ws.settings.fallback_timeout)
    deadline = float(process.params.get("deadline") or time.time() + timeout)
    plan = plan_for(ws, process, deadline, timeout)
    sink.status(f"Slartibartfast is designing a recipe (cutoff {timeout:g} s)")
    closed = supervise(ws, plan, Control(open_audit(ws, plan.run_id)), adopt=adopt)
    if closed.close_reason == CloseReason.DONE.value:
        outcome = dict(closed.outcome or {})
        name = outcome.get("recipeName")
        set_result(ws, closed.id, (
            f"Slartibartfast designed the recipe '{name}' ({outcome.get('recipePath')}). "
            f"Start it with: vance process create --recipe {name} --name NAME; keep it for"
            f" the selector with: vance recipe promote {name} NEW-NAME"))
    return load_process(ws, closed.id)


def _start_run(ws: Workspace, process: Process) -> Process:
    run_id, folder = new_run_folder(ws)
    Audit.create(folder / AUDIT_FILE, runId=run_id, slartProcessId=process.id,
                 processName=process.name, parentProcessId=process.parent_process_id,
                 mode="match", task=process.goal,
                 timeoutSeconds=ws.settings.fallback_timeout,
                 maxAttempts=ws.settings.fallback_max_repairs + 1)
    return update_params(ws, process.id, {"runId": run_id, "auditFile": str(folder / AUDIT_FILE)})
