from __future__ import annotations

import sqlite3
from pathlib import Path

from vance_cli.state.db import Database
from vance_cli.state.migrations import MIGRATIONS, migrate

EXPECTED_TABLES = {
    "migrations": ["name", "applied_at"],
    "processes": ["id", "tenant", "session", "name", "recipe", "engine", "title", "goal",
                  "params", "steer_content", "status", "close_reason", "parent_process_id",
                  "outcome", "created_at", "updated_at", "heartbeat_at", "worker_pid", "result",
                  "turns", "prompt", "state"],
    "process_transitions": ["id", "process_id", "from_status", "to_status", "close_reason",
                            "note", "at"],
    "events": ["id", "tenant", "recipient_process_id", "source_process_id", "kind", "payload",
               "created_at", "consumed_at"],
    "decisions": ["id", "created_at", "tenant", "session", "task_hash", "task", "mode", "model",
                  "endpoint", "raw_reply", "finish_reason", "decision", "recipe", "reason",
                  "rationale", "latency_ms", "prompt_tokens", "completion_tokens",
                  "process_id", "json_mode", "dry_run"],
    "messages": ["id", "process_id", "role", "kind", "content", "created_at", "turn", "model",
                 "tokens_in", "tokens_out", "meta"],
    "turns": ["process_id", "number", "started_at", "ended_at", "outcome", "worker_pid",
              "reason"],
    "llm_calls": ["id", "process_id", "turn", "purpose", "model", "endpoint", "tokens_in",
                  "tokens_out", "latency_ms", "finish_reason", "error", "created_at"],
    "wizard_uses": ["id", "tenant", "wizard", "used_at"],
    "tool_grants": ["process_id", "tool", "scope", "created_at"],
}


def _schema(path: Path) -> dict[str, list[str]]:
    conn = sqlite3.connect(path)
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {t: [c[1] for c in conn.execute(f"PRAGMA table_info({t})")] for t in tables}


def test_migrated_schema_is_pinned(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "v.db")
    db.close()
    assert _schema(tmp_path / "v.db") == EXPECTED_TABLES


def test_migrations_run_once(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "v.db")
    assert migrate(db) == []
    names = [r[0] for r in db.query("SELECT name FROM migrations ORDER BY rowid")]
    assert names == [name for name, _ in MIGRATIONS]
