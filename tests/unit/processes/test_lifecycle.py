from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers import make_process as make

from vance_cli.base.config import load_settings
from vance_cli.base.errors import InvalidTransition
from vance_cli.processes.lifecycle import (
    close_process,
    is_pid_alive,
    reap_and_load,
    reap_stale,
    stale_reason,
    stop_process,
    wait_process,
)
from vance_cli.processes.model import TRANSITIONS, CloseReason, Status, check_transition
from vance_cli.processes.records import list_processes, load_process, transition
from vance_cli.processes.worker import worker_identity
from vance_cli.state import process_store as store
from vance_cli.workspace import Workspace

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def iso(delta_seconds: float) -> str:
    return (NOW - timedelta(seconds=delta_seconds)).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")




def age(ws: Workspace, process_id: str, seconds: float, pid: int | None = None) -> None:
    """Pretend the process's last heartbeat was ``seconds`` ago (and record ``pid``)."""
    old = (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")
    with ws.db.transaction():
        ws.db.conn.execute("UPDATE processes SET heartbeat_at = ?, updated_at = ?,"
                           " worker_pid = ? WHERE id = ?", (old, old, pid, process_id))


# The status table of DESIGN.md §4, pinned: from → the statuses it may go to.
EXPECTED = {
    "INIT": {"RUNNING", "IDLE", "CLOSED"},
    "RUNNING": {"IDLE", "BLOCKED", "PAUSED", "SUSPENDED", "CLOSED"},
    "IDLE": {"RUNNING", "PAUSED", "SUSPENDED", "CLOSED"},
    "BLOCKED": {"RUNNING", "IDLE", "PAUSED", "SUSPENDED", "CLOSED"},
    "PAUSED": {"RUNNING", "IDLE", "CLOSED"},
    "SUSPENDED": {"RUNNING", "IDLE", "CLOSED"},
    "CLOSED": set(),
}


@pytest.mark.parametrize(("old", "new"), [(o, n) for o in Status for n in Status])
def test_transition_matrix(old: Status, new: Status) -> None:
    allowed = new.value in EXPECTED[old.value]
    assert (new in TRANSITIONS[old]) is allowed
    if allowed:
        check_transition(old, new)
    else:
        with pytest.raises(InvalidTransition):
            check_transition(old, new)


@pytest.mark.parametrize(
    ("row", "alive", "expected"),
    [
        ({"status": "IDLE", "worker_pid": 1, "heartbeat_at": iso(999), "updated_at": iso(999)},
         False, None),
        ({"status": "RUNNING", "worker_pid": 42, "heartbeat_at": iso(1), "updated_at": iso(1)},
         True, None),
        ({"status": "RUNNING", "worker_pid": 42, "heartbeat_at": iso(1), "updated_at": iso(1)},
         False, "worker process 42 is gone"),
        ({"status": "RUNNING", "worker_pid": 42, "heartbeat_at": iso(31), "updated_at": iso(1)},
         True, "no heartbeat from worker 42 for 31.0 s, over the 30 s stale timeout"),
        ({"status": "RUNNING", "worker_pid": None, "heartbeat_at": None, "updated_at": iso(45)},
         True, "no heartbeat (no worker recorded) for 45.0 s"),
        ({"status": "RUNNING", "worker_pid": None, "heartbeat_at": None, "updated_at": iso(5)},
         True, None),
    ],
)
def test_stale_reason(row: dict[str, Any], alive: bool, expected: str | None) -> None:
    reason = stale_reason(row, NOW, 30.0, alive=lambda pid: alive)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and reason.startswith(expected)


def test_is_pid_alive() -> None:
    import os

    assert is_pid_alive(os.getpid())
    assert not is_pid_alive(0) and not is_pid_alive(-1)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not is_pid_alive(child.pid)  # reaped: gone
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # exited but not reaped yet: a zombie is not alive
        if not is_pid_alive(zombie.pid):
            break
        time.sleep(0.02)
    assert not is_pid_alive(zombie.pid)
    zombie.wait()


def test_reap_closes_stale_and_notifies_parent_once(ws: Workspace) -> None:
    parent = make(ws, "parent")
    child = make(ws, "child", parent)
    transition(ws, child, Status.RUNNING)
    age(ws, child, 31.0, pid=None)
    shown = reap_and_load(ws, child)  # the commands' named step: reap, then read
    assert shown.status is Status.CLOSED and shown.close_reason == "STALE"
    assert shown.outcome is not None and "no heartbeat" in shown.outcome["reason"]
    assert reap_stale(ws) == []
    events = ws.db.query("SELECT kind, recipient_process_id, payload FROM events")
    assert [(e[0], e[1]) for e in events] == [("child_closed", parent)]
    trail = ws.db.query("SELECT to_status, close_reason FROM process_transitions"
                        " WHERE process_id = ? AND to_status = 'CLOSED'", (child,))
    assert [tuple(t) for t in trail] == [("CLOSED", "STALE")]


def test_fresh_running_process_is_left_alone(ws: Workspace) -> None:
    pid = make(ws, "fresh")
    transition(ws, pid, Status.RUNNING)
    assert [p.status for p in list_processes(ws)] == [Status.RUNNING]


def test_reads_never_write(ws: Workspace) -> None:
    pid = make(ws, "old")
    transition(ws, pid, Status.RUNNING)
    team = ws.settings.team  # a team's database has no pid check: only a silent heartbeat
    age(ws, pid, 31.0 if team else 5.0, pid=999_999_99)  # pid that cannot exist
    before = ws.db.query("SELECT count(*) FROM process_transitions")[0][0]
    assert [p.status for p in list_processes(ws)] == [Status.RUNNING]
    assert load_process(ws, pid).status is Status.RUNNING
    assert ws.db.query("SELECT count(*) FROM process_transitions")[0][0] == before
    [reaped] = reap_stale(ws)  # the named step closes it
    assert reaped.status is Status.CLOSED
    assert ("no heartbeat" if team else "is gone") in reaped.outcome["reason"]  # type: ignore[index]


def test_concurrent_reapers_close_once() -> None:
    setup = Workspace(load_settings())
    parent = make(setup, "p")
    ids = [make(setup, f"c{i}", parent) for i in range(5)]
    for pid in ids:
        transition(setup, pid, Status.RUNNING)
        age(setup, pid, 60.0)
    setup.close()
    barrier = threading.Barrier(4)
    closed: list[str] = []

    def reap() -> None:
        local = Workspace(load_settings())
        barrier.wait()
        closed.extend(p.id for p in reap_stale(local))
        local.close()

    threads = [threading.Thread(target=reap) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(closed) == sorted(ids)  # each exactly once over all reapers
    check = Workspace(load_settings())
    count = check.db.query_one("SELECT COUNT(*) FROM events")[0]  # type: ignore[index]
    assert count == 5
    check.close()


def test_reaper_rechecks_under_the_lock(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A heartbeat stamped between the unlocked scan and the close saves the process."""
    pid = make(ws, "racer")
    transition(ws, pid, Status.RUNNING)
    age(ws, pid, 60.0)
    real = store.list_processes

    def scan_then_beat(*args: Any, **kwargs: Any) -> Any:
        rows = real(*args, **kwargs)
        with ws.db.transaction():  # the worker stamps right after the scan
            ws.db.conn.execute("UPDATE processes SET heartbeat_at = ? WHERE id = ?",
                               (datetime.now(UTC).isoformat().replace("+00:00", "Z"), pid))
        return rows

    monkeypatch.setattr(store, "list_processes", scan_then_beat)
    assert reap_stale(ws) == []
    assert load_process(ws, pid).status is Status.RUNNING


def test_close_process_is_a_no_op_when_closed(ws: Workspace) -> None:
    pid = make(ws, "c")
    closed, from_status = close_process(ws, pid, CloseReason.DONE, {"ok": 1})
    assert from_status is Status.IDLE and closed.close_reason == "DONE"
    again, from_status = close_process(ws, pid, CloseReason.STOPPED)
    assert from_status is None and again.close_reason == "DONE"
    other = make(ws, "d")
    same, from_status = close_process(ws, other, CloseReason.DONE, only_from=Status.RUNNING)
    assert from_status is None and same.status is Status.IDLE


def test_wait_returns_once_the_turn_settled(ws: Workspace) -> None:
    idle = make(ws, "idle")
    settled = wait_process(ws, idle, timeout=0)  # not RUNNING: nothing to wait for
    assert not settled.timed_out and not settled.failed
    running = make(ws, "running")
    transition(ws, running, Status.RUNNING)
    timed = wait_process(ws, running, timeout=0.3)
    assert timed.timed_out and timed.to_json()["timedOut"] is True

    def settle_on_first_pause(seconds: float) -> None:
        assert 0 < seconds <= 0.5
        transition(ws, running, Status.IDLE)

    finished = wait_process(ws, running, timeout=5, sleep=settle_on_first_pause)
    assert not finished.failed and not finished.timed_out
    assert finished.process.status is Status.IDLE
    done = make(ws, "done")
    close_process(ws, done, CloseReason.DONE)
    assert not wait_process(ws, done, timeout=0).failed
    stopped = make(ws, "stopped")
    close_process(ws, stopped, CloseReason.STOPPED)
    assert wait_process(ws, stopped, timeout=0).failed


def test_wait_backs_off_without_busy_looping(ws: Workspace) -> None:
    pid = make(ws, "slow")
    transition(ws, pid, Status.RUNNING)
    pauses: list[float] = []

    def record(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 8:
            close_process(ws, pid, CloseReason.DONE)

    wait_process(ws, pid, sleep=record)
    assert pauses[0] == 0.05 and pauses[-1] == 0.5
    assert all(b >= a for a, b in itertools.pairwise(pauses))


def test_stop_idle_process_and_stop_again(ws: Workspace) -> None:
    pid = make(ws, "s")
    first = stop_process(ws, pid[:6])
    assert first.stopped and first.signalled_pid is None
    assert first.process.close_reason == "STOPPED"
    second = stop_process(ws, pid)
    assert not second.stopped and second.process.close_reason == "STOPPED"


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


@pytest.mark.sqlite_only  # on a team's PostgreSQL no pid is signalled: the test below
def test_stop_signals_a_running_worker_with_a_fresh_heartbeat(ws: Workspace) -> None:
    worker = _sleeper()  # stands in for a worker: a real process we own
    try:
        pid = make(ws, "busy")
        transition(ws, pid, Status.RUNNING)
        with ws.db.transaction():
            store.set_worker(ws.db, pid, worker.pid, worker_identity(worker.pid))
        result = stop_process(ws, pid)
        assert result.stopped and result.signalled_pid == worker.pid
        assert worker.wait(timeout=10) == -signal.SIGTERM
        assert result.to_json()["signalledPid"] == worker.pid
    finally:
        worker.kill()
        worker.wait()


def test_stop_never_signals_a_pid_whose_heartbeat_is_old(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """An old heartbeat means the pid may belong to someone else now: no SIGTERM."""
    import vance_cli.processes.lifecycle as lifecycle

    stranger = _sleeper()
    try:
        pid = make(ws, "old-worker")
        transition(ws, pid, Status.RUNNING)
        age(ws, pid, 60.0, pid=stranger.pid)
        # the race window: stop runs before any reader closed it as stale
        monkeypatch.setattr(lifecycle, "reap_stale", lambda ws: [])
        result = stop_process(ws, pid)
        assert result.stopped and result.signalled_pid is None
        time.sleep(0.2)
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()


@pytest.mark.postgres  # a team's database: workers may run on other hosts
def test_on_a_team_database_stop_signals_no_pid_and_the_worker_sees_the_close(
        ws: Workspace) -> None:
    from vance_cli.processes.worker import Heartbeat

    local = _sleeper()  # a live pid here, but the worker could be any host's pid
    try:
        pid = make(ws, "elsewhere")
        transition(ws, pid, Status.RUNNING)
        with ws.db.transaction():
            store.set_worker(ws.db, pid, local.pid, worker_identity(local.pid))
        result = stop_process(ws, pid)
        assert result.stopped and result.signalled_pid is None
        assert load_process(ws, pid).close_reason == "STOPPED"
        time.sleep(0.2)
        assert local.poll() is None  # never signalled
        beat = Heartbeat(ws.settings.state_target, pid, worker_identity(local.pid), 60)
        assert beat.stamp() is False and beat.lost.is_set()  # the worker finds out itself
    finally:
        local.kill()
        local.wait()


@pytest.mark.postgres
def test_on_a_team_database_only_the_heartbeat_age_says_a_worker_is_gone(
        ws: Workspace) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # no such pid here; on its own host the worker may well live
    beating, silent = make(ws, "beating"), make(ws, "silent")
    for pid in (beating, silent):
        transition(ws, pid, Status.RUNNING)
    age(ws, beating, 1.0, pid=gone.pid)
    age(ws, silent, 31.0, pid=gone.pid)
    assert [p.id for p in reap_stale(ws)] == [silent]
    assert load_process(ws, beating).status is Status.RUNNING
    reason = load_process(ws, silent).outcome["reason"]  # type: ignore[index]
    assert reason.startswith(f"no heartbeat from worker {gone.pid} for 3")


def test_a_turn_past_its_deadline_is_reaped_while_its_worker_still_beats(
        vance_home: object) -> None:
    """Issue 26: a heartbeat shows life, not progress; the turn's deadline reaps it."""
    from vance_cli.processes.model import ProcessSpec
    from vance_cli.processes.records import create_process
    from vance_cli.processes.worker import running
    from vance_cli.state import conversation

    ws = Workspace(load_settings())
    try:
        pid = create_process(ws, ProcessSpec(recipe="coding", name="slow",
                                             params={"budget": {"turnSeconds": 1}})).id
        with running(ws, pid, handle_sigterm=False) as run:
            with ws.db.transaction():
                conversation.start_turn(ws.db, pid, 1, os.getpid())
                conversation.start_call(ws.db, pid, 1, "reply", model="m", endpoint=None)
            assert reap_stale(ws) == []  # in time: left alone
            old = (datetime.now(UTC) - timedelta(seconds=60)).isoformat(
                timespec="milliseconds").replace("+00:00", "Z")
            with ws.db.transaction():
                ws.db.conn.execute("UPDATE turns SET started_at = ? WHERE process_id = ?",
                                   (old, pid))
            reaped = reap_stale(ws)  # the heartbeat is fresh: only the deadline says so
            assert [p.id for p in reaped] == [pid]
            assert run.stop_requested or wait_for_lost(run)
        process = load_process(ws, pid)
        assert process.close_reason == "STALE"
        assert "past its deadline of 1 s" in process.outcome["reason"]
        turn = conversation.turns(ws.db, pid)[0]
        assert (turn["outcome"], turn["ended_at"] is not None) == ("STALE", True)
        # its worker lives and records its call itself: the reaper leaves the call alone
        assert conversation.llm_totals(ws.db, pid)[0] == 0
        assert len(ws.db.query("SELECT * FROM calls_in_flight")) == 1
    finally:
        ws.close()


def test_a_dead_workers_call_under_way_is_recorded_cut_off(ws: Workspace) -> None:
    from vance_cli.processes.lifecycle import CUT_OFF
    from vance_cli.state import conversation

    pid = make(ws, "killed")
    transition(ws, pid, Status.RUNNING)
    with ws.db.transaction():
        conversation.start_turn(ws.db, pid, 1, 999_999)
        conversation.start_call(ws.db, pid, 1, "reply", model="m", endpoint="http://h/v1")
        conversation.call_progress(ws.db, pid, 1, 4)
    age(ws, pid, 60.0)
    assert [p.id for p in reap_stale(ws)] == [pid]
    rows = ws.db.query("SELECT turn, purpose, model, endpoint, tokens_out, error FROM llm_calls"
                       " WHERE process_id = ?", (pid,))
    assert [tuple(r) for r in rows] == [(1, "reply", "m", "http://h/v1", 4, CUT_OFF)]
    assert ws.db.query("SELECT * FROM calls_in_flight") == []


def wait_for_lost(run: Any) -> bool:
    from helpers import wait_until

    return wait_until(lambda: run.stop_requested, timeout=30)
