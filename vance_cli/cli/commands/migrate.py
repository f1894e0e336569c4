"""``vance migrate``: apply the state database's pending migrations (docs/teams.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from vance_cli.cli import context, output
from vance_cli.state.stores import migrate_state

app = typer.Typer(add_completion=False)
"""The ``vance migrate`` command (loaded on demand by ``cli.app``)."""


@app.command("migrate")
def command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Bring the state database's schema up to date (a team's PostgreSQL too)."""
    settings = context.settings(ctx)
    label, applied = migrate_state(settings.state_target)
    if as_json:
        output.emit_json({"database": label, "applied": applied})
        return
    if applied:
        output.say(f"state database {label}: applied {', '.join(applied)}")
    else:
        output.say(f"state database {label}: up to date")
