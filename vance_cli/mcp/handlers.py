"""What each MCP tool does: one core call, and the JSON document its ``--json`` command prints.

Rules (docs/mcp.md):
- A handler takes the call's workspace and the dataclass values of its
  arguments (``mcp/arguments.py``), calls the core the way its command does,
  and returns a ``ToolOutput``: the command's ``--json`` document, plus a
  note for the calling model where a person would get a line on stderr
  (the turn runs in the background, no LLM is configured, no answer yet).
- Turns never run inside the server: a started process's turns go to a
  background worker, as without ``--wait``; with ``wait`` the handler then
  waits for the turn to settle (``lifecycle.wait_process``). So a
  ``vance process stop`` signals that worker, never the server, and a
  server that stops leaves no process ``RUNNING`` under its own pid.
- A NONE of the selector is a result, not an error; errors are raised
  (``VanceError``) and become tool errors in ``mcp/server.py``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import InputError
from vance_cli.base.records import frozen
from vance_cli.delegate.start import delegate_and_start
from vance_cli.documents.cascade import Kind
from vance_cli.engines.slartibartfast.fallback import Fallback
from vance_cli.processes.inputs import submit
from vance_cli.processes.lifecycle import reap_and_load, reap_stale, wait_process
from vance_cli.processes.model import StartHow, Status
from vance_cli.processes.next_steps import Happened, NextSteps, next_steps
from vance_cli.processes.records import create_process, list_processes
from vance_cli.processes.start import Started, start
from vance_cli.processes.views import list_json, result_json, show_json, steer_json
from vance_cli.recipes.loader import load_recipes
from vance_cli.wizards.check import check_answers
from vance_cli.wizards.form import merge_prefill
from vance_cli.wizards.listing import group_wizards, listing_json, wizard_details
from vance_cli.wizards.loader import find_wizard, load_cascade
from vance_cli.wizards.prompt import RenderContext, build_prompt

if TYPE_CHECKING:
    from vance_cli.delegate.request import DelegateRequest
    from vance_cli.mcp.options import (
        DelegateRun,
        ProcessQuery,
        ProcessRef,
        RecipeQuery,
        ResultQuery,
        SteerMessage,
        TurnRun,
        WizardQuery,
        WizardRef,
        WizardValues,
    )
    from vance_cli.processes.model import Process, ProcessSpec
    from vance_cli.workspace import Workspace

log = logging.getLogger(__name__)
"""Warnings a person would see on stderr (recipe or wizard files left out): the server's log."""

LLM_HINT = ("once an operator configures one ('vance config set llm.base_url URL', or "
            "VANCE_LLM_BASE_URL for the server), 'vance process run {pid}' runs the waiting turn")
"""How a process that waits for an LLM gets going, for the calling model."""


@frozen
class ToolOutput:
    """What a tool answers.

    Attributes:
        document: the JSON document its command prints with ``--json``.
        note: one or two sentences for the calling model (what runs where, what to
            call next), or None.
    """

    document: Any
    note: str | None = None


def run_turns(ws: Workspace, process_id: str, wait: bool) -> tuple[Process, str | None]:
    """Get a process's pending turns run by a background worker; with ``wait``, until settled.

    Returns:
        The process as it is then, and a note for the caller (None when the answer
        is simply in ``result``).

    Raises:
        OSError: the worker cannot be started.
    """
    return settle_note(ws, start(ws, process_id, wait=False), wait)


def settle_note(ws: Workspace, started: Started, wait: bool) -> tuple[Process, str | None]:
    """Wait for a started background turn when asked; return the process and the note.

    The note renders ``processes.next_steps`` for the calling model.
    """
    settled = None
    if wait and started.how == StartHow.BACKGROUND:
        settled = wait_process(ws, started.process.id).process
    view = next_steps(started, settled)
    return view.process, note_for(view)


def note_for(view: NextSteps) -> str | None:
    """Return a ``NextSteps`` view as a note for the calling model (None: nothing to add)."""
    process, pid = view.process, view.process.id
    if view.happened is Happened.WAITING_FOR_LLM:
        return ("No LLM is configured, so the process waits (IDLE) with its input; "
                + LLM_HINT.format(pid=pid) + ".")
    if view.happened is Happened.NO_ENGINE:
        return f"Engine '{process.engine}' has no local implementation yet: no turn runs."
    if view.happened is Happened.BACKGROUND:
        return (f"The turn runs in the background ({view.where}); "
                f"call process_result with processId '{pid}' (and waitSeconds) for "
                "the answer.")
    if view.happened is Happened.FAILED:
        return f"The turn failed: {process.status.value}/{process.close_reason}" + (
            f": {view.reason}" if view.reason else "") + "."
    return None


def create_delegate(ws: Workspace, request: DelegateRequest, run: DelegateRun) -> ToolOutput:
    """``process_create_delegate``: ``vance delegate --json`` (with ``--wait`` when asked).

    Raises:
        InputError: ``asyncFallback`` without ``fallbackOnNone``; as ``delegate()``.
    """
    if run.async_fallback and not run.fallback_on_none:
        raise InputError("fallbackOnNone false and asyncFallback true exclude each other")
    fallback = Fallback(background=run.async_fallback) if run.fallback_on_none else None
    done = delegate_and_start(ws, replace(request, task=request.task.strip()),
                              fallback=fallback, warn=log.warning)
    result, note = done.result, None
    if done.started is not None:
        process, note = settle_note(ws, done.started, run.wait)
        result = result.with_process(process)
    return ToolOutput(result.to_json(), note)


