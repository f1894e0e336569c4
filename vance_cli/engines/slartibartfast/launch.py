"""The async fallback: Slartibartfast in a detached background worker.

Rules (docs/delegate.md, third bullet):
- ``start_background`` creates the Slart process (parent = ``--caller``,
  else the session root, ``vance_cli.processes.session``), starts the worker and
  returns ``PENDING`` at once. The generated recipe is not spawned.
- The worker is ``python -m vance_cli.engines.slartibartfast`` in its own session
  (``start_new_session``: Ctrl-C in the terminal and the CLI's exit do not
  reach it), stdin from ``/dev/null``, stdout and stderr appended to
  ``<state>/logs/slart-<processId>.log``, no inherited file descriptors, in
  the CLI's working folder (so ``.vance/`` is found the same way). It gets
  the resolved tenant, project, user, session and language as flags, the
  home folder as ``--home`` (when one is in use) and the cutoff as an
  absolute ``--deadline``; everything else (LLM endpoint, key, timeouts)
  comes from the inherited environment and the same config file — the key
  is never put on a command line.
- Right after the start, the launcher marks the process RUNNING under the
  worker's pid (``worker.hand_over``), so a worker that dies before its
  first heartbeat is still detected as stale; the worker adopts it.
- When the Slart process closes (DONE, STALE, STOPPED), the close itself
  posts a ``child_closed`` event into the parent's queue
  (``processes.apply_transition``), with the process's result: the
  generated recipe's ``recipeName``/``recipePath`` or the ``reason``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from vance_cli.base.errors import VanceError
from vance_cli.base.paths import ensure
from vance_cli.base.scope import SCOPE_KEYS
from vance_cli.engines.slartibartfast.engine import Control, SlartFailure, open_audit, plan_for
from vance_cli.engines.slartibartfast.outcome import FallbackResult, Outcome
from vance_cli.engines.slartibartfast.start import caller_of, start_slart
from vance_cli.engines.slartibartfast.supervisor import supervise
from vance_cli.processes.lifecycle import close_process
from vance_cli.processes.model import CloseReason
from vance_cli.processes.records import load_process
from vance_cli.processes.session import session_root
from vance_cli.processes.worker import hand_over

if TYPE_CHECKING:
    from vance_cli.base.paths import Paths
    from vance_cli.delegate.request import DelegateRequest
    from vance_cli.engines.slartibartfast.start import Started
    from vance_cli.workspace import Workspace

WORKER_MODULE = "vance_cli.background"
"""Module run with ``python -m`` as the background worker."""


_LAUNCHED: list[subprocess.Popen[bytes]] = []
"""Workers started by this process, kept referenced so no 'still running' warning fires
when a Popen object is collected; finished ones are dropped on the next launch."""


def home_of(paths: Paths) -> Path | None:
    """Return the ``--home`` folder that yields ``paths``, or None for platform dirs."""
    base = paths.config_dir
    if paths.data_dir == base / "data" and paths.state_dir == base / "state":
        return base
    return None


def worker_command(ws: Workspace, process_id: str, deadline: float,
                   timeout: float) -> list[str]:
    """Return the worker's argv: the interpreter, ``-m vance_cli.background`` and the flags."""
    settings = ws.settings
    argv = [sys.executable, "-m", WORKER_MODULE]
    home = home_of(settings.paths)
    if home is not None:
        argv += ["--home", str(home)]
    for key in SCOPE_KEYS:
        argv += [f"--{key}", str(settings.get(key))]
    return [*argv, "--deadline", f"{deadline:.3f}", "--timeout", f"{timeout:g}", process_id]


