"""process_create_delegate: the selector decides, a MATCH starts a process (DESIGN.md §5).

Flow of ``delegate()``:
1. ``--caller PID`` → the caller's model preference (its params' ``model``,
   else its recipe's ``params.model``); the caller becomes the new process's
   parent.
2. ``select()`` decides (never raises).
3. MATCH and not a dry run → process_create (§4) unchanged: goal = the task;
   title, steer and params passed 1:1; the name is ``--name`` or a slug of
   the task plus a short random suffix.
4. NONE whose reason is ``fallback_eligible``, not a dry run → the fallback
   runner, when one is given. This is the one place the Slartibartfast
   fallback (§6) plugs in; without a runner, ``fallback`` is null. With a
   runner, any other NONE (an LLM failure …) keeps ``fallback`` null and its
   rationale says why (``NoneReason.no_fallback_note``); the decision log
   keeps the selector's own rationale.
5. Every selector call is written to the decision log, with the process it
   started — also when starting the process failed.
"""

from __future__ import annotations

import re
import secrets
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from vance_cli.errors import DuplicateProcessName, VanceError

if TYPE_CHECKING:
    from vance_cli.processes import Process
    from vance_cli.recipes import Recipe
    from vance_cli.selector.core import Progress
    from vance_cli.selector.decision import Decision
    from vance_cli.workspace import Workspace

SLUG_SOURCE_MAX = 4096
"""Characters of a task that ``slugify`` reads (its first words make the slug)."""
SLUG_MAX = 40
"""Longest slug part of a default process name, in characters (cut at a word boundary)."""

SUFFIX_BYTES = 3
"""Random bytes of a default name's suffix (6 hex characters)."""

NAME_ATTEMPTS = 3
"""Tries with fresh suffixes when a default name is already taken."""


@dataclass(frozen=True, slots=True)
class DelegateRequest:
    """What ``vance delegate`` was asked.

    Attributes:
        task: the task text (untrusted).
        name: process name; None → slug of the task plus a short unique suffix.
        title: process title ("" → the recipe's title).
        steer: initial steer message.
        params: caller params, overlaid on the recipe's.
        caller: id (or unique prefix) of the calling process.
        dry_run: decide only; start nothing.
        log_task: False keeps the task private in the decision log (``--no-log``).
    """

    task: str
    name: str | None = None
    title: str = ""
    steer: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    caller: str | None = None
    dry_run: bool = False
    log_task: bool = True


class FallbackOutcome(Protocol):
    """What a fallback runner returns (DESIGN.md §5 output, ``fallback`` object)."""

    @property
    def process(self) -> Process | None:
        """The process started from a generated recipe, if any."""

    def to_json(self) -> dict[str, Any]:
        """Return the ``fallback`` object of the delegate JSON."""


FallbackRunner = Callable[["Workspace", DelegateRequest, "Decision"], FallbackOutcome]
"""Runs the Slartibartfast fallback for a NONE that is ``fallback_eligible``."""


