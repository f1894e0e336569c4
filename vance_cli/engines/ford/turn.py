"""ford: one concrete job — one streamed LLM call per turn, or a tool loop (docs/engines.md "ford").

A turn sends the system prompt (the engine's base prompt and the recipe's
prompt), the conversation so far and the new inputs (the task and steer, a
follow-up question), streams the answer to the listener, and settles
``IDLE``: the answer is the result, and a steer continues with the whole
history. A process whose params allow tools (``allowedTools``) runs the tool
loop instead (``Turn.use_tools``, docs/tools.md): the model calls tools,
each behind the gate, until it answers or ``maxIterations`` runs out. With
``toolApproval: checkpoint`` a call no one could approve settles the turn
``BLOCKED``; a steer ``yes`` (or ``no``) answers it and the loop goes on.
Recipe params: ``model``, ``temperature`` (default 0.7), ``maxTokens``
(default 4096), ``allowedTools`` (+Add/Remove), ``maxIterations`` (default 5),
``toolApproval``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vance_cli.engines import chat
from vance_cli.llm import DEFAULT_MAX_TOKENS
from vance_cli.processes.turn import Turn, TurnEnd, TurnOutcome

if TYPE_CHECKING:
    from vance_cli.processes.turn import LoopEnd

DEFAULT_TEMPERATURE = 0.7
"""Sampling temperature of a reply when the recipe sets none."""

PENDING = "pendingTool"
"""The state key of a call parked for approval (with the loop's conversation)."""


def run_turn(turn: Turn) -> TurnOutcome:
    """Answer the turn's inputs (see the module docstring).

    Raises:
        LLMError: the call failed. BudgetExceeded: a budget is spent.
        DocumentError: the base or recipe prompt cannot be used.
    """
    params = dict(turn.process.params)
    temperature = chat.number_param(params, "temperature", DEFAULT_TEMPERATURE)
    max_tokens = int(chat.number_param(params, "maxTokens", DEFAULT_MAX_TOKENS))
    state = turn.load_state()
    tools, problems = turn.tools() if params.get("allowedTools") or \
        params.get("allowedToolsAdd") else ([], [])
    notes: list[tuple[str, str]] = [("tools", p) for p in problems]
    if state.get(PENDING):
        end, loop_notes = turn.resume_tools(state[PENDING], tools, _answer(turn),
                                            temperature=temperature, max_tokens=max_tokens)
        turn.save_state({k: v for k, v in state.items() if k != PENDING})
        return _outcome(turn, end, notes + loop_notes, state)
    messages = [{"role": "system", "content": chat.system_prompt(turn, "ford")},
                *chat.as_chat(turn.history()), *chat.as_chat(turn.inputs)]
    if tools:
        end, loop_notes = turn.use_tools(messages, tools, temperature=temperature,
                                         max_tokens=max_tokens)
        return _outcome(turn, end, notes + loop_notes, state)
    answer = turn.complete(
        messages, purpose="reply", stream=True, temperature=temperature, max_tokens=max_tokens)
    if answer.finish_reason == "length":
        notes.append(("truncated", "the reply was cut off at the token limit (params.maxTokens)"))
    outcome = TurnOutcome.answered(answer)
    return TurnOutcome(outcome.settle, outcome.reply, notes=notes, model=outcome.model,
                       tokens_in=outcome.tokens_in, tokens_out=outcome.tokens_out)


def _answer(turn: Turn) -> str:
    """The person's answer to a parked call: the turn's last input's text."""
    said = [m.content for m in turn.inputs if m.role == "user"]
    return said[-1] if said else ""


def _outcome(turn: Turn, end: LoopEnd, notes: list[tuple[str, str]],
             state: dict[str, Any]) -> TurnOutcome:
    """The turn's outcome from how its loop ended (a parked call: ``BLOCKED``, state kept)."""
    last = end.completion
    if end.ended == "blocked" and end.pending is not None:
        turn.save_state({**state, PENDING: {"call": dict(end.pending),
                                            "messages": list(end.messages)}})
        reply = (f"Waiting for approval: the tool {end.pending['tool']} with"
                 f" {end.pending['arguments']}. Answer yes or no (vance process steer"
                 f" {turn.process.id} yes).")
        turn.sink.text(reply + "\n")
        return TurnOutcome(TurnEnd.BLOCKED, reply, notes=notes,
                           model=last.model if last else None)
    if last is not None and last.finish_reason == "length":
        notes.append(("truncated", "the reply was cut off at the token limit (params.maxTokens)"))
    return TurnOutcome(TurnEnd.IDLE, end.text, notes=notes, model=last.model if last else None,
                       tokens_in=last.prompt_tokens if last else None,
                       tokens_out=last.completion_tokens if last else None)
