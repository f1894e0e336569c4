"""docs/wizards.md documents every wizard command, and its example wizard loads."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import run_cli

README = (Path(__file__).resolve().parents[2] / "docs" / "wizards.md").read_text(encoding="utf-8")


def test_every_wizard_command_has_a_readme_example() -> None:
    section = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    for command in ("list", "show", "run", "render", "open", "lint"):
        assert re.search(rf"^vance .*wizard {command}\b", section, re.M), command


def test_readme_example_wizard_loads_and_renders(tmp_path: Path) -> None:
    section = README.split("## Format", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0].replace("…", "text")
    path = tmp_path / "example.yaml"
    path.write_text(example, encoding="utf-8")
    lint = run_cli(["wizard", "lint", str(path), "--json"])
    assert lint.exit_code == 0, lint.stdout


def test_readme_error_code_table_matches_the_code() -> None:
    from vance_cli.wizards.validate import ErrorCode

    documented = set(re.findall(r"^\| `(\w+)`(?: / `(\w+)`)? \|", README, re.M))
    names = {n for pair in documented for n in pair if n}
    assert {c.value for c in ErrorCode} <= names
