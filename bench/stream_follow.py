"""Following a turn across hosts: what the batched ``stream_chunks`` writes cost, how soon a
follower sees them (``LISTEN`` against polling).

Run: .ci/postgres start; python bench/stream_follow.py --url "$(.ci/postgres url)"
(a database of its own on that server, dropped after; prints numbers, asserts nothing)

- batch: the median and p90 of one batch's statement (an insert of one row of 80
  characters with its ``pg_notify``), ``--batches`` times;
- turn: a streamed turn simulated through ``StreamFile`` (``--pieces`` pieces of 5
  characters, ``--gap`` seconds apart, as tokens arrive), alone and in a team: the rows
  written, and the CPU time the turn's own thread spends handing its pieces on
  (``time.thread_time``: the writer's thread is not in it);
- latency: a status line (written at once) from ``StreamFile.status`` to a follower on a
  pool of its own (another host's), ``--samples`` times, once woken by ``LISTEN`` and once
  polling every second as when ``LISTEN`` fails; and a text piece (batched).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from vance_cli.base.config import load_settings
from vance_cli.processes import follow
from vance_cli.processes.follow import follow_table
from vance_cli.processes.model import ProcessSpec, Status
from vance_cli.processes.records import change_status, create_process, load_process
from vance_cli.processes.stream import ChunkWriter, StreamFile
from vance_cli.processes.turn import NullSink
from vance_cli.state import conversation, stream_chunks
from vance_cli.state import process_store as store
from vance_cli.state.pg import PgDatabase
from vance_cli.workspace import Workspace


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", required=True, help="a PostgreSQL server's admin URL")
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--pieces", type=int, default=400)
    parser.add_argument("--gap", type=float, default=0.01)
    parser.add_argument("--samples", type=int, default=20)
    return parser.parse_args()


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"median {statistics.median(ordered) * 1000:.2f} ms, p90 {p90 * 1000:.2f} ms"


def _claim(ws: Workspace, pid: str) -> int:
    with ws.db.transaction():
        change_status(ws.db, pid, load_process(ws, pid).status, Status.RUNNING,
                      worker_pid=os.getpid())
        row = store.count_turn(ws.db, pid)
        assert row is not None
        conversation.start_turn(ws.db, pid, int(row["turns"]), os.getpid())
    return int(row["turns"])


def _settle(ws: Workspace, pid: str, number: int) -> None:
    with ws.db.transaction():
        conversation.end_turn(ws.db, pid, number, "IDLE")
        change_status(ws.db, pid, Status.RUNNING, Status.IDLE)


def _process(ws: Workspace, name: str) -> str:
    return create_process(ws, ProcessSpec(recipe="quick-lookup", name=name, goal="bench")).id


def _batch(ws: Workspace, count: int) -> None:
    pid = _process(ws, "batch")
    times = []
    for seq in range(1, count + 1):
        start = time.perf_counter()
        stream_chunks.add(ws.db, pid, 1, [(seq, "text", "x" * 80)])
        times.append(time.perf_counter() - start)
    print(f"batch statement (insert + pg_notify): {_ms(times)} ({count} batches)")


def _turn(ws: Workspace, team: bool, pieces: int, gap: float) -> None:
    pid = _process(ws, f"turn-{team}")
    number = _claim(ws, pid)
    chunks = ChunkWriter(ws.db, pid) if team else None
    stream = StreamFile(ws, pid, NullSink(), after=0, chunks=chunks)
    spent = 0.0
    for _ in range(pieces):
        start = time.thread_time()
        stream.text("word ")
        spent += time.thread_time() - start
        time.sleep(gap)
    stream.close()
    _settle(ws, pid, number)
    rows = len(stream_chunks.after(ws.db, pid, number, 0))
    label = "team (file + table)" if team else "alone (file only)  "
    print(f"turn of {pieces} pieces {gap * 1000:.0f} ms apart, {label}: {rows} rows,"
          f" {spent / pieces * 1e6:.1f} µs CPU per piece in the turn's thread")


def _latency(ws: Workspace, url: str, samples: int, listen: bool, status: bool) -> None:
    pid = _process(ws, f"latency-{listen}-{status}")
    number = _claim(ws, pid)
    seen: list[tuple[float, str]] = []
    follower_settings = load_settings(environ={**os.environ, "VANCE_STATE_URL": url})
    own = Workspace(follower_settings)

    def body() -> None:
        follow_table(own, load_process(own, pid),
                     lambda text: seen.append((time.perf_counter(), text)), listen=listen)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    time.sleep(0.5)  # the follower listens
    stream = StreamFile(ws, pid, NullSink(), after=0)
    delays = []
    for n in range(samples):
        before = len(seen)
        sent = time.perf_counter()
        if status:
            stream.status(f"phase {n}")
        else:
            stream.text(f"piece {n} ")
        while len(seen) == before:
            time.sleep(0.001)
        delays.append(seen[-1][0] - sent)
        time.sleep(0.3 + (n % 7) * 0.05)  # not in step with the follower's polling
    stream.close()
    _settle(ws, pid, number)
    thread.join(10)
    own.close()
    how = "LISTEN" if listen else f"polling every {follow.TABLE_WAIT:g} s"
    what = "status line (at once)" if status else "text piece (batched)"
    print(f"{what} to a follower on another pool, {how}: {_ms(delays)} ({samples} samples)")


def main() -> None:
    args = _parse()
    name = f"vance_bench_{uuid.uuid4().hex[:8]}"
    parts = urlsplit(args.url)
    url = urlunsplit(parts._replace(path="/" + name))
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]  # a name made here
    try:
        PgDatabase.connect(url, migrating=True).close()
        with tempfile.TemporaryDirectory() as home:
            os.environ["VANCE_HOME"] = str(Path(home))
            os.environ.pop("VANCE_STATE_URL", None)
            alone = Workspace(load_settings())
            team = Workspace(load_settings(environ={**os.environ, "VANCE_STATE_URL": url}))
            try:
                _batch(team, args.batches)
                _turn(alone, False, args.pieces, args.gap)
                _turn(team, True, args.pieces, args.gap)
                for listen in (True, False):
                    _latency(team, url, args.samples, listen, status=True)
                _latency(team, url, args.samples, True, status=False)
            finally:
                alone.close()
                team.close()
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
