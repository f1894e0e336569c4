"""Team mode from the command line: turns are queued as jobs, never run by the command.

docs/teams.md#turns-as-jobs. These tests give the team no worker (unless they start one),
so they see the queue itself: one waiting turn per process, a ``--wait`` that says when no
worker is alive, a stop that cancels the waiting turn.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import postgres
import pytest
from helpers import run_cli
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.processes.jobs import defer_turn, job_status, waiting_job
from vance_cli.workspace import Workspace


@pytest.fixture()
def team_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A migrated database of the test's own, as ``state.url``, and no worker."""
    if postgres.ADMIN_URL is None:
        pytest.skip(postgres.SKIP_REASON)
    with postgres.fresh_database() as url:
        monkeypatch.setenv("VANCE_STATE_URL", url)
        yield url


def _jobs(ws: Workspace, process_id: str) -> list[tuple[int, str]]:
    return [(int(r[0]), str(r[1])) for r in ws.db.query(
        "SELECT id, status FROM procrastinate_jobs WHERE lock = ? ORDER BY id", (process_id,))]


@pytest.mark.postgres
def test_a_created_process_is_queued_once_and_the_command_runs_no_turn(
        team_url: str, llm_server: ScriptedLLMServer) -> None:
    created = run_cli(["process", "create", "--recipe", "quick-lookup", "--goal", "Q?",
                       "--json"], env=llm_server.env())
    assert created.exit_code == 0, created.stderr
    pid = created.json()["id"]
    steered = run_cli(["process", "steer", pid, "and more", "--json"], env=llm_server.env())
    assert steered.exit_code == 0, steered.stderr
    ws = Workspace(load_settings())
    try:
        assert [status for _, status in _jobs(ws, pid)] == ["todo"]  # the queueing lock
        assert defer_turn(ws, pid) is None  # a turn already waits: it takes both inputs
        assert llm_server.chat_requests == []  # no command ran a turn
        human = run_cli(["process", "create", "--recipe", "quick-lookup", "--goal", "Q2?"],
                        env=llm_server.env())
        assert "runs in the background (job " in human.stdout and "team's queue" in human.stdout
    finally:
        ws.close()


@pytest.mark.postgres
def test_wait_without_a_live_worker_says_so(team_url: str,
                                            llm_server: ScriptedLLMServer) -> None:
    env = {**llm_server.env(), "VANCE_STALE_TIMEOUT": "1"}
    result = run_cli(["process", "create", "--recipe", "quick-lookup", "--goal", "Q?",
                      "--wait"], env=env)
    assert result.exit_code == 1
    assert "no vance worker is running: start one with 'vance worker'" in result.stderr
    ws = Workspace(load_settings())
    try:  # the turn stays queued for when a worker starts
        [process] = ws.db.query("SELECT id FROM processes")
        assert waiting_job(ws, process[0]) is not None
    finally:
        ws.close()


@pytest.mark.postgres
def test_stop_cancels_the_waiting_turn(team_url: str, llm_server: ScriptedLLMServer) -> None:
    created = run_cli(["process", "create", "--recipe", "quick-lookup", "--goal", "Q?",
                       "--json"], env=llm_server.env())
    pid = created.json()["id"]
    ws = Workspace(load_settings())
    try:
        [(job, _)] = _jobs(ws, pid)
        stopped = run_cli(["process", "stop", pid, "--json"])
        assert stopped.exit_code == 0 and stopped.json()["process"]["closeReason"] == "STOPPED"
        assert job_status(ws, job) == "cancelled"
    finally:
        ws.close()


@pytest.mark.postgres
def test_wait_follows_the_turn_a_worker_runs(team_url: str,
                                             llm_server: ScriptedLLMServer,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    gate = threading.Event()
    llm_server.reply("The capital of Peru is Lima.", gate=gate)
    done: list[object] = []

    def wait() -> None:
        done.append(run_cli(["process", "create", "--recipe", "quick-lookup", "--goal",
                             "What is the capital of Peru?", "--wait", "--json"]))

    waiter = threading.Thread(target=wait)
    waiter.start()
    with postgres.team_worker(concurrency=1):
        gate.set()
        waiter.join(60)
    [result] = done
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    process = result.json()  # type: ignore[attr-defined]
    assert (process["status"], process["result"]) == ("IDLE", "The capital of Peru is Lima.")


def test_vance_worker_on_one_machine_says_what_it_needs() -> None:
    result = run_cli(["worker"])
    assert result.exit_code == 2
    assert "set state.url to the team's PostgreSQL server" in result.stderr


@pytest.mark.postgres
def test_a_turn_job_run_again_after_its_settle_still_wakes_the_parent(team_url: str) -> None:
    """A worker that died between a child's settle and the parent's wake-up: the retried
    job finds nothing to run and defers the parent's turn (at least once)."""
    from vance_cli.processes.jobs import scope_of
    from vance_cli.processes.model import ProcessSpec, job_identity
    from vance_cli.processes.records import create_process
    from vance_cli.state import conversation
    from vance_cli.team_worker import run_job

    ws = Workspace(load_settings())
    try:
        parent = create_process(ws, ProcessSpec(recipe="discuss", name="lead"))  # arthur
        with ws.db.transaction():  # it has talked already: it waits IDLE for its children
            conversation.consume(ws.db, [r["id"] for r in conversation.pending_inputs(
                ws.db, parent.id)], 1)
            ws.db.conn.execute("UPDATE processes SET status = 'IDLE' WHERE id = ?",
                               (parent.id,))
        child = create_process(ws, ProcessSpec(recipe="quick-lookup", name="kid",
                                               parent=parent.id))
        with ws.db.transaction():  # the child's turn settled before the worker died
            conversation.consume(ws.db, [r["id"] for r in conversation.pending_inputs(
                ws.db, child.id)], 1)
            ws.db.conn.execute("UPDATE processes SET status = 'IDLE', turns = 1 WHERE id = ?",
                               (child.id,))
        assert waiting_job(ws, parent.id) is None
        line = run_job(child.id, scope_of(ws), False, job_identity("h", 1, 9, 1), None)
        assert "turn None" in line  # nothing left to run for the child
        assert waiting_job(ws, parent.id) is not None  # the parent's turn is queued
    finally:
        ws.close()
