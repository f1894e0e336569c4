"""The process runtime: an engine runs its process in turns.

Rules (docs/processes.md "Turns"):
- Inputs are stored before a turn runs: a new process's goal and steer, a
  user's steer (``submit``), and events addressed to the process (a child's
  result), which a turn moves from the event queue into the process's
  messages. An input stays pending until a turn settles.
- A turn claims the process with compare-and-set on its status (``INIT``,
  ``IDLE``, ``BLOCKED`` → ``RUNNING``, worker pid and heartbeat:
  ``worker.running``), so one turn at a time runs per process; it takes
  every pending input, runs one step of the process's engine
  (``Engine.run_turn``), and settles in one transaction: the replies stored
  as messages, the inputs marked consumed, the result text kept, the status
  ``IDLE``, ``BLOCKED`` or ``CLOSED/DONE``. A settled turn of a child posts a
  ``child_settled`` event to its parent (a close posts ``child_closed``), and
  a parent whose engine acts on events gets a turn of its own.
- A turn that fails (an engine error, an LLM error, a budget) closes the
  process ``STALE`` with the reason and leaves its inputs pending; a worker
  that dies leaves the process ``RUNNING`` until stale detection closes it
  ``STALE``. ``run_turn(retry=True)`` reopens a ``STALE`` process and runs
  its pending inputs again.
- Ctrl-C stops a foreground turn: the text streamed so far is stored as a
  reply marked ``interrupted``, the process settles ``IDLE``, and the
  ``KeyboardInterrupt`` goes on to the caller (exit 130). Ctrl-C before the
  first token stores no reply and leaves the turn's inputs pending, so
  ``vance process run`` runs the task again.
- Every LLM call of a turn is recorded (model, tokens, latency, finish
  reason, error); budgets (``Budget``) end a turn that exceeds them, naming
  the budget.
- Engines that run a whole process by themselves (Slartibartfast:
  ``Engine.run_process``) get the process and report the closed one.
"""

from __future__ import annotations

import io
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vance_cli.base.errors import (
    BudgetExceeded,
    CannotRun,
    InvalidTransition,
    LLMError,
    NoEngineCode,
    VanceError,
)
from vance_cli.base.records import frozen
from vance_cli.base.signals import WorkerTerminated
from vance_cli.base.wording import counted
from vance_cli.llm import DEFAULT_MAX_TOKENS, Completion, LLMConfig, complete, safe_endpoint
from vance_cli.processes import overflow
from vance_cli.processes.budget import Budget
from vance_cli.processes.launcher import start_worker
from vance_cli.processes.model import (
    CHILD_SETTLED,
    CloseReason,
    Process,
    StartHow,
    Status,
    TurnEnd,
)
from vance_cli.processes.records import (
    change_status,
    load_process,
    notify_parent,
)
from vance_cli.processes.worker import Run, running
from vance_cli.state import conversation
from vance_cli.state import events as event_store
from vance_cli.state import process_store as store

if TYPE_CHECKING:
    from vance_cli.state.db import Database, Row
    from vance_cli.workspace import Workspace

Settle = TurnEnd
"""How a turn ends (the name engines use; ``model.TurnEnd``)."""

MAX_TURNS_IN_A_ROW = 20
"""Turns ``drive`` runs back to back at most (inputs that keep arriving cannot loop it)."""

PASSIVE_PARAM = "passive"
"""A process whose params set this is a mailbox (the session root): no turn ever runs."""