def create(ws: Workspace, spec: ProcessSpec, run: TurnRun) -> ToolOutput:
    """``process_create``: ``vance process create --json`` (with ``--wait`` when asked).

    Raises:
        UnknownRecipe, UnknownEngine, DuplicateProcessName, InputError: nothing is created.
    """
    process, note = run_turns(ws, create_process(ws, spec).id, run.wait)
    return ToolOutput(process.to_json(), note)


def status(ws: Workspace, ref: ProcessRef) -> ToolOutput:
    """``process_status``: ``vance process show --json``.

    Raises:
        ProcessNotFound: no process, or a prefix that matches several.
    """
    return ToolOutput(show_json(ws, reap_and_load(ws, ref.process_id)))


def result(ws: Workspace, query: ResultQuery) -> ToolOutput:
    """``process_result``: ``vance process result --json``, after a bounded wait when asked.

    A process without an answer yet is not an error: ``result`` is null and
    the note says why.

    Raises:
        ProcessNotFound: no process, or a prefix that matches several.
        InputError: ``waitSeconds`` is negative or not finite.
    """
    seconds = query.wait_seconds
    if seconds is not None and not (math.isfinite(seconds) and seconds >= 0):
        raise InputError(f"waitSeconds must be 0 or more seconds (a finite number), "
                         f"not {seconds:g}")
    if seconds:
        process = wait_process(ws, query.process_id, seconds).process
    else:
        process = reap_and_load(ws, query.process_id)
    note = None
    if not process.result:
        state = process.status.value + (f"/{process.close_reason}" if process.close_reason
                                        else "")
        note = f"Process {process.id} has no result yet ({state})."
    elif process.status is Status.RUNNING:
        note = ("A turn is still running: result is the answer before it; call again with "
                "waitSeconds for the new one.")
    return ToolOutput(result_json(process), note)


def steer(ws: Workspace, message: SteerMessage, run: TurnRun) -> ToolOutput:
    """``process_steer``: ``vance process steer --json`` (with ``--wait`` when asked).

    Raises:
        ProcessNotFound: no such process. CannotRun: it is closed and takes no input.
    """
    target = reap_and_load(ws, message.process_id)
    stored = submit(ws, target.id, message.message)
    process, note = run_turns(ws, target.id, run.wait)
    return ToolOutput(steer_json(stored, process), note)


def list_(ws: Workspace, query: ProcessQuery) -> ToolOutput:
    """``process_list``: ``vance process list --json``."""
    reap_stale(ws)
    found = list_processes(ws, all_sessions=query.all_sessions, limit=query.limit)
    return ToolOutput(list_json(ws, found))


def recipes(ws: Workspace, query: RecipeQuery) -> ToolOutput:
    """``recipe_list``: ``vance recipe list --json`` (``--all`` with ``includeHidden``)."""
    found = load_recipes(ws)
    for problem in found.problems:
        log.warning("recipe '%s' left out: %s", problem.name, problem.reason)
    shown = list(found.recipes.values()) if query.include_hidden else found.inventory()
    return ToolOutput([r.summary_json() for r in shown])


def wizards(ws: Workspace, query: WizardQuery) -> ToolOutput:
    """``wizard_list``: ``vance wizard list --json``."""
    report = load_cascade(ws.cascade(Kind.WIZARDS), ws.wizard_cache)
    for problem in report.problems:
        log.warning("wizard '%s' left out: %s", problem.name, problem.reason)
    lang = ws.settings.lang
    groups = group_wizards(report.wizards, ws.availability_id, lang, query.category)
    return ToolOutput(listing_json(groups, lang))


def wizard(ws: Workspace, ref: WizardRef) -> ToolOutput:
    """``wizard_show``: ``vance wizard show --json``.

    Raises:
        UnknownWizard, WizardBroken, InvalidDocumentName: as ``find_wizard``.
    """
    found = find_wizard(ws.cascade(Kind.WIZARDS), ref.name)
    return ToolOutput(wizard_details(found, ws.settings.lang))


def check_values(ws: Workspace, given: WizardValues) -> ToolOutput:
    """``wizard_check``: ``vance wizard check --json``; its notes become the tool's note.

    Raises:
        RenderError: the validatorPrompt fails. UnknownWizard …: as ``find_wizard``.
    """
    found = find_wizard(ws.cascade(Kind.WIZARDS), given.name)
    prefill = merge_prefill(found.spec.fields, given.values)
    result = check_answers(ws, found, prefill.values, RenderContext.of(ws))
    return ToolOutput(result.to_json(), " ".join(result.notes) or None)


def render(ws: Workspace, given: WizardValues) -> ToolOutput:
    """``wizard_render``: ``vance wizard render --json``; keys that are no field are noted.

    Raises:
        FormInvalid: a value fails validation (every error, e.g. ``members[1].name``).
        RenderError: the template fails. UnknownWizard …: as ``find_wizard``.
    """
    found = find_wizard(ws.cascade(Kind.WIZARDS), given.name)
    prefill = merge_prefill(found.spec.fields, given.values)
    prompt = build_prompt(found, prefill.values, RenderContext.of(ws))
    note = None
    if prefill.unknown:
        note = (f"Ignored: {', '.join(repr(k) for k in prefill.unknown)} "
                f"{'is no field' if len(prefill.unknown) == 1 else 'are no fields'}"
                f" of wizard '{found.name}'.")
    return ToolOutput(prompt.to_json(), note)
