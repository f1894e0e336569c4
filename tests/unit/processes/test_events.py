from __future__ import annotations

import pytest
from helpers import make_process as make

from vance_cli.base.config import load_settings
from vance_cli.base.errors import ProcessNotFound
from vance_cli.processes.events import (
    ack_events,
    follow_events,
    pending_events,
    post_event,
    resolve_query,
)
from vance_cli.processes.lifecycle import close_process
from vance_cli.processes.model import CloseReason, Status
from vance_cli.processes.records import transition
from vance_cli.workspace import Workspace


def test_one_event_per_child_close_in_the_parents_queue(ws: Workspace) -> None:
    parent = make(ws, "parent")
    kids = [make(ws, f"kid{i}", parent) for i in range(3)]
    orphan = make(ws, "no-parent")
    transition(ws, kids[0], Status.RUNNING)
    close_process(ws, kids[0], CloseReason.DONE, {"recipePath": "recipes/_slart/a/b.yaml"})
    close_process(ws, kids[1], CloseReason.STALE, {"reason": "LLM said nothing useful"})
    close_process(ws, kids[1], CloseReason.STOPPED)  # already closed: no second event
    close_process(ws, orphan, CloseReason.DONE)  # no parent: no event
    events = pending_events(ws, resolve_query(ws, parent[:6]))
    assert [(e.source, e.payload["closeReason"]) for e in events] == [
        (kids[0], "DONE"), (kids[1], "STALE")]
    assert events[0].payload == {
        "processId": kids[0], "name": "kid0", "recipe": "coding", "engine": "ford",
        "status": "CLOSED", "closeReason": "DONE",
        "result": None, "outcome": {"recipePath": "recipes/_slart/a/b.yaml"}}
    assert set(events[0].to_json()) == {"id", "recipient", "source", "kind", "payload",
                                        "createdAt", "consumedAt"}


def test_event_is_rolled_back_with_a_failed_close(ws: Workspace) -> None:
    parent = make(ws, "parent")
    kid = make(ws, "kid", parent)
    with pytest.raises(RuntimeError), ws.db.transaction():
        close_process(ws, kid, CloseReason.DONE)
        raise RuntimeError("crash after the close, before commit")
    assert pending_events(ws, resolve_query(ws, parent)) == []
    assert transition(ws, kid, Status.CLOSED, CloseReason.DONE).status is Status.CLOSED
    assert len(pending_events(ws, resolve_query(ws, parent))) == 1


def test_listing_does_not_consume_ack_does(ws: Workspace) -> None:
    parent = make(ws, "parent")
    for i in range(2):
        close_process(ws, make(ws, f"k{i}", parent), CloseReason.DONE)
    query = resolve_query(ws, parent)
    first = pending_events(ws, query)
    assert len(first) == 2 and pending_events(ws, query) == first
    assert ack_events(ws, [first[0].id]) == 1
    assert ack_events(ws, [first[0].id]) == 0  # idempotent
    assert [e.id for e in pending_events(ws, query)] == [first[1].id]
    everything = pending_events(ws, resolve_query(ws, parent, include_consumed=True))
    assert len(everything) == 2 and everything[0].consumed_at is not None


def test_default_query_is_this_sessions_processes(vance_home: object) -> None:
    a = Workspace(load_settings(flags={"session": "a"}))
    b = Workspace(load_settings(flags={"session": "b"}))
    pa, pb = make(a, "p"), make(b, "p")
    post_event(a, pa, "note", {"text": "for a"})
    post_event(b, pb, "note", {"text": "for b"})
    assert [e.payload["text"] for e in pending_events(a, resolve_query(a, None))] == ["for a"]
    assert [e.payload["text"] for e in pending_events(b, resolve_query(b, None))] == ["for b"]
    a.close()
    b.close()


def test_unknown_recipient_is_an_error(ws: Workspace) -> None:
    with pytest.raises(ProcessNotFound):
        resolve_query(ws, "ffffffffffff")


def test_follow_yields_new_events_and_acks_after_each(ws: Workspace) -> None:
    parent = make(ws, "parent")
    close_process(ws, make(ws, "early", parent), CloseReason.DONE)
    late = make(ws, "late", parent)
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:  # while the follower sleeps, a child closes
        sleeps.append(seconds)
        if len(sleeps) == 2:
            close_process(ws, late, CloseReason.STOPPED)

    stream = follow_events(ws, resolve_query(ws, parent), ack=True, poll=0.01, sleep=sleep)
    first = next(stream)
    assert first.payload["name"] == "early" and first.consumed_at is None
    assert len(pending_events(ws, resolve_query(ws, parent))) == 1  # not acked until resumed
    second = next(stream)
    assert second.payload["name"] == "late" and sleeps == [0.01, 0.01]
    assert [e.payload["name"] for e in pending_events(ws, resolve_query(ws, parent))] == ["late"]
    stream.close()
