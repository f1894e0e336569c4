"""Human output on a real terminal: untrusted text is shown visibly, tables stay readable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import run_cli
from llm_server import ScriptedLLMServer
from terminal import finish, spawn_vance

pytestmark = pytest.mark.e2e

STYLE = re.compile(r"\x1b\[\??[0-9;]*[a-zA-Z]")
"""Rich's own terminal codes (styles, the spinner's cursor moves)."""


def _screen(args: list[str], home: Path, tmp_path: Path, columns: int = 80,
            env: dict[str, str] | None = None) -> str:
    log = tmp_path / "terminal.log"
    log.unlink(missing_ok=True)
    child = spawn_vance(args, env={"VANCE_HOME": str(home), **(env or {})},
                        dimensions=(50, columns), log=log)
    status, text = finish(child)
    assert status == 0, text
    return text


def test_log_shows_a_task_with_escape_sequences_visibly(vance_home: Path,
                                                         tmp_path: Path) -> None:
    task = "Translate \x1b[31mthis red text\x1b[0m into French"
    assert run_cli(["delegate", "--task", task, "--dry-run"]).exit_code == 0
    # wide enough that a slow decision's latency (more digits) never cuts the task column
    text = _screen(["log"], vance_home, tmp_path, columns=140)
    assert "\x1b[31mthis" not in text and "red text\x1b[0m" not in text
    assert "Translate ␛[31" in text


def test_delegate_shows_an_llm_rationale_with_escape_sequences_visibly(
        llm_server: ScriptedLLMServer, vance_home: Path, tmp_path: Path) -> None:
    llm_server.reply('{"decision": "MATCH", "recipe": "translate",'
                     ' "rationale": "It \\u001b[31mtranslates\\u001b[0m \\u009b2J."}')
    text = _screen(["delegate", "--task", "Help me with the thing", "--dry-run"], vance_home,
                   tmp_path, env=llm_server.env())
    assert "\x1b[31mtranslates" not in text and "\x9b" not in text
    assert "It ␛[31mtranslates␛[0m \\x9b2J." in text


def test_log_shows_a_multi_line_task_on_one_line(vance_home: Path, tmp_path: Path) -> None:
    task = "Translate this\ninto French\n\nand German\n" + "more lines\n" * 15
    assert run_cli(["delegate", "--task", task, "--dry-run"]).exit_code == 0
    text = STYLE.sub("", _screen(["log"], vance_home, tmp_path, columns=120))
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) == 1, text
    assert "Translate this ⏎ into French ⏎ and German ⏎ more" in rows[0]
    assert rows[0].rstrip().endswith("… │")


def test_recipe_list_keeps_identifiers_whole_at_80_columns(vance_home: Path,
                                                            tmp_path: Path) -> None:
    text = STYLE.sub("", _screen(["recipe", "list"], vance_home, tmp_path, columns=80))
    assert "council-three-perspectives " in text
    assert all(len(line) <= 80 for line in text.splitlines())
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) == len(run_cli(["recipe", "list", "--json"]).json())  # one line each
    assert re.search(r"\b\d+ recipes\b", text)  # the caption, on the terminal
