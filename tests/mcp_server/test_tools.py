"""The MCP tools in-process (the SDK's client on the server object): the CLI's documents and errors.

The stdio and HTTP transports are driven for real in ``test_transports.py``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from helpers import run_cli
from llm_server import ScriptedLLMServer
from mcp import Client
from mcp.types import CallToolResult

from vance_cli.base.config import load_settings
from vance_cli.mcp.server import build_server
from vance_cli.mcp.tools import BY_NAME

T = TypeVar("T")


def session(body: Callable[[Client], Awaitable[T]]) -> T:
    """Run ``body`` with a client connected to a fresh in-process server."""
    server = build_server(load_settings(), Path.cwd())

    async def main() -> T:
        async with Client(server) as client:
            return await body(client)

    return anyio.run(main)


def call(name: str, arguments: Mapping[str, Any] | None = None) -> CallToolResult:
    """Call one tool in a fresh session and return its result."""
    return session(lambda client: client.call_tool(name, dict(arguments or {})))


def document(result: CallToolResult) -> Any:
    """Return the JSON document of a successful tool result (its first text block)."""
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content]  # type: ignore[union-attr]


def _create_offline(name: str = "tea") -> str:
    created = run_cli(["process", "create", "--recipe", "coding", "--name", name, "--json"])
    assert created.exit_code == 0, created.stderr
    return str(created.json()["id"])


def test_reads_answer_the_documents_of_their_json_commands() -> None:
    pid = _create_offline()
    cases: list[tuple[str, dict[str, Any], list[str]]] = [
        ("process_status", {"processId": pid}, ["process", "show", pid]),
        ("process_status", {"processId": pid[:6]}, ["process", "show", pid[:6]]),
        ("process_result", {"processId": pid}, ["process", "result", pid]),
        ("process_list", {}, ["process", "list"]),
        ("process_list", {"allSessions": True, "limit": 1}, ["process", "list", "-a", "-n", "1"]),
        ("recipe_list", {}, ["recipe", "list"]),
        ("recipe_list", {"includeHidden": True}, ["recipe", "list", "--all"]),
        ("wizard_list", {}, ["wizard", "list"]),
        ("wizard_show", {"name": "gremium"}, ["wizard", "show", "gremium"]),
        ("wizard_render", {"name": "essay-recipe", "values": {"recipeName": "plain-essay"}},
         ["wizard", "render", "essay-recipe", "--set", "recipeName=plain-essay"]),
    ]
    for tool, arguments, command in cases:
        expected = run_cli([*command, "--json"]).json()
        result = call(tool, arguments)
        assert document(result) == expected, tool
        if isinstance(expected, dict):
            assert result.structured_content == expected


def test_errors_are_the_cli_s_line_and_json_document() -> None:
    cases: list[tuple[str, dict[str, Any], list[str], str | None]] = [
        ("process_status", {"processId": "zzzz"}, ["process", "show", "zzzz"], None),
        ("wizard_show", {"name": "gremiun"}, ["wizard", "show", "gremiun"], None),
        ("wizard_render", {"name": "gremium", "values": {"councilName": "C"}},
         ["wizard", "render", "gremium", "--values", "-"], json.dumps({"councilName": "C"})),
    ]
    for tool, arguments, command, stdin in cases:
        cli = run_cli([*command, "--json"], input=stdin)
        assert cli.exit_code == 2
        result = call(tool, arguments)
        assert result.is_error
        assert texts(result) == [cli.stderr.strip().removeprefix("vance: error: ")]
        assert result.structured_content == cli.json()


def test_render_errors_name_every_field_of_a_repeat_entry() -> None:
    values = {"councilName": "C", "purpose": "P",
              "members": [{"name": "Ada", "persona": "a mathematician"}, {"persona": "x"}]}
    result = call("wizard_render", {"name": "gremium", "values": values})
    assert result.is_error
    assert texts(result) == ["invalid values: members[1].name: required"]
    assert result.structured_content == {"errors": [{"field": "members[1].name",
                                                     "error": "required"}]}


def test_render_notes_keys_that_are_no_field() -> None:
    result = call("wizard_render", {"name": "essay-recipe",
                                    "values": {"recipeName": "x", "colour": "blue"}})
    assert document(result)["prompt"]
    assert texts(result)[1] == "Ignored: 'colour' is no field of wizard 'essay-recipe'."


def test_delegate_offline_matches_starts_a_waiting_process_and_says_so() -> None:
    result = call("process_create_delegate", {"task": "Translate this: Guten Morgen",
                                              "name": "greeting", "params": {"x": 1}})
    data = document(result)
    cli = run_cli(["delegate", "--task", "Translate this: Hallo", "--dry-run", "--json"]).json()
    assert set(data) == set(cli)
    assert (data["decision"], data["recipe"], data["reason"]) == ("MATCH", "translate", None)
    process = data["process"]
    assert (process["name"], process["status"], process["params"]["x"]) == ("greeting", "IDLE", 1)
    assert "No LLM is configured" in texts(result)[1] and process["id"] in texts(result)[1]
    listed = run_cli(["process", "list", "--json"]).json()
    assert [p["id"] for p in listed] == [process["id"]]


def test_an_empty_task_is_none_not_an_error() -> None:
    result = call("process_create_delegate", {"task": "   "})
    data = document(result)
    assert (data["decision"], data["reason"], data["process"]) == ("NONE", "empty_task", None)
    assert len(result.content) == 1


def test_create_and_a_taken_name() -> None:
    first = call("process_create", {"recipe": "coding", "name": "tea",
                                    "steerContent": "Write a haiku", "parentProcessId": None})
    process = document(first)
    assert (process["recipe"], process["steerContent"], process["status"]) == \
        ("coding", "Write a haiku", "IDLE")
    again = call("process_create", {"recipe": "coding", "name": "tea"})
    cli = run_cli(["process", "create", "--recipe", "coding", "--name", "tea"])
    assert again.is_error and texts(again) == [cli.stderr.strip().removeprefix("vance: error: ")]


def test_option_checks_are_tool_errors() -> None:
    both = call("process_create_delegate", {"task": "x", "fallbackOnNone": False,
                                            "asyncFallback": True})
    assert both.is_error and "exclude each other" in texts(both)[0]
    negative = call("process_result", {"processId": "abcd", "waitSeconds": -1})
    assert negative.is_error and texts(negative) == [
        "waitSeconds must be 0 or more seconds (a finite number), not -1"]
    unknown = call("recipe_list", {"all": True})
    assert unknown.is_error and texts(unknown) == [
        "invalid arguments: all: Extra inputs are not permitted"]


def test_an_unforeseen_failure_is_a_tool_error_and_the_server_goes_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setitem(BY_NAME, "recipe_list", replace(BY_NAME["recipe_list"], handler=boom))

    async def body(client: Client) -> tuple[CallToolResult, CallToolResult]:
        return await client.call_tool("recipe_list", {}), await client.call_tool(
            "wizard_show", {"name": "gremium"})

    failed, after = session(body)
    assert failed.is_error and texts(failed) == ["RuntimeError: boom"]
    assert failed.structured_content == {"error": "unexpected_error",
                                         "message": "RuntimeError: boom"}
    assert document(after)["name"] == "gremium"


def test_wait_returns_the_answer_and_steer_continues(llm_server: ScriptedLLMServer,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in llm_server.env(api_key="sk-test").items():
        monkeypatch.setenv(key, value)
    llm_server.reply("Good morning")
    llm_server.reply("Bonjour")

    async def body(client: Client) -> tuple[CallToolResult, CallToolResult, CallToolResult]:
        created = await client.call_tool("process_create", {
            "recipe": "translate", "name": "greeting", "steerContent": "Guten Morgen",
            "wait": True})
        pid = json.loads(created.content[0].text)["id"]  # type: ignore[union-attr]
        steered = await client.call_tool("process_steer", {
            "processId": pid, "message": "And in French?", "wait": True})
        return created, steered, await client.call_tool("process_result", {"processId": pid})

    created, steered, result = session(body)
    assert document(created)["result"] == "Good morning" and len(created.content) == 1
    data = document(steered)
    assert data["message"]["text"] == "And in French?"
    assert (data["process"]["status"], data["process"]["result"]) == ("IDLE", "Bonjour")
    assert document(result)["result"] == "Bonjour"
    history = llm_server.chat_requests[1].json["messages"]
    assert [m["content"] for m in history if m["role"] != "system"][-2:] == \
        ["Good morning", "And in French?"]


def test_without_wait_the_turn_runs_in_the_background_and_result_picks_it_up(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in llm_server.env(api_key="sk-test").items():
        monkeypatch.setenv(key, value)
    gate = threading.Event()
    llm_server.reply("Good morning")
    llm_server.reply("Bonjour", gate=gate)

    async def body(client: Client) -> list[CallToolResult]:
        created = await client.call_tool("process_create", {
            "recipe": "translate", "name": "greeting", "steerContent": "Guten Morgen"})
        pid = json.loads(created.content[0].text)["id"]  # type: ignore[union-attr]
        first = await client.call_tool("process_result", {"processId": pid, "waitSeconds": 60})
        steered = await client.call_tool("process_steer", {"processId": pid,
                                                           "message": "And in French?"})
        meanwhile = await client.call_tool("process_result", {"processId": pid})
        gate.set()
        final = await client.call_tool("process_result", {"processId": pid, "waitSeconds": 60})
        return [created, first, steered, meanwhile, final]

    created, first, steered, meanwhile, final = session(body)
    assert document(created)["status"] == "RUNNING"
    assert "runs in the background" in texts(created)[1]
    assert "process_result" in texts(created)[1]
    assert document(first)["result"] == "Good morning" and len(first.content) == 1
    assert document(steered)["process"]["status"] == "RUNNING"
    running = document(meanwhile)
    assert (running["status"], running["result"]) == ("RUNNING", "Good morning")
    assert texts(meanwhile)[1].startswith("A turn is still running")
    assert (document(final)["status"], document(final)["result"]) == ("IDLE", "Bonjour")


def test_wizard_check_without_an_llm_is_the_cli_s_document_and_a_note() -> None:
    values = {"councilName": "C", "purpose": "P",
              "members": [{"name": "Ada", "persona": "a"}, {"name": "Bo", "persona": "b"}]}
    result = call("wizard_check", {"name": "gremium", "values": values})
    assert not result.is_error
    cli = run_cli(["wizard", "check", "gremium", "--values", "-", "--json"],
                  input=json.dumps(values))
    assert cli.exit_code == 0
    assert document(result) == cli.json() == {
        "suggestions": [], "notes": ["no LLM configured: the answers were not checked"
                                     " (set llm.base_url or llm.api_key)"]}
    assert "no LLM configured" in texts(result)[1]


def test_wizard_check_with_an_llm_gives_its_suggestions_and_drops_an_unknown_field(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    reply = json.dumps({"suggestions": [
        {"field": "members", "suggestion": "Give Bo a persona of their own."},
        {"field": "budget", "suggestion": "Name a budget."}]})
    values = {"councilName": "C", "purpose": "P",
              "members": [{"name": "Ada", "persona": "a"}, {"name": "Bo", "persona": "a"}]}
    llm_server.reply(reply, prompt_tokens=30, completion_tokens=9)
    result = call("wizard_check", {"name": "gremium", "values": values})
    llm_server.reply(reply)
    cli = run_cli(["wizard", "check", "gremium", "--values", "-", "--json"],
                  input=json.dumps(values))
    assert cli.exit_code == 0, cli.stderr
    assert document(result) == cli.json() == {
        "suggestions": [{"field": "members", "suggestion": "Give Bo a persona of their own."}],
        "notes": ["dropped a suggestion for 'budget': not a field of this wizard"]}
    assert "dropped a suggestion for 'budget'" in texts(result)[1]
    first, _ = llm_server.chat_requests
    assert "- Bo: a" in first.json["messages"][-1]["content"]
    shown = run_cli(["process", "list", "--json"])  # a check starts no process
    assert shown.exit_code == 0 and shown.json() == []


def test_the_docs_give_every_flag_its_real_default() -> None:
    import re

    from helpers import REPO

    from vance_cli.mcp.tools import TOOLS

    text = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    documented = dict(re.findall(r"^\| `(\w+)` \| `(true|false)` \|", text, re.MULTILINE))
    flags = {key: json.dumps(spec["default"]) for tool in TOOLS
             for key, spec in tool.input_schema["properties"].items()
             if spec.get("type") == "boolean"}
    assert documented == flags
    assert flags["fallbackOnNone"] == "true"
