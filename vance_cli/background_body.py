"""The background worker's body: a workspace from the launcher's flags, then the turns."""

from __future__ import annotations

from collections.abc import Mapping

from vance_cli.base.config import load_settings
from vance_cli.processes.runtime import drive
from vance_cli.workspace import Workspace


def run(process_id: str, home: str | None, flags: Mapping[str, str | None]) -> tuple[int, str]:
    """Run the process's pending turns in a workspace of its own.

    Args:
        process_id: the process (full id) a launcher handed over to this worker.
        home: the ``--home`` folder, or None.
        flags: tenant, project, user, session, lang as the launcher resolved them.

    Returns:
        ``(exit code, one summary line)``: 0 unless the last turn failed.
    """
    ws = Workspace(load_settings(flags=flags, home=home))
    try:
        report = drive(ws, process_id, adopt=True)
    finally:
        ws.close()
    process = report.process
    state = process.status.value + (f"/{process.close_reason}" if process.close_reason else "")
    detail = f": {report.reason}" if report.reason else ""
    return (1 if report.failed else 0,
            f"process {process.id} turn {report.number} ended {report.settle}, {state}{detail}")
