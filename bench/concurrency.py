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

Turns (``--turns N``, instead of phases 1 and 2): N ford turns (``quick-lookup``
processes, one LLM call each) against the tests' scripted OpenAI-compatible SSE
server on 127.0.0.1 (``--chunks`` chunks, ``--llm-delay`` seconds per reply, an
answer of its own for every question), created ``--creators`` at a time, on each
``--store``:

- ``sqlite``: one host, the default store; each ``process create`` starts a
  detached worker for its process, as on any laptop.
- ``postgresql``: a team on the server ``--postgres`` names (a database of its
  own, dropped after): ``--hosts`` hosts, each a PID (and UTS) namespace of its
  own (``unshare``, as root; plain processes otherwise, and the output says so)
  with a home of its own running ``--workers-per-host`` ``vance worker -c
  --concurrency``; the processes are created from a third home. The workers are
  started and ready, and have each run a warm-up turn, before the clock starts.
  ``--drain`` adds a second team run where every turn is queued before the
  workers start and the clock starts with them (what the team does with work
  waiting, not held back by the creates).

Reported side by side: turns/s (first create to last turn settled), latency per
turn (create to its turn settled: median, p95, max), CPU (the creates; the
workers: each detached worker's whole life, or the team workers' time during
the run; the PostgreSQL server's, when it runs here), and the checks: every
process settled IDLE with its own reply, each (process, turn) ran once with one
LLM call, no STALE, no takeover, and how the turns spread over the hosts.

Usage: python bench/concurrency.py [--workers 8] [--calls 50] [--rounds 10] [--keep]
       python bench/concurrency.py --turns 80 [--store both] [--postgres URL]
           [--llm-delay 0.2] [--hosts 2] [--workers-per-host 2] [--concurrency 4]
           [--drain] [--plain-hosts] [--no-warmup]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

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


# --- turns phase ------------------------------------------------------------------------------

QUESTION = "Question #{n}: what is the capital of country {n}?"
ANSWER = "Answer #{n}: the capital of country {n} is City {n}, on the river {n}."


def _answer(req: object) -> str:
    """The scripted LLM's reply to one chat request: the answer to its question's number."""
    found = re.search(r"Question #(\d+)", getattr(req, "body", b"").decode("utf-8", "replace"))
    return ANSWER.format(n=found.group(1)) if found else "No question found."


def _llm_server(delay: float, chunks: int) -> Any:
    """Start the scripted OpenAI-compatible SSE server of the tests, answering every request."""
    tests = str(Path(__file__).resolve().parent.parent / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from llm_server import ScriptedLLMServer

    server = ScriptedLLMServer().start()
    server.always(_answer, delay=delay, chunks=chunks)
    return server


def _set_subreaper() -> None:
    """Become the subreaper of orphaned descendants (detached workers): reaped and timed here."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _reap_all(deadline: float) -> int:
    """Wait for every child left (orphaned workers); return how many were reaped."""
    reaped = 0
    while time.monotonic() < deadline:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            time.sleep(0.05)
        else:
            reaped += 1
    return reaped


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields from the state on (3rd field)


def _tree_cpu(root: int) -> float:
    """CPU seconds of a live process tree: every member's own time, plus the root's reaped ones."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            parents[int(entry.name)] = int(fields[1])
    members, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in members:
                members.add(pid)
                frontier.append(pid)
    total = 0.0
    for pid in members:
        fields = _stat(pid)
        if fields is not None:  # utime stime (cutime cstime: children reaped, for the root)
            total += int(fields[11]) + int(fields[12])
            if pid == root:
                total += int(fields[13]) + int(fields[14])
    return total / tick


def _postmaster(url: str) -> int | None:
    """The pid of the PostgreSQL server at ``url`` when it runs on this machine (else None)."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
        return int(Path(row[0], "postmaster.pid").read_text().split()[0]) if row else None
    except (OSError, ValueError, psycopg.Error):
        return None


class Store:
    """Read access to one run's state: a SQLite file or a PostgreSQL database."""

    def __init__(self, target: Path | str) -> None:
        self.target = target
        self._conn: Any = None

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        if self._conn is None:
            if isinstance(self.target, Path):
                self._conn = sqlite3.connect(f"file:{self.target}?mode=ro", uri=True)
            else:
                import psycopg

                self._conn = psycopg.connect(self.target, autocommit=True)
        return list(self._conn.execute(sql).fetchall())

    def settled(self) -> int:
        try:
            return int(self.query(
                "SELECT count(*) FROM processes p JOIN turns t ON t.process_id = p.id"
                " WHERE t.ended_at IS NOT NULL AND p.status IN ('IDLE', 'CLOSED')")[0][0])
        except (sqlite3.Error, OSError):
            return 0  # the file is not made yet

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


@dataclass
class Created:
    """One ``vance process create`` and when it started (wall clock)."""

    n: int
    started: float
    call: Call

    def process_id(self) -> str | None:
        data = self.call.result()
        return str(data["id"]) if data and "id" in data else None


def _stamp(text: str) -> float:
    """Seconds since the epoch of a stored ``…T…Z`` timestamp."""
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass
class TurnRun:
    """What one store's run measured."""

    label: str
    turns: int
    wall: float = 0.0
    create_wall: float = 0.0
    latencies: list[float] = field(default_factory=list)
    runs: list[float] = field(default_factory=list)
    """Each turn's own time, started to ended."""
    cpu: dict[str, float] = field(default_factory=dict)
    checks: list[tuple[str, bool, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _create_all(turns: int, creators: int, env: dict[str, str], cwd: Path,
                question: str = QUESTION) -> list[Created]:
    """Create ``turns`` quick-lookup processes from ``creators`` threads; return them by number."""
    numbers = iter(range(turns))
    lock = threading.Lock()
    made: list[Created] = []

    def body(worker: int) -> list[Call]:
        while True:
            with lock:
                n = next(numbers, None)
            if n is None:
                return []
            started = time.time()
            call = _run(["process", "create", "--recipe", "quick-lookup", "--goal",
                         question.format(n=n), "--json"], env, cwd, worker)
            with lock:
                made.append(Created(n, started, call))

    _parallel(creators, body)
    return sorted(made, key=lambda c: c.n)


def _wait_settled(store: Store, turns: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if store.settled() >= turns:
            return True
        time.sleep(0.1)
    return False


def _measure(run: TurnRun, store: Store, made: list[Created], server: Any) -> None:
    """Fill ``run``'s latencies, wall and checks from the store and the LLM server."""
    by_id = {c.process_id(): c for c in made if c.process_id()}
    rows = [r for r in store.query(
        "SELECT p.id, p.goal, p.status, p.close_reason, p.result, p.turns, p.takeovers,"
        " p.worker FROM processes p") if r[0] in by_id]
    turn_rows = [r for r in store.query(
        "SELECT process_id, number, ended_at, outcome, started_at FROM turns") if r[0] in by_id]
    running = Counter(r[0] for r in store.query(
        "SELECT process_id FROM process_transitions WHERE to_status = 'RUNNING'"))
    calls = Counter(r[0] for r in store.query("SELECT process_id FROM llm_calls"))
    replies = Counter(r[0] for r in store.query(
        "SELECT process_id FROM messages WHERE role = 'assistant'"))
    ended: dict[str, float] = {}
    per_turn = Counter((r[0], r[1]) for r in turn_rows)
    for process_id, _number, ended_at, _outcome, started_at in turn_rows:
        if ended_at:
            ended[process_id] = max(ended.get(process_id, 0.0), _stamp(ended_at))
            run.runs.append(_stamp(ended_at) - _stamp(started_at))
    run.runs.sort()
    run.latencies = sorted(ended[pid] - c.started for pid, c in by_id.items() if pid in ended)
    first = min((c.started for c in made), default=0.0)
    run.wall = max(ended.values(), default=first) - first
    failed = [c for c in made if c.call.code != 0 or not c.process_id()]
    run.checks.append(("every create exited 0 and printed its process", not failed,
                       f"{len(failed)} did not; first: {failed[0].call.stderr.strip()[:200]!r}"
                       if failed else f"{len(made)}"))
    wrong = [r for r in rows if r[2] != "IDLE" or by_id.get(r[0]) is None
             or r[4] != ANSWER.format(n=by_id[r[0]].n)]
    run.checks.append(("every process settled IDLE with its own reply",
                       not wrong and len(rows) == run.turns,
                       f"{len(rows) - len(wrong)} of {run.turns}"
                       + (f"; first wrong: {wrong[0][2]} {str(wrong[0][4])[:60]!r}"
                          if wrong else "")))
    once = (all(n == 1 for n in per_turn.values()) and len(per_turn) == run.turns
            and all(r[5] == 1 for r in rows) and all(running[r[0]] == 1 for r in rows))
    run.checks.append(("each (process, turn) ran once: one turn row, one RUNNING, turns = 1",
                       once, f"{len(per_turn)} turn rows, RUNNING counts "
                       f"{dict(Counter(running[r[0]] for r in rows))}"))
    asked = [r for r in server.chat_requests if b"Question #" in r.body]
    run.checks.append(("one LLM call and one reply per process",
                       all(calls[r[0]] == 1 and replies[r[0]] == 1 for r in rows)
                       and len(asked) == run.turns,
                       f"{sum(calls[r[0]] for r in rows)} calls recorded, {len(asked)} "
                       "requests served"))
    stale = [r for r in rows if r[3] == "STALE"] + [r for r in turn_rows if r[3] == "STALE"]
    takeovers = sum(int(r[6] or 0) for r in rows)
    run.checks.append(("no STALE, no takeover", not stale and not takeovers,
                       f"{len(stale)} STALE, {takeovers} takeovers"))
    hosts = Counter(str(r[7]).split(":")[0] for r in rows if r[7])
    if hosts:
        run.notes.append("turns per host: "
                         + ", ".join(f"{h} {n}" for h, n in sorted(hosts.items())))


def _turns_sqlite(args: argparse.Namespace, base_env: dict[str, str], root: Path) -> TurnRun:
    """One host, SQLite: every create starts a detached worker for its process."""
    run = TurnRun("SQLite, 1 host", args.turns)
    env = {**base_env, "VANCE_HOME": str(root / "sqlite-home")}
    cwd = root / "work"
    server = _llm_server(args.llm_delay, args.chunks)
    env.update(server.env(model="test-model", timeout=60))
    store = Store(root / "sqlite-home" / "state" / "vance.db")
    _set_subreaper()
    try:
        _run(["migrate"], env, cwd, 0)  # the file exists before the clock starts (as the team's)
        cpu0 = _children_cpu()
        started = time.perf_counter()
        made = _create_all(args.turns, args.creators, env, cwd)
        run.create_wall = time.perf_counter() - started
        run.cpu["creates"] = _children_cpu() - cpu0
        done = _wait_settled(store, args.turns, args.timeout)
        cpu1 = _children_cpu()
        reaped = _reap_all(time.monotonic() + 60)
        run.cpu["workers"] = _children_cpu() - cpu1
        run.notes.append(f"{reaped} detached workers reaped")
        run.checks.append(("all settled before the timeout", done, f"{store.settled()}"))
        _measure(run, store, made, server)
    finally:
        store.close()
        server.stop()
    return run


HOST_SCRIPT = """
hostname "$1"; shift
trap 'kill -TERM $pids 2>/dev/null' TERM INT
pids=
for i in $(seq "$1"); do "$2" worker -c "$3" 2>>"$VANCE_HOME/worker-$i.log" & pids="$pids $!"; done
for p in $pids; do while kill -0 $p 2>/dev/null; do wait $p; done; done
"""


def _start_host(name: str, args: argparse.Namespace, env: dict[str, str],
                namespaces: bool) -> subprocess.Popen[bytes]:
    argv = ["sh", "-c", HOST_SCRIPT, "host", name if namespaces else socket.gethostname(),
            str(args.workers_per_host), _vance()[0], str(args.concurrency)]
    if namespaces:
        argv = ["unshare", "--pid", "--fork", "--mount-proc", "--uts", *argv]
    return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL)


def _workers_ready(home: Path, count: int) -> bool:
    return sum(log.read_text().count("turns at a time") for log in home.glob("worker-*.log")
               ) >= count


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--uts", "true"],
                          capture_output=True, check=False)
    return done.returncode == 0


def _turns_postgres(args: argparse.Namespace, base_env: dict[str, str], root: Path,
                    drain: bool = False) -> TurnRun:
    """A team: ``--hosts`` PID namespaces of ``--workers-per-host`` ``vance worker`` each.

    ``drain``: every process is created (its turn queued) before the workers start, and the
    clock starts with them: what the team does with work waiting, its start-up included.
    """
    import psycopg

    namespaces = args.namespaces and _namespaces_work()
    run = TurnRun(f"PostgreSQL, {args.hosts} hosts x {args.workers_per_host} workers"
                  + (", drain" if drain else ""), args.turns)
    run.notes.append(f"vance worker -c {args.concurrency}; hosts are "
                     + ("PID+UTS namespaces (unshare)" if namespaces
                        else "plain processes (--plain-hosts, or no unshare here)"))
    name = f"vance_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(args.postgres, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]  # made here
    url = urlunsplit(urlsplit(args.postgres)._replace(path="/" + name))
    server = _llm_server(args.llm_delay, args.chunks)
    common = {**base_env, **server.env(model="test-model", timeout=60), "VANCE_STATE_URL": url}
    client = {**common, "VANCE_HOME": str(root / f"pg-client-{name}")}
    cwd = root / "work"
    hosts: list[subprocess.Popen[bytes]] = []
    store = Store(url)
    postmaster = _postmaster(url)
    try:
        _run(["migrate"], client, cwd, 0)
        pg0 = _tree_cpu(postmaster) if postmaster else 0.0
        made: list[Created] = []
        if drain:
            made = _timed_creates(run, args, client, cwd)
        homes = [root / f"{name}-host-{chr(97 + h)}" for h in range(args.hosts)]
        released = time.time()
        for h, home in enumerate(homes):
            home.mkdir()
            hosts.append(_start_host(f"bench-{chr(97 + h)}", args,
                                     {**common, "VANCE_HOME": str(home)}, namespaces))
        deadline = time.monotonic() + 120
        while not all(_workers_ready(home, args.workers_per_host) for home in homes):
            if time.monotonic() > deadline:
                raise SystemExit("the workers did not start: see " + str(root))
            time.sleep(0.2)
        warm = 0
        if drain:
            run.notes.append("drain: all turns queued before the workers started; the clock"
                             " and latency count from their start (start-up included)")
            for created in made:
                created.started = released
        elif args.warmup:
            warm, note = _warm_up(store, args, client, cwd)
            run.notes.append(note)
        workers0 = 0.0 if drain else sum(_tree_cpu(host.pid) for host in hosts)
        if not drain:
            pg0 = _tree_cpu(postmaster) if postmaster else 0.0
            made = _timed_creates(run, args, client, cwd)
        done = _wait_settled(store, warm + args.turns, args.timeout)
        run.cpu["workers"] = sum(_tree_cpu(host.pid) for host in hosts) - workers0
        if postmaster:
            run.cpu["postgres"] = _tree_cpu(postmaster) - pg0
        run.checks.append(("all settled before the timeout", done,
                           f"{store.settled() - warm}"))
        _measure(run, store, made, server)
    finally:
        for host in hosts:
            if namespaces:
                _signal_init(host)
            else:
                host.send_signal(signal.SIGTERM)
        for host in hosts:
            try:
                host.wait(timeout=60)
            except subprocess.TimeoutExpired:
                host.kill()
        store.close()
        server.stop()
        if not args.keep:
            with psycopg.connect(args.postgres, autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")  # type: ignore[arg-type]
    return run


def _timed_creates(run: TurnRun, args: argparse.Namespace, env: dict[str, str],
                   cwd: Path) -> list[Created]:
    """Create the measured processes; note their wall and CPU time on ``run``."""
    cpu0, started = _children_cpu(), time.perf_counter()
    made = _create_all(args.turns, args.creators, env, cwd)
    run.create_wall = time.perf_counter() - started
    run.cpu["creates"] = _children_cpu() - cpu0
    return made


def _warm_up(store: Store, args: argparse.Namespace, env: dict[str, str],
             cwd: Path) -> tuple[int, str]:
    """Run turns until every team worker has run one (its first turn's imports).

    Returns:
        How many turns that took, and a line that says so.
    """
    want, made, seen = args.hosts * args.workers_per_host, 0, set[str]()
    while made < 10 * want:
        batch = _create_all(want, args.creators, env, cwd, f"Warm-up {made} #{{n}}")
        made += len(batch)
        _wait_settled(store, made, args.timeout)
        seen = {w.rsplit(":", 1)[0] for (w,) in store.query(
            "SELECT worker FROM processes WHERE worker IS NOT NULL")}
        if len(seen) >= want:
            break
    return made, (f"warm-up before the clock: {made} turns until {len(seen)} of {want} workers"
                  " had run one")


def _signal_init(host: subprocess.Popen[bytes]) -> None:
    """SIGTERM the namespace's init (``unshare --fork``'s child: the host's shell)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None \
                and int(fields[1]) == host.pid:
            with suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGTERM)


def _row(label: str, values: list[str]) -> None:
    print(f"  {label:<38}" + "".join(f"{v:>42}" for v in values))


def turns_phase(args: argparse.Namespace) -> None:
    """Run the turns phase on each store asked for and print them side by side."""
    root = Path(tempfile.mkdtemp(prefix="vance-turns-"))
    (root / "work").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VANCE_", "OPENAI_"))}
    print(f"turns: {args.turns} ford turns (quick-lookup, one LLM call each), scripted SSE LLM "
          f"on 127.0.0.1 ({args.chunks} chunks, {args.llm_delay:g} s delay per reply), "
          f"{args.creators} creating at once; {os.cpu_count()} cores, load average "
          + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    runs: list[TurnRun] = []
    if args.store in ("sqlite", "both"):
        runs.append(_turns_sqlite(args, env, root))
    if args.store in ("postgresql", "both"):
        if not args.postgres:
            print("  PostgreSQL: skipped, no server (--postgres URL or VANCE_TEST_POSTGRES_URL)")
        else:
            runs.append(_turns_postgres(args, env, root))
            if args.drain:
                runs.append(_turns_postgres(args, env, root, drain=True))
    _row("", [r.label for r in runs])
    _row("turns/s (clock → last settled)",
         [f"{r.turns / r.wall:.2f} ({r.wall:.1f} s)" if r.wall else "-" for r in runs])
    _row("creates took", [f"{r.create_wall:.1f} s" for r in runs])
    _row("latency create → settled, median",
         [f"{statistics.median(r.latencies):.2f} s" if r.latencies else "-" for r in runs])
    _row("turn itself (started → ended), median",
         [f"{statistics.median(r.runs):.2f} s" if r.runs else "-" for r in runs])
    _row("latency p95 / max",
         [f"{r.latencies[int(0.95 * (len(r.latencies) - 1))]:.2f} / {r.latencies[-1]:.2f} s"
          if r.latencies else "-" for r in runs])
    for part in ("creates", "workers", "postgres"):
        _row(f"CPU {part}", [f"{r.cpu[part]:.1f} s" if part in r.cpu else "-" for r in runs])
    _row("CPU per turn (all of it)",
         [f"{sum(r.cpu.values()) / r.turns * 1000:.0f} ms" for r in runs])
    print("  load average after: " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    for r in runs:
        print(f"  checks, {r.label}:")
        for label, ok, detail in r.checks:
            _check(label, ok, detail)
        for note in r.notes:
            print(f"  note: {note}")
    if args.keep:
        print(f"kept: {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--calls", type=int, default=50, help="delegates per worker")
    parser.add_argument("--rounds", type=int, default=10, help="contested-name rounds")
    parser.add_argument("--keep", action="store_true", help="keep the temporary home")
    parser.add_argument("--turns", type=int, default=0,
                        help="run the turns phase with this many turns (not phases 1 and 2)")
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--postgres", default=os.environ.get("VANCE_TEST_POSTGRES_URL"),
                        help="a PostgreSQL server's admin URL (default: VANCE_TEST_POSTGRES_URL)")
    parser.add_argument("--llm-delay", type=float, default=0.2, help="seconds per LLM reply")
    parser.add_argument("--chunks", type=int, default=4, help="SSE chunks per reply")
    parser.add_argument("--creators", type=int, default=4, help="process creates at once")
    parser.add_argument("--hosts", type=int, default=2)
    parser.add_argument("--workers-per-host", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4, help="vance worker -c")
    parser.add_argument("--no-warmup", dest="warmup", action="store_false",
                        help="PostgreSQL: start the clock on workers that never ran a turn")
    parser.add_argument("--drain", action="store_true",
                        help="PostgreSQL again: every turn queued before the workers start")
    parser.add_argument("--plain-hosts", dest="namespaces", action="store_false",
                        help="PostgreSQL: hosts as plain process groups, no PID namespaces")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait to settle")
    args = parser.parse_args()
    if args.turns:
        turns_phase(args)
        return
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
