"""The ``vance`` Typer app: global options, and one sub-app per command group."""

# No ``from __future__ import annotations``: Typer reads the global options' annotations on
# every run, and string ones cost an eval each (docs/decisions/0012-startup-path.md).
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

import click
import typer
from typer.core import TyperGroup

from vance_cli import __version__
from vance_cli.base.errors import Cancelled
from vance_cli.base.records import frozen


@frozen
class Entry:
    """One command of ``vance``: the module that defines it, and its line in ``vance --help``.

    Attributes:
        module: dotted module with a Typer ``app`` (a group, or a single command).
        summary: the command's one-line help (a test keeps it equal to the module's).
    """

    module: str
    summary: str


COMMANDS: Mapping[str, Entry] = {
    "delegate": Entry("vance_cli.cli.commands.delegate", "Pick the recipe for a task (or NONE) "
                      "and start a process for it; or one per item."),
    "log": Entry("vance_cli.cli.commands.log",
                 "Show the selector's decision log (this tenant, all sessions), newest first."),
    "shell": Entry("vance_cli.cli.shell.command", "Interactive session: plain text goes to the "
                   "selector, /help lists slash commands."),
    "config": Entry("vance_cli.cli.commands.config",
                    "Show and change settings (config file, env, flags)."),
    "recipe": Entry("vance_cli.cli.commands.recipe",
                    "List and show recipes (the selector's inventory)."),
    "catalog": Entry("vance_cli.cli.commands.catalog",
                     "Show, validate and reload the engine catalog."),
    "process": Entry("vance_cli.cli.commands.process", "Create, list, inspect, wait for and stop "
                     "processes; read their events."),
    "wizard": Entry("vance_cli.cli.commands.wizard",
                    "List, show, run and render prompt wizards."),
    "model": Entry("vance_cli.cli.commands.model",
                   "Start, show and stop the local model server (llm.local_model)."),
    "migrate": Entry("vance_cli.cli.commands.migrate",
                     "Bring the state database's schema up to date (a team's PostgreSQL too)."),
    "worker": Entry("vance_cli.cli.commands.worker",
                    "Run a team's queued turns on this host until Ctrl-C (state.url: PostgreSQL)."),
    "mcp": Entry("vance_cli.cli.commands.mcp", "Serve process_create_delegate and the process, "
                 "recipe and wizard tools over MCP (stdio)."),
    "tools": Entry("vance_cli.cli.commands.tools", "List the tools a recipe can allow; add and "
                   "remove MCP servers as tool sources."),
}
"""Every command of ``vance``, in ``--help`` order. A command's module is imported only when
that command runs (click's lazy sub-commands): ``vance --help`` and ``vance delegate`` never
load the wizard, shell or prompt libraries (docs/decisions/0003-imports.md)."""


class LazyGroup(TyperGroup):
    """The root group: lists ``COMMANDS`` and imports a command's module when it is resolved."""

    listing = False
    """True while the help text is formatted: commands are then shown from their summaries."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Return the command names in ``COMMANDS`` order."""
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Return the command ``cmd_name``: loaded from its module, or a summary for ``--help``.

        Returns:
            None for an unknown name (click then reports "No such command").
        """
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        if cmd_name not in self.commands:
            if self.listing:
                return click.Command(cmd_name, help=entry.summary)
            self.commands[cmd_name] = load_command(cmd_name)
        return self.commands[cmd_name]

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        """Resolve the command word; an unknown one names the close ``COMMANDS`` (did you mean).

        Raises:
            click.exceptions.NoSuchCommand: no such command, with its close names.
        """
        if args and args[0] not in COMMANDS and not args[0].startswith("-") \
                and not ctx.resilient_parsing:
            raise click.exceptions.NoSuchCommand(args[0], possibilities=list(COMMANDS), ctx=ctx)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; Ctrl-C becomes ``Cancelled`` (the boundary says "cancelled", 130).

        Typer's ``main`` would turn a KeyboardInterrupt into a silent exit 130,
        so a Ctrl-C during a long wait (the selector, Slartibartfast) said nothing.
        """
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Cancelled() from None

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Format the root help from ``COMMANDS`` (no command module is imported)."""
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


def load_command(name: str) -> click.Command:
    """Import the module of command ``name`` and return its Click command, named ``name``.

    Raises:
        KeyError: ``name`` is not in ``COMMANDS``.
    """
    module: Any = importlib.import_module(COMMANDS[name].module)
    command = typer.main.get_command(module.app)
    command.name = name
    _argument_labels(command)
    return command


def _argument_labels(command: click.Command) -> None:
    """Show each argument in help by its metavar alone (``ID``, ``[TASK]``) and with its help.

    Typer's help lists an argument under its Python parameter name and then
    its metavar; where the two differ (``instruction`` / ``[TASK]``) the name
    is an implementation detail, so it is left out (an argument's ``opts`` is
    read by help only). Where they agree (``name`` / ``NAME``) both stay, as
    Typer then shows the type in the metavar's place. Click 8.4's
    ``Argument`` resets the help text Typer 0.25 gives it; it is read back
    from the command's signature when the help is shown (not on every run).
    """
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    for param in arguments:
        if param.metavar is not None and param.name is not None \
                and param.metavar != param.name.upper():
            param.opts = []
    if any(getattr(p, "help", None) is None for p in arguments) and command.callback:
        _restore_help_when_shown(command, arguments)
    for sub in getattr(command, "commands", {}).values():
        _argument_labels(sub)


def _restore_help_when_shown(command: click.Command, arguments: list[click.Argument]) -> None:
    """Wrap ``command.format_help`` so it first sets each argument's help from the signature."""
    format_help = command.format_help

    def with_argument_help(ctx: click.Context, formatter: click.HelpFormatter) -> None:
        function: Any = getattr(command.callback, "__wrapped__", command.callback)
        infos = typer.utils.get_params_from_function(function)
        for param in arguments:
            info = infos.get(param.name or "")
            if info is not None and getattr(param, "help", None) is None:
                param.help = getattr(info.default, "help", None)
        format_help(ctx, formatter)

    command.format_help = with_argument_help  # type: ignore[method-assign]


app = typer.Typer(
    name="vance",
    cls=LazyGroup,
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

