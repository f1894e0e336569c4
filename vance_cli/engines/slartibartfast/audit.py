"""The audit file of one Slartibartfast run: every attempt and the final state.

Invariants (docs/delegate.md; docs/delegate.md, Slartibartfast fallback):
- One run has one folder, ``recipes/_slart/<runId>/`` in the project layer
  (``Workspace.write_folder``: the project, else the tenant layer). The
  audit lives there as ``audit.json`` whether the run succeeds or fails; a
  successful run adds ``<name>.yaml`` beside it. Only ``.yaml`` files are
  recipes, so the audit never shows up as one.
- The file is rewritten whole and atomically (``files.atomic_write_text``)
  at every state change — created, each attempt sent, each reply checked,
  the final state — so a run that dies at any point can still be diagnosed.
- ``state`` is ``CREATED`` → ``RUNNING`` → one final state: ``GENERATED``,
  ``FAILED``, ``TIMED_OUT`` (the fallback cutoff), ``STOPPED`` (stopped by
  someone, or closed meanwhile) or ``STALE`` (the worker died: the process
  was closed ``STALE`` by stale detection). Once final, later changes are
  ignored, so a thread that wakes after the cutoff cannot rewrite history.
- A worker that dies (SIGKILL, a killed sync ``vance delegate``) cannot
  finish its audit, so the process's close does: ``on_process_closed`` is
  the ``slartibartfast`` recipe's close hook (``lifecycle.CLOSE_HOOKS``), run
  by whoever closes the process — stale detection, ``vance process stop``.
  It finds the file through ``params.auditFile`` (recorded at start; else
  ``params.runId`` under this workspace's write folder) and gives a
  not-yet-final audit the process's end: ``STALE`` or ``FAILED`` with the
  reason, ``STOPPED`` or ``TIMED_OUT``. ``DONE`` is left to the engine,
  which writes ``GENERATED`` itself.
- Several threads of one OS process may write (the engine thread, the
  thread enforcing the cutoff): ``lock`` serialises them, and the engine
  holds it while it stores the recipe so a stop and a store never interleave.
- Several OS processes may write too (the worker, and whoever stops or reaps
  its process). Every write is a compare-and-set on the file: under an
  exclusive ``flock`` of the run folder it re-reads ``audit.json``, and when
  the file is already final (another process ended the run) the write is
  refused and this copy takes the file's final state. So a worker that
  wakes after ``vance process stop`` cannot write ``RUNNING`` over ``STOPPED``.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.base.clock import utc_now
from vance_cli.base.files import atomic_write_text

if TYPE_CHECKING:
    from vance_cli.processes.whole import Process
    from vance_cli.workspace import Workspace

SLART_FOLDER = "_slart"
"""Folder under ``recipes/`` that holds generated recipes (hidden from the selector: ``_``)."""

AUDIT_FILE = "audit.json"
"""File name of a run's audit, beside the generated recipe."""

CREATED = "CREATED"
"""Audit state: the Slart process exists, no worker has started yet."""
RUNNING = "RUNNING"
"""Audit state: a worker is asking the LLM (``attempt`` says which try)."""
GENERATED = "GENERATED"
"""Final audit state: a valid recipe was stored."""
FAILED = "FAILED"
"""Final audit state: no valid recipe (``reason`` says why)."""
TIMED_OUT = "TIMED_OUT"
"""Final audit state: the fallback cutoff passed first."""
STOPPED = "STOPPED"
"""Final audit state: stopped by a person or closed by someone else meanwhile."""
STALE = "STALE"
"""Final audit state: the worker died; the process was closed STALE (``reason`` says why)."""

FINAL_STATES = frozenset({GENERATED, FAILED, TIMED_OUT, STOPPED, STALE})
"""States after which the audit no longer changes."""


def run_folder(write_folder: Path, run_id: str) -> Path:
    """Return ``<layer>/recipes/_slart/<runId>``: the folder of one run."""
    return write_folder / "recipes" / SLART_FOLDER / run_id


def layer_path(run_id: str, file_name: str) -> str:
    """Return a run file's path relative to its layer, e.g. ``recipes/_slart/<runId>/x.yaml``."""
    return f"recipes/{SLART_FOLDER}/{run_id}/{file_name}"


