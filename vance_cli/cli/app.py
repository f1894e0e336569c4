"""The ``vance`` Typer app: global options, and one sub-app per command group."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import typer

from vance_cli import __version__
from vance_cli.cli import catalog, config, process, recipe, wizard
from vance_cli.cli import delegate as delegate_cmd
from vance_cli.cli import log as log_cmd
from vance_cli.cli import shell as shell_cmd

app = typer.Typer(
    name="vance",
    help="Delegate tasks to the right recipe of an LLM think system, and fill prompt wizards.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


@dataclass
class GlobalOptions:
    """Values of the global flags, kept on ``ctx.obj`` until a command builds its workspace."""

    home: str | None = None
    flags: dict[str, str | None] = field(default_factory=dict)
    debug: bool = False


def _version(value: bool) -> None:
    if value:
        typer.echo(f"vance {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    home: Annotated[str | None, typer.Option(
        help="Folder for config, data and state (else VANCE_HOME, else platform dirs).",
        metavar="DIR")] = None,
    tenant: Annotated[str | None, typer.Option(help="Tenant id (VANCE_TENANT).")] = None,
    project: Annotated[str | None, typer.Option(
        help="Project id (VANCE_PROJECT); '_tenant' for none.")] = None,
    user: Annotated[str | None, typer.Option(help="User name (VANCE_USER).")] = None,
    session: Annotated[str | None, typer.Option(help="Session id (VANCE_SESSION).")] = None,
    lang: Annotated[str | None, typer.Option(help="Language, e.g. de or en (VANCE_LANG).")] = None,
    debug: Annotated[bool, typer.Option(
        "--debug", help="Show tracebacks of unexpected errors.")] = False,
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Show the version and exit.")] = False,
) -> None:
    """vance: say what you need; the selector picks the recipe and starts the process."""
    ctx.obj = GlobalOptions(
        home=home,
        flags={"tenant": tenant, "project": project, "user": user, "session": session,
               "lang": lang},
        debug=debug,
    )


app.command("delegate")(delegate_cmd.command)
app.command("log")(log_cmd.command)
app.command("shell")(shell_cmd.command)
app.add_typer(config.app, name="config")
app.add_typer(recipe.app, name="recipe")
app.add_typer(catalog.app, name="catalog")
app.add_typer(process.app, name="process")
app.add_typer(wizard.app, name="wizard")
