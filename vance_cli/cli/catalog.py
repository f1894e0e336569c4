"""``vance catalog show | validate | reload``: the engine catalog (DESIGN.md §7)."""

from __future__ import annotations

from typing import Annotated

import typer

from vance_cli.cli import context, output

app = typer.Typer(help="Show, validate and reload the engine catalog.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]


@app.command("show")
def show(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Show the active engine catalog and which file it came from."""
    catalog = context.workspace(ctx).catalog()
    if as_json:
        output.emit_json(catalog.to_json())
        return
    since = f" since {catalog.activated_at}" if catalog.activated_at else ""
    output.table(None, ("engine", "purpose", "when to use", "not for"),
                 ((e.name, e.purpose, e.when_to_use, e.not_for)
                  for e in catalog.engines.values()),
                 caption=f"active catalog: {catalog.source}{since}")
