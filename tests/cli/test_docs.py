"""Every command is documented in README.md and answers --help (as sqlite-utils' test_docs)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import typer
from helpers import run_cli

from vance_cli.cli.app import app
from vance_cli.cli.boundary import subcommand

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _commands() -> list[tuple[str, ...]]:
    root = typer.main.get_command(app)
    found: list[tuple[str, ...]] = []
    for name in root.list_commands(click.Context(root)):  # type: ignore[attr-defined]
        group = subcommand(root, name)
        if isinstance(group, click.Group):
            found += [(name, sub) for sub in group.list_commands(click.Context(group))]
        else:
            found.append((name,))
    return found


@pytest.mark.parametrize("command", _commands(), ids=" ".join)
def test_command_is_in_readme_and_has_help(command: tuple[str, ...]) -> None:
    assert "vance " + " ".join(command) in README
    result = run_cli([*command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.stdout
