"""``vance model start | status | stop``: the local model server of ``llm.local_model``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vance_cli import local_model
from vance_cli.base.errors import LocalModelError
from vance_cli.cli import context, output

app = typer.Typer(help="Start, show and stop the local model server (llm.local_model).",
                  no_args_is_help=True, add_completion=False)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]


def _pairs(server: local_model.Server, state: str) -> list[tuple[str, Any]]:
    return [("state", state), ("model", server.model), ("endpoint", server.base_url),
            ("pid", server.pid), ("context", server.context)]


@app.command("start")
def start(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Start the server for llm.local_model now (commands start it on demand anyway)."""
    settings = context.settings(ctx)
    if not settings.llm_local_model:
        raise LocalModelError("no local model configured (set llm.local_model)")
    server = local_model.ensure_server(settings)
    if as_json:
        output.emit_json({"state": "running", **server.to_json()})
        return
    output.fields(_pairs(server, "running"))
    if settings.llm_base_url:
        output.warn("llm.base_url is set: LLM calls go there, not to this server")


@app.command("status")
def status(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Show the recorded server: running, not answering, gone, or none."""
    paths = context.paths(ctx)
    server, state = local_model.server_status(paths)
    if as_json:
        output.emit_json({"state": state, **(server.to_json() if server else {}),
                          "log": str(local_model.log_file(paths))})
        return
    if server is None:
        output.say("no local model server is recorded")
        return
    output.fields([*_pairs(server, state), ("log", local_model.log_file(paths))])


@app.command("stop")
def stop(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Stop the local model server and forget it (exit 0 when none was running)."""
    server, running = local_model.stop_server(context.paths(ctx))
    if as_json:
        output.emit_json({"stopped": running, **(server.to_json() if server else {})})
        return
    if server is None:
        output.info("no local model server was running")
    elif not running:
        output.info(f"the local model server (pid {server.pid}) had already exited;"
                    " removed its record")
    else:
        output.info(f"stopped the local model server (pid {server.pid}, {server.base_url})")