class Audit:
    """``audit.json`` of one run, kept in memory and rewritten on every change.

    Args:
        path: the file.
        data: its content (see the module docstring for ``state``).
    """

    def __init__(self, path: Path, data: Mapping[str, Any]) -> None:
        self.path = path
        self.lock = threading.RLock()
        self._data: dict[str, Any] = dict(data)
        self._data.setdefault("attempts", [])

    @classmethod
    def create(cls, path: Path, **fields: Any) -> Audit:
        """Start a new audit in state ``CREATED`` and write it.

        Raises:
            OSError: the file cannot be written.
        """
        now = utc_now()
        audit = cls(path, {"state": CREATED, "reason": None, "createdAt": now,
                           "updatedAt": now, **fields, "attempts": []})
        audit._write()
        return audit

    @classmethod
    def resume(cls, path: Path, **fields: Any) -> Audit:
        """Continue the audit at ``path`` (a worker taking over a created run).

        A missing or unreadable file is started afresh, with a note saying so.
        """
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            data = {"state": CREATED, "createdAt": utc_now(),
                    "note": f"previous audit unreadable, started afresh: {exc}"}
        audit = cls(path, {**data, **fields})
        audit._write()
        return audit

    @classmethod
    def load(cls, path: Path) -> Audit | None:
        """Return the audit at ``path`` as it is on disk, or None when missing or unreadable."""
        data = _read(path)
        return cls(path, data) if data is not None else None

    @property
    def state(self) -> str:
        """The current state."""
        with self.lock:
            return str(self._data.get("state"))

    @property
    def final(self) -> bool:
        """True once the run reached a final state (later changes are ignored)."""
        return self.state in FINAL_STATES

    def snapshot(self) -> dict[str, Any]:
        """Return a copy of the content (for tests and messages)."""
        with self.lock:
            return json.loads(json.dumps(self._data))  # type: ignore[no-any-return]

    def update(self, **fields: Any) -> bool:
        """Set top-level fields and rewrite the file; False (nothing written) once final."""
        return self._commit(lambda data: data.update(fields))

    def begin_attempt(self, number: int, request: Mapping[str, Any]) -> bool:
        """Record that attempt ``number`` was sent (state RUNNING); False once final."""
        def change(data: dict[str, Any]) -> None:
            data["attempts"].append({"attempt": number, "startedAt": utc_now(), **request,
                                     "finishedAt": None})
            data.update(state=RUNNING, attempt=number)

        return self._commit(change)

    def end_attempt(self, **fields: Any) -> bool:
        """Complete the newest attempt (reply, extracted text, errors …); False once final."""
        with self.lock:
            if not self._data["attempts"]:
                return False
            return self._commit(
                lambda data: data["attempts"][-1].update(finishedAt=utc_now(), **fields))

    def finish(self, state: str, reason: str | None = None, **fields: Any) -> bool:
        """Move to a final state and write; False (nothing changed) when already final.

        Args:
            state: one of ``FINAL_STATES``.
            reason: why (failures, stops), or None.
            **fields: e.g. ``recipeName`` and ``recipePath``.
        """
        if state not in FINAL_STATES:
            raise ValueError(f"not a final audit state: {state}")
        return self._commit(lambda data: data.update(state=state, reason=reason,
                                                     finishedAt=utc_now(), **fields))

    def _commit(self, change: Callable[[dict[str, Any]], None]) -> bool:
        """Apply ``change`` and rewrite the file, unless the run has ended (here or on disk).

        Returns:
            True when written; False when the audit was final already — in
            memory, or on disk (another process ended the run: this copy then
            takes the file's content).
        """
        with self.lock, _folder_lock(self.path.parent):
            if self.final:
                return False
            on_disk = _read(self.path)
            if on_disk is not None and on_disk.get("state") in FINAL_STATES:
                self._data = on_disk
                self._data.setdefault("attempts", [])
                return False
            change(self._data)
            self._write()
            return True

    def _write(self) -> None:
        self._data["updatedAt"] = utc_now()
        atomic_write_text(self.path, json.dumps(self._data, ensure_ascii=False, indent=2) + "\n")


def _read(path: Path) -> dict[str, Any] | None:
    """Return the audit on disk, or None when missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the run folder (released when the process dies, too).

    The folder, not the file: the file is replaced on every write, and a lock
    file beside it would be one more file in the run folder.
    """
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def audit_file_of(ws: Workspace, process: Process) -> Path | None:
    """Return a Slart process's ``audit.json``: ``params.auditFile``, else from ``params.runId``."""
    recorded = process.params.get("auditFile")
    if isinstance(recorded, str) and recorded:
        return Path(recorded)
    run_id = process.params.get("runId")
    if isinstance(run_id, str) and run_id:
        return run_folder(ws.write_folder, run_id) / AUDIT_FILE
    return None


def closed_state(process: Process) -> tuple[str, str] | None:
    """Return the audit's final ``(state, reason)`` for a closed Slart process, or None for DONE.

    ``STALE`` → ``STALE``; ``STOPPED`` → ``TIMED_OUT`` when ``outcome.timedOut``,
    else ``STOPPED``; any other reason → ``FAILED``; the reason is
    ``outcome.reason``, else the close reason.
    """
    reason_code = process.close_reason or ""
    if reason_code == "DONE":
        return None
    outcome = dict(process.outcome or {})
    reason = str(outcome.get("reason") or reason_code)
    if reason_code == "STALE":
        return STALE, reason
    if reason_code == "STOPPED":
        return (TIMED_OUT if outcome.get("timedOut") else STOPPED), reason
    return FAILED, reason


def on_process_closed(ws: Workspace, process: Process) -> None:
    """Close hook of the ``slartibartfast`` recipe: bring a not-yet-final audit to its end.

    Args:
        ws: the workspace of whoever closed the process.
        process: the Slart process, as stored after the close.

    Rule: docs/delegate.md "Slartibartfast fallback" (the audit records the final state).
    """
    end = closed_state(process)
    path = audit_file_of(ws, process)
    if end is None or path is None:
        return
    audit = Audit.load(path)
    if audit is None:
        return
    state, reason = end
    audit.finish(state, reason, closedBy="process close", closeReason=process.close_reason)

