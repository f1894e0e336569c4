"""Process lifecycle around a worker: stale detection, wait, stop.

Rules (docs/processes.md):
- Only RUNNING needs a live worker (a turn is running). A RUNNING process is
  **stale** when its recorded worker pid no longer exists (or is a zombie),
  or when its last sign of life — ``heartbeat_at``, else ``updated_at`` — is
  older than ``process.stale_timeout`` seconds. Workers stamp the heartbeat
  through ``vance_cli.processes.worker.running``.
- Stale processes are closed in one named step, ``reap_stale``, which the
  commands call before they read (``vance process show|list|wait|stop``, via
  ``reap_and_load`` for one process); reads themselves never write. It closes each as
  ``CLOSED/STALE`` with ``outcome = {"reason": …}``. It reads candidates
  without a lock, then re-checks each under the write lock and closes with
  compare-and-set on RUNNING, so two readers never close one process twice
  and a worker that stamped its heartbeat meanwhile is left alone.
- A RUNNING process whose turn started more than its turn seconds plus
  ``budget.REAP_GRACE`` ago is reaped too, even while its worker beats (a
  heartbeat shows life, not progress): it closes ``STALE`` naming the
  deadline, and its worker, whose heartbeat is fresh, gets SIGTERM. A reaped
  process's turn records still ``RUNNING`` end ``STALE`` with the reason, and
  the LLM call a dead or silent worker had under way (``calls_in_flight``) is
  stored with ``CUT_OFF`` and the tokens out its last heartbeat stored; a
  worker that still beats records its own.
- The pid check assumes the worker runs on this machine (the state database
  is a local SQLite file); a reused pid is still caught by the heartbeat age.
  On a team's PostgreSQL (``Settings.team``) a worker may run on another
  host, where its pid means nothing here: liveness is the heartbeat age
  alone, and no pid is ever signalled. A stopped or reaped turn's worker
  finds its process closed at its next heartbeat and stops itself
  (``run.stop_requested``; docs/teams.md).
- ``close_process`` closes from whatever live status a process is in, under
  one write transaction; closing a CLOSED process changes nothing.
- ``wait_process`` polls (50 ms, doubling to 500 ms; never a busy loop) until
  the process is no longer RUNNING (its turn settled, or it closed) or the
  timeout.
- ``stop_process`` closes with ``STOPPED``; only if it closed the process
  from RUNNING and the worker's heartbeat is fresh (so the pid is still that
  worker's, not a reused one) does it send SIGTERM to the worker pid.
  Stopping a CLOSED process is a no-op that says so (exit 0): stopping is
  idempotent, as ``docker stop`` on a stopped container.
- **Close hooks.** An engine's processes may keep state outside the
  database that must end with them (the Slartibartfast run's ``audit.json``).
  After ``close_process`` or ``reap_stale`` closed a process, the hook its
  engine registered (``processes.engine.Engine.on_close``, reached through
  ``Workspace.engines``) runs outside the write lock. A hook is
  bookkeeping: the close stands whatever it does; a failing hook is logged
  as a warning, never swallowed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from vance_cli.base.clock import parse_time
from vance_cli.base.records import frozen
from vance_cli.processes import overflow
from vance_cli.processes.budget import REAP_GRACE, Budget
from vance_cli.processes.jobs import cancel_turns, waiting_job
from vance_cli.processes.model import CloseReason, Process, Status, is_job_worker
from vance_cli.processes.records import apply_transition, change_status, load_process
from vance_cli.state import conversation
from vance_cli.state import process_store as store

if TYPE_CHECKING:
    from vance_cli.state.db import Row
    from vance_cli.workspace import Workspace

POLL_FIRST = 0.05
"""Seconds before the first re-check in ``wait_process``."""
POLL_MAX = 0.5
"""Longest pause between two checks in ``wait_process``, in seconds (the delay doubles up to it)."""

CUT_OFF = "cut off: the worker died"
"""The error of an LLM call under way that stale detection records for a dead worker."""


def is_pid_alive(pid: int) -> bool:
    """True when a process with this pid exists on this machine and is not a zombie.

    Args:
        pid: an OS process id; 0 and negative values are never alive (they
            would name process groups to ``kill``).
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    try:  # a zombie has exited; only its parent has not reaped it yet (Linux /proc)
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return True


