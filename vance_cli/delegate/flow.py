"""process_create_delegate: the selector decides, a MATCH starts a process (docs/delegate.md).

Flow of ``delegate()``:
1. ``--caller PID`` → the caller's model preference (its params' ``model``,
   else its recipe's ``params.model``); the caller becomes the new process's
   parent.
2. ``select()`` decides (never raises).
3. MATCH and not a dry run → process_create (docs/processes.md) unchanged: goal = the task;
   title, steer and params passed 1:1; the name is ``--name`` or a slug of
   the task plus a short random suffix.
4. NONE whose reason is ``fallback_eligible``, not a dry run → the fallback
   runner, when one is given. This is the one place the Slartibartfast
   fallback (docs/delegate.md) plugs in; without a runner, ``fallback`` is null. With a
   runner, any other NONE (an LLM failure …) keeps ``fallback`` null and its
   rationale says why (``NoneReason.no_fallback_note``); the decision log
   keeps the selector's own rationale.
5. Every selector call is written to the decision log, with the process it
   started — also when starting the process failed. A MATCH's process and
   its row are one transaction (a kill between them cannot leave a process
   without its row); before a fallback, which may run for minutes, the row
   is written first and linked to the process the fallback started.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from vance_cli.base.errors import DuplicateProcessName, VanceError
from vance_cli.base.records import frozen
from vance_cli.delegate.request import DelegateRequest, default_name
from vance_cli.processes.model import ProcessSpec, check_process_name
from vance_cli.processes.records import create_process, load_process
from vance_cli.recipes.loader import find_recipe, load_recipes
from vance_cli.selector.core import select
from vance_cli.state import decision_log, process_store

if TYPE_CHECKING:
    from vance_cli.processes.model import Process
    from vance_cli.recipes.loader import Recipe
    from vance_cli.selector.core import Progress
    from vance_cli.selector.decision import Decision
    from vance_cli.workspace import Workspace


NAME_ATTEMPTS = 3
"""Tries with fresh suffixes when a default name is already taken."""


class FallbackOutcome(Protocol):
    """What a fallback runner returns (docs/delegate.md output, ``fallback`` object)."""

    @property
    def process(self) -> Process | None:
        """The process started from a generated recipe, if any."""

    def to_json(self) -> dict[str, Any]:
        """Return the ``fallback`` object of the delegate JSON."""


FallbackRunner = Callable[["Workspace", DelegateRequest, "Decision"], FallbackOutcome]
"""Runs the Slartibartfast fallback for a NONE that is ``fallback_eligible``."""


@frozen
class DelegateResult:
    """The outcome of one delegation.

    Attributes:
        decision: the selector's decision.
        process: the started process (MATCH, not a dry run), else None.
        fallback: the fallback outcome, or None (no runner, not eligible).
        dry_run: nothing was started on purpose.
        log_id: the decision-log row.
        warnings: recipe files left out of the inventory, one line each.
        current: the started process as it is now, once its turns ran (None: as started).
    """

    decision: Decision
    process: Process | None = None
    fallback: FallbackOutcome | None = None
    dry_run: bool = False
    log_id: int | None = None
    warnings: tuple[str, ...] = ()
    current: Process | None = None

    @property
    def started(self) -> Process | None:
        """The process this delegation started: the match's, or the fallback's spawn."""
        return self.process or (self.fallback.process if self.fallback else None)

    def with_process(self, process: Process) -> DelegateResult:
        """Return this result with its started process as it is now (after its turns ran)."""
        return replace(self, current=process)

    def to_json(self) -> dict[str, Any]:
        """Return exactly docs/delegate.md's keys.

        Keys: decision, recipe, engine, rationale, reason, process, fallback.
        """
        process = self.current or self.started
        return {
            **self.decision.to_json(),
            "process": process.to_json() if process else None,
            "fallback": self.fallback.to_json() if self.fallback else None,
        }


def caller_model(ws: Workspace, caller: Process) -> str | None:
    """Return the caller's model preference: its params' ``model``, else its recipe's.

    Rule: docs/delegate.md step 4 ("--caller PID → that process's recipe params.model").
    """
    model = caller.params.get("model")
    if not model:
        try:
            model = find_recipe(ws, caller.recipe).params.get("model")
        except VanceError:  # the caller's recipe is gone: no preference
            model = None
    return (str(model).strip() or None) if model else None


def delegate(ws: Workspace, request: DelegateRequest, *, progress: Progress | None = None,
             fallback: FallbackRunner | None = None) -> DelegateResult:
    """Decide for a task and start the matching process.

    Args:
        ws: workspace.
        request: the task and process options.
        progress: wraps the LLM call (the CLI's spinner).
        fallback: runner for the Slartibartfast fallback; None → ``fallback`` is null.

    Returns:
        The DelegateResult. A NONE is a result, not an error.

    Raises:
        ProcessNotFound: ``caller`` names no process.
        InputError, DuplicateProcessName: ``name`` is invalid or taken.
        UnknownEngine: the matched recipe's engine is not in the active catalog.
        StateError: the state database cannot be used.

    Rule: docs/delegate.md.
    """
    _check_name_first(ws, request)
    caller = load_process(ws, request.caller) if request.caller else None
    model = caller_model(ws, caller) if caller else None
    recipes = load_recipes(ws)
    warnings = recipes.left_out(ws.catalog().names)
    decision = select(ws, request.selector_task, model=model, recipes=recipes,
                      progress=progress)
    process: Process | None = None
    outcome: FallbackOutcome | None = None

    def log(process_id: str | None = None) -> int:
        return decision_log.record(
            ws.db, ws.settings.tenant, ws.settings.session, request.selector_task, decision,
            keep_task=request.log_task and ws.settings.log_tasks, process_id=process_id,
            dry_run=request.dry_run)

    if decision.recipe is not None and not request.dry_run:
        recipe, parent = decision.recipe, caller.id if caller else None
        try:
            with ws.db.transaction():  # the process and its row, or neither
                process = _spawn(ws, request, recipe, parent)
                log_id = log(process.id)
        except BaseException:
            log()  # the decision is logged also when the start failed
            raise
    elif decision.reason is not None and decision.reason.fallback_eligible and fallback \
            and not request.dry_run:
        log_id = log()  # first: the fallback may run for minutes
        outcome = fallback(ws, request, decision)
        if outcome.process is not None:
            decision_log.link_process(ws.db, log_id, outcome.process.id)
    else:
        log_id = log()
    note = decision.reason.no_fallback_note if decision.reason and fallback else None
    shown = replace(decision, rationale=f"{decision.rationale} — {note}") if note else decision
    return DelegateResult(shown, process, outcome, request.dry_run, log_id, warnings)


def _check_name_first(ws: Workspace, request: DelegateRequest) -> None:
    """Fail on a bad or taken ``--name`` before the selector spends an LLM call.

    The database still enforces uniqueness at create time (a concurrent
    delegate may take the name in between).
    """
    if request.name is None:
        return
    name = check_process_name(request.name)
    settings = ws.settings
    if not request.dry_run and process_store.find_by_name(ws.db, settings.tenant,
                                                          settings.session, name):
        raise DuplicateProcessName(name, settings.session, settings.tenant)


def _spawn(ws: Workspace, request: DelegateRequest, recipe: Recipe,
           parent: str | None) -> Process:

    attempts = 1 if request.name else NAME_ATTEMPTS
    for attempt in range(attempts):
        spec = ProcessSpec(recipe=recipe.name,
                           name=request.name or default_name(request.selector_task),
                           title=request.title, goal=request.task, steer=request.steer,
                           params=request.params, parent=parent,
                           yes_tools=request.yes_tools)
        try:
            return create_process(ws, spec)
        except DuplicateProcessName:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
