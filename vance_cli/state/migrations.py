"""Ordered, named schema migrations, recorded in the ``migrations`` table.

Each migration is a function applied once, inside its own write transaction,
in list order (as llm's and sqlite-utils' migrations). Two processes opening a
fresh database at once serialise on the write lock; the second finds the
migration recorded and skips it. Never edit a released migration: append a
new one. ``tests/unit/state/test_migrations.py`` pins the resulting schema.

Each migration has a PostgreSQL twin of the same name (``migrations_pg.py``);
``steps`` lists the ones of a dialect. On PostgreSQL they are applied only by
``vance migrate``: every write transaction takes the one advisory write lock
(``dialect.POSTGRES``), so two runs at once serialise as on SQLite.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from vance_cli.base.clock import utc_now
from vance_cli.state.dialect import SQLITE, Connection, Dialect
from vance_cli.state.migrations_pg import TWINS

if TYPE_CHECKING:
    from vance_cli.state.db import Database

Migration = Callable[[Connection], None]

MIGRATIONS: list[tuple[str, Migration]] = []
"""(name, function) in apply order."""


def migration(func: Migration) -> Migration:
    """Register ``func`` as the next migration, named after the function."""
    MIGRATIONS.append((func.__name__, func))
    return func


def portable(func: Migration) -> Migration:
    """Register ``func`` as its own PostgreSQL twin: its SQL runs on both stores as written."""
    TWINS[func.__name__] = func
    return func


@migration
def m001_processes(conn: Connection) -> None:
    """Processes: one row per started recipe run; name unique per (tenant, session)."""
    conn.execute("""
        CREATE TABLE processes (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            session TEXT NOT NULL,
            name TEXT NOT NULL,
            recipe TEXT NOT NULL,
            engine TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            goal TEXT NOT NULL DEFAULT '',
            params TEXT NOT NULL DEFAULT '{}',
            steer_content TEXT,
            status TEXT NOT NULL,
            close_reason TEXT,
            parent_process_id TEXT REFERENCES processes(id),
            result TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            heartbeat_at TEXT,
            worker_pid INTEGER,
            UNIQUE (tenant, session, name)
        )""")
    conn.execute("CREATE INDEX processes_parent ON processes(parent_process_id)")
    conn.execute("CREATE INDEX processes_status ON processes(tenant, status)")
    conn.execute("""
        CREATE TABLE process_transitions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            process_id TEXT NOT NULL REFERENCES processes(id),
            from_status TEXT,
            to_status TEXT NOT NULL,
            close_reason TEXT,
            note TEXT,
            at TEXT NOT NULL
        )""")
    conn.execute("CREATE INDEX process_transitions_process ON process_transitions(process_id)")


@migration
def m002_events(conn: Connection) -> None:
    """Pending queue: events addressed to a process (e.g. a child closed)."""
    conn.execute("""
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            recipient_process_id TEXT NOT NULL,
            source_process_id TEXT,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            consumed_at TEXT
        )""")
    conn.execute("CREATE INDEX events_recipient ON events(tenant, recipient_process_id, id)")


@migration
def m003_decisions(conn: Connection) -> None:
    """Decision log: one row per selector call (never the API key)."""
    conn.execute("""
        CREATE TABLE decisions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at TEXT NOT NULL,
            tenant TEXT NOT NULL,
            session TEXT NOT NULL,
            task_hash TEXT NOT NULL,
            task TEXT,
            mode TEXT NOT NULL,
            model TEXT,
            endpoint TEXT,
            raw_reply TEXT,
            finish_reason TEXT,
            decision TEXT NOT NULL,
            recipe TEXT,
            reason TEXT,
            rationale TEXT,
            latency_ms REAL,
            prompt_tokens INTEGER,
            completion_tokens INTEGER
        )""")


@migration
def m004_decision_links(conn: Connection) -> None:
    """Decision log: the process a MATCH started, the JSON mode sent, dry runs; tenant index."""
    conn.execute("ALTER TABLE decisions ADD COLUMN process_id TEXT")
    conn.execute("ALTER TABLE decisions ADD COLUMN json_mode TEXT")
    conn.execute("ALTER TABLE decisions ADD COLUMN dry_run INTEGER NOT NULL DEFAULT 0")
    conn.execute("CREATE INDEX decisions_tenant ON decisions(tenant, id)")


@migration
def m005_runtime(conn: Connection) -> None:
    """The runtime: a process's messages (inputs and replies), its turns and its LLM calls.

    ``processes.result`` becomes ``outcome`` (the structured end: a reason, a recipe path)
    and a new ``result`` holds the latest result text; ``turns`` counts the turns run;
    ``prompt`` keeps the recipe's prompt as it was when the process started.
    """
    conn.execute("ALTER TABLE processes RENAME COLUMN result TO outcome")
    conn.execute("ALTER TABLE processes ADD COLUMN result TEXT")
    conn.execute("ALTER TABLE processes ADD COLUMN turns INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE processes ADD COLUMN prompt TEXT")
    conn.execute("""
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            process_id TEXT NOT NULL REFERENCES processes(id),
            role TEXT NOT NULL,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            created_at TEXT NOT NULL,
            turn INTEGER,
            model TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            meta TEXT NOT NULL DEFAULT '{}'
        )""")
    conn.execute("CREATE INDEX messages_process ON messages(process_id, id)")
    conn.execute("""
        CREATE TABLE turns (
            process_id TEXT NOT NULL REFERENCES processes(id),
            number INTEGER NOT NULL,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            outcome TEXT NOT NULL,
            worker_pid INTEGER,
            reason TEXT,
            PRIMARY KEY (process_id, number)
        )""")
    conn.execute("""
        CREATE TABLE llm_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            process_id TEXT NOT NULL REFERENCES processes(id),
            turn INTEGER,
            purpose TEXT NOT NULL,
            model TEXT,
            endpoint TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            latency_ms REAL,
            finish_reason TEXT,
            error TEXT,
            created_at TEXT NOT NULL
        )""")
    conn.execute("CREATE INDEX llm_calls_process ON llm_calls(process_id, turn)")


@migration
def m006_process_state(conn: Connection) -> None:
    """An orchestrating engine's state between turns (phases, heads, the task tree)."""
    conn.execute("ALTER TABLE processes ADD COLUMN state TEXT")


