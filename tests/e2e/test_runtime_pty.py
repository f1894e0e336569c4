"""Turns on a terminal: the answer streams onto the screen, a reply continues, Ctrl-C stops.

The real program runs in a pseudo-terminal against the scripted server; the
answer's stream is held (``holds``) at the points where the test looks at
the screen, so each partial state is certain, not a matter of timing
(docs/processes.md "Turns", docs/shell.md).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli, wait_until
from llm_server import ScriptedLLMServer, split_text
from terminal import ANSI, Key, end, finish, spawn_vance

pytestmark = pytest.mark.e2e

PROMPT = "vance>"
PERU = "What is the capital of Peru?"
LIMA = ("Lima is the capital of Peru. It lies on the Pacific coast, and its old town"
        " is a World Heritage Site.")
CHUNKS = 6
PIECES = split_text(LIMA, CHUNKS)
"""How the server cuts the answer: the screen must show these one after the other."""
CHILE = "And of Chile?"
SANTIAGO = "Santiago is the capital of Chile."
MATCH = json.dumps({"decision": "MATCH", "recipe": "quick-lookup", "rationale": "a fact"})


@pytest.fixture()
def holds() -> Iterator[list[threading.Event]]:
    """Two gates for the answer's stream; all open when the test ends, whatever happened."""
    events = [threading.Event(), threading.Event()]
    yield events
    for event in events:
        event.set()


def _messages(process_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = run_cli(["process", "messages", process_id, "--json"]).json()
    return found


def _only_process() -> dict[str, Any]:
    (process,) = run_cli(["process", "list", "--json"]).json()
    return dict(process)


def _held_at(llm: ScriptedLLMServer, chunks: int) -> bool:
    answers = llm.chat_requests[1:]
    return bool(answers) and answers[-1].streamed == chunks


def test_shell_streams_the_answer_and_the_next_plain_text_continues_it(
        tmp_path: Path, llm_server: ScriptedLLMServer, holds: list[threading.Event]) -> None:
    assert len(PIECES) == CHUNKS
    llm_server.reply(MATCH)
    llm_server.reply(LIMA, chunks=CHUNKS, holds={3: holds[0], 5: holds[1]})
    llm_server.reply(SANTIAGO, chunks=4)
    child = spawn_vance(["shell"], env={**llm_server.env(timeout=60), "NO_COLOR": "1"},
                        cwd=tmp_path, log=tmp_path / "pty.log")
    child.expect(PROMPT)
    child.send(PERU + Key.ENTER)
    child.expect(f"decision:{ANSI} MATCH")  # known before the turn: it comes first

    assert wait_until(lambda: _held_at(llm_server, 2))
    child.expect(re.escape("".join(PIECES[:2])))  # partial screen 1: the rest is held back
    holds[0].set()
    assert wait_until(lambda: _held_at(llm_server, 4))
    child.expect(re.escape("".join(PIECES[2:4])))  # partial screen 2
    holds[1].set()
    child.expect(re.escape("".join(PIECES[4:])))
    process = _only_process()
    child.expect(re.escape(f"[quick-lookup {process['id'][:6]}] {PROMPT}"))  # it listens

    child.send(CHILE + Key.ENTER)
    child.expect(SANTIAGO)
    child.expect(re.escape(f"[quick-lookup {process['id'][:6]}] {PROMPT}"))
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0, log
    assert "Traceback" not in log
    assert len(llm_server.chat_requests) == 3  # the reply went to the process, not the selector
    follow_up = llm_server.chat_requests[2]
    assert follow_up.json["stream"] is True and follow_up.streamed > 1
    assert [(m["role"], m["content"]) for m in follow_up.json["messages"][1:]] == [
        ("user", PERU), ("assistant", LIMA), ("user", CHILE)]
    assert run_cli(["process", "result", process["id"]]).stdout == SANTIAGO + "\n"


def test_ctrl_c_in_the_shell_mid_stream_keeps_the_shell_and_the_partial_reply(
        tmp_path: Path, llm_server: ScriptedLLMServer, holds: list[threading.Event]) -> None:
    llm_server.reply(MATCH)
    llm_server.reply(LIMA, chunks=CHUNKS, holds={3: holds[0]})
    child = spawn_vance(["shell"], env={**llm_server.env(timeout=60), "NO_COLOR": "1"},
                        cwd=tmp_path, log=tmp_path / "pty.log")
    child.expect(PROMPT)
    child.send(PERU + Key.ENTER)
    assert wait_until(lambda: _held_at(llm_server, 2))
    child.expect(re.escape("".join(PIECES[:2])))
    child.sendintr()
    child.expect("cancelled")
    child.expect(PROMPT)
    assert "quick-lookup" not in child.before  # the shell goes on, and nobody listens
    process = _only_process()
    assert process["status"] == "IDLE"
    child.send("/process show " + process["id"] + Key.ENTER)
    child.expect(f"status:{ANSI} IDLE")
    child.expect(PROMPT)
    child.send(Key.CTRL_D)
    status, log = finish(child)
    assert status == 0, log
    assert "Traceback" not in log
    replies = [m for m in _messages(process["id"]) if m["role"] == "assistant"]
    assert [(m["text"], m["meta"]) for m in replies] == [("".join(PIECES[:2]),
                                                          {"interrupted": True})]


def test_ctrl_c_in_delegate_wait_mid_stream_exits_130_and_keeps_the_partial_reply(
        vance_home: Path, llm_server: ScriptedLLMServer, holds: list[threading.Event]) -> None:
    llm_server.reply(MATCH)
    llm_server.reply(LIMA, chunks=CHUNKS, holds={3: holds[0]})
    child = spawn_vance(["delegate", "--task", PERU, "--wait"],
                        env={**llm_server.env(timeout=60), "NO_COLOR": "1"})
    assert wait_until(lambda: _held_at(llm_server, 2))
    child.expect(re.escape("".join(PIECES[:2])))
    child.sendintr()
    end(child)
    assert child.exitstatus == 130
    assert "Traceback" not in (child.before or "")
    process = _only_process()
    assert (process["status"], process["result"]) == ("IDLE", "".join(PIECES[:2]))
    assert [(m["role"], m["kind"], m.get("meta")) for m in _messages(process["id"])] == [
        ("user", "task", None), ("assistant", "reply", {"interrupted": True})]
