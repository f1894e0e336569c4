"""``run_python``: run a Python script in a sandbox and return what it prints.

Rule (docs/tools.md#run_python-and-run_command): the script runs in a fresh temporary folder
(deleted afterwards) with this Python (``-I``: no user site, no ``PYTHON*`` variables), within
the limits of ``sandbox.run_limited``. Its label is ``read-only`` where bubblewrap runs (the
script can change nothing outside its temporary folder and reach no network) and ``executes``
where it does not, so the gate asks there.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from vance_cli.tools import sandbox
from vance_cli.tools.tool import Tool, ToolContext, ToolLabel, ToolResult
from vance_cli.tools.typed import typed_tool

CODE_MAX_CHARS = 200_000
"""Longest script accepted."""


class RunPythonArgs(BaseModel):
    """Arguments of ``run_python``."""

    model_config = ConfigDict(extra="forbid")
    code: str = Field(max_length=CODE_MAX_CHARS,
                      description="A complete Python 3 script. print() the results you need.")


def _run_python(args: RunPythonArgs, context: ToolContext) -> ToolResult:
    limits = sandbox.Limits.of(context)
    with tempfile.TemporaryDirectory(prefix="vance-python-") as folder:
        workdir = Path(folder).resolve()
        (workdir / "main.py").write_text(args.code, encoding="utf-8")
        ran = sandbox.run_limited([sys.executable, "-I", "main.py"], context, limits, workdir)
    details = {"sandbox": ran.sandbox, "exit": ran.exit, "stopped": ran.stopped,
               "seconds": ran.seconds, "truncated": ran.truncated}
    return ToolResult(text=sandbox.report(ran, limits), ok=ran.exit == 0, details=details)


def _label() -> ToolLabel:
    return ToolLabel.READ_ONLY if sandbox.bwrap_path() else ToolLabel.EXECUTES


TOOL: Tool = typed_tool(
    "run_python",
    "Run a Python 3 script and return what it prints (stdout, then stderr). Use it to "
    "compute exact results: arithmetic, dates, parsing, data. The script runs in an empty "
    "temporary folder with the standard library, no network and limits on time and memory; "
    "files it writes are discarded. print() every result you need: only output comes back.",
    _label(), RunPythonArgs, _run_python)
"""The ``run_python`` tool."""
