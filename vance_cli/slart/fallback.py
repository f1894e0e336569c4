"""The Slartibartfast fallback of ``vance delegate``: a new recipe when nothing fits.

``Fallback`` is the runner ``delegate()`` calls for a NONE that is
``fallback_eligible`` (DESIGN.md §5 step 7); it returns a
``FallbackResult``, the ``fallback`` object of the delegate JSON.

Rules (DESIGN.md §6):
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

import secrets
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.config import FALLBACK_TIMEOUT_MAX, check_seconds
from vance_cli.errors import DuplicateProcessName, InputError, VanceError
from vance_cli.slart.audit import Audit, layer_path, run_folder

if TYPE_CHECKING:
    from vance_cli.delegate import DelegateRequest
    from vance_cli.processes import Process
    from vance_cli.selector.decision import Decision
    from vance_cli.slart.engine import Control, Plan, Progress
    from vance_cli.workspace import Workspace

SLART_RECIPE = "slartibartfast"
"""Recipe of the Slart process (bundled)."""

SLART_PREFIX = "delegate-fallback-slart-"
"""Slart process names are this plus the name of the process to be spawned (DESIGN.md §6)."""

NO_LLM = "no_llm"
"""``FallbackResult.code`` when no LLM is configured (people get a hint, not an alarm)."""

MAX_TIMEOUT = FALLBACK_TIMEOUT_MAX
"""Longest fallback cutoff accepted, in seconds (``config.FALLBACK_TIMEOUT_MAX``: one rule
for the flag and the setting)."""

NUMBERED_VARIANTS = 8
"""Numbered name variants (``-2`` … ``-9``) tried before random suffixes."""


class Outcome(StrEnum):
    """``fallback.outcome`` values (DESIGN.md §5)."""

    GENERATED = "GENERATED"
    """A recipe was generated (and, in sync mode, spawned)."""
    FAILED = "FAILED"
    """Slartibartfast could not run or found no valid recipe; nothing spawned."""
    TIMED_OUT = "TIMED_OUT"
    """The cutoff passed first; Slart was stopped; nothing spawned."""
    PENDING = "PENDING"
    """Async: Slartibartfast runs on in a background worker."""


@dataclass(frozen=True, slots=True)
class FallbackResult:
    """The ``fallback`` object of the delegate output, plus what people are shown.

    Attributes:
        outcome: see ``Outcome``.
        rationale: one or two sentences on what happened and why.
        slart_process_id: the Slart process, or None when none was created.
        recipe_name: ``_slart/<runId>/<name>``, when a recipe was generated.
        recipe_path: ``recipes/_slart/<runId>/<name>.yaml`` (relative to the layer).
        process: the process started from the generated recipe (sync), else None.
        file: the generated recipe's file on disk (not in the JSON).
        audit_file: the run's ``audit.json`` on disk (not in the JSON).
        notify: the process whose queue gets the end event (async; not in the JSON).
        code: a short machine tag for people's output, e.g. ``no_llm`` (not in the JSON).
    """

    outcome: Outcome
    rationale: str
    slart_process_id: str | None = None
    recipe_name: str | None = None
    recipe_path: str | None = None
    process: Process | None = None
    file: Path | None = None
    audit_file: Path | None = None
    notify: str | None = None
    code: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return exactly DESIGN.md §5's ``fallback`` keys."""
        return {"outcome": self.outcome.value, "slartProcessId": self.slart_process_id,
                "recipeName": self.recipe_name, "recipePath": self.recipe_path,
                "rationale": self.rationale}


@dataclass(frozen=True, slots=True)
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
        from vance_cli.slart.engine import NO_LLM_REASON

        if request.dry_run:  # delegate() never asks; kept safe for other callers
            return FallbackResult(Outcome.FAILED, "dry run: Slartibartfast was not run")
        if not ws.settings.llm_configured:
            return FallbackResult(Outcome.FAILED, NO_LLM_REASON, code=NO_LLM)
        timeout = check_timeout(self.timeout or ws.settings.fallback_timeout)
        if self.background:
            from vance_cli.slart.launch import start_background

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


@dataclass(frozen=True, slots=True)
class Started:
    """A Slart process ready to run: its plan, the shared control, the target name."""

    process: Process
    plan: Plan
    control: Control
    target: str


