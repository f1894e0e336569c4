"""A turn's live output in a stream file, and in a team in ``stream_chunks``, for followers.

Rule: docs/processes.md#follow
"""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vance_cli.state import stream_chunks
from vance_cli.state.stream_chunks import END, NOTE, TEXT

if TYPE_CHECKING:
    from vance_cli.processes.turn import TurnSink
    from vance_cli.state.db import Database
    from vance_cli.workspace import Workspace

STREAM_FILE_AFTER = 0.1
"""Seconds into a turn before it makes a stream file that does not exist yet (a follower
polls every 0.1 s): a short turn that nobody could follow makes none."""

BATCH_SECONDS = 0.2
"""Seconds a piece of output waits at most before its batch is written to the table."""

BATCH_CHARS = 4000
"""Characters of output that make a batch written at once."""

TURN_CAP_CHARS = 1_000_000
"""Characters of one turn's output the table keeps; past them a note row says it was cut."""

CLOSE_WAIT = 10.0
"""Seconds ``ChunkWriter.close`` waits for its last batch (a server that does not answer)."""

MAX_FAILURES = 25
"""Batches in a row that may fail before a turn's writer stops trying (the follower loses)."""

CUT_NOTE = ("\n» live output cut here: more than {cap:,} characters this turn"
            " ('vance process result' shows the answer when the turn settles)\n")