def stale_reason(row: Row | dict[str, Any], now: datetime, timeout: float,
                 alive: Callable[[int], bool] = is_pid_alive) -> str | None:
    """Say why a RUNNING process row is stale, or None when it is not.

    Args:
        row: a ``processes`` row (status, worker_pid, heartbeat_at, updated_at).
        now: the current time (UTC, aware).
        timeout: ``process.stale_timeout`` in seconds.
        alive: pid check (injectable for tests).

    Returns:
        A one-line reason naming the pid or the heartbeat age, or None.
    """
    if row["status"] != Status.RUNNING.value:
        return None
    pid = row["worker_pid"]
    last = row["heartbeat_at"] or row["updated_at"]
    if pid is not None and not alive(int(pid)):
        return f"worker process {pid} is gone (last heartbeat {last})"
    age = (now - parse_time(last)).total_seconds()
    if age > timeout:
        who = f" from worker {pid}" if pid is not None else " (no worker recorded)"
        return (f"no heartbeat{who} for {age:.1f} s, over the {timeout:g} s stale timeout"
                f" (last {last})")
    return None


def close_process(ws: Workspace, process_id: str, reason: CloseReason | str,
                  outcome: Mapping[str, Any] | None = None, *, note: str | None = None,
                  only_from: Status | None = None, hooks: bool = True,
                  notify: bool = True, owner: str | None = None) -> tuple[Process, Status | None]:
    """Close a process from whatever live status it is in, unless it is closed already.

    Reads and writes under one write transaction, so a concurrent close,
    stop or stale detection makes this a no-op instead of a second close.
    Then the engine's close hook runs (``Workspace.engines``).

    Args:
        ws: workspace.
        process_id: full id or unique prefix.
        reason: the close reason (``DONE``, ``STOPPED``, ``STALE`` …).
        outcome: JSON-able outcome, e.g. ``{"recipePath": …}`` or ``{"reason": …}``.
        note: free text for the audit trail.
        only_from: close only if the status is still this one (e.g. RUNNING).
        hooks: run the engine's close hook here; False leaves it to the caller
            (``stop_process`` signals the worker first).
        notify: post ``child_closed`` to the parent (``records.transition``); False
            for an inline child, whose orchestrator has its answer.
        owner: close only while this worker holds the process (a worker closing its own
            turn: one whose turn was taken over closes nothing).

    Returns:
        ``(process after, status it was closed from)``; the second item is
        None when nothing changed (already CLOSED, or not in ``only_from``).

    Raises:
        ProcessNotFound: no such process.
    """
    text = reason.value if isinstance(reason, CloseReason) else reason
    with ws.db.transaction():
        current = load_process(ws, process_id)
        if current.status is Status.CLOSED or (only_from is not None
                                               and current.status is not only_from) or \
                (owner is not None and current.worker != owner):
            return current, None
        after = change_status(ws.db, current.id, current.status, Status.CLOSED, text,
                              outcome=outcome, note=note, notify=notify)
    assert after is not None  # read in this write transaction: nobody changed it since
    if hooks:
        ws.engines.run_close_hooks(ws, [after])
    return after, current.status


