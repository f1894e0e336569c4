"""The async fallback: Slartibartfast in a detached background worker.

Rules (docs/delegate.md "Slartibartfast fallback"):
- ``start_background`` creates the Slart process (parent = ``--caller``,
  else the session root, ``processes.session``) with its cutoff in its
  params (``deadline``, ``timeoutSeconds``), starts the runtime's background
  worker for it (``processes.launcher``) and returns ``PENDING`` at once. The
  worker runs the process as any other (``processes.runtime``: the
  Slartibartfast engine runs it whole, under the cutoff). The generated
  recipe is not spawned.
- When the Slart process closes (DONE, STALE, STOPPED), the close itself
  posts a ``child_closed`` event into the parent's queue
  (``processes.records.apply_transition``), with the process's outcome: the
  generated recipe's ``recipeName``/``recipePath`` or the ``reason``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vance_cli.base.errors import VanceError
from vance_cli.engines.slartibartfast.outcome import FallbackResult, Outcome
from vance_cli.engines.slartibartfast.start import caller_of, start_slart
from vance_cli.processes.whole import CloseReason, close_process, launch, session_root

if TYPE_CHECKING:
    from vance_cli.delegate.request import DelegateRequest
    from vance_cli.workspace import Workspace


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
        launched = launch(ws, slart_id)
    except OSError as exc:
        reason = f"the background worker could not be started: {exc}"
        with started.control.audit.lock:
            close_process(ws, slart_id, CloseReason.STALE, {"reason": reason,
                                                            **started.plan.refs}, note=reason)
            started.control.settle(ws, started.plan)
        return FallbackResult(Outcome.FAILED, f"Slartibartfast cannot start: {reason}", slart_id)
    who = "the caller" if caller is not None else "the session root"
    where = (f"worker pid {launched.worker_pid}, cutoff {timeout:g} s, log {launched.log}"
             if launched.worker_pid is not None else
             f"queued for the team's workers, cutoff {timeout:g} s")
    return FallbackResult(Outcome.PENDING, (
        f"Slartibartfast is designing a new recipe in the background (process {slart_id}, "
        f"{where}). It is not started "
        f"automatically: when Slartibartfast ends, an event lands in the queue of {who} "
        f"{recipient.id} ('vance process events --for {recipient.id}')"),
        slart_id, audit_file=started.control.audit.path, notify=recipient.id)
