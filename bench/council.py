"""Print how long a council turn takes when every LLM reply takes 1 s.

Run: python bench/council.py [--delay 1.0] [--runs 3]   (temporary VANCE_HOME, a scripted
LLM server on 127.0.0.1 from tests/llm_server.py; prints numbers, asserts nothing)

The ``council-three-perspectives`` recipe with three fixed heads (``--param heads:=…``, so
there is no persona call) runs through ``vance process create --wait`` in a real
``python -m vance_cli``: three head replies and one synthesis, each delayed ``--delay``
seconds. Heads run side by side, so the turn should take about two delays (heads, then
the synthesis) plus start-up; run one after the other it would take four. The same
council with ``maxParallel:=1`` is printed beside it for comparison, and the side-by-side
council once more in a program that imported ``openai`` before the command ran: a fresh
program's first LLM call imports it inside the turn (about 0.5 s on 2 CPUs), which a
long-lived one (the shell, ``vance mcp``, a worker's later turns) has done already. Two
figures each: the command's wall time and the turn's own, from its ``turns`` row.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from llm_server import ScriptedLLMServer

HEADS = json.dumps([{"name": "money", "persona": "Watches cost."},
                    {"name": "people", "persona": "Speaks for customers."},
                    {"name": "risk", "persona": "Looks for what can go wrong."}])


def turn_seconds(home: str, process_id: str) -> float:
    """Return how long the process's first turn ran, from its ``turns`` row."""
    [db] = Path(home).rglob("*.db")
    with sqlite3.connect(db) as conn:
        started, ended = conn.execute("SELECT started_at, ended_at FROM turns WHERE"
                                      " process_id = ? AND number = 1", (process_id,)).fetchone()
    return (datetime.fromisoformat(ended.replace("Z", "+00:00"))
            - datetime.fromisoformat(started.replace("Z", "+00:00"))).total_seconds()


WARM = ("import sys, openai; from vance_cli.cli.boundary import main; "
        "sys.argv[0] = 'vance'; main()")
"""The command in a program that imported ``openai`` before it ran (as a long-lived one has)."""


def council(env: dict[str, str], server: ScriptedLLMServer, delay: float, name: str,
            *extra: str, warm: bool = False) -> tuple[float, float]:
    """Run one council turn; return the command's wall time and the turn's, in seconds.

    ``warm``: ``openai`` is imported before the command starts (the first LLM call of a
    fresh program imports it inside the turn: about half a second on a 2-CPU machine).
    """
    for view in ("VIEW-1", "VIEW-2", "VIEW-3"):
        server.reply(view, delay=delay)
    server.reply("SYNTHESIS", delay=delay)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *(("-c", WARM) if warm else ("-m", "vance_cli")), "process", "create",
         "--recipe", "council-three-perspectives", "--name", name, "--goal", "Open a second shop?",
         "--param", f"heads:={HEADS}", *extra, "--wait", "--json"],
        env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or json.loads(proc.stdout)["result"] != "SYNTHESIS":
        raise SystemExit(proc.stderr or proc.stdout)
    return elapsed, turn_seconds(env["VANCE_HOME"], json.loads(proc.stdout)["id"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=1.0, help="seconds per LLM reply")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="vance-bench-")
    server = ScriptedLLMServer().start()
    env = {**os.environ, "VANCE_HOME": home, **server.env(timeout=30)}
    try:
        for label, extra, warm in (
                ("side by side (maxParallel 4)", (), False),
                ("one after the other (maxParallel 1)", ("--param", "maxParallel:=1"), False),
                ("side by side, openai imported before", (), True)):
            runs = [council(env, server, args.delay, f"c-{label[:4]}-{warm:d}-{n}", *extra,
                            warm=warm) for n in range(args.runs)]
            for what, samples in (("command", [r[0] for r in runs]),
                                  ("turn", [r[1] for r in runs])):
                print(f"council {what:<8} {label:<40} median {statistics.median(samples):5.2f} s"
                      f"  min {min(samples):5.2f}  max {max(samples):5.2f}"
                      f"  (n={len(samples)}, {args.delay:g} s per reply)")
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
