"""A turn whose worker died is taken over; the old worker's late writes are refused.

docs/teams.md#takeover: adopt with compare-and-set on the old worker, counted against
``process.max_takeovers``; heartbeats and settles compare on the worker's identity; a turn
run again finds the children it made (``spawn_key``).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from vance_cli.base.config import load_settings
from vance_cli.base.errors import InvalidTransition
from vance_cli.processes import children
from vance_cli.processes.budget import Budget
from vance_cli.processes.inputs import Message
from vance_cli.processes.lifecycle import close_process
from vance_cli.processes.model import CloseReason, ProcessSpec, Status, job_identity
from vance_cli.processes.records import change_status, create_process, load_process
from vance_cli.processes.takeover import adopt
from vance_cli.processes.turn import NullSink, Turn
from vance_cli.processes.worker import acting_as, running
from vance_cli.state import conversation
from vance_cli.state import process_store as store
from vance_cli.workspace import Workspace

A = job_identity("host-a", 7, 41, 0)
B = job_identity("host-b", 7, 41, 1)


def _running_under(ws: Workspace, worker: str, *, age: float = 3600.0, takeovers: int = 0,
                   name: str = "p") -> str:
    """A process RUNNING turn 1 under ``worker``, its heartbeat ``age`` seconds old."""
    process = create_process(ws, ProcessSpec(recipe="quick-lookup", name=name, goal="Q?"))
    stamp = (datetime.now(UTC) - timedelta(seconds=age)).strftime("%Y-%m-%dT%H:%M:%S.%f")
    with ws.db.transaction():
        change_status(ws.db, process.id, process.status, Status.RUNNING, worker_pid=7,
                      worker=worker)
        store.count_turn(ws.db, process.id)
        conversation.start_turn(ws.db, process.id, 1, 7)
        conversation.start_call(ws.db, process.id, 1, "reply", model="m", endpoint=None)
        ws.db.conn.execute("UPDATE processes SET heartbeat_at = ?, takeovers = ? WHERE id = ?",
                           (stamp[:-3] + "Z", takeovers, process.id))
    return process.id


def test_a_silent_workers_turn_is_taken_over_with_its_inputs_kept(ws: Workspace) -> None:
    pid = _running_under(ws, A)
    after = adopt(ws, pid, B)
    assert (after.status, after.worker, after.takeovers) == (Status.RUNNING, B, 1)
    [turn] = conversation.turns(ws.db, pid)
    assert turn["outcome"] == "STALE" and f"its worker {A} was lost" in turn["reason"]
    [call] = ws.db.query("SELECT error, attempt FROM llm_calls WHERE process_id = ?", (pid,))
    assert call["error"].startswith("cut off") and call["attempt"] == 1
    assert [m["kind"] for m in conversation.pending_inputs(ws.db, pid)] == ["task"]
    notes = [r["note"] for r in ws.db.query(
        "SELECT note FROM process_transitions WHERE process_id = ?", (pid,))]
    assert f"its worker {A} was lost: taken over by {B}" in notes


def test_past_max_takeovers_the_process_closes_stale(ws: Workspace,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_MAX_TAKEOVERS", "2")
    ws = Workspace(load_settings())
    try:
        pid = _running_under(ws, A, takeovers=2)
        after = adopt(ws, pid, B)
        assert (after.status, after.close_reason) == (Status.CLOSED, CloseReason.STALE)
        assert "process.max_takeovers 2" in str((after.outcome or {})["reason"])
    finally:
        ws.close()


def test_a_worker_that_still_beats_keeps_its_turn(ws: Workspace,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_STALE_TIMEOUT", "30")
    ws = Workspace(load_settings())
    try:
        pid = _running_under(ws, A, age=0.0)
        other = ws.fork()

        def settle() -> None:  # the old worker ends its turn while the new attempt waits
            with other.db.transaction():
                change_status(other.db, pid, Status.RUNNING, Status.IDLE, owner=A)
            other.close()

        threading.Timer(0.3, settle).start()
        after = adopt(ws, pid, B)
        assert (after.status, after.worker, after.takeovers) == (Status.IDLE, A, 0)
    finally:
        ws.close()


def test_the_late_writes_of_a_worker_taken_over_are_refused(ws: Workspace) -> None:
    process = create_process(ws, ProcessSpec(recipe="quick-lookup", name="z", goal="Q?"))
    with acting_as(A), running(ws, process.id, handle_sigterm=False) as run:
        with ws.db.transaction():  # meanwhile the team gave the turn to B
            store.take_over(ws.db, process.id, A, B, 8)
        assert run.close(CloseReason.DONE) is False  # the zombie's close changes nothing
    after = load_process(ws, process.id)
    assert (after.status, after.worker) == (Status.RUNNING, B)  # nor its end of the turn
    assert store.stamp_heartbeat(ws.db, process.id, A) is False
    assert store.stamp_heartbeat(ws.db, process.id, B) is True
    with ws.db.transaction():  # a settle compares on the worker and the turn
        assert store.change_status(ws.db, process.id, "RUNNING", "IDLE", owner=A) is None
        assert store.change_status(ws.db, process.id, "RUNNING", "IDLE", owner=B,
                                   turn=after.turns + 1) is None
        assert store.change_status(ws.db, process.id, "RUNNING", "IDLE", owner=B,
                                   turn=after.turns) is not None


@pytest.mark.postgres  # children are keyed in team mode only
def test_a_turn_run_again_finds_the_children_it_made(ws: Workspace) -> None:
    parent = create_process(ws, ProcessSpec(recipe="council-three-perspectives", name="c",
                                            goal="Sundays?"))
    inputs = [Message.from_row(r) for r in conversation.pending_inputs(ws.db, parent.id)]

    def turn(number: int) -> Turn:
        return Turn(ws, load_process(ws, parent.id), number, inputs, NullSink(),
                    Budget.of(ws.settings, parent.params))

    first = [children.spawn(turn(1), "default", f"as {h}", h) for h in ("a", "b")]
    again = [children.spawn(turn(2), "default", f"as {h}", h) for h in ("a", "b")]
    assert [c.id for c in again] == [c.id for c in first]  # same inputs: same children
    other = children.spawn(Turn(ws, parent, 3, [], NullSink(),
                                Budget.of(ws.settings, parent.params)), "default", "x", "a")
    assert other.id not in {c.id for c in first}  # another turn's inputs: a new child
    assert store.count_children(ws.db, parent.id) == 3
    close_process(ws, first[0].id, CloseReason.STALE, {"reason": "failed"})  # it failed:
    anew = children.spawn(turn(4), "default", "as a", "a")  # its key goes to a new child
    assert anew.id != first[0].id and anew.spawn_key == first[0].spawn_key


def test_a_settled_child_found_again_is_not_run_again(ws: Workspace) -> None:
    parent = create_process(ws, ProcessSpec(recipe="council-three-perspectives", name="c2"))
    kid = create_process(ws, ProcessSpec(recipe="default", name="k", parent=parent.id,
                                         spawn_key="m1/k"))
    with ws.db.transaction():
        change_status(ws.db, kid.id, kid.status, Status.RUNNING)
        store.set_result(ws.db, kid.id, "VIEW")
        change_status(ws.db, kid.id, Status.RUNNING, Status.CLOSED, CloseReason.DONE.value)

    def never(*_: object) -> object:
        raise AssertionError("a child that answered is not run again")

    result = children.run(ws, load_process(ws, kid.id), NullSink(), never)  # type: ignore[arg-type]
    assert result.ok and result.text == "VIEW"


def test_claiming_needs_the_worker_identity_on_adopt(ws: Workspace) -> None:
    pid = _running_under(ws, A)
    with acting_as(B), pytest.raises(InvalidTransition):  # B has not taken it over
        with running(ws, pid, handle_sigterm=False, adopt=True):
            pass
