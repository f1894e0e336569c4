"""Say what happened (issue 20, item 5): a process whose input waits reads so, a failed turn
reads FAILED, and ``--wait`` / ``process wait`` exit 75 when no turn could run.

Through the CLI (CliRunner) against the scripted server of ``tests/llm_server.py``
(docs/processes.md "Statuses", docs/exit-codes.md).
"""

from __future__ import annotations

import json

from helpers import run_cli
from llm_server import ScriptedLLMServer

PERU = "What is the capital of Peru?"
LIMA = "Lima."
MATCH = json.dumps({"decision": "MATCH", "recipe": "quick-lookup", "rationale": "a fact"})


def _row(name: str) -> str:
    (line,) = [row for row in run_cli(["process", "list"]).stdout.splitlines() if name in row]
    return line


def test_a_process_whose_input_waits_says_so_and_wait_exits_75(
        llm_server: ScriptedLLMServer) -> None:
    made = run_cli(["process", "create", "--recipe", "quick-lookup", "--name", "peru",
                    "--steer", PERU, "--wait"])  # no LLM: no turn can run
    assert made.exit_code == 75, made.stderr
    assert "waits for an LLM" in made.stderr and made.stdout == ""
    assert "IDLE (input waits)" in _row("peru")
    shown = run_cli(["process", "show", "peru"])
    assert "input: 1 message no turn has answered yet" in shown.stdout
    assert run_cli(["process", "show", "peru", "--json"]).json()["inputWaiting"] == 1
    [listed] = run_cli(["process", "list", "--json"]).json()
    assert listed["inputWaiting"] == 1 and listed["status"] == "IDLE"
    waited = run_cli(["process", "wait", "peru"])
    assert waited.exit_code == 75 and "no turn could run" in waited.stderr
    ran = run_cli(["process", "run", "peru"])  # as --wait: the same lines, the same code
    assert (ran.exit_code, ran.stdout) == (75, "")
    assert "waits for an LLM" in ran.stderr and "then: vance process run" in ran.stderr
    assert "vance: error" not in ran.stderr
    assert run_cli(["process", "run", "peru", "--json"]).exit_code == 75

    llm_server.reply(LIMA)
    assert run_cli(["process", "run", "peru"], env=llm_server.env()).exit_code == 0
    assert run_cli(["process", "wait", "peru"]).exit_code == 0  # it answered
    assert "input waits" not in _row("peru")
    assert run_cli(["process", "show", "peru", "--json"]).json()["inputWaiting"] == 0
    assert "input:" not in run_cli(["process", "show", "peru"]).stdout


def test_delegate_wait_without_an_llm_exits_75_and_without_wait_0() -> None:
    task = ["delegate", "--task", "Write a short essay about the history of tea"]
    assert run_cli(task).exit_code == 0  # the process waits; nothing was asked to wait for
    waited = run_cli([*task, "--wait"])
    assert waited.exit_code == 75, waited.stderr
    assert "then: vance process run" in waited.stderr


def test_a_failed_turn_reads_failed_and_a_dead_worker_stale(
        llm_server: ScriptedLLMServer, ws: object) -> None:
    llm_server.reply(MATCH)
    llm_server.reply("Lima is the capital", chunks=4, cut_after=2)  # the stream breaks
    done = run_cli(["delegate", "--task", PERU, "--wait", "--name", "broken"],
                   env=llm_server.env(max_retries=0))
    assert done.exit_code == 1
    assert "CLOSED/FAILED" in _row("broken")
    shown = run_cli(["process", "show", "broken"])
    assert "status: CLOSED/FAILED" in shown.stdout
    assert "STALE" not in shown.stdout.replace("STALE in --json", "")  # people read FAILED
    assert "close reason: FAILED: turn 1 failed (STALE in --json)" in shown.stdout
    data = run_cli(["process", "show", "broken", "--json"]).json()
    assert (data["status"], data["closeReason"]) == ("CLOSED", "STALE")  # the contract stays
    assert data["outcome"]["turn"] == 1 and data["inputWaiting"] == 1
    assert run_cli(["process", "wait", "broken"]).exit_code == 1

    from vance_cli.processes.worker import hand_over
    from vance_cli.workspace import Workspace

    assert isinstance(ws, Workspace)
    made = run_cli(["process", "create", "--recipe", "quick-lookup", "--name", "orphan",
                    "--steer", PERU])
    assert made.exit_code == 0
    orphan = run_cli(["process", "show", "orphan", "--json"]).json()["id"]
    hand_over(ws, orphan, 2**22 + 12345)  # a worker pid that is not alive
    assert "CLOSED/STALE" in _row("orphan")  # reaped: the worker died
    orphan_shown = run_cli(["process", "show", "orphan"]).stdout
    assert "status: CLOSED/STALE" in orphan_shown and "close reason: STALE\n" in orphan_shown


def test_the_lines_beside_an_answer_are_not_wrapped_on_a_pipe() -> None:
    waited = run_cli(["delegate", "--task", "Write a short essay about the history of tea",
                      "--wait"])
    assert waited.exit_code == 75, waited.stderr
    lines = waited.stderr.splitlines()
    assert "rationale: trigger keyword 'write a short essay' of recipe 'essay-pipeline' occurs" \
        " in the task" in lines
    [work] = [line for line in lines if line.startswith("work: ")]
    assert "configure one with 'vance config set llm.base_url URL' (any" in work
    assert work.endswith("'vance config show' lists every setting)")
