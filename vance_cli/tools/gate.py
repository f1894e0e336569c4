"""The permission gate: allow, deny or ask, for one tool call, before it runs.

Rule (docs/tools.md#the-gate), in this order, first answer wins:

1. the deny floor: a path argument on it (``floor.floor_reason``) is denied; no rule lifts it;
2. ``deny`` rules;
3. ``allow`` rules;
4. ``ask`` rules;
5. the default by label: ``read-only`` is allowed; ``writes``, ``executes`` and
   ``network`` ask, and so does every MCP server's tool.

A rule is ``NAME`` or ``NAME(ARGUMENT)``, fnmatch patterns both (``srv.*``,
``fetch_url(https://docs.python.org/*)``), or ``@LABEL`` (``@read-only``). The argument
pattern matches the call's subject: ``call_subject``. Pure: no terminal, no I/O but the
``realpath`` of path arguments; the ask prompt is the command line's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from fnmatch import fnmatchcase
from typing import Any, Literal

from vance_cli.base.config import Settings
from vance_cli.base.records import frozen
from vance_cli.tools.floor import absolute, floor_reason
from vance_cli.tools.tool import Tool, ToolContext, ToolLabel

Decision = Literal["allow", "deny", "ask"]
"""What the gate says of one call."""

PATH_ARGUMENTS = frozenset({"path"})
"""Argument names holding a file path: checked on the deny floor, matched project-relative."""


@frozen
class Verdict:
    """The gate's answer for one call.

    Attributes:
        decision: ``allow``, ``deny`` or ``ask``.
        rule: the rule that decided (``tools.deny: run_command(rm *)``), or
            ``deny floor`` / ``default: <label>``.
        why: one sentence for the person asked, the transcript and (when refused) the model.
    """

    decision: Decision
    rule: str
    why: str

    def to_json(self) -> dict[str, str]:
        """Return ``{"decision", "rule", "why"}``."""
        return {"decision": self.decision, "rule": self.rule, "why": self.why}


@frozen
class Rules:
    """The gate's rules, each a tuple of patterns (see the module docstring).

    Attributes:
        allow: calls allowed without asking.
        deny: calls always refused.
        ask: calls that ask first.
        source: where the rules came from, per pattern (``config``, ``recipe code-read``,
            ``--yes-tools``), for the verdict's ``rule``.
    """

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    source: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, allow: Iterable[str] = (), deny: Iterable[str] = (), ask: Iterable[str] = (),
           source: str = "config") -> Rules:
        """Return rules whose patterns all come from ``source``."""
        allow, deny, ask = tuple(allow), tuple(deny), tuple(ask)
        origin = {f"{kind}:{p}": source for kind, patterns in
                  (("allow", allow), ("deny", deny), ("ask", ask)) for p in patterns}
        return cls(allow=allow, deny=deny, ask=ask, source=origin)

    def merged(self, *others: Rules) -> Rules:
        """Return these rules with the others' added (an earlier source keeps its name)."""
        allow, deny, ask = list(self.allow), list(self.deny), list(self.ask)
        source = dict(self.source)
        for other in others:
            for kind, mine, theirs in (("allow", allow, other.allow), ("deny", deny, other.deny),
                                       ("ask", ask, other.ask)):
                for pattern in theirs:
                    if pattern not in mine:
                        mine.append(pattern)
                        source[f"{kind}:{pattern}"] = other.source.get(f"{kind}:{pattern}", "")
        return Rules(allow=tuple(allow), deny=tuple(deny), ask=tuple(ask), source=source)

    def named(self, kind: str, pattern: str) -> str:
        """Return how a verdict names one rule: ``tools.deny: run_* (recipe coding)``."""
        where = self.source.get(f"{kind}:{pattern}", "")
        return f"tools.{kind}: {pattern}" + (f" ({where})" if where and where != "config" else "")


def call_subject(tool: Tool, args: Mapping[str, Any], context: ToolContext | None = None) -> str:
    """Return the text an argument pattern is matched against.

    A path argument becomes the path relative to the project folder (normalised, ``..``
    folded; absolute when outside); a list argument (``run_command``'s ``argv``) is joined
    with spaces; otherwise the first argument the schema requires, or the first one it names,
    as text; with none of those, the arguments as compact JSON.
    """
    properties = list(tool.parameters.get("properties", {}))
    required = [name for name in tool.parameters.get("required", ()) if name in args]
    for name in [*required, *properties]:
        if name not in args:
            continue
        value = args[name]
        if name in PATH_ARGUMENTS and isinstance(value, str) and context is not None:
            path = absolute(value, context)
            return (path.relative_to(context.project).as_posix()
                    if path.is_relative_to(context.project) else str(path))
        if isinstance(value, list):
            return " ".join(str(item) for item in value)
        return value if isinstance(value, str) else json.dumps(value)
    return json.dumps(dict(args), sort_keys=True, ensure_ascii=False)


