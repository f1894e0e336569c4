"""Process lifecycle through real processes: workers, stale detection, wait, stop, events."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import run_cli, wait_until

pytestmark = pytest.mark.usefixtures("state_store")  # on both stores (docs/teams.md#tests)

WORKER = Path(__file__).resolve().parent.parent / "workers" / "turn_worker.py"
FAST = {"VANCE_HEARTBEAT_INTERVAL": "0.1", "VANCE_STALE_TIMEOUT": "2"}


@pytest.fixture(autouse=True)
def fast_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in FAST.items():
        monkeypatch.setenv(key, value)


class Lines:
    """Read a subprocess's stdout lines from a thread, with a timeout per line."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.queue: queue.Queue[str] = queue.Queue()
        assert proc.stdout is not None
        stream = proc.stdout
        threading.Thread(target=lambda: [self.queue.put(line) for line in stream],
                         daemon=True).start()

    def next(self, timeout: float = 20) -> str:
        return self.queue.get(timeout=timeout)


def create(name: str, parent: str | None = None) -> str:
    args = ["process", "create", "--recipe", "coding", "--name", name, "--json"]
    if parent:
        args += ["--parent", parent]
    result = run_cli(args)
    assert result.exit_code == 0, result.stderr
    return str(result.json()["id"])


