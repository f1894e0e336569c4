"""The quick-start cards of an empty ``vance shell`` session, in a real pty (docs/shell.md)."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest
from terminal import ANSI, Key, finish, spawn_vance

from vance_cli.wizards.cards import record_use
from vance_cli.workspace import Workspace

pytestmark = pytest.mark.e2e

PROMPT = "vance>"


def _spawn(tmp_path: Path) -> pexpect.spawn:
    return spawn_vance(["shell"], env={"NO_COLOR": "1"}, cwd=tmp_path, log=tmp_path / "pty.log")


def test_cards_show_grouped_a_number_opens_one_and_they_come_back_with_slash_wizards(
        tmp_path: Path) -> None:
    child = _spawn(tmp_path)
    child.expect("Quick start")
    child.expect("Collaboration")           # categories in the listing's order
    child.expect(r"\[1\] " + ANSI + "Define an advisory council")
    child.expect("gremium")
    child.expect("Writing")
    child.expect("/wizards shows these cards again")
    child.expect(PROMPT)
    child.send("1" + Key.ENTER)              # the card's number opens its wizard
    child.expect("The council — step 1 of 3")
    child.expect("Council name")
    child.send(Key.CTRL_C)
    child.expect("cancelled")
    child.expect(PROMPT)
    child.send("/wizards" + Key.ENTER)        # shown again
    child.expect("Quick start")
    child.expect(PROMPT)
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0 and "Traceback" not in log
    assert log.count("Quick start") == 2


def test_after_the_first_message_a_number_is_a_task(tmp_path: Path) -> None:
    child = _spawn(tmp_path)
    child.expect(PROMPT)
    child.send("/help" + Key.ENTER)            # the first line: the cards are gone
    child.expect(PROMPT)
    child.send("/log" + Key.ENTER)
    child.expect(PROMPT)
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0 and log.count("Quick start") == 1


def test_the_most_used_wizard_comes_first(tmp_path: Path, ws: Workspace) -> None:
    record_use(ws.db, ws.settings.tenant, "essay-mit-recipe")  # a use, as wizard run records
    ws.close()
    child = _spawn(tmp_path)
    child.expect(r"\[1\] " + ANSI + ANSI + "Write an essay with a recipe")  # was [4]
    child.expect(r"\[2\] " + ANSI + ANSI + "Create an essay recipe")  # its category follows
    child.expect(PROMPT)
    child.send("/quit" + Key.ENTER)
    status, _ = finish(child)
    assert status == 0
