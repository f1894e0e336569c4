"""Batch delegation: one task template, many items, the selector asked once.

Rules (docs/delegate.md "Batch"; docs/exit-codes.md):
- Items and the template are read by ``batch_input``. The template is
  compiled before anything runs: a template that does not compile stops the
  batch (exit 2) before any selector call.
- The selector is called ONCE, on the template's shape (the template with
  every variable as ``…``). A MATCH is used for every item: one process
  each through process_create (docs/processes.md), goal = the item's task. The call is one
  decision-log row (task = the shape).
- When that call answers NONE — or the shape says nothing without an item
  (``{{ item }}``) — each item goes through the normal single-delegate flow
  (``delegate()``): one selector call, a decision-log row and, when a
  fallback runner is given and the NONE is eligible, the fallback, per item.
  An item whose task renders empty also takes that flow (NONE
  ``empty_task``, as a single delegate).
- Options mean per item what they mean for one delegate: ``title`` and
  ``steer`` are templates over the same variables; ``params`` go unchanged
  to every process; the caller (model preference, parent) is resolved once;
  ``name_prefix`` names the processes ``<prefix>-<number>``; without it a
  name is ``<slug>-<number>-<batch suffix>``: the slug of a plain-line item
  itself (what differs between the items), of the rendered task for a JSON
  item; the suffix is 6 hex characters shared by the batch (a taken name
  gets a fresh one).
- One bad item never stops the batch: its template render error, a taken
  name or a failed create becomes that item's error result, and the next
  item runs. Results come in item order, one per item.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import (
    EXIT_NO_MATCH,
    EXIT_OK,
    EXIT_RUNTIME,
    DuplicateProcessName,
    VanceError,
)
from vance_cli.base.records import frozen
from vance_cli.base.wording import counted
from vance_cli.delegate.batch_input import (
    NO_ITEMS,
    STEER_LABEL,
    TITLE_LABEL,
    Item,
    TaskTemplate,
    item_label,
)
from vance_cli.delegate.flow import NAME_ATTEMPTS, DelegateResult, caller_model, delegate
from vance_cli.delegate.request import SUFFIX_BYTES, DelegateRequest, slugify
from vance_cli.processes.model import ProcessSpec, check_process_name
from vance_cli.processes.records import create_process, load_process
from vance_cli.recipes.loader import load_recipes
from vance_cli.selector.core import select
from vance_cli.state import decision_log, process_store

if TYPE_CHECKING:
    from vance_cli.delegate.flow import FallbackRunner
    from vance_cli.processes.model import Process
    from vance_cli.recipes.loader import RecipeSet
    from vance_cli.selector.core import Progress
    from vance_cli.selector.decision import Decision
    from vance_cli.workspace import Workspace

ITEM_ERROR = "item_error"
"""``reason`` of an item's error result: no process was started because the item failed
(not a selector reason; the ``error`` object says what failed)."""

TEMPLATE_RATIONALE = "decided once for the task template: "
"""Prefix of the rationale of items that took the template's MATCH."""


@frozen
class BatchRequest:
    """What ``vance delegate --task-template … --items …`` was asked.

    Attributes:
        template: the task template (Jinja2 source).
        items: the parsed items (``batch_input.parse_items``).
        name_prefix: processes are named ``<prefix>-<number>``; None → derived names.
        title: process title template ("" → the recipe's title).
        steer: initial steer template, or None.
        params: caller params for every process, overlaid on the recipe's.
        caller: id (or unique prefix) of the calling process.
        dry_run: decide only; start nothing.
        log_task: False keeps tasks private in the decision log (``--no-log``).
    """

    template: str
    items: Sequence[Item]
    name_prefix: str | None = None
    title: str = ""
    steer: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    caller: str | None = None
    dry_run: bool = False
    log_task: bool = True


@frozen
class ItemResult:
    """The outcome of one item: a delegate result, or the item's error.

    Attributes:
        item: the item.
        task: its rendered task (None when rendering failed).
        result: the delegate result (None when the item failed).
        error: why the item failed, else None.
    """

    item: Item
    task: str | None
    result: DelegateResult | None
    error: VanceError | None = None

    @property
    def failed(self) -> bool:
        """True when the item failed (its line carries ``error``)."""
        return self.error is not None or self.result is None

    @property
    def matched(self) -> bool:
        """True when the item's decision is MATCH."""
        return self.result is not None and self.result.decision.matched

    def to_json(self) -> dict[str, Any]:
        """Return the item's line: exactly the delegate JSON keys, plus ``error`` when it failed.

        A failed item reads as a NONE that started nothing (``reason``
        ``item_error``, ``rationale`` = the error message) with
        ``error: {"code", "message", "item", "line"}``.
        """
        if self.result is not None and self.error is None:
            return self.result.to_json()
        message = self.error.message if self.error else "no result"
        return {
            "decision": "NONE", "recipe": None, "engine": None, "rationale": message,
            "reason": ITEM_ERROR, "process": None, "fallback": None,
            "error": {"code": self.error.code if self.error else "vance_error",
                      "message": message, "item": self.item.number, "line": self.item.line},
        }


