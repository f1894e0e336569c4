"""Children of a stopped orchestrator are all closed, whatever signal comes meanwhile."""

from __future__ import annotations

from typing import Any

import pytest

from vance_cli.base.signals import WorkerTerminated
from vance_cli.processes import children
from vance_cli.processes.model import CloseReason, ProcessSpec, Status
from vance_cli.processes.records import create_process, load_process
from vance_cli.workspace import Workspace


def _kids(ws: Workspace) -> list[Any]:
    parent = create_process(ws, ProcessSpec(recipe="council-three-perspectives", name="c"))
    return [create_process(ws, ProcessSpec(recipe="default", name=f"head-{n}",
                                           parent=parent.id)) for n in range(3)]


@pytest.mark.parametrize("signal", [WorkerTerminated, KeyboardInterrupt])
def test_a_stop_signal_while_children_close_closes_them_all_then_is_raised(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch, signal: type[BaseException]) -> None:
    kids = _kids(ws)
    real, calls = children.close_process, []

    def close_process(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[1])
        if len(calls) == 1:  # the SIGTERM of `vance process stop` lands in the first close
            raise signal()
        return real(*args, **kwargs)

    monkeypatch.setattr(children, "close_process", close_process)
    with pytest.raises(signal):
        children.stop(ws, kids)
    assert calls == [kids[0].id, kids[0].id, kids[1].id, kids[2].id]
    for kid in kids:
        after = load_process(ws, kid.id)
        assert (after.status, after.close_reason) == (Status.CLOSED, CloseReason.STOPPED)


def test_without_a_signal_stop_closes_and_raises_nothing(ws: Workspace) -> None:
    kids = _kids(ws)
    children.stop(ws, kids)
    children.stop(ws, kids)  # closed already: nothing to do, no error
    assert {load_process(ws, kid.id).close_reason for kid in kids} == {CloseReason.STOPPED}
