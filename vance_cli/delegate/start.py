"""Delegate a request and get the started process's first turn run (docs/delegate.md).

The command line, the shell and the MCP server all go through ``delegate_and_start``.

Rules:
- ``delegate()`` decides and starts the process (or none: a NONE, a dry run);
  the warnings it collected are handed to ``warn`` before any turn runs.
- The started process's turns run here when the caller waits (``wait``) or
  its engine runs whole processes and the caller waits for those
  (``wait_whole_runs``: a wizard waits for Slartibartfast to name the new
  recipe); otherwise a background worker runs them.
- The result shows the process as it is after the start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from vance_cli.base.records import frozen
from vance_cli.delegate.flow import DelegateResult, FallbackRunner, delegate
from vance_cli.processes.start import Started, start

if TYPE_CHECKING:
    from vance_cli.delegate.request import DelegateRequest
    from vance_cli.selector.core import Progress
    from vance_cli.workspace import Workspace

Starter = Callable[[DelegateResult, bool], Started]
"""Runs a delegated process's turns: (the result, whether here) → what ``start`` did.
The default is ``processes.start.start``; the command line passes one with its live output."""


@frozen
class Delegation:
    """What ``delegate_and_start`` did.

    Attributes:
        result: the delegate result (its process as it is after the start).
        started: how the started process's turns were run, or None (nothing started).
        here: they ran here (not in a background worker).
    """

    result: DelegateResult
    started: Started | None = None
    here: bool = False


def delegate_and_start(ws: Workspace, request: DelegateRequest, *,
                       progress: Progress | None = None,
                       fallback: FallbackRunner | None = None, wait: bool = False,
                       wait_whole_runs: bool = False,
                       warn: Callable[[str], None] | None = None,
                       starter: Starter | None = None) -> Delegation:
    """Delegate one request, then get the started process's turns run.

    Args:
        ws: workspace.
        request: task and process options.
        progress: wraps the selector's LLM call (the CLI's spinner).
        fallback: the Slartibartfast fallback runner; None → no fallback.
        wait: run the started process's turns here instead of in a worker.
        wait_whole_runs: run here, even without ``wait``, a process whose engine runs
            it whole (``Engine.run_process``).
        warn: gets each warning of the delegate (recipe files left out), before a turn runs.
        starter: runs the turns; None → ``processes.start.start``.

    Returns:
        What was decided and started.

    Raises:
        VanceError: as ``delegate.flow.delegate``; as ``processes.start.start``.
        KeyboardInterrupt: Ctrl-C in a turn run here (it settled IDLE first).
    """
    result = delegate(ws, request, progress=progress, fallback=fallback)
    if warn is not None:
        for warning in result.warnings:
            warn(warning)
    target = result.started
    if target is None:
        return Delegation(result)
    engine = ws.engines.get(target.engine) if wait_whole_runs and not wait else None
    here = wait or (engine is not None and engine.run_process is not None)
    if starter is None:
        started = start(ws, target.id, wait=here)
    else:
        started = starter(result, here)
    return Delegation(result.with_process(started.process), started, here)
