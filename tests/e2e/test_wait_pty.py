"""``--wait`` on a terminal: the decision first, a spinner until the first token, Ctrl-C keeps
the task (issue 20, items 3 and 4; docs/processes.md "Turns").

The real program runs in a pseudo-terminal against the scripted server; the
answer is held before its first token, so "before the first token" is
certain, not a matter of timing.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import run_cli, wait_until
from llm_server import ScriptedLLMServer
from terminal import ANSI, end, spawn_vance

pytestmark = pytest.mark.e2e

PERU = "What is the capital of Peru?"
LIMA = "Lima is the capital of Peru."
MATCH = json.dumps({"decision": "MATCH", "recipe": "quick-lookup", "rationale": "a fact"})


@pytest.fixture()
def held() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def test_ctrl_c_before_the_first_token_keeps_the_task_and_printed_the_id_first(
        vance_home: Path, llm_server: ScriptedLLMServer, held: threading.Event) -> None:
    llm_server.reply(MATCH)
    llm_server.reply(LIMA, chunks=3, holds={1: held})  # no token of the answer arrives
    child = spawn_vance(["delegate", "--task", PERU, "--wait"],
                        env={**llm_server.env(timeout=60), "NO_COLOR": "1"})
    child.expect(f"decision:{ANSI} MATCH")  # the decision lines come before the turn
    child.expect(rf"process:{ANSI} ([0-9a-f]{{16}}) ")
    process_id = child.match.group(1)
    child.expect("waiting for the answer")  # the spinner, until the first token
    assert wait_until(lambda: len(llm_server.chat_requests) == 2)
    child.sendintr()
    end(child)
    assert child.exitstatus == 130
    assert "Traceback" not in (child.before or "")
    held.set()
    shown = run_cli(["process", "show", process_id, "--json"]).json()
    assert (shown["status"], shown["result"]) == ("IDLE", None)
    kinds = [(m["role"], m["turn"]) for m in
             run_cli(["process", "messages", process_id, "--json"]).json()]
    assert kinds == [("user", None)]  # the task still waits; no empty reply was stored
    llm_server.reply(LIMA, chunks=3)
    ran = run_cli(["process", "run", process_id], env=llm_server.env(timeout=60))
    assert ran.exit_code == 0, ran.stderr
    assert ran.stdout == LIMA + "\n"
    assert llm_server.chat_requests[2].json["messages"][-1]["content"] == PERU


def test_the_decision_comes_before_the_answer_on_a_terminal(
        vance_home: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(MATCH)
    llm_server.reply(LIMA, chunks=3)
    child = spawn_vance(["delegate", "--task", PERU, "--wait"],
                        env={**llm_server.env(timeout=60), "NO_COLOR": "1"})
    end(child)
    assert child.exitstatus == 0
    screen = child.before or ""
    assert re.search("decision:.*MATCH", screen) and LIMA in screen
    assert screen.index("decision:") < screen.index(LIMA)
    assert screen.count(LIMA) == 1
