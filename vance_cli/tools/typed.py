"""A built-in tool from a pydantic argument model: its JSON schema, checked arguments, no raise.

Rule (docs/tools.md#built-in-tools): the model's arguments are checked against the tool's
pydantic model before the tool runs; a bad call (wrong field, wrong type), a refusal
(``Refused``) or an ``OSError`` comes back as a failed ``ToolResult`` the model reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from vance_cli.tools.tool import Refused, Tool, ToolContext, ToolLabel, ToolResult

ArgsT = TypeVar("ArgsT", bound=BaseModel)


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """Return the JSON schema of an argument model, without pydantic's ``title`` keys."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items()
                    if not (k == "title" and isinstance(v, str))}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    schema: dict[str, Any] = strip(model.model_json_schema())
    schema.setdefault("properties", {})
    return schema


def _validation_text(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems)


def typed_tool(
    name: str,
    description: str,
    label: ToolLabel,
    model: type[ArgsT],
    call: Callable[[ArgsT, ToolContext], ToolResult],
) -> Tool:
    """Return a ``Tool`` whose run checks the arguments with ``model`` and then calls ``call``.

    Args:
        name: the tool's name.
        description: what it does, written for a model.
        label: what it can do to the world.
        model: the pydantic model of its arguments (``extra="forbid"`` to refuse unknown ones).
        call: runs a checked call; may raise ``Refused`` or ``OSError``.
    """

    def run(args: Mapping[str, Any], context: ToolContext) -> ToolResult:
        try:
            checked = model.model_validate(dict(args))
        except ValidationError as exc:
            return ToolResult.failed(f"bad arguments for {name}: {_validation_text(exc)}",
                                     refused="arguments")
        try:
            return call(checked, context)
        except Refused as exc:
            return ToolResult.failed(f"refused: {exc}", refused="refused")
        except OSError as exc:
            return ToolResult.failed(f"{name} failed: {exc.strerror or exc}",
                                     error=type(exc).__name__)

    return Tool(name=name, description=description, label=label,
                parameters=schema_of(model), run=run)
