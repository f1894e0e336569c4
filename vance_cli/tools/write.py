"""``write_file``: write a text file inside the project folder (label ``writes``: the gate asks).

Rule (docs/tools.md#built-in-tools): the path passes ``floor.check_path`` like a read; the file
is written atomically (a temporary file renamed over it), its parent folders made; the result
says whether it was created or replaced and how many bytes it holds.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from vance_cli.base.errors import StorageError
from vance_cli.base.files import atomic_write_text
from vance_cli.tools.floor import check_path, shown
from vance_cli.tools.tool import Refused, Tool, ToolContext, ToolLabel, ToolResult
from vance_cli.tools.typed import typed_tool

WRITE_MAX_BYTES = 1_000_000
"""Largest file ``write_file`` writes."""


class WriteFileArgs(BaseModel):
    """Arguments of ``write_file``."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File path, relative to the project folder (e.g. src/app.py).")
    content: str = Field(description="The file's whole new text (it replaces what is there).")


def _write_file(args: WriteFileArgs, context: ToolContext) -> ToolResult:
    data = args.content.encode("utf-8")
    if len(data) > WRITE_MAX_BYTES:
        raise Refused(f"the content is {len(data)} bytes; write_file writes at most"
                      f" {WRITE_MAX_BYTES}")
    path = check_path(args.path, context)
    if path.is_dir():
        raise Refused(f"{args.path!r} is a folder")
    existed = path.exists()
    try:
        atomic_write_text(path, args.content)  # makes the missing folders too
    except StorageError as exc:
        return ToolResult.failed(f"write_file failed: {exc.message}", error=exc.code)
    name = shown(path, context)
    verb = "replaced" if existed else "created"
    return ToolResult(text=f"{verb} {name} ({len(data)} bytes)",
                      details={"path": name, "bytes": len(data), "created": not existed})


TOOL: Tool = typed_tool(
    "write_file",
    "Write a text file in the project folder, replacing its content (folders are made as "
    "needed). Give the whole new content. The user may be asked to approve each write.",
    ToolLabel.WRITES, WriteFileArgs, _write_file)
"""The ``write_file`` tool."""
