"""The one view of what happened to a process's pending turns and what comes next."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from vance_cli.base.config import load_settings
from vance_cli.processes.model import CloseReason, Process, ProcessSpec, StartHow, Status
from vance_cli.processes.next_steps import Happened, Step, next_steps
from vance_cli.processes.records import create_process
from vance_cli.processes.runtime import TurnReport
from vance_cli.processes.start import Started
from vance_cli.workspace import Workspace


@pytest.fixture()
def process(vance_home: object) -> Iterator[Process]:
    ws = Workspace(load_settings())
    yield create_process(ws, ProcessSpec(recipe="quick-lookup", name="peru",
                                         goal="What is the capital of Peru?"))
    ws.close()


def closed(process: Process, close: CloseReason, outcome: dict[str, Any]) -> Process:
    return replace(process, status=Status.CLOSED, close_reason=close, outcome=outcome or None)


@pytest.mark.parametrize(("how", "pid", "happened", "steps", "worker"), [
    (StartHow.BACKGROUND, 41, Happened.BACKGROUND, (Step.WAIT, Step.RESULT, Step.FOLLOW), 41),
    (StartHow.WAITING_FOR_LLM, None, Happened.WAITING_FOR_LLM, (Step.CONFIGURE_LLM, Step.RUN),
     None),
    (StartHow.RUNNING, 42, Happened.RUNNING, (Step.WAIT, Step.RESULT), 42),
    (StartHow.NO_ENGINE, None, Happened.NO_ENGINE, (), None),
    (StartHow.NOTHING_TO_DO, None, Happened.NOTHING_TO_DO, (), None),
    (StartHow.PASSIVE, None, Happened.PASSIVE, (), None),
])
def test_each_way_start_leaves_a_process(process: Process, how: StartHow, pid: int | None,
                                         happened: Happened, steps: tuple[Step, ...],
                                         worker: int | None) -> None:
    view = next_steps(Started(process, how, worker_pid=pid))
    assert (view.happened, view.steps, view.worker_pid, view.process) == (
        happened, steps, worker, process)
    assert view.input_waits is (happened in (Happened.WAITING_FOR_LLM, Happened.NO_ENGINE,
                                             Happened.PASSIVE))


@pytest.mark.parametrize(("reason", "outcome", "steps", "why"), [
    (CloseReason.STALE, {"reason": "worker died"}, (Step.RUN,), "worker died"),
    (CloseReason.DONE, {}, (), None),
    (CloseReason.STOPPED, {"reason": "stopped by the user"}, (), "stopped by the user"),
])
def test_a_closed_process_is_retried_only_when_stale(
        process: Process, reason: CloseReason, outcome: dict[str, str],
        steps: tuple[Step, ...], why: str | None) -> None:
    view = next_steps(Started(closed(process, reason, outcome), StartHow.CLOSED))
    assert (view.happened, view.steps, view.reason) == (Happened.CLOSED, steps, why)
    assert view.input_waits and not view.failed


@pytest.mark.parametrize(("settle", "reason", "happened"), [
    ("IDLE", None, Happened.SETTLED),
    ("DONE", None, Happened.SETTLED),
    ("FAILED", "LLM call failed: boom", Happened.FAILED),
    ("STOPPED", "the process was stopped", Happened.FAILED),
])
def test_a_foreground_turn_failed_or_settled(process: Process, settle: str,
                                             reason: str | None, happened: Happened) -> None:
    report = TurnReport(process, 1, settle, reason=reason)
    view = next_steps(Started(process, StartHow.FOREGROUND, report=report))
    assert (view.happened, view.reason, view.steps) == (happened, reason, ())
    assert view.failed is (happened is Happened.FAILED) and not view.input_waits


@pytest.mark.parametrize(("reason", "outcome", "happened", "why"), [
    (None, {}, Happened.SETTLED, None),
    (CloseReason.DONE, {}, Happened.SETTLED, None),
    (CloseReason.STALE, {"reason": "LLM call failed: boom"}, Happened.FAILED,
     "LLM call failed: boom"),
    (CloseReason.STALE, {}, Happened.FAILED, None),
])
def test_a_background_turn_that_was_waited_for(process: Process, reason: CloseReason | None,
                                               outcome: dict[str, str], happened: Happened,
                                               why: str | None) -> None:
    after = closed(process, reason, outcome) if reason else replace(process,
                                                                       status=Status.IDLE)
    view = next_steps(Started(process, StartHow.BACKGROUND, worker_pid=7), settled=after)
    assert (view.happened, view.process, view.reason, view.steps) == (happened, after, why, ())
