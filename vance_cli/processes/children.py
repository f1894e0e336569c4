"""An orchestrator's children: real processes, run inline in its turn (``Turn.spawn`` …).

A child that is itself an orchestrator is refused before it is created when it
would run a recipe of its own ancestry, or nest more than ``MAX_NESTING`` deep.
Rule: docs/engines.md#children
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import CannotRun, DuplicateProcessName, VanceError
from vance_cli.base.records import frozen
from vance_cli.base.signals import WorkerTerminated
from vance_cli.processes import delegation
from vance_cli.processes.inputs import submit
from vance_cli.processes.lifecycle import close_process
from vance_cli.processes.model import NAME_MAX, CloseReason, Process, ProcessSpec, Status, TurnEnd
from vance_cli.processes.records import create_process, load_process
from vance_cli.recipes.loader import find_recipe
from vance_cli.state import events as event_store
from vance_cli.state import process_store as store

if TYPE_CHECKING:
    from vance_cli.processes.runtime import TurnReport
    from vance_cli.processes.turn import Turn, TurnSink
    from vance_cli.recipes.loader import Recipe
    from vance_cli.state.db import Database, Row
    from vance_cli.workspace import Workspace

ChildTurn = Callable[["Workspace", Process, "TurnSink", bool], "TurnReport"]
"""Runs one turn of a child inline: ``(workspace, child, sink, close)`` → its report (the
runtime's ``run_turn(inline=True)``, handed to the turn that runs children); with
``close`` a turn that answers closes the child ``DONE`` as it settles."""

NAME_ATTEMPTS = 3
"""Fresh name suffixes tried when a child's name is taken."""

MAX_NESTING = 2
"""Orchestrators that may stand above an orchestrator child (marvin → zaphod → heads)."""

QUESTION_CHARS = 300
"""Characters of a child's question quoted when it stopped to ask the person."""

CLOSE_TRIES = 3
"""Tries to close one child when stop signals interrupt the close."""
JOIN_STEP = 0.1
"""Seconds between two looks at the orchestrator's stop while its children run."""

STOPPED_REASON = "its orchestrator was stopped"
"""The reason a child is closed with when its orchestrator stops."""

MAX_ANCESTRY = 50
"""Parents read at most when a child's ancestry is checked."""


@frozen
class ChildResult:
    """What one child's turn gave.

    Attributes:
        process: the child as stored after the turn.
        text: its reply, or None.
        error: why it gave no answer (its turn failed, it has no engine …), else None.
    """

    process: Process
    text: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the child answered."""
        return self.error is None and bool(self.text and self.text.strip())


class QuietSink:
    """A sink for children running side by side: progress lines only, one at a time."""

    def __init__(self, inner: TurnSink) -> None:
        self.inner = inner
        self._lock = threading.Lock()

    def text(self, piece: str) -> None:
        """Drop the piece (side-by-side answers would interleave)."""

    def status(self, line: str) -> None:
        """Pass the line on, one thread at a time."""
        with self._lock:
            self.inner.status(line)


def child_name(parent: Process, label: str) -> str:
    """Return a fresh name for a child: ``<parent name>-<label>-<4 hex>``, within NAME_MAX."""
    suffix = "-" + secrets.token_hex(2)
    base = f"{parent.name}-{label}".strip()
    return base[:NAME_MAX - len(suffix)] + suffix


WIDENING = ("allowedTools", "allowedToolsAdd", "toolsAllow")
"""Params that give a process tools: an orchestrator never passes them to a child, which
gets its own recipe's tools and never more (docs/tools.md#recipes)."""


def spawn_key(turn: Turn, label: str) -> str | None:
    """Return a child's key under its parent: the parent's turn, as its inputs name it, and label.

    A turn that runs again after a takeover has the same inputs (a turn consumes them only
    when it settles), so it gets the same keys and finds its children. Only in team mode
    (None on one machine, where no turn is taken over: nothing to look up).
    """
    if not turn.ws.settings.team:
        return None
    anchor = f"m{turn.inputs[0].id}" if turn.inputs else f"t{turn.number}"
    return f"{anchor}/{label}"


def _reusable(row: Row) -> bool:
    """True for a keyed child a turn run again takes as it is: not closed, or answered."""
    return bool(row["status"] != Status.CLOSED.value
                or row["close_reason"] == CloseReason.DONE.value)


def spawn(turn: Turn, recipe: str, goal: str, label: str, *, prompt: str | None = None,
          title: str = "", params: Mapping[str, Any] | None = None,
          also: Callable[[Database, Process], None] | None = None) -> Process:
    """Create a child of the turn's process (``INIT``, its goal pending).

    The parent's ``params.model`` goes to the child unless ``params`` sets one; keys of
    ``params`` that would give the child tools (``WIDENING``) are dropped.

    Args:
        turn: the orchestrator's turn.
        recipe: the child's recipe.
        goal: its task.
        label: the phase, head or task it works for (part of its name).
        prompt: instructions that replace the recipe's prompt, or None.
        title: its title ("" → the recipe's).
        params: its params, overlaid on the recipe's.
        also: writes more in the creating transaction (``create_process``).

    Returns:
        The child; the one made before under the same key (``spawn_key``) when the turn
        runs again.

    Raises:
        UnknownRecipe, InputError, UnknownEngine: the child cannot be created.
        CannotRun: it would nest orchestrators too deep, or run its own ancestry again.
    """
    key = spawn_key(turn, label)
    if key is not None:
        made = store.find_spawned(turn.ws.db, turn.process.id, key)
        if made is not None and _reusable(made):  # run again (a takeover): the child it made
            child = Process.from_row(made)
            if also is not None:
                with turn.ws.db.transaction():
                    also(turn.ws.db, child)
            return child
        if made is not None:  # it failed: a retried turn makes a new one, under the key
            with turn.ws.db.transaction():
                store.release_spawn_key(turn.ws.db, made["id"])
    found = check_nesting(turn, recipe)
    # a child gets its own recipe's tools, never more: an orchestrator cannot widen them
    given = {k: v for k, v in (params or {}).items() if k not in WIDENING}
    model = turn.process.params.get("model")
    if model and "model" not in given:
        given["model"] = model
    for attempt in range(NAME_ATTEMPTS):
        spec = ProcessSpec(recipe=recipe, name=child_name(turn.process, label), title=title,
                           goal=goal, params=given, parent=turn.process.id, prompt=prompt,
                           spawn_key=key)
        try:
            return create_process(turn.ws, spec, found=found, also=also, parent_known=True)
        except DuplicateProcessName:
            if attempt == NAME_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def check_nesting(turn: Turn, recipe: str) -> Recipe:
    """Refuse an orchestrator child that would recurse or nest too deep (docs/engines.md#children).

    Returns:
        The child's recipe (``create_process`` takes it on: it is found once).

    Raises:
        UnknownRecipe: no such recipe. CannotRun: the child must not run.
    """
    found = find_recipe(turn.ws, recipe)
    engines = turn.ws.engines
    if not engines.orchestrates(found.engine):
        return found
    chain = [turn.process]
    while chain[-1].parent_process_id and len(chain) < MAX_ANCESTRY:
        chain.append(load_process(turn.ws, chain[-1].parent_process_id))
    if found.name in {p.recipe for p in chain}:
        raise CannotRun(f"recipe '{found.name}' would run inside itself (process"
                        f" {turn.process.id} runs under it): an orchestrator never runs its own"
                        " recipe again", process=turn.process.id)
    refused = delegation.refusal(turn.ws, turn.process, counted=False)
    if refused is not None:
        raise CannotRun(f"recipe '{found.name}' ({found.engine}) was not started: {refused}",
                        process=turn.process.id)
    above = sum(engines.orchestrates(p.engine) for p in chain)
    if above >= MAX_NESTING:
        raise CannotRun(f"recipe '{found.name}' ({found.engine}) would nest orchestrators"
                        f" {above + 1} deep; at most {MAX_NESTING} may stand above one",
                        process=turn.process.id)
    return found


def run(ws: Workspace, child: Process, sink: TurnSink, runner: ChildTurn, *,
        keep_open: bool = False, steer: str | None = None) -> ChildResult:
    """Run one turn of a child here and read its reply (docs/engines.md#children).

    A child that stops to ask the person (it settles ``BLOCKED``) has failed:
    its orchestrator cannot answer for the person.

    Args:
        ws: workspace (a fork of the parent's when run in a thread).
        child: the child.
        sink: its live output.
        runner: runs the child's turn inline.
        keep_open: leave the child IDLE after its answer (it will be steered again).
        steer: a message to queue before the turn (a debate's next round).

    Returns:
        The ChildResult; a failure is its ``error``, never an exception.

    Raises:
        KeyboardInterrupt, SystemExit: Ctrl-C or SIGTERM (the child is closed STOPPED first).
    """
    if child.spawn_key is not None and child.status is Status.CLOSED:
        return ChildResult(child, child.result)  # run again: the answer it gave (``_reusable``)
    try:
        if steer is not None:
            submit(ws, child.id, steer)
        report = runner(ws, child, sink, not keep_open)
    except VanceError as exc:  # no engine code, cannot run, no LLM: the child's failure
        after, _ = close_process(ws, child.id, CloseReason.STALE, {"reason": exc.message},
                                 note=exc.message, notify=False)
        _forget_events(ws, after)
        return ChildResult(after, None, exc.message)
    except BaseException:  # Ctrl-C, SIGTERM, a stop: the child ends with its orchestrator
        stop(ws, [child])
        raise
    error = report.reason if report.failed else None
    if error is None and report.settle == TurnEnd.BLOCKED:
        asked = " ".join((report.reply or "").split())[-QUESTION_CHARS:]
        error = (f"it stopped to ask the person ({asked}); an orchestrator's worker cannot"
                 " wait for an answer")
    if error is None and not (report.reply or "").strip():
        error = "it gave no answer"
    after = report.process
    if not keep_open or error is not None:
        if after.status is not Status.CLOSED:
            after, _ = close_process(ws, child.id,
                                     CloseReason.DONE if error is None else CloseReason.STALE,
                                     None if error is None else {"reason": error},
                                     note="its orchestrator has the answer" if error is None
                                     else error, notify=False)
    if report.failed:  # the runtime's close of the failed turn told the parent
        _forget_events(ws, after)
    return ChildResult(after, report.reply, error or None)


def run_side_by_side(ws: Workspace, jobs: Sequence[tuple[Process, str | None]],
                     sink: TurnSink, max_parallel: int, runner: ChildTurn, *,
                     check: Callable[[], None], keep_open: bool = False) -> list[ChildResult]:
    """Run one turn of each child in threads, at most ``max_parallel`` at a time, in order.

    Children start in the jobs' order as threads come free (with ``max_parallel``
    1, one after the other as listed).

    The threads are daemons: when the orchestrator stops (``check`` raises,
    Ctrl-C, SIGTERM) its children are closed ``STOPPED`` at once and nothing
    waits for a call still under way.

    Args:
        ws: the parent's workspace (each thread forks its own).
        jobs: ``(child, steer or None)`` pairs.
        sink: progress lines go here (text is dropped: ``QuietSink``).
        max_parallel: threads at most.
        runner: as ``run``.
        check: raises when the orchestrator's turn must end (``Turn.check``).
        keep_open: as ``run``.

    Returns:
        One ChildResult per job, in the jobs' order.

    Raises:
        Whatever ``check`` raises; KeyboardInterrupt, SystemExit.
    """
    quiet = QuietSink(sink)
    results: list[ChildResult | None] = [None] * len(jobs)
    pending: queue.SimpleQueue[tuple[int, Process, str | None]] = queue.SimpleQueue()
    for index, (child, steer) in enumerate(jobs):  # taken in the jobs' order
        pending.put((index, child, steer))

    def work() -> None:
        while True:
            try:
                index, child, steer = pending.get_nowait()
            except queue.Empty:
                return
            fork = ws.fork()
            try:
                results[index] = run(fork, child, quiet, runner, keep_open=keep_open,
                                     steer=steer)
            except Exception as exc:  # one child's crash is that child's failure
                results[index] = ChildResult(child, None, f"{type(exc).__name__}: {exc}")
            finally:
                fork.close()

    width = max(1, min(max_parallel, len(jobs) or 1))
    # each thread runs in a copy of this context: a team job's worker identity goes on
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(work,),
                                daemon=True, name=f"vance-children-{n}")
               for n in range(width)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(JOIN_STEP)
                check()
    except BaseException:
        with contextlib.suppress(queue.Empty):
            while True:  # no thread starts another child
                pending.get_nowait()
        stop(ws, [child for child, _ in jobs])
        raise
    return [result or ChildResult(child, None, "it did not finish")
            for result, (child, _) in zip(results, jobs, strict=True)]


