"""The worker side of a process: RUNNING with a heartbeat, then closed or idle.

Use (an engine's worker, e.g. Slartibartfast)::

    with running(ws, process_id) as run:      # → RUNNING, pid recorded, heartbeat on
        ...do the work; check run.stop_requested in long loops...
        run.close(CloseReason.DONE, {"recipePath": path})   # or leave it: → IDLE

Invariants (docs/processes.md):
- Entering moves the process to RUNNING, records this OS pid as
  ``worker_pid`` and stamps ``heartbeat_at``, in one transaction.
- A daemon thread, on its own database connection, stamps the heartbeat
  every ``process.heartbeat_interval`` seconds (one thread per OS process
  serves every running turn, so a turn starts no thread of its own) (never more than a third of
  ``process.stale_timeout``, so one late beat is not fatal). The stamp only
  lands while the process is RUNNING under this pid; when it does not (the
  process was stopped or closed as stale), ``run.stop_requested`` turns True.
  With the stamp it stores the turn's LLM call under way (``run.fly``) and
  the tokens out come so far, which stale detection records if the worker
  dies; a call that ends before the next stamp costs no write.
- Leaving: without ``run.close`` the turn ended and the process goes back to
  IDLE. An exception closes it as ``STALE`` with ``{"reason": "worker failed:
  …"}``; Ctrl-C or SIGTERM closes it as ``STOPPED``. If someone else closed it
  meanwhile (``vance process stop``, stale detection), leaving changes nothing.
- In the main thread, SIGTERM (what ``vance process stop`` sends) raises
  ``WorkerTerminated`` (a ``SystemExit`` with code 143) so ``finally`` blocks
  run and the script exits quietly; the previous handler is restored after.
- A worker killed outright (SIGKILL, a crash) stops stamping; the next
  ``vance process show|list|wait`` closes it as STALE (``lifecycle.reap_stale``)
  and records its LLM call under way, cut off.
- A launcher that starts a detached worker (the async Slartibartfast
  fallback) calls ``hand_over`` with the new pid at once, so a worker that
  dies before its first heartbeat is caught too; the worker then enters
  ``running(..., adopt=True)``.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from vance_cli.base.clock import utc_now
from vance_cli.base.errors import DatabaseLocked, InvalidTransition, StateError
from vance_cli.base.signals import WorkerTerminated, install_sigterm, stop_cause
from vance_cli.processes.lifecycle import close_process
from vance_cli.processes.model import CloseReason, Process, Status
from vance_cli.processes.records import apply_transition, change_status, load_process
from vance_cli.state import conversation
from vance_cli.state import process_store as store
from vance_cli.state.db import Database
from vance_cli.state.stores import open_state

if TYPE_CHECKING:
    from pathlib import Path

    from vance_cli.workspace import Workspace


_IDENTITY: ContextVar[str | None] = ContextVar("vance_worker_identity", default=None)


def worker_identity(pid: int | None = None) -> str:
    """Return the identity a turn run here stores as its process's ``worker``.

    ``host:pid`` for a local worker (``pid``: another OS process's, for a launcher's
    ``hand_over``); inside ``acting_as``, the identity given there (a team job's).
    """
    given = _IDENTITY.get() if pid is None else None
    return given or f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


@contextmanager
def acting_as(identity: str) -> Iterator[None]:
    """Run turns in this block (this thread) under worker ``identity`` (a team job's)."""
    token = _IDENTITY.set(identity)
    try:
        yield
    finally:
        _IDENTITY.reset(token)


def heartbeat_interval(interval: float, stale_timeout: float) -> float:
    """Return the interval a worker really uses: at most a third of the stale timeout.

    Args:
        interval: ``process.heartbeat_interval``, seconds.
        stale_timeout: ``process.stale_timeout``, seconds.
    """
    return max(0.01, min(interval, stale_timeout / 3))


class Flight:
    """A turn's LLM call under way, as the heartbeat stores it (``calls_in_flight``).

    The first stamp after the call started writes its row, later ones its
    progress: a call shorter than one heartbeat interval costs no write.

    Attributes:
        turn: the turn's number.
        purpose, model, endpoint: the call, as its record will name it.
        started_at: when it started (UTC text).
        chunks: text chunks come so far (its tokens out), counted by the turn.
        stored: the chunks the last stamp stored; None until a stamp wrote the row.
    """

    def __init__(self, turn: int, purpose: str, model: str | None,
                 endpoint: str | None) -> None:
        self.turn, self.purpose, self.model, self.endpoint = turn, purpose, model, endpoint
        self.started_at = utc_now()
        self.chunks = 0
        self.stored: int | None = None

    def store(self, db: Database, process_id: str) -> int | None:
        """Write the call's row or progress in ``db``'s transaction; return the chunks written.

        Returns:
            The chunks written, or None when nothing changed since the last stamp.
        """
        chunks = self.chunks
        if self.stored is None:
            conversation.start_call(db, process_id, self.turn, self.purpose, model=self.model,
                                    endpoint=self.endpoint, tokens_out=chunks,
                                    started_at=self.started_at)
        elif chunks != self.stored:
            conversation.call_progress(db, process_id, self.turn, chunks)
        else:
            return None
        return chunks


class Heartbeat:
    """Stamps a RUNNING process's heartbeat every ``interval`` seconds, on its own connection.

    The stamps are made by the one pacemaker thread of this OS process
    (``_Pacemaker``), which serves every running turn: starting a turn costs
    no thread of its own. The connection opens at the first stamp, so a turn
    shorter than one interval never pays for it.

    Args:
        target: the state store (``Settings.state_target``).
        process_id: full process id.
        worker: the worker identity the stamp must match (``worker_identity``).
        interval: seconds between stamps.
    """

    def __init__(self, target: Path | str, process_id: str, worker: str,
                 interval: float) -> None:
        self.target, self.process_id, self.worker, self.interval = (target, process_id, worker,
                                                                    interval)
        self.lost = threading.Event()
        self.beats = 0
        self.due = 0.0
        """When the next stamp is due (``time.monotonic``)."""
        self._lock = threading.Lock()  # held while stamping, so ``stop`` waits for a stamp
        self._stopped = False
        self._db: Database | None = None
        self.flight: Flight | None = None
        """The turn's LLM call under way, whose progress each stamp stores."""

    def start(self) -> None:
        """Have the pacemaker stamp from one interval on."""
        self.due = time.monotonic() + self.interval
        _Pacemaker.serve(self)

    def stamp(self) -> bool:
        """Stamp once (the pacemaker calls it when due).

        A stamp that does not land because the process is no longer ours
        sets ``lost``; a busy database is tried again at the next beat, and so
        is a PostgreSQL server that failed or cannot be reached (a dropped
        connection, a restart: the pool connects anew).

        Returns:
            True while the heartbeat goes on.
        """
        with self._lock:
            if self._stopped:
                return False
            self.due = time.monotonic() + self.interval
            try:
                if self._db is None:
                    self._db = open_state(self.target)
                flight, written = self.flight, None
                with self._db.transaction():
                    ours = store.stamp_heartbeat(self._db, self.process_id, self.worker)
                    if ours and flight is not None:
                        written = flight.store(self._db, self.process_id)
                if flight is not None and written is not None:  # committed
                    flight.stored = written
            except (sqlite3.Error, DatabaseLocked):  # busy past the wait: try again next beat
                return True
            except Exception as exc:  # the database cannot be opened: no more stamps,
                if isinstance(exc, StateError) and isinstance(self.target, str):
                    return True  # but a server's failure may pass: try again next beat
                self._end()
                return False
            if not ours:
                self.lost.set()
                self._end()
                return False
            self.beats += 1
            return True

    def land(self) -> bool:
        """Stop storing the call under way (waiting for a stamp under way).

        Returns:
            True when a stamp wrote the call's row (``calls_in_flight``).
        """
        with self._lock:
            flight, self.flight = self.flight, None
        return flight is not None and flight.stored is not None

    def stop(self) -> None:
        """Stop stamping (waiting for a stamp under way); no stamp lands after this."""
        with self._lock:
            self._end()

    def _end(self) -> None:
        self._stopped = True
        _Pacemaker.drop(self)
        db, self._db = self._db, None
        if db is not None:
            db.close()


class _Pacemaker:
    """The one daemon thread of an OS process that stamps every running turn's heartbeat.

    Started on first use. It sleeps until the earliest heartbeat is due; a
    new heartbeat wakes it only when it is due before that (the first one, or
    a shorter interval), so starting a turn seldom switches threads. A child
    made by ``os.fork`` starts with no heartbeats and its own thread.
    """

    _lock: ClassVar[threading.Condition] = threading.Condition()
    _beats: ClassVar[set[Heartbeat]] = set()
    _thread: ClassVar[threading.Thread | None] = None
    _wake_at: ClassVar[float | None] = None
    """When the sleeping thread wakes by itself; None: only when notified."""

    @classmethod
    def serve(cls, beat: Heartbeat) -> None:
        """Add ``beat`` to the heartbeats stamped (starting the thread if needed)."""
        with cls._lock:
            cls._beats.add(beat)
            if cls._thread is None or not cls._thread.is_alive():
                cls._wake_at = beat.due
                cls._thread = threading.Thread(target=cls._run, name="vance-heartbeat",
                                               daemon=True)
                cls._thread.start()
            elif cls._wake_at is None or beat.due < cls._wake_at:
                cls._wake_at = beat.due
                cls._lock.notify()

    @classmethod
    def drop(cls, beat: Heartbeat) -> None:
        """Stop stamping ``beat`` (no wake-up needed: the thread skips a dropped beat)."""
        with cls._lock:
            cls._beats.discard(beat)

    @classmethod
    def _run(cls) -> None:
        while True:
            with cls._lock:
                now = time.monotonic()
                due = [b for b in cls._beats if b.due <= now]
                if not due:
                    # asleep until the next beat is due; with none, until the time already
                    # set (a turn that starts before then needs no wake-up), then until told
                    upcoming = min((b.due for b in cls._beats), default=None)
                    if upcoming is None and cls._wake_at is not None and cls._wake_at > now:
                        upcoming = cls._wake_at
                    cls._wake_at = upcoming
                    cls._lock.wait(None if upcoming is None else upcoming - now)
                    continue
            for beat in due:
                beat.stamp()

    @classmethod
    def forget(cls) -> None:
        """Start afresh (in a forked child: the parent's thread and turns are not its own)."""
        cls._lock = threading.Condition()
        cls._beats = set()
        cls._thread = None
        cls._wake_at = None


os.register_at_fork(after_in_child=_Pacemaker.forget)


class Run:
    """What a worker holds while its process is RUNNING (see the module docstring).

    Attributes:
        process_id: full process id.
    """

    def __init__(self, ws: Workspace, process_id: str, heartbeat: Heartbeat) -> None:
        self.ws = ws
        self.process_id = process_id
        self._heartbeat = heartbeat
        self.closed = False

    @property
    def worker(self) -> str:
        """The identity this turn holds its process under (settles compare-and-set on it)."""
        return self._heartbeat.worker

    @property
    def stop_requested(self) -> bool:
        """True once the process is no longer RUNNING under this worker (stopped, stale)."""
        return self._heartbeat.lost.is_set()

    def fly(self, turn: int, purpose: str, model: str | None, endpoint: str | None) -> Flight:
        """Have the heartbeat store turn ``turn``'s LLM call under way and its progress.

        ``land`` ends the heartbeat's part.
        """
        flight = Flight(turn, purpose, model, endpoint)
        self._heartbeat.flight = flight
        return flight

    def land(self) -> bool:
        """Stop storing the call under way (it ended); True when a stamp wrote its row.

        Waits for a stamp under way, so the answer is final.
        """
        return self._heartbeat.land()

    def process(self) -> Process:
        """Return the process as stored now."""
        return load_process(self.ws, self.process_id)

    def close(self, reason: CloseReason | str, outcome: Mapping[str, Any] | None = None,
              note: str | None = None) -> bool:
        """Close the process (``DONE`` with its result, or ``STALE`` with a reason).

        Returns:
            True when this call closed it; False when it was no longer RUNNING
            (stopped or closed as stale meanwhile): the caller should then
            discard its work, e.g. not spawn what it generated.
        """
        self._heartbeat.stop()
        _, closed_from = close_process(self.ws, self.process_id, reason, outcome, note=note,
                                       only_from=Status.RUNNING, owner=self.worker)
        self.closed = True
        return closed_from is not None

    def settled(self) -> None:
        """Say the caller has settled the process itself (IDLE, BLOCKED or closed).

        The heartbeat stops, and leaving ``running`` changes nothing more.
        """
        self._heartbeat.stop()
        self.closed = True


def hand_over(ws: Workspace, process_id: str, pid: int) -> bool:
    """Mark a process RUNNING under a worker a launcher just started (``pid``).

    A detached worker needs a moment to start; recording its pid at once lets
    stale detection see a worker that died before its first heartbeat. The
    worker then enters ``running(..., adopt=True)``. If the worker was faster
    and already made the process RUNNING itself, nothing changes.

    Args:
        ws: workspace.
        process_id: full id of a process in a status that may start a turn.
        pid: the worker's OS pid.

    Returns:
        True when this call moved the process to RUNNING.
    """
    with ws.db.transaction():
        current = load_process(ws, process_id)
        if current.status is Status.RUNNING:
            return False
        moved = apply_transition(ws.db, current.id, current.status, Status.RUNNING,
                                 note=f"worker {pid} launched")
        if moved:
            store.set_worker(ws.db, current.id, pid, worker_identity(pid))
        return moved


@contextmanager
def running(ws: Workspace, process_id: str, handle_sigterm: bool = True,
            adopt: bool = False, on_claim: Callable[[str], object] | None = None,
            seen: Process | None = None) -> Iterator[Run]:
    """Run a turn of a process: RUNNING with a heartbeat, then closed or back to IDLE.

    Args:
        ws: workspace (database, ``process.heartbeat_interval`` and ``process.stale_timeout``).
        process_id: full id or unique prefix of a process in INIT, IDLE, PAUSED,
            SUSPENDED or BLOCKED.
        handle_sigterm: in the main thread, turn SIGTERM into ``WorkerTerminated``.
        adopt: take over a process a launcher already made RUNNING under this
            worker (``hand_over``, or a team job's takeover) instead of failing on
            RUNNING → RUNNING.
        on_claim: called with the full id inside the transaction that makes the
            process RUNNING, after it: what it writes is stored with the claim or
            not at all (a turn's start and inputs).
        seen: the process as the caller has just read it (not with ``adopt``): it is
            claimed with compare-and-set on that status instead of being read again.

    Yields:
        A Run: ``close()``, ``stop_requested``, ``process()``.

    Raises:
        ProcessNotFound: no such process.
        InvalidTransition: the process cannot start a turn (RUNNING already, or CLOSED),
            or it is no longer as ``seen``.
    """
    db, pid, me = ws.db, os.getpid(), worker_identity()
    with db.transaction():
        current = seen if seen is not None and not adopt else load_process(ws, process_id)
        if adopt and current.status is Status.RUNNING and current.worker == me:
            store.set_worker(db, current.id, pid, me)  # handed over: the heartbeat starts now
        elif change_status(db, current.id, current.status, Status.RUNNING,
                           note=f"worker {me}", worker_pid=pid, worker=me) is None:
            raise InvalidTransition(f"process {current.id} is no longer"
                                    f" {current.status.value}: another writer came first")
        if on_claim is not None:
            on_claim(current.id)
    settings = ws.settings
    beat = Heartbeat(settings.state_target, current.id, me, heartbeat_interval(
        settings.process_heartbeat_interval, settings.process_stale_timeout))
    run = Run(ws, current.id, beat)
    previous = install_sigterm() if handle_sigterm else None
    beat.start()
    try:
        yield run
    except BaseException as exc:
        beat.stop()
        _close_after(run, exc)
        raise
    finally:
        beat.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if not run.closed:
        with db.transaction():
            change_status(db, run.process_id, Status.RUNNING, Status.IDLE, note="turn ended",
                          owner=me)


def _close_after(run: Run, exc: BaseException) -> None:
    if run.closed:
        return
    stop = stop_cause(exc)
    if stop is not None:
        what = "received SIGTERM" if isinstance(stop, WorkerTerminated) else "was interrupted"
        run.close(CloseReason.STOPPED, {"reason": f"worker {what}"}, note=f"worker {what}")
        return
    message = f"worker failed: {type(exc).__name__}: {exc}".rstrip(": ")
    run.close(CloseReason.STALE, {"reason": message}, note=message)


