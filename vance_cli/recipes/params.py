"""Engine params: the params every engine knows (``Common``), checked and read.

A recipe's ``params`` are checked against its engine's schema when the
recipe loads (a recipe whose params break it is left out, with the
reason), again when a process starts (the recipe's params overlaid by the
caller's ``--param``), and when Slartibartfast writes a recipe; engines read
their params through the same schema, with its defaults. Each engine keeps
its schema (a subclass of ``Common``) in its own package and names it in
its descriptor (``Engine.params``); an engine without one takes any params.

Every engine knows ``model`` (the model of its calls), ``budget``
(``llmCalls``, ``tokens``, ``turnSeconds``: docs/processes.md "Budgets") and
``passive`` (a mailbox that never runs). The conversational engines (ford,
arthur) take more keys, for their recipe's prompt template
(``{{ params.targetLanguage }}``), and so does vogon (its phase templates);
zaphod and marvin take only their own. docs/engines.md lists every param.

This module imports pydantic: it loads when a document is parsed or a turn
runs, never on a warm offline path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
)

from vance_cli.base import schema

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A phase or head name: a letter or digit first, then letters, digits, ``_ . -``."""


def lowered(value: Any) -> Any:
    """Return a string stripped and lower-cased (a choice's spelling); anything else as is."""
    return value.strip().lower() if isinstance(value, str) else value


def valid_name(value: str) -> str:
    """Return ``value`` when it is a valid phase or head name (``NAME``).

    Raises:
        ValueError: it is not.
    """
    if not NAME.match(value):
        raise ValueError(f"{value!r} is not a valid name (letters, digits, '_', '.', '-')")
    return value


Name = Annotated[str, BeforeValidator(lambda v: v.strip() if isinstance(v, str) else v)]
"""A phase or head name (checked by the models that use it)."""


class Budget(BaseModel):
    """``params.budget``: what one turn may spend (docs/processes.md "Budgets")."""

    model_config = ConfigDict(extra="forbid")

    llmCalls: int | None = Field(default=None, gt=0)
    tokens: int | None = Field(default=None, gt=0)
    turnSeconds: float | None = Field(default=None, gt=0)


class Common(BaseModel):
    """The params every engine knows."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    budget: Budget | None = None
    passive: bool = False


class ToolParams(BaseModel):
    """The tool loop's params (docs/tools.md#recipes): which tools, how many rounds, approval.

    ford and arthur take them (their schemas subclass this one).
    """

    allowedTools: list[str] | None = None
    """Tool names the process may call (built-ins, ``srv.tool`` or ``srv.*``); none: no tools."""
    allowedToolsAdd: list[str] | None = None
    allowedToolsRemove: list[str] | None = None
    """Names or fnmatch patterns taken away."""
    maxIterations: int = Field(default=5, ge=1, le=50)
    """Model calls of a turn that may ask for tools."""
    toolApproval: Annotated[Literal["refuse", "checkpoint"] | None, BeforeValidator(lowered)] = None
    """A call that asks, with no one to ask: refused (None, ``refuse``), or parked
    (``checkpoint``: ``BLOCKED``) for approval."""
    toolsAllow: list[str] | None = None
    toolsDeny: list[str] | None = None
    toolsAsk: list[str] | None = None
    """The recipe's gate rules, after the config's (patterns as ``tools.allow``)."""


def problems(model: type[Common] | None, params: Mapping[str, Any]) -> list[str]:
    """Return every problem of ``params`` for an engine's schema (``params.``-prefixed paths).

    Args:
        model: the engine's schema (``Engine.params``); None: any params (no problems).
        params: the params to check.
    """
    if model is None:
        return []
    try:
        model.model_validate(dict(params))
    except ValidationError as exc:
        return [f"params.{text}" if keys else f"params: {text}"
                for keys, text in schema.problems(exc, model)]
    return []


def parse(model: type[Common] | None, params: Mapping[str, Any]) -> Common:
    """Return ``params`` read through the schema ``model`` (None: ``Common``), defaults filled in.

    Raises:
        ValueError: the params break the schema (every problem, ``; ``-joined).
    """
    model = model or Common
    try:
        return model.model_validate(dict(params))
    except ValidationError as exc:
        raise ValueError("; ".join(f"params.{t}" for _, t in schema.problems(exc, model))) \
            from None


def describe(model: type[Common] | None) -> dict[str, Any]:
    """Return the JSON schema of an engine's params (for people and for Slartibartfast)."""
    return (model or Common).model_json_schema()


def effective(model: type[Common] | None, params: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``params`` with the schema's defaults filled in (unset optional keys left out).

    Params that break the schema are returned as they are.
    """
    try:
        parsed = parse(model, params)
    except ValueError:
        return dict(params)
    data: dict[str, Any] = parsed.model_dump(exclude_none=True)
    return data


def outline(model: type[Common] | None) -> str:
    """Return an engine's params as one compact line, for a model that writes a recipe.

    E.g. ``{pattern?: "council" | "debate" = "council", heads?: [{name: string, …}], …}``:
    ``?`` marks an optional key, ``= value`` its default, ``…`` that more keys are allowed.
    """
    schema_doc = (model or Common).model_json_schema()
    return _outline(schema_doc, schema_doc.get("$defs", {}), skip=set(Common.model_fields))


def _outline(node: Mapping[str, Any], defs: Mapping[str, Any], skip: set[str] | None = None,
             depth: int = 0) -> str:
    if "$ref" in node:
        return _outline(defs[str(node["$ref"]).rsplit("/", 1)[-1]], defs, None, depth)
    if "anyOf" in node:
        kinds = [k for k in node["anyOf"] if k.get("type") != "null"]
        return " | ".join(_outline(k, defs, None, depth) for k in kinds) or "null"
    if "enum" in node or "const" in node:
        return " | ".join(f'"{v}"' for v in node.get("enum", [node.get("const")]))
    kind = node.get("type")
    if kind == "array":
        return f"[{_outline(node.get('items', {}), defs, None, depth)}]"
    if kind != "object" or "properties" not in node or depth >= 4:
        return str(kind or "any")
    required = set(node.get("required", ()))
    parts = []
    for key, value in node["properties"].items():
        if skip and key in skip:
            continue
        text = f"{key}{'' if key in required else '?'}: "
        text += _outline(value, defs, None, depth + 1)
        if "default" in value and value["default"] not in (None, [], {}, ""):
            text += f" = {json.dumps(value['default'])}"
        parts.append(text)
    if node.get("additionalProperties") is not False and skip is not None:
        parts.append("…")
    return "{" + ", ".join(parts) + "}"
