"""The turn runtime in-process: inputs, claiming, settling, failing, budgets, Ctrl-C.

The engine is ford and the LLM the scripted server behind the real openai
client; a turn that must be caught half-way holds its stream with
``holds`` (docs/processes.md "Turns", "Budgets").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers import wait_until
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.base.errors import CannotRun, LLMNotConfigured
from vance_cli.processes import runtime, start
from vance_cli.processes import stream as stream_module
from vance_cli.processes.inputs import has_pending, submit, transcript
from vance_cli.processes.model import ProcessSpec, Status
from vance_cli.processes.records import create_process, load_process
from vance_cli.processes.runtime import TurnReport, run_turn
from vance_cli.processes.turn import NullSink, Turn, TurnOutcome
from vance_cli.processes.worker import hand_over
from vance_cli.workspace import Workspace

PERU = "What is the capital of Peru?"
LIMA = "The capital of Peru is Lima, on the Pacific coast."


@pytest.fixture()
def llm(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedLLMServer:
    for key, value in llm_server.env(timeout=60).items():
        monkeypatch.setenv(key, value)
    return llm_server


@pytest.fixture()
def ws(llm: ScriptedLLMServer) -> Iterator[Workspace]:
    workspace = Workspace(load_settings())
    yield workspace
    workspace.close()


def new_process(ws: Workspace, name: str = "peru", **params: Any) -> str:
    spec = ProcessSpec(recipe="quick-lookup", name=name, goal=PERU, params=params)
    return create_process(ws, spec).id


def inputs(ws: Workspace, process_id: str) -> list[tuple[str, int | None]]:
    return [(m.kind, m.turn) for m in transcript(ws, process_id) if m.role == "user"]


class Background:
    """A turn in a thread of its own, on its own workspace (as another worker would run it)."""

    def __init__(self, process_id: str, call: Callable[..., TurnReport] = run_turn) -> None:
        self.report: TurnReport | None = None
        self.error: BaseException | None = None

        def body() -> None:
            own = Workspace(load_settings())
            try:
                self.report = call(own, process_id)
            except BaseException as exc:  # handed to the test
                self.error = exc
            finally:
                own.close()

        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()

    def join(self) -> TurnReport:
        self.thread.join(60)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        assert self.report is not None
        return self.report


def held_turn(ws: Workspace, llm: ScriptedLLMServer,
              process_id: str) -> tuple[Background, threading.Event]:
    """Start a turn whose answer stream is held after its first two chunks."""
    resume = threading.Event()
    llm.reply(LIMA, chunks=5, holds={3: resume})
    turn = Background(process_id)
    assert wait_until(lambda: bool(llm.chat_requests) and llm.chat_requests[-1].streamed == 2)
    return turn, resume


def test_inputs_stay_pending_until_the_turn_settles(ws: Workspace,
                                                    llm: ScriptedLLMServer) -> None:
    pid = new_process(ws)
    assert inputs(ws, pid) == [("task", None)]
    turn, resume = held_turn(ws, llm, pid)
    assert load_process(ws, pid).status is Status.RUNNING
    assert inputs(ws, pid) == [("task", None)]  # taken by the turn, not yet consumed
    resume.set()
    report = turn.join()
    assert (report.settle, report.reply, report.number) == ("IDLE", LIMA, 1)
    assert inputs(ws, pid) == [("task", 1)]
    process = load_process(ws, pid)
    assert (process.status, process.result, process.turns) == (Status.IDLE, LIMA, 1)


def test_a_message_that_arrives_during_a_turn_waits_for_the_next_one(
        ws: Workspace, llm: ScriptedLLMServer) -> None:
    pid = new_process(ws)
    turn, resume = held_turn(ws, llm, pid)
    submit(ws, pid, "And of Chile?")
    resume.set()
    turn.join()
    assert inputs(ws, pid) == [("task", 1), ("steer", None)]
    assert has_pending(ws, pid)
    llm.reply("Santiago.")
    report = runtime.drive(ws, pid)
    assert (report.number, report.reply) == (2, "Santiago.")
    assert inputs(ws, pid) == [("task", 1), ("steer", 2)]
    assert not has_pending(ws, pid)


def test_a_failed_turn_keeps_its_inputs_and_a_retry_takes_them(
        ws: Workspace, llm: ScriptedLLMServer) -> None:
    pid = new_process(ws)
    llm.fail(500, "the model is overloaded")
    report = run_turn(ws, pid)
    assert report.settle == "FAILED" and report.failed
    host = llm.url.split("//", 1)[1].split("/", 1)[0]
    assert report.reason == f"LLM call failed: HTTP 500: the model is overloaded (at {host})"
    process = load_process(ws, pid)
    assert (process.status, process.close_reason) == (Status.CLOSED, "STALE")
    assert process.outcome == {"reason": report.reason, "turn": 1}
    assert inputs(ws, pid) == [("task", None)]

    with pytest.raises(CannotRun, match="'vance process run' retries it"):
        run_turn(ws, pid)
    llm.reply(LIMA)
    retried = run_turn(ws, pid, retry=True)
    assert (retried.settle, retried.number, retried.reply) == ("IDLE", 2, LIMA)
    assert inputs(ws, pid) == [("task", 2)]
    assert load_process(ws, pid).status is Status.IDLE


def test_a_failing_engine_step_closes_the_process_stale_with_the_reason(
        ws: Workspace, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.engines import ford
    from vance_cli.engines.registry import Engine

    def broken(turn: Turn) -> TurnOutcome:
        raise RuntimeError("the engine tripped")

    monkeypatch.setattr(ford, "ENGINE", Engine(name="ford", run_turn=broken))
    pid = new_process(ws)
    report = run_turn(ws, pid)
    assert report.reason == "worker failed: RuntimeError: the engine tripped"
    assert load_process(ws, pid).close_reason == "STALE"
    assert inputs(ws, pid) == [("task", None)]


def test_a_second_turn_cannot_claim_a_running_process(ws: Workspace,
                                                      llm: ScriptedLLMServer) -> None:
    pid = new_process(ws)
    turn, resume = held_turn(ws, llm, pid)
    with pytest.raises(CannotRun, match="RUNNING: a turn is under way"):
        run_turn(ws, pid)
    resume.set()
    assert turn.join().settle == "IDLE"
    assert len(llm.chat_requests) == 1


def test_a_claim_that_loses_the_race_is_cannot_run_and_changes_nothing(
        ws: Workspace, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another worker claims the process between this turn's check and its own claim."""
    pid = new_process(ws)
    claimable = runtime._claimable

    def claimed_meanwhile(*args: Any) -> Any:
        checked = claimable(*args)
        assert hand_over(ws, pid, 999_999)  # the other worker's claim lands first
        return checked

    monkeypatch.setattr(runtime, "_claimable", claimed_meanwhile)
    with pytest.raises(CannotRun):
        run_turn(ws, pid)
    process = load_process(ws, pid)
    assert (process.status, process.worker_pid) == (Status.RUNNING, 999_999)
    assert inputs(ws, pid) == [("task", None)]
    assert llm.chat_requests == []


