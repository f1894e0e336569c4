from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import postgres
import pytest
from helpers import run_cli

from vance_cli.state.db import Database
from vance_cli.state.dialect import POSTGRES
from vance_cli.state.migrations import MIGRATIONS, migrate, steps
from vance_cli.state.migrations_pg import TWINS
from vance_cli.state.stores import open_state

EXPECTED_TABLES = {
    "migrations": ["name", "applied_at"],
    "processes": ["id", "tenant", "session", "name", "recipe", "engine", "title", "goal",
                  "params", "steer_content", "status", "close_reason", "parent_process_id",
                  "outcome", "created_at", "updated_at", "heartbeat_at", "worker_pid", "result",
                  "turns", "prompt", "state", "worker", "takeovers", "spawn_key"],
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
                  "tokens_out", "latency_ms", "finish_reason", "error", "created_at", "attempt"],
    "wizard_uses": ["id", "tenant", "wizard", "used_at"],
    "tool_grants": ["process_id", "tool", "scope", "created_at"],
    "calls_in_flight": ["process_id", "turn", "purpose", "model", "endpoint", "tokens_out",
                        "started_at"],
    "stream_chunks": ["process_id", "turn", "seq", "kind", "text", "created_at"],
}


def _schema(path: Path) -> dict[str, list[str]]:
    conn = sqlite3.connect(path)
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {t: [c[1] for c in conn.execute(f"PRAGMA table_info({t})")] for t in tables}


@pytest.mark.sqlite_only
def test_migrated_schema_is_pinned(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "v.db")
    db.close()
    assert _schema(tmp_path / "v.db") == EXPECTED_TABLES


@pytest.mark.sqlite_only
def test_migrations_run_once(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "v.db")
    assert migrate(db) == []
    names = [r[0] for r in db.query("SELECT name FROM migrations ORDER BY rowid")]
    assert names == [name for name, _ in MIGRATIONS]


@pytest.mark.sqlite_only
def test_every_migration_has_its_postgres_twin_in_order() -> None:
    names = [name for name, _ in MIGRATIONS]
    assert sorted(TWINS) == sorted(names)  # registered as modules load: a twin after a portable
    assert [name for name, _ in steps(Database.dialect)] == names
    assert [name for name, _ in steps(POSTGRES)] == names
    assert [func for _, func in steps(POSTGRES)] == [TWINS[name] for name in names]


def _pg_schema(url: str) -> dict[str, list[str]]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' ORDER BY table_name, ordinal_position").fetchall()
    schema: dict[str, list[str]] = {}
    for table, column in rows:
        schema.setdefault(table, []).append(column)
    return schema


@pytest.mark.postgres  # the PostgreSQL store itself: run there only (tests/conftest.py)
def test_vance_migrate_gives_postgres_the_same_tables_and_columns() -> None:
    with postgres.fresh_database(migrated=False) as url:
        first = run_cli(["migrate", "--json"], env={"VANCE_STATE_URL": url})
        again = run_cli(["migrate"], env={"VANCE_STATE_URL": url})
        schema = _pg_schema(url)
    assert first.exit_code == 0, first.stderr
    assert first.json()["applied"] == [name for name, _ in MIGRATIONS]
    assert again.exit_code == 0 and again.stdout.endswith(": up to date\n")
    assert schema["processes"][-8:] == ["rowid", "result", "turns", "prompt", "state", "worker",
                                        "takeovers", "spawn_key"]
    schema["processes"].remove("rowid")  # SQLite's implicit rowid, a column of its own here
    queue = {t for t in schema if t.startswith("procrastinate_")}  # the job queue's own tables
    assert {"procrastinate_jobs", "procrastinate_workers", "procrastinate_events"} <= queue
    for table in queue:
        del schema[table]
    assert {t: sorted(c) for t, c in schema.items()} == \
        {t: sorted(c) for t, c in EXPECTED_TABLES.items()}


@pytest.mark.postgres  # the PostgreSQL store itself: run there only (tests/conftest.py)
def test_other_commands_refuse_an_unmigrated_postgres_database_naming_vance_migrate() -> None:
    with postgres.fresh_database(migrated=False) as url:
        result = run_cli(["process", "list"], env={"VANCE_STATE_URL": url})
        tables = _pg_schema(url)
    assert result.exit_code == 1
    assert f"is not migrated ({len(MIGRATIONS)} migrations pending, the last" \
           f" {MIGRATIONS[-1][0]})" in result.stderr
    assert "run 'vance migrate'" in result.stderr
    assert tables == {}  # refused before anything was written


@pytest.mark.postgres  # the PostgreSQL store itself: run there only (tests/conftest.py)
def test_two_migrations_at_once_serialise_on_the_write_lock() -> None:
    from vance_cli.state.pg import PgDatabase

    applied: list[tuple[str, ...]] = []
    failed: list[BaseException] = []

    def run(url: str) -> None:
        try:
            db = PgDatabase.connect(url, migrating=True)
            applied.append(db.applied)
            db.close()
        except BaseException as exc:
            failed.append(exc)

    with postgres.fresh_database(migrated=False) as url:
        threads = [threading.Thread(target=run, args=(url,)) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        db = open_state(url)
        names = [row[0] for row in db.query("SELECT name FROM migrations ORDER BY name")]
        db.close()
    assert failed == []
    assert sorted(len(a) for a in applied) == [0, 0, len(MIGRATIONS)] or \
        sum(len(a) for a in applied) == len(MIGRATIONS)
    assert names == [name for name, _ in MIGRATIONS]


@pytest.mark.postgres  # the PostgreSQL store itself: run there only (tests/conftest.py)
def test_an_unreachable_server_is_a_state_error_without_the_password() -> None:
    assert postgres.ADMIN_URL is not None
    url = postgres.database_url("vance_no_such_database").replace(
        "postgresql://postgres@", "postgresql://postgres:s3cret@")
    result = run_cli(["process", "list"], env={"VANCE_STATE_URL": url})
    assert result.exit_code == 1
    assert "cannot reach state database postgresql://postgres:****@/" in result.stderr
    assert "vance_no_such_database" in result.stderr and "s3cret" not in result.stderr
