"""``vance mcp`` as a real subprocess, driven by the SDK's own client (stdio, HTTP) or by hand."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from helpers import build_file_tree, run_cli
from llm_server import ScriptedLLMServer
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

T = TypeVar("T")

TOOL_NAMES = ["process_create_delegate", "process_create", "process_status", "process_result",
              "process_steer", "process_list", "recipe_list", "wizard_list", "wizard_show",
              "wizard_render", "wizard_check"]


def _env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment: the test's (its VANCE_HOME), plus ``extra``."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            **(extra or {})}


def stdio_session(body: Callable[[Client], Awaitable[T]], errlog: io.TextIOBase,
                  env: Mapping[str, str] | None = None, flags: Sequence[str] = ()) -> T:
    """Start ``vance [FLAGS] mcp`` over stdio, run ``body`` with the SDK's client, stop it."""
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "vance_cli", *flags, "mcp"],
                                   env=_env(env), cwd=os.getcwd())

    async def main() -> T:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            return await body(client)

    return anyio.run(main)


def document(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


def test_stdio_tools_delegate_none_and_errors(tmp_path: Path) -> None:
    async def body(client: Client) -> dict[str, Any]:
        seen: dict[str, Any] = {"tools": (await client.list_tools()).tools}
        seen["match"] = await client.call_tool("process_create_delegate", {
            "task": "Write a short essay about the history of tea"})
        seen["empty"] = await client.call_tool("process_create_delegate", {"task": ""})
        seen["invalid"] = await client.call_tool("wizard_render", {"name": "gremium", "values": {
            "councilName": "Tea council", "purpose": "Judge teas",
            "members": [{"name": "Ada", "persona": "a chemist"}, {"persona": "a farmer"}]}})
        try:
            await client.call_tool("no_such_tool", {})
        except MCPError as exc:
            seen["unknown"] = exc
        seen["after"] = await client.call_tool("process_list", {})
        return seen

    with open(tmp_path / "stderr.txt", "w+", encoding="utf-8") as errlog:
        seen = stdio_session(body, errlog, flags=["--session", "agent"])
        errlog.seek(0)
        stderr = errlog.read()

    tools = {tool.name: tool for tool in seen["tools"]}
    assert list(tools) == TOOL_NAMES
    delegate = tools["process_create_delegate"]
    assert list(delegate.input_schema["properties"]) == [
        "task", "name", "title", "steerContent", "params", "fallbackOnNone", "asyncFallback",
        "wait"]
    assert "process_create" in (delegate.description or "") and "NONE" in (
        delegate.description or "")
    assert all(tool.input_schema["type"] == "object" for tool in tools.values())

    match = document(seen["match"])
    assert (match["decision"], match["recipe"]) == ("MATCH", "essay-pipeline")
    assert match["process"]["status"] == "IDLE"

    empty = document(seen["empty"])
    assert (empty["decision"], empty["reason"], empty["process"]) == ("NONE", "empty_task", None)

    invalid = seen["invalid"]
    assert invalid.is_error and invalid.content[0].text == \
        "invalid values: members[1].name: required"

    assert "unknown tool 'no_such_tool'" in str(seen["unknown"])
    assert [p["id"] for p in document(seen["after"])] == [match["process"]["id"]]
    assert stderr.startswith("vance mcp: 11 tools over stdio (tenant default, project default")
    # the scope is the server's start: its session, not the default one
    assert match["process"]["session"] == "agent" and "session agent)" in stderr
    assert run_cli(["process", "list", "--json"]).json() == []
    assert len(run_cli(["--session", "agent", "process", "list", "--json"]).json()) == 1


def test_stdio_wait_returns_the_delegate_s_answer(llm_server: ScriptedLLMServer,
                                                  tmp_path: Path, vance_home: Path) -> None:
    llm_server.reply("Good morning")

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("process_create_delegate", {
            "task": "Translate this: Guten Morgen", "wait": True})

    with open(tmp_path / "stderr.txt", "w", encoding="utf-8") as errlog:
        result = stdio_session(body, errlog, env=llm_server.env(api_key="sk-test"))
    data = document(result)
    assert (data["decision"], data["recipe"]) == ("MATCH", "translate")
    assert (data["process"]["status"], data["process"]["result"]) == ("IDLE", "Good morning")
    assert len(result.content) == 1  # no note: the answer is in process.result
    # the turn ran in a background worker (its log), not inside the server
    assert (vance_home / "state" / "logs" / f"process-{data['process']['id']}.log").exists()
    [chat] = llm_server.chat_requests
    assert chat.json["messages"][-1]["content"] == "Translate this: Guten Morgen"


def _rpc(proc: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any] | None:
    """Send one JSON-RPC message; for a request, read lines until its response."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    if "id" not in message:
        return None
    while True:
        line = proc.stdout.readline()
        assert line, "the server closed stdout"
        data = json.loads(line)  # every stdout line is a protocol message
        assert data["jsonrpc"] == "2.0"
        if data.get("id") == message["id"]:
            return data  # type: ignore[no-any-return]


def test_stdout_carries_protocol_messages_only(project_dir: Path) -> None:
    build_file_tree(project_dir, {"recipes/broken.yaml": "engine: [unclosed\n"})
    proc = subprocess.Popen([sys.executable, "-m", "vance_cli", "mcp"], env=_env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        init = _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}})
        assert init is not None and init["result"]["serverInfo"]["name"] == "vance"
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        called = _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "process_create_delegate",
            "arguments": {"task": "Translate this: Guten Morgen"}}})
        assert called is not None and called["result"]["isError"] is False
        assert called["result"]["structuredContent"]["decision"] == "MATCH"
        failed = _rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "process_status", "arguments": {"processId": "zzzz"}}})
        assert failed is not None and failed["result"]["isError"] is True
        assert failed["result"]["content"][0]["text"] == (
            "no process with id or name 'zzzz' in session 'default'")
        rest, stderr = proc.communicate(timeout=60)  # closes stdin: the client leaves
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert rest == "" and proc.returncode == 0
    assert "recipe 'broken' left out" in stderr


def test_http_serves_on_localhost_only() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "vance_cli", "mcp", "--http", "--port", "0"],
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("vance mcp: 11 tools at http://127.0.0.1:"), line
        url = line.split(" at ", 1)[1].split()[0]

        async def main() -> tuple[list[str], Any]:
            async with Client(url) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                return names, document(await client.call_tool("recipe_list", {}))

        names, recipes = anyio.run(main)
        assert names == TOOL_NAMES and "essay-pipeline" in [r["name"] for r in recipes]
    finally:
        proc.terminate()
        stdout, _ = proc.communicate(timeout=60)
    assert stdout == ""


TOKEN = "team-token-0123456789abcdef"
"""The bearer token the team server is started with (``VANCE_MCP_TOKEN``)."""


class HttpServer:
    """A ``vance mcp --http`` subprocess on a free port; its URL from its first stderr line."""

    def __init__(self, *flags: str, env: Mapping[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vance_cli", "mcp", "--http", "--port", "0", *flags],
            env=_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stderr is not None
        self.first_line = self.proc.stderr.readline()
        assert " tools at http://" in self.first_line, self.first_line
        bound = self.first_line.split(" at ", 1)[1].split()[0]
        port = bound.rsplit(":", 1)[1].split("/")[0]
        self.url = f"http://127.0.0.1:{port}/mcp"  # also for 0.0.0.0: reached over loopback

    def stop(self) -> str:
        """Stop the server; return what it wrote on stdout (nothing, ever)."""
        self.proc.terminate()
        stdout, _ = self.proc.communicate(timeout=60)
        return stdout


async def _names(url: str, token: str | None) -> list[str]:
    """List the tools with the SDK's client, sending ``Authorization: Bearer TOKEN`` if given."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else None
    async with create_mcp_http_client(headers=headers) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        return [t.name for t in (await client.list_tools()).tools]


async def _refused(url: str, token: str | None) -> str:
    """Return the SDK client's error for a connection the server refuses."""
    try:
        await _names(url, token)
    except Exception as exc:  # the SDK's client: an MCPError, inside an ExceptionGroup or not
        return repr(exc)
    raise AssertionError(f"the server answered a request with token {token!r}")


async def _status(url: str, headers: Mapping[str, str]) -> tuple[int, str, str]:
    """POST an initialize by hand: its HTTP status, WWW-Authenticate header and body."""
    async with create_mcp_http_client(headers=dict(headers)) as http:
        answer = await http.post(url, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}},
            headers={"Accept": "application/json, text/event-stream"})
        return (answer.status_code, answer.headers.get("www-authenticate", ""),
                answer.text if answer.status_code != 200 else "")


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_http_with_a_token_answers_only_requests_that_carry_it(host: str) -> None:
    server = HttpServer("--host", host, env={"VANCE_MCP_TOKEN": TOKEN})
    try:
        assert server.first_line.startswith(f"vance mcp: 11 tools at http://{host}:")
        assert server.first_line.rstrip().endswith("; bearer token required")

        async def main() -> dict[str, Any]:
            return {
                "names": await _names(server.url, TOKEN),
                "none": await _refused(server.url, None),
                "wrong": await _refused(server.url, TOKEN[:-1] + "X"),
                "prefix": await _refused(server.url, TOKEN[:-1]),
                "raw none": await _status(server.url, {}),
                "raw wrong": await _status(server.url, {"Authorization": "Bearer nope"}),
                "raw basic": await _status(server.url, {"Authorization": f"Basic {TOKEN}"}),
                "raw right": await _status(server.url, {"Authorization": f"Bearer {TOKEN}"}),
            }

        seen = anyio.run(main)
    finally:
        stdout = server.stop()
    assert seen["names"] == TOOL_NAMES
    for key in ("none", "wrong", "prefix"):
        assert "Server returned an error response" in seen[key], seen[key]
    for key in ("raw none", "raw wrong", "raw basic"):
        status, challenge, body = seen[key]
        assert status == 401 and challenge.startswith("Bearer "), seen[key]
        assert json.loads(body)["error"] == "invalid_token" and TOKEN not in body
    assert seen["raw right"][0] == 200
    assert stdout == ""


