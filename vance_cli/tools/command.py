"""``run_command``: run a program in the project folder (label ``executes``: the gate asks).

Rule (docs/tools.md#run_python-and-run_command): an argv list, no shell; the program runs in the
project folder (or a folder inside it) within the limits of ``sandbox.run_limited``; under
bubblewrap it may write only inside the project folder and reaches no network.
"""

from __future__ import annotations

import shutil

from pydantic import BaseModel, ConfigDict, Field

from vance_cli.tools import sandbox
from vance_cli.tools.floor import check_path, shown
from vance_cli.tools.tool import Refused, Tool, ToolContext, ToolLabel, ToolResult
from vance_cli.tools.typed import typed_tool


class RunCommandArgs(BaseModel):
    """Arguments of ``run_command``."""

    model_config = ConfigDict(extra="forbid")
    argv: list[str] = Field(min_length=1, max_length=1000,
                            description='The program and its arguments, e.g. ["git", "status"].'
                                        " No shell: no pipes, globs or redirections.")
    cwd: str = Field(".", description="Folder to run in, relative to the project folder.")


def _run_command(args: RunCommandArgs, context: ToolContext) -> ToolResult:
    workdir = check_path(args.cwd, context)
    if not workdir.is_dir():
        raise Refused(f"{args.cwd!r} is not a folder")
    if any("\0" in word for word in args.argv):
        raise Refused("an argument holds a NUL character")
    if shutil.which(args.argv[0], path=sandbox.environment_path()) is None:
        raise Refused(f"no program {args.argv[0]!r} found on the PATH")
    limits = sandbox.Limits.of(context)
    ran = sandbox.run_limited(args.argv, context, limits, workdir, writable=(context.project,))
    details = {"sandbox": ran.sandbox, "exit": ran.exit, "stopped": ran.stopped,
               "seconds": ran.seconds, "truncated": ran.truncated, "cwd": shown(workdir, context)}
    return ToolResult(text=sandbox.report(ran, limits), ok=ran.exit == 0, details=details)


TOOL: Tool = typed_tool(
    "run_command",
    "Run a program in the project folder and return its output, e.g. "
    '["python", "-m", "pytest", "-q"] or ["git", "log", "-5"]. argv is a list: no shell, so '
    "no pipes or globs. It runs with limits on time and memory and without network; the "
    "user may be asked to approve each command.",
    ToolLabel.EXECUTES, RunCommandArgs, _run_command)
"""The ``run_command`` tool."""
