"""Following a turn's live output (``vance process follow``): the stream file, or the table.

In a team the output comes from the ``stream_chunks`` table, the follower woken by
``LISTEN``; alone, from the stream file.

Rule: docs/processes.md#follow
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from vance_cli.base.records import frozen
from vance_cli.processes.lifecycle import reap_and_load
from vance_cli.processes.model import Process, Status
from vance_cli.processes.records import load_process
from vance_cli.processes.stream import stream_path
from vance_cli.state import stream_chunks
from vance_cli.state.stream_chunks import END

if TYPE_CHECKING:
    from vance_cli.state.dialect import Listener
    from vance_cli.workspace import Workspace

FOLLOW_POLL = 0.1
"""Seconds between two looks at the stream file, or at the status once the stream ended."""

TABLE_WAIT = 1.0
"""Seconds a team's follower waits for a notification (or sleeps, without ``LISTEN``) before
it looks at the process again."""

END_GRACE = 1.0
"""Seconds a follower waits, after the process settled, for the end of a stream it saw
start (a whole run closes its process before its last batch)."""

Emit = Callable[[str], None]


@frozen
class Followed:
    """What following did.

    Attributes:
        process: the process as last seen (settled, or not RUNNING when following began).
        shown: some output was passed on.
    """

    process: Process
    shown: bool


def follow_output(ws: Workspace, process: Process, emit: Emit) -> Followed:
    """Pass on the live output of the process's running turn, in order, until it settles.

    A process that is not RUNNING gets its latest turn's output passed on, if any is
    kept. In a team (``Settings.team``) the output comes from ``stream_chunks``, so a
    turn on another host is followed too; alone, from the stream file.

    Args:
        ws: workspace.
        process: the process, as just loaded (``reap_and_load``).
        emit: called with each piece of output.

    Returns:
        The Followed.
    """
    if ws.settings.team:
        return follow_table(ws, process, emit)
    return _follow_file(ws, process, emit)


def _follow_file(ws: Workspace, process: Process, emit: Emit) -> Followed:
    path, offset = stream_path(ws, process.id), 0
    while True:
        settled = process.status is not Status.RUNNING
        offset = _show_new(path, offset, emit)
        if settled:
            return Followed(process, offset > 0)
        time.sleep(FOLLOW_POLL)
        process = reap_and_load(ws, process.id)


def _show_new(path: object, offset: int, emit: Emit) -> int:
    """Pass on what the stream file holds past ``offset``; return the new offset (bytes)."""
    try:
        with open(str(path), "rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except OSError:
        return offset
    if data:
        emit(data.decode("utf-8", "replace"))
    return offset + len(data)


def follow_table(ws: Workspace, process: Process, emit: Emit, *,
                 wait: float = TABLE_WAIT, listen: bool = True) -> Followed:
    """Follow the process's running turn in ``stream_chunks`` (the team's follower).

    The turn followed is the one under way when following begins
    (``stream_chunks.live_turn``; of a process not RUNNING, its latest). Rows
    past the last seq seen are passed on; between two looks the follower waits
    on ``LISTEN`` for a batch of this process (``wait`` seconds at most), or
    sleeps ``wait`` seconds when listening failed. It ends when the process
    leaves RUNNING or a later turn is claimed (that turn settled), once the rows
    are read (and the stream's ``end`` row, ``END_GRACE`` at most). Rows deleted
    meanwhile (a new turn's first batch) are simply not seen.

    Args:
        ws: workspace.
        process: the process, as just loaded.
        emit: called with each row's text.
        wait: seconds between two looks at the process without a notification.
        listen: wait on ``LISTEN`` (False: poll, as when it failed).

    Returns:
        The Followed.
    """
    listener: Listener | None = None
    if listen and process.status is Status.RUNNING:  # before the first read: nothing missed
        listener = ws.db.listen(stream_chunks.CHANNEL)
    rows = _Rows(ws, process)
    settled_at = None if process.status is Status.RUNNING else 0.0  # not RUNNING: look once
    reaped_at = time.monotonic()
    try:
        while True:
            settled = process.status is not Status.RUNNING or process.turns > rows.turn
            rows.pass_on(emit)
            if settled:
                settled_at = time.monotonic() if settled_at is None else settled_at
                if rows.ended or not rows.begun or time.monotonic() - settled_at >= END_GRACE:
                    return Followed(process, rows.shown)
            if rows.ended or settled:  # the settle (or the last batch) is a moment away
                time.sleep(FOLLOW_POLL)
            elif listener is None:
                time.sleep(wait)
            elif not _woken(listener, process.id, wait):
                listener.close()
                listener = None
            if time.monotonic() - reaped_at >= wait:
                process, reaped_at = reap_and_load(ws, process.id), time.monotonic()
            else:
                process = load_process(ws, process.id)
    finally:
        if listener is not None:
            listener.close()


class _Rows:
    """The rows of one turn in ``stream_chunks`` a follower has passed on."""

    def __init__(self, ws: Workspace, process: Process) -> None:
        self.db, self.process_id = ws.db, process.id
        live = stream_chunks.live_turn(self.db, process.id, following=True)
        self.turn = process.turns if live is None else live
        self.seq = 0
        self.begun = self.ended = self.shown = False

    def pass_on(self, emit: Emit) -> None:
        """Pass on the text of the rows past the last seen, in order."""
        for row in stream_chunks.after(self.db, self.process_id, self.turn, self.seq):
            self.seq, self.begun = int(row["seq"]), True
            if row["kind"] == END:
                self.ended = True
            elif row["text"]:
                emit(str(row["text"]))
                self.shown = True


def _woken(listener: Listener, process_id: str, wait: float) -> bool:
    """Wait until a batch of ``process_id`` is notified or ``wait`` seconds pass.

    Returns:
        False when the listener failed (the caller polls from now on).
    """
    deadline = time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        payloads = listener.wait(left)
        if payloads is None:
            return False
        if process_id in payloads:
            return True
    return True
