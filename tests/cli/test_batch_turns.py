"""A batch runs its processes: the items' first turns start in background workers (issue 20, 1).

Against the scripted server of ``tests/llm_server.py``, through the real
openai client and real detached workers (docs/processes.md "Where turns run").
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

TEMPLATE = "Render the text {{ item }} in French for our newsletter"
MATCH = json.dumps({"decision": "MATCH", "recipe": "translate", "rationale": "A translation."})
ANSWERS = [f"Bonjour numéro {i}." for i in range(1, 6)]


@pytest.fixture()
def llm(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedLLMServer:
    for key, value in llm_server.env(timeout=60).items():
        monkeypatch.setenv(key, value)
    return llm_server


@pytest.fixture(autouse=True)
def workers_end(vance_home: Path) -> Iterator[None]:
    """The workers a test started are gone when it ends."""
    from vance_cli.processes.lifecycle import is_pid_alive

    yield
    logs = vance_home / "state" / "logs"
    for log in logs.glob("process-*.log") if logs.is_dir() else ():
        for pid in map(int, re.findall(r"worker (\d+): process", log.read_text())):
            wait_until(lambda pid=pid: not is_pid_alive(pid), timeout=30)  # type: ignore[misc]


def _batch(items: str, *args: str):  # type: ignore[no-untyped-def]
    return run_cli(["delegate", "--task-template", TEMPLATE, "--items", "-", *args],
                   input=items)


def test_batch_wait_runs_every_items_turn_in_bounded_workers(llm: ScriptedLLMServer) -> None:
    llm.reply(MATCH)
    for answer in ANSWERS:
        llm.reply(answer, chunks=3)
    result = _batch("".join(f"greeting {i}\n" for i in range(1, 6)), "--wait",
                    "--param", "maxParallel:=2")
    assert result.exit_code == 0, result.stderr
    assert "started 5 turns in 2 background workers" in result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 5
    assert {(line["process"]["status"], line["process"]["closeReason"]) for line in lines} == \
        {("IDLE", None)}
    assert sorted(line["process"]["result"] for line in lines) == sorted(ANSWERS)
    assert len(llm.chat_requests) == 6  # the selector once, then one turn per item


def test_batch_without_wait_starts_the_turns_in_the_background(llm: ScriptedLLMServer) -> None:
    llm.reply(MATCH)
    llm.reply(ANSWERS[0])
    llm.reply(ANSWERS[1])
    result = _batch("a\nb\n")
    assert result.exit_code == 0, result.stderr
    ids = [json.loads(line)["process"]["id"] for line in result.stdout.splitlines()]
    waited = run_cli(["process", "wait", *ids, "--timeout", "60", "--json"])
    assert waited.exit_code == 0, waited.stderr
    results = [run_cli(["process", "result", pid]).stdout.strip() for pid in ids]
    assert sorted(results) == sorted(ANSWERS[:2])


def test_stopping_a_queued_item_skips_it_and_the_others_run(llm: ScriptedLLMServer) -> None:
    gate = threading.Event()
    llm.reply(MATCH)
    llm.reply(ANSWERS[0], gate=gate)  # the first turn is held: the others wait in the worker
    llm.reply(ANSWERS[2])
    result = _batch("a\nb\nc\n", "--param", "maxParallel:=1")
    assert result.exit_code == 0, result.stderr
    first, second, third = (json.loads(line)["process"]["id"]
                            for line in result.stdout.splitlines())
    wait_until(lambda: len(llm.chat_requests) == 2)  # the first turn asks; it is held
    queued = run_cli(["process", "show", second, "--json"]).json()
    assert queued["status"] == "RUNNING"  # handed over to the batch's worker: it waits there
    stop = run_cli(["process", "stop", second, "--json"]).json()
    assert stop["stopped"] is True and stop["signalledPid"] is not None
    gate.set()
    waited = run_cli(["process", "wait", first, third, "--timeout", "60"])
    assert waited.exit_code == 0, waited.stderr
    assert run_cli(["process", "result", first]).stdout.strip() == ANSWERS[0]  # not cut short
    assert run_cli(["process", "result", third]).stdout.strip() == ANSWERS[2]
    assert run_cli(["process", "show", second, "--json"]).json()["closeReason"] == "STOPPED"
    assert len(llm.chat_requests) == 3


def test_several_ids_for_run_and_wait(vance_home: Path, llm_server: ScriptedLLMServer) -> None:
    result = _batch("a\nb\n")  # no LLM yet: both wait for one
    ids = [json.loads(line)["process"]["id"] for line in result.stdout.splitlines()]
    llm_server.reply(ANSWERS[0])
    llm_server.reply(ANSWERS[1])
    ran = run_cli(["process", "run", *ids, "--json"], env=llm_server.env())
    assert ran.exit_code == 0, ran.stderr
    assert [p["result"] for p in json.loads(ran.stdout)] == ANSWERS[:2]
    waited = run_cli(["process", "wait", *ids, "--json"])
    assert waited.exit_code == 0, waited.stderr
    assert [w["process"]["id"] for w in waited.json()] == ids


def test_batch_wait_without_an_llm_exits_75_and_still_writes_every_line() -> None:
    result = _batch("a\nb\n", "--wait")  # offline: the processes wait for an LLM
    assert result.exit_code == 75, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["process"]["status"] for line in lines] == ["IDLE", "IDLE"]
    assert "background worker" not in result.stderr