def worker_env(ws: Workspace, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the worker's environment: this one, without ``VANCE_HOME`` when no home is used."""
    env = dict(os.environ if environ is None else environ)
    if home_of(ws.settings.paths) is None:
        env.pop("VANCE_HOME", None)
    return env


def log_file(ws: Workspace, process_id: str) -> Path:
    """Return ``<state>/logs/slart-<processId>.log`` (its folder created)."""
    return ensure(ws.settings.paths.logs_dir) / f"slart-{process_id}.log"


def launch_worker(ws: Workspace, started: Started) -> tuple[int, Path]:
    """Start the detached worker and hand the process over to it.

    Returns:
        ``(worker pid, log file)``.

    Raises:
        OSError: the interpreter cannot be started or the log not opened.
    """
    plan = started.plan
    log = log_file(ws, plan.process_id)
    _LAUNCHED[:] = [p for p in _LAUNCHED if p.poll() is None]
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            worker_command(ws, plan.process_id, plan.deadline, plan.timeout),
            cwd=ws.cwd, env=worker_env(ws), stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
    _LAUNCHED.append(proc)
    hand_over(ws, plan.process_id, proc.pid)
    started.control.audit.update(workerPid=proc.pid, log=str(log))
    return proc.pid, log


def start_background(ws: Workspace, request: DelegateRequest, timeout: float) -> FallbackResult:
    """Create the Slart process, start its detached worker, return PENDING.

    Args:
        ws: workspace.
        request: the delegate request.
        timeout: the cutoff in seconds (the worker stops itself after it).

    Returns:
        PENDING with the Slart process id; FAILED when it cannot be started.

    Raises:
        InputError: no ``--caller`` and the session root's name is taken by
            another recipe's process.

    Rule: docs/delegate.md, third bullet.
    """
    caller, model = caller_of(ws, request)
    recipient = caller if caller is not None else session_root(ws)
    try:
        started = start_slart(ws, request, recipient.id, model, timeout, "async")
    except (VanceError, OSError) as exc:
        text = exc.message if isinstance(exc, VanceError) else f"{type(exc).__name__}: {exc}"
        return FallbackResult(Outcome.FAILED, f"Slartibartfast cannot start: {text}")
    slart_id = started.process.id
    try:
        pid, log = launch_worker(ws, started)
    except OSError as exc:
        reason = f"the background worker could not be started: {exc}"
        with started.control.audit.lock:
            close_process(ws, slart_id, CloseReason.STALE, {"reason": reason,
                                                            **started.plan.refs}, note=reason)
            started.control.settle(ws, started.plan)
        return FallbackResult(Outcome.FAILED, f"Slartibartfast cannot start: {reason}", slart_id)
    who = "the caller" if caller is not None else "the session root"
    return FallbackResult(Outcome.PENDING, (
        f"Slartibartfast is designing a new recipe in the background (process {slart_id}, "
        f"worker pid {pid}, cutoff {timeout:g} s, log {log}). It is not started "
        f"automatically: when Slartibartfast ends, an event lands in the queue of {who} "
        f"{recipient.id} ('vance process events --for {recipient.id}')"),
        slart_id, audit_file=started.control.audit.path, notify=recipient.id)


def work(ws: Workspace, process_id: str, deadline: float, timeout: float) -> tuple[int, str]:
    """The background worker's body: run Slartibartfast on ``process_id`` under the cutoff.

    Args:
        ws: the worker's workspace (built from the flags the launcher passed).
        process_id: the Slart process (full id).
        deadline: the cutoff, seconds since the epoch.
        timeout: the cutoff's length in seconds (for messages).

    Returns:
        ``(exit code, one summary line)``: 0 when the process closed DONE.

    Raises:
        WorkerTerminated: SIGTERM (``vance process stop``) ended the wait; the
            process was closed STOPPED first.
    """
    process = load_process(ws, process_id)
    try:
        plan = plan_for(ws, process, deadline, timeout)
    except SlartFailure as failure:
        close_process(ws, process.id, "STALE", {"reason": failure.reason})
        return 1, f"process {process.id}: {failure.reason}"
    closed = supervise(ws, plan, Control(open_audit(ws, plan.run_id)), adopt=True)
    result = dict(closed.result or {})
    detail = result.get("recipeName") or result.get("reason") or ""
    return (0 if closed.close_reason == "DONE" else 1,
            f"process {closed.id} closed {closed.close_reason}: {detail}")
