"""SQL for the tools a person allowed for one process (m009).

``scope`` is ``process`` (every call of the tool, "always for this process")
or ``once`` (the next call, a call approved at a checkpoint: used up by it).
"""

from __future__ import annotations

from vance_cli.base.clock import utc_now
from vance_cli.state.db import Database


def grant(db: Database, process_id: str, tool: str, scope: str) -> None:
    """Allow ``tool`` for the process (``process``: always; ``once``: its next call)."""
    db.conn.execute("INSERT INTO tool_grants (process_id, tool, scope, created_at)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (process_id, tool, scope, utc_now()))


def granted(db: Database, process_id: str, tool: str) -> str | None:
    """Return how ``tool`` is allowed for the process (``process``, ``once``), or None."""
    rows = db.query("SELECT scope FROM tool_grants WHERE process_id = ? AND tool = ?",
                    (process_id, tool))
    scopes = {row["scope"] for row in rows}
    return "process" if "process" in scopes else ("once" if "once" in scopes else None)


def use_once(db: Database, process_id: str, tool: str) -> None:
    """Use up a ``once`` grant of ``tool``."""
    db.conn.execute("DELETE FROM tool_grants WHERE process_id = ? AND tool = ? AND"
                    " scope = 'once'", (process_id, tool))
