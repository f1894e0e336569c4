"""Processes do the work: turns through the CLI, the real openai client and a streaming server.

Each test drives ``vance`` (in-process through the real boundary, or as a
subprocess where a second program has to run alongside) against the
scripted server of ``tests/llm_server.py``; answers stream as server-sent
events in several chunks. Background turns run in real detached workers
(``python -m vance_cli.background``). Nothing is timed: gates hold replies
until the test has seen what it needs (docs/processes.md "Turns").
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, run_cli, wait_until
from llm_server import RecordedRequest, ScriptedLLMServer

pytestmark = pytest.mark.usefixtures("state_store")  # on both stores (docs/teams.md#tests)

PERU = "What is the capital of Peru?"
LIMA = "The capital of Peru is Lima, on the Pacific coast."
CHILE = "And of Chile?"
SANTIAGO = "The capital of Chile is Santiago."
ESSAY = "Write a short essay about the history of tea"
QUICK_PROMPT = "Answer the question in one or two sentences"
"""The start of the quick-lookup recipe's prompt (catalog/recipes/quick-lookup.yaml)."""
FORD_BASE = "You are a careful assistant that does one concrete job well."
"""The start of ford's base prompt (catalog/prompts/engines/ford.md)."""


def match(recipe: str) -> str:
    """The selector's reply that picks ``recipe``."""
    return json.dumps({"decision": "MATCH", "recipe": recipe, "rationale": "it fits"})


@pytest.fixture()
def llm(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
        ) -> ScriptedLLMServer:
    """The scripted server, configured for every command and worker of the test."""
    for key, value in llm_server.env(timeout=60).items():
        monkeypatch.setenv(key, value)
    return llm_server


@pytest.fixture(autouse=True)
def workers_end(vance_home: Path) -> Iterator[None]:
    """Background workers this test started are gone when it ends (none left to the next)."""
    yield
    logs = vance_home / "state" / "logs"
    for log in logs.glob("process-*.log") if logs.is_dir() else ():
        for pid in map(int, re.findall(r"worker (\d+): process", log.read_text())):
            wait_until(lambda pid=pid: not _alive(pid), timeout=30)  # type: ignore[misc]


def _alive(pid: int) -> bool:
    from vance_cli.processes.lifecycle import is_pid_alive

    return is_pid_alive(pid)


def show(process_id: str) -> dict[str, Any]:
    result = run_cli(["process", "show", process_id, "--json"])
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = result.json()
    return data


def messages(process_id: str) -> list[dict[str, Any]]:
    result = run_cli(["process", "messages", process_id, "--json"])
    assert result.exit_code == 0, result.stderr
    found: list[dict[str, Any]] = result.json()
    return found


def streamed(request: RecordedRequest) -> bool:
    """The request asked for a stream and got its answer in more than one chunk."""
    return request.json["stream"] is True and request.streamed > 1


def worker_pid(stdout: str) -> int:
    found = re.search(r"worker pid (\d+)", stdout)
    assert found, stdout
    return int(found.group(1))


def process_id(stdout: str) -> str:
    found = re.search(r"process: ([0-9a-f]{16}) ", stdout)
    assert found, stdout
    return found.group(1)


def delegate_peru(llm: ScriptedLLMServer, *extra: str) -> dict[str, Any]:
    """``vance delegate --task PERU --wait --json`` with the answer streamed; returns the JSON."""
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=5)
    result = run_cli(["delegate", "--task", PERU, "--wait", "--json", *extra])
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = result.json()
    return data


# --- 1, 2: delegate --wait --json ------------------------------------------------------------


def test_delegate_wait_json_runs_the_turn_and_settles_with_the_answer(
        llm: ScriptedLLMServer) -> None:
    data = delegate_peru(llm)
    process = data["process"]
    assert (data["decision"], data["recipe"]) == ("MATCH", "quick-lookup")
    assert (process["status"], process["closeReason"], process["result"]) == ("IDLE", None, LIMA)
    selector, answer = llm.chat_requests
    assert "stream" not in selector.json  # the decision is one JSON reply
    assert streamed(answer)
    body = answer.json
    assert "response_format" not in body  # the answer is free text, not a JSON object
    system, task = body["messages"]
    assert system["role"] == "system" and system["content"].startswith(FORD_BASE)
    assert QUICK_PROMPT in system["content"]
    assert task == {"role": "user", "content": PERU}


