"""Slartibartfast: the engine that writes a new recipe when no existing one fits.

``ENGINE`` is what vance sees: a whole-process run under its cutoff
(``process_run``), and a close hook that brings the run's audit to its end
(``audit``); both load on first call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vance_cli.processes.engine import Engine

if TYPE_CHECKING:
    from vance_cli.processes.turn import TurnSink
    from vance_cli.processes.whole import Process
    from vance_cli.recipes.params import Common
    from vance_cli.workspace import Workspace


def _run(ws: Workspace, process: Process, sink: TurnSink, adopt: bool) -> Process:
    from vance_cli.engines.slartibartfast.process_run import run_process  # deferred: the run

    return run_process(ws, process, sink, adopt)


def _closed(ws: Workspace, process: Process) -> None:
    from vance_cli.engines.slartibartfast.audit import on_process_closed  # deferred: the audit

    on_process_closed(ws, process)


def _params() -> type[Common]:
    from vance_cli.engines.slartibartfast.params import SlartibartfastParams  # heavy: pydantic

    return SlartibartfastParams


ENGINE = Engine(name="slartibartfast", run_process=_run, on_close=_closed, params=_params)
"""A whole-process run under its cutoff; a closed run brings its audit to its end."""