def test_of_turns_started_at_once_on_their_own_connections_exactly_one_runs(
        ws: Workspace, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every turn sees the process IDLE before any claims it: the database picks one."""
    pid = new_process(ws)
    llm.reply(LIMA)
    starters = 4
    barrier = threading.Barrier(starters, timeout=30)
    claimable = runtime._claimable

    def all_checked(*args: Any) -> Any:
        checked = claimable(*args)
        barrier.wait()
        return checked

    monkeypatch.setattr(runtime, "_claimable", all_checked)
    turns = [Background(pid) for _ in range(starters)]
    settled: list[str | None] = []
    for turn in turns:
        try:
            settled.append(turn.join().settle)
        except CannotRun:
            settled.append("lost the claim")
    assert sorted(settled, key=str) == ["IDLE"] + ["lost the claim"] * (starters - 1)
    assert len(llm.chat_requests) == 1
    assert inputs(ws, pid) == [("task", 1)]  # consumed once, by the one turn, at its settle
    assert [tuple(r) for r in ws.db.query(
        "SELECT number, outcome FROM turns WHERE process_id = ?", (pid,))] == [(1, "IDLE")]
    assert load_process(ws, pid).turns == 1


def test_ctrl_c_keeps_the_partial_reply_marked_interrupted_and_settles_idle(
        ws: Workspace, llm: ScriptedLLMServer) -> None:
    pid = new_process(ws)
    llm.reply(LIMA, chunks=5)

    class CtrlC:
        seen = ""

        def text(self, piece: str) -> None:
            self.seen += piece
            if len(self.seen) > 10:
                raise KeyboardInterrupt

        def status(self, line: str) -> None:
            pass

    sink = CtrlC()
    with pytest.raises(KeyboardInterrupt):
        run_turn(ws, pid, sink=sink)
    process = load_process(ws, pid)
    assert process.status is Status.IDLE and process.result == sink.seen
    assert LIMA.startswith(sink.seen) and sink.seen != LIMA
    reply = [m for m in transcript(ws, pid) if m.role == "assistant"]
    assert [(m.content, dict(m.meta)) for m in reply] == [(sink.seen, {"interrupted": True})]


@pytest.mark.sqlite_only  # a team's member without an LLM queues the turn for the workers'
def test_without_an_llm_nothing_changes(vance_home: object) -> None:
    ws = Workspace(load_settings())
    try:
        pid = new_process(ws)
        with pytest.raises(LLMNotConfigured):
            run_turn(ws, pid)
        assert load_process(ws, pid).status is Status.IDLE
        assert inputs(ws, pid) == [("task", None)]
        assert start.start(ws, pid).how == "waiting_for_llm"
    finally:
        ws.close()


# --- budgets --------------------------------------------------------------------------------


@pytest.mark.parametrize(("setting", "params", "named"), [
    ("VANCE_TURN_MAX_LLM_CALLS=0", {}, "turn.max_llm_calls"),
    ("", {"budget": {"tokens": 100}}, "process.max_tokens"),
])
def test_a_budget_that_runs_out_ends_the_turn_and_names_it(
        llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, setting: str,
        params: dict[str, Any], named: str) -> None:
    if setting:
        monkeypatch.setenv(*setting.split("="))
    ws = Workspace(load_settings())
    try:
        pid = new_process(ws, **params)
        llm.reply(LIMA, prompt_tokens=90, completion_tokens=10)  # the first turn: 100 tokens
        llm.reply(LIMA)
        first = run_turn(ws, pid) if named == "process.max_tokens" else None
        if first is not None:
            assert first.settle == "IDLE"
            submit(ws, pid, "And of Chile?")
        report = run_turn(ws, pid)
        assert report.settle == "FAILED" and named in (report.reason or "")
        assert load_process(ws, pid).close_reason == "STALE"
        assert ("steer" if first else "task", None) in inputs(ws, pid)
    finally:
        ws.close()


def test_a_turn_out_of_time_mid_stream_ends_and_names_the_budget(
        llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_TURN_TIMEOUT", "1")
    ws = Workspace(load_settings())
    try:
        pid = new_process(ws)
        never = threading.Event()
        llm.reply(LIMA, chunks=5, holds={3: never})
        report = run_turn(ws, pid)
        assert report.settle == "FAILED"
        assert "turn.timeout" in (report.reason or ""), report.reason
        assert inputs(ws, pid) == [("task", None)]
    finally:
        ws.close()


def test_a_slow_stream_cannot_outlast_the_turns_seconds(
        llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each piece arrives well within the read timeout, but the whole stream takes too long."""
    monkeypatch.setenv("VANCE_TURN_TIMEOUT", "1")
    ws = Workspace(load_settings())
    try:
        pid = new_process(ws)
        llm.reply("one two three four five six seven eight nine ten", chunks=10,
                  chunk_delay=0.3)
        report = run_turn(ws, pid)
        assert report.settle == "FAILED"
        assert "turn.timeout" in (report.reason or ""), report.reason
    finally:
        ws.close()


def test_every_llm_call_is_recorded(ws: Workspace, llm: ScriptedLLMServer) -> None:
    from vance_cli.state import conversation

    pid = new_process(ws)
    llm.fail(500, "down")
    run_turn(ws, pid)
    llm.reply(LIMA, model="m-2", prompt_tokens=12, completion_tokens=5)
    run_turn(ws, pid, retry=True)
    rows = ws.db.query("SELECT turn, purpose, model, tokens_in, tokens_out, finish_reason,"
                       " error FROM llm_calls WHERE process_id = ? ORDER BY id", (pid,))
    host = llm.url.split("//", 1)[1].split("/", 1)[0]
    assert [tuple(r) for r in rows] == [
        (1, "reply", "test-model", None, None, None, f"HTTP 500: down (at {host})"),
        (2, "reply", "m-2", 12, 5, "stop", None)]
    assert tuple(conversation.llm_totals(ws.db, pid))[:3] == (2, 12, 5)
    assert ws.db.query("SELECT * FROM calls_in_flight") == []  # each call landed


def test_a_call_under_way_is_kept_for_stale_detection_and_stored_once(
        llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The heartbeat stores a streaming call's chunks; one cut off meanwhile is not stored twice."""
    from vance_cli.processes.lifecycle import CUT_OFF
    from vance_cli.state import conversation

    monkeypatch.setenv("VANCE_HEARTBEAT_INTERVAL", "0.05")
    ws = Workspace(load_settings())
    try:
        pid = new_process(ws)

        def flying() -> list[tuple[Any, ...]]:
            return [tuple(r) for r in ws.db.query(
                "SELECT turn, purpose, model, tokens_out FROM calls_in_flight"
                " WHERE process_id = ?", (pid,))]

        turn, resume = held_turn(ws, llm, pid)
        assert wait_until(lambda: flying() == [(1, "reply", "test-model", 2)])
        with ws.db.transaction():  # as stale detection does for a worker it found dead
            conversation.cut_off_calls(ws.db, pid, CUT_OFF)
        resume.set()
        assert turn.join().reply == LIMA
        rows = ws.db.query("SELECT purpose, tokens_out, error FROM llm_calls"
                           " WHERE process_id = ?", (pid,))
        assert [tuple(r) for r in rows] == [("reply", 2, CUT_OFF)]
        assert flying() == []
    finally:
        ws.close()


def test_a_calls_tokens_count_before_the_next_call_of_the_same_turn(
        llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.engines import ford
    from vance_cli.engines.registry import Engine

    def twice(turn: Turn) -> TurnOutcome:
        first = turn.complete([{"role": "user", "content": PERU}])
        second = turn.complete([{"role": "user", "content": "And of Chile?"}])
        return TurnOutcome.answered(second, reply=first.text + second.text)

    monkeypatch.setattr(ford, "ENGINE", Engine(name="ford", run_turn=twice))
    monkeypatch.setenv("VANCE_PROCESS_MAX_TOKENS", "100")
    ws = Workspace(load_settings())
    try:
        pid = new_process(ws)
        llm.reply(LIMA, prompt_tokens=90, completion_tokens=10)
        llm.reply("Santiago.")
        report = run_turn(ws, pid)
        assert report.settle == "FAILED" and "process.max_tokens" in (report.reason or "")
        assert len(llm.chat_requests) == 1  # the second call was never made
        rows = ws.db.query("SELECT turn, tokens_in, tokens_out FROM llm_calls"
                           " WHERE process_id = ?", (pid,))
        assert [tuple(r) for r in rows] == [(1, 90, 10)]  # the failed turn's call is kept
    finally:
        ws.close()


def test_retries_that_do_not_fit_the_turns_seconds_are_not_made(
        llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_TURN_TIMEOUT", "1")
    monkeypatch.setenv("VANCE_LLM_MAX_RETRIES", "2")
    ws = Workspace(load_settings())
    never = threading.Event()
    try:
        pid = new_process(ws)
        for _ in range(3):
            llm.reply(LIMA, gate=never)
        report = run_turn(ws, pid)
        assert "turn.timeout" in (report.reason or ""), report.reason
        assert len(llm.chat_requests) == 1  # one attempt took the whole turn
    finally:
        ws.close()


# --- the stream file (docs/decisions/0013-turn-path.md) -----------------------------------------


def test_a_short_turn_of_a_new_process_makes_no_stream_file(
        ws: Workspace, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_module, "STREAM_FILE_AFTER", 3600.0)  # any turn is short
    pid = new_process(ws)
    llm.reply(LIMA, chunks=5)
    assert run_turn(ws, pid).reply == LIMA
    assert not stream_module.stream_path(ws, pid).exists()


def test_a_turn_that_runs_long_enough_streams_everything_into_a_new_file(
        ws: Workspace, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_module, "STREAM_FILE_AFTER", 0.0)  # any turn is long enough
    pid = new_process(ws)
    resume = threading.Event()
    llm.reply(LIMA, chunks=5, holds={3: resume})
    turn = Background(pid)
    path = stream_module.stream_path(ws, pid)
    assert wait_until(lambda: path.exists() and len(path.read_text(encoding="utf-8")) > 0)
    assert LIMA.startswith(path.read_text(encoding="utf-8"))  # the first pieces, mid-turn
    resume.set()
    assert turn.join().reply == LIMA
    assert path.read_text(encoding="utf-8") == LIMA


def test_an_existing_stream_file_is_emptied_when_the_turn_starts(
        ws: Workspace, llm: ScriptedLLMServer) -> None:
    pid = new_process(ws)
    path = stream_module.stream_path(ws, pid)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("the last turn's answer", encoding="utf-8")
    resume = threading.Event()
    llm.reply(LIMA, chunks=5, holds={1: resume})  # held before any text
    turn = Background(pid)
    assert wait_until(lambda: path.read_text(encoding="utf-8") == "")
    resume.set()
    assert turn.join().reply == LIMA
    assert path.read_text(encoding="utf-8") == LIMA  # a file that exists streams at once


def test_a_short_turn_that_fails_leaves_its_output_for_followers(
        ws: Workspace, llm: ScriptedLLMServer) -> None:
    pid = new_process(ws)
    llm.reply(LIMA, chunks=5, cut_after=3)  # the server dies mid-reply
    report = run_turn(ws, pid)
    assert report.settle == "FAILED"
    kept = stream_module.stream_path(ws, pid).read_text(encoding="utf-8")
    assert kept and LIMA.startswith(kept)


def test_a_status_line_makes_the_stream_file_at_once(ws: Workspace) -> None:
    stream = stream_module.StreamFile(ws, "0123456789abcdef", NullSink(), after=3600)
    try:
        stream.text("held ")
        assert not stream.path.exists()
        stream.status("phase 1 started")
        assert stream.path.read_text(encoding="utf-8") == "held \n» phase 1 started\n"
        stream.text("live")
        assert stream.path.read_text(encoding="utf-8").endswith("started\nlive")
    finally:
        stream.close()


def test_ctrl_c_before_the_first_token_keeps_the_task_pending(
        ws: Workspace, llm: ScriptedLLMServer) -> None:
    import os
    import signal
    import threading

    from helpers import wait_until

    pid = new_process(ws)
    held = threading.Event()
    llm.reply(LIMA, chunks=5, holds={1: held})  # nothing of the answer arrives

    def ctrl_c() -> None:
        wait_until(lambda: len(llm.chat_requests) == 1)
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=ctrl_c)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_turn(ws, pid)
    finally:
        held.set()
        thread.join()
    process = load_process(ws, pid)
    assert (process.status, process.result) == (Status.IDLE, None)
    assert inputs(ws, pid) == [("task", None)]  # still pending: the next turn takes it
    assert [m for m in transcript(ws, pid) if m.role == "assistant"] == []
    llm.reply(LIMA)
    report = run_turn(ws, pid)
    assert report.reply == LIMA and inputs(ws, pid) == [("task", 2)]


def test_a_reply_too_long_to_store_keeps_a_head_and_its_whole_text_in_a_file(
        ws: Workspace, llm: ScriptedLLMServer) -> None:
    """Issue 26: a 50 MB reply made a 157 MB database; a message now has a size limit."""
    from pathlib import Path

    from vance_cli.processes.overflow import MAX_STORED_BYTES

    pid = new_process(ws)
    llm.huge(600_000)  # 600 chunks: under the token and byte caps, over the message limit
    report = run_turn(ws, pid)
    assert report.settle == "IDLE"
    reply = next(m for m in transcript(ws, pid) if m.kind == "reply")
    full = Path(reply.meta["fullText"])
    assert full.read_text(encoding="utf-8") == "y" * 600_000
    assert reply.content.startswith("y" * MAX_STORED_BYTES)
    assert reply.content.endswith(f"the full text is in {full}]")
    assert reply.meta["stored"] == MAX_STORED_BYTES


def test_a_reply_cut_at_a_cap_is_stored_marked_truncated(
        ws: Workspace, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_LLM_MAX_REPLY_BYTES", "5000")
    own = Workspace(load_settings())
    try:
        pid = new_process(own)
        llm.endless()
        report = run_turn(own, pid)
        assert report.settle == "IDLE" and report.reply == "x" * 5000
        reply = next(m for m in transcript(own, pid) if m.kind == "reply")
        assert reply.meta["truncated"] == "bytes"
    finally:
        own.close()
