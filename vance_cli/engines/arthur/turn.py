"""arthur: the conversational lead — talks, delegates, asks (docs/engines.md "arthur").

A turn sends the system prompt (the engine's base prompt, the recipe's
prompt and the recipes a worker can run), the conversation and the new
inputs — a person's message, or a ``<process-event>`` with a child's result —
and asks for one structured action (JSON schema mode where the endpoint has
it; the reply is read tolerantly either way, ``base.replies``):

- ``answer``: the message is the reply; the process settles ``IDLE``;
- ``ask``: the message is a question to the person; it settles ``BLOCKED``;
- ``delegate``: the task goes through process_create_delegate with this
  process as the caller — the selector, and Slartibartfast when nothing fits
  — and the child's turns run in a background worker; arthur never waits
  for it. The child's result comes back as an event, and arthur's next turn
  (started by the event) reports it.

A reply may hold a list of actions (``{"actions": [...]}``), at most
``maxActions`` (default 3); more are dropped with a note. A reply without
any JSON object is taken as an answer. A recipe that allows tools
(``allowedTools``) gets the tool loop before its action (``Turn.use_tools``, with
the action's schema as the answer's): arthur reads and looks things up itself,
behind the same gate, and still answers with one action. The conversation is cut to
``maxContextTokens`` (default 64,000, estimated), oldest messages first,
with a note to the model that earlier messages were cut.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vance_cli.base import replies
from vance_cli.base.records import frozen
from vance_cli.base.wording import shorten
from vance_cli.delegate.flow import delegate
from vance_cli.delegate.request import DelegateRequest
from vance_cli.engines import chat
from vance_cli.engines.slartibartfast.fallback import Fallback
from vance_cli.processes.turn import Turn, TurnEnd, TurnOutcome
from vance_cli.recipes.loader import load_recipes
from vance_cli.selector.decision import Mode

ACTIONS = ("answer", "delegate", "ask")
"""The actions arthur can take."""

ACTION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "message": {"type": "string"},
        "task": {"type": "string"},
        "options": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["action", "message", "task", "options"],
    "additionalProperties": False,
}
"""The reply's JSON schema (every key required: strict structured output wants it)."""

MAX_ACTIONS = 3
"""Actions one turn takes at most, when the recipe sets no ``maxActions``."""

MAX_CONTEXT_TOKENS = 64_000
"""Tokens of conversation sent, estimated, when the recipe sets no ``maxContextTokens``."""

MAX_LISTED_RECIPES = 30
"""Recipes named in the system prompt (the selector sees them all when arthur delegates)."""


@frozen
class Action:
    """One action of arthur's reply.

    Attributes:
        kind: ``answer``, ``delegate`` or ``ask``.
        message: what the person reads.
        task: the worker's task (``delegate``).
        options: suggested answers (``ask``).
    """

    kind: str
    message: str
    task: str = ""
    options: tuple[str, ...] = ()


def read_actions(text: str, limit: int) -> tuple[list[Action], list[str]]:
    """Read the actions of a reply, at most ``limit``; a reply without JSON is an answer.

    Returns:
        ``(actions, notes)``: notes say what was dropped or not understood.
    """
    found = replies.find_object(text)
    if found is None:
        plain = replies.without_thinking(text).strip()
        return [Action("answer", plain)], []
    listed = found.get("actions")
    raw: list[Any] = listed if isinstance(listed, list) else [found]
    actions, notes = [], []
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        kind = str(item.get("action", "")).strip().lower()
        message = str(item.get("message") or "").strip()
        if kind not in ACTIONS:
            notes.append(f"an action '{kind or '?'}' was not understood; taken as an answer")
            kind = "answer"
        options = item.get("options")
        actions.append(Action(kind, message, str(item.get("task") or "").strip(),
                              tuple(str(o) for o in options) if isinstance(options, list)
                              else ()))
    if len(actions) > limit:
        notes.append(f"{len(actions) - limit} more action(s) dropped: at most {limit} a turn")
        actions = actions[:limit]
    return actions or [Action("answer", "")], notes


def _recipes_text(turn: Turn) -> str:
    inventory = load_recipes(turn.ws).inventory(turn.ws.catalog().names)[:MAX_LISTED_RECIPES]
    lines = [f"- {r.name}: {r.description}" for r in inventory]
    return "Workers can run these recipes (the selector picks one for each task):\n" + \
        "\n".join(lines)


