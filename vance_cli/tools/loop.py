"""The tool loop: call the model with tools, run the calls it asks for, call again.

Rules (docs/tools.md#the-loop):
- Native tool calling first: each call sends the tool definitions (OpenAI
  tools API); every call of the reply passes the gate, runs, and its result
  goes back as a ``tool`` message; then the model is called again.
- The loop ends when the model answers (a reply without tool calls), or
  after ``max_iterations`` calls that asked for tools: one closing call
  without tools then asks for the answer from what the tools returned.
  ``LoopEnd.ended`` says which (``answered``, ``max_iterations``), or
  ``blocked`` when the gate parks a call for approval.
- A server that refuses ``tools`` (``LLMError`` reason ``tools_refused``), or a
  model that writes a call as text instead of calling (``{"name": "run_python",
  "arguments": …}`` in its reply: the server has no tool calling for it), is
  asked for one JSON action per call instead, on the structured-output path:
  ``{"action": "tool", "tool": …, "arguments": {…}}`` or
  ``{"action": "answer", "text": …}``.
- A result is cut at ``result_limit`` characters with a marker; the model and
  the transcript see the same text. A tool's name on the wire has ``.``
  replaced by ``__`` (OpenAI function names take no dots: ``srv.echo`` is
  ``srv__echo``), and is mapped back.
- Nothing here raises for a bad call: an unknown tool, arguments that are not
  JSON, a refusal, a failing tool all become results the model reads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, Protocol

from vance_cli.base import replies
from vance_cli.base.errors import LLMError
from vance_cli.base.records import frozen
from vance_cli.llm import Completion, ToolCall
from vance_cli.tools.tool import Tool, ToolContext, ToolResult

RESULT_LIMIT = 12_000
"""Characters of one result the model reads and the transcript keeps."""

CUT_MARK = "\n[… {more} more characters cut: the result is longer than {limit}]"
"""Appended to a result cut at the limit."""

WIRE_DOT = "__"
"""What a ``.`` in a tool's name becomes on the wire."""

ACTION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["tool", "answer"]},
        "tool": {"type": "string"},
        "arguments": {"type": "object"},
        "text": {"type": "string"},
    },
    "required": ["action"],
}
"""One JSON action, for servers without tool calling."""


def wire_name(name: str) -> str:
    """Return a tool's name as the OpenAI tools API takes it (no dots)."""
    return name.replace(".", WIRE_DOT)


@frozen
class Verdict:
    """The gate's answer for one call, as the loop uses it.

    Attributes:
        allowed: the call runs.
        how: ``allow``, ``deny``, ``ask:yes``, ``ask:always``, ``ask:no``, ``refused``
            (ask without a person), ``granted``, ``checkpoint`` …
        why: the reason; a refusal's is the text the model reads as the call's result.
        block: park the call and end the loop (``toolApproval: checkpoint``).
    """

    allowed: bool
    how: str
    why: str = ""
    block: bool = False