@migration
def m007_calls_without_process(conn: Connection) -> None:
    """LLM calls outside a process (``vance wizard check``): ``process_id`` may be null.

    SQLite cannot drop a NOT NULL in place: the table is rebuilt with its rows and index.
    """
    conn.execute("""
        CREATE TABLE llm_calls_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            process_id TEXT REFERENCES processes(id),
            turn INTEGER,
            purpose TEXT NOT NULL,
            model TEXT,
            endpoint TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            latency_ms REAL,
            finish_reason TEXT,
            error TEXT,
            created_at TEXT NOT NULL
        )""")
    conn.execute("INSERT INTO llm_calls_new SELECT id, process_id, turn, purpose, model,"
                 " endpoint, tokens_in, tokens_out, latency_ms, finish_reason, error,"
                 " created_at FROM llm_calls")
    conn.execute("DROP TABLE llm_calls")
    conn.execute("ALTER TABLE llm_calls_new RENAME TO llm_calls")
    conn.execute("CREATE INDEX llm_calls_process ON llm_calls(process_id, turn)")


@migration
def m008_wizard_uses(conn: Connection) -> None:
    """One row per wizard prompt rendered for a person (the quick-start cards rank by it)."""
    conn.execute("""
        CREATE TABLE wizard_uses (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            wizard TEXT NOT NULL,
            used_at TEXT NOT NULL
        )""")
    conn.execute("CREATE INDEX wizard_uses_tenant ON wizard_uses(tenant, wizard)")


@portable
@migration
def m009_tool_grants(conn: Connection) -> None:
    """Tools a person allowed for one process ("always for this process", an approved call).

    The calls themselves are messages (role ``tool``, kind ``tool_call``: docs/tools.md).
    """
    conn.execute("""
        CREATE TABLE tool_grants (
            process_id TEXT NOT NULL REFERENCES processes(id),
            tool TEXT NOT NULL,
            scope TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (process_id, tool, scope)
        )""")


