"""The Slartibartfast engine, run locally: ask the LLM for a recipe, check it, repair, store.

One run (``run_engine``) works on one Slart process (recipe
``slartibartfast``), inside ``worker.running`` (RUNNING, worker pid,
heartbeat). Everything it needs is on the process: the task is its
``goal``, the run id is ``params.runId``, the model is ``params.model``
(the caller's preference, else the Slart recipe's, else ``llm.model``).

Rules (docs/delegate.md):
- Try 1 renders ``prompts/slartibartfast.md``; each reply is read tolerantly
  (``extract``) and checked (``validate``). While it fails and repairs are
  left (``fallback.max_repairs``), the reply and a repair message listing
  every problem are appended to the conversation and the LLM is asked
  again. Each try, its raw reply, the extracted text and the problems go
  into ``audit.json`` as they happen.
- Each LLM request is bounded by the time left before the cutoff: its
  timeout is ``min(llm.timeout, time left)`` and it retries only as often as
  whole attempts still fit.
- A valid recipe is stored as ``recipes/_slart/<runId>/<name>.yaml`` in the
  project layer, then the process closes ``DONE`` with ``recipeName``,
  ``recipePath`` (relative to the layer), ``file``, ``runId``, ``auditPath``
  and ``attempts`` in its outcome. No valid recipe, an LLM failure or a
  broken prompt template closes it ``STALE`` with ``reason``.
- The cutoff is enforced by ``supervisor.supervise`` (the engine runs in a
  thread) and checked by the engine itself before each request and before
  storing. Storing the recipe and stopping (``Control.stop``) take the same
  lock, so either the recipe is stored and the process is DONE, or it is
  stopped and nothing is stored. A stop by someone else (``vance process
  stop``) found at store time discards the file.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING

import vance_cli.engines.slartibartfast.audit as audit_mod
from vance_cli.base import files, yamlio
from vance_cli.base.errors import LLMError, LLMNotConfigured, VanceError
from vance_cli.base.records import frozen
from vance_cli.base.reply_scan import strip_thinking
from vance_cli.documents.cascade import Kind
from vance_cli.engines.slartibartfast.audit import Audit, layer_path, run_folder
from vance_cli.engines.slartibartfast.extract import extract_recipe
from vance_cli.engines.slartibartfast.prompt import load_prompt
from vance_cli.engines.slartibartfast.validate import SLART_ENGINE, Checked, check_candidate
from vance_cli.llm import LLMConfig, complete
from vance_cli.processes.turn import over_ceiling
from vance_cli.processes.whole import (
    CloseReason,
    Process,
    Status,
    close_process,
    load_process,
    running,
)
from vance_cli.recipes.loader import load_recipes

if TYPE_CHECKING:
    from vance_cli.base.config import Settings
    from vance_cli.engines.slartibartfast.prompt import SlartPrompt
    from vance_cli.llm import Completion
    from vance_cli.processes.whole import Run
    from vance_cli.workspace import Workspace

Progress = Callable[[], AbstractContextManager[object]]
"""Factory of a context manager shown while Slartibartfast works (the CLI's spinner)."""

MIN_REQUEST_TIMEOUT = 0.05
"""Shortest timeout given to an LLM request, in seconds (the client refuses 0)."""


class SlartStopped(Exception):
    """The run must end now: the cutoff passed, or the process was stopped.

    Args:
        reason: one line.
        timed_out: True when the fallback cutoff is the reason.
    """

    def __init__(self, reason: str, timed_out: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.timed_out = timed_out


class SlartFailure(Exception):
    """The run ends without a recipe (closes STALE); ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@frozen
class Plan:
    """What one run works on, read from the Slart process.

    Attributes:
        process_id: the Slart process.
        task: the task text (the process's goal).
        run_id: the run's folder name under ``recipes/_slart/``.
        model: model preference, or None for ``llm.model``.
        deadline: wall-clock cutoff, seconds since the epoch.
        timeout: the cutoff's length in seconds (for messages).
        max_attempts: the first try plus ``fallback.max_repairs``.
    """

    process_id: str
    task: str
    run_id: str
    model: str | None
    deadline: float
    timeout: float
    max_attempts: int

    def remaining(self) -> float:
        """Seconds left before the cutoff (negative once it passed)."""
        return self.deadline - time.time()

    @property
    def refs(self) -> dict[str, str]:
        """``runId`` and ``auditPath``, put into every outcome of the process."""
        return {"runId": self.run_id, "auditPath": layer_path(self.run_id, audit_mod.AUDIT_FILE)}


def plan_for(ws: Workspace, process: Process, deadline: float, timeout: float) -> Plan:
    """Read the plan of a run from its Slart process.

    Raises:
        SlartFailure: the process has no ``params.runId``.
    """
    run_id = process.params.get("runId")
    if not isinstance(run_id, str) or not run_id:
        raise SlartFailure("the Slartibartfast process has no params.runId")
    model = process.params.get("model")
    return Plan(process.id, process.goal, run_id, str(model) if model else None, deadline,
                timeout, ws.settings.fallback_max_repairs + 1)


def open_audit(ws: Workspace, run_id: str) -> Audit:
    """Return the run's audit, continuing the file the launcher created."""
    return Audit.resume(run_folder(ws.write_folder, run_id) / audit_mod.AUDIT_FILE)


class Control:
    """Shared by the engine and the supervisor: the audit, its lock, the stop flag.

    Args:
        audit: the run's audit (its ``lock`` guards stop versus store).
    """

    def __init__(self, audit: Audit) -> None:
        self.audit = audit
        self.stopped = threading.Event()
        self.error: BaseException | None = None

    def stop(self, ws: Workspace, plan: Plan, reason: str, timed_out: bool) -> bool:
        """Close the process STOPPED (unless closed already) and settle the audit.

        Returns:
            True when this call closed it.
        """
        with self.audit.lock:
            self.stopped.set()
            _, closed_from = close_process(ws, plan.process_id, CloseReason.STOPPED,
                                           {"reason": reason, "timedOut": timed_out,
                                            **plan.refs}, note=reason)
            self.settle(ws, plan)
            return closed_from is not None

    def settle(self, ws: Workspace, plan: Plan) -> None:
        """Give the audit the final state of the closed process, unless it has one.

        ``STOPPED`` with ``timedOut`` → ``TIMED_OUT``; other ``STOPPED`` →
        ``STOPPED``; ``STALE`` → ``FAILED``; the process's ``reason`` is kept.
        """
        with self.audit.lock:
            if self.audit.final:
                return
            process = load_process(ws, plan.process_id)
            if process.status is not Status.CLOSED:
                return
            outcome = dict(process.outcome or {})
            reason = str(outcome.get("reason") or process.close_reason)
            if process.close_reason == CloseReason.STOPPED.value:
                state = audit_mod.TIMED_OUT if outcome.get("timedOut") else audit_mod.STOPPED
            elif process.close_reason == CloseReason.DONE.value:
                state, reason = audit_mod.GENERATED, ""
            else:
                state = audit_mod.FAILED
            self.audit.finish(state, reason or None)

    def check(self, run: Run, plan: Plan) -> float:
        """Return the seconds left, or raise SlartStopped when the run must end."""
        if self.stopped.is_set() or run.stop_requested:
            raise SlartStopped("the process was stopped", timed_out=False)
        left = plan.remaining()
        if left <= 0:
            raise SlartStopped(cutoff_reason(plan.timeout), timed_out=True)
        return left


def cutoff_reason(timeout: float) -> str:
    """Return the reason text of a run stopped by the fallback cutoff."""
    return f"the fallback cutoff of {timeout:g} s passed before a valid recipe was stored"


def bounded_config(config: LLMConfig, remaining: float) -> LLMConfig:
    """Return ``config`` with its timeout and retries fitted into ``remaining`` seconds."""
    timeout = max(MIN_REQUEST_TIMEOUT, min(config.timeout, remaining))
    retries = min(config.max_retries, max(0, int(remaining // timeout) - 1))
    return replace(config, timeout=timeout, max_retries=retries, json_mode="none")


def run_engine(ws: Workspace, plan: Plan, control: Control, adopt: bool = False) -> None:
    """Run Slartibartfast on one process, from RUNNING to CLOSED (see the module rules).

    Args:
        ws: workspace for this thread (its own database connection).
        plan: what to work on.
        control: shared with the supervisor.
        adopt: the launcher already marked the process RUNNING under this pid.

    Raises:
        ProcessNotFound, InvalidTransition: the process cannot start a turn
            (e.g. closed by the cutoff before the engine started).
        Exception: anything unexpected, after the process was closed STALE.
    """
    with running(ws, plan.process_id, handle_sigterm=False, adopt=adopt) as run:
        try:
            control.audit.update(state=audit_mod.RUNNING, workerPid=run.process().worker_pid)
            checked, attempts = _generate(ws, run, plan, control)
            _store(ws, run, plan, control, checked, attempts)
        except SlartStopped as stop:
            control.stop(ws, plan, stop.reason, stop.timed_out)
        except SlartFailure as failure:
            _fail(run, plan, control, failure.reason)
        except VanceError as exc:  # a broken template or catalog, a state error
            _fail(run, plan, control, exc.message)
        except Exception as exc:
            _fail(run, plan, control, f"worker failed: {type(exc).__name__}: {exc}")
            raise
        finally:
            control.settle(ws, plan)


def _fail(run: Run, plan: Plan, control: Control, reason: str) -> None:
    """End a failed run: the audit says FAILED first, then the process closes STALE.

    In this order the close hook (which reads a STALE close as a dead worker)
    finds the audit final and leaves it as the engine wrote it.
    """
    with control.audit.lock:
        control.audit.finish(audit_mod.FAILED, reason)
        run.close(CloseReason.STALE, {"reason": reason, **plan.refs}, note=reason)


def _llm_config(ws: Workspace, model: str | None) -> LLMConfig:

    try:
        return LLMConfig.from_settings(ws.settings, model)
    except LLMNotConfigured:
        raise SlartFailure(NO_LLM_REASON) from None


NO_LLM_REASON = (
    "no LLM configured: Slartibartfast needs one to design a recipe. Configure an "
    "OpenAI-compatible endpoint with 'vance config set llm.base_url URL' (e.g. "
    "http://localhost:11434/v1 for Ollama; or set VANCE_LLM_BASE_URL), plus llm.model and "
    "llm.api_key when the endpoint needs them; or pass --no-fallback")
"""Reason of a fallback that cannot run because no LLM is configured (docs/delegate.md)."""


def _prepare(ws: Workspace, plan: Plan) -> tuple[SlartPrompt, Sequence[str], set[str]]:

    catalog = ws.catalog()
    recipes = load_recipes(ws)
    taken = [r for name, r in recipes.recipes.items() if not name.startswith("_")]
    engines = [e for e in catalog.engines.values() if e.name != SLART_ENGINE]
    prompt = load_prompt(ws, plan.task, engines, taken, plan.max_attempts)
    return prompt, catalog.names, {r.name for r in taken}


def _generate(ws: Workspace, run: Run, plan: Plan,
              control: Control) -> tuple[Checked, int]:
    """Ask, check and repair until a candidate is valid; return it and the try count.

    Raises:
        SlartStopped: the cutoff passed or the process was stopped.
        SlartFailure: an LLM failure, or no valid recipe after the last try.
    """
    config = _llm_config(ws, plan.model)
    prompt, engines, existing = _prepare(ws, plan)
    control.audit.update(model=config.model, endpoint=config.endpoint,
                         maxAttempts=plan.max_attempts)
    messages = prompt.first_messages()
    problems: tuple[str, ...] = ()
    for attempt in range(1, plan.max_attempts + 1):
        remaining = control.check(run, plan)
        answer = _ask(config, messages, remaining, plan, control, attempt)
        checked = _review(answer, engines, existing, plan, control, ws.settings)
        if checked.ok:
            return checked, attempt
        problems = checked.errors
        if attempt < plan.max_attempts:
            messages = [*messages, _assistant(answer.text),
                        prompt.repair_message(problems, attempt + 1)]
    raise SlartFailure(f"no valid recipe after {plan.max_attempts} "
                       f"{'try' if plan.max_attempts == 1 else 'tries'}; last problems: "
                       + "; ".join(problems))


def _assistant(text: str) -> dict[str, str]:

    return {"role": "assistant", "content": strip_thinking(text).strip() or "(empty reply)"}


def _ask(config: LLMConfig, messages: Sequence[Mapping[str, str]], remaining: float,
         plan: Plan, control: Control, attempt: int) -> Completion:

    bounded = bounded_config(config, remaining)
    control.audit.begin_attempt(attempt, {"timeoutSeconds": round(bounded.timeout, 3),
                                          "maxRetries": bounded.max_retries,
                                          "messages": len(messages)})
    try:
        answer = complete(bounded, messages, deadline=time.monotonic() + remaining)
    except LLMError as exc:
        control.audit.end_attempt(llmError=exc.message, valid=False)
        if exc.timeout and bounded.timeout < config.timeout:  # cut short by the cutoff
            raise SlartStopped(cutoff_reason(plan.timeout), timed_out=True) from None
        raise SlartFailure(f"LLM call failed: {exc.message}") from None
    return answer


def _review(answer: Completion, engines: Sequence[str], existing: set[str], plan: Plan,
            control: Control, settings: Settings) -> Checked:

    found = extract_recipe(answer.text)
    if answer.finish_reason == "length":
        checked = Checked(None, None, ("the reply was cut off at the token limit; write a "
                                       "shorter recipe",))
    elif found.data is None:
        checked = Checked(None, None, (found.error or "no recipe found",))
    else:
        checked = check_candidate(found.data, engines, existing)
        params = checked.data.get("params") if checked.data is not None else None
        over = over_ceiling(settings, params) if isinstance(params, Mapping) else []
        if over:  # a process could not be started from it: repaired like any other problem
            checked = Checked(checked.name, None, tuple(
                f"{problem}: give a smaller value or leave it out" for problem in over))
    control.audit.end_attempt(model=answer.model, finishReason=answer.finish_reason,
                              latencyMs=answer.latency_ms, rawReply=answer.text,
                              extracted=found.text or None, format=found.format,
                              name=checked.name, errors=list(checked.errors), valid=checked.ok)
    return checked


def _store(ws: Workspace, run: Run, plan: Plan, control: Control, checked: Checked,
           attempts: int) -> None:
    """Write the recipe and close DONE, under the lock a stop also takes."""
    assert checked.name is not None and checked.data is not None
    file_name = f"{checked.name}.yaml"
    folder = run_folder(ws.write_folder, plan.run_id)
    path, name = folder / file_name, f"{audit_mod.SLART_FOLDER}/{plan.run_id}/{checked.name}"
    header = (f"# Generated by Slartibartfast (run {plan.run_id}, process {plan.process_id}).\n"
              f"# Every attempt and its checks: {audit_mod.AUDIT_FILE} beside this file.\n")
    with control.audit.lock:
        control.check(run, plan)  # a hard cutoff: nothing is stored after it
        if run.process().status is not Status.RUNNING:
            raise SlartStopped("the process was closed before the recipe was stored", False)
        files.atomic_write_text(path, header + yamlio.dumps(checked.data))
        ref = ws.cascade(Kind.RECIPES).find(name)
        if ref is None or ref.path.resolve() != path.resolve():
            path.unlink(missing_ok=True)
            raise SlartFailure(f"the stored recipe {path} does not resolve as '{name}'")
        result = {"recipeName": name, "recipePath": layer_path(plan.run_id, file_name),
                  "file": str(path), "attempts": attempts, **plan.refs}
        if not run.close(CloseReason.DONE, result, note=f"generated {name}"):
            path.unlink(missing_ok=True)  # stopped by someone else meanwhile: discard
            control.audit.update(discarded=result["recipePath"])
            return
        control.audit.finish(audit_mod.GENERATED, None, recipeName=name,
                             recipePath=result["recipePath"], tries=attempts)
