"""The Slartibartfast fallback of ``vance delegate``: a new recipe when nothing fits.

``Fallback`` is the runner ``delegate()`` calls for a NONE that is
``fallback_eligible`` (docs/delegate.md step 7); it returns a
``FallbackResult``, the ``fallback`` object of the delegate JSON.

Rules (docs/delegate.md):
- No LLM configured: ``FAILED``; the rationale says how to configure one.
  No Slart process is created (it could not run).
- A Slart process (recipe ``slartibartfast``) is created with the task as
  its goal, ``params.runId``, ``params.auditFile`` (the absolute path of
  its ``audit.json``, for the close hook: ``audit.on_process_closed``) and,
  when the caller has one, ``params.model``.
  Its name is ``delegate-fallback-slart-<name>``, ``<name>`` being the name
  the spawned process will get (``--name``, else a slug of the task plus a
  random suffix); when taken (an earlier fallback with the same
  ``--name``), ``-2``, ``-3`` … are tried, then random suffixes.
- Sync (default): the engine runs in this OS process under a hard cutoff
  (``--fallback-timeout``, else ``fallback.timeout``). ``DONE`` → the
  generated recipe is spawned through process_create unchanged (name,
  title, steer, params as given; goal = the task; parent = the caller):
  ``GENERATED``. Past the cutoff → Slart ``CLOSED/STOPPED``, nothing
  spawned: ``TIMED_OUT``. Any failure → ``FAILED`` with the reason; nothing
  spawned. The parent of the Slart process is the caller, or none.
- Async (``--async-fallback``): ``launch.start_background`` — see there.
- Never in a dry run (``delegate`` does not call it; the runner also checks).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from vance_cli.base.config import FALLBACK_TIMEOUT_MAX, check_seconds
from vance_cli.base.errors import DuplicateProcessName, InputError, VanceError
from vance_cli.base.records import frozen
from vance_cli.delegate.request import default_name
from vance_cli.engines.slartibartfast.engine import NO_LLM_REASON
from vance_cli.engines.slartibartfast.launch import start_background
from vance_cli.engines.slartibartfast.outcome import FallbackResult, Outcome, _replace, outcome_of
from vance_cli.engines.slartibartfast.start import caller_of, start_slart
from vance_cli.engines.slartibartfast.supervisor import supervise
from vance_cli.processes.whole import ProcessSpec, create_process

if TYPE_CHECKING:
    from vance_cli.delegate.request import DelegateRequest
    from vance_cli.engines.slartibartfast.engine import Progress
    from vance_cli.selector.decision import Decision
    from vance_cli.workspace import Workspace


NO_LLM = "no_llm"
"""``FallbackResult.code`` when no LLM is configured (people get a hint, not an alarm)."""

MAX_TIMEOUT = FALLBACK_TIMEOUT_MAX
"""Longest fallback cutoff accepted, in seconds (``config.FALLBACK_TIMEOUT_MAX``: one rule
for the flag and the setting)."""


@frozen
class Fallback:
    """The fallback runner ``delegate()`` calls (``FallbackRunner``).

    Attributes:
        background: run Slartibartfast in a detached worker (``--async-fallback``).
        timeout: the cutoff in seconds; None → ``fallback.timeout``.
        progress: shown while a sync run works (the CLI's spinner), or None.

    Raises:
        InputError: ``timeout`` is not greater than 0.
    """

    background: bool = False
    timeout: float | None = None
    progress: Progress | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.timeout is not None:
            check_timeout(self.timeout)

    def __call__(self, ws: Workspace, request: DelegateRequest,
                 decision: Decision) -> FallbackResult:
        """Run the fallback for a NONE that is ``fallback_eligible``.

        Raises:
            InputError: the session root's reserved name is taken (async).
            StateError: the state database cannot be used.
        """
        if request.dry_run:  # delegate() never asks; kept safe for other callers
            return FallbackResult(Outcome.FAILED, "dry run: Slartibartfast was not run")
        if not ws.settings.llm_configured:
            return FallbackResult(Outcome.FAILED, NO_LLM_REASON, code=NO_LLM)
        timeout = check_timeout(self.timeout or ws.settings.fallback_timeout)
        if self.background:

            return start_background(ws, request, timeout)
        return run_sync(ws, request, timeout, self.progress)


def check_timeout(seconds: float) -> float:
    """Return ``seconds`` when it is a usable cutoff: finite, > 0, at most ``MAX_TIMEOUT``.

    Raises:
        InputError: anything else (0, negative, ``nan``, ``inf``, more than a week).
    """
    try:
        return check_seconds(seconds, MAX_TIMEOUT)
    except ValueError as exc:
        raise InputError(f"--fallback-timeout: {exc}", field="fallback_timeout") from None


def run_sync(ws: Workspace, request: DelegateRequest, timeout: float,
             progress: Progress | None = None) -> FallbackResult:
    """Run Slartibartfast here under the cutoff, then spawn what it generated.

    Args:
        ws: workspace.
        request: the delegate request.
        timeout: the cutoff in seconds.
        progress: shown while it works, or None.

    Returns:
        GENERATED (with the spawned process), TIMED_OUT or FAILED.

    Rule: docs/delegate.md, first two bullets.
    """
    caller, model = caller_of(ws, request)
    parent = caller.id if caller else None
    try:
        started = start_slart(ws, request, parent, model, timeout, "sync")
    except (VanceError, OSError) as exc:
        return FallbackResult(Outcome.FAILED, f"Slartibartfast cannot start: {_text(exc)}")
    closed = supervise(ws, started.plan, started.control, progress)
    result = outcome_of(closed, started.control.audit)
    if result.outcome is not Outcome.GENERATED or result.recipe_name is None:
        return result
    return _spawn_generated(ws, request, result, started.target, parent)


def _text(exc: BaseException) -> str:
    return exc.message if isinstance(exc, VanceError) else f"{type(exc).__name__}: {exc}"


def _spawn_generated(ws: Workspace, request: DelegateRequest, generated: FallbackResult,
                     target: str, parent: str | None) -> FallbackResult:
    """Start the generated recipe through process_create, unchanged (docs/processes.md)."""
    assert generated.recipe_name is not None
    names = [target] if request.name else [target, default_name(request.selector_task),
                                           default_name(request.selector_task)]
    error: VanceError | None = None
    for name in names:
        spec = ProcessSpec(recipe=generated.recipe_name, name=name, title=request.title,
                           goal=request.task, steer=request.steer, params=request.params,
                           parent=parent)
        try:
            process = create_process(ws, spec)
        except DuplicateProcessName as exc:
            error = exc
            continue
        except VanceError as exc:
            error = exc
            break
        return _replace(generated, process=process, rationale=(
            f"{generated.rationale} (engine {process.engine}) and started it as process "
            f"{process.id}"))
    assert error is not None
    return _replace(generated, outcome=Outcome.FAILED, rationale=(
        f"{generated.rationale}, but it could not be started: {error.message}; start it with "
        f"'vance process create --recipe {generated.recipe_name} --name NAME'"))


__all__ = ["Fallback", "FallbackResult", "Outcome", "check_timeout", "run_sync", "start_slart"]
