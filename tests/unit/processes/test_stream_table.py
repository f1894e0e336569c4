"""A turn's live output in ``stream_chunks``: the batching writer and the table's follower.

The writer and the follower run on both stores (on SQLite the follower polls, on
PostgreSQL it waits on ``LISTEN``); the writer always has a connection of its own, as a
worker on another host has. The real turns (ford, on the scripted server) run in team
mode only, where ``StreamFile`` writes the table (docs/processes.md#follow).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from helpers import make_process, wait_until
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.processes import follow as follow_module
from vance_cli.processes import stream as stream_module
from vance_cli.processes.follow import Followed, follow_output, follow_table
from vance_cli.processes.model import Status
from vance_cli.processes.records import change_status, load_process
from vance_cli.processes.runtime import run_turn
from vance_cli.processes.stream import AGAIN_NOTE, ChunkWriter, StreamFile
from vance_cli.processes.turn import NullSink
from vance_cli.state import conversation, stream_chunks
from vance_cli.state import process_store as store
from vance_cli.state.db import Database
from vance_cli.state.stores import open_state
from vance_cli.workspace import Workspace

LIMA = "The capital of Peru is Lima, on the Pacific coast."


@pytest.fixture()
def other_db(ws: Workspace) -> Iterator[Database]:
    """A connection of the writer's own to the test's store (another host's, in a team)."""
    db = open_state(ws.settings.state_target)
    yield db
    db.close()


def rows(ws: Workspace, pid: str) -> list[tuple[int, int, str, str]]:
    return [(r["turn"], r["seq"], r["kind"], r["text"]) for r in ws.db.query(
        "SELECT turn, seq, kind, text FROM stream_chunks WHERE process_id = ? ORDER BY"
        " turn, seq", (pid,))]


def claim(ws: Workspace, pid: str) -> int:
    """Make the process RUNNING with a new turn, as a worker's claim does; return its number."""
    with ws.db.transaction():
        old = load_process(ws, pid).status
        change_status(ws.db, pid, old, Status.RUNNING, worker_pid=os.getpid())
        row = store.count_turn(ws.db, pid)
        assert row is not None
        conversation.start_turn(ws.db, pid, int(row["turns"]), os.getpid())
    return int(row["turns"])


def settle(ws: Workspace, pid: str, number: int) -> None:
    with ws.db.transaction():
        conversation.end_turn(ws.db, pid, number, "IDLE")
        change_status(ws.db, pid, Status.RUNNING, Status.IDLE)


class Follower:
    """``follow_table`` (or ``follow_output``) in a thread of its own, on a workspace of its own
    (in a team: a pool of its own, as on another host)."""

    def __init__(self, pid: str, team: bool = False, **options: Any) -> None:
        self.pieces: list[str] = []
        self.followed: Followed | None = None
        self.error: BaseException | None = None

        def body() -> None:
            own = Workspace(load_settings())
            try:
                process = load_process(own, pid)
                self.followed = follow_output(own, process, self.pieces.append) if team else \
                    follow_table(own, process, self.pieces.append, **options)
            except BaseException as exc:  # handed to the test
                self.error = exc
            finally:
                own.close()

        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def join(self) -> Followed:
        self.thread.join(60)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        assert self.followed is not None
        return self.followed


# --- the writer -------------------------------------------------------------------------------


def test_pieces_are_batched_into_few_rows_in_order_and_the_close_ends_the_stream(
        ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "w")
    writer = ChunkWriter(other_db, pid, turn=1, every=3600, chars=100)  # batches by size only
    pieces = [f"{n:03d} " for n in range(250)]  # 1000 characters, 250 pieces
    for piece in pieces:
        writer.add(piece)
    writer.close()
    stored = rows(ws, pid)
    assert "".join(text for _, _, kind, text in stored if kind == "text") == "".join(pieces)
    assert [seq for _, seq, _, _ in stored] == list(range(1, len(stored) + 1))
    assert stored[-1][2:] == ("end", "")
    assert writer.batches <= 11  # each batch but the last holds 100 characters or more


def test_a_piece_is_written_after_the_batch_seconds_without_a_close(
        ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "w")
    writer = ChunkWriter(other_db, pid, turn=1, every=0.05)
    try:
        writer.add("one piece")
        assert wait_until(lambda: rows(ws, pid) == [(1, 1, "text", "one piece")])
    finally:
        writer.close()


def test_a_status_line_is_written_at_once(ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "w")
    writer = ChunkWriter(other_db, pid, turn=1, every=3600)
    try:
        writer.add("held ")
        writer.add("\n» phase 1\n", now=True)
        assert wait_until(lambda: rows(ws, pid) == [(1, 1, "text", "held \n» phase 1\n")])
    finally:
        writer.close()


def test_a_turn_past_the_cap_is_cut_with_a_note_row(ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "w")
    writer = ChunkWriter(other_db, pid, turn=1, every=3600, cap=10)
    writer.add("0123456")
    writer.add("789abc")
    writer.add("more that is dropped")
    writer.close()
    stored = rows(ws, pid)
    assert [(kind, text) for _, _, kind, text in stored][:2] == [("text", "0123456789"),
                                                                  ("note", stream_module.CUT_NOTE
                                                                   .format(cap=10))]
    assert stored[-1][2] == "end" and len(stored) == 3


def test_a_writer_given_nothing_writes_nothing(ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "w")
    stream_chunks.add(other_db, pid, 1, [(1, "text", "the last turn's answer")])
    ChunkWriter(other_db, pid, turn=2).close()
    assert rows(ws, pid) == [(1, 1, "text", "the last turn's answer")]  # a short turn: no write


def test_the_first_batch_of_a_turn_deletes_the_process_s_other_rows(
        ws: Workspace, other_db: Database) -> None:
    pid, other = make_process(ws, "w"), make_process(ws, "v")
    stream_chunks.add(other_db, pid, 1, [(1, "text", "turn one"), (2, "end", "")])
    stream_chunks.add(other_db, other, 1, [(1, "text", "another process")])
    writer = ChunkWriter(other_db, pid, turn=2, every=3600)
    writer.add("turn two")
    writer.close()
    assert rows(ws, pid) == [(2, 1, "text", "turn two"), (2, 2, "end", "")]
    assert rows(ws, other) == [(1, 1, "text", "another process")]


def test_a_turn_that_starts_again_numbers_on_after_its_earlier_attempt(
        ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "w")
    stream_chunks.add(other_db, pid, 3, [(1, "text", "first attempt, cut off")])
    writer = ChunkWriter(other_db, pid, turn=3, every=3600)
    writer.add("second attempt")
    writer.close()
    assert rows(ws, pid) == [(3, 2, "note", AGAIN_NOTE), (3, 3, "text", "second attempt"),
                             (3, 4, "end", "")]


def test_a_batch_whose_write_failed_is_written_again_never_doubled(
        ws: Workspace, other_db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    pid = make_process(ws, "w")
    real_add, calls = stream_chunks.add, []

    def flaky(db: Database, *args: Any) -> None:
        calls.append(args)
        real_add(db, *args)
        if len(calls) == 1:
            raise OSError("the answer was lost after the commit")

    monkeypatch.setattr(stream_chunks, "add", flaky)
    writer = ChunkWriter(other_db, pid, turn=1, every=3600, chars=5)
    writer.add("first")  # written, but reported failed
    assert wait_until(lambda: len(calls) == 1)
    writer.add("second")
    writer.close()
    assert rows(ws, pid) == [(1, 1, "text", "first"), (1, 2, "text", "second"),
                             (1, 3, "end", "")]
    assert calls[1][2][0] == (1, "text", "first")  # the same row again, with its seq


def test_a_writer_for_a_process_that_is_gone_gives_up_without_raising(
        ws: Workspace, other_db: Database) -> None:
    writer = ChunkWriter(other_db, "0123456789abcdef", every=3600)
    writer.add("nobody follows this", now=True)
    writer.close()
    assert ws.db.query("SELECT * FROM stream_chunks") == []


def test_a_writer_whose_process_was_removed_stops_at_the_first_refusal(
        ws: Workspace, other_db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    real_add, calls = stream_chunks.add, []

    def counted(db: Database, *args: Any) -> None:
        calls.append(args)
        real_add(db, *args)

    monkeypatch.setattr(stream_chunks, "add", counted)
    writer = ChunkWriter(other_db, "0123456789abcdef", turn=1, every=0.01)
    writer.add("refused: no such process")
    assert wait_until(lambda: len(calls) == 1)
    writer.add("never tried")
    writer.close()
    assert len(calls) == 1  # no retries, no end row


def test_removing_a_process_removes_its_rows(ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "w")
    stream_chunks.add(other_db, pid, 1, [(1, "text", "output")])
    with ws.db.transaction():
        change_status(ws.db, pid, load_process(ws, pid).status, Status.CLOSED, "DONE")
        assert store.delete_closed(ws.db, [pid]) == [pid]
    assert rows(ws, pid) == []


# --- the follower -------------------------------------------------------------------------------


def test_a_follower_gets_a_turn_s_batches_in_order_and_ends_when_it_settles(
        ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "f")
    number = claim(ws, pid)
    follower = Follower(pid, wait=0.05)
    writer = ChunkWriter(other_db, pid, every=0.01)
    for n in range(30):
        writer.add(f"piece {n}; ")
        if n == 10:  # the follower is under way
            assert wait_until(lambda: "piece 3; " in follower.text)
    writer.close()
    settle(ws, pid, number)
    followed = follower.join()
    assert follower.text == "".join(f"piece {n}; " for n in range(30))
    assert followed.shown and followed.process.status is Status.IDLE


def test_a_follower_started_late_gets_everything_of_the_turn_under_way(
        ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "f")
    first = claim(ws, pid)
    stream_chunks.add(other_db, pid, first, [(1, "text", "an earlier turn's output")])
    settle(ws, pid, first)
    number = claim(ws, pid)
    writer = ChunkWriter(other_db, pid, every=0.01)
    writer.add("early ")
    assert wait_until(lambda: bool(rows(ws, pid)) and rows(ws, pid)[0][0] == number)
    follower = Follower(pid, wait=0.05)
    writer.add("late")
    writer.close()
    settle(ws, pid, number)
    follower.join()
    assert follower.text == "early late"


def test_a_follower_between_hand_over_and_claim_shows_no_earlier_turn(
        ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "f")
    first = claim(ws, pid)
    stream_chunks.add(other_db, pid, first, [(1, "text", "turn one"), (2, "end", "")])
    settle(ws, pid, first)
    with ws.db.transaction():  # a launcher hands the process to its worker: RUNNING, unclaimed
        change_status(ws.db, pid, Status.IDLE, Status.RUNNING, worker_pid=os.getpid())
    follower = Follower(pid, wait=0.05)
    with ws.db.transaction():  # the worker claims turn two
        row = store.count_turn(ws.db, pid)
        assert row is not None
        conversation.start_turn(ws.db, pid, int(row["turns"]), os.getpid())
    writer = ChunkWriter(other_db, pid, every=0.01)
    writer.add("turn two")
    writer.close()
    settle(ws, pid, first + 1)
    follower.join()
    assert follower.text == "turn two"


def test_a_follower_given_a_process_that_settled_since_follows_its_latest_turn(
        ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "f")
    first = claim(ws, pid)
    settle(ws, pid, first)
    number = claim(ws, pid)
    seen = load_process(ws, pid)  # RUNNING, as the follower's caller read it
    stream_chunks.add(other_db, pid, number, [(1, "text", "turn two"), (2, "end", "")])
    settle(ws, pid, number)
    shown: list[str] = []
    followed = follow_table(ws, seen, shown.append, wait=0.05)
    assert (shown, followed.process.status) == (["turn two"], Status.IDLE)


def test_a_follower_survives_its_rows_being_deleted(ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "f")
    number = claim(ws, pid)
    follower = Follower(pid, wait=0.05)
    stream_chunks.add(other_db, pid, number, [(1, "text", "one ")])
    assert wait_until(lambda: follower.text == "one ")
    other_db.conn.execute("DELETE FROM stream_chunks WHERE process_id = ?", (pid,))
    stream_chunks.add(other_db, pid, number, [(2, "text", "two"), (3, "end", "")])
    settle(ws, pid, number)
    follower.join()
    assert follower.text == "one two"


def test_a_follower_of_a_settled_process_shows_its_latest_turn_once(
        ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "f")
    number = claim(ws, pid)
    stream_chunks.add(other_db, pid, number, [(1, "text", "all of it"), (2, "end", "")])
    settle(ws, pid, number)
    shown: list[str] = []
    assert follow_table(ws, load_process(ws, pid), shown.append).shown
    assert shown == ["all of it"]


def test_a_follower_of_a_turn_that_wrote_nothing_ends_with_nothing_shown(
        ws: Workspace) -> None:
    pid = make_process(ws, "f")
    number = claim(ws, pid)
    follower = Follower(pid, wait=0.05)
    settle(ws, pid, number)
    assert not follower.join().shown


# --- team mode: real turns, the writer on one pool and the follower on another -------------------


@pytest.fixture()
def llm(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedLLMServer:
    """The scripted server; every turn is long enough to stream (``STREAM_FILE_AFTER`` 0: the
    first pieces are not held for a later one, which a held reply never sends)."""
    for key, value in llm_server.env(timeout=60).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(stream_module, "STREAM_FILE_AFTER", 0.0)
    return llm_server


def peru(ws: Workspace) -> str:
    from vance_cli.processes.model import ProcessSpec
    from vance_cli.processes.records import create_process

    spec = ProcessSpec(recipe="quick-lookup", name="peru", goal="What is the capital of Peru?")
    return create_process(ws, spec).id


class TurnThread:
    """A turn on a workspace (and a pool) of its own, as a worker on another host runs it."""

    def __init__(self, pid: str) -> None:
        self.reply: str | None = None
        self.error: BaseException | None = None

        def body() -> None:
            own = Workspace(load_settings())
            try:
                self.reply = run_turn(own, pid).reply
            except BaseException as exc:  # handed to the test
                self.error = exc
            finally:
                own.close()

        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()

    def join(self) -> str | None:
        self.thread.join(60)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        return self.reply


@pytest.fixture()
def notified(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The payloads the followers' listeners received (PostgreSQL)."""
    from vance_cli.state import pg

    seen: list[str] = []
    real_wait = pg._Listener.wait

    def wait(self: Any, timeout: float) -> list[str] | None:
        payloads = real_wait(self, timeout)
        seen.extend(payloads or ())
        return payloads

    monkeypatch.setattr(pg._Listener, "wait", wait)
    return seen


@pytest.mark.postgres
def test_a_real_turn_reaches_a_follower_on_another_pool_in_order_woken_by_notify(
        llm: ScriptedLLMServer, ws: Workspace, notified: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follow_module, "TABLE_WAIT", 30.0)  # only a notification wakes it
    pid = peru(ws)
    resume = threading.Event()
    llm.reply(LIMA, chunks=6, holds={3: resume})
    turn = TurnThread(pid)
    assert wait_until(lambda: load_process(ws, pid).status is Status.RUNNING)
    follower = Follower(pid, team=True)
    assert wait_until(lambda: follower.text != "")  # the first chunks, mid-turn
    assert LIMA.startswith(follower.text) and follower.text != LIMA
    resume.set()
    assert turn.join() == LIMA
    followed = follower.join()
    assert follower.text == LIMA
    assert pid in notified
    assert followed.process.status is Status.IDLE


@pytest.mark.postgres
def test_a_follower_started_late_gets_the_whole_real_turn(
        llm: ScriptedLLMServer, ws: Workspace) -> None:
    pid = peru(ws)
    resume = threading.Event()
    llm.reply(LIMA, chunks=6, holds={4: resume})
    turn = TurnThread(pid)
    assert wait_until(lambda: any(kind == "text" for _, _, kind, _ in rows(ws, pid))), (
        turn.error, load_process(ws, pid), llm.chat_requests, rows(ws, pid))
    follower = Follower(pid, team=True)
    assert wait_until(lambda: follower.text != "")
    resume.set()
    assert turn.join() == LIMA
    follower.join()
    assert follower.text == LIMA


@pytest.mark.postgres
def test_a_follower_polls_when_listen_fails(llm: ScriptedLLMServer, ws: Workspace,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.state.pg import PgDatabase

    monkeypatch.setattr(PgDatabase, "listen", lambda self, channel: None)
    monkeypatch.setattr(follow_module, "TABLE_WAIT", 0.05)
    pid = peru(ws)
    resume = threading.Event()
    llm.reply(LIMA, chunks=6, holds={3: resume})
    turn = TurnThread(pid)
    assert wait_until(lambda: load_process(ws, pid).status is Status.RUNNING)
    follower = Follower(pid, team=True)
    assert wait_until(lambda: follower.text != "")
    resume.set()
    assert turn.join() == LIMA
    follower.join()
    assert follower.text == LIMA


@pytest.mark.postgres
def test_in_a_team_the_stream_file_and_the_table_hold_the_same_text(
        ws: Workspace, other_db: Database) -> None:
    pid = make_process(ws, "w")
    stream = StreamFile(ws, pid, NullSink(), after=0, chunks=ChunkWriter(other_db, pid, turn=1))
    for piece in ("one ", "two ", "three"):
        stream.text(piece)
    stream.status("a phase")
    stream.close()
    table = "".join(text for _, _, kind, text in rows(ws, pid) if kind == "text")
    assert table == stream.path.read_text(encoding="utf-8") == "one two three\n» a phase\n"


@pytest.mark.sqlite_only
def test_alone_a_turn_writes_no_rows(llm: ScriptedLLMServer, ws: Workspace) -> None:
    """SQLite: the stream file only (no batch competes with the turn for the file's lock)."""
    pid = peru(ws)
    llm.reply(LIMA, chunks=6)
    assert run_turn(ws, pid).reply == LIMA
    assert rows(ws, pid) == []
