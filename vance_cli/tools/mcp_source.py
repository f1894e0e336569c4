"""One MCP server's tools, through the SDK's client (the ``mcp`` extra, imported when used).

Each listing and each call opens its own session (stdio: the server is
started for it and stopped after; HTTP: one connection), so no server
outlives the call that needed it. A call ends by the turn's deadline, at
most ``CALL_SECONDS``. Rule: docs/tools.md#mcp-servers-as-tool-sources
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from vance_cli.tools.tool import Tool, ToolContext, ToolLabel, ToolResult, ToolRun

CALL_SECONDS = 120.0
"""Longest one MCP call or listing may take, in seconds."""

T = TypeVar("T")


class SourceUnavailable(Exception):
    """The SDK is missing, or the server cannot be started, reached or asked."""


def _session(command: Sequence[str], url: str, body: Callable[[Any], Awaitable[T]],
             seconds: float) -> T:
    """Open a client session to the server, run ``body(client)``, close it."""
    try:
        import anyio
        from mcp import Client  # the mcp extra: only when a configured server is used
        from mcp.client.stdio import StdioServerParameters, stdio_client
    except ImportError as exc:
        raise SourceUnavailable("the MCP SDK is not installed (pip install 'vance[mcp]'):"
                                f" {exc}") from None

    async def main() -> T:
        with anyio.fail_after(seconds), open(os.devnull, "w", encoding="utf-8") as errlog:
            if url:
                async with Client(url) as client:
                    return await body(client)
            params = StdioServerParameters(command=command[0], args=list(command[1:]),
                                           env=dict(os.environ))
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return await body(client)

    try:
        return anyio.run(main)
    except TimeoutError:
        raise SourceUnavailable(f"no answer within {seconds:g} s") from None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # the SDK's errors, an exception group from its task group
        raise SourceUnavailable(_reason(exc)) from None


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)
    if inner:
        return _reason(inner[0])
    return f"{type(exc).__name__}: {exc}".strip().rstrip(":")


def list_tools(server: str, command: Sequence[str], url: str) -> list[Tool]:
    """Return the server's tools as ``server.tool`` (each labelled ``executes``: it asks).

    Raises:
        SourceUnavailable: the SDK is missing or the server cannot be asked.
    """
    async def body(client: Any) -> list[Any]:
        return list((await client.list_tools()).tools)

    listed = _session(command, url, body, CALL_SECONDS)
    return [Tool(name=f"{server}.{t.name}", description=t.description or t.name,
                 label=ToolLabel.EXECUTES,
                 parameters=dict(t.input_schema or {"type": "object", "properties": {}}),
                 run=_runner(server, command, url, t.name), source=server) for t in listed]


def _runner(server: str, command: Sequence[str], url: str, name: str) -> ToolRun:
    def run(arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        seconds = CALL_SECONDS if context.deadline is None else \
            max(1.0, min(CALL_SECONDS, context.deadline - time.monotonic()))

        async def body(client: Any) -> Any:
            return await client.call_tool(name, dict(arguments))

        try:
            result = _session(command, url, body, seconds)
        except SourceUnavailable as exc:
            return ToolResult.failed(f"MCP server '{server}' failed: {exc}", server=server)
        return _result(server, result)

    return run


def _result(server: str, result: Any) -> ToolResult:
    texts = [str(block.text) for block in getattr(result, "content", None) or ()
             if getattr(block, "text", None) is not None]
    structured = getattr(result, "structured_content", None)
    text = "\n".join(texts) if texts else (json.dumps(structured, ensure_ascii=False)
                                            if structured is not None else "")
    ok = not getattr(result, "is_error", False)
    return ToolResult(text=text, ok=ok, details={"server": server})