def matches(pattern: str, tool: Tool, subject: str) -> bool:
    """True when a rule pattern matches a call of ``tool`` whose subject is ``subject``."""
    if pattern.startswith("@"):
        return tool.label.value == pattern[1:]
    name, paren, rest = pattern.partition("(")
    if not fnmatchcase(tool.name, name.strip()):
        return False
    if not paren:
        return True
    return fnmatchcase(subject, rest[:-1] if rest.endswith(")") else rest)


def _floor(tool: Tool, args: Mapping[str, Any], context: ToolContext) -> str | None:
    """Return why a call's path argument (or a path-like word of its argv) is on the floor."""
    candidates = [v for k, v in args.items() if k in PATH_ARGUMENTS and isinstance(v, str)]
    if tool.label is ToolLabel.EXECUTES:
        for value in args.values():
            if isinstance(value, list):
                candidates += [w for w in value if isinstance(w, str)
                               and ("/" in w or w.startswith((".", "~")))]
    for raw in candidates:
        given = absolute(raw.split("=", 1)[-1] if raw.startswith("-") else raw, context)
        reason = floor_reason(given, context)
        if reason is None:
            reason = floor_reason(type(given)(os.path.realpath(given)), context)
        if reason is not None:
            return f"{raw!r} is on vance's deny floor: {reason}"
    return None


def default_decision(tool: Tool) -> Decision:
    """Return the gate's answer when no rule matches: by label, and ``ask`` for MCP tools."""
    if tool.source != "builtin":
        return "ask"
    return "allow" if tool.label is ToolLabel.READ_ONLY else "ask"


def decide(tool: Tool, args: Mapping[str, Any], rules: Rules,
           context: ToolContext | None = None) -> Verdict:
    """Return the gate's verdict on one call (the module docstring gives the order).

    Args:
        tool: the tool called.
        args: the call's arguments as the model sent them.
        rules: allow, deny and ask patterns (config, recipe, ``--yes-tools`` merged).
        context: the call's context; with it, path arguments are checked on the deny floor
            and matched relative to the project folder.
    """
    if context is not None:
        reason = _floor(tool, args, context)
        if reason is not None:
            return Verdict("deny", "deny floor", f"{reason}; no rule can allow it")
    subject = call_subject(tool, args, context)
    shown = f"{tool.name}({subject})"
    for kind, patterns in (("deny", rules.deny), ("allow", rules.allow), ("ask", rules.ask)):
        for pattern in patterns:
            if matches(pattern, tool, subject):
                verb = {"deny": "refuses", "allow": "allows", "ask": "asks before"}[kind]
                rule = rules.named(kind, pattern)
                return Verdict(kind, rule, f"{rule} {verb} {shown}")  # type: ignore[arg-type]
    decision = default_decision(tool)
    kind = "an MCP server's tool" if tool.source != "builtin" else f"a {tool.label.value} tool"
    why = (f"{tool.name} is {kind}: allowed unless a rule says otherwise" if decision == "allow"
           else f"{tool.name} is {kind}: it asks first unless tools.allow allows it")
    return Verdict(decision, f"default: {tool.label.value}", why)


def refusal_text(verdict: Verdict, tool: str, asked: bool = False) -> str:
    """Return the tool result a refused call gives the model.

    Args:
        verdict: the gate's verdict (``deny``, or ``ask`` with no one to ask).
        tool: the tool's name.
        asked: True when a person was asked and said no.
    """
    if asked:
        return f"refused: the user declined this {tool} call. Do not retry it; go on without it."
    if verdict.decision == "ask":
        return (f"refused: {tool} needs the user's approval and no one can be asked here "
                f"({verdict.why}). Go on without it, or tell the user what you would need.")
    return f"refused by the permission gate: {verdict.why}. Do not retry it."


def config_rules(settings: Settings) -> Rules:
    """Return the rules of the settings' ``tools.allow``, ``tools.deny`` and ``tools.ask``."""
    return Rules.of(settings.tools_allow, settings.tools_deny, settings.tools_ask, "config")


def yes_tools_rules(names: Sequence[str]) -> Rules:
    """Return the rules ``--yes-tools NAME…`` adds: each name (or pattern) allowed."""
    return Rules.of(allow=names, source="--yes-tools")
