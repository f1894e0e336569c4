"""Concurrency: parallel ``vance delegate`` processes against one home (prints numbers only).

Phase 1: ``--workers`` workers (default 8), each running ``--calls`` (default
50) offline ``vance delegate --task … --json`` calls one after another, as
real subprocesses, all against one fresh ``VANCE_HOME`` (so the first calls
also race to create and migrate the state database). Every task matches a
recipe, so every call must start one process.

Phase 2: ``--rounds`` rounds (default 10) in which every worker at once
delegates with the same ``--name``: exactly one may win each round, the
others must fail cleanly with ``duplicate_process_name`` (exit 2).

Reported: wall time, throughput (delegates/s), per-call latency (median,
p95, max), CPU time per call (so the throughput ceiling of the machine's
cores is known), and the checks: exit codes, any "database is locked" (or other
error) on stderr, every process the calls reported present in the database
(one row per call), names unique, decision-log rows, one winner per
contested name. Nothing is asserted; a failed check is printed as FAIL.

Usage: python bench/concurrency.py [--workers 8] [--calls 50] [--rounds 10] [--keep]
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
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

TASKS = [
    "Write a short essay about the history of {topic}",
    "Translate the following paragraph into French: {topic} is on the menu",
    "Summarize this meeting transcript about {topic}",
    "Write a Python script that counts the {topic} entries in a CSV file",
    "Research the latest reports on {topic} and cite sources",
]
TOPICS = ["tea", "coffee", "bread", "cheese", "rivers", "bridges", "trains", "maps", "clocks",
          "bees"]


@dataclass
class Call:
    """One ``vance delegate`` subprocess."""

    worker: int
    code: int
    seconds: float
    stdout: str
    stderr: str

    def result(self) -> dict[str, object] | None:
        try:
            data = json.loads(self.stdout)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None


def _vance() -> list[str]:
    script = Path(sys.executable).with_name("vance")
    return [str(script)] if script.exists() else [sys.executable, "-m", "vance_cli"]


def _run(argv: list[str], env: dict[str, str], cwd: Path, worker: int) -> Call:
    start = time.perf_counter()
    done = subprocess.run([*_vance(), *argv], env=env, cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=300)
    return Call(worker, done.returncode, time.perf_counter() - start, done.stdout, done.stderr)


def _parallel(workers: int, job: object) -> list[Call]:
    calls: list[Call] = []
    lock = threading.Lock()
    start = threading.Barrier(workers)

    def body(worker: int) -> None:
        start.wait()
        for call in job(worker):  # type: ignore[operator]
            with lock:
                calls.append(call)

    threads = [threading.Thread(target=body, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return calls


def _children_cpu() -> float:
    """CPU seconds (user + system) used so far by finished child processes."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _check(label: str, ok: bool, detail: str = "") -> bool:
    print(f"  [{'ok' if ok else 'FAIL'}] {label}" + (f": {detail}" if detail else ""))
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--calls", type=int, default=50, help="delegates per worker")
    parser.add_argument("--rounds", type=int, default=10, help="contested-name rounds")
    parser.add_argument("--keep", action="store_true", help="keep the temporary home")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="vance-concurrency-"))
    cwd = home / "work"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VANCE_", "OPENAI_"))}
    env["VANCE_HOME"] = str(home / "home")

    def delegates(worker: int) -> list[Call]:
        out = []
        for i in range(args.calls):
            task = TASKS[(worker + i) % len(TASKS)].format(topic=TOPICS[i % len(TOPICS)])
            out.append(_run(["delegate", "--task", f"{task} (w{worker} #{i})", "--json"],
                            env, cwd, worker))
        return out

    print(f"phase 1: {args.workers} workers x {args.calls} offline delegates, one home, "
          f"{os.cpu_count()} cores")
    started, cpu_before = time.perf_counter(), _children_cpu()
    calls = _parallel(args.workers, delegates)
    wall, cpu = time.perf_counter() - started, _children_cpu() - cpu_before
    latencies = sorted(c.seconds for c in calls)
    total = len(calls)
    print(f"  wall {wall:.1f} s; throughput {total / wall:.1f} delegates/s; latency median "
          f"{statistics.median(latencies) * 1000:.0f} ms, p95 "
          f"{latencies[int(0.95 * (total - 1))] * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms")
    per_call, cores = cpu / max(1, total), os.cpu_count() or 1
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"  CPU {per_call * 1000:.0f} ms per delegate (user + system, mostly interpreter "
          f"start-up): {cores} idle cores would allow ~{cores / per_call:.1f} delegates/s; "
          f"load average {load}")

    conn = sqlite3.connect(home / "home" / "state" / "vance.db")
    rows = conn.execute("SELECT id, name FROM processes").fetchall()
    decisions = conn.execute("SELECT count(*) FROM decisions").fetchone()[0]
    ids = {pid for pid, _name in rows}
    results = [c.result() for c in calls]
    reported = [r["process"]["id"] for r in results  # type: ignore[index]
                if r and isinstance(r.get("process"), dict)]
    locked = [c for c in calls if "locked" in c.stderr.lower()]
    errors = [c for c in calls if c.code != 0 or c.stderr.strip()]
    _check("every call exited 0 with nothing on stderr", not errors,
           f"{len(errors)} did not; first: {errors[0].stderr.strip()[:200]!r}" if errors else "")
    _check('no "database is locked"', not locked, f"{len(locked)} calls" if locked else "")
    _check("every call matched and reported its process", len(reported) == total,
           f"{len(reported)} of {total}")
    _check(f"every process row present ({total})", len(rows) == total and set(reported) <= ids,
           f"{len(rows)} rows, {len(set(reported) - ids)} reported ids missing")
    names = Counter(name for _pid, name in rows)
    _check("names unique", all(n == 1 for n in names.values()), f"{len(names)} distinct")
    _check("one decision-log row per call", decisions == total, f"{decisions} rows")

    print(f"phase 2: {args.rounds} rounds, all {args.workers} workers delegate with the same "
          "--name at once")

    def contested(worker: int) -> list[Call]:
        return [_run(["delegate", "--task", f"Write a short essay about {TOPICS[r]} (w{worker})",
                      "--name", f"shared-{r}", "--json"], env, cwd, worker)
                for r in range(args.rounds)]

    started = time.perf_counter()
    contest = _parallel(args.workers, contested)
    wall2 = time.perf_counter() - started
    winners = Counter()
    for call in contest:
        data = call.result()
        if call.code == 0 and data and isinstance(data.get("process"), dict):
            winners[data["process"]["name"]] += 1  # type: ignore[index]
    losers = [c for c in contest if c.code != 0]
    clean = all(c.code == 2 and "duplicate_process_name" in c.stdout for c in losers)
    locked2 = [c for c in contest if "locked" in c.stderr.lower()]
    print(f"  wall {wall2:.1f} s for {len(contest)} delegates")
    _check("exactly one winner per contested name",
           sorted(winners.values()) == [1] * args.rounds, f"{dict(winners)}")
    _check("every other attempt failed cleanly (exit 2, duplicate_process_name)", clean,
           f"{len(losers)} losers")
    _check('no "database is locked"', not locked2, f"{len(locked2)} calls" if locked2 else "")
    rows2 = conn.execute("SELECT count(*) FROM processes WHERE name LIKE 'shared-%'").fetchone()[0]
    _check("one row per contested name", rows2 == args.rounds, f"{rows2} rows")
    conn.close()
    if args.keep:
        print(f"home kept: {home}")
    else:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