def new_run_id() -> str:
    """Return a run id: UTC time ``YYYYMMDD-HHMMSS`` plus ``-`` and 4 random hex characters."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


def _new_run_folder(ws: Workspace) -> tuple[str, Path]:
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
    from vance_cli.processes import NAME_MAX

    stem = (SLART_PREFIX + target)[:NAME_MAX - 7]
    numbered = [f"{stem}-{n}" for n in range(2, 2 + NUMBERED_VARIANTS)]
    random = [f"{stem}-{secrets.token_hex(3)}" for _ in range(3)]
    return [stem, *numbered, *random]


def _create_slart(ws: Workspace, request: DelegateRequest, target: str,
                  params: dict[str, Any], parent: str | None) -> Process:
    from vance_cli.processes import ProcessSpec, create_process

    names = slart_names(target)
    for name in names:
        spec = ProcessSpec(recipe=SLART_RECIPE, name=name, goal=request.task, params=params,
                           parent=parent)
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
    from vance_cli.delegate import default_name
    from vance_cli.slart.audit import AUDIT_FILE
    from vance_cli.slart.engine import Control, plan_for

    target = request.name or default_name(request.task)
    run_id, folder = _new_run_folder(ws)
    params: dict[str, Any] = {"runId": run_id, "auditFile": str(folder / AUDIT_FILE),
                              **({"model": model} if model else {})}
    try:
        process = _create_slart(ws, request, target, params, parent)
    except BaseException:
        folder.rmdir()
        raise
    deadline = time.time() + timeout
    try:
        audit = Audit.create(folder / AUDIT_FILE, runId=run_id, slartProcessId=process.id,
                             processName=process.name, parentProcessId=parent, mode=mode,
                             task=request.task, timeoutSeconds=timeout, deadline=_iso(deadline),
                             maxAttempts=ws.settings.fallback_max_repairs + 1)
    except OSError as exc:  # the process must not stay IDLE with nobody to run it
        from vance_cli.lifecycle import close_process

        close_process(ws, process.id, "STALE", {"reason": f"cannot write the audit: {exc}"})
        raise
    return Started(process, plan_for(ws, process, deadline, timeout), Control(audit), target)


def _iso(epoch: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def caller_of(ws: Workspace, request: DelegateRequest) -> tuple[Process | None, str | None]:
    """Return the caller process (or None) and its model preference (or None)."""
    from vance_cli.delegate import caller_model
    from vance_cli.processes import load_process

    if not request.caller:
        return None, None
    caller = load_process(ws, request.caller)
    return caller, caller_model(ws, caller)


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

    Rule: DESIGN.md §6, first two bullets.
    """
    from vance_cli.slart.supervisor import supervise

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


def outcome_of(slart: Process, audit: Audit) -> FallbackResult:
    """Map a closed Slart process to the fallback result (before any spawn).

    ``DONE`` → GENERATED with the recipe; ``STOPPED`` by the cutoff →
    TIMED_OUT; any other close → FAILED with the reason; the audit's
    layer-relative path is named in every rationale but success.
    """
    from vance_cli.slart.audit import AUDIT_FILE

    result = dict(slart.result or {})
    audit_path = layer_path(str(slart.params.get("runId")), AUDIT_FILE)
    base = FallbackResult(Outcome.FAILED, "", slart.id, audit_file=audit.path)
    reason = str(result.get("reason") or slart.close_reason or "unknown")
    if slart.close_reason == "DONE":
        name, path = result.get("recipeName"), result.get("recipePath")
        return _replace(base, outcome=Outcome.GENERATED, recipe_name=name, recipe_path=path,
                        file=Path(result["file"]) if result.get("file") else None,
                        rationale=f"Slartibartfast designed the new recipe '{name}'")
    if slart.close_reason == "STOPPED" and result.get("timedOut"):
        return _replace(base, outcome=Outcome.TIMED_OUT, rationale=(
            f"{reason}; Slartibartfast was stopped and nothing was started "
            f"(audit: {audit_path})"))
    what = "was stopped" if slart.close_reason == "STOPPED" else "failed"
    return _replace(base, rationale=f"Slartibartfast {what}: {reason} (audit: {audit_path})")


def _replace(result: FallbackResult, **changes: Any) -> FallbackResult:
    from dataclasses import replace

    return replace(result, **changes)


def _spawn_generated(ws: Workspace, request: DelegateRequest, generated: FallbackResult,
                     target: str, parent: str | None) -> FallbackResult:
    """Start the generated recipe through process_create, unchanged (DESIGN.md §4)."""
    from vance_cli.delegate import default_name
    from vance_cli.processes import ProcessSpec, create_process

    assert generated.recipe_name is not None
    names = [target] if request.name else [target, default_name(request.task),
                                           default_name(request.task)]
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