def reap_stale(ws: Workspace) -> list[Process]:
    """Close every stale RUNNING process of the tenant as ``CLOSED/STALE``, then run close hooks.

    Args:
        ws: workspace (tenant, database, ``process.stale_timeout``).

    Returns:
        The processes this call closed (empty when none; another reader may
        have closed some first, or the database is read-only: docs/processes.md).
    """
    db, tenant = ws.db, ws.settings.tenant
    if db.read_only is not None:  # nothing can be closed: readers see the processes as they are
        return []
    rows = store.list_processes(db, tenant, statuses=(Status.RUNNING.value,))
    now = datetime.now(UTC)
    candidates = [row["id"] for row in rows if _why_reaped(ws, row, now)]
    closed: list[tuple[str, int | None]] = []
    for process_id in candidates:
        with db.transaction():  # re-check under the write lock
            row = store.get_process(db, tenant, process_id)
            reason = _why_reaped(ws, row, datetime.now(UTC)) if row else None
            reason = reason and reason + overflow.unsaved_note(ws, process_id)
            if reason and apply_transition(db, process_id, Status.RUNNING, Status.CLOSED,
                                           CloseReason.STALE.value, outcome={"reason": reason},
                                           note=reason):
                conversation.end_running_turns(db, process_id, "STALE", reason)
                beating = row is not None and stale_reason(
                    row, datetime.now(UTC), ws.settings.process_stale_timeout,
                    _liveness(ws)) is None
                if not beating:  # a worker that still beats records its own call
                    conversation.cut_off_calls(db, process_id, CUT_OFF)
                closed.append((process_id, row["worker_pid"] if row and beating else None))
    # a worker past its deadline still beats (its pid is its own): stop it; a team's worker
    # may be on another host, and sees the close at its next heartbeat
    for _, pid in closed if not ws.settings.team else ():
        if pid is not None and pid != os.getpid() and is_pid_alive(int(pid)):
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGTERM)
    reaped = [load_process(ws, pid) for pid, _ in closed]
    ws.engines.run_close_hooks(ws, reaped)
    return reaped


def _why_reaped(ws: Workspace, row: Row, now: datetime) -> str | None:
    """Say why a RUNNING process is reaped: its worker is gone or silent, or its turn overdue."""
    if ws.settings.team and is_job_worker(row["worker"]):
        # a team job's silent worker is the job queue's to replace (takeover), not a reap's
        return overdue_reason(ws, row, now)
    reason = stale_reason(row, now, ws.settings.process_stale_timeout, _liveness(ws))
    return reason or overdue_reason(ws, row, now)


def _assume_alive(pid: int) -> bool:
    """A worker pid of another host: only its heartbeat says whether it lives."""
    return True


def _liveness(ws: Workspace) -> Callable[[int], bool]:
    """The pid check of this store: the OS's on SQLite; none on a team's PostgreSQL."""
    return _assume_alive if ws.settings.team else is_pid_alive


def overdue_reason(ws: Workspace, row: Row, now: datetime) -> str | None:
    """Say why a RUNNING process's turn is past its deadline (``budget.REAP_GRACE``), or None.

    A turn's heartbeat shows that its worker lives, not that it gets anywhere: a
    turn RUNNING past its seconds is reaped even while its worker beats.
    """
    if row["status"] != Status.RUNNING.value:
        return None
    turn = conversation.running_turn(ws.db, row["id"])
    if turn is None:
        return None
    seconds = Budget.of(ws.settings, Process.from_row(row).params).seconds
    age = (now - parse_time(turn["started_at"])).total_seconds()
    if age <= seconds + REAP_GRACE:
        return None
    return (f"turn {turn['number']} ran {age:.1f} s, past its deadline of {seconds:g} s"
            " (turn.timeout): reaped while its worker still beat")


def reap_and_load(ws: Workspace, ident: str) -> Process:
    """Close stale RUNNING processes (``reap_stale``, a write), then load one process.

    The step commands take before they show or wait on a process, so a
    dead worker is never shown RUNNING.

    Raises:
        ProcessNotFound: no match, or a prefix that matches several processes.
    """
    reap_stale(ws)
    return load_process(ws, ident)


@frozen
class WaitResult:
    """Outcome of ``vance process wait``.

    Attributes:
        process: the process as last seen.
        timed_out: the timeout passed before it closed.
        waited: seconds spent waiting.
    """

    process: Process
    timed_out: bool
    waited: float

    @property
    def failed(self) -> bool:
        """True when the process is CLOSED for another reason than DONE (STALE, STOPPED)."""
        return turn_failed(self.process)

    def to_json(self) -> dict[str, Any]:
        """Return ``{"process": {...}, "timedOut": bool, "waitedSeconds": float}``."""
        return {"process": self.process.to_json(), "timedOut": self.timed_out,
                "waitedSeconds": round(self.waited, 3)}