AGAIN_NOTE = "\n» the turn starts again\n"


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

    In a team (the state on PostgreSQL) whatever goes to the file goes to the
    ``stream_chunks`` table as well (``ChunkWriter``), for followers on other
    hosts, who cannot see this host's file.

    Args:
        ws: workspace (where the streams folder is).
        process_id: full id.
        inner: the listener the output goes to as well.
        after: seconds before a missing file is made for text (``STREAM_FILE_AFTER``).
        chunks: the table writer; None: one for the process in a team, none alone.
    """

    def __init__(self, ws: Workspace, process_id: str, inner: TurnSink,
                 after: float | None = None, chunks: ChunkWriter | None = None) -> None:
        self.path = stream_path(ws, process_id)
        self.inner = inner
        self.chunks = chunks if chunks is not None or not ws.settings.team else \
            ChunkWriter(ws.db, process_id)
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
            if self.chunks is not None and text:  # at once: the table batches by itself
                self.chunks.add(text, now)
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
        if self.chunks is not None:
            self.chunks.close()

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


class ChunkWriter:
    """Writes a turn's output to ``stream_chunks`` in batches, each batch one statement.

    A thread of its own writes a batch ``every`` seconds after its first piece,
    at once when ``chars`` characters wait or a status line came (``now``), and
    the last one at ``close`` with an ``end`` row. On PostgreSQL each batch
    notifies ``stream_chunks.CHANNEL`` in its own transaction. The first
    batch deletes the process's earlier rows (``stream_chunks.begin``). Past ``cap`` characters in
    the turn the text is cut and a ``note`` row says so. A batch that fails is
    written again with the next (same seq numbers: never doubled), until
    ``MAX_FAILURES`` in a row; a failure costs the followers only, never the turn.

    Args:
        db: the store (used from the writer's thread: PostgreSQL's pool; on SQLite a
            connection of the writer's own).
        process_id: full id.
        turn: the turn's number; None: ``stream_chunks.live_turn`` when the first batch
            is written.
        every: seconds a piece waits at most (``BATCH_SECONDS``).
        chars: characters that make a batch written at once (``BATCH_CHARS``).
        cap: characters of the turn stored at most (``TURN_CAP_CHARS``).
    """

    def __init__(self, db: Database, process_id: str, turn: int | None = None, *,
                 every: float = BATCH_SECONDS, chars: int = BATCH_CHARS,
                 cap: int = TURN_CAP_CHARS) -> None:
        self.db, self.process_id, self.turn = db, process_id, turn
        self._every, self._chars, self._cap = every, chars, cap
        self._cond = threading.Condition()
        self._pending: list[tuple[str, str]] = []  # (kind, text) not yet in a batch
        self._first_at = 0.0  # when the oldest pending piece came
        self._size = 0  # characters pending
        self._kept = 0  # characters of the turn taken so far
        self._urgent = False
        self._closing = False
        self._thread: threading.Thread | None = None
        self._seq: int | None = None  # the last seq given out; None: the turn not begun here
        self._unsent: list[tuple[int, str, str]] = []  # rows of a batch that failed
        self._failures = 0
        self._gave_up = False
        self.batches = 0
        """Batches written."""

    def add(self, text: str, now: bool = False) -> None:
        """Keep ``text`` for the next batch (``now``: write that batch at once)."""
        with self._cond:
            if self._closing or self._gave_up or self._kept >= self._cap or not text:
                return
            room = self._cap - self._kept
            cut = len(text) > room
            text = text[:room]
            self._kept += len(text)
            first = not self._pending
            if first:
                self._first_at = time.monotonic()
            self._pending.append((TEXT, text))
            self._size += len(text)
            if cut:
                self._pending.append((NOTE, CUT_NOTE.format(cap=self._cap)))
            if now or cut or self._size >= self._chars:
                self._urgent = True
            if self._thread is None:
                thread = threading.Thread(target=self._run, daemon=True,
                                          name=f"vance-stream-{self.process_id[:8]}")
                try:
                    thread.start()
                except RuntimeError:  # no thread to be had: the followers lose, not the turn
                    self._gave_up, self._pending = True, []
                    return
                self._thread = thread
            if first or self._urgent:  # else the writer's wait for this batch's time holds
                self._cond.notify()

    def close(self) -> None:
        """Write what is pending and an ``end`` row, then stop (waits up to ``CLOSE_WAIT``).

        A writer that was given nothing writes nothing.
        """
        with self._cond:
            if self._closing:
                return
            self._closing = True
            thread = self._thread
            if thread is not None:
                self._pending.append((END, ""))
            self._cond.notify()
        if thread is not None:
            thread.join(CLOSE_WAIT)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not (self._closing or self._urgent):
                    if not self._pending and not self._unsent:
                        self._cond.wait()
                        continue
                    left = self._first_at + self._every - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch, self._pending = self._pending, []
                self._size, self._urgent = 0, False
                closing = self._closing
            self._write(batch)
            if self._failures >= MAX_FAILURES:
                with self._cond:
                    self._gave_up, self._pending = True, []
                return
            if closing:
                return

    def _write(self, batch: list[tuple[str, str]]) -> None:
        """Write the rows of a failed batch and ``batch``, merged to one row per run of text."""
        try:
            if self._seq is None:
                if self.turn is None:
                    self.turn = stream_chunks.live_turn(self.db, self.process_id)
                    if self.turn is None:  # no such process: nothing to follow
                        self._failures = MAX_FAILURES
                        return
                self._seq = stream_chunks.begin(self.db, self.process_id, self.turn)
                if self._seq:
                    batch.insert(0, (NOTE, AGAIN_NOTE))
        except Exception:  # the server failed: the batch waits for the next
            self._failed(batch)
            return
        rows = self._unsent
        for kind, text in _merged(batch):
            self._seq += 1
            rows.append((self._seq, kind, text))
        if not rows:
            return
        try:
            assert self.turn is not None
            stream_chunks.add(self.db, self.process_id, self.turn, rows)
        except self.db.integrity_errors:  # the process is gone: nothing to follow
            self._failures = MAX_FAILURES
            return
        except Exception:  # written again with the next batch (same seq numbers)
            self._unsent = rows
            self._failures += 1
            with self._cond:
                self._first_at = time.monotonic()
            return
        self._unsent, self._failures = [], 0
        self.batches += 1

    def _failed(self, batch: list[tuple[str, str]]) -> None:
        """Put ``batch`` back before what came meanwhile (the turn not begun: no seq yet)."""
        self._failures += 1
        with self._cond:
            self._pending[:0] = batch
            self._size += sum(len(text) for _, text in batch)
            self._first_at = time.monotonic()


def _merged(batch: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Return ``batch`` with each run of text pieces joined into one row."""
    rows: list[tuple[str, str]] = []
    for kind, text in batch:
        if kind == TEXT and rows and rows[-1][0] == TEXT:
            rows[-1] = (TEXT, rows[-1][1] + text)
        else:
            rows.append((kind, text))
    return rows
