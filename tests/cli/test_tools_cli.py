"""``vance tools``, ``--yes-tools`` and the tool calls in ``process messages`` (docs/tools.md).

The MCP server here is written with the SDK's own server class (``MCPServer``, FastMCP
before SDK 2), added with ``vance tools add``, and called by a ford turn.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from helpers import build_file_tree, run_cli, wait_until
from llm_server import ScriptedLLMServer
from terminal import Key, end, spawn_vance

SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("echo")


@server.tool()
def shout(text: str) -> str:
    """Return the text in capitals, with an exclamation mark."""
    return text.upper() + "!"


server.run()
'''


def test_an_mcp_servers_tool_is_called_and_its_result_reaches_the_next_request(
        llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    build_file_tree(tmp_path, {"srv.py": SERVER})
    added = run_cli(["tools", "add", "echo", "--", sys.executable, str(tmp_path / "srv.py")])
    assert added.exit_code == 0, added.stderr
    listed = run_cli(["tools", "list", "--json"])
    assert listed.exit_code == 0, listed.stderr
    names = {row["name"]: row for row in listed.json()}
    assert {"read_file", "run_python", "fetch_url", "echo.shout"} <= set(names)
    assert names["echo.shout"]["description"].startswith("Return the text in capitals")

    llm_server.reply(None, tool_calls=[("echo__shout", {"text": "hello"})])
    llm_server.reply("The server says HELLO!")
    created = run_cli(["process", "create", "--recipe", "default", "--goal", "shout hello",
                       "--param", 'allowedToolsAdd:=["echo.*"]', "--yes-tools", "echo.shout",
                       "--wait", "--json"], env=llm_server.env())
    assert created.exit_code == 0, created.stderr
    first, second = (r.json for r in llm_server.chat_requests)
    assert [t["function"]["name"] for t in first["tools"]] == ["echo__shout"]
    [result] = [m for m in second["messages"] if m["role"] == "tool"]
    assert result["content"] == "HELLO!"

    pid = created.json()["id"]
    shown = run_cli(["process", "messages", pid, "--json"])
    [call] = [m for m in shown.json() if m["role"] == "tool"]
    assert call["meta"]["tool"] == "echo.shout" and call["meta"]["decision"] == "yes-tools"
    table = run_cli(["process", "messages", pid])
    assert 'echo.shout {"text": "hello"} → ok' in table.stdout

    assert run_cli(["tools", "rm", "echo"]).exit_code == 0
    assert run_cli(["tools", "rm", "echo"]).exit_code == 1


def test_without_yes_tools_an_mcp_tool_asks_and_a_json_turn_refuses_it(
        llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    build_file_tree(tmp_path, {"srv.py": SERVER})
    assert run_cli(["tools", "add", "echo", "--", sys.executable,
                    str(tmp_path / "srv.py")]).exit_code == 0
    llm_server.reply(None, tool_calls=[("echo__shout", {"text": "hello"})])
    llm_server.reply("I was not allowed to.")
    created = run_cli(["process", "create", "--recipe", "default", "--goal", "shout hello",
                       "--param", 'allowedToolsAdd:=["echo.*"]', "--wait", "--json"],
                      env=llm_server.env())
    assert created.exit_code == 0, created.stderr
    [result] = [m for m in llm_server.chat_requests[1].json["messages"] if m["role"] == "tool"]
    assert result["content"].startswith("refused: echo.shout needs the user's approval")


def test_tools_add_checks_its_arguments() -> None:
    both = run_cli(["tools", "add", "x", "--url", "http://127.0.0.1:1/mcp", "--", "cmd"])
    assert both.exit_code != 0 and "not both" in both.stderr
    dotted = run_cli(["tools", "add", "a.b", "--", "cmd"])
    assert dotted.exit_code != 0 and "not a valid server name" in dotted.stderr
    url = run_cli(["tools", "add", "web", "--url", "http://127.0.0.1:1/mcp", "--json"])
    assert url.exit_code == 0 and url.json()["url"] == "http://127.0.0.1:1/mcp"
    shown = run_cli(["config", "show"])
    assert "unknown key" not in shown.stderr
    assert json.loads(run_cli(["tools", "rm", "web", "--json"]).stdout)["removed"] is True


def _pty_write(llm_server: ScriptedLLMServer, answer: str) -> tuple[int, str]:
    """Run a coding turn on a terminal that asks about a write_file; answer it."""
    llm_server.reply(None, tool_calls=[("write_file", {"path": "out.txt", "content": "hi\n"})])
    llm_server.reply("Done.")
    child = spawn_vance(["process", "create", "--recipe", "coding", "--goal",
                         "write hi into out.txt", "--wait"], env=llm_server.env())
    child.expect("The turn wants to call the tool write_file with:")
    child.expect('"path": "out.txt"')
    child.expect(r"\[y\]es / \[n\]o / \[a\]lways for this process:")
    child.send(answer + Key.ENTER)
    child.expect("Done.")
    return end(child), ""


def test_on_a_terminal_a_write_asks_and_no_leaves_the_file_untouched(
        llm_server: ScriptedLLMServer) -> None:
    (Path.cwd() / "out.txt").write_text("before\n", encoding="utf-8")
    status, _ = _pty_write(llm_server, "n")
    assert status == 0
    assert (Path.cwd() / "out.txt").read_text(encoding="utf-8") == "before\n"
    [result] = [m for m in llm_server.chat_requests[1].json["messages"] if m["role"] == "tool"]
    assert result["content"].startswith("refused: the user declined this write_file call")


def test_on_a_terminal_yes_lets_the_write_run(llm_server: ScriptedLLMServer) -> None:
    status, _ = _pty_write(llm_server, "y")
    assert status == 0
    assert (Path.cwd() / "out.txt").read_text(encoding="utf-8") == "hi\n"


def test_process_steer_yes_approves_a_call_parked_at_a_checkpoint(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(None, tool_calls=[("write_file", {"path": "out.txt", "content": "hi\n"})])
    created = run_cli(["process", "create", "--recipe", "coding", "--goal", "write hi",
                       "--param", "toolApproval=checkpoint", "--wait", "--json"],
                      env=llm_server.env())
    assert created.exit_code == 0, created.stderr
    process = created.json()
    assert process["status"] == "BLOCKED" and not (Path.cwd() / "out.txt").exists()

    llm_server.reply("Written.")
    steered = run_cli(["process", "steer", process["id"], "yes", "--wait", "--json"],
                      env=llm_server.env())
    assert steered.exit_code == 0, steered.stderr
    assert (Path.cwd() / "out.txt").read_text(encoding="utf-8") == "hi\n"
    assert run_cli(["process", "result", process["id"]]).stdout.strip() == "Written."


def test_yes_tools_of_a_steer_allows_the_tool_for_that_turn_only(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("Ready.")
    created = run_cli(["process", "create", "--recipe", "coding", "--goal", "get ready",
                       "--wait", "--json"], env=llm_server.env())
    pid = created.json()["id"]
    llm_server.reply(None, tool_calls=[("write_file", {"path": "a.txt", "content": "a"})])
    llm_server.reply("Wrote a.")
    run_cli(["process", "steer", pid, "write a", "--yes-tools", "write_file", "--wait",
             "--json"], env=llm_server.env())
    assert (Path.cwd() / "a.txt").read_text(encoding="utf-8") == "a"
    llm_server.reply(None, tool_calls=[("write_file", {"path": "b.txt", "content": "b"})])
    llm_server.reply("Could not write b.")
    run_cli(["process", "steer", pid, "write b", "--wait", "--json"], env=llm_server.env())
    assert not (Path.cwd() / "b.txt").exists()


HTTP_SERVER = '''
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("web", log_level="WARNING")


@server.tool()
def shout(text: str) -> str:
    """Return the text in capitals, with an exclamation mark."""
    return text.upper() + "!"


server.run("streamable-http", port=int(sys.argv[1]))
'''


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_streamable_http_server_is_a_tool_source_too(
        llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    build_file_tree(tmp_path, {"web.py": HTTP_SERVER})
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(tmp_path / "web.py"), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _accepts(port))
        url = f"http://127.0.0.1:{port}/mcp"
        assert run_cli(["tools", "add", "web", "--url", url]).exit_code == 0
        llm_server.reply(None, tool_calls=[("web__shout", {"text": "over http"})])
        llm_server.reply("Done.")
        created = run_cli(["process", "create", "--recipe", "default", "--goal", "shout",
                           "--param", 'allowedToolsAdd:=["web.shout"]', "--yes-tools", "web.*",
                           "--wait", "--json"], env=llm_server.env())
        assert created.exit_code == 0, created.stderr
        [result] = [m for m in llm_server.chat_requests[1].json["messages"]
                    if m["role"] == "tool"]
        assert result["content"] == "OVER HTTP!"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0
