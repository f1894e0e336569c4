from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from helpers import make_process as make
from helpers import wait_until

from vance_cli.base.config import load_settings
from vance_cli.base.errors import InvalidTransition
from vance_cli.base.signals import WorkerTerminated
from vance_cli.processes.events import EventQuery, pending_events
from vance_cli.processes.lifecycle import stop_process
from vance_cli.processes.model import CloseReason, Status
from vance_cli.processes.records import load_process
from vance_cli.processes.worker import heartbeat_interval, running, worker_identity
from vance_cli.workspace import Workspace


@pytest.fixture()
def ws(monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.setenv("VANCE_HEARTBEAT_INTERVAL", "0.05")
    monkeypatch.setenv("VANCE_STALE_TIMEOUT", "5")
    workspace = Workspace(load_settings())
    yield workspace
    workspace.close()



def test_interval_is_at_most_a_third_of_the_timeout() -> None:
    assert heartbeat_interval(5, 30) == 5
    assert heartbeat_interval(20, 30) == 10
    assert heartbeat_interval(1, 0.003) == 0.01


def test_running_records_pid_stamps_heartbeat_then_idles(ws: Workspace) -> None:
    pid = make(ws, "turn")
    with running(ws, pid) as run:
        proc = run.process()
        assert proc.status is Status.RUNNING and proc.worker_pid == os.getpid()
        first = proc.heartbeat_at
        assert first is not None
        assert wait_until(lambda: load_process(ws, pid).heartbeat_at != first)  # the thread stamps
        assert not run.stop_requested
    after = load_process(ws, pid)
    assert after.status is Status.IDLE
    trail = ws.db.query("SELECT from_status, to_status FROM process_transitions"
                        " WHERE process_id = ? ORDER BY id", (pid,))
    assert [tuple(t) for t in trail][-2:] == [("IDLE", "RUNNING"), ("RUNNING", "IDLE")]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handler restored


def test_one_thread_stamps_every_running_turn_a_shorter_interval_at_once(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    slow, fast = make(ws, "slow"), make(ws, "fast")
    monkeypatch.setenv("VANCE_HEARTBEAT_INTERVAL", "3600")
    monkeypatch.setenv("VANCE_STALE_TIMEOUT", "86400")
    slow_ws = Workspace(load_settings())  # its first beat is an hour away
    try:
        with running(slow_ws, slow, handle_sigterm=False), \
                running(ws, fast, handle_sigterm=False) as run:
            first = run.process().heartbeat_at
            assert wait_until(lambda: load_process(ws, fast).heartbeat_at != first)
            assert load_process(ws, slow).status is Status.RUNNING
    finally:
        slow_ws.close()
    beating = [t for t in threading.enumerate() if t.name == "vance-heartbeat"]
    assert len(beating) == 1


def test_close_done_with_result_notifies_parent(ws: Workspace) -> None:
    parent = make(ws, "parent")
    child = make(ws, "child", parent)
    with running(ws, child) as run:
        assert run.close(CloseReason.DONE, {"recipePath": "recipes/_slart/r/x.yaml"})
    proc = load_process(ws, child)
    assert (proc.status, proc.close_reason) == (Status.CLOSED, "DONE")
    events = pending_events(ws, EventQuery(parent))
    assert len(events) == 1
    assert events[0].payload["closeReason"] == "DONE"
    assert events[0].payload["outcome"] == {"recipePath": "recipes/_slart/r/x.yaml"}
    assert events[0].source == child and events[0].kind == "child_closed"


def test_exception_closes_stale_with_the_reason(ws: Workspace) -> None:
    pid = make(ws, "boom")
    with pytest.raises(RuntimeError), running(ws, pid):
        raise RuntimeError("model unreachable")
    proc = load_process(ws, pid)
    assert proc.close_reason == "STALE"
    assert proc.outcome == {"reason": "worker failed: RuntimeError: model unreachable"}


@pytest.mark.parametrize(("exc", "reason"), [
    (KeyboardInterrupt(), "worker was interrupted"),
    (WorkerTerminated(), "worker received SIGTERM"),
])
def test_interrupt_and_sigterm_close_stopped(ws: Workspace, exc: BaseException,
                                             reason: str) -> None:
    pid = make(ws, "int")
    with pytest.raises(type(exc)), running(ws, pid):
        raise exc
    proc = load_process(ws, pid)
    assert proc.close_reason == "STOPPED" and proc.outcome == {"reason": reason}


def test_sigterm_in_the_main_thread_becomes_worker_terminated(ws: Workspace) -> None:
    pid = make(ws, "term")
    with pytest.raises(WorkerTerminated) as info, running(ws, pid):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert info.value.code == 143
    assert load_process(ws, pid).close_reason == "STOPPED"


def test_stop_from_outside_sets_stop_requested_and_wins(ws: Workspace) -> None:
    pid = make(ws, "stopme")
    other = Workspace(load_settings())
    with running(ws, pid, handle_sigterm=False) as run:
        # another command stops it (no signal: the pid is ours, stop never signals itself)
        assert stop_process(other, pid).stopped
        assert wait_until(lambda: run.stop_requested)
        assert run.close(CloseReason.DONE) is False  # too late: it was stopped
    proc = load_process(ws, pid)
    assert proc.close_reason == "STOPPED"
    other.close()


def test_cannot_run_a_closed_or_running_process(ws: Workspace) -> None:
    pid = make(ws, "twice")
    with running(ws, pid):
        with pytest.raises(InvalidTransition):
            with running(ws, pid):
                pass
    stop_process(ws, pid)
    with pytest.raises(InvalidTransition):
        with running(ws, pid):
            pass


def test_running_outside_the_main_thread_leaves_signals_alone(ws: Workspace) -> None:
    pid = make(ws, "thread")
    seen: list[object] = []

    def body() -> None:
        local = Workspace(load_settings())
        with running(local, pid) as run:
            seen.append(run.process().status)
        local.close()

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert seen == [Status.RUNNING]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@pytest.mark.postgres  # a server's failure, as a team's database meets one
def test_a_heartbeat_outlives_a_dropped_server_connection(ws: Workspace) -> None:
    import psycopg

    from vance_cli.processes.records import transition
    from vance_cli.processes.worker import Heartbeat
    from vance_cli.state import process_store as store

    pid = make(ws, "beating")
    transition(ws, pid, Status.RUNNING)
    with ws.db.transaction():
        store.set_worker(ws.db, pid, os.getpid(), worker_identity())
    beat = Heartbeat(ws.settings.state_target, pid, worker_identity(), 60)
    try:
        assert beat.stamp() is True and beat.beats == 1
        with psycopg.connect(str(ws.settings.state_target), autocommit=True) as admin:
            ended = admin.execute(  # the server drops every other connection to the database
                "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t"
            ).fetchone()
        assert ended is not None and ended[0] >= 1
        assert beat.stamp() is True  # refused by the dropped connection, or landed anew
        assert wait_until(lambda: beat.stamp() and beat.beats >= 2, timeout=30)
        assert not beat.lost.is_set()
    finally:
        beat.stop()
