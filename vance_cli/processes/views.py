"""The JSON documents that show a process: one definition for the command line and MCP.

``vance process show --json``, ``result --json`` and ``steer --json``
print these, and the MCP server's ``process_status``, ``process_result``
and ``process_steer`` tools return the same documents (docs/processes.md,
docs/mcp.md).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.base.records import frozen
from vance_cli.state import conversation
from vance_cli.state.db import Database
from vance_cli.state.stores import open_state

if TYPE_CHECKING:
    from vance_cli.processes.inputs import Message
    from vance_cli.processes.model import Process
    from vance_cli.workspace import Workspace


def llm_totals(ws: Workspace, process: Process) -> dict[str, float]:
    """Return the process's LLM usage summed over its turns.

    Returns:
        ``{"calls", "tokensIn", "tokensOut", "latencyMs"}`` (latency in milliseconds).
    """
    calls, tokens_in, tokens_out, latency = conversation.llm_totals(ws.db, process.id)
    return {"calls": calls, "tokensIn": tokens_in, "tokensOut": tokens_out,
            "latencyMs": round(latency, 1)}


def input_waiting(ws: Workspace, processes: Sequence[Process]) -> dict[str, int]:
    """Return, per process id, how many of its inputs no turn has taken yet (0: none).

    A process that is not ``RUNNING`` with inputs waiting has not answered them:
    it never ran (no LLM), or its turn was cut before the first token, or failed.
    """
    counts = conversation.waiting_counts(ws.db, [p.id for p in processes])
    return {p.id: counts.get(p.id, 0) for p in processes}


def list_json(ws: Workspace, processes: Sequence[Process]) -> list[dict[str, Any]]:
    """Return ``vance process list --json``: each process object plus ``inputWaiting``."""
    waiting = input_waiting(ws, processes)
    return [{**p.to_json(), "inputWaiting": waiting[p.id]} for p in processes]


def show_json(ws: Workspace, process: Process) -> dict[str, Any]:
    """Return ``vance process show --json``: the process object plus three keys.

    The keys: ``turns``, ``llm`` and ``inputWaiting`` (inputs no turn has taken yet).
    """
    return {**process.to_json(), "turns": process.turns, "llm": llm_totals(ws, process),
            "inputWaiting": input_waiting(ws, [process])[process.id]}


def result_json(process: Process) -> dict[str, Any]:
    """Return ``vance process result --json``.

    Returns:
        ``{"processId", "status", "closeReason", "result", "outcome"}``; ``result``
        is None while the process has no answer yet.
    """
    return {"processId": process.id, "status": process.status.value,
            "closeReason": process.close_reason, "result": process.result,
            "outcome": dict(process.outcome) if process.outcome else None}


def steer_json(message: Message, process: Process) -> dict[str, Any]:
    """Return ``vance process steer --json``: the stored message and the process after it."""
    return {"message": message.to_json(), "process": process.to_json()}


def message_number(ws: Workspace, process_id: str, message: Message) -> int:
    """Return the message's number within its process: its row in ``vance process messages``."""
    return conversation.message_number(ws.db, process_id, message.id)


@frozen
class Reply:
    """A reply a background turn wrote (``ReplyWatch``).

    Attributes:
        process_id: the process that answered.
        recipe: its recipe.
        text: the reply.
    """

    process_id: str
    recipe: str
    text: str


class ReplyWatch:
    """Finds the replies of a session's top-level processes written since the last ``mark``.

    The shell marks before each prompt (its own foreground turns printed theirs)
    and asks, from a thread of its own while the prompt waits, for what background
    turns wrote meanwhile — arthur's report once a delegated child finished. That
    thread reads through a connection of its own (``open``).

    Args:
        ws: the shell's workspace (database file, tenant, session).
    """

    def __init__(self, ws: Workspace) -> None:
        self.target = ws.settings.state_target
        self.tenant, self.session = ws.settings.tenant, ws.settings.session
        self.last_id = 0
        self._lock = threading.Lock()

    def mark(self, db: Database) -> None:
        """Take every reply stored until now as seen."""
        with self._lock:
            self.last_id = conversation.last_message_id(db)

    def open(self) -> Database:
        """Return a connection of its own to the state database (for the watching thread)."""
        return open_state(self.target)

    def new(self, db: Database) -> list[Reply]:
        """Return the replies stored since the last call (or mark), oldest first.

        Args:
            db: the calling thread's connection (``open``).
        """
        with self._lock:
            rows = conversation.replies_after(db, self.tenant, self.session, self.last_id)
            if rows:
                self.last_id = rows[-1]["id"]
        return [Reply(r["process_id"], r["recipe"], r["content"]) for r in rows]