@dataclass(frozen=True, slots=True)
class DelegateResult:
    """The outcome of one delegation.

    Attributes:
        decision: the selector's decision.
        process: the started process (MATCH, not a dry run), else None.
        fallback: the fallback outcome, or None (no runner, not eligible).
        dry_run: nothing was started on purpose.
        log_id: the decision-log row.
        warnings: recipe files left out of the inventory, one line each.
    """

    decision: Decision
    process: Process | None = None
    fallback: FallbackOutcome | None = None
    dry_run: bool = False
    log_id: int | None = None
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return exactly DESIGN.md §5's keys.

        Keys: decision, recipe, engine, rationale, reason, process, fallback.
        """
        process = self.process or (self.fallback.process if self.fallback else None)
        return {
            **self.decision.to_json(),
            "process": process.to_json() if process else None,
            "fallback": self.fallback.to_json() if self.fallback else None,
        }


_GERMAN_LETTERS = str.maketrans({"ß": "ss", "ä": "ae", "ö": "oe", "ü": "ue"})
"""German spelling without umlauts and sharp s (``Straße`` → ``strasse``, ``Übung`` → ``uebung``),
applied after lower-casing (which makes ``ẞ Ä Ö Ü`` these)."""


def slugify(task: str, limit: int = SLUG_MAX) -> str:
    """Return a lower-case slug of the task's first words, at most ``limit`` characters.

    The one slug of vance: default process names of ``delegate``, batch items
    and the Slartibartfast fallback's spawned process all come from here.
    The same text gives the same slug, however it is written: it is
    NFC-normalised first (a decomposed ``u`` + ``◌̈`` is ``ü``), German
    letters are spelled out (``ß``/``ẞ`` → ``ss``, ``ä``/``Ä`` → ``ae``,
    ``ö`` → ``oe``, ``ü`` → ``ue``), and other accents are dropped by NFKD
    (``crème brûlée`` → ``creme-brulee``). Letters of other scripts stay as
    they are (a process name may hold them). Why no ``python-slugify``: it
    spells ``ä`` as ``a`` unless told otherwise, transliterates every
    script (``日本`` → ``ri-ben``) and loads a Unidecode table; this is
    eight lines.

    Args:
        task: any text.
        limit: longest slug, in characters; cut at a word boundary (a single
            longer word is cut at ``limit``).

    Returns:
        Words joined by ``-``; ``"task"`` when the text has no letters or digits.
    """
    # the first words are all a slug needs: a bounded head keeps a huge task cheap
    folded = unicodedata.normalize("NFC", task[:SLUG_SOURCE_MAX]).lower()
    folded = folded.translate(_GERMAN_LETTERS)
    folded = unicodedata.normalize("NFKD", folded)
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    slug = ""
    for word in re.findall(r"[^\W_]+", folded):
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > limit:
            if not slug:
                slug = word[:limit]
            break
        slug = candidate
    return slug or "task"


def default_name(task: str) -> str:
    """Return a process name for a task: its slug plus ``-`` and 6 random hex characters."""
    return f"{slugify(task)}-{secrets.token_hex(SUFFIX_BYTES)}"


def caller_model(ws: Workspace, caller: Process) -> str | None:
    """Return the caller's model preference: its params' ``model``, else its recipe's.

    Rule: DESIGN.md §5 step 4 ("--caller PID → that process's recipe params.model").
    """
    from vance_cli.recipes import find_recipe

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

    Rule: DESIGN.md §5.
    """
    from vance_cli.processes import get_process
    from vance_cli.recipes import load_recipes
    from vance_cli.selector import select
    from vance_cli.state import decision_log

    _check_name_first(ws, request)
    caller = get_process(ws, request.caller) if request.caller else None
    model = caller_model(ws, caller) if caller else None
    recipes = load_recipes(ws)
    warnings = tuple(f"recipe '{p.name}' left out: {p.reason}" for p in recipes.problems)
    decision = select(ws, request.task, model=model, recipes=recipes, progress=progress)
    process: Process | None = None
    outcome: FallbackOutcome | None = None
    try:
        if decision.recipe is not None and not request.dry_run:
            process = _spawn(ws, request, decision.recipe, caller.id if caller else None)
        elif decision.reason is not None and decision.reason.fallback_eligible and fallback \
                and not request.dry_run:
            outcome = fallback(ws, request, decision)
    finally:
        started = process or (outcome.process if outcome else None)
        log_id = decision_log.record(
            ws.db, ws.settings.tenant, ws.settings.session, request.task, decision,
            keep_task=request.log_task and ws.settings.log_tasks,
            process_id=started.id if started else None, dry_run=request.dry_run)
    note = decision.reason.no_fallback_note if decision.reason and fallback else None
    shown = replace(decision, rationale=f"{decision.rationale} — {note}") if note else decision
    return DelegateResult(shown, process, outcome, request.dry_run, log_id, warnings)


def _check_name_first(ws: Workspace, request: DelegateRequest) -> None:
    """Fail on a bad or taken ``--name`` before the selector spends an LLM call.

    The database still enforces uniqueness at create time (a concurrent
    delegate may take the name in between).
    """
    from vance_cli.processes import check_process_name
    from vance_cli.state import process_store

    if request.name is None:
        return
    name = check_process_name(request.name)
    settings = ws.settings
    if not request.dry_run and process_store.find_by_name(ws.db, settings.tenant,
                                                          settings.session, name):
        raise DuplicateProcessName(name, settings.session, settings.tenant)


def _spawn(ws: Workspace, request: DelegateRequest, recipe: Recipe,
           parent: str | None) -> Process:
    from vance_cli.processes import ProcessSpec, create_process

    attempts = 1 if request.name else NAME_ATTEMPTS
    for attempt in range(attempts):
        spec = ProcessSpec(recipe=recipe.name, name=request.name or default_name(request.task),
                           title=request.title, goal=request.task, steer=request.steer,
                           params=request.params, parent=parent)
        try:
            return create_process(ws, spec)
        except DuplicateProcessName:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
