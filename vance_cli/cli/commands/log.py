"""``vance log``: the selector's decision log, newest first (docs/delegate.md)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from vance_cli.base.wording import counted
from vance_cli.cli import context, output
from vance_cli.state.decision_log import recent

app = typer.Typer(add_completion=False)
"""The ``vance log`` command (loaded on demand by ``cli.app``)."""


@app.command("log")
def command(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(
        "-n", "--limit", min=1, help="Show the newest N decisions.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Show the selector's decision log (this tenant, all sessions), newest first."""
    ws = context.workspace(ctx)
    entries = recent(ws.db, ws.settings.tenant, limit)
    if as_json:
        output.emit_json([e.to_json() for e in entries])
        return
    # piped rows keep one column count (cut -f works); a terminal drops an empty model column
    with_model = any(e.model for e in entries) or not sys.stdout.isatty()
    columns = ("id", "time (UTC)", "mode", "decision", "recipe/reason",
               *(("model",) if with_model else ()), "ms", "task")
    rows = ((e.id, e.created_at, e.mode, e.decision,
             e.recipe or e.reason, *((e.model or "",) if with_model else ()),
             f"{e.latency_ms:.0f}" if e.latency_ms is not None else "",
             e.task if e.task is not None else f"(private: sha256 {e.task_hash[:12]}…)")
            for e in entries)
    output.table(None, columns, rows, caption=counted(len(entries), "decision"),
                 one_line=("task",), times=("time (UTC)",))
