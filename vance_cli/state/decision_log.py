"""The decision log: one row per selector call, in the state database (docs/delegate.md).

Invariants:
- A row holds the time, tenant, session, the task's SHA-256, the task text,
  how it was decided (mode, model, endpoint, JSON mode), the raw reply and
  finish reason, the decision, recipe, reason and rationale, latency and
  token counts, and the process a MATCH started.
- Never the API key: the endpoint is stored without credentials, and no
  field is taken from the client's configuration but the model name.
- Private tasks (``--no-log``, config ``log.tasks: false``): only the hash
  is kept; the task text, the raw reply and the rationale are left out too,
  because a model's reply and rationale often quote the task.
- All decision-log SQL lives here.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from vance_cli.base.clock import utc_now
from vance_cli.base.records import frozen
from vance_cli.state.db import Database, Row

if TYPE_CHECKING:
    from vance_cli.selector.decision import Decision

_COLUMNS = (
    "id, created_at, tenant, session, task_hash, task, mode, model, endpoint, json_mode,"
    " raw_reply, finish_reason, decision, recipe, reason, rationale, latency_ms,"
    " prompt_tokens, completion_tokens, process_id, dry_run"
)


def task_hash(task: str) -> str:
    """Return the SHA-256 of the task's UTF-8 text, as 64 hex characters."""
    return hashlib.sha256(task.encode("utf-8")).hexdigest()


@frozen
class LogEntry:
    """One decision-log row.

    Attributes mirror the columns; ``task``, ``raw_reply`` and ``rationale``
    are None for private tasks; ``latency_ms`` is the selection's wall time.
    """

    id: int
    created_at: str
    tenant: str
    session: str
    task_hash: str
    task: str | None
    mode: str
    model: str | None
    endpoint: str | None
    json_mode: str | None
    raw_reply: str | None
    finish_reason: str | None
    decision: str
    recipe: str | None
    reason: str | None
    rationale: str | None
    latency_ms: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    process_id: str | None
    dry_run: bool

    @classmethod
    def from_row(cls, row: Row) -> LogEntry:
        """Build an entry from a ``decisions`` row."""
        data = dict(row)
        data["dry_run"] = bool(data["dry_run"])
        return cls(**data)

    def to_json(self) -> dict[str, Any]:
        """Return the entry as ``vance log --json`` prints it (camelCase keys)."""
        return {
            "id": self.id, "createdAt": self.created_at, "session": self.session,
            "taskHash": self.task_hash, "task": self.task, "mode": self.mode,
            "model": self.model, "endpoint": self.endpoint, "jsonMode": self.json_mode,
            "rawReply": self.raw_reply, "finishReason": self.finish_reason,
            "decision": self.decision, "recipe": self.recipe, "reason": self.reason,
            "rationale": self.rationale, "latencyMs": self.latency_ms,
            "promptTokens": self.prompt_tokens, "completionTokens": self.completion_tokens,
            "processId": self.process_id, "dryRun": self.dry_run,
        }


def record(db: Database, tenant: str, session: str, task: str, decision: Decision,
           keep_task: bool = True, process_id: str | None = None, dry_run: bool = False) -> int:
    """Append one selector call to the log.

    Args:
        db: the state database.
        tenant: tenant id.
        session: session id.
        task: the task text (hashed always; stored only when ``keep_task``).
        decision: the selector's decision with its trace.
        keep_task: False for private tasks: task, raw reply and rationale are not stored.
        process_id: the process a MATCH started, if any.
        dry_run: the call decided only (``--dry-run``).

    Returns:
        The new row id.
    """
    trace = decision.trace
    values = (
        utc_now(), tenant, session, task_hash(task), task if keep_task else None,
        decision.mode.value, trace.model, trace.endpoint, trace.json_mode,
        trace.raw_reply if keep_task else None, trace.finish_reason, decision.decision,
        decision.recipe.name if decision.recipe else None,
        decision.reason.value if decision.reason else None,
        decision.rationale if keep_task else None, trace.latency_ms, trace.prompt_tokens,
        trace.completion_tokens, process_id, int(dry_run),
    )
    columns = [c.strip() for c in _COLUMNS.split(",")][1:]
    with db.transaction() as conn:
        row = conn.execute(
            f"INSERT INTO decisions ({', '.join(columns)})"
            f" VALUES ({', '.join('?' for _ in columns)}) RETURNING id", values).fetchall()[0]
    return int(row[0])


def link_process(db: Database, log_id: int, process_id: str) -> None:
    """Record that the decision of row ``log_id`` started ``process_id`` (after a fallback)."""
    with db.transaction() as conn:
        conn.execute("UPDATE decisions SET process_id = ? WHERE id = ?", (process_id, log_id))


def recent(db: Database, tenant: str, limit: int = 20) -> list[LogEntry]:
    """Return the tenant's newest ``limit`` entries, newest first."""
    rows = db.query(f"SELECT {_COLUMNS} FROM decisions WHERE tenant = ? ORDER BY id DESC LIMIT ?",
                    (tenant, max(0, int(limit))))
    return [LogEntry.from_row(r) for r in rows]