def test_delegate_wait_on_a_pipe_prints_the_answer_alone_and_the_decision_on_stderr(
        llm: ScriptedLLMServer) -> None:
    """Issue 20, 4: stdout carries the answer alone; the decision (known first) is on stderr."""
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=5)
    result = run_cli(["delegate", "--task", PERU, "--wait"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == LIMA + "\n"
    assert "decision: MATCH" in result.stderr and "recipe: quick-lookup" in result.stderr
    assert re.search(r"process: [0-9a-f]{16} \(\S+, IDLE\)", result.stderr)
    assert streamed(llm.chat_requests[1])


@pytest.mark.parametrize("command", [
    ["process", "create", "--recipe", "quick-lookup", "--name", "peru", "--steer", PERU,
     "--wait"],
    ["process", "run", "peru"],
    ["process", "steer", "peru", PERU, "--wait"],
])
def test_every_wait_prints_the_same_shape(llm: ScriptedLLMServer,
                                          command: list[str]) -> None:
    """create --wait, run, steer --wait: the answer alone (once) on stdout, the rest on stderr."""
    if command[1] != "create" and os.environ.get("VANCE_STATE_URL"):
        pytest.skip("one machine: a member without an LLM keeps the turn; a team queues it")
    if command[1] != "create":
        made = run_cli(["process", "create", "--recipe", "quick-lookup", "--name", "peru",
                        "--steer", PERU], env={"VANCE_LLM_BASE_URL": None})  # waits: no LLM
        assert made.exit_code == 0, made.stderr
    llm.reply(LIMA, chunks=5)
    result = run_cli(command)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == LIMA + "\n"  # once: not again as a "result:" line
    assert re.search(r"[0-9a-f]{16}", result.stderr) and LIMA not in result.stderr


# --- 3: in the background --------------------------------------------------------------------


@pytest.mark.sqlite_only  # one machine: RUNNING at once; a team's turn waits in the queue
def test_delegate_returns_at_once_then_wait_and_result_get_the_answer(
        llm: ScriptedLLMServer) -> None:
    answer_gate = threading.Event()
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=5, gate=answer_gate)
    result = run_cli(["delegate", "--task", PERU])
    assert result.exit_code == 0, result.stderr
    pid = process_id(result.stdout)
    assert "runs in the background" in result.stdout
    assert f"vance process wait {pid}" in result.stdout
    assert not answer_gate.is_set()  # returned while the answer could not exist yet
    early = run_cli(["process", "result", pid])
    assert early.exit_code == 1 and "no result yet" in early.stderr
    assert show(pid)["status"] == "RUNNING"

    answer_gate.set()
    waited = run_cli(["process", "wait", pid, "--timeout", "30"])
    assert waited.exit_code == 0, waited.stdout + waited.stderr
    got = run_cli(["process", "result", pid])
    assert (got.exit_code, got.stdout) == (0, LIMA + "\n")
    assert show(pid)["status"] == "IDLE"
    assert streamed(llm.chat_requests[1])


def test_wait_times_out_with_124_while_the_turn_runs(llm: ScriptedLLMServer) -> None:
    answer_gate = threading.Event()
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, gate=answer_gate)
    pid = process_id(run_cli(["delegate", "--task", PERU]).stdout)
    assert wait_until(lambda: len(llm.chat_requests) == 2)
    waited = run_cli(["process", "wait", pid, "--timeout", "0.2"])
    assert waited.exit_code == 124 and "still RUNNING" in waited.stderr
    answer_gate.set()
    assert run_cli(["process", "wait", pid, "--timeout", "30"]).exit_code == 0


# --- 4: steer continues the conversation ----------------------------------------------------