def stop(ws: Workspace, children: Sequence[Process]) -> None:
    """Close children that are still open ``STOPPED`` (their orchestrator stopped).

    A stop signal that arrives while they are closed (``vance process stop`` closes
    the orchestrator, which ends its turn, then sends SIGTERM) does not leave the rest
    open: each close is tried again, and the signal is raised once all are closed.

    Raises:
        WorkerTerminated, KeyboardInterrupt: such a signal came meanwhile. Nothing
            else: it runs while another exception is on its way.
    """
    interrupted: BaseException | None = None
    for child in children:
        for _ in range(CLOSE_TRIES):
            try:
                after, _ = close_process(ws, child.id, CloseReason.STOPPED,
                                         {"reason": STOPPED_REASON}, note=STOPPED_REASON,
                                         notify=False)
                _forget_events(ws, after)
                break
            except (WorkerTerminated, KeyboardInterrupt) as exc:  # rolled back: once more
                interrupted = interrupted or exc
            except Exception:  # the database is the problem: the original error says more
                if interrupted is not None:
                    raise interrupted from None
                return
    if interrupted is not None:
        raise interrupted


def close_open(ws: Workspace, children: Sequence[Process]) -> None:
    """Close children left open (a debate's heads) ``DONE`` (their parent is not told)."""
    for child in children:
        close_process(ws, child.id, CloseReason.DONE, note="its orchestrator has the answer",
                      notify=False)


def _forget_events(ws: Workspace, child: Process) -> None:
    """Consume the events ``child`` posted to its parent (the parent has the result)."""
    if child.parent_process_id is None:
        return
    db, tenant = ws.db, ws.settings.tenant
    with db.transaction():
        rows = event_store.select_events(db, tenant, recipient=child.parent_process_id)
        ids = [r["id"] for r in rows if r["source_process_id"] == child.id]
        if ids:
            event_store.mark_consumed(db, tenant, ids)

