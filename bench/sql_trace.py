"""The SQL a 4-phase vogon run costs: statements, write transactions, loads, erased events.

Run: python bench/sql_trace.py [--statements]
(temporary VANCE_HOME, the test suite's scripted LLM server on 127.0.0.1;
prints numbers, asserts nothing)

The run is the bundled ``essay-pipeline`` recipe (vogon, four phases, no
checkpoint): the process is created, then ``processes.runtime.drive`` runs
it to its close, as a worker does. Counted from the workspace's database
connection (sqlite3's ``set_trace_callback``, which sees every statement the
connection executes, the transaction control included):

- statements, by their first word (SELECT, INSERT, UPDATE, DELETE, BEGIN …);
- write transactions (``BEGIN IMMEDIATE``);
- events inserted, and statements that consume events (``UPDATE events``: a child's
  events its orchestrator forgets at once, or a turn's claim taking its inputs);
- calls of ``load_process`` and ``find_recipe`` (``cProfile``'s call counts).

``--statements`` also prints every statement, in order.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import os
import pstats
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from llm_server import ScriptedLLMServer

TASK = "Write a short essay about the history of tea"
PHASES = ("OUTLINE: 1. China 2. Trade", "DRAFT: Tea began in China",
          "REVIEW: the trade section needs dates", "FINAL: A Short History of Tea")
COUNTED_CALLS = ("load_process", "find_recipe")
"""Functions whose calls are counted (by name, in any module)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--statements", action="store_true", help="print every statement")
    args = parser.parse_args()
    server = ScriptedLLMServer().start()
    os.environ["VANCE_HOME"] = tempfile.mkdtemp(prefix="vance-trace-")
    os.environ.update(server.env(timeout=30))
    from vance_cli.base.config import load_settings
    from vance_cli.processes.model import ProcessSpec
    from vance_cli.processes.records import create_process
    from vance_cli.processes.runtime import drive
    from vance_cli.workspace import Workspace

    ws = Workspace(load_settings())
    ws.catalog()
    ws.db  # noqa: B018  (opened and migrated before the count starts)
    for text in PHASES:
        server.reply(text, chunks=3)
    statements: list[str] = []
    ws.db.conn.set_trace_callback(statements.append)
    profile = cProfile.Profile()
    profile.enable()
    process = create_process(ws, ProcessSpec(recipe="essay-pipeline", name="tea", goal=TASK))
    report = drive(ws, process.id)
    profile.disable()
    ws.db.conn.set_trace_callback(None)
    ws.close()
    server.stop()

    kinds = collections.Counter(s.split(None, 1)[0].upper() for s in statements)
    writes = sum(s.strip().upper().startswith("BEGIN IMMEDIATE") for s in statements)
    inserted = sum(s.lstrip().upper().startswith("INSERT INTO EVENTS") for s in statements)
    consumed = sum(s.lstrip().upper().startswith("UPDATE EVENTS") for s in statements)
    calls = collections.Counter[str]()
    for (_, _, name), row in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if name in COUNTED_CALLS:
            calls[name] += row[1]
    print(f"run: essay-pipeline (vogon, {len(PHASES)} phases), ended"
          f" {report.process.status.value}/{report.process.close_reason}")
    print(f"SQL statements: {len(statements)}   write transactions: {writes}")
    print("by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    print(f"events inserted: {inserted}   event-consuming statements: {consumed}")
    print("calls: " + ", ".join(f"{name} {calls[name]}" for name in COUNTED_CALLS))
    if args.statements:
        for number, statement in enumerate(statements, 1):
            print(f"{number:4}  {' '.join(statement.split())}")


if __name__ == "__main__":
    main()