@frozen
class Message:
    """One message of a process: an input, a reply, an event or a note.

    Attributes:
        id: message id (grows with time).
        role: ``user`` (task, steer), ``assistant`` (a reply), ``event`` (from
            another process) or ``note`` (from vance).
        kind: ``task``, ``steer``, ``reply``, ``child_settled``, ``child_closed`` …
        content: the text.
        created_at: ISO-8601 UTC.
        turn: the turn that consumed (inputs) or wrote (replies) it; None while pending.
        model: the model that wrote a reply.
        tokens_in: prompt tokens of the reply's LLM call(s).
        tokens_out: completion tokens.
        meta: more data (``interrupted``, an event's ``source`` and payload …).
    """

    id: int
    role: str
    kind: str
    content: str
    created_at: str
    turn: int | None
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: Row) -> Message:
        """Build a message from a ``messages`` row."""
        return cls(id=row["id"], role=row["role"], kind=row["kind"], content=row["content"],
                   created_at=row["created_at"], turn=row["turn"], model=row["model"],
                   tokens_in=row["tokens_in"], tokens_out=row["tokens_out"],
                   meta=json.loads(row["meta"] or "{}"))

    def to_json(self) -> dict[str, Any]:
        """Return ``{"role", "kind", "text", "time", "turn", "model", "tokensIn", "tokensOut"}``."""
        out: dict[str, Any] = {"role": self.role, "kind": self.kind, "text": self.content,
                               "time": self.created_at, "turn": self.turn, "model": self.model,
                               "tokensIn": self.tokens_in, "tokensOut": self.tokens_out}
        if self.meta:
            out["meta"] = dict(self.meta)
        return out


class TurnSink(Protocol):
    """Where a running turn's live output goes (the terminal, a stream file, nowhere)."""

    def text(self, piece: str) -> None:
        """Receive the next piece of a streamed reply."""

    def status(self, line: str) -> None:
        """Receive a progress line (a phase started, a head answered …)."""


class NullSink:
    """A sink that drops everything (background turns without a listener)."""

    def text(self, piece: str) -> None:
        """Drop the piece."""

    def status(self, line: str) -> None:
        """Drop the line."""


STREAM_FILE_AFTER = 0.1
"""Seconds into a turn before it makes a stream file that does not exist yet (a follower
polls every 0.1 s): a short turn that nobody could follow makes none."""


class StreamFile:
    """Keeps a turn's live output in ``<state>/streams/<processId>.txt`` for followers.

    The file is started afresh for each turn and appended to as text
    arrives (status lines on lines of their own, starting with ``» ``), so
    ``vance process follow`` in another terminal sees what the listener
    sees. A file that exists (an earlier turn's, or the one a launcher
    emptied for its worker) is emptied at once. One that does not is made
    at the first status line, or at the first text ``after`` seconds into
    the turn, with everything kept so far: a follower sees the same, and a
    short turn makes no file (docs/decisions/0013-turn-path.md). A write
    that fails costs the follower only, never the turn.

    Args:
        ws: workspace (where the streams folder is).
        process_id: full id.
        inner: the listener the output goes to as well.
        after: seconds before a missing file is made for text (``STREAM_FILE_AFTER``).
    """

    def __init__(self, ws: Workspace, process_id: str, inner: TurnSink,
                 after: float | None = None) -> None:
        self.path = stream_path(ws, process_id)
        self.inner = inner
        self._handle: io.FileIO | None = None  # unbuffered: each piece is one write
        self._held: list[str] | None = None
        """Output kept while the file is not made yet (None: it is, or it failed)."""
        self._make_at = time.monotonic() + (STREAM_FILE_AFTER if after is None else after)
        self._lock = threading.Lock()  # an orchestrator's children report from their threads
        try:
            self._handle = io.FileIO(os.open(self.path, os.O_WRONLY | os.O_TRUNC), "w")
        except FileNotFoundError:
            self._held = []
        except OSError:
            self._handle = None

    def _append(self, text: str, now: bool = False) -> None:
        with self._lock:
            if self._held is not None:
                self._held.append(text)
                if not now and time.monotonic() < self._make_at:
                    return
                text, self._held = "".join(self._held), None
                self._handle = self._make()
            handle = self._handle
            if handle is None:
                return
            try:
                data = text.encode("utf-8")
                while data:  # a follower reads the file as it grows
                    written = handle.write(data)
                    if not written:
                        raise OSError("nothing written")
                    data = data[written:]
            except (OSError, ValueError):  # a full disk, or closed: the follower loses
                self._close()

    def _make(self) -> io.FileIO | None:
        try:
            try:
                return io.FileIO(self.path, "w")
            except FileNotFoundError:  # the first turn of this state folder
                self.path.parent.mkdir(parents=True, exist_ok=True)
                return io.FileIO(self.path, "w")
        except OSError:
            return None

    def text(self, piece: str) -> None:
        """Pass the piece on and keep it."""
        self.inner.text(piece)
        self._append(piece)

    def status(self, line: str) -> None:
        """Pass the line on and keep it (the file is made now if it was not)."""
        self.inner.status(line)
        self._append(f"\n» {line}\n", now=True)

    def close(self, keep: bool = False) -> None:
        """Close the file (the turn ended); later pieces are not kept.

        Args:
            keep: make the file for the output held so far (a turn that failed:
                its output stays for followers, as its reply is not stored).
        """
        if keep:
            self._append("", now=True)
        with self._lock:
            self._held = None
            self._close()

    def _close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError:
                pass


