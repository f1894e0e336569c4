"""A stop (SIGTERM, Ctrl-C) is found however Python hands it on."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from vance_cli import background
from vance_cli.base.signals import EXIT_TERMINATED, WorkerTerminated, stop_cause


class _StopsOnSetName:
    """A class attribute whose ``__set_name__`` meets the stop, as a signal can."""

    def __init__(self, stop: BaseException) -> None:
        self.stop = stop

    def __set_name__(self, owner: type, name: str) -> None:
        raise self.stop


def _made_while_stopping(stop: BaseException) -> BaseException:
    """Create a class while ``stop`` is raised; return what reached the caller."""
    try:
        type("Made", (), {"field": _StopsOnSetName(stop)})
    except BaseException as exc:
        return exc
    raise AssertionError("the class was made")


def test_a_stop_is_found_itself_and_behind_a_wrapping_error() -> None:
    terminated = WorkerTerminated()
    assert stop_cause(terminated) is terminated
    reached = _made_while_stopping(terminated)
    if sys.version_info < (3, 12):  # 3.11 wraps it: RuntimeError: Error calling __set_name__
        assert isinstance(reached, RuntimeError)
    assert stop_cause(reached) is terminated
    interrupt = KeyboardInterrupt()
    assert stop_cause(_made_while_stopping(interrupt)) is interrupt


def test_other_errors_are_no_stop() -> None:
    assert stop_cause(ValueError("x")) is None
    assert stop_cause(_made_while_stopping(ValueError("x"))) is None
    looped = RuntimeError("a")
    looped.__cause__ = RuntimeError("b")
    looped.__cause__.__cause__ = looped
    assert stop_cause(looped) is None


def test_the_worker_ends_as_stopped_when_the_stop_lands_in_a_class_being_made(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def body(args: Any) -> tuple[int, str]:
        raise _made_while_stopping(WorkerTerminated())

    monkeypatch.setattr(background, "_body", body)
    monkeypatch.setattr(sys, "argv", ["background", "0123456789abcdef"])
    monkeypatch.setattr(background, "install_sigterm", lambda: None)
    assert background.main() == EXIT_TERMINATED
    assert capsys.readouterr().out.rstrip().endswith("received SIGTERM")
