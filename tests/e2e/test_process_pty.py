"""``vance process`` on a real terminal: the table at 80 columns, the removal question."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import run_cli
from terminal import Key, finish, spawn_vance

pytestmark = pytest.mark.e2e

LONG = "a-process-with-a-rather-long-generated-name-1b2c3d"


def _screen(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_at_80_columns_every_id_stays_whole(tmp_path: Path) -> None:
    ids = []
    for session, recipe in (("default", "waterfall-feature"),
                            ("a-rather-long-session-name", "essay-pipeline")):
        made = run_cli(["--session", session, "process", "create", "--recipe", recipe,
                        "--name", LONG, "--json"]).json()
        assert run_cli(["--session", session, "process", "stop", made["id"]]).exit_code == 0
        ids.append(made["id"])
    child = spawn_vance(["process", "list", "--all-sessions"], dimensions=(40, 80),
                        env={"NO_COLOR": "1"}, log=tmp_path / "pty.log")
    status, log = finish(child)
    assert status == 0
    lines = _screen(log).splitlines()
    assert all(len(line.rstrip("\r")) <= 80 for line in lines)
    for ident in ids:
        assert any(ident in line for line in lines), log


@pytest.mark.parametrize(("lang", "key", "left"), [("de", "j", 0), ("de", "n", 1),
                                                    ("en", "y", 0)])
def test_prune_asks_on_a_terminal(tmp_path: Path, lang: str, key: str, left: int) -> None:
    run_cli(["process", "create", "--recipe", "coding", "--name", "old", "--json"])
    assert run_cli(["process", "stop", "old"]).exit_code == 0
    child = spawn_vance(["--lang", lang, "process", "prune"], env={"NO_COLOR": "1"},
                        log=tmp_path / "pty.log")
    child.expect("1 geschlossenen Prozess entfernen" if lang == "de"
                 else r"Remove 1 closed process\?")
    child.expect(r"\((j|y)/N\)")
    child.send(key + Key.ENTER)
    status, log = finish(child)
    assert status == 0  # "no" is an answer, not a Ctrl-C (130)
    assert "old" in _screen(log).split("(j/N)" if lang == "de" else "(y/N)")[0]  # listed first
    if left:
        assert "nothing removed" in log
    assert len(run_cli(["process", "list", "--json"]).json()) == left


def test_list_indents_children_under_their_parent(tmp_path: Path) -> None:
    parent = run_cli(["process", "create", "--recipe", "essay-pipeline", "--name", "essay",
                      "--json"]).json()["id"]
    run_cli(["process", "create", "--recipe", "coding", "--name", "outline", "--parent",
             parent, "--json"])
    child = spawn_vance(["process", "list"], env={"NO_COLOR": "1"}, log=tmp_path / "pty.log")
    status, log = finish(child)
    assert status == 0
    lines = _screen(log).splitlines()
    at = next(i for i, line in enumerate(lines) if " essay " in line)
    assert "│ └ outline " in lines[at + 1], log
