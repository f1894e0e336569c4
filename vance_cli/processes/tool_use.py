"""A turn's tools: which a process may call, the gate around each call, the calls stored.

Rules (docs/tools.md):
- A process's tools are its params' ``allowedTools``, plus ``allowedToolsAdd``,
  minus ``allowedToolsRemove`` (names; ``srv.tool`` or ``srv.*`` for an MCP
  server's). An orchestrator's params cannot widen a child's: ``children.spawn``
  drops ``children.WIDENING`` keys.
- Each call passes the gate (``tools.gate``). An ``ask`` is answered, in order:
  by a grant of the process (``always``, or a call approved at a checkpoint),
  by ``--yes-tools`` of the command (an input's ``yesTools`` meta, or the sink's
  ``yes_tools``), by the person at a terminal (the sink's ``ask_tool``), else
  it is refused — or, with ``toolApproval: checkpoint``, parked: the turn
  settles ``BLOCKED`` with the call pending until a steer approves it.
- Every call is a message (role ``tool``, kind ``tool_call``) stored when it
  ends, and one status line to the sink (``follow``, the shell).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from vance_cli.state import conversation, tool_grants
from vance_cli.tools import gate, sources, toolset
from vance_cli.tools.loop import CallRecord, LoopEnd, ToolLoop, Verdict
from vance_cli.tools.tool import Tool, ToolContext

if TYPE_CHECKING:
    from vance_cli.processes.turn import Turn
    from vance_cli.workspace import Workspace

TOOL_PARAMS = ("allowedTools", "allowedToolsAdd", "allowedToolsRemove", "maxIterations",
               "toolApproval", "toolsAllow", "toolsDeny", "toolsAsk")
"""The params of the tool loop (every engine with tools knows them)."""

DEFAULT_MAX_ITERATIONS = 5
"""Model calls of a turn that may ask for tools, when the recipe sets no ``maxIterations``."""

APPROVALS = {"yes": "ask:yes", "y": "ask:yes", "no": "ask:no", "n": "ask:no",
             "always": "ask:always", "a": "ask:always"}
"""A person's answers to a gate's question, and how the call record names them."""

Asker = Callable[[str, Mapping[str, Any]], str]
"""Asks the person about one call (tool name, arguments); returns ``yes``, ``no`` or
``always`` (for this process)."""


def tool_names(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the tool names a process's params allow (no ``allowedTools``: none)."""
    def listed(key: str) -> list[str]:
        value = params.get(key)
        if isinstance(value, str):
            value = [value]
        return [str(v).strip() for v in value or () if str(v).strip()]

    return toolset.tool_names(listed("allowedTools"), listed("allowedToolsAdd"),
                              listed("allowedToolsRemove"))


def resolve(ws: Workspace, names: Sequence[str]) -> tuple[list[Tool], list[str]]:
    """Return the tools ``names`` name, and a problem for each that cannot be had.

    A built-in's name gives it; ``srv.tool`` or ``srv.*`` an MCP server's tools (the
    server is started and asked here: ``tools.sources``).
    """
    problems: list[str] = []
    tools: list[Tool] = []
    for name in names:
        if toolset.is_mcp_name(name):
            continue
        try:
            tools += toolset.toolset([name])
        except toolset.UnknownTool as exc:
            problems.append(exc.message)
    servers: dict[str, list[str]] = {}
    for name in names:
        if toolset.is_mcp_name(name):
            server, _, tool = name.partition(".")
            servers.setdefault(server, []).append(tool)
    for server, wanted in servers.items():
        try:
            offered = sources.server_tools(ws.settings.paths, server)
        except sources.SourceError as exc:
            problems.append(exc.message)
            continue
        names_offered = {t.name.partition(".")[2] for t in offered}
        tools += [t for t in offered if any(fnmatchcase(t.name.partition(".")[2], w)
                                            for w in wanted)]
        problems += [f"MCP server '{server}' offers no tool '{w}'" for w in wanted
                     if not any(fnmatchcase(n, w) for n in names_offered)]
    return tools, problems


