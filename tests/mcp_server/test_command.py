"""The ``vance mcp`` command itself: its options, a taken port, the SDK as an optional extra."""

from __future__ import annotations

import socket
import sys

import pytest
from helpers import run_cli

from vance_cli.mcp.server import is_loopback


def test_a_taken_port_is_one_error_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli(["mcp", "--http", "--port", str(port)])
    assert result.exit_code == 1 and result.stdout == ""
    assert f"vance: error: cannot listen on 127.0.0.1:{port}: " in result.stderr
    assert "choose another port with --port" in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--http", "--port", "-1"], "must be 0 to 65535"),
    (["--http", "--port", "65536"], "must be 0 to 65535"),
    (["--port", "8000"], "needs --http"),
    (["--host", "0.0.0.0"], "needs --http"),
    (["--http", "--host", " "], "must not be empty"),
])
def test_bad_port_options_are_usage_errors(args: list[str], message: str) -> None:
    result = run_cli(["mcp", *args])
    assert result.exit_code == 2 and message in result.stderr and result.stdout == ""


def test_without_the_sdk_the_command_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "vance_cli.mcp.server", raising=False)
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the extra were not installed
    result = run_cli(["mcp"])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == ("vance: error: vance mcp needs the MCP SDK (mcp is not installed):"
                             " pip install 'vance[mcp]'\n")


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "[::]"])
def test_listening_beyond_loopback_without_a_token_is_refused(host: str) -> None:
    result = run_cli(["mcp", "--http", "--host", host, "--port", "0"])
    assert result.exit_code == 2 and result.stdout == ""
    shown = host.strip("[]")
    assert result.stderr.startswith(f"vance: error: vance mcp --http on {shown} (not loopback)"
                                    " needs a bearer token: set mcp.token")
    assert "VANCE_MCP_TOKEN" in result.stderr


@pytest.mark.parametrize(("token", "message"), [
    ("short-token", "expected 16 to 4096 characters, not 11"),
    ("with a space 0123456789", "visible ASCII characters only"),
    ("zwölf-zeichen-lang-0123", "visible ASCII characters only"),
])
def test_a_weak_or_malformed_token_is_a_bad_setting(token: str, message: str) -> None:
    result = run_cli(["mcp", "--http", "--host", "0.0.0.0"], env={"VANCE_MCP_TOKEN": token})
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("vance: error: mcp.token (env:VANCE_MCP_TOKEN): ")
    assert message in result.stderr and token not in result.stderr


def test_config_show_masks_the_token() -> None:
    token = "s3cret-team-token-0123456789"
    assert run_cli(["config", "set", "mcp.token", token]).exit_code == 0
    shown = run_cli(["config", "show", "--json"]).json()
    assert shown["mcp.token"] == {"value": "****6789", "origin": "file"}
    human = run_cli(["config", "show"])
    assert "mcp.token" in human.stdout and "s3cret" not in human.stdout + human.stderr


@pytest.mark.parametrize(("address", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("::ffff:127.0.0.1", True),
    ("0.0.0.0", False), ("::", False), ("10.0.0.1", False), ("192.168.1.5", False),
    ("fe80::1%eth0", False), ("::ffff:10.0.0.1", False),
])
def test_which_addresses_count_as_loopback(address: str, loopback: bool) -> None:
    assert is_loopback(address) is loopback
