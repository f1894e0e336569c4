"""delegate_and_start: delegate, then the started process's turns run here or in a worker."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from vance_cli.base.config import load_settings
from vance_cli.delegate.flow import DelegateResult
from vance_cli.delegate.request import DelegateRequest
from vance_cli.delegate.start import delegate_and_start
from vance_cli.engines import vogon
from vance_cli.processes.model import StartHow, Status
from vance_cli.processes.start import Started, start
from vance_cli.workspace import Workspace

ESSAY = "Write a short essay about the history of tea"


@pytest.fixture()
def ws(vance_home: object) -> Iterator[Workspace]:
    workspace = Workspace(load_settings())  # no LLM: the offline selector decides
    yield workspace
    workspace.close()


@pytest.mark.parametrize(("wait", "whole", "wait_whole_runs", "here"), [
    (True, False, False, True),
    (False, True, True, True),  # vogon as an engine that runs its process whole
    (False, True, False, False),
    (False, False, True, False),  # vogon as it is: turns, run by a worker
])
def test_the_started_process_runs_here_when_waited_for(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch, wait: bool, whole: bool,
        wait_whole_runs: bool, here: bool) -> None:
    if whole:
        monkeypatch.setattr(vogon, "ENGINE", replace(vogon.ENGINE, run_process=lambda *_: None))
    calls: list[tuple[str, bool]] = []

    def starter(result: DelegateResult, run_here: bool) -> Started:
        assert result.started is not None
        calls.append((result.started.engine, run_here))
        return start(ws, result.started.id, wait=run_here)

    done = delegate_and_start(ws, DelegateRequest(task=ESSAY), wait=wait,
                              wait_whole_runs=wait_whole_runs, starter=starter)
    assert calls == [("vogon", here)] and done.here is here
    assert done.started is not None and done.started.how == StartHow.WAITING_FOR_LLM
    assert done.result.to_json()["process"]["status"] == Status.IDLE.value


def test_warnings_come_before_the_turn_and_nothing_starts_on_a_dry_run(ws: Workspace) -> None:
    warned: list[str] = []
    done = delegate_and_start(ws, DelegateRequest(task=ESSAY, dry_run=True),
                              warn=warned.append,
                              starter=lambda *_: pytest.fail("a dry run starts nothing"))
    assert (done.started, done.here, done.result.started) == (None, False, None)
    assert done.result.decision.matched and warned == list(done.result.warnings)


def test_the_default_start_is_the_runtime_s(ws: Workspace) -> None:
    done = delegate_and_start(ws, DelegateRequest(task=ESSAY))
    assert done.started is not None and done.started.how == StartHow.WAITING_FOR_LLM
    assert done.result.current == done.started.process
