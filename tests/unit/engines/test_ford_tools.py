"""ford's tool loop against the scripted server's ``tool_calls`` replies (docs/tools.md).

The server streams each call as deltas in several chunks; the loop assembles
them, runs the call behind the gate, sends the result back as a ``tool``
message, and stores each call in the transcript.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import build_file_tree
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.processes.inputs import submit, transcript
from vance_cli.processes.model import ProcessSpec
from vance_cli.processes.records import create_process, list_processes, load_process
from vance_cli.processes.runtime import drive, run_turn
from vance_cli.processes.stream import stream_path
from vance_cli.processes.turn import Budget, NullSink, Turn
from vance_cli.workspace import Workspace

APP = '''
def login(user, password):
    """Check the password against the stored hash."""
    return check_hash(user, password)
'''


@pytest.fixture()
def ws(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    workspace = Workspace(load_settings())
    yield workspace
    workspace.close()


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def run(ws: Workspace, recipe: str, goal: str, **params: Any) -> str:
    process = create_process(ws, ProcessSpec(recipe=recipe, name="p", goal=goal, params=params))
    run_turn(ws, process.id)
    return process.id


def calls_of(ws: Workspace, pid: str) -> list[Any]:
    return [m for m in transcript(ws, pid) if m.role == "tool"]


def notes_of(ws: Workspace, pid: str) -> list[str]:
    return [m.content for m in transcript(ws, pid) if m.role == "note"]


def test_code_read_reads_the_file_and_the_second_request_carries_it(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    build_file_tree(Path.cwd(), {"src/app.py": APP})
    llm_server.reply(None, tool_calls=[("read_file", {"path": "src/app.py"})])
    llm_server.reply("It defines login(), which checks the password hash.")
    pid = run(ws, "code-read", "explain what src/app.py does")

    first, second = (r.json for r in llm_server.chat_requests)
    assert [t["function"]["name"] for t in first["tools"]] == [
        "read_file", "list_files", "search_files"]
    assert first["stream"] is True
    [result] = tool_messages(second)
    assert "def login(user, password):" in result["content"]
    assert result["tool_call_id"] == "call_0_read_file"
    call = second["messages"][-2]
    assert call["role"] == "assistant"
    assert call["tool_calls"][0]["function"] == {"name": "read_file",
                                                 "arguments": '{"path": "src/app.py"}'}
    process = load_process(ws, pid)
    assert process.result == "It defines login(), which checks the password hash."
    [stored] = calls_of(ws, pid)
    assert stored.kind == "tool_call" and "def login" in stored.content
    assert stored.meta["tool"] == "read_file"
    assert stored.meta["arguments"] == {"path": "src/app.py"}
    assert stored.meta["allowed"] is True and stored.meta["ok"] is True
    assert stored.meta["decision"] == "allow" and stored.meta["ms"] >= 0
    assert "the model answered after 1 tool call(s)" in notes_of(ws, pid)


@pytest.mark.parametrize("path", ["../../etc/passwd", "~/.ssh/id_rsa", "link/passwd"])
def test_a_read_outside_the_project_is_refused_and_the_model_is_told_why(
        ws: Workspace, llm_server: ScriptedLLMServer, path: str) -> None:
    (Path.cwd() / "link").symlink_to("/etc")
    llm_server.reply(None, tool_calls=[("read_file", {"path": path})])
    llm_server.reply("I cannot read that file.")
    pid = run(ws, "code-read", f"explain {path}")

    [result] = tool_messages(llm_server.chat_requests[1].json)
    assert "root:" not in result["content"]
    assert "refused" in result["content"] or "outside" in result["content"]
    [stored] = calls_of(ws, pid)
    assert stored.meta["ok"] is False and stored.content == result["content"]


def test_a_loop_that_never_answers_ends_at_max_iterations_with_a_note(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    build_file_tree(Path.cwd(), {"a.txt": "alpha"})
    for _ in range(3):
        llm_server.reply(None, tool_calls=[("read_file", {"path": "a.txt"})])
    llm_server.reply("What I found: alpha.")
    pid = run(ws, "code-read", "read a.txt forever", maxIterations=3)

    requests = [r.json for r in llm_server.chat_requests]
    assert len(requests) == 4
    assert all("tools" in r for r in requests[:3]) and "tools" not in requests[3]
    assert "maxIterations" in requests[3]["messages"][-1]["content"]
    assert len(calls_of(ws, pid)) == 3
    assert load_process(ws, pid).result == "What I found: alpha."
    [note] = [n for n in notes_of(ws, pid) if "iterations" in n]
    assert "maxIterations 3" in note


def test_a_write_in_a_background_turn_is_refused_and_noted(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(None, tool_calls=[("write_file", {"path": "out.txt", "content": "hi"})])
    llm_server.reply("I could not write the file.")
    pid = run(ws, "coding", "write hi into out.txt")

    assert not (Path.cwd() / "out.txt").exists()
    [result] = tool_messages(llm_server.chat_requests[1].json)
    assert result["content"].startswith("refused: write_file needs the user's approval")
    [stored] = calls_of(ws, pid)
    assert stored.meta["allowed"] is False and stored.meta["decision"] == "refused"
    assert any("write_file was refused" in n for n in notes_of(ws, pid))


def test_an_unknown_tool_and_bad_arguments_are_results_not_failures(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    build_file_tree(Path.cwd(), {"a.txt": "alpha"})
    llm_server.reply(None, tool_calls=[("rm_rf", {}), ("read_file", "{not json")])
    llm_server.reply("done")
    pid = run(ws, "code-read", "read")

    first, second = tool_messages(llm_server.chat_requests[1].json)
    assert "no tool named 'rm_rf'" in first["content"] and "read_file" in first["content"]
    assert "not a JSON object" in second["content"]
    assert load_process(ws, pid).status.value == "IDLE"


def test_a_server_without_tool_calling_gets_json_actions(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    build_file_tree(Path.cwd(), {"src/app.py": APP})
    llm_server.fail(400, "tools are not supported by this model")
    llm_server.reply(json.dumps({"action": "tool", "tool": "read_file",
                                 "arguments": {"path": "src/app.py"}}))
    llm_server.reply(json.dumps({"action": "answer", "text": "login() checks a hash."}))
    pid = run(ws, "code-read", "explain what src/app.py does")

    refused, first, second = (r.json for r in llm_server.chat_requests)
    assert "tools" in refused and "tools" not in first
    assert '"action": "tool"' in first["messages"][0]["content"]
    assert "def login" in second["messages"][-1]["content"]
    assert load_process(ws, pid).result == "login() checks a hash."
    assert any("JSON actions" in n for n in notes_of(ws, pid))


def test_an_orchestrators_tools_do_not_reach_its_workers(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    for phase in ("OUTLINE", "DRAFT", "REVIEW", "FINAL"):
        llm_server.reply(phase)
    essay = create_process(ws, ProcessSpec(
        recipe="essay-pipeline", name="tea", goal="Write a short essay about tea",
        params={"allowedToolsAdd": ["read_file", "write_file"], "toolsAllow": ["write_file"]}))
    assert drive(ws, essay.id).reply == "FINAL"

    workers = [p for p in list_processes(ws) if p.parent_process_id == essay.id]
    assert len(workers) == 4
    for worker in workers:
        assert not set(worker.params) & {"allowedTools", "allowedToolsAdd", "toolsAllow"}
    assert all("tools" not in r.json for r in llm_server.chat_requests)


def test_python_computes_two_to_the_hundred_for_real(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(None, tool_calls=[("run_python", {"code": "print(2**100)"})])
    llm_server.reply("2**100 = 1267650600228229401496703205376")
    pid = run(ws, "python", "what is 2**100 exactly")

    first, second = (r.json for r in llm_server.chat_requests)
    assert [t["function"]["name"] for t in first["tools"]] == ["run_python"]
    [result] = tool_messages(second)
    assert "1267650600228229401496703205376" in result["content"]
    assert "1267650600228229401496703205376" in (load_process(ws, pid).result or "")
    [stored] = calls_of(ws, pid)
    assert stored.meta["tool"] == "run_python" and stored.meta["ok"] is True


def test_arthur_reads_a_file_before_its_action(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    build_file_tree(Path.cwd(), {"notes.txt": "the launch moved to May"})
    llm_server.reply(None, tool_calls=[("read_file", {"path": "notes.txt"})])
    llm_server.reply(json.dumps({"action": "answer", "message": "The launch moved to May.",
                                 "task": "", "options": []}))
    pid = run(ws, "discuss", "when is the launch? see notes.txt",
              allowedToolsAdd=["read_file"])

    first, second = (r.json for r in llm_server.chat_requests)
    assert [t["function"]["name"] for t in first["tools"]] == ["read_file"]
    assert "response_format" in first
    [result] = tool_messages(second)
    assert result["content"].endswith("the launch moved to May") or \
        "the launch moved to May" in result["content"]
    assert load_process(ws, pid).result == "The launch moved to May."
    [stored] = calls_of(ws, pid)
    assert stored.meta["tool"] == "read_file"


@pytest.mark.parametrize(("answer", "written"), [("yes", True), ("no", False)])
def test_a_checkpoint_parks_the_call_until_a_steer_answers_it(
        ws: Workspace, llm_server: ScriptedLLMServer, answer: str, written: bool) -> None:
    llm_server.reply(None, tool_calls=[("write_file", {"path": "out.txt", "content": "hi\n"})])
    pid = run(ws, "coding", "write hi into out.txt", toolApproval="checkpoint")

    process = load_process(ws, pid)
    assert process.status.value == "BLOCKED"
    assert "write_file" in (process.result or "") and f"steer {pid} yes" in (process.result or "")
    assert not (Path.cwd() / "out.txt").exists()
    assert calls_of(ws, pid)[-1].meta["decision"] == "checkpoint"

    llm_server.reply("Written." if written else "Not written.")
    submit(ws, pid, answer)
    run_turn(ws, pid)
    assert (Path.cwd() / "out.txt").exists() is written
    process = load_process(ws, pid)
    assert process.status.value == "IDLE"
    assert process.result == ("Written." if written else "Not written.")
    last = llm_server.chat_requests[-1].json
    [result] = tool_messages(last)
    assert result["tool_call_id"] == "call_0_write_file"
    assert ("declined" in result["content"]) is not written
    assert calls_of(ws, pid)[-1].meta["decision"] == f"checkpoint:{answer}"


def test_a_child_spawned_with_tool_params_gets_only_its_recipes_and_narrowing(
        ws: Workspace) -> None:
    parent = create_process(ws, ProcessSpec(recipe="essay-pipeline", name="parent"))
    turn = Turn(ws, parent, 1, [], NullSink(), Budget(10, 10_000, 60.0))
    child = turn.spawn("code-read", "read", "w", params={
        "allowedTools": ["run_command"], "allowedToolsAdd": ["write_file"],
        "toolsAllow": ["write_file"], "allowedToolsRemove": ["search_files"]})
    assert child.params["allowedTools"] == ["read_file", "list_files", "search_files"]
    assert "allowedToolsAdd" not in child.params and "toolsAllow" not in child.params
    assert child.params["allowedToolsRemove"] == ["search_files"]


class Lines:
    """A sink that keeps the status lines (what a terminal and the shell show)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def text(self, piece: str) -> None:
        pass

    def status(self, line: str) -> None:
        self.lines.append(line)


