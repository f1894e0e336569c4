"""``vance tools list | add | rm``: the built-in tools and the MCP servers that give tools.

``vance mcp`` stays the server vance is; these are servers vance uses
(docs/tools.md#mcp-servers-as-tool-sources).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vance_cli.base.errors import EXIT_RUNTIME
from vance_cli.cli import context, output
from vance_cli.tools import sources
from vance_cli.tools.registry import BUILTIN, builtin

app = typer.Typer(help="List the tools a recipe can allow; add and remove MCP servers as tool "
                       "sources.", no_args_is_help=True, add_completion=False)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]


def _first_sentence(text: str) -> str:
    head = text.strip().split(". ", 1)[0]
    return head if head.endswith(".") else head + "."


@app.command("list")
def list_(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List the built-in tools and what each configured MCP server offers (each is asked)."""
    paths = context.paths(ctx)
    rows: list[dict[str, Any]] = []
    for name in BUILTIN:
        tool = builtin(name)
        rows.append({"name": tool.name, "source": "builtin", "label": tool.label.value,
                     "description": _first_sentence(tool.description)})
    failed = False
    for server in sources.servers(paths).values():
        try:
            offered = sources.server_tools(paths, server.name)
        except sources.SourceError as exc:
            failed = True
            rows.append({"name": f"{server.name}.*", "source": server.where, "label": "",
                         "description": f"unavailable: {exc.message}"})
            continue
        rows += [{"name": t.name, "source": server.where, "label": "ask",
                  "description": _first_sentence(t.description)} for t in offered]
    if as_json:
        output.emit_json(rows)
    else:
        output.table(None, ("name", "label", "source", "description"),
                     ((r["name"], r["label"], r["source"], r["description"]) for r in rows),
                     caption=f"{len(rows)} tools", text=("description",))
    if failed:
        raise typer.Exit(EXIT_RUNTIME)


@app.command("add")
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The server's name: its tools are NAME.tool.")],
    command: Annotated[list[str] | None, typer.Argument(
        metavar="-- COMMAND [ARGS]...", help="A stdio server: the program and its arguments, "
        "after --.")] = None,
    url: Annotated[str | None, typer.Option(
        "--url", help="A streamable HTTP server's URL instead of a command.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Add an MCP server as a tool source (config tools.servers.NAME).

    A recipe allows its tools with allowedTools: [NAME.*] or NAME.tool; each call asks
    unless a rule allows it.
    """
    argv = list(command or ())
    if argv[:1] == ["--"]:
        argv = argv[1:]
    server = sources.add_server(context.paths(ctx), name, tuple(argv), url or "")
    if as_json:
        output.emit_json({"name": server.name, "command": list(server.command),
                          "url": server.url})
        return
    output.fields([("added", server.name), ("reached", server.where),
                   ("use", f"allowedToolsAdd: [{server.name}.*] in a recipe's params, or"
                           f" --param 'allowedToolsAdd:=[\"{server.name}.*\"]'")])


@app.command("rm")
def rm(ctx: typer.Context,
       name: Annotated[str, typer.Argument(help="The server's name.")],
       as_json: JsonFlag = False) -> None:
    """Remove an MCP server from the config (exit 1 when none has that name)."""
    removed = sources.remove_server(context.paths(ctx), name)
    if as_json:
        output.emit_json({"name": name, "removed": removed})
    elif removed:
        output.say(f"removed MCP server '{name}'")
    else:
        output.error(f"no MCP server '{name}' is configured")
    if not removed:
        raise typer.Exit(EXIT_RUNTIME)