@pytest.fixture()
def start_worker() -> Iterator[object]:
    started: list[subprocess.Popen[str]] = []

    def start(process_id: str, mode: str = "idle",
              seconds: float = 60) -> tuple[subprocess.Popen[str], Lines]:
        proc = subprocess.Popen([sys.executable, str(WORKER), process_id, mode, str(seconds)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=os.environ.copy())
        started.append(proc)
        lines = Lines(proc)
        assert lines.next().startswith("running "), proc.stderr
        return proc, lines

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def show(process_id: str) -> dict[str, object]:
    """``vance process show --json`` in-process: the worker is the separate program here."""
    result = run_cli(["process", "show", process_id, "--json"])
    assert result.exit_code == 0, result.stderr
    return result.json()  # type: ignore[no-any-return]


def team() -> bool:
    """True on a team's PostgreSQL (``state_store``): no pid checks, the heartbeat age only."""
    return bool(os.environ.get("VANCE_STATE_URL"))


def test_sigkilled_worker_is_reported_stale_at_once(start_worker) -> None:  # type: ignore[no-untyped-def]
    """A gone pid is stale at the next read: no stale timeout to wait for.

    On a team's database the worker may be on another host: its silent heartbeat says so,
    after the stale timeout.
    """
    parent = create("caller")
    child = create("slart-ish", parent)
    worker, _ = start_worker(child)
    running = show(child)
    assert running["status"] == "RUNNING"
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    if team():
        assert wait_until(lambda: show(child)["status"] == "CLOSED", timeout=30)
    shown = show(child)
    assert (shown["status"], shown["closeReason"]) == ("CLOSED", "STALE")
    reason = shown["outcome"]["reason"]  # type: ignore[index]
    assert (f"no heartbeat from worker {worker.pid} for " if team() else
            f"worker process {worker.pid} is gone") in reason
    events = run_cli(["process", "events", "--for", parent, "--json"]).json()
    assert [(e["source"], e["payload"]["closeReason"]) for e in events] == [(child, "STALE")]


def test_a_frozen_worker_is_stale_by_heartbeat_age(start_worker,  # type: ignore[no-untyped-def]
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGSTOP keeps the pid alive but stops the heartbeat: the age alone closes it."""
    monkeypatch.setenv("VANCE_STALE_TIMEOUT", "0.5")  # frozen at once: nothing to give room
    pid = create("frozen")
    worker, lines = start_worker(pid)
    worker.send_signal(signal.SIGSTOP)
    try:  # a loaded machine may need longer than the stale timeout: poll, never a fixed sleep
        assert wait_until(lambda: show(pid)["closeReason"] == "STALE")
        shown = show(pid)
        assert "no heartbeat from worker" in shown["outcome"]["reason"]  # type: ignore[index]
    finally:
        worker.send_signal(signal.SIGCONT)
    # the worker wakes, its next stamp fails, it sees the stop request and ends quietly
    assert lines.next() == "stop requested\n"
    assert worker.wait(timeout=20) == 0
    assert show(pid)["closeReason"] == "STALE"  # its exit did not turn it back to IDLE


@pytest.mark.sqlite_only  # a team's database signals no pid: the test below
def test_stop_terminates_a_running_worker(start_worker,  # type: ignore[no-untyped-def]
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # stop signals only a worker whose heartbeat is fresh: on a loaded machine a 2 s stale
    # timeout can pass between two beats, so this test gives the heartbeat room
    monkeypatch.setenv("VANCE_STALE_TIMEOUT", "60")
    pid = create("long")
    worker, _ = start_worker(pid, "hold")  # only the signal can end it: exit 143
    result = run_cli(["process", "stop", pid, "--json"])
    assert result.exit_code == 0, result.stderr
    data = result.json()
    assert data["stopped"] is True and data["signalledPid"] == worker.pid
    assert worker.wait(timeout=20) == 143
    shown = show(pid)
    assert shown["closeReason"] == "STOPPED"
    assert shown["outcome"] == {"reason": "stopped with 'vance process stop'"}
    again = run_cli(["process", "stop", pid])
    assert again.exit_code == 0 and "already CLOSED/STOPPED" in again.stdout


@pytest.mark.postgres  # a team's database: the worker may be on another host
def test_on_a_team_database_stop_reaches_the_worker_through_its_heartbeat(  # type: ignore[no-untyped-def]
        start_worker, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_STALE_TIMEOUT", "60")
    pid = create("long")
    worker, lines = start_worker(pid, "idle")  # looks at stop requests; 60 s of work
    result = run_cli(["process", "stop", pid, "--json"])
    assert result.exit_code == 0, result.stderr
    data = result.json()
    assert data["stopped"] is True and data["signalledPid"] is None
    assert lines.next() == "stop requested\n"  # its next heartbeat did not land
    assert worker.wait(timeout=20) == 0
    assert show(pid)["closeReason"] == "STOPPED"


@pytest.mark.parametrize(("mode", "code", "reason"), [("done", 0, "DONE"), ("fail", 1, "STALE")])
def test_wait_exit_codes_with_real_workers(start_worker, mode: str, code: int,  # type: ignore[no-untyped-def]
                                           reason: str) -> None:
    pid = create(f"w-{mode}")
    start_worker(pid, mode, 0.5)
    result = run_cli(["process", "wait", pid, "--timeout", "30", "--json"])
    assert result.exit_code == code, result.stderr
    data = result.json()
    assert data["timedOut"] is False and data["process"]["closeReason"] == reason
    if mode == "done":
        assert data["process"]["outcome"] == {"recipePath": "recipes/_slart/r1/tea.yaml"}
    else:
        assert "the model answered nonsense" in data["process"]["outcome"]["reason"]


def test_wait_timeout_is_124_and_help_exists(start_worker) -> None:  # type: ignore[no-untyped-def]
    pid = create("busy")
    start_worker(pid)  # a turn that runs for a minute
    result = run_cli(["process", "wait", pid, "--timeout", "0.4"])
    assert result.exit_code == 124
    assert "timed out" in result.stderr and "RUNNING" in result.stderr
    settled = run_cli(["process", "wait", create("idle"), "--timeout", "0.4"])
    assert settled.exit_code == 0  # IDLE: its turn has settled, nothing to wait for
    assert run_cli(["process", "wait", "nope"]).exit_code == 2
    for sub in ("wait", "stop", "events"):
        assert run_cli(["process", sub, "--help"]).exit_code == 0


def wait_until_db_open(pid: int, timeout: float = 30) -> None:
    """Block until process ``pid`` has the state database open (it is inside a command).

    On SQLite that is the file among its descriptors; on PostgreSQL a socket (a connection).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            links = []
        if any(link.endswith("vance.db") for link in links):
            return
        if os.environ.get("VANCE_STATE_URL") and any(  # PostgreSQL: a connection's socket
                link.startswith("socket:") for link in links):
            return
        time.sleep(0.05)
    raise AssertionError("the command never opened the database")


def test_wait_detects_a_worker_that_dies_while_waiting(start_worker) -> None:  # type: ignore[no-untyped-def]
    pid = create("dies")
    worker, _ = start_worker(pid)
    waiter = subprocess.Popen([sys.executable, "-m", "vance_cli", "process", "wait", pid,
                               "--timeout", "30", "--json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    wait_until_db_open(waiter.pid)  # the waiter is inside its command,
    time.sleep(0.2)  # and in its polling loop (as in the Ctrl-C test below)
    worker.kill()
    worker.wait()
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 1, err
    assert json.loads(out)["process"]["closeReason"] == "STALE"


def test_ctrl_c_on_wait_exits_130_without_traceback(start_worker) -> None:  # type: ignore[no-untyped-def]
    pid = create("forever")
    start_worker(pid)
    waiter = subprocess.Popen([sys.executable, "-m", "vance_cli", "process", "wait", pid],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=os.environ.copy())
    wait_until_db_open(waiter.pid)
    time.sleep(0.2)
    waiter.send_signal(signal.SIGINT)
    _, err = waiter.communicate(timeout=20)
    assert waiter.returncode == 130 and "Traceback" not in err


def test_events_list_peek_and_ack() -> None:
    parent = create("parent")
    child = create("child", parent)
    assert run_cli(["process", "stop", child]).exit_code == 0
    peek = run_cli(["process", "events", "--for", parent, "--json"])
    assert [e["source"] for e in peek.json()] == [child]
    human = run_cli(["process", "events", "--for", parent])
    assert f"child_closed: child ({child}) closed STOPPED" in human.stdout
    acked = run_cli(["process", "events", "--json", "--ack"])  # default: this session
    assert len(acked.json()) == 1
    assert run_cli(["process", "events", "--for", parent, "--json"]).json() == []
    assert "no pending events" in run_cli(["process", "events", "--for", parent]).stderr
    history = run_cli(["process", "events", "--for", parent, "--all", "--json"]).json()
    assert history[0]["consumedAt"] is not None
    assert run_cli(["process", "events", "--for", "zzzzzz"]).exit_code == 2


def test_events_follow_prints_json_lines_until_ctrl_c() -> None:
    parent = create("parent")
    first = create("first", parent)
    run_cli(["process", "stop", first])
    follower = subprocess.Popen(
        [sys.executable, "-m", "vance_cli", "process", "events", "--for", parent, "--follow",
         "--json", "--ack"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=os.environ.copy())
    lines = Lines(follower)
    try:
        assert json.loads(lines.next())["source"] == first
        later = [create(f"later{i}", parent) for i in range(3)]
        for pid in later:
            assert run_cli(["process", "stop", pid]).exit_code == 0
        seen = [json.loads(lines.next())["source"] for _ in later]
        assert seen == later
        # the follower acks after printing: poll for the empty queue
        assert wait_until(lambda: run_cli(["process", "events", "--for", parent,
                                           "--json"]).json() == [])
    finally:
        follower.send_signal(signal.SIGINT)
        _, err = follower.communicate(timeout=20)
    assert follower.returncode == 130 and "Traceback" not in err


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_wait_timeout_must_be_finite_and_not_negative(value: str) -> None:
    result = run_cli(["process", "wait", "abcd", "--timeout", value, "--json"])
    assert result.exit_code == 2
    assert result.json()["error"] == "usage_error"
    assert f"must be 0 or more seconds (a finite number), not {value}" in result.stderr


def test_a_failing_close_hook_is_one_warning_line_of_the_command(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The core logs it (base.logs, logging imported then); the command line shows it."""
    from types import SimpleNamespace

    from vance_cli.engines.registry import Engine

    def hook(_ws: object, _process: object) -> None:
        raise RuntimeError("a broken hook")

    monkeypatch.setitem(sys.modules, "vance_cli.engines.ford",
                        SimpleNamespace(ENGINE=Engine("ford", on_close=hook)))
    created = run_cli(["process", "create", "--recipe", "translate", "--name", "t", "--json"])
    pid = created.json()["id"]
    stopped = run_cli(["process", "stop", pid])
    assert stopped.exit_code == 0
    assert stopped.stderr.splitlines() == [f"vance: warning: the ford close hook failed for "
                                           f"process {pid}: RuntimeError: a broken hook"]