def test_each_call_is_one_live_line_for_the_listener_and_for_follow(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    build_file_tree(Path.cwd(), {"a.txt": "alpha", "b.txt": "beta"})
    llm_server.reply(None, tool_calls=[("read_file", {"path": "a.txt"}),
                                       ("read_file", {"path": "b.txt"})])
    llm_server.reply("alpha and beta")
    process = create_process(ws, ProcessSpec(recipe="code-read", name="p", goal="read both"))
    sink = Lines()
    run_turn(ws, process.id, sink=sink)

    assert len(sink.lines) == 2
    assert sink.lines[0].startswith('tool read_file {"path": "a.txt"} → ok, ')
    assert sink.lines[1].startswith('tool read_file {"path": "b.txt"} → ok, ')
    followed = stream_path(ws, process.id).read_text(encoding="utf-8")
    assert followed.count("» tool read_file") == 2


def test_a_model_that_writes_its_call_as_text_gets_json_actions(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply('```json\n{"name": "run_python", "arguments": {"code": "2**100"}}\n```')
    llm_server.reply(json.dumps({"action": "tool", "tool": "run_python",
                                 "arguments": {"code": "print(2**100)"}}))
    llm_server.reply(json.dumps({"action": "answer", "text": "1267650600228229401496703205376"}))
    pid = run(ws, "python", "what is 2**100 exactly")

    native, first, second = (r.json for r in llm_server.chat_requests)
    assert "tools" in native and "tools" not in first
    assert first["response_format"]["type"] in ("json_schema", "json_object")
    assert "1267650600228229401496703205376" in second["messages"][-1]["content"]
    assert load_process(ws, pid).result == "1267650600228229401496703205376"


def test_tools_calling_json_asks_for_json_actions_from_the_start(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("VANCE_TOOLS_CALLING", "json")
    workspace = Workspace(load_settings())
    try:
        llm_server.reply(json.dumps({"action": "answer", "text": "no tool needed"}))
        pid = run(workspace, "python", "say hi")
        [request] = (r.json for r in llm_server.chat_requests)
        assert "tools" not in request and "response_format" in request
        assert load_process(workspace, pid).result == "no tool needed"
    finally:
        workspace.close()
