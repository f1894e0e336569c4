"""Finding processes by name, their goal, status filters, and removing closed ones."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from terminal import Key

from vance_cli.base.errors import InputError
from vance_cli.cli import ask


def _create(name: str, *extra: str) -> dict[str, Any]:
    result = run_cli(["process", "create", "--recipe", "coding", "--name", name, "--json",
                      *extra])
    assert result.exit_code == 0, result.stderr
    return dict(result.json())


def _ids(*args: str) -> list[str]:
    return [p["id"] for p in run_cli(["process", "list", "--json", *args]).json()]


def test_show_finds_a_process_by_its_name_and_shows_its_goal() -> None:
    made = _create("report-fix", "--goal", "Fix the report\nand its totals")
    shown = run_cli(["process", "show", "report-fix", "--json"]).json()
    assert shown["id"] == made["id"]
    human = run_cli(["process", "show", "report-fix"]).stdout
    assert "goal: Fix the report" in human
    missing = run_cli(["process", "show", "report-fx"])
    assert missing.exit_code == 2
    assert missing.stderr == ("vance: error: no process with id or name 'report-fx' in session"
                              " 'default' — did you mean 'report-fix'?\n")
    data = run_cli(["process", "show", "report-fx", "--json"]).json()
    assert (data["error"], data["close"]) == ("process_not_found", ["report-fix"])
    assert "did you mean 'report-fix'" in run_cli(["process", "show", "report"]).stderr


def test_a_long_goal_is_cut_for_people_only() -> None:
    _create("big", "--goal", "x" * 5000)
    human = run_cli(["process", "show", "big"]).stdout
    assert "(5,000 characters; --json shows it whole)" in human
    assert len(run_cli(["process", "show", "big", "--json"]).json()["goal"]) == 5000


def test_list_filters_by_status() -> None:
    first, second = _create("one")["id"], _create("two")["id"]
    assert run_cli(["process", "stop", "one"]).exit_code == 0
    assert _ids("--status", "closed") == [first]
    assert _ids("--status", "open") == [second]
    assert sorted(_ids("-s", "IDLE,closed")) == sorted([first, second])
    bad = run_cli(["process", "list", "--status", "done"])
    assert bad.exit_code == 2 and "unknown status 'done'" in bad.stderr


def test_rm_removes_a_closed_process_and_its_records(vance_home: Path) -> None:
    parent = _create("parent")["id"]
    child = _create("child", "--parent", parent)["id"]
    assert run_cli(["process", "stop", "parent"]).exit_code == 0
    removed = run_cli(["process", "rm", "parent", "--yes", "--json"])
    assert removed.exit_code == 0, removed.stderr
    assert removed.json() == {"removed": [parent], "count": 1}
    assert _ids() == [child]
    assert run_cli(["process", "show", child, "--json"]).json()["parentProcessId"] is None
    conn = sqlite3.connect(vance_home / "state" / "vance.db")
    for table, column in (("process_transitions", "process_id"),
                          ("events", "recipient_process_id")):
        count = conn.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", (parent,))
        assert count.fetchone()[0] == 0


def test_rm_takes_several_ids_and_removes_each_once() -> None:
    one, two, kept = _create("one")["id"], _create("two")["id"], _create("kept")["id"]
    assert run_cli(["process", "stop", "one", "two", "kept"]).exit_code == 0
    removed = run_cli(["process", "rm", "one", two, "one", "--yes"])
    assert removed.exit_code == 0, removed.stderr
    assert [row.split("\t")[0] for row in removed.stdout.splitlines()] == [one, two]
    assert removed.stderr == "removed 2 processes\n"
    assert _ids() == [kept]


def test_rm_refuses_an_open_process_and_an_unconfirmed_removal() -> None:
    _create("busy")
    open_one = run_cli(["process", "rm", "busy", "--yes"])
    assert open_one.exit_code == 2
    assert "is IDLE: stop it first with 'vance process stop" in open_one.stderr
    assert run_cli(["process", "stop", "busy"]).exit_code == 0
    unconfirmed = run_cli(["process", "rm", "busy"])  # no terminal, no --yes
    assert unconfirmed.exit_code == 2
    assert "without confirmation: stdin is not a terminal; pass --yes" in unconfirmed.stderr
    assert _ids() != []


def test_prune_removes_every_closed_process_of_the_session() -> None:
    keep = _create("keep")["id"]
    for name in ("a", "b"):
        _create(name)
        assert run_cli(["process", "stop", name]).exit_code == 0
    other = run_cli(["--session", "s2", "process", "create", "--recipe", "coding", "--name",
                     "c", "--json"]).json()["id"]
    assert run_cli(["--session", "s2", "process", "stop", "c"]).exit_code == 0
    pruned = run_cli(["process", "prune", "--yes", "--json"]).json()
    assert pruned["count"] == 2
    assert _ids() == [keep] and other in _ids("--all-sessions")
    assert run_cli(["process", "prune", "--all-sessions", "--yes"]).exit_code == 0
    assert _ids("--all-sessions") == [keep]
    nothing = run_cli(["process", "prune"])  # nothing to remove: nothing to confirm
    assert nothing.exit_code == 0 and "removed 0 processes" in nothing.stderr


@pytest.mark.parametrize(("lang", "keys", "answer"), [
    ("en", "y" + Key.ENTER, True), ("en", Key.ENTER, False), ("en", "n" + Key.ENTER, False),
    ("de", "j" + Key.ENTER, True), ("de", "J" + Key.ENTER, True), ("de", "y" + Key.ENTER, True),
    ("de", "n" + Key.ENTER, False), ("de", Key.ENTER, False),
])
def test_the_yes_no_question_speaks_the_language(lang: str, keys: str, answer: bool) -> None:
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        assert ask.ask_yes_no("Remove?", False, lang, pipe, DummyOutput()) is answer


def test_confirm_removal_asks_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    questions: list[str] = []
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr(ask, "ask_yes_no",
                        lambda text, default, lang: questions.append(text) or False)
    assert ask.confirm_removal(3, "de") is False  # "no" is an answer, not a Ctrl-C
    assert questions == ["3 geschlossene Prozesse entfernen?"]
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    with pytest.raises(InputError, match="pass --yes"):
        ask.confirm_removal(1, "en")


def test_list_shows_children_under_their_parent_and_flat_with_a_parent_column() -> None:
    parent = _create("parent")["id"]
    first = _create("first-child", "--parent", parent)["id"]
    other = _create("other")["id"]
    second = _create("second-child", "--parent", parent)["id"]
    grouped = [line.split("\t")[:2] for line in run_cli(["process", "list"]).stdout.splitlines()]
    assert grouped == [[other, "other"], [parent, "parent"], [first, "first-child"],
                       [second, "second-child"]]
    flat = [line.split("\t")[:3] for line in
            run_cli(["process", "list", "--children"]).stdout.splitlines()]
    assert flat == [[second, "second-child", parent], [other, "other", "-"],
                    [first, "first-child", parent], [parent, "parent", "-"]]
    assert run_cli(["process", "list", "--flat"]).stdout == \
        run_cli(["process", "list", "--children"]).stdout


def test_rm_of_a_parent_removes_its_closed_children_and_keeps_open_ones() -> None:
    parent = _create("parent")["id"]
    done = _create("done-child", "--parent", parent)["id"]
    grandchild = _create("grandchild", "--parent", done)["id"]
    busy = _create("busy-child", "--parent", parent)["id"]
    for name in ("grandchild", "done-child", "parent"):
        assert run_cli(["process", "stop", name]).exit_code == 0
    removed = run_cli(["process", "rm", "parent", "--yes", "--json"]).json()
    assert sorted(removed["removed"]) == sorted([parent, done, grandchild])
    assert removed["count"] == 3
    assert _ids() == [busy]
    assert run_cli(["process", "show", busy, "--json"]).json()["parentProcessId"] is None


def test_stop_takes_several_ids_and_prints_one_line_each() -> None:
    one, two = _create("one")["id"], _create("two")["id"]
    assert run_cli(["process", "stop", "one"]).exit_code == 0
    result = run_cli(["process", "stop", "one", "two"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"{one} (one) was already CLOSED/STOPPED; nothing to stop", f"stopped {two} (two)"]
    assert result.stderr == ""
    both = run_cli(["process", "stop", "one", "two", "--json"]).json()
    assert [(d["process"]["id"], d["stopped"]) for d in both] == [(one, False), (two, False)]
    assert run_cli(["process", "stop", "two", "--json"]).json()["process"]["id"] == two


def test_prune_lists_what_it_removes() -> None:
    gone = _create("gone")["id"]
    _create("kept")
    assert run_cli(["process", "stop", "gone"]).exit_code == 0
    pruned = run_cli(["process", "prune", "--yes"])
    assert pruned.exit_code == 0
    assert pruned.stdout == f"{gone}\tgone\tcoding\tCLOSED/STOPPED\n"
    assert pruned.stderr == "removed 1 process\n"


def test_create_invents_a_name_as_delegate_does() -> None:
    made = _create_unnamed("--steer", "Fix the login bug please")
    assert re.fullmatch(r"fix-the-login-bug-please-[0-9a-f]{6}", made["name"]), made["name"]
    bare = _create_unnamed()
    assert re.fullmatch(r"coding-[0-9a-f]{6}", bare["name"]), bare["name"]
    assert _create_unnamed()["name"] != bare["name"]


def _create_unnamed(*extra: str) -> dict[str, Any]:
    result = run_cli(["process", "create", "--recipe", "coding", "--json", *extra])
    assert result.exit_code == 0, result.stderr
    return dict(result.json())
