"""The reference pages say what the code does: settings, the engine catalog, the shell.

Each test reads one table or text of docs/ and the value in the code it describes, so a new
setting, a catalog claim or a shell command cannot go undocumented (or documented wrong).
"""

from __future__ import annotations

import re

import pytest
import yaml
from helpers import REPO, run_cli

from vance_cli.base.config import KEYS
from vance_cli.catalog.model import bundled_catalog as load_bundled_catalog
from vance_cli.cli.shell.commands import COMMANDS as SLASH_COMMANDS
from vance_cli.engines.registry import BUNDLED, EngineRegistry

DOCS = REPO / "docs"


def _config_table() -> dict[str, list[str]]:
    """The Keys table of docs/configuration.md: key → its env variables, in order."""
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    section = text.split("## Keys", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w.]+)` \| ([^|]*) \|", section, re.MULTILINE)
    return {key: re.findall(r"`(\w+)`", env) for key, env in rows}


def test_the_config_table_lists_every_key_config_show_prints_with_its_env() -> None:
    shown = list(run_cli(["config", "show", "--json"]).json())
    table = _config_table()
    assert list(table) == shown
    for spec in KEYS:
        assert table[spec.key] == [*spec.env, *spec.fallback_env], spec.key


TOOL_CLAIMS = re.compile(
    r"\b(with tools|tools \(|shell|code execution|execut\w* (?:code|scripts?|programs?|"
    r"commands?)|run (?:a |the )?(?:script|code|program)s?|browses?|web access|"
    r"open(?:s)? (?:the person's )?files)\b", re.IGNORECASE)
"""What claims a tool in a catalog text. Saying that an engine has none uses other words
("It has no tools: it does not browse …" is checked without its negations)."""

NEGATIONS = re.compile(r"(?:has no tools|does not|cannot|never)[^.:]*[.:]?", re.IGNORECASE)
"""A sentence part that denies a tool: taken out before the claims are looked for."""


@pytest.mark.parametrize("engine", sorted(load_bundled_catalog().names))
def test_the_bundled_catalog_claims_only_the_tools_an_engine_registers(engine: str) -> None:
    entry = load_bundled_catalog().engines[engine]
    text = " ".join((entry.purpose, entry.when_to_use, entry.not_for))
    registered = EngineRegistry().get(engine)
    tools = registered.tools if registered is not None else ()
    claims = TOOL_CLAIMS.findall(NEGATIONS.sub(" ", text))
    assert tools or not claims, f"{engine} registers no tools but the catalog says {claims}"


def test_every_catalog_engine_has_code_and_ford_says_what_its_tools_do() -> None:
    catalog = load_bundled_catalog()
    assert sorted(catalog.names) == sorted(BUNDLED)
    ford = EngineRegistry().get("ford")
    assert ford is not None and set(ford.tools) == {"files", "code", "web"}
    purpose = catalog.engines["ford"].purpose
    assert "no tools" not in purpose and "runs Python code" in purpose
    text = (DOCS / "engines.md").read_text(encoding="utf-8")
    assert "**no tools**" not in text and "**acts through tools**" in text


@pytest.mark.parametrize(("recipe", "tools"), [
    ("code-read", ["read_file", "list_files", "search_files"]),
    ("coding", ["read_file", "list_files", "search_files", "write_file"]),
    ("python", ["run_python"]), ("web-research", ["fetch_url"])])
def test_the_bundled_recipes_allow_the_tools_their_descriptions_promise(
        recipe: str, tools: list[str]) -> None:
    data = yaml.safe_load((REPO / "catalog" / "recipes" / f"{recipe}.yaml").read_text())
    assert data["params"]["allowedTools"] == tools
    assert "does not run it" not in data["description"]
    assert "no live web access" not in data["description"]


def test_the_shell_page_covers_every_slash_command_and_the_conversation() -> None:
    from vance_cli.cli.app import load_command

    text = (DOCS / "shell.md").read_text(encoding="utf-8")
    table = text.split("## Slash commands", 1)[1].split("\n## ", 1)[0]
    for command in SLASH_COMMANDS:
        assert f"`/{command.name}" in table, command.name
    process_row = next(line for line in table.splitlines() if line.startswith("| `/process"))
    group = load_command("process")
    for sub in group.commands:  # type: ignore[attr-defined]
        assert re.search(rf"(?:/process |\\\| ){sub}\b", process_row.split("` |")[0]), sub
    assert "## Conversation" in text and "listens" in text
