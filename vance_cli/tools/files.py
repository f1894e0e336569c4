"""``read_file``, ``list_files`` and ``search_files``: read-only tools inside the project folder.

Rule (docs/tools.md#built-in-tools): every path passes ``floor.check_path`` (deny floor, then
the project fence on the resolved path); listings and searches skip what is on the floor and
``.git``; each output has a cap, and a cut output says so and how to see more.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from fnmatch import fnmatchcase
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from vance_cli.tools.floor import check_path, floor_reason, shown
from vance_cli.tools.tool import Refused, Tool, ToolContext, ToolLabel, ToolResult
from vance_cli.tools.typed import typed_tool

READ_MAX_BYTES = 100_000
"""Bytes of a file one ``read_file`` call returns at most."""

LIST_MAX = 500
"""Entries one ``list_files`` call returns at most."""

SEARCH_MAX_MATCHES = 100
"""Matching lines one ``search_files`` call returns at most."""

SEARCH_MAX_FILE_BYTES = 2_000_000
"""Files larger than this are skipped by ``search_files``."""

SEARCH_LINE_CHARS = 300
"""Characters of one matching line shown at most."""

SEARCH_SCAN_CHARS = 10_000
"""Characters of one line searched at most (a long line cannot stall a slow pattern)."""

SEARCH_MAX_FILES = 20_000
"""Files one ``search_files`` call reads at most."""

SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv",
                          ".mypy_cache", ".ruff_cache", ".pytest_cache"})
"""Folders listings and searches do not enter (unless asked for by path)."""


class ReadFileArgs(BaseModel):
    """Arguments of ``read_file``."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File path, relative to the project folder (e.g. src/app.py).")
    start_line: int = Field(1, ge=1, description="First line to return (1 = the start).")
    max_lines: int = Field(2000, ge=1, le=20000, description="Most lines to return.")


