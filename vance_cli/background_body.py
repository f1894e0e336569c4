"""The background worker's body: a workspace from the launcher's flags, then the Slart run."""

from __future__ import annotations

from collections.abc import Mapping

from vance_cli.base.config import load_settings
from vance_cli.engines.slartibartfast.launch import work
from vance_cli.workspace import Workspace


def run(process_id: str, deadline: float, timeout: float, home: str | None,
        flags: Mapping[str, str | None]) -> tuple[int, str]:
    """Run Slartibartfast on ``process_id`` under the cutoff in a workspace of its own.

    Args:
        process_id: the Slart process (full id).
        deadline: the cutoff, seconds since the epoch.
        timeout: the cutoff's length in seconds (for messages).
        home: the ``--home`` folder, or None.
        flags: tenant, project, user, session, lang as the CLI resolved them.

    Returns:
        ``(exit code, one summary line)``: 0 when the process closed DONE.
    """
    ws = Workspace(load_settings(flags=flags, home=home))
    try:
        return work(ws, process_id, deadline, timeout)
    finally:
        ws.close()