def test_steer_wait_sends_the_whole_history(llm: ScriptedLLMServer) -> None:
    pid = delegate_peru(llm)["process"]["id"]
    llm.reply(SANTIAGO, chunks=4)
    result = run_cli(["process", "steer", pid, CHILE, "--wait"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == SANTIAGO + "\n"
    request = llm.chat_requests[2]
    assert streamed(request)
    roles = [(m["role"], m["content"]) for m in request.json["messages"]]
    assert roles[1:] == [("user", PERU), ("assistant", LIMA), ("user", CHILE)]
    assert roles[0][0] == "system" and QUICK_PROMPT in roles[0][1]
    process = show(pid)
    assert (process["status"], process["result"], process["turns"]) == ("IDLE", SANTIAGO, 2)
    assert [(m["role"], m["kind"], m["turn"]) for m in messages(pid)] == [
        ("user", "task", 1), ("assistant", "reply", 1), ("user", "steer", 2),
        ("assistant", "reply", 2)]


def test_steer_without_wait_runs_the_next_turn_in_the_background(
        llm: ScriptedLLMServer) -> None:
    pid = delegate_peru(llm)["process"]["id"]
    llm.reply(SANTIAGO)
    result = run_cli(["process", "steer", pid, CHILE])
    assert result.exit_code == 0, result.stderr
    assert "queued: message #" in result.stdout and "runs in the background" in result.stdout
    assert run_cli(["process", "wait", pid, "--timeout", "30"]).exit_code == 0
    assert show(pid)["result"] == SANTIAGO


def test_shell_plain_text_goes_to_the_listening_process_until_new(
        llm: ScriptedLLMServer) -> None:
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=5)
    llm.reply(SANTIAGO, chunks=3)
    llm.reply(match("quick-lookup"))
    llm.reply("Paris.")
    script = f"{PERU}\n{CHILE}\n/new\nWhat is the capital of France?\n"
    result = run_cli(["shell"], input=script)
    assert result.exit_code == 0, result.stderr
    assert [LIMA, SANTIAGO, "Paris."] == [line for line in result.stdout.splitlines()
                                          if line in (LIMA, SANTIAGO, "Paris.")]
    peru, france = (p["id"] for p in reversed(run_cli(["process", "list", "--json"]).json()))
    requests = llm.chat_requests
    assert len(requests) == 5 and streamed(requests[1]) and streamed(requests[2])
    assert [m["content"] for m in requests[2].json["messages"][1:]] == [PERU, LIMA, CHILE]
    assert "France" in requests[3].json["messages"][-1]["content"]  # /new: the selector
    assert show(peru)["result"] == SANTIAGO and show(france)["result"] == "Paris."


# --- 6: arthur delegates, its child's result comes back -------------------------------------


def arthur_action(action: str, message: str, task: str = "") -> str:
    return json.dumps({"action": action, "message": message, "task": task, "options": []})


def test_arthur_delegates_and_reports_the_childs_result(llm: ScriptedLLMServer) -> None:
    llm.reply(arthur_action("delegate", "I'll have a worker look it up.", PERU))
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=5)  # the child's turn, in its worker
    llm.reply(arthur_action("answer", "The worker says: Lima."))  # arthur's next turn
    created = run_cli(["process", "create", "--recipe", "discuss", "--name", "lead",
                       "--steer", "Let's find out the capital of Peru.", "--wait", "--json"])
    assert created.exit_code == 0, created.stderr
    lead = created.json()["id"]
    assert wait_until(lambda: show(lead)["result"] == "The worker says: Lima."), \
        (show(lead), [r.json["messages"][-1] for r in llm.chat_requests])
    assert run_cli(["process", "wait", lead, "--timeout", "30"]).exit_code == 0

    listed = run_cli(["process", "list", "--json"]).json()
    (child,) = [p for p in listed if p["id"] != lead]
    assert (child["recipe"], child["parentProcessId"], child["goal"]) == \
        ("quick-lookup", lead, PERU)
    first, selector, answer, second = llm.chat_requests
    assert first.json["response_format"]["type"] == "json_schema"  # a structured action
    assert PERU in selector.json["messages"][-1]["content"]  # one selector request
    assert streamed(answer)
    event = second.json["messages"][-1]
    assert event["role"] == "user"
    assert event["content"].startswith(f'<process-event source="{child["id"]}"'
                                       ' type="child_settled">')
    assert LIMA in event["content"]
    kinds = [(m["role"], m["kind"]) for m in messages(lead)]
    assert ("note", "delegated") in kinds and ("event", "child_settled") in kinds


