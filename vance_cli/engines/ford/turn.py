"""ford: one concrete job — one streamed LLM call per turn (docs/engines.md "ford").

A turn sends the system prompt (the engine's base prompt and the recipe's
prompt), the conversation so far and the new inputs (the task and steer, a
follow-up question), streams the answer to the listener, and settles
``IDLE``: the answer is the result, and a steer continues with the whole
history. The local ford has no tools: it cannot browse, open files or run
code, and its base prompt says so. Recipe params: ``model``,
``temperature`` (default 0.7), ``maxTokens`` (default 4096).
"""

from __future__ import annotations

from vance_cli.engines import chat
from vance_cli.llm import DEFAULT_MAX_TOKENS
from vance_cli.processes.turn import Turn, TurnOutcome

DEFAULT_TEMPERATURE = 0.7
"""Sampling temperature of a reply when the recipe sets none."""


def run_turn(turn: Turn) -> TurnOutcome:
    """Answer the turn's inputs in one streamed call (see the module docstring).

    Raises:
        LLMError: the call failed. BudgetExceeded: a budget is spent.
        DocumentError: the base or recipe prompt cannot be used.
    """
    params = dict(turn.process.params)
    messages = [{"role": "system", "content": chat.system_prompt(turn, "ford")},
                *chat.as_chat(turn.history()), *chat.as_chat(turn.inputs)]
    answer = turn.complete(
        messages, purpose="reply", stream=True,
        temperature=chat.number_param(params, "temperature", DEFAULT_TEMPERATURE),
        max_tokens=int(chat.number_param(params, "maxTokens", DEFAULT_MAX_TOKENS)))
    notes = [("truncated", "the reply was cut off at the token limit (params.maxTokens)")] \
        if answer.finish_reason == "length" else []
    outcome = TurnOutcome.answered(answer)
    return TurnOutcome(outcome.settle, outcome.reply, notes=notes, model=outcome.model,
                       tokens_in=outcome.tokens_in, tokens_out=outcome.tokens_out)

