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

DEFAULT_HOST = "127.0.0.1"
"""The HTTP transport's default address: loopback, this machine only."""


def _port(value: int | None) -> int | None:
    """``--port``: 0 (a free port) to 65535."""
    if value is not None and not 0 <= value <= 65535:
        raise typer.BadParameter(f"must be 0 to 65535, not {value}")
    return value


def _address(host: str | None) -> str:
    """``--host`` as ``getaddrinfo`` takes it: the default, an IPv6 address out of brackets."""
    text = (host or DEFAULT_HOST).strip()
    return text[1:-1] if text.startswith("[") and text.endswith("]") else text


@app.command("mcp")
def command(
    ctx: typer.Context,
    http: Annotated[bool, typer.Option(
        "--http", help="Serve streamable HTTP (on 127.0.0.1 unless --host) instead of stdio.")
    ] = False,
    host: Annotated[str | None, typer.Option(
        "--host", metavar="ADDRESS",
        help="The HTTP address (with --http), e.g. 0.0.0.0 for every interface: anything but"
             f" loopback needs mcp.token / VANCE_MCP_TOKEN. Default: {DEFAULT_HOST}.")
    ] = None,
    port: Annotated[int | None, typer.Option(
        "--port", metavar="N", callback=_port,
        help=f"The HTTP port (with --http; 0: any free port). Default: {DEFAULT_PORT}.")
    ] = None,
) -> None:
    """Serve process_create_delegate and the process, recipe and wizard tools over MCP (stdio)."""
    if port is not None and not http:
        raise typer.BadParameter("needs --http (stdio has no port)", param_hint="--port")
    if host is not None and not http:
        raise typer.BadParameter("needs --http (stdio has no address)", param_hint="--host")
    if host is not None and not host.strip():
        raise typer.BadParameter("must not be empty", param_hint="--host")
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
          host=_address(host), debug=debug)