def test_arthurs_delegate_needs_a_call_left_for_the_selector(llm: ScriptedLLMServer) -> None:
    llm.reply(arthur_action("delegate", "I'll have a worker look it up.", PERU))
    created = run_cli(["process", "create", "--recipe", "discuss", "--name", "lead",
                       "--param", 'budget:={"llmCalls": 1}', "--steer", PERU, "--wait",
                       "--json"])
    assert created.exit_code == 1, created.stderr
    process = created.json()
    assert (process["status"], process["closeReason"]) == ("CLOSED", "STALE")
    assert "turn.max_llm_calls" in process["outcome"]["reason"]
    assert len(llm.chat_requests) == 1  # the selector was not asked: no call was left
    assert [p["name"] for p in run_cli(["process", "list", "--json"]).json()] == ["lead"]
    assert [(m["kind"], m["turn"]) for m in messages(process["id"])] == [("task", None)]


def test_arthurs_turn_records_the_selectors_call(llm: ScriptedLLMServer) -> None:
    llm.reply(arthur_action("delegate", "I'll have a worker look it up.", PERU))
    llm.reply(match("quick-lookup"), prompt_tokens=40, completion_tokens=6)
    llm.reply(LIMA)  # the child's turn
    llm.reply(arthur_action("answer", "Lima."))
    created = run_cli(["process", "create", "--recipe", "discuss", "--name", "lead",
                       "--steer", PERU, "--wait", "--json"])
    assert created.exit_code == 0, created.stderr
    lead = created.json()["id"]
    assert wait_until(lambda: show(lead)["result"] == "Lima.")
    assert run_cli(["process", "wait", lead, "--timeout", "30"]).exit_code == 0
    totals = show(lead)["llm"]
    assert (totals["calls"], totals["tokensIn"], totals["tokensOut"]) == (3, 240, 46)


# --- 7: a worker killed mid-turn --------------------------------------------------------------