@frozen
class CallRecord:
    """One tool call as the transcript stores it.

    Attributes:
        tool: the tool's name (``srv.echo`` for an MCP tool).
        arguments: the arguments as the model sent them (``{"raw": …}`` when not JSON).
        result: what the model read (cut at the limit, with the marker).
        ok: the tool ran and succeeded.
        allowed: the gate let it run.
        how: the gate's verdict (``Verdict.how``).
        seconds: the time the call took, the gate's question included.
        cut: the result was cut at the limit.
        details: the tool's facts for the transcript (``sandbox`` …).
    """

    tool: str
    arguments: Mapping[str, Any]
    result: str
    ok: bool
    allowed: bool
    how: str
    seconds: float
    cut: bool = False
    details: Mapping[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        """Return the call as one line (``follow``, the shell)."""
        args = json.dumps(dict(self.arguments), ensure_ascii=False)
        if len(args) > 80:
            args = args[:79] + "…"
        if not self.allowed:
            end = f"{self.how}: {self.result}"
        else:
            end = f"{'ok' if self.ok else 'failed'}, {len(self.result)} chars"
        end = end if len(end) <= 100 else end[:99] + "…"
        return f"tool {self.tool} {args} → {end} ({self.seconds * 1000:.0f} ms)"


class Model(Protocol):
    """One LLM call of the loop (the turn's, within its budget)."""

    def __call__(self, messages: Sequence[Mapping[str, Any]], *,
                 tools: Sequence[Mapping[str, Any]] | None = None,
                 schema: Mapping[str, Any] | None = None) -> Completion:
        """Call the model; ``tools`` (native) or ``schema`` (JSON actions) or neither."""


Gate = Callable[[Tool, Mapping[str, Any]], Verdict]
"""Decides one call: takes the tool and its parsed arguments."""

OnCall = Callable[[CallRecord], None]
"""Receives each call once it ended (stored, shown)."""


@frozen
class LoopEnd:
    """How a loop ended.

    Attributes:
        text: the answer ("" when the model gave none).
        ended: ``answered``, ``max_iterations`` or ``blocked``.
        completion: the last completion (None when none was made).
        calls: every tool call, in order.
        rounds: the model calls that asked for tools.
        mode: ``native`` or ``json`` (JSON actions).
        pending: the parked call when ``blocked`` (``{"tool", "arguments", "id"}``).
        messages: the conversation as it stood at the end.
    """

    text: str
    ended: str
    completion: Completion | None
    calls: tuple[CallRecord, ...]
    rounds: int
    mode: str
    pending: Mapping[str, Any] | None = None
    messages: tuple[Mapping[str, Any], ...] = ()


class ToolLoop:
    """Runs one turn's tool loop (see the module rules).

    Args:
        tools: the tools the process may call.
        model: the LLM call.
        gate: decides each call.
        context: what a call may use.
        max_iterations: model calls that may ask for tools.
        on_call: receives each ended call.
        result_limit: characters of a result kept.
        mode: ``native`` (tool calling), or ``json`` (JSON actions from the start).
        auto: step down from ``native`` to ``json`` (a refusal, a call as text); False
            keeps native (``tools.calling: native``).
        answer_schema: the JSON schema of the answer (arthur's action), sent with the tools
            (native); None: the answer is free text.
    """

    def __init__(self, tools: Sequence[Tool], model: Model, gate: Gate, context: ToolContext,
                 max_iterations: int, on_call: OnCall | None = None,
                 result_limit: int = RESULT_LIMIT, mode: str = "native",
                 answer_schema: Mapping[str, Any] | None = None, auto: bool = True) -> None:
        self.tools = {wire_name(t.name): t for t in tools}
        self.model = model
        self.gate = gate
        self.context = context
        self.max_iterations = max(1, max_iterations)
        self.on_call = on_call
        self.result_limit = result_limit
        self.mode = mode
        self.answer_schema = answer_schema
        self.auto = auto
        self._calls: list[CallRecord] = []
        self._helped = False

    def run(self, messages: Sequence[Mapping[str, Any]]) -> LoopEnd:
        """Run the loop from ``messages`` (system prompt first) to its end.

        Raises:
            LLMError: a call failed (not a refusal of ``tools``). BudgetExceeded,
                TurnStopped: the turn's own limits, raised by ``model``.
        """
        chat = [dict(m) for m in messages]
        rounds = 0
        last: Completion | None = None
        while rounds < self.max_iterations:
            step = self._native(chat) if self.mode == "native" else self._json(chat)
            last, asked, blocked = step
            if blocked is not None:
                return self._end("", "blocked", last, rounds + 1, chat, blocked)
            if not asked:
                return self._end(self._answer_text(last), "answered", last, rounds, chat)
            rounds += 1
        chat.append({"role": "user", "content": (
            f"[vance: the tool calls are spent ({self.max_iterations}, maxIterations). Answer"
            " now from what the tools returned; call no more tools.]")})
        last = self.model(chat, schema=self.answer_schema)
        return self._end(self._answer_text(last), "max_iterations", last, rounds, chat)

    # -- native tool calling -------------------------------------------------
    def _native(self, chat: list[dict[str, Any]]
                ) -> tuple[Completion, bool, Mapping[str, Any] | None]:
        try:
            answer = self.model(chat, tools=[self._definition(t) for t in self.tools.values()],
                                schema=self.answer_schema)
        except LLMError as exc:
            if exc.details.get("reason") != "tools_refused" or not self.auto:
                raise
            self.mode = "json"
            return self._json(chat)
        if not answer.tool_calls:
            if self.auto and self._names_a_tool(answer.text):  # a call as text: no tool calling
                self.mode = "json"
                return self._json(chat)
            return answer, False, None
        chat.append({"role": "assistant", "content": answer.text or None,
                     "tool_calls": [{"id": c.id, "type": "function",
                                     "function": {"name": c.name, "arguments": c.arguments}}
                                    for c in answer.tool_calls]})
        for call in answer.tool_calls:
            record, blocked = self._call(call)
            if blocked is not None:
                chat.append({"role": "tool", "tool_call_id": call.id,
                             "content": "waiting for the person's approval"})
                return answer, True, blocked
            chat.append({"role": "tool", "tool_call_id": call.id, "content": record.result})
        return answer, True, None

    def _names_a_tool(self, text: str) -> bool:
        """True when a reply's text holds a tool call as JSON (``{"name": tool, …}``)."""
        found = replies.find_object(text)
        if found is None:
            return False
        function = found.get("function")
        name = found.get("name") or found.get("tool") or (
            function.get("name") if isinstance(function, Mapping) else None)
        return isinstance(name, str) and wire_name(name) in self.tools

    @staticmethod
    def _definition(tool: Tool) -> dict[str, Any]:
        definition = tool.definition()
        definition["function"]["name"] = wire_name(tool.name)
        return definition

    # -- JSON actions ----------------------------------------------------------
    def _json(self, chat: list[dict[str, Any]]
              ) -> tuple[Completion, bool, Mapping[str, Any] | None]:
        if not self._helped:
            self._helped = True
            if chat and chat[0].get("role") == "system":
                chat[0] = {**chat[0], "content": f"{chat[0]['content']}\n\n{self._json_help()}"}
            else:
                chat.insert(0, {"role": "system", "content": self._json_help()})
        answer = self.model(chat, schema=ACTION_SCHEMA)
        found = replies.find_object(answer.text)
        if found is None or str(found.get("action", "")).lower() != "tool":
            return answer, False, None
        name = str(found.get("tool") or "")
        arguments = found.get("arguments")
        call = ToolCall(id=f"json_{len(self._calls)}", name=wire_name(name),
                        arguments=json.dumps(arguments if isinstance(arguments, Mapping)
                                             else {}))
        chat.append({"role": "assistant", "content": answer.text})
        record, blocked = self._call(call)
        if blocked is not None:
            return answer, True, blocked
        chat.append({"role": "user", "content": f"Result of {name}:\n{record.result}"})
        return answer, True, None

    def _json_help(self) -> str:
        lines = ["You can use tools. When the task needs one (to compute, read a file, fetch a"
                 " page), call it first and answer from its result; do not guess what a tool"
                 " would return. Reply with exactly one JSON object and nothing else:",
                 '{"action": "tool", "tool": NAME, "arguments": {...}} to call a tool (its'
                 " result comes back in the next message), or",
                 '{"action": "answer", "text": YOUR ANSWER} when you can answer.', "Tools:"]
        for tool in self.tools.values():
            lines.append(f"- {tool.name}: {tool.description} Arguments (JSON schema):"
                         f" {json.dumps(dict(tool.parameters), ensure_ascii=False)}")
        return "\n".join(lines)

    def _answer_text(self, answer: Completion) -> str:
        if self.mode != "json":
            return answer.text
        found = replies.find_object(answer.text)
        if found is not None and str(found.get("action", "")).lower() == "answer":
            text = found.get("text")
            return text if isinstance(text, str) else json.dumps(text)
        return answer.text

    # -- one call --------------------------------------------------------------
    def _call(self, call: ToolCall) -> tuple[CallRecord, Mapping[str, Any] | None]:
        """Gate and run one call; return its record, and the parked call when it blocks."""
        started = time.monotonic()
        tool = self.tools.get(call.name) or self.tools.get(wire_name(call.name))
        name = tool.name if tool is not None else call.name.replace(WIRE_DOT, ".")
        try:
            parsed = json.loads(call.arguments) if call.arguments.strip() else {}
        except ValueError as exc:
            parsed = exc
        arguments: Mapping[str, Any] = parsed if isinstance(parsed, Mapping) else \
            {"raw": call.arguments}
        if tool is None:
            known = ", ".join(t.name for t in self.tools.values()) or "none"
            return self._record(name, arguments, ToolResult.failed(
                f"there is no tool named '{name}'; the tools are: {known}"),
                False, "unknown", started), None
        if not isinstance(parsed, Mapping):
            return self._record(name, arguments, ToolResult.failed(
                f"the arguments are not a JSON object ({parsed}); send an object that"
                f" follows the tool's schema"), False, "invalid", started), None
        verdict = self.gate(tool, arguments)
        if verdict.block:
            record = self._record(name, arguments, ToolResult.failed(
                f"waiting for approval: {verdict.why}"), False, verdict.how, started)
            return record, {"tool": name, "arguments": dict(arguments), "id": call.id,
                            "mode": self.mode}
        if not verdict.allowed:
            return self._record(name, arguments, ToolResult.failed(verdict.why), False,
                                verdict.how, started), None
        return self._record(name, arguments, self._run(tool, arguments), True, verdict.how,
                            started), None

    def _run(self, tool: Tool, arguments: Mapping[str, Any]) -> ToolResult:
        try:
            return tool.run(arguments, self.context)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # a tool's bug must not end the turn: the model is told
            return ToolResult.failed(f"the tool failed: {type(exc).__name__}: {exc}")

    def resume(self, messages: Sequence[Mapping[str, Any]], call: Mapping[str, Any],
               approved: bool) -> LoopEnd:
        """Go on with a loop that parked ``call`` for approval (``LoopEnd.pending``).

        Args:
            messages: the parked loop's conversation (``LoopEnd.messages``).
            call: the parked call (``tool``, ``arguments``, ``id``).
            approved: the person's answer: the call runs, or is refused.

        Raises:
            As ``run``.
        """
        chat = [dict(m) for m in messages]
        if chat and chat[-1].get("role") == "tool" and chat[-1].get("tool_call_id") == call["id"]:
            chat.pop()
        self._helped = self.mode == "json"
        started = time.monotonic()
        name = str(call.get("tool") or "")
        arguments = dict(call.get("arguments") or {})
        tool = self.tools.get(wire_name(name))
        if tool is None:
            record = self._record(name, arguments, ToolResult.failed(
                f"the tool '{name}' is no longer allowed"), False, "checkpoint:gone", started)
        elif approved:
            record = self._record(name, arguments, self._run(tool, arguments), True,
                                  "checkpoint:yes", started)
        else:
            record = self._record(name, arguments, ToolResult.failed(
                f"refused: the user declined this {name} call. Do not retry it; go on"
                " without it."), False, "checkpoint:no", started)
        if self.mode == "json":
            chat.append({"role": "user", "content": f"Result of {name}:\n{record.result}"})
        else:
            chat.append({"role": "tool", "tool_call_id": call["id"], "content": record.result})
        return self.run(chat)

    def _record(self, name: str, arguments: Mapping[str, Any], result: ToolResult,
                allowed: bool, how: str, started: float) -> CallRecord:
        text, cut = cut_result(result.text, self.result_limit)
        record = CallRecord(tool=name, arguments=dict(arguments), result=text,
                            ok=result.ok and allowed, allowed=allowed, how=how,
                            seconds=round(time.monotonic() - started, 4), cut=cut,
                            details=dict(result.details))
        self._calls.append(record)
        if self.on_call is not None:
            self.on_call(record)
        return record

    def _end(self, text: str, ended: str, last: Completion | None, rounds: int,
             chat: list[dict[str, Any]], pending: Mapping[str, Any] | None = None) -> LoopEnd:
        return LoopEnd(text=text, ended=ended, completion=last, calls=tuple(self._calls),
                       rounds=rounds, mode=self.mode, pending=pending, messages=tuple(chat))


def cut_result(text: str, limit: int) -> tuple[str, bool]:
    """Return ``text`` cut at ``limit`` characters with the marker, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit] + CUT_MARK.format(more=len(text) - limit, limit=limit), True
