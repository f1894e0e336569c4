"""A launcher hands a process over to a detached worker it just started."""

from __future__ import annotations

import os

from vance_cli.base.config import load_settings
from vance_cli.processes.model import CloseReason, ProcessSpec, Status
from vance_cli.processes.records import create_process, load_process
from vance_cli.processes.worker import hand_over, running
from vance_cli.workspace import Workspace


def test_hand_over_then_adopt() -> None:
    ws = Workspace(load_settings())
    process = create_process(ws, ProcessSpec(recipe="slartibartfast", name="s"))
    assert hand_over(ws, process.id, os.getpid())
    handed = load_process(ws, process.id)
    assert (handed.status, handed.worker_pid) == (Status.RUNNING, os.getpid())
    assert handed.heartbeat_at is not None
    assert not hand_over(ws, process.id, 4242)  # already RUNNING: unchanged
    with running(ws, process.id, handle_sigterm=False, adopt=True) as run:
        run.close(CloseReason.DONE, {"ok": True})
    assert load_process(ws, process.id).close_reason == "DONE"


def test_a_worker_faster_than_its_launcher_keeps_the_process() -> None:
    ws = Workspace(load_settings())
    process = create_process(ws, ProcessSpec(recipe="slartibartfast", name="s"))
    with running(ws, process.id, handle_sigterm=False, adopt=True):
        assert not hand_over(ws, process.id, 4242)
        assert load_process(ws, process.id).worker_pid == os.getpid()


def test_adopt_does_not_take_another_workers_process() -> None:
    import pytest

    from vance_cli.base.errors import InvalidTransition

    ws = Workspace(load_settings())
    process = create_process(ws, ProcessSpec(recipe="slartibartfast", name="s"))
    hand_over(ws, process.id, 4242)
    with pytest.raises(InvalidTransition), running(ws, process.id, handle_sigterm=False,
                                                   adopt=True):
        pass
