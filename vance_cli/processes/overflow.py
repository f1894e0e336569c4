"""Replies too long to store as a message: a head in the database, the whole text in a file.

Rules (docs/processes.md "Budgets"):
- A stored message holds at most ``MAX_STORED_BYTES`` UTF-8 bytes of text. A
  longer reply is stored cut there, with a last line saying where the whole
  text went: ``<state>/replies/<processId>-<turn>.txt``, written before the
  turn settles. Its meta says ``stored`` (the cut) and ``fullText`` (the file).
- A file that cannot be written (a read-only or full disk) costs the full
  text only: the message is stored cut, and its last line says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    except OSError as exc:
        return (head + f"\n[vance: cut at {limit} of {len(data)} bytes; the full text could"
                f" not be kept in {path}: {exc.strerror or exc}]",
                {"stored": limit, "fullText": None})
    return (head + f"\n[vance: cut at {limit} of {len(data)} bytes; the full text is in"
            f" {path}]", {"stored": limit, "fullText": str(path)})