@pytest.mark.sqlite_only  # a local worker killed by pid; a team takes its turns over
def test_a_worker_killed_mid_turn_goes_stale_keeps_its_inputs_and_run_completes_it(
        llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_HEARTBEAT_INTERVAL", "0.1")
    monkeypatch.setenv("VANCE_STALE_TIMEOUT", "2")
    never = threading.Event()
    llm.reply(match("quick-lookup"))
    llm.reply("never sent", gate=never)
    result = run_cli(["delegate", "--task", PERU])
    assert result.exit_code == 0, result.stderr
    pid, worker = process_id(result.stdout), worker_pid(result.stdout)
    assert wait_until(lambda: len(llm.chat_requests) == 2)  # the worker is mid-turn
    os.kill(worker, signal.SIGKILL)

    assert wait_until(lambda: show(pid)["status"] == "CLOSED", timeout=30)
    process = show(pid)
    gone = ("no heartbeat from worker" if os.environ.get("VANCE_STATE_URL")  # a team's database
            else "worker process")  # on SQLite the gone pid says so at once
    assert process["closeReason"] == "STALE" and gone in process["outcome"]["reason"]
    assert [(m["kind"], m["turn"]) for m in messages(pid)] == [("task", None)]

    llm.reply(LIMA, chunks=5)
    run = run_cli(["process", "run", pid])
    assert run.exit_code == 0, run.stderr
    assert run.stdout == LIMA + "\n"
    after = show(pid)
    assert (after["status"], after["closeReason"], after["result"]) == ("IDLE", None, LIMA)
    assert llm.chat_requests[2].json["messages"][1:] == [{"role": "user", "content": PERU}]
    assert [(m["kind"], m["turn"]) for m in messages(pid)] == [("task", 2), ("reply", 2)]


# --- 8: no LLM ------------------------------------------------------------------------------


@pytest.mark.sqlite_only  # one machine: a team's member queues the turn for the workers' LLM
def test_offline_a_ford_task_waits_for_an_llm_and_says_how_to_run_it() -> None:
    result = run_cli(["delegate", "--task", PERU])
    assert result.exit_code == 0, result.stderr
    pid = process_id(result.stdout)
    assert "recipe: quick-lookup" in result.stdout
    assert "waits for an LLM" in result.stdout and "llm.base_url" in result.stdout
    assert f"then: vance process run {pid}" in result.stdout
    assert show(pid)["status"] == "IDLE"
    assert [(m["kind"], m["turn"]) for m in messages(pid)] == [("task", None)]


@pytest.mark.sqlite_only  # one machine: a team's member queues the turn for the workers' LLM
def test_readme_first_command_offline_says_how_to_get_the_work_done() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f'vance delegate --task "{ESSAY}"' in readme.split("\n```\n", 1)[0]
    result = run_cli(["delegate", "--task", ESSAY])
    assert result.exit_code == 0, result.stderr
    pid = process_id(result.stdout)
    assert "waits for an LLM" in result.stdout
    assert f"then: vance process run {pid}" in result.stdout


# --- 9: budgets and LLM totals -----------------------------------------------------------------


def test_a_turn_over_its_llm_call_budget_ends_stale_naming_the_budget(
        llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_TURN_MAX_LLM_CALLS", "0")
    llm.reply(match("quick-lookup"))
    result = run_cli(["delegate", "--task", PERU, "--wait", "--json"])
    assert result.exit_code == 1
    process = result.json()["process"]
    assert (process["status"], process["closeReason"]) == ("CLOSED", "STALE")
    assert "turn.max_llm_calls" in process["outcome"]["reason"]
    assert len(llm.chat_requests) == 1  # the selector's; the turn made none
    assert [(m["kind"], m["turn"]) for m in messages(process["id"])] == [("task", None)]


def test_show_gives_the_llm_totals_of_every_turn(llm: ScriptedLLMServer) -> None:
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, prompt_tokens=30, completion_tokens=7)
    pid = run_cli(["delegate", "--task", PERU, "--wait", "--json"]).json()["process"]["id"]
    llm.reply(SANTIAGO, prompt_tokens=50, completion_tokens=9)
    assert run_cli(["process", "steer", pid, CHILE, "--wait"]).exit_code == 0
    totals = show(pid)["llm"]
    assert (totals["calls"], totals["tokensIn"], totals["tokensOut"]) == (2, 80, 16)
    human = run_cli(["process", "show", pid]).stdout
    assert "llm: 2 calls, 80 tokens in, 16 out" in human


# --- 11: follow -----------------------------------------------------------------------------------


def _held_then_all(follower: subprocess.Popen[bytes], resume: threading.Event,
                   first: int) -> None:
    """Read a ``process follow`` until ``first`` bytes of LIMA came while the stream is held,
    then release it: the follower shows the rest and exits 0, LIMA shown once."""
    try:
        assert follower.stdout is not None
        seen = b""
        while not LIMA.startswith(seen.decode()) or len(seen) < first:
            seen += os.read(follower.stdout.fileno(), 100)
        assert follower.poll() is None  # the turn cannot end while the stream is held
        resume.set()
        out, err = follower.communicate(timeout=60)
    finally:
        resume.set()
        if follower.poll() is None:
            follower.kill()
    assert follower.returncode == 0, err
    assert (seen + out).decode() == LIMA + "\n"


def test_follow_shows_a_background_turn_as_it_streams_and_ends_when_it_settles(
        llm: ScriptedLLMServer) -> None:
    resume = threading.Event()
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=5, holds={3: resume})
    pid = process_id(run_cli(["delegate", "--task", PERU]).stdout)
    assert wait_until(lambda: len(llm.chat_requests) == 2 and llm.chat_requests[1].streamed == 2)
    follower = subprocess.Popen([sys.executable, "-m", "vance_cli", "process", "follow", pid],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=os.environ.copy())
    _held_then_all(follower, resume, 10)  # the first two chunks, then the rest
    assert show(pid)["status"] == "IDLE"


