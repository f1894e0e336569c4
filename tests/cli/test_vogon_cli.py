"""vogon end to end: the bundled phase recipes run through the CLI against the scripted server."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import build_file_tree, run_cli
from llm_server import ScriptedLLMServer

ESSAY = "Write a short essay about the history of tea"


def _user_text(request: object) -> str:
    body = request.json  # type: ignore[attr-defined]
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")


def _system_text(request: object) -> str:
    body = request.json  # type: ignore[attr-defined]
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")


def test_essay_pipeline_runs_four_phases_each_on_the_previous_output(
        llm_server: ScriptedLLMServer) -> None:
    outputs = ["OUTLINE: 1. China 2. Trade 3. Britain", "DRAFT: Tea began in China …",
               "REVIEW: the trade section needs dates", "FINAL: A Short History of Tea …"]
    for text in outputs:
        llm_server.reply(text, chunks=3)
    result = run_cli(["delegate", "--task", ESSAY, "--wait", "--json"], env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    data = result.json()
    assert data["recipe"] == "essay-pipeline" and "trigger" in data["rationale"]
    requests = llm_server.chat_requests
    assert len(requests) == 4  # a trigger: no selector request, one per phase
    assert all(r.json["stream"] is True for r in requests)
    assert ESSAY in _user_text(requests[0])
    for previous, request in zip(outputs, requests[1:], strict=False):
        assert previous in _user_text(request)
    assert "critical editor" in _system_text(requests[2])
    process = data["process"]
    assert process["status"] == "CLOSED" and process["closeReason"] == "DONE"
    assert process["result"] == outputs[-1]
    shown = run_cli(["process", "show", process["id"], "--json"]).json()
    phases = shown["outcome"]["phases"]
    assert [(p["name"], p["status"]) for p in phases] == [
        ("outline", "done"), ("draft", "done"), ("review", "done"), ("final", "done")]
    human = run_cli(["process", "show", process["id"]]).stdout
    for number, name in enumerate(("outline", "draft", "review", "final"), 1):
        assert re.search(rf"{number}\. {name} +done \(process [0-9a-f]{{8}}\)", human), human
    children = run_cli(["process", "list", "--json"]).json()
    workers = [p for p in children if p["parentProcessId"] == process["id"]]
    assert len(workers) == 4
    assert {p["status"] for p in workers} == {"CLOSED"}


def test_waterfall_blocks_for_approval_reruns_on_no_and_finishes_on_yes(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("REQ v1: login with e-mail")
    created = run_cli(["process", "create", "--recipe", "waterfall-feature", "--name", "wf",
                       "--goal", "add a password reset", "--wait", "--json"],
                      env=llm_server.env())
    assert created.exit_code == 0, created.stderr
    process = created.json()
    pid = process["id"]
    assert process["status"] == "BLOCKED"
    assert "REQ v1" in process["result"] and "yes" in process["result"]

    llm_server.reply("REQ v2: login with e-mail, with a rollback plan")
    steered = run_cli(["process", "steer", pid, "no: add a rollback plan", "--wait", "--json"],
                      env=llm_server.env())
    assert steered.exit_code == 0, steered.stderr
    rerun = llm_server.chat_requests[-1]
    assert "add a rollback plan" in _user_text(rerun) and "REQ v1" in _user_text(rerun)
    assert run_cli(["process", "show", pid, "--json"]).json()["status"] == "BLOCKED"

    llm_server.reply("DESIGN: a token table")
    run_cli(["process", "steer", pid, "yes", "--wait"], env=llm_server.env())
    assert "REQ v2" in _user_text(llm_server.chat_requests[-1])
    assert run_cli(["process", "show", pid, "--json"]).json()["status"] == "BLOCKED"

    calls = len(llm_server.chat_requests)
    again = run_cli(["process", "steer", pid, "maybe later", "--wait", "--json"],
                    env=llm_server.env())
    assert again.exit_code == 0  # not an answer: it asks again, nothing runs
    assert len(llm_server.chat_requests) == calls
    asked = run_cli(["process", "show", pid, "--json"]).json()
    assert asked["status"] == "BLOCKED" and "does not answer" in asked["result"]

    llm_server.reply("IMPL: def reset(): ...")
    llm_server.reply("TESTS: def test_reset(): ...")
    done = run_cli(["process", "steer", pid, "yes", "--wait", "--json"], env=llm_server.env())
    assert done.exit_code == 0, done.stderr
    final = run_cli(["process", "show", pid, "--json"]).json()
    assert (final["status"], final["closeReason"]) == ("CLOSED", "DONE")
    assert "## Tests" in final["result"] and "TESTS: def test_reset" in final["result"]
    implementation, tests = llm_server.chat_requests[-2:]
    assert "Write or change the code" in _system_text(implementation)  # the coding recipe
    assert "IMPL: def reset" in _user_text(tests)


def test_vogon_recipe_runs_a_strategy_document_from_the_project(
        llm_server: ScriptedLLMServer, project_dir: Path) -> None:
    build_file_tree(project_dir, {"strategies/two-step.yaml": (
        "phases:\n  - name: first\n    prompt: Do step one.\n    input: 'one: {{ task }}'\n"
        "  - name: second\n    prompt: Do step two.\n    input: 'two: {{ phases.first }}'\n"
        "result: '{{ phases.first }} + {{ phases.second }}'\n")})
    llm_server.reply("A")
    llm_server.reply("B")
    result = run_cli(["process", "create", "--recipe", "vogon", "--name", "v", "--goal", "go",
                      "--param", "strategy=two-step", "--wait", "--json"], env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    assert [_user_text(r) for r in llm_server.chat_requests] == ["one: go", "two: A"]
    shown = run_cli(["process", "show", result.json()["id"], "--json"]).json()
    assert shown["result"] == "A + B"


def test_vogon_without_a_plan_fails_with_the_strategies_it_knows(
        llm_server: ScriptedLLMServer) -> None:
    result = run_cli(["process", "create", "--recipe", "vogon", "--name", "v", "--goal", "go",
                      "--wait", "--json"], env=llm_server.env())
    assert result.exit_code == 1
    shown = run_cli(["process", "show", result.json()["id"], "--json"]).json()
    assert shown["closeReason"] == "STALE"
    assert "strategy=NAME" in shown["outcome"]["reason"]
    assert llm_server.chat_requests == []


def test_a_failed_phase_names_itself_and_a_retry_goes_on_from_it(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("OUTLINE")
    llm_server.fail(500, "the model is overloaded")
    failed = run_cli(["delegate", "--task", ESSAY, "--wait", "--json"], env=llm_server.env())
    assert failed.exit_code == 1
    process = failed.json()["process"]
    assert process["closeReason"] == "STALE"
    assert process["outcome"]["reason"].startswith("phase 'draft' failed: its worker")
    assert "overloaded" in process["outcome"]["reason"]
    for text in ("DRAFT", "REVIEW", "FINAL"):
        llm_server.reply(text)
    retried = run_cli(["process", "run", process["id"], "--json"], env=llm_server.env())
    assert retried.exit_code == 0, retried.stderr
    assert retried.json()["result"] == "FINAL"
    requests = llm_server.chat_requests
    assert len(requests) == 5  # the outline was kept, not asked again
    assert "OUTLINE" in _user_text(requests[2])


def test_a_scorer_loop_revises_until_the_score_is_reached(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("DRAFT v1")
    llm_server.reply('<think>meh</think>```json\n{"score": 4, "summary": "too vague"}\n```')
    llm_server.reply("DRAFT v2")
    llm_server.reply('{"score": 0.9, "summary": "good"}')
    llm_server.reply("PROOFREAD v2")
    result = run_cli(["process", "create", "--recipe", "vogon", "--name", "v", "--goal",
                      "a toast for a wedding", "--param", "strategy=draft-review", "--wait",
                      "--json"], env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    requests = llm_server.chat_requests
    assert len(requests) == 5
    revision = _user_text(requests[2])
    assert "DRAFT v1" in revision and "too vague" in revision
    assert result.json()["result"] == "PROOFREAD v2"
    [draft, proofread] = result.json()["outcome"]["phases"]
    assert draft["rounds"] == 2 and len(draft["children"]) == 2 and proofread["rounds"] == 1
    state = result.json()["state"]
    assert state["done"]["draft"]["score"] == 0.9


def test_a_decision_checkpoint_takes_an_option_by_number(
        llm_server: ScriptedLLMServer, project_dir: Path) -> None:
    build_file_tree(project_dir, {"recipes/pick.yaml": (
        "engine: vogon\ndescription: Pick a venue.\nparams:\n  phases:\n"
        "    - name: options\n      prompt: List venues.\n"
        "      checkpoint: {type: decision, options: [barn, beach, city]}\n"
        "    - name: plan\n      prompt: Plan it.\n"
        "      input: 'Plan the party at the {{ decisions.options }}'\n")})
    llm_server.reply("barn, beach or city")
    created = run_cli(["process", "create", "--recipe", "pick", "--name", "p", "--goal",
                       "party", "--wait", "--json"], env=llm_server.env())
    pid = created.json()["id"]
    assert "answer one of: 1 barn, 2 beach, 3 city: vance process steer" in created.json()["result"]
    wrong = run_cli(["process", "steer", pid, "forest", "--wait"], env=llm_server.env())
    assert wrong.exit_code == 0 and len(llm_server.chat_requests) == 1
    llm_server.reply("PLAN at the beach")
    run_cli(["process", "steer", pid, "2", "--wait"], env=llm_server.env())
    assert _user_text(llm_server.chat_requests[-1]) == "Plan the party at the beach"
    assert run_cli(["process", "show", pid, "--json"]).json()["closeReason"] == "DONE"


def test_on_a_pipe_wait_prints_the_result_not_every_phase(llm_server: ScriptedLLMServer) -> None:
    for text in ("OUTLINE-X", "DRAFT-X", "REVIEW-X", "THE FINAL ESSAY"):
        llm_server.reply(text)
    result = run_cli(["delegate", "--task", ESSAY, "--wait"], env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("THE FINAL ESSAY\n")
    assert "OUTLINE-X" not in result.stdout and "DRAFT-X" not in result.stdout


def test_show_says_why_a_vogon_process_failed(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(500, "boom")
    failed = run_cli(["delegate", "--task", ESSAY, "--wait", "--json"], env=llm_server.env())
    pid = failed.json()["process"]["id"]
    shown = run_cli(["process", "show", pid]).stdout
    assert re.search(r"1\. outline +failed \(process [0-9a-f]{8}\)", shown), shown
    assert "reason: phase 'outline' failed: its worker" in shown and "boom" in shown