@frozen
class BatchSummary:
    """Counts of a batch, for the summary line on stderr.

    Attributes:
        items: items processed.
        selector_calls: ``select()`` calls made (the template's included).
        matched: items whose decision is MATCH.
        none: items whose decision is NONE.
        failed: items that failed.
        template: the decision on the template's shape; None when it was not asked.
        llm_failed: NONE items whose selector LLM call failed (``llm_error``, ``timeout``).
        not_asked: why the template was not asked (``batch_input.NO_ITEMS``,
            ``SAYS_NOTHING``, ``NEEDS_AN_ITEM``); "" when it was.
    """

    items: int
    selector_calls: int
    matched: int
    none: int
    failed: int
    template: Decision | None
    not_asked: str = ""
    llm_failed: int = 0

    def exit_code(self, require_match: bool = False) -> int:
        """Return the batch's exit code.

        1 when any item failed or its selector's LLM call failed; else 3 when
        ``require_match`` and any item ended NONE; else 0.
        """
        if self.failed or self.llm_failed:
            return EXIT_RUNTIME
        if require_match and self.none:
            return EXIT_NO_MATCH
        return EXIT_OK

    def line(self) -> str:
        """Return the one-line summary, e.g. ``batch: 100 items; 1 selector call …``."""
        calls = counted(self.selector_calls, "selector call")
        if self.template is None and self.not_asked == NO_ITEMS:
            how = NO_ITEMS
        elif self.template is None:
            why = self.not_asked or "it says nothing without an item"
            how = f"template not asked: {why}; one per item"
        elif self.template.recipe is not None:
            how = f"template: MATCH '{self.template.recipe.name}'"
        else:
            reason = self.template.reason.value if self.template.reason else "none"
            how = f"template: NONE ({reason}), then one per item"
        none = f"{self.none} none" + (f" ({self.llm_failed} of them LLM failures)"
                                      if self.llm_failed else "")
        return (f"batch: {counted(self.items, 'item')}; {calls} ({how}); {self.matched} matched, "
                f"{none}, {self.failed} failed")


class BatchRun:
    """A started batch: the template decided, the items waiting (see ``start_batch``)."""

    def __init__(self, ws: Workspace, request: BatchRequest, templates: _Templates,
                 caller: Process | None, decision: Decision | None, log_id: int | None,
                 warnings: tuple[str, ...], not_asked: str = "") -> None:
        self.ws = ws
        self.request = request
        self.templates = templates
        self.caller = caller
        self.decision = decision
        self.log_id = log_id
        self.warnings = warnings
        self.not_asked = not_asked
        self.suffix = secrets.token_hex(SUFFIX_BYTES)
        self._calls = 0 if decision is None else 1
        self._done: list[ItemResult] = []

    @property
    def total(self) -> int:
        """Number of items."""
        return len(self.request.items)

    @property
    def summary(self) -> BatchSummary:
        """Counts over the items processed so far."""
        failed = sum(r.failed for r in self._done)
        matched = sum(r.matched for r in self._done if not r.failed)
        llm_failed = sum(1 for r in self._done if r.result is not None
                         and r.result.decision.reason is not None
                         and r.result.decision.reason.llm_failed)
        return BatchSummary(len(self._done), self._calls, matched,
                            len(self._done) - failed - matched, failed, self.decision,
                            self.not_asked, llm_failed)

    def results(self, fallback: FallbackRunner | None = None) -> Iterator[ItemResult]:
        """Run the items in order, yielding each result as soon as it is known.

        Args:
            fallback: the Slartibartfast runner for items decided one by one.

        Yields:
            One ItemResult per item; an item's failure is its result, never an exception.
        """
        for item in self.request.items:
            result = self._run_item(item, fallback)
            self._done.append(result)
            yield result

    def _run_item(self, item: Item, fallback: FallbackRunner | None) -> ItemResult:
        task: str | None = None
        try:
            task = self.templates.task.render(item)
            title = self.templates.title.render(item) if self.templates.title else ""
            steer = self.templates.steer.render(item) if self.templates.steer else None
            if self.decision is not None and self.decision.recipe is not None and task:
                process = None if self.request.dry_run else self._spawn(item, task, title, steer)
                return ItemResult(item, task, DelegateResult(
                    _for_item(self.decision), process, None, self.request.dry_run,
                    self.log_id))
            return ItemResult(item, task, self._delegate(item, task, title, steer, fallback))
        except VanceError as exc:
            return ItemResult(item, task, None, exc)
        except Exception as exc:  # one bad item never stops the batch
            return ItemResult(item, task, None, VanceError(
                f"{item_label(item)}: unexpected {type(exc).__name__}: {exc}"))

    def _delegate(self, item: Item, task: str, title: str, steer: str | None,
                  fallback: FallbackRunner | None) -> DelegateResult:

        request = DelegateRequest(
            task=task, name=self._free_name(item, task), title=title, steer=steer,
            params=self.request.params, caller=self.caller.id if self.caller else None,
            dry_run=self.request.dry_run, log_task=self.request.log_task)
        self._calls += 1
        return delegate(self.ws, request, fallback=fallback)

    def _spawn(self, item: Item, task: str, title: str, steer: str | None) -> Process:

        assert self.decision is not None and self.decision.recipe is not None
        attempts = 1 if self.request.name_prefix else NAME_ATTEMPTS
        for attempt in range(attempts):
            spec = ProcessSpec(recipe=self.decision.recipe.name,
                               name=self._name(item, task, fresh=attempt > 0), title=title,
                               goal=task, steer=steer, params=self.request.params,
                               parent=self.caller.id if self.caller else None)
            try:
                return create_process(self.ws, spec)
            except DuplicateProcessName:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _name(self, item: Item, task: str, fresh: bool = False) -> str:
        if self.request.name_prefix:
            return f"{self.request.name_prefix}-{item.number}"
        suffix = secrets.token_hex(SUFFIX_BYTES) if fresh else self.suffix
        words = item.value if isinstance(item.value, str) else task
        return f"{slugify(words)}-{item.number}-{suffix}"

    def _free_name(self, item: Item, task: str) -> str:
        """Return the item's name, with a fresh suffix while a derived name is taken."""
        name = self._name(item, task)
        if self.request.name_prefix or self.request.dry_run:
            return name
        settings = self.ws.settings
        for _ in range(NAME_ATTEMPTS - 1):
            if not process_store.find_by_name(self.ws.db, settings.tenant, settings.session,
                                              name):
                break
            name = self._name(item, task, fresh=True)
        return name