@pytest.mark.postgres
def test_in_a_team_follow_shows_a_turn_whose_stream_file_it_cannot_see(
        llm: ScriptedLLMServer, tmp_path: Path) -> None:
    """Another member's machine: its own home (no stream file there), the shared database."""
    resume = threading.Event()
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=6, holds={4: resume})
    pid = process_id(run_cli(["delegate", "--task", PERU]).stdout)  # a worker here
    assert wait_until(lambda: len(llm.chat_requests) == 2 and llm.chat_requests[1].streamed == 3)
    elsewhere = tmp_path / "other-member"
    follower = subprocess.Popen([sys.executable, "-m", "vance_cli", "process", "follow", pid],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "VANCE_HOME": str(elsewhere)})
    _held_then_all(follower, resume, 5)  # what was streamed before it started, then the rest
    assert not (elsewhere / "state" / "streams").exists()  # no file of its own to read


@pytest.mark.sqlite_only  # a launcher's hand-over to a local worker
def test_a_turn_handed_to_a_worker_shows_no_earlier_output_to_followers(
        llm: ScriptedLLMServer, vance_home: Path) -> None:
    """Between the hand-over and the worker's first piece, follow must not show the last turn."""
    import sqlite3

    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=5)
    pid = process_id(run_cli(["delegate", "--task", PERU]).stdout)  # a worker's turn
    assert run_cli(["process", "wait", pid, "--timeout", "30"]).exit_code == 0
    live = vance_home / "state" / "streams" / f"{pid}.txt"
    assert live.read_text(encoding="utf-8") == LIMA
    llm.reply("Santiago.")
    lock = sqlite3.connect(vance_home / "state" / "vance.db", isolation_level=None)
    try:
        steered = run_cli(["process", "steer", pid, CHILE])
        assert steered.exit_code == 0, steered.stderr
        lock.execute("BEGIN IMMEDIATE")  # the worker cannot claim its turn yet
        assert show(pid)["status"] == "RUNNING"
        assert live.read_text(encoding="utf-8") == ""  # what a follower sees now
    finally:
        lock.close()
    assert run_cli(["process", "wait", pid, "--timeout", "30"]).exit_code == 0
    followed = run_cli(["process", "follow", pid])
    assert followed.stdout == "Santiago.\n"


def test_follow_of_a_settled_process_shows_its_latest_result(llm: ScriptedLLMServer) -> None:
    pid = delegate_peru(llm)["process"]["id"]
    result = run_cli(["process", "follow", pid])
    assert (result.exit_code, result.stdout) == (0, LIMA + "\n")


# --- 12: a broken stream ---------------------------------------------------------------------


def test_a_broken_stream_fails_the_turn_and_run_retries_it(llm: ScriptedLLMServer) -> None:
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=5, cut_after=3)
    result = run_cli(["delegate", "--task", PERU, "--wait", "--json"])
    assert result.exit_code == 1, result.stderr
    process = result.json()["process"]
    assert (process["status"], process["closeReason"]) == ("CLOSED", "STALE")
    assert process["outcome"]["reason"].startswith("LLM call failed")
    assert llm.chat_requests[1].streamed == 2  # it broke mid-answer
    assert [(m["kind"], m["turn"]) for m in messages(process["id"])] == [("task", None)]

    llm.reply(LIMA, chunks=5)
    run = run_cli(["process", "run", process["id"], "--json"])
    assert run.exit_code == 0, run.stderr
    retried = run.json()
    assert (retried["status"], retried["closeReason"], retried["result"]) == ("IDLE", None, LIMA)
    assert streamed(llm.chat_requests[2])
    assert show(process["id"])["llm"]["calls"] == 2  # the failed call is recorded too


def test_run_with_nothing_waiting_runs_no_turn(llm: ScriptedLLMServer) -> None:
    pid = delegate_peru(llm)["process"]["id"]
    result = run_cli(["process", "run", pid])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "" and "nothing to run" in result.stderr
    assert len(llm.chat_requests) == 2  # no third call
    process = show(pid)
    assert (process["status"], process["turns"], process["result"]) == ("IDLE", 1, LIMA)