class ListFilesArgs(BaseModel):
    """Arguments of ``list_files``."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(".", description="Folder, relative to the project folder.")
    recursive: bool = Field(False, description="Also list the files in sub-folders.")
    pattern: str = Field("*", description="Only names matching this glob, e.g. *.py.")


class SearchFilesArgs(BaseModel):
    """Arguments of ``search_files``."""

    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(description="Python regular expression searched for in each line.")
    path: str = Field(".", description="File or folder to search, relative to the project folder.")
    glob: str = Field("*", description="Only files whose name matches this glob, e.g. *.py.")
    ignore_case: bool = Field(False, description="Match regardless of case.")


def _is_binary(head: bytes) -> bool:
    return b"\0" in head


def _read_file(args: ReadFileArgs, context: ToolContext) -> ToolResult:
    path = check_path(args.path, context)
    if path.is_dir():
        raise Refused(f"{args.path!r} is a folder; use list_files to see what it holds")
    if not path.is_file():
        raise Refused(f"{args.path!r} is not a file" if path.exists()
                      else f"{args.path!r} does not exist")
    size = path.stat().st_size
    with path.open("rb") as handle:
        data = handle.read(min(size, 64 * READ_MAX_BYTES) + 1)
    if _is_binary(data[:8192]):
        raise Refused(f"{args.path!r} is a binary file ({size} bytes); read_file shows text only")
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    total = len(lines)
    picked, used = [], 0
    for line in lines[args.start_line - 1:args.start_line - 1 + args.max_lines]:
        if used + len(line.encode()) > READ_MAX_BYTES:
            break
        picked.append(line)
        used += len(line.encode())
    last = args.start_line - 1 + len(picked)
    text = "".join(picked)
    name = shown(path, context)
    if args.start_line > total and total:
        raise Refused(f"{name} has {total} lines; start_line {args.start_line} is past its end")
    more = last < total or len(data) > 64 * READ_MAX_BYTES
    if more:
        text += (f"\n[cut: lines {args.start_line}-{last} of {name} shown; call read_file with"
                 f" start_line={last + 1} for more]")
    return ToolResult(text=text, details={"path": name, "bytes": size, "truncated": more,
                                          "lines": [args.start_line, last]})


def _walk(root: Path, recursive: bool, context: ToolContext) -> Iterator[Path]:
    """Yield the entries under ``root`` (sorted), skipping the floor and ``SKIPPED_DIRS``."""
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        if floor_reason(path, context) is not None:
            continue
        yield path
        if recursive and entry.is_dir(follow_symlinks=False) and entry.name not in SKIPPED_DIRS:
            yield from _walk(path, recursive, context)


def _list_files(args: ListFilesArgs, context: ToolContext) -> ToolResult:
    root = check_path(args.path, context)
    if not root.is_dir():
        raise Refused(f"{args.path!r} is not a folder" if root.exists()
                      else f"{args.path!r} does not exist")
    lines: list[str] = []
    cut = False
    for path in _walk(root, args.recursive, context):
        if not fnmatchcase(path.name, args.pattern):
            continue
        if len(lines) == LIST_MAX:
            cut = True
            break
        lines.append(shown(path, context) + ("/" if path.is_dir() else ""))
    if cut:
        lines.append(f"[cut at {LIST_MAX} entries: list a sub-folder or give a pattern]")
    empty = f"(nothing in {shown(root, context)} matches {args.pattern!r})"
    text = "\n".join(lines) if lines else empty
    return ToolResult(text=text, details={"entries": min(len(lines), LIST_MAX), "truncated": cut})


def _search_files(args: SearchFilesArgs, context: ToolContext) -> ToolResult:
    try:
        regex = re.compile(args.pattern, re.IGNORECASE if args.ignore_case else 0)
    except re.error as exc:
        raise Refused(f"{args.pattern!r} is not a valid regular expression: {exc}") from None
    root = check_path(args.path, context)
    files = [root] if root.is_file() else (
        p for p in _walk(root, True, context) if p.is_file() and not p.is_symlink())
    matches: list[str] = []
    cut = False
    for count, path in enumerate(files):
        if count == SEARCH_MAX_FILES or (
                context.deadline is not None and time.monotonic() > context.deadline):
            cut = True
            break
        if not fnmatchcase(path.name, args.glob) or path.stat().st_size > SEARCH_MAX_FILE_BYTES:
            continue
        data = path.read_bytes()
        if _is_binary(data[:8192]):
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line, 0, SEARCH_SCAN_CHARS):
                if len(matches) == SEARCH_MAX_MATCHES:
                    cut = True
                    break
                matches.append(f"{shown(path, context)}:{number}: {line[:SEARCH_LINE_CHARS]}")
        if cut:
            break
    if cut:
        matches.append(f"[search stopped at {len(matches)} matches (or {SEARCH_MAX_FILES} files,"
                       " or the turn's time): narrow the pattern, path or glob]")
    text = "\n".join(matches) if matches else f"no line matches {args.pattern!r}"
    return ToolResult(text=text, details={"matches": len(matches) - cut, "truncated": cut})


TOOLS: tuple[Tool, ...] = (
    typed_tool(
        "read_file",
        "Read a text file in the project folder and return its lines. Paths are relative to "
        "the project folder. Long files come back in parts: the result says which start_line "
        "to ask for next. Files outside the project folder, secrets (.env, ~/.ssh) and "
        "binary files are refused.",
        ToolLabel.READ_ONLY, ReadFileArgs, _read_file),
    typed_tool(
        "list_files",
        "List the files and folders in a folder of the project (folders end with '/'). "
        "Set recursive to include sub-folders; give a glob pattern such as *.py to filter "
        f"names. At most {LIST_MAX} entries.",
        ToolLabel.READ_ONLY, ListFilesArgs, _list_files),
    typed_tool(
        "search_files",
        "Search the project's text files for a regular expression, like grep. Returns "
        f"'path:line: text' for each matching line, at most {SEARCH_MAX_MATCHES}. Narrow "
        "with path (a folder or file) and glob (e.g. *.py).",
        ToolLabel.READ_ONLY, SearchFilesArgs, _search_files),
)
"""The file tools."""
