"""``vance shell``: the command itself, light; the REPL and its libraries load when it runs."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

app = typer.Typer(add_completion=False)
"""The ``vance shell`` command (loaded on demand by ``cli.app``)."""


@app.command("shell")
def command(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Every task only decides; no process is started.")] = False,
) -> None:
    """Interactive session: plain text goes to the selector, /help lists slash commands.

    With stdin not a terminal, reads its lines as a script and stops at the
    first failing line (its exit code is the shell's).
    """
    from vance_cli.cli.shell import repl  # heavy: prompt_toolkit and the wizard stack
    from vance_cli.cli.shell.dispatch import Shell  # heavy: the wizard stack

    interactive = sys.stdin.isatty()
    opts = ctx.find_root().obj
    shell = Shell(ctx, dry_run=dry_run, interactive=interactive,
                  debug=bool(getattr(opts, "debug", False)))
    code = (repl.run_interactive(shell) if interactive
            else repl.run_script(shell, repl.script_lines()))
    if code:
        raise typer.Exit(code)

