"""The turn as an engine sees it: the one module of ``processes`` an engine imports.

It holds ``Turn`` (inputs, history, LLM calls within the budget, children),
``TurnOutcome``, the sinks, and re-exports what an engine's code names: ``Budget``,
``Message``, ``Process``, ``CloseReason``, ``TurnEnd``, ``ChildResult``.
Rule: docs/engines.md#writing-an-engine
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from vance_cli.base.errors import BudgetExceeded, CannotRun, LLMError
from vance_cli.base.records import frozen
from vance_cli.base.signals import WorkerTerminated
from vance_cli.base.wording import counted
from vance_cli.llm import DEFAULT_MAX_TOKENS, Completion, LLMConfig, complete, safe_endpoint
from vance_cli.processes import children, delegation
from vance_cli.processes.budget import Budget, over_ceiling
from vance_cli.processes.children import ChildResult, ChildTurn
from vance_cli.processes.inputs import Message
from vance_cli.processes.launcher import held, launch
from vance_cli.processes.lifecycle import close_process
from vance_cli.processes.model import CloseReason, Process, StartHow, TurnEnd
from vance_cli.processes.records import load_process
from vance_cli.state import conversation
from vance_cli.state import process_store as store

if TYPE_CHECKING:
    from vance_cli.processes.worker import Flight, Run
    from vance_cli.state.db import Database
    from vance_cli.tools.loop import LoopEnd
    from vance_cli.tools.tool import Tool
    from vance_cli.workspace import Workspace

__all__ = ["Budget", "ChildResult", "CloseReason", "LoopEnd", "Message", "NullSink", "Process",
           "Tool", "Turn", "TurnEnd", "TurnOutcome", "TurnSink", "TurnStopped", "over_ceiling",
           "stop_text"]


class TurnSink(Protocol):
    """Where a running turn's live output goes (the terminal, a stream file, nowhere)."""

    def text(self, piece: str) -> None:
        """Receive the next piece of a streamed reply."""

    def status(self, line: str) -> None:
        """Receive a progress line (a phase started, a head answered …)."""


