"""Slartibartfast as the runtime sees it (``engines.registry``)."""

from __future__ import annotations

from vance_cli.engines.registry import Engine
from vance_cli.engines.slartibartfast.audit import on_process_closed
from vance_cli.engines.slartibartfast.process_run import run_process

ENGINE = Engine(name="slartibartfast", run_process=run_process, on_close=on_process_closed)
"""A whole-process run under its cutoff; a closed run brings its audit to its end."""