@frozen
class _Templates:
    task: TaskTemplate
    title: TaskTemplate | None
    steer: TaskTemplate | None


def _for_item(decision: Decision) -> Decision:
    return replace(decision, rationale=TEMPLATE_RATIONALE + decision.rationale)


def start_batch(ws: Workspace, request: BatchRequest, *,
                progress: Progress | None = None,
                recipes: RecipeSet | None = None) -> BatchRun:
    """Check a batch and ask the selector once, on the template's shape.

    Args:
        ws: workspace.
        request: template, items and process options.
        progress: wraps the template's LLM call (the CLI's spinner).
        recipes: the loaded recipes; loaded from ``ws`` when None.

    Returns:
        The BatchRun; iterate ``results()`` to run the items.

    Raises:
        TaskTemplateError: the task, title or steer template does not compile, or
            uses include/import/extends (checked before the selector is asked).
        InputError: the name prefix is not a valid process name.
        ProcessNotFound: ``caller`` names no process.
        StateError: the state database cannot be used.

    Rule: docs/delegate.md "Batch".
    """
    templates = _Templates(TaskTemplate(request.template),
                           TaskTemplate(request.title, TITLE_LABEL) if request.title else None,
                           TaskTemplate(request.steer, STEER_LABEL) if request.steer else None)
    if request.name_prefix is not None:
        request = replace(request, name_prefix=check_process_name(request.name_prefix))
        check_process_name(f"{request.name_prefix}-{len(request.items)}")
    caller = load_process(ws, request.caller) if request.caller else None
    recipes = load_recipes(ws) if recipes is None else recipes
    warnings = recipes.left_out(ws.catalog().names)
    shape, not_asked = templates.task.shape_or_why()
    if not request.items:
        shape, not_asked = None, NO_ITEMS
    decision, log_id = None, None
    if shape is not None:
        model = caller_model(ws, caller) if caller else None
        decision = select(ws, shape, model=model, recipes=recipes, progress=progress)
        log_id = decision_log.record(
            ws.db, ws.settings.tenant, ws.settings.session, shape, decision,
            keep_task=request.log_task and ws.settings.log_tasks, dry_run=request.dry_run)
    return BatchRun(ws, request, templates, caller, decision, log_id, warnings, not_asked)


def run_batch(ws: Workspace, request: BatchRequest, *,
              on_result: Callable[[ItemResult], None] | None = None,
              fallback: FallbackRunner | None = None) -> BatchSummary:
    """Run a whole batch: ``start_batch`` then every item (for callers without a UI).

    Args:
        ws: workspace.
        request: template, items and process options.
        on_result: called with each item's result, in item order.
        fallback: the Slartibartfast runner for items decided one by one.

    Returns:
        The summary.

    Raises:
        As ``start_batch``; an item's failure is its result, never an exception.
    """
    run = start_batch(ws, request)
    for result in run.results(fallback):
        if on_result is not None:
            on_result(result)
    return run.summary
