"""The session root: created lazily, reused, its name reserved."""

from __future__ import annotations

import pytest

from vance_cli.base.config import load_settings
from vance_cli.base.errors import InputError
from vance_cli.processes.lifecycle import close_process
from vance_cli.processes.model import ProcessSpec
from vance_cli.processes.records import create_process, list_processes
from vance_cli.processes.session import ROOT_NAME, find_session_root, session_root
from vance_cli.workspace import Workspace


def _ws(session: str = "default") -> Workspace:
    return Workspace(load_settings(flags={"session": session}))


def test_created_on_first_use_then_reused_even_when_closed() -> None:
    ws = _ws()
    assert find_session_root(ws) is None and list_processes(ws) == []
    root = session_root(ws)
    assert (root.name, root.recipe, root.engine, root.status.value) == \
        (ROOT_NAME, "session-root", "arthur", "IDLE")
    close_process(ws, root.id, "STOPPED")
    assert session_root(ws).id == root.id
    assert [p.id for p in list_processes(ws)] == [root.id]


def test_one_root_per_session() -> None:
    assert session_root(_ws("a")).id != session_root(_ws("b")).id


def test_the_reserved_name_taken_by_another_recipe_is_an_input_error() -> None:
    ws = _ws()
    # a database from before the reserved-prefix rule: another recipe holds the name
    create_process(ws, ProcessSpec(recipe="coding", name=ROOT_NAME, internal=True))
    with pytest.raises(InputError, match="reserved for the session root"):
        session_root(ws)
