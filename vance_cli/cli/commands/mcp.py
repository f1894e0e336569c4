"""``vance mcp``: serve vance's tools to LLM callers over the Model Context Protocol.

The server and the SDK load only when the command runs (not for
``vance mcp --help``): importing the SDK costs more than any other command
takes (docs/mcp.md, docs/decisions/0003-imports.md). The SDK is the
optional ``mcp`` extra; without it the command says how to install it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from vance_cli.base.errors import MissingDependency
from vance_cli.cli import context, output
from vance_cli.cli.boundary import debug_from_env

app = typer.Typer(add_completion=False)
"""The ``vance mcp`` command (loaded on demand by ``cli.app``)."""

SDK_MODULES = frozenset({"mcp", "mcp_types"})
"""Top-level modules of the MCP SDK (the ``mcp`` extra): missing, they are one error line."""

DEFAULT_PORT = 8765
"""The HTTP transport's default port on 127.0.0.1 (the SDK's 8000 collides with many dev
servers)."""


def _port(value: int | None) -> int | None:
    """``--port``: 0 (a free port) to 65535."""
    if value is not None and not 0 <= value <= 65535:
        raise typer.BadParameter(f"must be 0 to 65535, not {value}")
    return value


@app.command("mcp")
def command(
    ctx: typer.Context,
    http: Annotated[bool, typer.Option(
        "--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")] = False,
    port: Annotated[int | None, typer.Option(
        "--port", metavar="N", callback=_port,
        help=f"The HTTP port (with --http; 0: any free port). Default: {DEFAULT_PORT}.")
    ] = None,
) -> None:
    """Serve process_create_delegate and the process, recipe and wizard tools over MCP (stdio)."""
    if port is not None and not http:
        raise typer.BadParameter("needs --http (stdio has no port)", param_hint="--port")
    try:
        from vance_cli.mcp.server import serve  # heavy: mcp (the SDK, for this command only)
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in SDK_MODULES:
            raise
        raise MissingDependency(f"vance mcp needs the MCP SDK ({exc.name} is not installed):"
                                " pip install 'vance[mcp]'", package="mcp") from None
    output.show_core_warnings()  # the handlers' warnings (recipes left out): vance: warning:
    options = ctx.find_root().obj
    debug = bool(options and options.debug) or debug_from_env()
    serve(context.settings(ctx), port=(DEFAULT_PORT if port is None else port) if http else None,
          debug=debug)
