"""The tool descriptor: what the tool loop knows of one tool (docs/tools.md).

A built-in tool is a small module declaring ``TOOL`` (``Tool``): a name, a
description written for a model, a ``ToolLabel``, the JSON schema of its
arguments and the function that runs it. An MCP server's tools are ``Tool``
values too, named ``SERVER.tool`` (``tools.mcp_source``). The loop
(``engines`` through ``processes.turn``) never knows which kind it calls.

Invariant: ``run`` never raises for a bad call. Bad arguments, a refused
path, a failed command all come back as ``ToolResult(ok=False, text=why)``,
which the model reads as the call's result; only ``KeyboardInterrupt`` and
``WorkerTerminated`` pass through.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from enum import StrEnum
from pathlib import Path
from typing import Any

from vance_cli.base.records import frozen


class ToolLabel(StrEnum):
    """What a tool can do to the world; the gate's defaults follow it (docs/tools.md#the-gate)."""

    READ_ONLY = "read-only"
    WRITES = "writes"
    EXECUTES = "executes"
    NETWORK = "network"


@frozen
class ToolContext:
    """What a tool call may use.

    Attributes:
        project: the project folder (resolved): file tools stay inside it.
        state_dir: vance's state folder (on the deny floor).
        home: the user's home folder (``~/.ssh``, ``~/.aws`` on the deny floor).
        config_dir: vance's config folder (it may hold an API key: on the deny floor too).
        deadline: ``time.monotonic()`` by which the call must end (the turn's), or None.
        allow_private_urls: ``fetch_url`` may reach loopback and private addresses
            (``tools.fetch.allow_private``; tests serve pages from 127.0.0.1).
        options: more settings by dotted key (``tools.python.memory_mb`` …).
    """

    project: Path
    state_dir: Path
    home: Path
    config_dir: Path | None = None
    deadline: float | None = None
    allow_private_urls: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)


@frozen
class ToolResult:
    """One call's result, as the model reads it and the transcript stores it.

    Attributes:
        text: what the model is told (the output, or why the call failed).
        ok: False when the call failed or was refused.
        details: facts for the transcript, not the model (``sandbox``: which one ran,
            ``exit``: a return code, ``bytes`` …).
    """

    text: str
    ok: bool = True
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def failed(cls, why: str, **details: Any) -> ToolResult:
        """A failed call's result: ``why`` is what the model reads."""
        return cls(text=why, ok=False, details=details)


class Refused(Exception):
    """A call a tool will not run; the message tells the model why (never leaves ``run``)."""


ToolRun = Callable[[Mapping[str, Any], ToolContext], ToolResult]
"""Runs one call: takes the call's arguments (as the model sent them, unchecked) and the
context; returns the result (never raises for a bad call: see the module docstring)."""


@frozen
class Tool:
    """One tool as the loop sees it.

    Attributes:
        name: the name the model calls (``read_file``; ``SERVER.tool`` for an MCP tool).
        description: what it does, written for a model.
        label: what it can do to the world.
        parameters: the JSON schema of its arguments (an ``object`` schema).
        run: the call itself.
        source: ``builtin``, or the MCP server's name.
    """

    name: str
    description: str
    label: ToolLabel
    parameters: Mapping[str, Any]
    run: ToolRun
    source: str = "builtin"

    def definition(self) -> dict[str, Any]:
        """Return the tool as the OpenAI tools API names it (``{"type": "function", …}``)."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": dict(self.parameters)}}