class NullSink:
    """A sink that drops everything (background turns without a listener)."""

    yes_tools: tuple[str, ...] = ()
    """Tools the command allows without asking (``--yes-tools`` of ``process run --json``)."""

    def text(self, piece: str) -> None:
        """Drop the piece."""

    def status(self, line: str) -> None:
        """Drop the line."""


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

    settle: TurnEnd = TurnEnd.IDLE
    reply: str | None = None
    outcome: Mapping[str, Any] | None = None
    notes: Sequence[tuple[str, str]] = ()
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None

    @classmethod
    def answered(cls, completion: Completion, settle: TurnEnd = TurnEnd.IDLE,
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

    ``runner`` runs a child's turn inline (the runtime's); without one the turn
    runs no children.
    """

    def __init__(self, ws: Workspace, process: Process, number: int,
                 inputs: Sequence[Message], sink: TurnSink, budget: Budget,
                 run: Run | None = None, *, runner: ChildTurn | None = None) -> None:
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
        self._runner = runner
        self._started = time.monotonic()
        self._calls = 0
        self._unstored: list[dict[str, Any]] = []
        """LLM calls recorded since the turn's last write (``storing``)."""
        self._kept: dict[str, Any] | None = None
        """Engine state to store with the turn's next write (``keep_state``)."""
        self._tokens = 0
        """LLM tokens (in and out) of the calls this turn recorded."""
        self._tokens_before: int | None = None
        """LLM tokens of the process's earlier turns, read once when first needed."""
        self._landing: int | None = None
        """Which of ``_unstored`` the heartbeat stored as under way (``_take_off``), or None."""

    def load_state(self) -> dict[str, Any]:
        """Return the engine's state of the process as the turn started (a copy; {} when none)."""
        copy: dict[str, Any] = json.loads(json.dumps(dict(self.process.state or {})))
        return copy

    def save_state(self, state: Mapping[str, Any]) -> None:
        """Store the engine's state now (it outlives the turn, also a failed one)."""
        self.keep_state(state)
        with self.storing():
            pass

    def keep_state(self, state: Mapping[str, Any]) -> None:
        """Store the engine's state (as it is now) with the turn's next write.

        That write is the next child's creation (``spawn``), the next call's
        check, a ``save_state`` or the transaction that ends the turn, failed
        or not; only a worker killed before it loses the state.
        """
        self._kept = json.loads(json.dumps(dict(state)))

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
        db, calls, kept, landing = (self.ws.db, list(self._unstored), self._kept,
                                    self._landing)
        with db.transaction():
            for index, call in enumerate(calls):
                # a call stored as under way lands; gone: stale detection stored it, cut off
                if index == landing and not conversation.land_call(db, self.process.id,
                                                                   self.number):
                    continue
                conversation.add_llm_call(db, self.process.id, self.number, **call)
            if kept is not None:
                store.set_state(db, self.process.id, kept)
            yield db
        del self._unstored[:len(calls)]
        if landing is not None:
            self._landing = landing - len(calls) if landing >= len(calls) else None
        if self._kept is kept:
            self._kept = None

    def history(self) -> list[Message]:
        """Return the consumed inputs and the replies of earlier turns, oldest first.

        A first turn has none: messages get a turn's number when it settles.
        """
        if self.number == 1:
            return []
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

    def complete(self, messages: Sequence[Mapping[str, Any]], *, purpose: str = "reply",
                 stream: bool = False, schema: Mapping[str, Any] | None = None,
                 temperature: float | None = 0.0, max_tokens: int = DEFAULT_MAX_TOKENS,
                 model: str | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None) -> Completion:
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
            tools: tool definitions (OpenAI tools API); the calls the model asks for are
                the completion's ``tool_calls`` (``use_tools`` runs them).

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
        flight = self._take_off(purpose, config)

        def on_text(piece: str) -> None:
            nonlocal pieces
            pieces += 1
            if flight is not None:
                flight.chunks = pieces
            self.partial += piece
            self.sink.text(piece)
            self.check()  # a stream that keeps coming must still end with the turn's seconds

        try:
            answer = complete(config, messages, schema, max_tokens, temperature=temperature,
                              on_text=on_text if stream else None, deadline=self.deadline,
                              tools=tools)
        except LLMError as exc:
            self._record(purpose, config, None, exc.message, flown=flight)
            if exc.timeout:
                self.check()  # cut short by the turn's seconds: say so, not "timed out"
            raise
        except (BudgetExceeded, TurnStopped) as exc:  # from on_text: the stream was cut
            self._record(purpose, config, None, str(exc), pieces, flown=flight)
            raise
        except BaseException as exc:  # Ctrl-C, SIGTERM: the call is recorded with what came
            self._record(purpose, config, None, stop_text(exc), pieces, flown=flight)
            raise
        self._record(purpose, config, answer, None, flown=flight)
        if answer.truncated:
            self.truncated = answer.truncated
        return answer

    def tools(self) -> tuple[list[Tool], list[str]]:
        """Return the tools the process may call (its params) and why any named one is missing."""
        from vance_cli.processes import tool_use  # deferred: loads with a turn that has tools

        return tool_use.resolve(self.ws, tool_use.tool_names(self.process.params))

    def use_tools(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Tool], *,
                  stream: bool = True, temperature: float | None = 0.0,
                  max_tokens: int = DEFAULT_MAX_TOKENS,
                  answer_schema: Mapping[str, Any] | None = None
                  ) -> tuple[LoopEnd, list[tuple[str, str]]]:
        """Run the tool loop from ``messages`` (docs/tools.md#the-loop); each call is stored.

        ``answer_schema``: the JSON schema of the answer, sent with the tools (arthur's
        action); None: a free-text answer, streamed to the sink when ``stream``.

        Returns:
            How the loop ended, and the turn's notes about it (how it ended, refused asks).

        Raises:
            As ``complete``.
        """
        from vance_cli.processes import tool_use  # deferred: as in ``tools``

        loop, gate = tool_use.make_loop(self, tools, stream=stream, temperature=temperature,
                                        max_tokens=max_tokens, answer_schema=answer_schema)
        end = loop.run(messages)
        return end, tool_use.loop_notes(end, loop, gate)

    def resume_tools(self, parked: Mapping[str, Any], tools: Sequence[Tool], answer: str, *,
                     stream: bool = True, temperature: float | None = 0.0,
                     max_tokens: int = DEFAULT_MAX_TOKENS
                     ) -> tuple[LoopEnd, list[tuple[str, str]]]:
        """Go on with a tool loop parked for approval; ``answer`` (yes / no) decides the call.

        Args:
            parked: what the engine kept of the parked loop: ``call`` (``LoopEnd.pending``)
                and ``messages``.
            tools: the process's tools.
            answer: the person's answer (``yes``, ``y``, ``approve``: the call runs).
            stream: stream the replies' text to the sink.
            temperature: sampling temperature.
            max_tokens: cap on each reply.

        Raises:
            As ``complete``.
        """
        from vance_cli.processes import tool_use  # deferred: as in ``tools``

        loop, gate = tool_use.make_loop(self, tools, stream=stream, temperature=temperature,
                                        max_tokens=max_tokens)
        call = dict(parked.get("call") or {})
        loop.mode = str(call.get("mode") or "native")
        end = loop.resume(list(parked.get("messages") or ()), call,
                          tool_use.approves(answer))
        return end, tool_use.loop_notes(end, loop, gate)

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
        if self._tokens_before is None:  # a first turn has no earlier calls
            if self.number == 1:
                self._tokens_before = 0
            else:
                totals = conversation.llm_totals(self.ws.db, self.process.id, before=self.number)
                self._tokens_before = int(totals[1]) + int(totals[2])
        used = self._tokens_before + self._tokens
        if used >= self.budget.tokens:
            raise BudgetExceeded(f"the process used {used} LLM tokens: budget of"
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
        self._tokens += (tokens_in or 0) + (tokens_out or 0)
        self._unstored.append({"purpose": purpose, "model": model, "endpoint": endpoint,
                               "tokens_in": tokens_in, "tokens_out": tokens_out,
                               "latency_ms": latency_ms, "finish_reason": finish_reason,
                               "error": error, "attempt": self.process.takeovers + 1})

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

    def _take_off(self, purpose: str, config: LLMConfig) -> Flight | None:
        """Have the heartbeat store the call while it runs, for stale detection if the worker dies.

        Returns:
            What the turn counts the chunks in (None: a turn without a worker).
        """
        if self._run is None:
            return None
        return self._run.fly(self.number, purpose, config.model,
                             safe_endpoint(config.base_url))

    def _record(self, purpose: str, config: LLMConfig, answer: Completion | None,
                error: str | None, partial: int | None = None, *,
                flown: Flight | None = None) -> None:
        """Record a call; one cut short counts the text chunks it got as its tokens out.

        ``flown``: the call the heartbeat stored while it ran (``_take_off``); it lands.
        """
        if flown is not None and self._run is not None and self._run.land():
            self._landing = len(self._unstored)  # its row goes when the call is stored
        self.record_call(purpose, model=answer.model if answer else config.model,
                         endpoint=safe_endpoint(config.base_url),
                         tokens_in=answer.prompt_tokens if answer else None,
                         tokens_out=answer.completion_tokens if answer else partial or None,
                         latency_ms=answer.latency_ms if answer else None,
                         finish_reason=answer.finish_reason if answer else None, error=error)

    def spawn(self, recipe: str, goal: str, label: str, *, prompt: str | None = None,
              title: str = "", params: Mapping[str, Any] | None = None,
              state: Callable[[Process], Mapping[str, Any]] | None = None) -> Process:
        """Create a child of this turn's process, ``IDLE`` with its goal pending.

        The creation also stores this process's state: ``state(child)`` when
        given, else what ``keep_state`` kept, in one transaction.

        Args:
            recipe: the child's recipe.
            goal: its task.
            label: the phase, head or task it works for (part of its name).
            prompt: instructions that replace the recipe's prompt, or None.
            title: its title ("" → the recipe's).
            params: its params, overlaid on the recipe's (the parent's model goes on).
            state: given the child, returns this process's state to store with it.

        Raises:
            UnknownRecipe, InputError, UnknownEngine: the child cannot be created.
            CannotRun: it would nest orchestrators too deep, or run its own ancestry again.
        """
        def also(db: Database, child: Process) -> None:
            chosen = state(child) if state is not None else self._kept
            if chosen is not None:
                store.set_state(db, self.process.id, chosen)

        child = children.spawn(self, recipe, goal, label, prompt=prompt, title=title,
                               params=params, also=also)
        self._kept = None
        return child

    def run_child(self, child: Process, *, keep_open: bool = False,
                  steer: str | None = None) -> ChildResult:
        """Run one turn of a child here, its output to this turn's sink (``children.run``).

        Returns:
            The ChildResult; a failure is its ``error``, never an exception.
        """
        return children.run(self.ws, child, self.sink, self._child_turn(), keep_open=keep_open,
                            steer=steer)

    def run_side_by_side(self, jobs: Sequence[tuple[Process, str | None]], max_parallel: int,
                         *, keep_open: bool = False) -> list[ChildResult]:
        """Run one turn of each ``(child, steer or None)`` job in threads, in order.

        Returns:
            One ChildResult per job, in order.

        Raises:
            As ``check``, while they run (the children are closed ``STOPPED`` first).
        """
        return children.run_side_by_side(self.ws, jobs, self.sink, max_parallel,
                                         self._child_turn(), check=self.check,
                                         keep_open=keep_open)

    def stop_children(self, kids: Sequence[Process]) -> None:
        """Close children still open ``STOPPED`` (``children.stop``)."""
        children.stop(self.ws, kids)

    def close_children(self, kids: Sequence[Process]) -> None:
        """Close children left open (a debate's heads) ``DONE``; the parent is not told."""
        children.close_open(self.ws, kids)

    def close_child(self, child: Process, reason: CloseReason, why: str) -> None:
        """Close a child that must not run, ``why`` its outcome's reason (the parent is told)."""
        close_process(self.ws, child.id, reason, {"reason": why})

    def child_name(self, label: str) -> str:
        """Return a fresh name for a child of this turn's process (``children.child_name``)."""
        return children.child_name(self.process, label)

    def start_child(self, child: Process) -> StartHow:
        """Get a process this turn delegated run by a background worker (as ``start.start``).

        Raises:
            OSError: the worker cannot be started.
        """
        why = held(self.ws, load_process(self.ws, child.id))
        if why is not None:
            return why
        launch(self.ws, child.id)  # a worker, or a team's job
        return StartHow.BACKGROUND

    def refusal(self, started: int) -> str | None:
        """Say why this turn may not start one more process (``delegation.refusal``), or None.

        Args:
            started: processes this turn started already.
        """
        return delegation.refusal(self.ws, self.process, started)

    def stored_calls(self, process_id: str | None = None) -> int:
        """Return the stored LLM calls of this turn, or of all turns of ``process_id``."""
        if process_id is None:
            return int(conversation.llm_totals(self.ws.db, self.process.id, self.number)[0])
        return int(conversation.llm_totals(self.ws.db, process_id)[0])

    def _child_turn(self) -> ChildTurn:
        if self._runner is None:
            raise CannotRun(f"turn {self.number} of process {self.process.id} runs no children",
                            process=self.process.id)
        return self._runner


class TurnStopped(Exception):
    """The process was stopped or closed by someone else while its turn ran."""


def stop_text(exc: BaseException) -> str:
    """Say how a turn was stopped from outside its code: Ctrl-C, SIGTERM or an exit."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    if isinstance(exc, WorkerTerminated):
        return "stopped: the worker received SIGTERM"
    return f"stopped: {type(exc).__name__}"