@pytest.mark.sqlite_only  # the local worker's drive loop; a team's next turn is a new job
def test_steer_during_a_background_turn_is_taken_by_the_next_turn_of_that_worker(
        llm: ScriptedLLMServer) -> None:
    hold = threading.Event()
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=5, holds={3: hold})
    llm.reply(SANTIAGO)
    first = run_cli(["delegate", "--task", PERU])
    pid, worker = process_id(first.stdout), worker_pid(first.stdout)
    assert wait_until(lambda: len(llm.chat_requests) == 2 and llm.chat_requests[1].streamed == 2)
    steered = run_cli(["process", "steer", pid, CHILE])
    assert steered.exit_code == 0, steered.stderr
    assert "queued: message #" in steered.stdout
    assert f"worker pid {worker}" in steered.stdout  # the worker that runs the turn now
    waiting = run_cli(["process", "steer", pid, "And of Bolivia?", "--wait"])
    assert waiting.exit_code == 0, waiting.stderr
    assert "queued: message #" in waiting.stderr and waiting.stdout == ""  # --wait: stderr
    hold.set()
    assert wait_until(lambda: show(pid)["result"] == SANTIAGO)
    assert run_cli(["process", "wait", pid, "--timeout", "30"]).exit_code == 0
    assert [m["content"] for m in llm.chat_requests[2].json["messages"][1:]] == [
        PERU, LIMA, CHILE, "And of Bolivia?"]
    assert len(llm.chat_requests) == 3
    logs = list((Path(os.environ["VANCE_HOME"]) / "state" / "logs").glob("*.log"))
    assert "error" not in "".join(log.read_text() for log in logs).lower()


@pytest.mark.sqlite_only  # a member without an LLM keeps the turn; a team queues it
def test_steer_of_a_failed_process_queues_the_message_and_names_run(
        llm: ScriptedLLMServer) -> None:
    llm.reply(match("quick-lookup"))
    llm.reply(LIMA, chunks=5, cut_after=3)
    pid = run_cli(["delegate", "--task", PERU, "--wait", "--json"]).json()["process"]["id"]
    assert show(pid)["closeReason"] == "STALE"
    for extra in ([], ["--wait"]):
        steered = run_cli(["process", "steer", pid, CHILE, *extra])
        assert steered.exit_code == (75 if extra else 0), steered.stderr  # --wait: no turn ran
        said = steered.stderr if extra else steered.stdout  # --wait: metadata on stderr
        assert "queued: message #" in said
        assert f"then: vance process run {pid}" in said
    assert len(llm.chat_requests) == 2 and show(pid)["closeReason"] == "STALE"
    llm.reply(SANTIAGO)
    assert run_cli(["process", "run", pid]).exit_code == 0
    sent = llm.chat_requests[2].json["messages"][1:]
    assert [m["content"] for m in sent] == [PERU, CHILE, CHILE]
    assert show(pid)["status"] == "IDLE"


# --- 13: the slartibartfast recipe ---------------------------------------------------------


def test_a_match_on_slartibartfast_runs_it_and_the_result_names_the_recipe(
        llm: ScriptedLLMServer) -> None:
    from helpers import slart_recipe_reply

    llm.reply(match("slartibartfast"))
    llm.reply(slart_recipe_reply(name="smart-home-control"))
    result = run_cli(["delegate", "--task", "Design a way to switch my lamps from the couch",
                      "--wait", "--json"])
    assert result.exit_code == 0, result.stderr
    data = result.json()
    process = data["process"]
    assert (data["recipe"], process["engine"]) == ("slartibartfast", "slartibartfast")
    assert (process["status"], process["closeReason"]) == ("CLOSED", "DONE")
    assert "smart-home-control" in process["result"]
    name = process["outcome"]["recipeName"]
    assert name.endswith("/smart-home-control") and name in process["result"]
    recipe = run_cli(["recipe", "show", name, "--json"])
    assert recipe.exit_code == 0, recipe.stderr
    assert recipe.json()["engine"] == "ford"
    assert len(llm.chat_requests) == 2  # the selector's, then Slartibartfast's