def stream_path(ws: Workspace, process_id: str) -> Path:
    """Return the file that holds the live output of a process's latest turn."""
    return ws.settings.paths.streams_dir / f"{process_id}.txt"


@frozen
class TurnOutcome:
    """What an engine's turn produced.

    Attributes:
        settle: ``IDLE`` (waits for input), ``BLOCKED`` (waits for the person) or
            ``DONE`` (finished; the process closes).
        reply: the turn's answer, stored as the process's result text (None: no reply).
        outcome: a structured outcome stored with the process (e.g. a recipe path).
        notes: more messages of the turn, stored before the reply (``(kind, text)``).
        model: the model that wrote the reply.
        tokens_in: prompt tokens spent on the reply.
        tokens_out: completion tokens.
    """

    settle: Settle = TurnEnd.IDLE
    reply: str | None = None
    outcome: Mapping[str, Any] | None = None
    notes: Sequence[tuple[str, str]] = ()
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None

    @classmethod
    def answered(cls, completion: Completion, settle: Settle = TurnEnd.IDLE,
                 reply: str | None = None) -> TurnOutcome:
        """An outcome whose reply is ``completion`` (or ``reply``, e.g. its parsed message)."""
        return cls(settle=settle, reply=completion.text if reply is None else reply,
                   model=completion.model, tokens_in=completion.prompt_tokens,
                   tokens_out=completion.completion_tokens)