def asker_of(sink: object) -> Asker | None:
    """Return the sink's ``ask_tool`` (a person at a terminal), looking through wrappers."""
    seen = 0
    while sink is not None and seen < 5:
        ask = getattr(sink, "ask_tool", None)
        if callable(ask):
            return ask  # type: ignore[no-any-return]
        sink = getattr(sink, "inner", None)
        seen += 1
    return None


def yes_tools(turn: Turn) -> set[str]:
    """Return the tools the command allowed (``--yes-tools``): inputs' meta and the sink's."""
    names: set[str] = set()
    for message in turn.inputs:
        names.update(str(n) for n in message.meta.get("yesTools") or ())
    sink: object = turn.sink
    for _ in range(5):
        names.update(str(n) for n in getattr(sink, "yes_tools", None) or ())
        sink = getattr(sink, "inner", None)
        if sink is None:
            break
    return names


Decide = Callable[[Tool, Mapping[str, Any]], gate.Verdict]
"""The rules' verdict on one call (``gate.decide`` with the turn's rules and context)."""


class TurnGate:
    """The gate of one turn: rules, then grants, ``--yes-tools``, the person, the recipe.

    Args:
        turn: the turn.
        decide: the rules' verdict on a call.
    """

    def __init__(self, turn: Turn, decide: Decide) -> None:
        self.turn = turn
        self.decide = decide
        self.asker = asker_of(turn.sink)
        self.yes = yes_tools(turn)
        self.checkpoint = turn.process.params.get("toolApproval") == "checkpoint"
        self.refused_asks: list[str] = []

    def __call__(self, tool: Tool, arguments: Mapping[str, Any]) -> Verdict:
        """Decide one call (see the module rules)."""
        verdict = self.decide(tool, arguments)
        if verdict.decision == "deny":
            return Verdict(False, "deny", gate.refusal_text(verdict, tool.name))
        if verdict.decision == "allow":
            return Verdict(True, "allow", verdict.why)
        db, pid = self.turn.ws.db, self.turn.process.id
        scope = tool_grants.granted(db, pid, tool.name)
        if scope is not None:
            if scope == "once":
                with self.turn.storing() as tx:
                    tool_grants.use_once(tx, pid, tool.name)
            return Verdict(True, "granted", f"allowed for this process ({scope})")
        if any(gate.matches(name, tool, "") for name in self.yes):
            return Verdict(True, "yes-tools", "allowed by --yes-tools")
        return self._ask(tool, arguments, verdict)

    def _ask(self, tool: Tool, arguments: Mapping[str, Any], verdict: gate.Verdict) -> Verdict:
        """Ask the person, or refuse (or park the call) when no one can be asked."""
        if self.asker is not None:
            answer = APPROVALS.get(self.asker(tool.name, arguments).strip().lower(), "ask:no")
            if answer == "ask:always":
                with self.turn.storing() as tx:
                    tool_grants.grant(tx, self.turn.process.id, tool.name, "process")
            if answer == "ask:no":
                return Verdict(False, answer, gate.refusal_text(verdict, tool.name, asked=True))
            return Verdict(True, answer, "the person said yes")
        if self.checkpoint:
            return Verdict(False, "checkpoint", f"{verdict.why}; no one could be asked",
                           block=True)
        self.refused_asks.append(tool.name)
        return Verdict(False, "refused", gate.refusal_text(verdict, tool.name))


def store_call(turn: Turn, record: CallRecord) -> None:
    """Store one call as a message of the turn and show it as a status line."""
    meta = {"tool": record.tool, "arguments": dict(record.arguments), "ok": record.ok,
            "allowed": record.allowed, "decision": record.how,
            "ms": round(record.seconds * 1000, 1), "cut": record.cut,
            "details": _plain(record.details)}
    with turn.storing() as db:
        conversation.add_message(db, turn.process.id, "tool", "tool_call", record.result,
                                 turn=turn.number, meta=meta)
    turn.sink.status(record.line())