def test_a_real_arthur_storm_stops_at_the_depth_limit(llm: ScriptedLLMServer) -> None:
    """Issue 26's storm from one command: every arthur delegates, the selector picks arthur
    (discuss) each time, each child runs in its worker; the third arthur is refused."""
    # Each arthur's first turn delegates; a parent woken by its child's event answers (its
    # call races the child's own, so each kind of request gets its own replies).
    def selector(req: RecordedRequest) -> bool:
        return b'"decision"' in req.body

    def woken(req: RecordedRequest) -> bool:
        return b'<process-event source=' in req.body and not selector(req)

    def first_turn(req: RecordedRequest) -> bool:
        return not selector(req) and not woken(req)

    for _ in range(3):
        llm.reply(arthur_action("delegate", "Another lead will take this on.", PERU),
                  when=first_turn)
    for _ in range(2):
        llm.reply(match("discuss"), when=selector)
    for _ in range(8):
        llm.reply(arthur_action("answer", "Noted."), when=woken)
    created = run_cli(["process", "create", "--recipe", "discuss", "--name", "lead",
                       "--steer", PERU, "--wait", "--json"])
    assert created.exit_code == 0, created.stderr
    refused = ("was not delegated: delegation depth limit reached: 3 delegating processes in"
               " the chain (at most 3)")

    def third() -> dict[str, Any] | None:
        chain = run_cli(["process", "list", "--json"]).json()
        deepest = [p for p in chain if p["parentProcessId"] and p["parentProcessId"] != lead]
        return show(deepest[0]["id"]) if deepest else None

    lead = created.json()["id"]
    assert wait_until(lambda: refused in ((third() or {}).get("result") or ""), timeout=60), \
        [r.json["messages"][-1]["content"][:80] for r in llm.chat_requests]
    listed = run_cli(["process", "list", "--json"]).json()
    assert len(listed) == 3, listed
    by_id = {p["id"]: p for p in listed}
    deepest = third()
    assert deepest is not None
    middle = by_id[deepest["parentProcessId"]]
    assert (middle["parentProcessId"], {p["recipe"] for p in listed}) == (lead, {"discuss"})
    selector = [r for r in llm.chat_requests if '"decision"' in r.body.decode()]
    assert len(selector) == 2  # one per delegation started: none for the third arthur's
    assert ("note", "refused") in [(m["role"], m["kind"]) for m in messages(deepest["id"])]


@pytest.mark.sqlite_only  # a member without an LLM keeps the turn; a team queues it
def test_the_arthur_storm_stops_at_the_depth_limit_with_a_note(llm: ScriptedLLMServer) -> None:
    """Issue 26: an arthur that always delegates, whose selector picks arthur again, nested
    without end; at the depth limit its delegate starts nothing and says why."""
    ids: list[str] = []
    for name in ("lead", "second", "third"):  # three arthurs, each the child of the last
        made = run_cli(["process", "create", "--recipe", "discuss", "--name", name,
                        *(["--parent", ids[-1]] if ids else []),
                        *(["--steer", PERU] if name == "third" else []), "--json"],
                       env={"VANCE_LLM_BASE_URL": None, "VANCE_LLM_API_KEY": None})
        assert made.exit_code == 0, made.stderr
        ids.append(made.json()["id"])
    llm.reply(arthur_action("delegate", "Another lead will take this on.", PERU))
    ran = run_cli(["process", "run", ids[-1], "--json"])
    assert ran.exit_code == 0, ran.stderr
    assert len(llm.chat_requests) == 1  # no selector call: nothing was started
    assert len(run_cli(["process", "list", "--json"]).json()) == 3
    result = show(ids[-1])["result"]
    assert "Another lead will take this on." in result
    assert "[vance: the task 'What is the capital of Peru?' was not delegated: delegation" \
           " depth limit reached: 3 delegating processes in the chain (at most 3)]" in result
    assert ("note", "refused") in [(m["role"], m["kind"]) for m in messages(ids[-1])]
