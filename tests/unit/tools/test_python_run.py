"""run_python: exact results, no network, time and memory limits, the caller unharmed."""

from __future__ import annotations

import resource
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import vance_cli
from vance_cli.tools import sandbox
from vance_cli.tools.registry import builtin
from vance_cli.tools.tool import ToolContext, ToolLabel, ToolResult

SANDBOXES = ["bubblewrap", "unshare", "rlimits"]


@pytest.fixture(params=SANDBOXES)
def which(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each sandbox this machine has: bubblewrap, unshare, then resource limits alone."""
    name: str = request.param
    if name == "bubblewrap" and sandbox.bwrap_path() is None:
        pytest.skip("bwrap is not installed or cannot make a sandbox here (Debian: bubblewrap)")
    if name == "unshare":
        if sandbox.unshare_path() is None:
            pytest.skip("unshare cannot make a network namespace here")
        monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    if name == "rlimits":
        monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
        monkeypatch.setattr(sandbox, "unshare_path", lambda: None)
    return name


@pytest.fixture
def limited(context: ToolContext) -> ToolContext:
    return replace(context, options={"tools.python.timeout": 2, "tools.python.memory_mb": 512})


def run(context: ToolContext, code: str) -> ToolResult:
    return builtin("run_python").run({"code": code}, context)


def test_two_to_the_hundred_is_exact(which: str, limited: ToolContext) -> None:
    result = run(limited, "print(2**100)")
    assert result.ok, result.text
    assert result.text.strip() == "1267650600228229401496703205376"
    assert result.details["sandbox"].startswith(which if which != "rlimits" else "resource")


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that the test process can reach."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def test_a_socket_connect_fails_inside(which: str, limited: ToolContext, listener: int) -> None:
    if which == "rlimits":
        pytest.skip("resource limits alone leave the network open (the result says so)")
    socket.create_connection(("127.0.0.1", listener), timeout=2).close()  # reachable outside
    code = ("import socket\n"
            f"socket.create_connection(('127.0.0.1', {listener}), timeout=2)\n"
            "print('CONNECTED')\n")
    result = run(limited, code)
    assert not result.ok
    assert "CONNECTED" not in result.text
    assert "Error" in result.text


def test_while_true_is_stopped_at_the_time_limit(which: str, limited: ToolContext) -> None:
    result = run(limited, "while True:\n    pass\n")
    assert not result.ok
    assert result.details["stopped"] in ("wall time", "CPU time")
    assert "limit of 2 s" in result.text


def test_ten_gigabytes_are_stopped_at_the_memory_limit(which: str, limited: ToolContext) -> None:
    before = resource.getrlimit(resource.RLIMIT_AS)
    result = run(limited, "block = bytearray(10 * 2**30)\nprint(len(block))\n")
    assert not result.ok
    assert result.details["stopped"] == "memory"
    assert "memory limit of 512 MiB" in result.text
    # the calling process is unharmed: its own limits untouched, and it still runs code
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert run(limited, "print('still here')").text.strip() == "still here"


def test_output_is_capped(which: str, limited: ToolContext) -> None:
    result = run(limited, "import sys\nsys.stdout.write('x' * 100_000)\n")
    assert result.details["truncated"]
    assert "[output cut at" in result.text
    assert len(result.text) < 25_000


def test_the_environment_holds_no_secrets(which: str, limited: ToolContext,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    result = run(limited, "import os\nprint(os.environ.get('OPENAI_API_KEY'), os.getcwd())\n")
    assert "sk-secret" not in result.text
    assert "vance-python-" in result.text


def test_under_bubblewrap_the_floor_is_hidden_and_the_disk_read_only(
        limited: ToolContext) -> None:
    if sandbox.bwrap_path() is None:
        pytest.skip("bwrap is not installed or cannot make a sandbox here (Debian: bubblewrap)")
    (limited.home / ".ssh").mkdir()
    (limited.home / ".ssh/id_rsa").write_text("PRIVATE KEY")
    (limited.project / ".env").write_text("API_KEY=1")
    probe = Path(vance_cli.__file__).parent / "sandbox-write-probe.txt"
    code = (f"import os\nprint(os.path.exists({str(limited.home / '.ssh/id_rsa')!r}))\n"
            f"try:\n    print(open({str(limited.project / '.env')!r}).read())\n"
            "except OSError as exc:\n    print(type(exc).__name__)\n"
            f"open({str(probe)!r}, 'w')\n")
    try:
        result = run(limited, code)
    finally:
        written = probe.exists()
        probe.unlink(missing_ok=True)
    assert result.text.startswith("False\n")
    assert "API_KEY" not in result.text and "PRIVATE KEY" not in result.text
    assert "Read-only file system" in result.text
    assert not written


def test_the_label_says_whether_a_real_sandbox_runs() -> None:
    label = builtin("run_python").label
    assert label is (ToolLabel.READ_ONLY if sandbox.bwrap_path() else ToolLabel.EXECUTES)


def test_bad_arguments_are_a_failed_result(limited: ToolContext) -> None:
    result = builtin("run_python").run({"script": "print(1)"}, limited)
    assert not result.ok and "code" in result.text
