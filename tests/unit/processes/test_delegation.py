"""Delegation limits in one place: depth, children per process, live per session, per turn."""

from __future__ import annotations

from collections.abc import Iterator
from unittest import mock

import pytest

from vance_cli.base.config import load_settings
from vance_cli.processes import delegation
from vance_cli.processes.model import ProcessSpec
from vance_cli.processes.records import create_process, load_process
from vance_cli.workspace import Workspace


@pytest.fixture()
def ws(vance_home: object) -> Iterator[Workspace]:
    workspace = Workspace(load_settings())
    yield workspace
    workspace.close()


def chain(ws: Workspace, recipes: list[str]) -> list[str]:
    """Create processes each the child of the one before; return their ids."""
    ids: list[str] = []
    for index, recipe in enumerate(recipes):
        spec = ProcessSpec(recipe=recipe, name=f"p{index}", parent=ids[-1] if ids else None)
        ids.append(create_process(ws, spec).id)
    return ids


def test_depth_counts_every_delegating_engine_arthur_included(ws: Workspace) -> None:
    ids = chain(ws, ["discuss", "discuss", "quick-lookup", "discuss"])
    assert [delegation.depth(ws, load_process(ws, i)) for i in ids] == [1, 2, 2, 3]
    assert delegation.refusal(ws, load_process(ws, ids[1])) is None
    refused = delegation.refusal(ws, load_process(ws, ids[3]))
    assert refused == ("delegation depth limit reached: 3 delegating processes in the chain"
                       " (at most 3)")
    assert delegation.refusal(ws, load_process(ws, ids[3]), child_delegates=False) is None


def test_delegations_per_turn_are_limited(ws: Workspace) -> None:
    (lead,) = chain(ws, ["discuss"])
    assert delegation.refusal(ws, load_process(ws, lead), this_turn=2) is None
    assert "limit per turn reached: 3 started this turn (at most 3)" in str(
        delegation.refusal(ws, load_process(ws, lead), this_turn=3))
    assert delegation.refusal(ws, load_process(ws, lead), this_turn=3, counted=False) is None


def test_children_per_process_and_live_processes_per_session_are_limited(
        ws: Workspace) -> None:
    (lead,) = chain(ws, ["discuss"])
    for index in range(3):
        create_process(ws, ProcessSpec(recipe="quick-lookup", name=f"c{index}", parent=lead))
    with mock.patch.object(delegation, "MAX_CHILDREN", 3):
        assert "children limit reached" in str(delegation.refusal(ws, load_process(ws, lead)))
        assert delegation.refusal(ws, load_process(ws, lead), counted=False) is None
    with mock.patch.object(delegation, "MAX_LIVE", 4):
        assert "live process limit reached: 4 open in session default (at most 4)" in str(
            delegation.refusal(ws, load_process(ws, lead)))

