"""The MCP server of ``vance mcp``: the tools of ``mcp/tools.py`` over stdio or HTTP.

Rules (docs/mcp.md):
- This module wraps the official MCP SDK (``mcp``, low-level ``Server``);
  only ``vance mcp`` imports it, so no other command pays for the SDK.
- stdout carries protocol messages only: while the stdio transport serves,
  the SDK points fd 1 at stderr for everything else, and vance's own lines
  (the start, failed calls, warnings) go to stderr through logging.
- Streamable HTTP listens on 127.0.0.1 unless ``--host`` says otherwise. On
  loopback the SDK's DNS-rebinding protection holds; anywhere else the
  server refuses to start without a bearer token (``mcp.token``). A
  configured token is required of every request, on loopback too, through
  the SDK's own bearer-auth hooks (a ``TokenVerifier``), compared in
  constant time.
- Tenant, project, user, session and language are the ``Settings`` the
  server started with; every call builds its own ``Workspace`` from them
  and runs in a worker thread, so the server keeps answering while a
  call waits for a turn.
- A failing call is a tool error (``isError``) whose text is the one line
  the command line prints and whose structured content is the ``--json``
  error document; the server keeps running. An unknown tool is a protocol
  error (invalid params), as the protocol asks.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import socket
import sys
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from mcp import types
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import AnyHttpUrl

from vance_cli import __version__
from vance_cli.base.errors import ConfigError, VanceError, as_vance_error
from vance_cli.mcp.tools import BY_NAME, INSTRUCTIONS, TOOLS
from vance_cli.workspace import Workspace

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from vance_cli.base.config import Settings
    from vance_cli.mcp.handlers import ToolOutput
    from vance_cli.mcp.tools import Tool

HOST = "127.0.0.1"
"""The address the HTTP transport listens on unless ``--host`` names another."""

HTTP_PATH = "/mcp"
"""The streamable HTTP endpoint's path (the SDK's default)."""

log = logging.getLogger(__name__)
"""The server's own lines on stderr (``configure_logging``)."""


class StderrLines(logging.Handler):
    """Writes each record as ``vance mcp: …`` to the current ``sys.stderr`` (never stdout)."""

    def emit(self, record: logging.LogRecord) -> None:
        """Write one record, its traceback (if any) on the lines below."""
        sys.stderr.write(f"vance mcp: {self.format(record)}\n")
        sys.stderr.flush()


def configure_logging(debug: bool) -> None:
    """Send the server's log to stderr (with ``debug``, a line for each call too).

    Args:
        debug: log every call and the traceback of unexpected errors.
    """
    log.setLevel(logging.DEBUG if debug else logging.INFO)
    log.propagate = False
    if not any(isinstance(h, StderrLines) for h in log.handlers):
        log.addHandler(StderrLines())


def _json_text(document: Any) -> str:
    """Return a document as compact JSON text (the ``--json`` document, without its indent)."""
    return json.dumps(document, ensure_ascii=False)


def success(output: ToolOutput) -> types.CallToolResult:
    """Return a tool's answer.

    Its JSON document as text (and as structured content when it is an
    object), then the note for the calling model, if any.
    """
    content: list[types.ContentBlock] = [types.TextContent(text=_json_text(output.document))]
    if output.note:
        content.append(types.TextContent(text=output.note))
    structured = output.document if isinstance(output.document, dict) else None
    return types.CallToolResult(content=content, structured_content=structured)


def failure(exc: VanceError) -> types.CallToolResult:
    """Return a tool error: the CLI's one-line message, and its ``--json`` error document."""
    return types.CallToolResult(content=[types.TextContent(text=exc.message)],
                                structured_content=exc.to_json(), is_error=True)


def unexpected(exc: Exception) -> types.CallToolResult:
    """Return the tool error of an exception vance did not foresee (as the CLI's exit 1)."""
    text = f"{type(exc).__name__}: {exc}"
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True,
                                structured_content={"error": "unexpected_error", "message": text})


