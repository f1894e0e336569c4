from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import build_file_tree

from vance_cli.base.config import load_settings
from vance_cli.base.errors import (
    DuplicateProcessName,
    InputError,
    InvalidTransition,
    ProcessNotFound,
    ReservedProcessName,
    UnknownEngine,
    UnknownRecipe,
)
from vance_cli.processes.model import TRANSITIONS, CloseReason, ProcessSpec, Status
from vance_cli.processes.records import create_process, list_processes, load_process, transition
from vance_cli.state.stores import open_state
from vance_cli.workspace import Workspace


def _count(ws: Workspace) -> int:
    return ws.db.query_one("SELECT COUNT(*) FROM processes")[0]  # type: ignore[index]


def test_create_records_an_idle_process(ws: Workspace) -> None:
    proc = create_process(ws, ProcessSpec(recipe="essay-pipeline", name="tea",
                                          steer="Write about tea", params={"words": "800"}))
    data = proc.to_json()
    assert data["status"] == "IDLE" and data["engine"] == "vogon"
    assert data["steerContent"] == "Write about tea" and data["goal"] == "Write about tea"
    assert set(data) == {"id", "name", "session", "recipe", "engine", "title", "goal", "params",
                         "steerContent", "status", "closeReason", "parentProcessId",
                         "createdAt", "result", "outcome", "state"}
    assert data["createdAt"].endswith("Z")
    trail = ws.db.query("SELECT from_status, to_status FROM process_transitions"
                        " WHERE process_id = ? ORDER BY id", (proc.id,))
    assert [tuple(r) for r in trail] == [(None, "INIT"), ("INIT", "IDLE")]


def test_params_overlay_recipe_params(ws: Workspace, project_dir: Path) -> None:
    build_file_tree(project_dir, {"recipes/p.yaml": """
        engine: ford
        description: with params
        params: {model: small, depth: 2}
    """})
    proc = create_process(ws, ProcessSpec(recipe="p", name="x", params={"depth": 5}))
    assert proc.params == {"model": "small", "depth": 5}


def test_duplicate_name_in_session_writes_nothing(ws: Workspace) -> None:
    create_process(ws, ProcessSpec(recipe="coding", name="dup"))
    with pytest.raises(DuplicateProcessName) as info:
        create_process(ws, ProcessSpec(recipe="translate", name="dup"))
    assert info.value.exit_code == 2
    assert _count(ws) == 1


def test_same_name_in_another_session_is_fine(vance_home: Path) -> None:
    a = Workspace(load_settings(flags={"session": "a"}))
    b = Workspace(load_settings(flags={"session": "b"}))
    create_process(a, ProcessSpec(recipe="coding", name="same"))
    create_process(b, ProcessSpec(recipe="coding", name="same"))
    assert len(list_processes(a, all_sessions=True)) == 2
    assert len(list_processes(a)) == 1


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (ProcessSpec(recipe="nope", name="n"), UnknownRecipe),
        (ProcessSpec(recipe="coding", name="  "), InputError),
        (ProcessSpec(recipe="coding", name="n", parent="0000000000000000"), ProcessNotFound),
        (ProcessSpec(recipe="../x", name="n"), InputError),
    ],
)
def test_errors_write_nothing(ws: Workspace, spec: ProcessSpec, error: type) -> None:
    with pytest.raises(error):
        create_process(ws, spec)
    assert _count(ws) == 0


def test_unknown_engine(ws: Workspace, project_dir: Path) -> None:
    build_file_tree(project_dir, {"recipes/odd.yaml": "engine: deep-thought\ndescription: d\n"})
    with pytest.raises(UnknownEngine, match="deep-thought"):
        create_process(ws, ProcessSpec(recipe="odd", name="n"))
    assert _count(ws) == 0


