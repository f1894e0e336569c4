"""delegate_and_start: delegate, then the started process's turns run here or in a worker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from vance_cli.base.config import load_settings
from vance_cli.delegate.flow import DelegateResult
from vance_cli.delegate.request import DelegateRequest
from vance_cli.delegate.start import delegate_and_start
from vance_cli.processes.model import StartHow, Status
from vance_cli.processes.start import Started, start
from vance_cli.workspace import Workspace

ESSAY = "Write a short essay about the history of tea"


@pytest.fixture()
def ws(vance_home: object) -> Iterator[Workspace]:
    workspace = Workspace(load_settings())  # no LLM: the offline selector decides
    yield workspace
    workspace.close()


@pytest.mark.parametrize(("wait", "wait_engines", "here"), [
    (True, frozenset(), True),
    (False, frozenset({"vogon"}), True),
    (False, frozenset({"zaphod"}), False),
])
def test_the_started_process_runs_here_when_waited_for(
        ws: Workspace, wait: bool, wait_engines: frozenset[str], here: bool) -> None:
    calls: list[tuple[str, bool]] = []

    def starter(result: DelegateResult, run_here: bool) -> Started:
        assert result.started is not None
        calls.append((result.started.engine, run_here))
        return start(ws, result.started.id, wait=run_here)

    done = delegate_and_start(ws, DelegateRequest(task=ESSAY), wait=wait,
                              wait_engines=wait_engines, starter=starter)
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
