"""A recipe's tools: the names it allows, the built-in tools they name, the context of a call.

Rule (docs/tools.md#built-in-tools): a recipe's ``allowedTools`` is the base list; without one
the engine's default applies (``None``: every built-in tool). ``allowedToolsAdd`` then adds
names and ``allowedToolsRemove`` takes names away (fnmatch patterns: ``srv.*``, ``run_*``).
A name with a dot (``SERVER.tool``) is an MCP server's tool: ``toolset`` leaves it to
``tools.mcp_source``. Allowing a tool here only offers it to the model; every call still
passes the gate (``tools.gate.decide``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from vance_cli.base.config import Settings
from vance_cli.base.errors import NotFoundError
from vance_cli.base.names import close_matches
from vance_cli.tools.registry import BUILTIN, builtin
from vance_cli.tools.tool import Tool, ToolContext


class UnknownTool(NotFoundError):
    """A recipe or a command names a tool that no built-in module and no MCP server has."""

    code = "unknown_tool"

    def __init__(self, name: str, close: Sequence[str] = (), available: Sequence[str] = ()):
        super().__init__("tool", name, close, available)


def is_mcp_name(name: str) -> bool:
    """True for an MCP server's tool name or pattern (``SERVER.tool``, ``srv.*``)."""
    return "." in name


def tool_names(
    allowed: Sequence[str] | None,
    add: Sequence[str] = (),
    remove: Sequence[str] = (),
) -> tuple[str, ...]:
    """Return the tool names a recipe allows, in order, without duplicates.

    Args:
        allowed: the recipe's ``allowedTools``; None means every built-in tool.
        add: ``allowedToolsAdd``: names appended.
        remove: ``allowedToolsRemove``: names or fnmatch patterns taken away.
    """
    base = list(BUILTIN) if allowed is None else list(allowed)
    names: list[str] = []
    for name in [*base, *add]:
        if name not in names and not any(fnmatchcase(name, pattern) for pattern in remove):
            names.append(name)
    return tuple(names)


def toolset(names: Sequence[str]) -> tuple[Tool, ...]:
    """Return the built-in tools among ``names``, in their order (each module imported now).

    Names of MCP tools (with a dot) are skipped: ``tools.mcp_source`` adds those.

    Raises:
        UnknownTool: a name without a dot that is not a built-in tool (with close names).
    """
    tools: list[Tool] = []
    for name in names:
        if is_mcp_name(name):
            continue
        if name not in BUILTIN:
            raise UnknownTool(name, close_matches(name, list(BUILTIN)), list(BUILTIN))
        tools.append(builtin(name))
    return tuple(tools)


def tool_context(
    settings: Settings,
    project: str | os.PathLike[str] | None = None,
    deadline: float | None = None,
    home: str | os.PathLike[str] | None = None,
) -> ToolContext:
    """Build the context of a turn's tool calls from the settings.

    Args:
        settings: the resolved settings (``tools.*`` keys, the vance folders).
        project: the project folder the file tools stay in; None: the current folder.
        deadline: ``time.monotonic()`` by which each call must end (the turn's), or None.
        home: the user's home folder (its ``.ssh``, ``.aws`` are on the deny floor);
            None: ``~``.
    """
    options: Mapping[str, Any] = {
        "tools.python.timeout": settings.tools_python_timeout,
        "tools.python.memory_mb": settings.tools_python_memory_mb,
        "tools.fetch.max_bytes": settings.tools_fetch_max_bytes,
    }
    return ToolContext(
        project=Path(project if project is not None else Path.cwd()).resolve(),
        state_dir=settings.paths.state_dir.resolve(),
        config_dir=settings.paths.config_dir.resolve(),
        home=Path(home if home is not None else Path.home()).resolve(),
        deadline=deadline,
        allow_private_urls=settings.tools_fetch_allow_private,
        options=options,
    )
