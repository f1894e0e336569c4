"""The JSON documents that show a process: one definition for the command line and MCP.

``vance process show --json``, ``result --json`` and ``steer --json``
print these, and the MCP server's ``process_status``, ``process_result``
and ``process_steer`` tools return the same documents (docs/processes.md,
docs/mcp.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vance_cli.state import conversation

if TYPE_CHECKING:
    from vance_cli.processes.model import Process
    from vance_cli.processes.runtime import Message
    from vance_cli.workspace import Workspace


def llm_totals(ws: Workspace, process: Process) -> dict[str, float]:
    """Return the process's LLM usage summed over its turns.

    Returns:
        ``{"calls", "tokensIn", "tokensOut", "latencyMs"}`` (latency in milliseconds).
    """
    calls, tokens_in, tokens_out, latency = conversation.llm_totals(ws.db, process.id)
    return {"calls": calls, "tokensIn": tokens_in, "tokensOut": tokens_out,
            "latencyMs": round(latency, 1)}


def show_json(ws: Workspace, process: Process) -> dict[str, Any]:
    """Return ``vance process show --json``: the process object plus ``turns`` and ``llm``."""
    return {**process.to_json(), "turns": process.turns, "llm": llm_totals(ws, process)}


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