def test_transition_table_is_enforced(ws: Workspace) -> None:
    proc = create_process(ws, ProcessSpec(recipe="coding", name="t"))
    running = transition(ws, proc.id, Status.RUNNING)
    assert running.status is Status.RUNNING
    with pytest.raises(InvalidTransition, match="close reason"):
        transition(ws, proc.id, Status.CLOSED)
    closed = transition(ws, proc.id, Status.CLOSED, CloseReason.DONE, outcome={"ok": True})
    assert closed.close_reason == "DONE" and closed.outcome == {"ok": True}
    for target in Status:
        with pytest.raises(InvalidTransition):
            transition(ws, proc.id, target)
    assert TRANSITIONS[Status.CLOSED] == frozenset()


def test_get_by_unique_prefix(ws: Workspace) -> None:
    proc = create_process(ws, ProcessSpec(recipe="coding", name="pre"))
    assert load_process(ws, proc.id[:6]).id == proc.id
    with pytest.raises(ProcessNotFound):
        load_process(ws, "zzzzzz")


def test_a_short_id_says_a_prefix_needs_four_characters(ws: Workspace) -> None:
    proc = create_process(ws, ProcessSpec(recipe="coding", name="pre"))
    with pytest.raises(ProcessNotFound) as short:
        load_process(ws, proc.id[:3])
    assert short.value.message == (f"no process with id or name '{proc.id[:3]}' in session "
                                   "'default' (an id prefix needs at least 4 characters)")
    with pytest.raises(ProcessNotFound) as long_enough:
        load_process(ws, "zzzzzz")
    assert long_enough.value.message == ("no process with id or name 'zzzzzz' in session "
                                         "'default'")
    assert load_process(ws, "pre").id == proc.id  # a name of this session


@pytest.mark.parametrize(("name", "message"), [
    ("a\tb", "process name has a control character ('\\t' at position 2);"
              " use printable characters only"),
    ("two\nlines", "process name has a control character ('\\n' at position 4);"
                   " use printable characters only"),
    ("x" * 201, "process name is 201 characters long; at most 200"),
])
def test_a_bad_process_name_says_what_is_wrong(ws: Workspace, name: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        create_process(ws, ProcessSpec(recipe="coding", name=name))
    assert caught.value.message == message
    assert _count(ws) == 0


def test_a_crash_mid_transaction_leaves_the_database_whole(ws: Workspace) -> None:
    with pytest.raises(RuntimeError), ws.db.transaction():
        ws.db.conn.execute("INSERT INTO events (tenant, recipient_process_id, kind, created_at)"
                           " VALUES ('default', 'x', 'k', 'now')")
        raise RuntimeError("boom")
    assert ws.db.query_one("SELECT COUNT(*) FROM events")[0] == 0  # type: ignore[index]
    if ws.db.dialect.name == "sqlite":
        check = ws.db.query_one("PRAGMA integrity_check")
        assert check is not None and check[0] == "ok"


@pytest.mark.sqlite_only
def test_wal_mode(ws: Workspace) -> None:
    assert ws.db.query_one("PRAGMA journal_mode")[0] == "wal"  # type: ignore[index]


def test_params_stored_as_json(ws: Workspace) -> None:
    proc = create_process(ws, ProcessSpec(recipe="default", name="j", params={"n": 3}))
    other = open_state(ws.settings.state_target)  # a connection of its own reads it back
    try:
        row = other.query_one("SELECT params FROM processes WHERE id = ?", (proc.id,))
    finally:
        other.close()
    assert row is not None and json.loads(row[0]) == {"n": 3}


@pytest.mark.parametrize("name", ["_session-root", "_x", "  _padded  "])
def test_underscore_names_are_reserved_for_vance(ws: Workspace, name: str) -> None:
    with pytest.raises(ReservedProcessName, match="names starting with '_'") as info:
        create_process(ws, ProcessSpec(recipe="coding", name=name))
    assert info.value.exit_code == 2 and info.value.details["field"] == "name"
    assert _count(ws) == 0


def test_vance_itself_may_use_the_reserved_prefix(ws: Workspace) -> None:
    made = create_process(ws, ProcessSpec(recipe="coding", name="_internal", internal=True))
    assert made.name == "_internal"
    # an underscore inside a name is an ordinary character
    assert create_process(ws, ProcessSpec(recipe="coding", name="a_b")).name == "a_b"
