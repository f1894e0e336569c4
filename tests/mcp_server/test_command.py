"""The ``vance mcp`` command itself: its options, a taken port, the SDK as an optional extra."""

from __future__ import annotations

import socket
import sys

import pytest
from helpers import run_cli


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
