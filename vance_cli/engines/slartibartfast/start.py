"""Starting a Slartibartfast run: its run folder, its process (named after the target), its audit.

Rules (docs/delegate.md, "Slartibartfast fallback"):
- A Slart process (recipe ``slartibartfast``) is created with the task as
  its goal, ``params.runId``, ``params.auditFile`` (the absolute path of
  its ``audit.json``, for the close hook) and, when the caller has one,
  ``params.model``.
- Its name is ``delegate-fallback-slart-<name>``, ``<name>`` being the name
  the spawned process will get (``--name``, else a slug of the task plus a
  random suffix); when taken (an earlier fallback with the same
  ``--name``), ``-2``, ``-3`` … are tried, then random suffixes.
"""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import DuplicateProcessName
from vance_cli.base.records import frozen
from vance_cli.delegate.flow import caller_model
from vance_cli.delegate.request import default_name
from vance_cli.engines.slartibartfast.audit import AUDIT_FILE, Audit, run_folder
from vance_cli.engines.slartibartfast.engine import Control, plan_for
from vance_cli.processes.whole import (
    NAME_MAX,
    ProcessSpec,
    close_process,
    create_process,
    load_process,
)

if TYPE_CHECKING:
    from vance_cli.delegate.request import DelegateRequest
    from vance_cli.engines.slartibartfast.engine import Plan
    from vance_cli.processes.whole import Process
    from vance_cli.workspace import Workspace





SLART_RECIPE = "slartibartfast"
"""Recipe of the Slart process (bundled)."""


SLART_PREFIX = "delegate-fallback-slart-"
"""Slart process names are this plus the name of the process to be spawned (docs/delegate.md)."""


NUMBERED_VARIANTS = 8
"""Numbered name variants (``-2`` … ``-9``) tried before random suffixes."""


@frozen
class Started:
    """A Slart process ready to run: its plan, the shared control, the target name."""

    process: Process
    plan: Plan
    control: Control
    target: str


def new_run_id() -> str:
    """Return a run id: UTC time ``YYYYMMDD-HHMMSS`` plus ``-`` and 4 random hex characters."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


def new_run_folder(ws: Workspace) -> tuple[str, Path]:
    """Create the folder of a new run (``recipes/_slart/<runId>``); return ``(runId, folder)``.

    Raises:
        OSError: the folder cannot be created.
    """
    for _ in range(20):
        run_id = new_run_id()
        folder = run_folder(ws.write_folder, run_id)
        try:
            folder.mkdir(parents=True, exist_ok=False)
        except FileExistsError:
            continue
        return run_id, folder
    raise FileExistsError("no free Slartibartfast run id")  # pragma: no cover


def slart_names(target: str) -> list[str]:
    """Return the Slart process names to try for a spawned process named ``target``.

    ``delegate-fallback-slart-<target>`` first, then ``-2`` … ``-9``, then
    three random 6-hex suffixes; each at most ``processes.NAME_MAX`` characters.
    """
    stem = (SLART_PREFIX + target)[:NAME_MAX - 7]
    numbered = [f"{stem}-{n}" for n in range(2, 2 + NUMBERED_VARIANTS)]
    random = [f"{stem}-{secrets.token_hex(3)}" for _ in range(3)]
    return [stem, *numbered, *random]


def _create_slart(ws: Workspace, request: DelegateRequest, target: str,
                  params: dict[str, Any], parent: str | None) -> Process:

    names = slart_names(target)
    for name in names:
        spec = ProcessSpec(recipe=SLART_RECIPE, name=name, goal=request.selector_task,
                           params=params, parent=parent)
        try:
            return create_process(ws, spec)
        except DuplicateProcessName:
            if name == names[-1]:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def start_slart(ws: Workspace, request: DelegateRequest, parent: str | None,
                model: str | None, timeout: float, mode: str) -> Started:
    """Create the run folder, the Slart process and its audit.

    Args:
        ws: workspace.
        request: the delegate request (task, name).
        parent: parent of the Slart process (the caller, or the session root).
        model: the caller's model preference, or None.
        timeout: the cutoff in seconds, counted from now.
        mode: ``sync`` or ``async`` (recorded in the audit).

    Raises:
        VanceError: the Slart process cannot be created (its recipe or
            engine is missing …); the run folder is removed again.
        OSError: the run folder or the audit cannot be written.
    """
    target = request.name or default_name(request.selector_task)
    run_id, folder = new_run_folder(ws)
    deadline = time.time() + timeout
    params: dict[str, Any] = {"runId": run_id, "auditFile": str(folder / AUDIT_FILE),
                              "deadline": round(deadline, 3), "timeoutSeconds": timeout,
                              **({"model": model} if model else {})}
    try:
        process = _create_slart(ws, request, target, params, parent)
    except BaseException:
        folder.rmdir()
        raise
    try:
        audit = Audit.create(folder / AUDIT_FILE, runId=run_id, slartProcessId=process.id,
                             processName=process.name, parentProcessId=parent, mode=mode,
                             task=request.selector_task, timeoutSeconds=timeout,
                             deadline=_iso(deadline),
                             maxAttempts=ws.settings.fallback_max_repairs + 1)
    except OSError as exc:  # the process must not stay IDLE with nobody to run it

        close_process(ws, process.id, "STALE", {"reason": f"cannot write the audit: {exc}"})
        raise
    return Started(process, plan_for(ws, process, deadline, timeout), Control(audit), target)


def _iso(epoch: float) -> str:

    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def caller_of(ws: Workspace, request: DelegateRequest) -> tuple[Process | None, str | None]:
    """Return the caller process (or None) and its model preference (or None)."""
    if not request.caller:
        return None, None
    caller = load_process(ws, request.caller)
    return caller, caller_model(ws, caller)