@portable
@migration
def m010_calls_in_flight(conn: Connection) -> None:
    """The LLM call a turn has under way, with the text chunks come so far (its tokens out).

    Written at the worker's first heartbeat after the call starts, refreshed by later
    ones, removed when the call is stored; stale detection stores what a killed worker left
    (docs/processes.md#heartbeat).
    """
    conn.execute("""
        CREATE TABLE calls_in_flight (
            process_id TEXT NOT NULL REFERENCES processes(id),
            turn INTEGER NOT NULL,
            purpose TEXT NOT NULL,
            model TEXT,
            endpoint TEXT,
            tokens_out INTEGER NOT NULL DEFAULT 0,
            started_at TEXT NOT NULL,
            PRIMARY KEY (process_id, turn)
        )""")

@migration
def m011_team_workers(conn: Connection) -> None:
    """Who runs a turn, across hosts: the worker's identity, takeovers, children's keys.

    ``worker`` names the worker that holds a RUNNING process (``host:pid`` for a
    local worker, ``host:pid:job.attempt`` for a team job): heartbeats and settles
    compare-and-set on it. ``takeovers`` counts the times a stalled turn was taken
    over by another worker (``process.max_takeovers``), and an LLM call's ``attempt`` the
    times its turn was run (a taken-over turn makes its calls again). ``spawn_key`` keys a child by
    its parent's turn and label, so a retried turn finds its children instead of
    spawning them twice (docs/teams.md). On PostgreSQL the twin also creates the job
    queue's schema (procrastinate).
    """
    conn.execute("ALTER TABLE processes ADD COLUMN worker TEXT")
    conn.execute("ALTER TABLE processes ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE processes ADD COLUMN spawn_key TEXT")
    conn.execute("ALTER TABLE llm_calls ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1")
    conn.execute("CREATE UNIQUE INDEX processes_spawn_key ON processes(parent_process_id,"
                 " spawn_key) WHERE spawn_key IS NOT NULL")



@migration
def m012_stream_chunks(conn: Connection) -> None:
    """A turn's live output in batches, for followers on other hosts (team mode).

    Keyed by process, turn and a sequence number within the turn; ``kind`` is ``text``,
    ``note`` (a line vance adds: the output was cut) or ``end`` (the stream closed).
    Written only on a team's PostgreSQL (docs/processes.md#follow).
    """
    conn.execute("""
        CREATE TABLE stream_chunks (
            process_id TEXT NOT NULL REFERENCES processes(id),
            turn INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (process_id, turn, seq)
        )""")

def steps(dialect: Dialect) -> list[tuple[str, Migration]]:
    """Return (name, function) of every migration of ``dialect``, in apply order."""
    if dialect is SQLITE:
        return list(MIGRATIONS)
    return [(name, TWINS[name]) for name, _ in MIGRATIONS]


def migrate(db: Database) -> list[str]:
    """Apply every migration of the database's dialect not yet recorded.

    Returns:
        Names of the migrations applied now (empty when up to date).
    """
    conn = db.conn
    todo = steps(db.dialect)
    if db.dialect is not SQLITE:
        with db.transaction():  # two first runs at once: one creates the table
            conn.execute("CREATE TABLE IF NOT EXISTS migrations"
                         " (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    else:
        conn.execute("CREATE TABLE IF NOT EXISTS migrations"
                     " (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM migrations").fetchall()}
    if all(name in done for name, _ in todo):
        return []
    applied: list[str] = []
    for name, func in todo:
        with db.transaction():
            # re-check under the write lock: another process may have won the race
            if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                continue
            func(conn)
            conn.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
                         (name, utc_now()))
            applied.append(name)
    return applied


def pending(conn: Connection, dialect: Dialect = SQLITE) -> list[str]:
    """Return the names of the migrations not yet recorded, in order, without writing.

    For a database opened read-only, or a PostgreSQL database before a command
    uses it: it can be used only when this is empty.
    """
    if dialect is SQLITE:
        known = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                             " AND name = 'migrations'").fetchone()
    else:
        known = conn.execute("SELECT to_regclass('migrations')").fetchone()[0]
    done = ({row[0] for row in conn.execute("SELECT name FROM migrations").fetchall()}
            if known else set())
    return [name for name, _ in MIGRATIONS if name not in done]
