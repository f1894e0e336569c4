"""zaphod end to end: councils and debates through the CLI against the scripted server."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from helpers import WAIT, CliResult, build_file_tree, run_cli, wait_until
from llm_server import ScriptedLLMServer

from vance_cli.processes.lifecycle import is_pid_alive

PERSONAS = ("<think>Three angles: money, people, risk.</think>\nHere are the members:\n"
            "```json\n" + json.dumps({"heads": [
                {"name": "Finance Lead", "persona": "Watches cost and cash flow."},
                {"name": "Customer Advocate", "persona": "Speaks for the customers."},
                {"name": "Risk Officer", "persona": "Looks for what can go wrong."}]})
            + "\n```")
QUESTION = "Should we open a second shop next year?"


def _user_text(request: Any) -> str:
    return "\n".join(m["content"] for m in request.json["messages"] if m["role"] == "user")


def _council(llm_server: ScriptedLLMServer, *extra: str) -> CliResult:
    return run_cli(["process", "create", "--recipe", "council-three-perspectives", "--name",
                    "c", "--goal", QUESTION, "--wait", "--json", *extra], env=llm_server.env())


def test_council_picks_personas_asks_three_heads_side_by_side_then_synthesises(
        llm_server: ScriptedLLMServer) -> None:
    gate = threading.Event()
    llm_server.reply(PERSONAS)
    for view in ("VIEW-money", "VIEW-people", "VIEW-risk"):
        llm_server.reply(view, gate=gate)
    llm_server.reply("SYNTHESIS: open it, but lease first", chunks=4)
    outcome: list[CliResult] = []
    runner = threading.Thread(target=lambda: outcome.append(_council(llm_server)))
    runner.start()
    try:
        # all three heads are asked before any of them is answered: they run side by side
        assert wait_until(lambda: len(llm_server.chat_requests) == 4, WAIT)
    finally:
        gate.set()
        runner.join(WAIT)
    [result] = outcome
    assert result.exit_code == 0, result.stderr
    process = result.json()
    assert (process["status"], process["closeReason"]) == ("CLOSED", "DONE")
    assert process["result"] == "SYNTHESIS: open it, but lease first"
    requests = llm_server.chat_requests
    assert len(requests) == 5
    heads = requests[1:4]
    assert all(QUESTION in _user_text(r) for r in heads)
    assert {next(n for n in ("finance-lead", "customer-advocate", "risk-officer")
                 if n in _user_text(r)) for r in heads} == {
        "finance-lead", "customer-advocate", "risk-officer"}
    synthesis = _user_text(requests[4])
    assert all(view in synthesis for view in ("VIEW-money", "VIEW-people", "VIEW-risk"))
    payload = process["outcome"]
    assert payload["pattern"] == "council" and payload["failed"] == []
    assert sorted(h["answer"] for h in payload["heads"]) == ["VIEW-money", "VIEW-people",
                                                            "VIEW-risk"]
    listed = run_cli(["process", "list", "--json"]).json()
    kids = [p for p in listed if p["parentProcessId"] == process["id"]]
    assert len(kids) == 3 and {k["closeReason"] for k in kids} == {"DONE"}


def test_a_head_that_fails_is_skipped_and_named(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(PERSONAS)
    llm_server.reply("VIEW-one")
    llm_server.fail(500, "the model is overloaded")
    llm_server.reply("VIEW-three")
    llm_server.reply("SYNTHESIS without one member")
    result = _council(llm_server, "--param", "maxParallel:=1")
    assert result.exit_code == 0, result.stderr
    payload = result.json()["outcome"]
    assert payload["failed"] == ["customer-advocate"]
    [failed] = [h for h in payload["heads"] if h["status"] == "failed"]
    assert "overloaded" in failed["error"]
    assert "[head failed:" in _user_text(llm_server.chat_requests[-1])
    shown = run_cli(["process", "show", result.json()["id"]]).stdout
    assert "customer-advocate  failed: LLM call failed" in shown


def test_every_head_failing_fails_the_turn(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(PERSONAS)
    for _ in range(3):
        llm_server.fail(500, "down")
    result = _council(llm_server, "--param", "maxParallel:=1")
    assert result.exit_code == 1
    process = result.json()
    assert process["closeReason"] == "STALE"
    assert process["outcome"]["reason"].startswith("every head failed: finance-lead:")
    assert len(llm_server.chat_requests) == 4  # no synthesis


def test_debate_shows_each_head_the_others_answer_until_the_rounds_end(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("PRO-1: it pays off")
    llm_server.reply("CONTRA-1: too risky")
    llm_server.reply('```json\n{"consensus": false, "reason": "they disagree on risk"}\n```')
    llm_server.reply("PRO-2: risk is manageable")
    llm_server.reply("CONTRA-2: still too risky")
    llm_server.reply("VERDICT: contra wins")
    result = run_cli(["process", "create", "--recipe", "debate-pro-contra", "--name", "d",
                      "--goal", "A four-day week", "--param", "maxParallel:=1", "--wait",
                      "--json"], env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    requests = llm_server.chat_requests
    assert len(requests) == 6
    pro_round_two = requests[3].json["messages"]
    assert "CONTRA-1: too risky" in pro_round_two[-1]["content"]
    assert "[Round 2 of 2]" in pro_round_two[-1]["content"]
    assert any(m["content"] == "PRO-1: it pays off" for m in pro_round_two)  # same child
    payload = result.json()["outcome"]
    assert payload["rounds"] == 2 and payload["consensusReached"] is False
    assert "judge" in requests[-1].json["messages"][0]["content"]
    assert result.json()["result"] == "VERDICT: contra wins"


def test_debate_stops_at_consensus(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("PRO-1: yes")
    llm_server.reply("CONTRA-1: yes, with limits")
    llm_server.reply('{"consensus": true, "reason": "both say yes"}')
    llm_server.reply("VERDICT: yes")
    result = run_cli(["process", "create", "--recipe", "debate-pro-contra", "--name", "d",
                      "--goal", "A four-day week", "--param", "maxRounds:=3", "--wait",
                      "--json"], env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    assert len(llm_server.chat_requests) == 4
    payload = result.json()["outcome"]
    assert payload["rounds"] == 1 and payload["consensusReached"] is True
    assert payload["consensusReason"] == "both say yes"


def test_a_council_whose_heads_are_itself_is_refused_before_anything_runs(
        llm_server: ScriptedLLMServer, project_dir: Path) -> None:
    build_file_tree(project_dir, {"recipes/selfdebate.yaml": (
        "engine: zaphod\ndescription: A debate whose heads are debates.\nparams:\n"
        "  heads:\n    - {name: a, persona: pro, recipe: selfdebate}\n"
        "    - {name: b, persona: contra, recipe: selfdebate}\n")})
    result = run_cli(["process", "create", "--recipe", "selfdebate", "--name", "s", "--goal",
                      "q", "--wait", "--json"], env=llm_server.env())
    assert result.exit_code == 1
    reason = result.json()["outcome"]["reason"]
    assert reason.startswith("every head failed: a: cannot start: recipe 'selfdebate' would"
                             " run inside itself")
    assert llm_server.chat_requests == []
    assert len(run_cli(["process", "list", "--json"]).json()) == 1


def test_orchestrators_nest_at_most_two_deep(llm_server: ScriptedLLMServer,
                                             project_dir: Path) -> None:
    build_file_tree(project_dir, {
        "recipes/outer.yaml": ("engine: vogon\ndescription: o\nparams:\n  phases:\n"
                               "    - {name: ask, worker: middle}\n"),
        "recipes/middle.yaml": ("engine: vogon\ndescription: m\nparams:\n  phases:\n"
                                "    - {name: ask, worker: debate-pro-contra}\n")})
    result = run_cli(["process", "create", "--recipe", "outer", "--name", "o", "--goal", "q",
                      "--wait", "--json"], env=llm_server.env())
    assert result.exit_code == 1
    reason = result.json()["outcome"]["reason"]
    assert "would nest orchestrators 3 deep; at most 2 may stand above one" in reason
    assert llm_server.chat_requests == []


def test_stop_ends_a_council_and_its_heads_at_once(llm_server: ScriptedLLMServer) -> None:
    gate = threading.Event()  # the heads' replies never come before the stop
    llm_server.reply(PERSONAS)
    for _ in range(3):
        llm_server.reply("late", gate=gate)
    try:
        created = run_cli(["process", "create", "--recipe", "council-three-perspectives",
                           "--name", "c", "--goal", QUESTION, "--json"],
                          env=llm_server.env(timeout=120))
        assert created.exit_code == 0, created.stderr
        pid = created.json()["id"]
        assert wait_until(lambda: len(llm_server.chat_requests) == 4)  # the heads are asked
        stopped = run_cli(["process", "stop", pid, "--json"]).json()
        assert stopped["process"]["closeReason"] == "STOPPED"
        worker = stopped["signalledPid"]
        assert worker is not None
        assert wait_until(lambda: not is_pid_alive(worker))  # not held by the heads' calls
        heads = [p for p in run_cli(["process", "list", "--json"]).json()
                 if p["parentProcessId"] == pid]
        assert len(heads) == 3
        assert {(h["status"], h["closeReason"]) for h in heads} == {("CLOSED", "STOPPED")}
    finally:
        gate.set()