def turn_failed(process: Process) -> bool:
    """True when a process whose turn settled is CLOSED for another reason than DONE."""
    return process.status is Status.CLOSED and process.close_reason != CloseReason.DONE.value


def wait_process(ws: Workspace, ident: str, timeout: float | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> WaitResult:
    """Wait until a process's current turn has settled: it is no longer RUNNING.

    Stale workers are detected on each check, so a dead worker ends the wait
    (the process closes ``STALE``). In team mode a turn waiting in the queue counts
    as under way: the wait goes on until a worker ran it.

    Args:
        ws: workspace.
        ident: process id or unique prefix.
        timeout: seconds to wait at most; None waits until it settles (Ctrl-C ends it).
        sleep: pause function (injectable for tests).

    Returns:
        A WaitResult (``timed_out`` True when the time ran out first; ``failed``
        when it closed for another reason than DONE).

    Raises:
        ProcessNotFound: no such process.

    Rule: docs/processes.md "wait" (0 settled, 1 failed, 124 timeout).
    """
    start = time.monotonic()
    process = reap_and_load(ws, ident)
    delay = POLL_FIRST
    while process.status is Status.RUNNING or (
            ws.settings.team and process.status is not Status.CLOSED
            and waiting_job(ws, process.id) is not None):
        waited = time.monotonic() - start
        if timeout is not None and waited >= timeout:
            return WaitResult(process, True, waited)
        pause = delay if timeout is None else min(delay, timeout - waited)
        sleep(max(pause, 0.0))
        delay = min(delay * 2, POLL_MAX)
        process = reap_and_load(ws, process.id)
    return WaitResult(process, False, time.monotonic() - start)


@frozen
class StopResult:
    """Outcome of ``vance process stop``.

    Attributes:
        process: the process after the stop.
        stopped: True when this call closed it; False when it was CLOSED already.
        signalled_pid: the worker pid sent SIGTERM, or None.
    """

    process: Process
    stopped: bool
    signalled_pid: int | None

    def to_json(self) -> dict[str, Any]:
        """Return ``{"process": {...}, "stopped": bool, "signalledPid": int | null}``."""
        return {"process": self.process.to_json(), "stopped": self.stopped,
                "signalledPid": self.signalled_pid}


def stop_process(ws: Workspace, ident: str) -> StopResult:
    """Close a process as ``STOPPED`` and tell its worker to stop (SIGTERM).

    Args:
        ws: workspace.
        ident: process id or unique prefix.

    Returns:
        A StopResult; ``stopped`` False (a no-op) when it was CLOSED already.

    Raises:
        ProcessNotFound: no such process.
    """
    before = reap_and_load(ws, ident)  # a dead worker is reaped to STALE first
    after, closed_from = close_process(ws, before.id, CloseReason.STOPPED,
                                       {"reason": "stopped with 'vance process stop'"},
                                       note="stopped", hooks=False)
    if closed_from is None:
        return StopResult(after, False, None)
    if ws.settings.team:  # its waiting turn is cancelled, its running one asked to abort
        cancel_turns(ws, after.id)
    try:
        return StopResult(after, True, _signal_worker(ws, after, closed_from))
    finally:  # the worker is told first: a slow hook must not let it find out by itself
        ws.engines.run_close_hooks(ws, [after])


def _signal_worker(ws: Workspace, after: Process, closed_from: Status) -> int | None:
    """Send SIGTERM to the stopped process's live worker; return its pid, or None."""
    pid = after.worker_pid
    if closed_from is not Status.RUNNING or pid is None or pid == os.getpid() or \
            ws.settings.team:  # its worker may be on another host: it sees the close itself
        return None
    fresh = after.heartbeat_at is not None and (
        datetime.now(UTC) - parse_time(after.heartbeat_at)
    ).total_seconds() <= ws.settings.process_stale_timeout
    if not fresh or not is_pid_alive(pid):
        return None
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:  # exited meanwhile, or not ours to signal
        return None
    return pid
