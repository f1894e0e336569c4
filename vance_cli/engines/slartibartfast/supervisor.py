"""The supervisor: run the Slartibartfast engine in a thread under a hard wall-clock cutoff.

Rules (docs/delegate.md "Slartibartfast fallback"):
- The engine (``engine.run_engine``) runs in a daemon thread with its own
  workspace (its own database connection); the calling thread waits for it
  until ``Plan.deadline`` — with a spinner in the CLI.
- Past the deadline the supervisor closes the process ``STOPPED`` with
  ``{"reason", "timedOut": true, "runId", "auditPath"}`` and the audit
  ``TIMED_OUT``, then gives the thread ``GRACE`` seconds to finish writing.
  Each LLM request is already bounded by the time left, so the thread ends
  about then anyway; if the interpreter exits first, the daemon thread dies
  with it and stores nothing (the store needs the process to be RUNNING).
- Ctrl-C or SIGTERM (which ``vance process stop`` sends to the worker pid)
  while waiting closes the process ``STOPPED`` too ("interrupted"), unless
  it is closed already, then re-raises. While waiting, the supervisor looks
  at the process every ``POLL`` seconds: once someone else closed it, it
  stops waiting for the engine's LLM call.
- The process is always CLOSED when ``supervise`` returns: an engine that
  ended without closing it (a bug, a start that failed) leaves it to be
  closed ``STALE`` here with the error.
"""

from __future__ import annotations

import threading
from contextlib import nullcontext
from typing import TYPE_CHECKING

from vance_cli.base.signals import install_sigterm, restore_sigterm
from vance_cli.engines.slartibartfast.engine import (
    Control,
    Plan,
    Progress,
    cutoff_reason,
    run_engine,
)
from vance_cli.processes.whole import CloseReason, Process, Status, close_process, load_process

if TYPE_CHECKING:
    from vance_cli.workspace import Workspace

GRACE = 2.0
"""Seconds the supervisor waits for the engine thread to record its end after a stop."""

POLL = 0.25
"""Seconds between two looks at the process while waiting (a stop from outside ends the wait)."""


def supervise(ws: Workspace, plan: Plan, control: Control, progress: Progress | None = None,
              adopt: bool = False) -> Process:
    """Run the engine in a thread and enforce the cutoff; return the closed Slart process.

    Args:
        ws: the caller's workspace (the engine thread opens its own).
        plan: what to work on (its ``deadline`` is the cutoff).
        control: shared with the engine.
        progress: shown while waiting (a spinner), or None.
        adopt: the launcher already marked the process RUNNING under this pid.

    Returns:
        The Slart process, CLOSED (DONE, STOPPED or STALE).

    Raises:
        BaseException: Ctrl-C or SIGTERM while waiting, after the process was
            closed STOPPED.
    """

    def body() -> None:
        own = ws.fork()
        try:
            run_engine(own, plan, control, adopt=adopt)
        except BaseException as exc:  # recorded; the supervisor closes the process
            control.error = exc
        finally:
            own.close()

    thread = threading.Thread(target=body, name=f"slartibartfast-{plan.process_id}",
                              daemon=True)
    previous = install_sigterm()  # in the main thread: SIGTERM → WorkerTerminated
    thread.start()
    try:
        with progress() if progress else nullcontext():
            _wait(ws, plan, thread)
    except BaseException:
        control.stop(ws, plan, "interrupted while Slartibartfast was working", False)
        thread.join(GRACE)
        raise
    finally:
        restore_sigterm(previous)
    if thread.is_alive():
        if plan.remaining() <= 0:
            control.stop(ws, plan, cutoff_reason(plan.timeout), True)
        thread.join(GRACE)
    return _closed(ws, plan, control)


def _wait(ws: Workspace, plan: Plan, thread: threading.Thread) -> None:
    """Wait for the engine until the deadline, or until someone else closed the process."""
    while thread.is_alive():
        left = plan.remaining()
        if left <= 0:
            return
        thread.join(min(POLL, left))
        if thread.is_alive() and load_process(ws, plan.process_id).status is Status.CLOSED:
            return  # stopped from outside or reaped: do not wait for the LLM call


def _closed(ws: Workspace, plan: Plan, control: Control) -> Process:
    """Return the process; close it STALE first if the engine ended without closing it."""
    process = load_process(ws, plan.process_id)
    if process.status is Status.CLOSED:
        return process
    error = control.error
    reason = (f"worker failed: {type(error).__name__}: {error}" if error is not None
              else "Slartibartfast ended without a result")
    with control.audit.lock:
        process, _ = close_process(ws, plan.process_id, CloseReason.STALE,
                                   {"reason": reason, **plan.refs}, note=reason)
        control.settle(ws, plan)
    return process
