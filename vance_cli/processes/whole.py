"""What an engine that runs its processes whole (``Engine.run_process``) imports of ``processes``.

Such an engine (Slartibartfast) has no ``Turn``: it claims its process
itself (``running``), creates and launches the processes it generates, and
closes them. This module names that surface; with ``turn`` and ``engine``
it is all an engine imports of ``processes`` (a ``lint-imports`` contract).
Rule: docs/engines.md#writing-an-engine
"""

from __future__ import annotations

from vance_cli.processes.launcher import launch
from vance_cli.processes.lifecycle import close_process
from vance_cli.processes.model import NAME_MAX, CloseReason, Process, ProcessSpec, Status
from vance_cli.processes.records import create_process, load_process, set_result, update_params
from vance_cli.processes.session import session_root
from vance_cli.processes.worker import Run, running

__all__ = ["NAME_MAX", "CloseReason", "Process", "ProcessSpec", "Run", "Status", "close_process",
           "create_process", "launch", "load_process", "running", "session_root", "set_result",
           "update_params"]