class ToolCalls:
    """The server's two handlers: list the tools, call one.

    Args:
        settings: the scope and configuration resolved when the server started.
        cwd: the folder ``.vance/`` project discovery starts from.
        debug: log every call, and tracebacks of unexpected errors.
    """

    def __init__(self, settings: Settings, cwd: Path, debug: bool = False) -> None:
        self.settings = settings
        self.cwd = cwd
        self.debug = debug
        self.listed = [types.Tool(
            name=tool.name, description=tool.description, input_schema=tool.input_schema,
            annotations=types.ToolAnnotations(read_only_hint=tool.read_only,
                                              destructive_hint=False))
            for tool in TOOLS]

    async def list_tools(self, ctx: ServerRequestContext[Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        """Answer ``tools/list``: every tool with its generated input schema."""
        return types.ListToolsResult(tools=self.listed)

    async def call_tool(self, ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        """Answer ``tools/call`` from a worker thread (the call may wait for a turn).

        Raises:
            MCPError: invalid params: no tool has that name.
        """
        tool = BY_NAME.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool '{params.name}'; tools: "
                           + ", ".join(BY_NAME))
        run = partial(self.run, tool, params.arguments or {})
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)

    def run(self, tool: Tool, arguments: Mapping[str, Any]) -> types.CallToolResult:
        """Run one call on its own workspace and turn any failure into a tool error."""
        ws = Workspace(self.settings, self.cwd)
        try:
            answer = success(tool.call(ws, arguments))
        except Exception as exc:  # the server's boundary: every failure is this call's error
            known = as_vance_error(exc)
            if known is None:
                log.error("%s failed: %s: %s", tool.name, type(exc).__name__, exc,
                          exc_info=exc if self.debug else None)
                return unexpected(exc)
            log.debug("%s failed: %s", tool.name, known.message)
            return failure(known)
        finally:
            ws.close()
        log.debug("%s answered", tool.name)
        return answer


def build_server(settings: Settings, cwd: Path, debug: bool = False) -> Server[Any]:
    """Return the low-level SDK server with vance's tools (not yet serving)."""
    calls = ToolCalls(settings, cwd, debug)
    return Server("vance", version=__version__, title="vance", instructions=INSTRUCTIONS,
                  on_list_tools=calls.list_tools, on_call_tool=calls.call_tool)


def _scope(settings: Settings) -> str:
    return (f"tenant {settings.tenant}, project {settings.project}, user {settings.user},"
            f" session {settings.session}")


def serve(settings: Settings, *, port: int | None = None, host: str = HOST,
          debug: bool = False, cwd: Path | None = None) -> None:
    """Serve the tools until the client leaves (stdio) or the server is stopped (HTTP).

    Args:
        settings: scope and configuration, resolved as for any other command.
        port: serve streamable HTTP on ``host:port`` (0: a free port) instead of stdio.
        host: the address (or host name) the HTTP transport listens on.
        debug: log every call and tracebacks of unexpected errors (stderr).
        cwd: where ``.vance/`` discovery starts; the current folder when None.

    Raises:
        ConfigError: ``host`` is not loopback and no ``mcp.token`` is set.
        VanceError: the HTTP address cannot be listened on.
    """
    configure_logging(debug)
    server = build_server(settings, cwd or Path.cwd(), debug)
    if port is None:
        log.info("%d tools over stdio (%s)", len(TOOLS), _scope(settings))
        anyio.run(_serve_stdio, server)
        return
    family, address = _address(host, port)
    loopback = is_loopback(address[0])
    if not loopback and not settings.mcp_token:
        raise ConfigError(
            f"vance mcp --http on {host} (not loopback) needs a bearer token: set mcp.token"
            " ('vance config set mcp.token TOKEN') or VANCE_MCP_TOKEN, or listen on"
            " 127.0.0.1", key="mcp.token", host=host)
    anyio.run(_serve_http, server, _listen(family, address, host), loopback, settings)


async def _serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def is_loopback(address: str) -> bool:
    """Return True when ``address`` (an IP address) is a loopback one (``127.0.0.0/8``, ``::1``)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 scope id is no part of it
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool((mapped or ip).is_loopback)


def _address(host: str, port: int) -> tuple[socket.AddressFamily, tuple[Any, ...]]:
    """Resolve ``host`` to the family and address the server binds (its first address).

    Raises:
        VanceError: the host name does not resolve.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise VanceError(f"cannot listen on {host}:{port}: {reason}; choose another address"
                         " with --host", host=host, port=port) from None
    family, _, _, _, address = infos[0]
    return family, address


def _listen(family: socket.AddressFamily, address: tuple[Any, ...], host: str) -> socket.socket:
    """Return a socket bound to ``address``.

    Raises:
        VanceError: the port is taken or not allowed, or the address is not this host's.
    """
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise VanceError(f"cannot listen on {_host_port(host, address[1])}:"
                         f" {exc.strerror or exc}; choose another port with --port",
                         host=host, port=address[1]) from None
    return sock


def _host_port(host: str, port: int) -> str:
    """Return ``host:port``, an IPv6 address in brackets (as in a URL)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class StaticToken:
    """The SDK's ``TokenVerifier`` for the one configured bearer token.

    Args:
        token: the token every request must carry (``mcp.token``).
    """

    def __init__(self, token: str) -> None:
        self._expected = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        """Return the access of a request whose token is the configured one, else None."""
        if not hmac.compare_digest(token.encode("utf-8", "surrogateescape"), self._expected):
            return None
        return AccessToken(token=token, client_id="vance", scopes=[])


async def _serve_http(server: Server[Any], sock: socket.socket, loopback: bool,
                      settings: Settings) -> None:
    import uvicorn  # heavy: uvicorn (the HTTP transport only)

    bound_host, port = sock.getsockname()[:2]
    url = f"http://{_host_port(bound_host, port)}{HTTP_PATH}"
    token = settings.mcp_token
    # loopback: the SDK's DNS-rebinding protection for local hosts; elsewhere the token guards
    app = server.streamable_http_app(
        host=HOST if loopback else bound_host, streamable_http_path=HTTP_PATH,
        auth=AuthSettings(issuer_url=AnyHttpUrl(url), resource_server_url=None) if token else None,
        token_verifier=StaticToken(token) if token else None)
    log.info("%d tools at %s (%s)%s", len(TOOLS), url, _scope(settings),
             "; bearer token required" if token else "")
    # no uvicorn logging config: its access log would go to stdout
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])