def _plain(details: Mapping[str, Any]) -> dict[str, Any]:
    plain: dict[str, Any] = json.loads(json.dumps(dict(details), default=str))
    return plain


def context_for(turn: Turn) -> ToolContext:
    """Return what the turn's calls may use: the project folder (the working folder), limits."""
    return toolset.tool_context(turn.ws.settings, turn.ws.cwd, turn.deadline)


def end_note(end: LoopEnd, limit: int) -> tuple[str, str]:
    """Return the note that says how the loop ended (``tools``, text)."""
    calls = len(end.calls)
    how = "" if end.mode == "native" else " (JSON actions, not the tools API)"
    if end.ended == "max_iterations":
        return ("tools", f"the tool loop ran out of iterations (maxIterations {limit}) after"
                f" {calls} tool call(s); the answer was asked for without tools{how}")
    if end.ended == "blocked":
        waiting = end.pending["tool"] if end.pending else "?"
        return ("tools", f"the tool loop waits for approval of {waiting} after {calls} tool"
                f" call(s){how}")
    return ("tools", f"the model answered after {calls} tool call(s){how}")


def loop_notes(end: LoopEnd, loop: ToolLoop, gate: TurnGate) -> list[tuple[str, str]]:
    """Return a turn's notes about its loop: how it ended, each tool refused unasked."""
    notes = [end_note(end, loop.max_iterations)]
    notes += [("tool_refused", f"{name} was refused: it asks first, and no one could be asked"
               " (allow it with --yes-tools or a tools.allow rule)")
              for name in dict.fromkeys(gate.refused_asks)]
    return notes


def approves(answer: str) -> bool:
    """True when a person's answer to a parked call approves it (``yes``, ``y``, ``approve`` …)."""
    first = answer.strip().lower().split()
    return bool(first) and first[0].strip(".!,") in ("yes", "y", "approve", "approved", "ok",
                                                     "ja")


def rules_of(turn: Turn) -> gate.Rules:
    """Return a turn's gate rules: the config's, then the recipe's (``toolsAllow`` …)."""
    params = turn.process.params

    def listed(key: str) -> list[str]:
        value = params.get(key)
        return [str(v) for v in value] if isinstance(value, list) else []

    recipe = gate.Rules.of(listed("toolsAllow"), listed("toolsDeny"), listed("toolsAsk"),
                           f"recipe {turn.process.recipe}")
    return gate.config_rules(turn.ws.settings).merged(recipe)


def decide_for(turn: Turn, context: ToolContext) -> Decide:
    """Return the rules' verdict function of a turn (``gate.decide``)."""
    rules = rules_of(turn)

    def decide(tool: Tool, arguments: Mapping[str, Any]) -> gate.Verdict:
        return gate.decide(tool, arguments, rules, context)

    return decide


def make_loop(turn: Turn, tools: Sequence[Tool], *, stream: bool, temperature: float | None,
              max_tokens: int, answer_schema: Mapping[str, Any] | None = None
              ) -> tuple[ToolLoop, TurnGate]:
    """Return the loop of a turn over ``tools`` and its gate (calls stored as they end)."""
    context = context_for(turn)
    turn_gate = TurnGate(turn, decide_for(turn, context))
    limit = turn.process.params.get("maxIterations")
    iterations = int(limit) if isinstance(limit, int) and not isinstance(limit, bool) \
        else DEFAULT_MAX_ITERATIONS

    def model(messages: Sequence[Mapping[str, Any]], *,
              tools: Sequence[Mapping[str, Any]] | None = None,
              schema: Mapping[str, Any] | None = None) -> Any:
        return turn.complete(messages, purpose="tools" if tools else "reply",
                             stream=stream and schema is None, schema=schema,
                             temperature=temperature, max_tokens=max_tokens, tools=tools)

    loop = ToolLoop(tools, model, turn_gate, context, iterations,
                    on_call=lambda record: store_call(turn, record), answer_schema=answer_schema,
                    mode="json" if turn.ws.settings.tools_calling == "json" else "native",
                    auto=turn.ws.settings.tools_calling == "auto")
    return loop, turn_gate
