"""Replies too long to store as a message: a head in the database, the whole text in a file.

Rules (docs/processes.md "Budgets"):
- A stored message holds at most ``MAX_STORED_BYTES`` UTF-8 bytes of text. A
  longer reply is stored cut there, with a last line saying where the whole
  text went: ``<state>/replies/<processId>-<turn>.txt``, written before the
  turn settles. Its meta says ``stored`` (the cut) and ``fullText`` (the file).
- A file that cannot be written (a read-only or full disk) costs the full
  text only: the message is stored cut, and its last line says so.
- A finished reply the database refuses (full, read-only, locked) is kept in
  ``<state>/replies/<processId>-<turn>.unsaved.txt``, else in
  ``<temp>/vance-replies/`` (``keep_unsaved``); a warning (the worker's log)
  and the turn's failure reason name the file, and so does the reaper's
  reason when that could not be written either (``unsaved_note``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.base import logs
from vance_cli.base.errors import StorageError
from vance_cli.base.files import atomic_write_text

if TYPE_CHECKING:
    from vance_cli.workspace import Workspace

MAX_STORED_BYTES = 256_000
"""Most UTF-8 bytes of one stored message's text: the database holds conversations, not
documents (a 50 MB reply made a 157 MB database); the rest goes to a file."""


def fit(ws: Workspace, process_id: str, turn: int, text: str,
        limit: int = MAX_STORED_BYTES) -> tuple[str, dict[str, Any]]:
    """Return the text to store for a reply and the meta to add (empty when it fits).

    Args:
        ws: workspace (where the replies folder is).
        process_id: full id.
        turn: the turn's number.
        text: the whole reply.
        limit: most UTF-8 bytes stored.
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, {}
    head = data[:limit].decode("utf-8", "ignore")
    path = ws.settings.paths.replies_dir / f"{process_id}-{turn}.txt"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
    except (OSError, StorageError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else exc.message.split(": ", 1)[-1]
        return (head + f"\n[vance: cut at {limit} of {len(data)} bytes; the full text could"
                f" not be kept in {path}: {why or exc}]",
                {"stored": limit, "fullText": None})
    return (head + f"\n[vance: cut at {limit} of {len(data)} bytes; the full text is in"
            f" {path}]", {"stored": limit, "fullText": str(path)})


UNSAVED_SUFFIX = ".unsaved.txt"
"""Ending of a kept reply's file name (``<processId>-<turn>.unsaved.txt``)."""


def unsaved_folders(ws: Workspace) -> tuple[Path, Path]:
    """Return where unsaved replies go: the replies folder, then ``<temp>/vance-replies``."""
    return ws.settings.paths.replies_dir, Path(tempfile.gettempdir()) / "vance-replies"


def keep_unsaved(ws: Workspace, process_id: str, turn: int, text: str,
                 failure: BaseException) -> str:
    """Keep a finished reply the database refused in a file; return the reason to report.

    Args:
        ws: workspace.
        process_id: full id.
        turn: the turn's number.
        text: the whole reply.
        failure: why the reply could not be stored.

    Returns:
        One line for the turn's failure: what failed and the file that holds the
        reply (or that no file could hold it). It is also written as a warning.
    """
    why = getattr(failure, "message", None) or str(failure)
    kept: Path | None = None
    for folder in unsaved_folders(ws):
        path = folder / f"{process_id}-{turn}{UNSAVED_SUFFIX}"
        try:
            atomic_write_text(path, text)
        except (OSError, StorageError):
            continue
        kept = path
        break
    where = f"it is kept in {kept}" if kept else "no file could hold it either"
    reason = f"the reply of turn {turn} could not be saved ({why}); {where}"
    logs.warn("vance_cli.processes.overflow", f"process {process_id}: {reason}")
    return reason


def unsaved_note(ws: Workspace, process_id: str) -> str:
    """Return ``; the reply of turn N is kept in PATH`` for each kept reply of a process, or ''."""
    found = sorted(p for folder in unsaved_folders(ws)
                   for p in folder.glob(f"{process_id}-*{UNSAVED_SUFFIX}"))
    return "".join(f"; the reply of turn {p.name[len(process_id) + 1:-len(UNSAVED_SUFFIX)]}"
                   f" is kept in {p}" for p in found)
