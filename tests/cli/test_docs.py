"""Every command is documented in README.md and answers --help (as sqlite-utils' test_docs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from helpers import run_cli

from vance_cli.cli.app import app

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _commands() -> list[tuple[str, ...]]:
    root = typer.main.get_command(app)
    found: list[tuple[str, ...]] = []
    for name, group in root.commands.items():  # type: ignore[attr-defined]
        subs = getattr(group, "commands", None)
        if subs:
            found += [(name, sub) for sub in subs]
        else:
            found.append((name,))
    return found


@pytest.mark.parametrize("command", _commands(), ids=" ".join)
def test_command_is_in_readme_and_has_help(command: tuple[str, ...]) -> None:
    assert "vance " + " ".join(command) in README
    result = run_cli([*command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.stdout
