"""MCP servers as tool sources: their config (``tools.servers`` of the config file).

``vance tools add NAME -- COMMAND ARGS…`` writes ``tools.servers.NAME.command``
(a list: the program and its arguments, run over stdio), ``--url URL``
writes ``tools.servers.NAME.url`` (streamable HTTP). A server's tools are
``NAME.tool``; the SDK (the ``mcp`` extra) is loaded only when a configured
server is asked (``tools.mcp_source``). Rule: docs/tools.md#mcp-servers-as-tool-sources
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.base import files, yamlio
from vance_cli.base.errors import VanceError
from vance_cli.base.records import frozen
from vance_cli.tools import mcp_source
from vance_cli.tools.tool import Tool

if TYPE_CHECKING:
    from vance_cli.base.paths import Paths

SERVER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")
"""A server's name: a letter, then letters, digits, ``_``, ``-`` (no dot: tools are NAME.tool)."""


class SourceError(VanceError):
    """An MCP server cannot be configured, started or asked."""

    code = "tool_source_error"


@frozen
class Server:
    """One configured MCP server.

    Attributes:
        name: its name (tools are ``name.tool``).
        command: the program and arguments of a stdio server (empty for HTTP).
        url: a streamable HTTP server's URL ("" for stdio).
    """

    name: str
    command: tuple[str, ...] = ()
    url: str = ""

    @property
    def where(self) -> str:
        """How it is reached, for people (``stdio: cmd args`` or the URL)."""
        return self.url if self.url else "stdio: " + " ".join(self.command)


def _section(data: Mapping[str, Any]) -> dict[str, Any]:
    tools = data.get("tools")
    servers = tools.get("servers") if isinstance(tools, Mapping) else None
    return dict(servers) if isinstance(servers, Mapping) else {}


def servers(paths: Paths) -> dict[str, Server]:
    """Return the configured servers by name (malformed entries left out).

    Raises:
        DocumentError: the config file is not valid YAML.
    """
    path = paths.config_file
    data = yamlio.load_mapping(path) if path.is_file() else {}
    found: dict[str, Server] = {}
    for name, entry in _section(data).items():
        if not isinstance(entry, Mapping):
            continue
        command = entry.get("command")
        url = entry.get("url")
        if isinstance(command, list) and command:
            found[str(name)] = Server(str(name), tuple(str(c) for c in command))
        elif isinstance(url, str) and url:
            found[str(name)] = Server(str(name), url=url)
    return found


def add_server(paths: Paths, name: str, command: Sequence[str] = (), url: str = "") -> Server:
    """Write a server into the config file (replacing one of that name).

    Raises:
        SourceError: a bad name, or neither or both of ``command`` and ``url``.
    """
    if not SERVER_NAME.match(name):
        raise SourceError(f"'{name}' is not a valid server name (a letter, then letters,"
                          " digits, '_' or '-')")
    if bool(command) == bool(url):
        raise SourceError("give either a command (after --) or --url, not both")
    if url and not re.match(r"^https?://", url):
        raise SourceError(f"--url must be an http(s) URL, not '{url}'")
    path = paths.config_file
    data: dict[str, Any] = yamlio.load_mapping(path) if path.is_file() else {}
    tools = data.setdefault("tools", {})
    if not isinstance(tools, dict):
        raise SourceError(f"{path}: 'tools' is not a mapping")
    section = tools.setdefault("servers", {})
    if not isinstance(section, dict):
        raise SourceError(f"{path}: 'tools.servers' is not a mapping")
    section[name] = {"command": list(command)} if command else {"url": url}
    path.parent.mkdir(parents=True, exist_ok=True)
    files.atomic_write_text(path, yamlio.dumps(data), mode=0o600)
    return servers(paths)[name]


def remove_server(paths: Paths, name: str) -> bool:
    """Remove a server from the config file; False when none had that name."""
    path = paths.config_file
    if not path.is_file():
        return False
    data = yamlio.load_mapping(path)
    tools = data.get("tools")
    section = tools.get("servers") if isinstance(tools, dict) else None
    if not isinstance(section, dict) or name not in section:
        return False
    del section[name]
    if not section:
        del tools["servers"]  # type: ignore[union-attr]
    if isinstance(tools, dict) and not tools:
        del data["tools"]
    files.atomic_write_text(path, yamlio.dumps(data), mode=0o600)
    return True


def server_tools(paths: Paths, name: str) -> list[Tool]:
    """Start (or reach) server ``name`` and return its tools as ``name.tool``.

    Raises:
        SourceError: no such server, the SDK is missing, or the server cannot be asked.
    """
    server = servers(paths).get(name)
    if server is None:
        raise SourceError(f"no MCP server '{name}' is configured ('vance tools add {name} --"
                          " COMMAND' adds one)")
    try:
        return mcp_source.list_tools(server.name, server.command, server.url)
    except mcp_source.SourceUnavailable as exc:
        raise SourceError(f"MCP server '{name}': {exc}") from None
