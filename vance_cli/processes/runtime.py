"""Running a process's turns: claim, take the inputs, one engine step, settle; ``drive``.

A turn claims its process with compare-and-set on the status, so one turn at a
time runs per process; inputs are consumed only when it settles, in one
transaction. Rule: docs/processes.md#turns
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from contextvars import ContextVar
from typing import TYPE_CHECKING

from vance_cli.base.errors import CannotRun, InvalidTransition, LLMError, NoEngineCode, VanceError
from vance_cli.base.records import frozen
from vance_cli.llm import LLMConfig
from vance_cli.processes import overflow
from vance_cli.processes.budget import Budget
from vance_cli.processes.inputs import Message, has_pending, is_passive, take_events
from vance_cli.processes.launcher import launch
from vance_cli.processes.model import CHILD_SETTLED, CloseReason, Process, Status, TurnEnd
from vance_cli.processes.records import change_status, load_process, notify_parent
from vance_cli.processes.stream import StreamFile
from vance_cli.processes.turn import NullSink, Turn, TurnOutcome, TurnSink, TurnStopped, stop_text
from vance_cli.processes.worker import Run, running
from vance_cli.state import conversation
from vance_cli.state import process_store as store

if TYPE_CHECKING:
    from vance_cli.processes.children import ChildTurn
    from vance_cli.workspace import Workspace

CHILD_RUNNER: ContextVar[ChildTurn | None] = ContextVar("vance_child_runner", default=None)
"""How an orchestrator's turn runs a child's turn, when not inline here: a team's worker
sets ``queued.run_child_job`` (each child's turn a job of its own, on any host)."""

MAX_TURNS_IN_A_ROW = 20
"""Turns ``drive`` runs back to back at most (inputs that keep arriving cannot loop it)."""


@frozen
class TurnReport:
    """What running a turn did.

    Attributes:
        process: the process after the turn.
        number: the turn's number, or None when no turn ran.
        settle: how it ended; None when no turn ran.
        reply: the turn's reply text, if any.
        reason: why it failed or stopped, if it did.
    """

    process: Process
    number: int | None = None
    settle: TurnEnd | None = None
    reply: str | None = None
    reason: str | None = None

    @property
    def failed(self) -> bool:
        """True when the turn failed (the process closed STALE or STOPPED)."""
        return self.settle in (TurnEnd.FAILED, TurnEnd.STOPPED)


def run_turn(ws: Workspace, process_id: str, *, sink: TurnSink | None = None,
             adopt: bool = False, retry: bool = False, inline: bool = False,
             close: bool = False, seen: Process | None = None) -> TurnReport:
    """Run one turn of a process here (the foreground, or a worker's main thread).

    Args:
        ws: workspace.
        process_id: id or unique prefix.
        sink: live output; None drops it.
        adopt: a launcher marked the process RUNNING under this OS process already.
        retry: reopen a process that failed (``CLOSED/STALE``) and run its pending inputs.
        inline: an orchestrator runs this child inside its own turn and reads the
            report: a settled turn posts no ``child_settled`` and wakes no parent.
        close: (inline) a turn that answers closes the child ``DONE`` as it settles:
            its orchestrator has the answer.
        seen: the process as the caller has just read it (it is not read again).

    Returns:
        The TurnReport.

    Raises:
        ProcessNotFound: no such process.
        CannotRun: the process is closed (and not a retry of a STALE one), passive,
            or a turn is running.
        NoEngineCode: its engine has no local implementation.
        LLMNotConfigured: no LLM is configured (nothing was changed).
        KeyboardInterrupt: Ctrl-C, after the turn settled IDLE with the partial reply.
    """
    sink = sink or NullSink()
    process = seen if seen is not None else load_process(ws, process_id)
    engine = ws.engines.get(process.engine)
    if engine is None or (engine.run_turn is None and engine.run_process is None):
        raise NoEngineCode(f"engine '{process.engine}' has no local implementation: process"
                           f" {process.id} cannot run", engine=process.engine)
    if is_passive(process):
        raise CannotRun(f"process {process.id} is a mailbox ({process.recipe}): it runs no turns",
                        process=process.id)
    process = _claimable(ws, process, adopt, retry)
    if engine.run_process is not None:
        return _run_whole(ws, process, engine.run_process, sink, adopt)
    LLMConfig.from_settings(ws.settings)  # no LLM: raise before anything changes
    assert engine.run_turn is not None
    return _run_steps(ws, process, engine.run_turn, sink, adopt, inline, close)


def _claimable(ws: Workspace, process: Process, adopt: bool, retry: bool) -> Process:
    if process.status is Status.CLOSED:
        if retry and process.close_reason == CloseReason.STALE.value:
            with ws.db.transaction():
                if store.reopen_stale(ws.db, process.id):
                    store.record_transition(ws.db, process.id, Status.CLOSED.value,
                                            Status.IDLE.value, None, "reopened to retry")
            return load_process(ws, process.id)
        raise CannotRun(f"process {process.id} is CLOSED/{process.close_reason}"
                        + ("" if process.close_reason != CloseReason.STALE.value
                           else "; 'vance process run' retries it"), process=process.id)
    if process.status is Status.RUNNING and not (adopt and process.worker is not None):
        raise CannotRun(f"process {process.id} is RUNNING: a turn is under way"
                        " ('vance process follow' shows it)", process=process.id)
    return process


@frozen
class _Start:
    """What the claim of a turn stored and read: the turn's number, the process, its inputs."""

    number: int
    process: Process
    inputs: list[Message]


@contextmanager
def _claim(ws: Workspace, process: Process, adopt: bool) -> Iterator[tuple[Run, _Start]]:
    """``worker.running`` for a turn: a claim another turn or a stop won first is CannotRun.

    The status was checked before (``_claimable``); the claim itself is the
    compare-and-set on that status (``worker.running(seen=…)``) that settles a
    race between two turns. In the claim's transaction the process's events
    become pending inputs, the turn is counted and recorded, and the inputs it
    takes are read.
    """
    started: list[_Start] = []

    def begin(full_id: str) -> None:
        db = ws.db
        take_events(db, ws.settings.tenant, full_id)
        row = store.count_turn(db, full_id)
        assert row is not None  # the claim just changed this row
        claimed = Process.from_row(row)
        conversation.start_turn(db, full_id, claimed.turns, os.getpid())
        inputs = [Message.from_row(r) for r in conversation.pending_inputs(db, full_id)]
        started.append(_Start(claimed.turns, claimed, inputs))

    with ExitStack() as stack:
        try:
            run = stack.enter_context(running(ws, process.id, handle_sigterm=False,
                                              adopt=adopt, on_claim=begin, seen=process))
        except InvalidTransition:
            now = load_process(ws, process.id)
            raise CannotRun(f"process {now.id} is {now.status.value}: another turn or a stop"
                            " came first", process=now.id) from None
        yield run, started[0]


EngineStep = Callable[[Turn], TurnOutcome]
WholeRun = Callable[["Workspace", Process, TurnSink, bool], Process]


def _run_steps(ws: Workspace, process: Process, step: EngineStep, sink: TurnSink,
               adopt: bool, inline: bool = False, close: bool = False) -> TurnReport:
    """The common turn: claim, take inputs, one engine step, settle (see the module rules)."""
    interrupted = False
    report: TurnReport
    with _claim(ws, process, adopt) as (run, started):
        db, number = ws.db, started.number
        stream = StreamFile(ws, process.id, sink)
        turn = Turn(ws, started.process, number, started.inputs, stream,
                    Budget.of(ws.settings, started.process.params), run,
                    runner=CHILD_RUNNER.get() or _run_inline)
        try:
            try:
                outcome = step(turn)
            except BaseException:
                stream.close(keep=True)
                raise
            stream.close()
        except KeyboardInterrupt:
            _settle(ws, run, turn, TurnOutcome(reply=turn.partial or None), interrupted=True)
            interrupted = True
            report = TurnReport(load_process(ws, process.id), number, TurnEnd.INTERRUPTED,
                                turn.partial or None)
        except TurnStopped:
            run.settled()
            with turn.storing():
                conversation.end_turn(db, process.id, number, TurnEnd.STOPPED, "stopped")
            report = TurnReport(load_process(ws, process.id), number, TurnEnd.STOPPED,
                                reason="the process was stopped")
        except Exception as exc:  # every failure ends the turn: the process goes STALE
            reason = _reason(exc)
            with turn.storing():
                conversation.end_turn(db, process.id, number, TurnEnd.FAILED, reason)
            run.close(CloseReason.STALE, {"reason": reason, "turn": number}, note=reason)
            report = TurnReport(load_process(ws, process.id), number, TurnEnd.FAILED,
                                reason=reason)
        except BaseException as exc:  # SIGTERM (process stop), an exit: the turn ends STOPPED
            with suppress(Exception), turn.storing():  # the worker is leaving: best effort
                conversation.end_turn(db, process.id, number, TurnEnd.STOPPED, stop_text(exc))
            raise
        else:
            try:
                settled = _settle(ws, run, turn, outcome, notify=not inline, close=close)
            except Exception as exc:  # the database refused the reply: keep it in a file
                if outcome.reply is None:
                    raise
                reason = overflow.keep_unsaved(ws, process.id, number, outcome.reply, exc)
                with turn.storing():  # a smaller write, which may still land
                    conversation.end_turn(db, process.id, number, TurnEnd.FAILED, reason)
                run.close(CloseReason.STALE, {"reason": reason, "turn": number}, note=reason)
                report = TurnReport(load_process(ws, process.id), number, TurnEnd.FAILED,
                                    reason=reason)
            else:
                after = settled or load_process(ws, process.id)
                report = TurnReport(after, number, TurnEnd.DONE if after.status is Status.CLOSED
                                    and after.close_reason == CloseReason.DONE
                                    else outcome.settle, outcome.reply)
                if settled is not None and settled.status is Status.CLOSED:
                    ws.engines.run_close_hooks(ws, [settled])
    if interrupted:
        raise KeyboardInterrupt
    if not inline:
        wake_parent(ws, report.process)
    return report


def _reason(exc: BaseException) -> str:
    if isinstance(exc, LLMError):
        return f"LLM call failed: {exc.message}"
    if isinstance(exc, VanceError):
        return exc.message
    return f"worker failed: {type(exc).__name__}: {exc}".rstrip(": ")


def _settle(ws: Workspace, run: Run, turn: Turn, outcome: TurnOutcome,
            interrupted: bool = False, notify: bool = True, close: bool = False) -> Process | None:
    """Store the turn's messages and calls, consume its inputs, set the status: one transaction.

    With ``close``, a turn that answers (it would settle ``IDLE``) closes its
    process ``DONE`` instead: an inline child whose orchestrator has the answer.

    Returns the process as settled (None: someone else changed its status first).
    """
    db, pid = ws.db, turn.process.id
    stored, meta = (overflow.fit(ws, pid, turn.number, outcome.reply)
                    if outcome.reply is not None else ("", {}))
    meta.update({"interrupted": True} if interrupted else {},
                **({"truncated": turn.truncated} if turn.truncated else {}))
    with turn.storing():
        for kind, text in outcome.notes:
            conversation.add_message(db, pid, "note", kind, text, turn=turn.number)
        if outcome.reply is not None:
            conversation.add_message(
                db, pid, "assistant", "reply", stored, turn=turn.number,
                model=outcome.model, tokens_in=outcome.tokens_in, tokens_out=outcome.tokens_out,
                meta=meta or None)
        result = stored if outcome.reply is not None else None
        answered = close and not interrupted and outcome.settle == TurnEnd.IDLE and \
            bool((outcome.reply or "").strip())
        if not (interrupted and outcome.reply is None):  # Ctrl-C before a token: kept
            conversation.consume(db, [m.id for m in turn.inputs], turn.number)
        conversation.end_turn(db, pid, turn.number, TurnEnd.INTERRUPTED if interrupted else
                              TurnEnd.DONE if answered else outcome.settle)
        if outcome.settle == TurnEnd.DONE or answered:
            settled = change_status(db, pid, Status.RUNNING, Status.CLOSED,
                                    CloseReason.DONE.value, outcome=outcome.outcome,
                                    note="its orchestrator has the answer" if answered
                                    else f"turn {turn.number} done", notify=notify,
                                    result=result, owner=run.worker, turn=turn.number)
        else:
            target = Status.BLOCKED if outcome.settle == TurnEnd.BLOCKED else Status.IDLE
            settled = change_status(db, pid, Status.RUNNING, target,
                                    note=f"turn {turn.number} settled", result=result,
                                    owner=run.worker, turn=turn.number)
            if settled is not None and notify and settled.parent_process_id is not None:
                notify_parent(db, pid, CHILD_SETTLED)
        if settled is None and result is not None:  # stopped meanwhile: the reply still counts
            store.set_result(db, pid, result)
    run.settled()
    return settled


def _run_whole(ws: Workspace, process: Process, whole: WholeRun, sink: TurnSink,
               adopt: bool) -> TurnReport:
    """An engine that runs its process by itself: run it, then record what it did."""
    stream = StreamFile(ws, process.id, sink)
    try:
        closed = whole(ws, process, stream, adopt)
    finally:
        stream.close(keep=True)  # a whole run is long: its file is made, as before
    inputs = [Message.from_row(r) for r in conversation.pending_inputs(ws.db, process.id)]
    with ws.db.transaction():
        number = store.next_turn(ws.db, process.id)
        conversation.consume(ws.db, [m.id for m in inputs], number)
    wake_parent(ws, closed)
    reply = closed.result
    settle = TurnEnd.DONE if closed.close_reason == CloseReason.DONE else TurnEnd.FAILED
    reason = None if settle == TurnEnd.DONE else str((closed.outcome or {}).get("reason")
                                               or closed.close_reason)
    return TurnReport(closed, number, settle, reply, reason)


def drive(ws: Workspace, process_id: str, *, sink: TurnSink | None = None,
          adopt: bool = False, retry: bool = False) -> TurnReport:
    """Run turns while the process has pending inputs and can take them.

    The first turn runs even without pending input when ``adopt`` (a launcher
    handed the process over) or ``retry`` of a process that failed; a process
    that waits with nothing pending runs no turn. Later turns run only for
    inputs that arrived meanwhile (a steer during a turn), at most
    ``MAX_TURNS_IN_A_ROW``.

    Returns:
        The report of the last turn (``number`` None: no turn ran).

    Raises:
        As ``run_turn``.
    """
    process = load_process(ws, process_id)
    if not adopt and process.status not in (Status.CLOSED, Status.RUNNING) and \
            not has_pending(ws, process.id):
        return TurnReport(process)
    report = run_turn(ws, process.id, sink=sink, adopt=adopt, retry=retry, seen=process)
    for _ in range(MAX_TURNS_IN_A_ROW - 1):
        process = report.process
        if process.status not in (Status.IDLE, Status.BLOCKED) or \
                not has_pending(ws, process.id):
            break
        report = run_turn(ws, process.id, sink=sink, seen=process)
    return report


def wake_parent(ws: Workspace, child: Process) -> bool:
    """Start a turn of the child's parent when its engine acts on events (arthur).

    Nothing happens when the parent is a mailbox, is not waiting (a turn of
    its own will take the event), or no LLM is configured.

    Returns:
        True when a worker was started for the parent (team mode: a job deferred).
    """
    if child.parent_process_id is None or not (ws.settings.llm_configured or ws.settings.team):
        return False
    parent = load_process(ws, child.parent_process_id)
    engine = ws.engines.get(parent.engine)
    if engine is None or not engine.wakes_on_events or is_passive(parent) or \
            parent.status not in (Status.IDLE, Status.BLOCKED):
        return False
    launch(ws, parent.id)
    return True


def _run_inline(ws: Workspace, child: Process, sink: TurnSink, close: bool) -> TurnReport:
    """A child's turn inside its orchestrator's (``Turn``'s runner): no events, no wake."""
    return run_turn(ws, child.id, sink=sink, inline=True, close=close, seen=child)
