"""``vance worker``: run a team's turns on this host (docs/teams.md#vance-worker)."""

from __future__ import annotations

from typing import Annotated

import typer

from vance_cli.base.config import mask_url
from vance_cli.base.errors import InputError
from vance_cli.cli import context, output
from vance_cli.processes.launcher import home_of
from vance_cli.state.stores import open_state
from vance_cli.team_worker import serve

app = typer.Typer(add_completion=False)
"""The ``vance worker`` command (loaded on demand by ``cli.app``)."""

CONCURRENCY_MAX = 64
"""Most turns one worker runs at once."""


@app.command("worker")
def command(
    ctx: typer.Context,
    concurrency: Annotated[int, typer.Option(
        "--concurrency", "-c", min=1, max=CONCURRENCY_MAX,
        help="Turns this host runs at once.")] = 4,
) -> None:
    """Run a team's queued turns on this host until Ctrl-C (state.url: PostgreSQL)."""
    settings = context.settings(ctx)
    if not settings.team:
        raise InputError("vance worker runs a team's turns: set state.url to the team's"
                         " PostgreSQL server; on one machine every command starts its own"
                         " worker", key="state.url")
    open_state(settings.state_target).close()  # unreachable or unmigrated: say so first
    home = home_of(settings.paths)
    where = mask_url(str(settings.state_target))
    code = serve(settings, None if home is None else str(home), concurrency,
                 on_ready=lambda line: output.warn(f"{line}, state {where}"))
    raise typer.Exit(code)
