"""write_file and run_command: inside the project, the floor, limits, no shell."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from vance_cli.tools import sandbox
from vance_cli.tools.registry import builtin
from vance_cli.tools.tool import ToolContext, ToolLabel, ToolResult


def call(name: str, context: ToolContext, **args: object) -> ToolResult:
    return builtin(name).run(args, context)


def test_labels() -> None:
    assert builtin("write_file").label is ToolLabel.WRITES
    assert builtin("run_command").label is ToolLabel.EXECUTES


def test_write_file_creates_then_replaces(context: ToolContext) -> None:
    made = call("write_file", context, path="docs/new.md", content="# Hi\n")
    assert made.ok and made.text == "created docs/new.md (5 bytes)"
    assert (context.project / "docs/new.md").read_text() == "# Hi\n"
    again = call("write_file", context, path="docs/new.md", content="x")
    assert again.text.startswith("replaced")
    assert (context.project / "docs/new.md").read_text() == "x"


def test_write_file_refuses_outside_and_on_the_floor(context: ToolContext) -> None:
    outside = context.project.parent / "evil.txt"
    (context.project / "out").symlink_to(context.project.parent)
    for raw, why in ((str(outside), "outside the project"), ("../evil.txt", "outside the project"),
                     ("out/evil.txt", "symbolic link"), (".env", "deny floor"),
                     (str(context.home / ".ssh/authorized_keys"), "deny floor")):
        result = call("write_file", context, path=raw, content="x")
        assert not result.ok and why in result.text, raw
    assert not outside.exists() and not (context.home / ".ssh").exists()
    assert not (context.project / ".env").exists()


def test_run_command_runs_argv_without_a_shell(context: ToolContext) -> None:
    (context.project / "a b.txt").write_text("hello")
    result = call("run_command", context, argv=["cat", "a b.txt"])
    assert result.ok and result.text == "hello"
    no_shell = call("run_command", context, argv=["echo", "$HOME", "|", "wc"])
    assert no_shell.text.strip() == "$HOME | wc"


def test_run_command_reports_failures_and_missing_programs(context: ToolContext) -> None:
    failed = call("run_command", context, argv=[sys.executable, "-c", "import sys; sys.exit(3)"])
    assert not failed.ok and failed.details["exit"] == 3 and "[exit status 3]" in failed.text
    missing = call("run_command", context, argv=["no-such-program-xyz"])
    assert not missing.ok and "no program" in missing.text
    outside = call("run_command", context, argv=["ls"], cwd="..")
    assert not outside.ok and "outside the project" in outside.text


def test_run_command_is_stopped_at_the_time_limit(context: ToolContext) -> None:
    limited = replace(context, options={"tools.python.timeout": 1})
    result = call("run_command", limited, argv=["sleep", "30"])
    assert not result.ok and result.details["stopped"] == "wall time"


def test_under_bubblewrap_a_command_writes_only_in_the_project(context: ToolContext) -> None:
    if sandbox.bwrap_path() is None:
        pytest.skip("bwrap is not installed or cannot make a sandbox here (Debian: bubblewrap)")
    result = call("run_command", context, argv=["touch", "made.txt"])
    assert result.ok and (context.project / "made.txt").exists()
    (context.home / ".aws").mkdir()
    (context.home / ".aws/credentials").write_text("AKIA")
    hidden = call("run_command", context, argv=["ls", "-A", str(context.home / ".aws")])
    assert "credentials" not in hidden.text