class Turn:
    """One turn of one process, as its engine sees it.

    Attributes:
        ws: the workspace the turn runs in.
        process: the process as it was when the turn started.
        number: the turn's number (1 for the first).
        inputs: the pending inputs this turn takes, oldest first.
        sink: where live output goes.
        budget: what the turn may spend.
    """

    def __init__(self, ws: Workspace, process: Process, number: int,
                 inputs: Sequence[Message], sink: TurnSink, budget: Budget,
                 run: Run | None = None) -> None:
        self.ws = ws
        self.process = process
        self.number = number
        self.inputs = tuple(inputs)
        self.sink = sink
        self.budget = budget
        self.partial = ""
        """Text streamed so far by the call under way (kept when Ctrl-C stops it)."""
        self.truncated: str | None = None
        """Which cap cut a reply of this turn (``bytes``, ``tokens``), or None."""
        self._run = run
        self._started = time.monotonic()
        self._calls = 0
        self._unstored: list[dict[str, Any]] = []
        """LLM calls recorded since the turn's last write (``storing``)."""

    def load_state(self) -> dict[str, Any]:
        """Return the engine's state of the process as the turn started (a copy; {} when none)."""
        copy: dict[str, Any] = json.loads(json.dumps(dict(self.process.state or {})))
        return copy

    def save_state(self, state: Mapping[str, Any]) -> None:
        """Store the engine's state now (it outlives the turn, also a failed one)."""
        with self.storing() as db:
            store.set_state(db, self.process.id, state)

    @contextmanager
    def storing(self) -> Iterator[Database]:
        """A transaction that also stores the LLM calls recorded since the turn's last one.

        Every write of a turn goes through it (its state, its next call's
        check, the transaction that ends it), so a turn of one call stores
        the call with its settling (docs/decisions/0013-turn-path.md). The
        calls stay unstored when the transaction fails.

        Yields:
            The database, inside the transaction.
        """
        db, calls = self.ws.db, list(self._unstored)
        with db.transaction():
            for call in calls:
                conversation.add_llm_call(db, self.process.id, self.number, **call)
            yield db
        del self._unstored[:len(calls)]

    def history(self) -> list[Message]:
        """Return the consumed inputs and the replies of earlier turns, oldest first."""
        return [Message.from_row(r) for r in conversation.history(self.ws.db, self.process.id)]

    @property
    def seconds_left(self) -> float:
        """Seconds this turn may still run."""
        return self.budget.seconds - (time.monotonic() - self._started)

    @property
    def deadline(self) -> float:
        """When the turn must end (``time.monotonic()``): every LLM call ends by then."""
        return self._started + self.budget.seconds

    def check(self) -> None:
        """Raise when the turn must end now: stopped from outside, or out of time.

        Raises:
            TurnStopped: the process was stopped or closed meanwhile.
            BudgetExceeded: the turn's seconds are spent.
        """
        if self._run is not None and self._run.stop_requested:
            raise TurnStopped("the process was stopped")
        if self.seconds_left <= 0:
            raise BudgetExceeded(f"the turn ran out of time: budget of {self.budget.seconds:g}"
                                 " seconds per turn (turn.timeout)", "seconds",
                                 self.budget.seconds)

    def llm_config(self, model: str | None = None) -> LLMConfig:
        """Return the endpoint to call: ``model``, else the process's ``params.model``.

        Raises:
            LLMNotConfigured: no LLM is configured.
        """
        preferred = model or self.process.params.get("model")
        return LLMConfig.from_settings(self.ws.settings,
                                       str(preferred) if preferred else None)

    def complete(self, messages: Sequence[Mapping[str, str]], *, purpose: str = "reply",
                 stream: bool = False, schema: Mapping[str, Any] | None = None,
                 temperature: float | None = 0.0, max_tokens: int = DEFAULT_MAX_TOKENS,
                 model: str | None = None) -> Completion:
        """Make one LLM call of this turn, within its budget, and record it.

        Args:
            messages: the chat messages.
            purpose: what the call is for (``reply``, ``plan``, ``head:pro`` …), recorded.
            stream: send the reply's text to ``sink`` as it arrives.
            schema: JSON schema of the expected object (structured output); None asks
                for free text (no ``response_format``, whatever ``llm.json_mode`` says).
            temperature: sampling temperature; None sends none.
            max_tokens: cap on the reply, in tokens.
            model: a model for this call, else the process's.

        Returns:
            The completion.

        Raises:
            BudgetExceeded: the turn's LLM calls or seconds, or the process's tokens, are spent.
            TurnStopped: the process was stopped meanwhile.
            LLMError: the call failed (recorded before it is raised).
        """
        self.check_call()
        config = self._bounded(self.llm_config(model), structured=schema is not None)
        self.partial = ""
        pieces = 0

        def on_text(piece: str) -> None:
            nonlocal pieces
            pieces += 1
            self.partial += piece
            self.sink.text(piece)
            self.check()  # a stream that keeps coming must still end with the turn's seconds

        try:
            answer = complete(config, messages, schema, max_tokens, temperature=temperature,
                              on_text=on_text if stream else None, deadline=self.deadline)
        except LLMError as exc:
            self._record(purpose, config, None, exc.message)
            if exc.timeout:
                self.check()  # cut short by the turn's seconds: say so, not "timed out"
            raise
        except (BudgetExceeded, TurnStopped) as exc:  # from on_text: the stream was cut
            self._record(purpose, config, None, str(exc), pieces)
            raise
        except BaseException as exc:  # Ctrl-C, SIGTERM: the call is recorded with what came
            self._record(purpose, config, None, stop_text(exc), pieces)
            raise
        self._record(purpose, config, answer, None)
        if answer.truncated:
            self.truncated = answer.truncated
        return answer

    def check_call(self) -> None:
        """Raise unless the turn may make one more LLM call (``complete`` checks it too).

        Raises:
            BudgetExceeded: the turn's LLM calls or seconds, or the process's tokens, are spent.
            TurnStopped: the process was stopped meanwhile.
        """
        self.check()
        if self._unstored:  # the process's tokens include the calls made so far
            with self.storing():
                pass
        if self._calls >= self.budget.llm_calls:
            raise BudgetExceeded(f"the turn made its {counted(self.budget.llm_calls, 'LLM call')}:"
                                 " budget"
                                 " of LLM calls per turn (turn.max_llm_calls)", "llm_calls",
                                 self.budget.llm_calls)
        used = conversation.llm_totals(self.ws.db, self.process.id)
        if used[1] + used[2] >= self.budget.tokens:
            raise BudgetExceeded(f"the process used {used[1] + used[2]} LLM tokens: budget of"
                                 f" {self.budget.tokens} tokens (process.max_tokens)",
                                 "tokens", self.budget.tokens)

    def record_call(self, purpose: str, *, model: str | None, endpoint: str | None,
                    tokens_in: int | None = None, tokens_out: int | None = None,
                    latency_ms: float | None = None, finish_reason: str | None = None,
                    error: str | None = None) -> None:
        """Record an LLM call of this turn; it counts against the turn's calls.

        ``complete`` records its own; an engine records those that other code
        made for the turn (the selector of a delegate), after ``check_call``.
        The row is stored with the turn's next write (``storing``): its next
        call's check, its state, or the transaction that ends it.
        """
        self._calls += 1
        self._unstored.append({"purpose": purpose, "model": model, "endpoint": endpoint,
                               "tokens_in": tokens_in, "tokens_out": tokens_out,
                               "latency_ms": latency_ms, "finish_reason": finish_reason,
                               "error": error})

    def _bounded(self, config: LLMConfig, structured: bool) -> LLMConfig:
        """Fit a call's timeout and retries into the turn's seconds left; free text: no JSON mode.

        Each attempt may take the whole timeout, so retries are kept only
        while they fit too (as ``bounded_config`` of Slartibartfast).
        """
        left = self.seconds_left
        timeout = max(0.05, min(config.timeout, left))
        retries = min(config.max_retries, max(0, int(left // timeout) - 1))
        return replace(config, timeout=timeout, max_retries=retries,
                       json_mode=config.json_mode if structured else "none")

    def _record(self, purpose: str, config: LLMConfig, answer: Completion | None,
                error: str | None, partial: int | None = None) -> None:
        """Record a call; one cut short counts the text chunks it got as its tokens out."""
        self.record_call(purpose, model=answer.model if answer else config.model,
                         endpoint=safe_endpoint(config.base_url),
                         tokens_in=answer.prompt_tokens if answer else None,
                         tokens_out=answer.completion_tokens if answer else partial or None,
                         latency_ms=answer.latency_ms if answer else None,
                         finish_reason=answer.finish_reason if answer else None, error=error)


class TurnStopped(Exception):
    """The process was stopped or closed by someone else while its turn ran."""


def stop_text(exc: BaseException) -> str:
    """Say how a turn was stopped from outside its code: Ctrl-C, SIGTERM or an exit."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    if isinstance(exc, WorkerTerminated):
        return "stopped: the worker received SIGTERM"
    return f"stopped: {type(exc).__name__}"


@frozen
class TurnReport:
    """What running a turn did.

    Attributes:
        process: the process after the turn.
        number: the turn's number, or None when no turn ran.
        settle: how it ended: ``IDLE``, ``BLOCKED``, ``DONE``, ``FAILED``, ``STOPPED``
            or ``INTERRUPTED``; None when no turn ran.
        reply: the turn's reply text, if any.
        reason: why it failed or stopped, if it did.
    """

    process: Process
    number: int | None = None
    settle: str | None = None
    reply: str | None = None
    reason: str | None = None

    @property
    def failed(self) -> bool:
        """True when the turn failed (the process closed STALE or STOPPED)."""
        return self.settle in ("FAILED", "STOPPED")


def is_passive(process: Process) -> bool:
    """True for a mailbox process (``params.passive``, the session root): it never runs."""
    return process.params.get(PASSIVE_PARAM) is True


def has_pending(ws: Workspace, process_id: str) -> bool:
    """True when the process has inputs or events no turn has taken yet."""
    db = ws.db
    return bool(conversation.pending_inputs(db, process_id)) or bool(
        event_store.select_events(db, ws.settings.tenant, recipient=process_id, limit=1))


def submit(ws: Workspace, process_id: str, text: str, kind: str = "steer") -> Message:
    """Queue a user input (a steer) for the next turn of a process.

    Args:
        ws: workspace.
        process_id: id or unique prefix.
        text: the message.
        kind: ``steer`` (a person's message) or ``answer`` (to a question).

    Returns:
        The stored input.

    Raises:
        ProcessNotFound: no such process.
        CannotRun: the process is closed (a steer could never be taken).
    """
    process = load_process(ws, process_id)
    if process.status is Status.CLOSED and process.close_reason != CloseReason.STALE.value:
        raise CannotRun(f"process {process.id} is CLOSED/{process.close_reason}: it takes no"
                        " more input", process=process.id)
    with ws.db.transaction():
        message_id = conversation.add_message(ws.db, process.id, "user", kind, text)
    [row] = [r for r in conversation.pending_inputs(ws.db, process.id) if r["id"] == message_id]
    return Message.from_row(row)


def transcript(ws: Workspace, process_id: str) -> list[Message]:
    """Return every message of a process (pending inputs too), oldest first."""
    return [Message.from_row(r) for r in conversation.transcript(ws.db, process_id)]


def _take_events(db: Database, tenant: str, process_id: str) -> None:
    """Move the process's unread events into its messages as pending inputs (caller's tx)."""
    rows = event_store.select_events(db, tenant, recipient=process_id)
    for row in rows:
        payload = json.loads(row["payload"] or "{}")
        conversation.add_message(db, process_id, "event", row["kind"],
                                 describe_event(row["kind"], payload),
                                 meta={"source": row["source_process_id"],
                                       "eventId": row["id"], "payload": payload})
    event_store.mark_consumed(db, tenant, [r["id"] for r in rows])


def describe_event(kind: str, payload: Mapping[str, Any]) -> str:
    """Return an event as text an LLM can read (the child, its status, its result)."""
    who = f"{payload.get('name')} ({payload.get('recipe')}, process {payload.get('processId')})"
    status = str(payload.get("status"))
    if payload.get("closeReason"):
        status += f"/{payload.get('closeReason')}"
    text = f"{who} is {status}."
    if payload.get("result"):
        text += f"\n{payload['result']}"
    outcome = payload.get("outcome")
    if isinstance(outcome, Mapping) and outcome.get("reason"):
        text += f"\nReason: {outcome['reason']}"
    return text


def run_turn(ws: Workspace, process_id: str, *, sink: TurnSink | None = None,
             adopt: bool = False, retry: bool = False, inline: bool = False) -> TurnReport:
    """Run one turn of a process here (the foreground, or a worker's main thread).

    Args:
        ws: workspace.
        process_id: id or unique prefix.
        sink: live output; None drops it.
        adopt: a launcher marked the process RUNNING under this OS process already.
        retry: reopen a process that failed (``CLOSED/STALE``) and run its pending inputs.
        inline: an orchestrator runs this child inside its own turn and reads the
            report: a settled turn posts no ``child_settled`` and wakes no parent.

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
    process = load_process(ws, process_id)
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
    return _run_steps(ws, process, engine.run_turn, sink, adopt, inline)


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
    if process.status is Status.RUNNING and not (adopt and process.worker_pid is not None):
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
        _take_events(db, ws.settings.tenant, full_id)
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
               adopt: bool, inline: bool = False) -> TurnReport:
    """The common turn: claim, take inputs, one engine step, settle (see the module rules)."""
    interrupted = False
    report: TurnReport
    with _claim(ws, process, adopt) as (run, started):
        db, number = ws.db, started.number
        stream = StreamFile(ws, process.id, sink)
        turn = Turn(ws, started.process, number, started.inputs, stream,
                    Budget.of(ws.settings, started.process.params), run)
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
            report = TurnReport(load_process(ws, process.id), number, "INTERRUPTED",
                                turn.partial or None)
        except TurnStopped:
            run.settled()
            with turn.storing():
                conversation.end_turn(db, process.id, number, "STOPPED", "stopped")
            report = TurnReport(load_process(ws, process.id), number, "STOPPED",
                                reason="the process was stopped")
        except Exception as exc:  # every failure ends the turn: the process goes STALE
            reason = _reason(exc)
            with turn.storing():
                conversation.end_turn(db, process.id, number, "FAILED", reason)
            run.close(CloseReason.STALE, {"reason": reason, "turn": number}, note=reason)
            report = TurnReport(load_process(ws, process.id), number, "FAILED", reason=reason)
        except BaseException as exc:  # SIGTERM (process stop), an exit: the turn ends STOPPED
            with suppress(Exception), turn.storing():  # the worker is leaving: best effort
                conversation.end_turn(db, process.id, number, "STOPPED", stop_text(exc))
            raise
        else:
            try:
                settled = _settle(ws, run, turn, outcome, notify=not inline)
            except Exception as exc:  # the database refused the reply: keep it in a file
                if outcome.reply is None:
                    raise
                reason = overflow.keep_unsaved(ws, process.id, number, outcome.reply, exc)
                with turn.storing():  # a smaller write, which may still land
                    conversation.end_turn(db, process.id, number, "FAILED", reason)
                run.close(CloseReason.STALE, {"reason": reason, "turn": number}, note=reason)
                report = TurnReport(load_process(ws, process.id), number, "FAILED",
                                    reason=reason)
            else:
                report = TurnReport(settled or load_process(ws, process.id), number,
                                    outcome.settle, outcome.reply)
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
            interrupted: bool = False, notify: bool = True) -> Process | None:
    """Store the turn's messages and calls, consume its inputs, set the status: one transaction.

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
            store.set_result(db, pid, stored)
        if not (interrupted and outcome.reply is None):  # Ctrl-C before a token: kept
            conversation.consume(db, [m.id for m in turn.inputs], turn.number)
        conversation.end_turn(db, pid, turn.number,
                              "INTERRUPTED" if interrupted else outcome.settle)
        if outcome.settle == "DONE":
            settled = change_status(db, pid, Status.RUNNING, Status.CLOSED,
                                    CloseReason.DONE.value,
                                    outcome=outcome.outcome, note=f"turn {turn.number} done",
                                    notify=notify)
        else:
            target = Status.BLOCKED if outcome.settle == "BLOCKED" else Status.IDLE
            settled = change_status(db, pid, Status.RUNNING, target,
                                    note=f"turn {turn.number} settled")
            if settled is not None and notify and settled.parent_process_id is not None:
                notify_parent(db, pid, CHILD_SETTLED)
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
    settle = "DONE" if closed.close_reason == CloseReason.DONE.value else "FAILED"
    reason = None if settle == "DONE" else str((closed.outcome or {}).get("reason")
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
    report = run_turn(ws, process.id, sink=sink, adopt=adopt, retry=retry)
    for _ in range(MAX_TURNS_IN_A_ROW - 1):
        process = report.process
        if process.status not in (Status.IDLE, Status.BLOCKED) or \
                not has_pending(ws, process.id):
            break
        report = run_turn(ws, process.id, sink=sink)
    return report


How = StartHow
"""How ``start`` dealt with a process (``model.StartHow``)."""


@frozen
class Started:
    """What ``start`` did with a process.

    Attributes:
        process: the process afterwards.
        how: ``foreground`` (turns ran here), ``background`` (a worker runs them),
            ``waiting_for_llm`` (no LLM is configured: it waits, ``IDLE``),
            ``nothing_to_do`` (no pending input), ``no_engine`` (its engine has no
            local code), ``passive`` (a mailbox), ``running`` (a turn is under way:
            whoever runs it takes the new input next), ``closed`` (no turn can
            run; a ``STALE`` one waits for ``vance process run``).
        report: the last turn's report (foreground only).
        worker_pid: the worker's pid (background; running: the running turn's).
        log: the worker's log file (background only).
    """

    process: Process
    how: How
    report: TurnReport | None = None
    worker_pid: int | None = None
    log: Path | None = None


def start(ws: Workspace, process_id: str, *, wait: bool = False,
          sink: TurnSink | None = None) -> Started:
    """Get a process's pending turns run: here (``wait``) or by a background worker.

    Args:
        ws: workspace.
        process_id: id or unique prefix.
        wait: run the turns in the foreground and return when they settled.
        sink: live output of foreground turns.

    Returns:
        What was done (``Started.how``); without an LLM the process stays ``IDLE``
        with its inputs pending, and ``vance process run`` runs them later.

    Raises:
        As ``run_turn`` (foreground); OSError: the worker cannot be started.
    """
    process = load_process(ws, process_id)
    held = _held(ws, process)
    if held is not None:
        return Started(process, held,
                       worker_pid=process.worker_pid if held == "running" else None)
    if wait:
        report = drive(ws, process.id, sink=sink)
        return Started(report.process, StartHow.FOREGROUND, report=report)
    pid, log = _launch(ws, process.id)
    return Started(load_process(ws, process.id), StartHow.BACKGROUND, worker_pid=pid, log=log)


BATCH_PARALLEL = 4
"""Workers a batch starts at most when its processes' params set no ``maxParallel`` (as
zaphod's heads); ``maxParallel`` is bounded to 1 to 10 there too."""


def start_all(ws: Workspace, process_ids: Sequence[str]) -> list[Started]:
    """Get the pending turns of several processes run by background workers (a batch).

    At most ``maxParallel`` workers start (the first process's ``params.maxParallel``,
    else ``BATCH_PARALLEL``); each runs its share of the processes one after the
    other, in order (docs/processes.md "Where turns run"). Processes that cannot
    start now (no LLM, closed, nothing waiting …) are left as ``start`` leaves them.

    Args:
        ws: workspace.
        process_ids: ids or unique prefixes, in order.

    Returns:
        One Started per process, in order (``background`` with its worker's pid).

    Raises:
        ProcessNotFound: an id names no process. OSError: a worker cannot be started.
    """
    processes = [load_process(ws, pid) for pid in process_ids]
    held = [_held(ws, p) for p in processes]
    ready = [p for p, why in zip(processes, held, strict=True) if why is None]
    width = _parallel(ready[0].params) if ready else 1
    pids: dict[str, tuple[int, Path]] = {}
    for lane in range(min(width, len(ready))):
        share = [p.id for p in ready[lane::width]]
        launched = _launch(ws, share[0], *share[1:])
        pids.update(dict.fromkeys(share, launched))
    out: list[Started] = []
    for process, why in zip(processes, held, strict=True):
        if why is not None:
            out.append(Started(process, why, worker_pid=process.worker_pid
                               if why == "running" else None))
        else:
            pid, log = pids[process.id]
            out.append(Started(load_process(ws, process.id), StartHow.BACKGROUND, worker_pid=pid,
                               log=log))
    return out


def _parallel(params: Mapping[str, Any]) -> int:
    value = params.get("maxParallel")
    if isinstance(value, int) and not isinstance(value, bool):
        return max(1, min(10, value))
    return BATCH_PARALLEL


def _held(ws: Workspace, process: Process) -> How | None:
    """Say why no turn of the process starts now, or None when one can."""
    engine = ws.engines.get(process.engine)
    if engine is None or (engine.run_turn is None and engine.run_process is None):
        return StartHow.NO_ENGINE
    if is_passive(process):
        return StartHow.PASSIVE
    if process.status in (Status.CLOSED, Status.RUNNING):  # RUNNING: its drive loop goes on
        return StartHow.CLOSED if process.status is Status.CLOSED else StartHow.RUNNING
    if not has_pending(ws, process.id):
        return StartHow.NOTHING_TO_DO
    if not ws.settings.llm_configured:
        return StartHow.WAITING_FOR_LLM
    return None


def wake_parent(ws: Workspace, child: Process) -> bool:
    """Start a turn of the child's parent when its engine acts on events (arthur).

    Nothing happens when the parent is a mailbox, is not waiting (a turn of
    its own will take the event), or no LLM is configured.

    Returns:
        True when a worker was started for the parent.
    """
    if child.parent_process_id is None or not ws.settings.llm_configured:
        return False
    parent = load_process(ws, child.parent_process_id)
    engine = ws.engines.get(parent.engine)
    if engine is None or not engine.wakes_on_events or is_passive(parent) or \
            parent.status not in (Status.IDLE, Status.BLOCKED):
        return False
    _launch(ws, parent.id)
    return True


def _launch(ws: Workspace, process_id: str, *more: str) -> tuple[int, Path]:
    """Start a worker for the processes' turns (``launcher.start_worker``), live output emptied.

    The worker needs a moment before its turn starts the stream file afresh;
    a follower in between must see nothing, not the previous turn's output.
    """
    for pid in (process_id, *more):
        path = stream_path(ws, pid)
        with suppress(OSError):  # costs the follower only, as StreamFile's writes
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")
    return start_worker(ws, process_id, *more)
