"""Children run inline tell their orchestrator nothing through events: it reads their answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.processes.model import CloseReason, ProcessSpec, Status
from vance_cli.processes.records import create_process, list_processes
from vance_cli.processes.runtime import drive
from vance_cli.state import events as event_store
from vance_cli.workspace import Workspace

PHASES = ("OUTLINE: 1. China 2. Trade", "DRAFT: Tea began in China",
          "REVIEW: the trade section needs dates", "FINAL: A Short History of Tea")


@pytest.fixture()
def ws(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    for key, value in llm_server.env(timeout=60).items():
        monkeypatch.setenv(key, value)
    workspace = Workspace(load_settings())
    yield workspace
    workspace.close()


def test_a_vogon_run_posts_no_events_and_closes_each_worker_done(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    for text in PHASES:
        llm_server.reply(text)
    essay = create_process(ws, ProcessSpec(recipe="essay-pipeline", name="tea",
                                           goal="Write a short essay about the history of tea"))
    report = drive(ws, essay.id)
    assert (report.process.status, report.process.close_reason) == (Status.CLOSED,
                                                                    CloseReason.DONE)
    assert report.reply == PHASES[-1]
    workers = [p for p in list_processes(ws) if p.parent_process_id == essay.id]
    assert [w.result for w in sorted(workers, key=lambda w: w.created_at)] == list(PHASES)
    assert {(w.status, w.close_reason) for w in workers} == {(Status.CLOSED, CloseReason.DONE)}
    count = ws.db.query("SELECT count(*) AS n FROM events")[0]["n"]
    assert count == 0
    assert event_store.select_events(ws.db, ws.settings.tenant, recipient=essay.id) == []


def test_a_vogon_run_costs_under_half_the_sql_it_did(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    """Before the lean turn path the same run cost 250 statements in 35 write transactions."""
    for text in PHASES:
        llm_server.reply(text)
    ws.catalog()
    statements: list[str] = []
    ws.db.conn.set_trace_callback(statements.append)  # as bench/sql_trace.py counts
    try:
        essay = create_process(ws, ProcessSpec(recipe="essay-pipeline", name="tea",
                                               goal="Write a short essay about tea"))
        report = drive(ws, essay.id)
    finally:
        ws.db.conn.set_trace_callback(None)
    assert report.process.close_reason == CloseReason.DONE
    writes = [s for s in statements if s.upper().startswith("BEGIN IMMEDIATE")]
    assert len(statements) < 125 and len(writes) <= 17, (len(statements), len(writes))
    assert not [s for s in statements
                if s.upper().startswith(("UPDATE EVENTS", "INSERT INTO EVENTS"))]
    worker = next(p for p in list_processes(ws) if p.parent_process_id == essay.id)
    trail = ws.db.query("SELECT from_status, to_status, close_reason, note FROM"
                        " process_transitions WHERE process_id = ? ORDER BY id", (worker.id,))
    assert [tuple(r) for r in trail][-1] == ("RUNNING", "CLOSED", "DONE",
                                             "its orchestrator has the answer")
    state = report.process.state or {}
    assert list(state["done"]) == ["outline", "draft", "review", "final"]  # kept to the end
    assert state["spawns"] == 4 and state["current"] is None
