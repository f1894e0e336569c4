"""A turn's live output in a stream file, for ``vance process follow``.

Rule: docs/processes.md#follow
"""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vance_cli.processes.turn import TurnSink
    from vance_cli.workspace import Workspace

STREAM_FILE_AFTER = 0.1
"""Seconds into a turn before it makes a stream file that does not exist yet (a follower
polls every 0.1 s): a short turn that nobody could follow makes none."""


class StreamFile:
    """Keeps a turn's live output in ``<state>/streams/<processId>.txt`` for followers.

    The file is started afresh for each turn and appended to as text
    arrives (status lines on lines of their own, starting with ``» ``), so
    ``vance process follow`` in another terminal sees what the listener
    sees. A file that exists (an earlier turn's, or the one a launcher
    emptied for its worker) is emptied at once. One that does not is made
    at the first status line, or at the first text ``after`` seconds into
    the turn, with everything kept so far: a follower sees the same, and a
    short turn makes no file (docs/decisions/0013-turn-path.md). A write
    that fails costs the follower only, never the turn.

    Args:
        ws: workspace (where the streams folder is).
        process_id: full id.
        inner: the listener the output goes to as well.
        after: seconds before a missing file is made for text (``STREAM_FILE_AFTER``).
    """

    def __init__(self, ws: Workspace, process_id: str, inner: TurnSink,
                 after: float | None = None) -> None:
        self.path = stream_path(ws, process_id)
        self.inner = inner
        self._handle: io.FileIO | None = None  # unbuffered: each piece is one write
        self._held: list[str] | None = None
        """Output kept while the file is not made yet (None: it is, or it failed)."""
        self._make_at = time.monotonic() + (STREAM_FILE_AFTER if after is None else after)
        self._lock = threading.Lock()  # an orchestrator's children report from their threads
        try:
            self._handle = io.FileIO(os.open(self.path, os.O_WRONLY | os.O_TRUNC), "w")
        except FileNotFoundError:
            self._held = []
        except OSError:
            self._handle = None

    def _append(self, text: str, now: bool = False) -> None:
        with self._lock:
            if self._held is not None:
                self._held.append(text)
                if not now and time.monotonic() < self._make_at:
                    return
                text, self._held = "".join(self._held), None
                self._handle = self._make()
            handle = self._handle
            if handle is None:
                return
            try:
                data = text.encode("utf-8")
                while data:  # a follower reads the file as it grows
                    written = handle.write(data)
                    if not written:
                        raise OSError("nothing written")
                    data = data[written:]
            except (OSError, ValueError):  # a full disk, or closed: the follower loses
                self._close()

    def _make(self) -> io.FileIO | None:
        try:
            try:
                return io.FileIO(self.path, "w")
            except FileNotFoundError:  # the first turn of this state folder
                self.path.parent.mkdir(parents=True, exist_ok=True)
                return io.FileIO(self.path, "w")
        except OSError:
            return None

    def text(self, piece: str) -> None:
        """Pass the piece on and keep it."""
        self.inner.text(piece)
        self._append(piece)

    def status(self, line: str) -> None:
        """Pass the line on and keep it (the file is made now if it was not)."""
        self.inner.status(line)
        self._append(f"\n» {line}\n", now=True)

    def close(self, keep: bool = False) -> None:
        """Close the file (the turn ended); later pieces are not kept.

        Args:
            keep: make the file for the output held so far (a turn that failed:
                its output stays for followers, as its reply is not stored).
        """
        if keep:
            self._append("", now=True)
        with self._lock:
            self._held = None
            self._close()

    def _close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError:
                pass


def stream_path(ws: Workspace, process_id: str) -> Path:
    """Return the file that holds the live output of a process's latest turn."""
    return ws.settings.paths.streams_dir / f"{process_id}.txt"