def test_http_on_loopback_without_a_token_stays_open() -> None:
    server = HttpServer()
    try:
        assert not server.first_line.rstrip().endswith("bearer token required")
        names = anyio.run(_names, server.url, None)
        status = anyio.run(_status, server.url, {"Authorization": "Bearer anything-at-all"})
    finally:
        server.stop()
    assert names == TOOL_NAMES and status[0] == 200


def _children(pid: int) -> dict[int, str]:
    """The children of ``pid`` and their states (``/proc/<child>/stat``: R, S, Z …)."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
        if int(ppid) == pid:
            found[int(entry.name)] = state
    return found


def _server_pid() -> int:
    """The pid of the ``vance mcp`` this test started (a child of the test process)."""
    for child in _children(os.getpid()):
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        if b"vance_cli" in cmdline and b"mcp" in cmdline:
            return child
    raise AssertionError("no vance mcp child found")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_server_reaps_the_workers_it_started(llm_server: ScriptedLLMServer,
                                                 tmp_path: Path) -> None:
    llm_server.reply("Good morning")
    llm_server.reply("Good evening")

    async def body(client: Client) -> tuple[list[Any], dict[int, str]]:
        server = _server_pid()
        answers = [document(await client.call_tool("process_create_delegate", {
            "task": f"Translate this: {text}", "wait": True}))
            for text in ("Guten Morgen", "Guten Abend")]
        children = _children(server)
        for _ in range(200):  # a worker settles its process, then exits and is reaped
            if not children:
                break
            await anyio.sleep(0.1)
            children = _children(server)
        return answers, children

    with open(tmp_path / "stderr.txt", "w", encoding="utf-8") as errlog:
        answers, children = stdio_session(body, errlog, env=llm_server.env(api_key="sk-test"))
    assert [a["process"]["result"] for a in answers] == ["Good morning", "Good evening"]
    assert children == {}, "workers left as zombies (state Z) of the server"
