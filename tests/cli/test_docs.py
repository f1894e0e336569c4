"""Every command is documented in README.md and answers --help (as sqlite-utils' test_docs).

The README and the pages in docs/ link to each other: every relative link
must point to a file that exists, and a ``#anchor`` to one of its headings.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
import typer
from helpers import run_cli

from vance_cli.cli.app import app
from vance_cli.cli.boundary import subcommand

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

README_MAX_LINES = 250
TWO_COMMANDS = [
    "```sh",
    'python3 -m venv .venv && . .venv/bin/activate && pip install . && vance delegate --task '
    '"Write a short essay about the history of tea"',
    "python3 -m venv .venv && . .venv/bin/activate && pip install '.[test]' && pytest",
    "```",
]


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


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    lines = README.splitlines()
    assert len(lines) <= README_MAX_LINES
    assert lines[0] == "# vance"
    assert lines[2:6] == TWO_COMMANDS  # CI runs these two lines: keep them byte-identical


_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _prose(text: str) -> list[str]:
    """Return the lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def _anchors(path: Path) -> set[str]:
    """Return the heading anchors of a Markdown file, as GitHub makes them."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in _prose(path.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(2).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def _links(path: Path) -> list[str]:
    """Return the link targets of a Markdown file, outside code blocks and code spans."""
    targets: list[str] = []
    for line in _prose(path.read_text(encoding="utf-8")):
        targets += _LINK.findall(re.sub(r"`[^`]*`", "", line))
    return targets


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_files_and_headings(page: Path) -> None:
    broken: list[str] = []
    for target in _links(page):
        if _SCHEME.match(target):
            continue  # https:, mailto:, vance: …
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading '#{anchor}' in {linked.name}")
    assert broken == []


def test_docs_pages_exist_and_are_linked_from_the_index() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    pages = {p.name for p in PAGES if p.parent.name == "docs" and p.name != "README.md"}
    assert pages, "docs/*.md is empty"
    assert {name for name in pages if f"]({name})" not in index} == set()