def _delegate(turn: Turn, action: Action, started: int) -> tuple[str, str]:
    """Start a worker for the action's task; return a note and ``started``, ``none`` or ``refused``.

    The selector's LLM call is one of the turn's: it needs a call left, and is recorded.
    A delegation over a limit (``processes.delegation``) starts nothing: the note says why.
    """
    task = action.task or action.message
    refused = turn.refusal(started)
    if refused is not None:
        return f"the task '{shorten(task, 80)}' was not delegated: {refused}", "refused"
    turn.check_call()
    result = delegate(turn.ws, DelegateRequest(task=task, caller=turn.process.id),
                      fallback=Fallback())
    decision = result.decision
    if decision.mode is Mode.LLM:
        trace = decision.trace
        turn.record_call("select", model=trace.model, endpoint=trace.endpoint,
                         tokens_in=trace.prompt_tokens, tokens_out=trace.completion_tokens,
                         latency_ms=trace.latency_ms, finish_reason=trace.finish_reason,
                         error=None if trace.raw_reply is not None else decision.rationale)
    child = result.process
    if child is None:
        return (f"nothing was started for '{shorten(task, 80)}': {result.decision.rationale}",
                "none")
    how = turn.start_child(child)
    return (f"started process {child.id} ({child.recipe}, engine {child.engine}) for the"
            f" task; its turns run {how.replace('_', ' ')}", "started")


def run_turn(turn: Turn) -> TurnOutcome:
    """Take one action step (see the module docstring).

    Raises:
        LLMError: the call failed. BudgetExceeded: a budget is spent.
        DocumentError: the base or recipe prompt cannot be used.
    """
    params = dict(turn.process.params)
    limit = max(1, int(chat.number_param(params, "maxActions", MAX_ACTIONS)))
    cap = int(chat.number_param(params, "maxContextTokens", MAX_CONTEXT_TOKENS))
    conversation, dropped = chat.within_tokens(
        [*chat.as_chat(turn.history()), *chat.as_chat(turn.inputs)], cap)
    notes: list[tuple[str, str]] = []
    if dropped:
        note = f"{dropped} earlier message(s) were cut to fit {cap} tokens"
        conversation.insert(0, {"role": "user", "content": f"[vance: {note}]"})
        notes.append(("context_cut", note))
    system = chat.system_prompt(turn, "arthur", _recipes_text(turn))
    messages = [{"role": "system", "content": system}, *conversation]
    tools, missing = turn.tools() if params.get("allowedTools") or \
        params.get("allowedToolsAdd") else ([], [])
    notes += [("tools", m) for m in missing]
    if tools:  # its own tools first; the answer is still one action (docs/tools.md)
        end, loop_notes = turn.use_tools(messages, tools, stream=False, temperature=0.3,
                                         answer_schema=ACTION_SCHEMA)
        notes += loop_notes
        text, answer = end.text, end.completion
    else:
        answer = turn.complete(messages, purpose="action", schema=ACTION_SCHEMA,
                               temperature=0.3)
        text = answer.text
    actions, problems = read_actions(text, limit)
    notes += [("action", p) for p in problems]
    settle: TurnEnd = TurnEnd.IDLE
    said: list[str] = []
    started = 0
    for action in actions:
        if action.kind == "delegate":
            note, what = _delegate(turn, action, started)
            started += what == "started"
            notes.append(("refused" if what == "refused" else "delegated", note))
            if what == "refused":  # the model reads its reply next turn, the person now
                said.append(f"[vance: {note}]")
        if action.kind == "ask":
            settle = TurnEnd.BLOCKED
        text = action.message
        if action.kind == "ask" and action.options:
            text += "\n" + "\n".join(f"- {option}" for option in action.options)
        if text:
            said.append(text)
    reply = "\n\n".join(said)
    if reply:
        turn.sink.text(reply + "\n")
    return TurnOutcome(settle=settle, reply=reply, notes=notes,
                       model=answer.model if answer else None,
                       tokens_in=answer.prompt_tokens if answer else None,
                       tokens_out=answer.completion_tokens if answer else None)

