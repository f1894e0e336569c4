"""What a turn costs on top of its LLM call: a streamed ford turn next to the bare request.

Run: python bench/turn_overhead.py [--turns 100] [--chunks 8] [--chunk-delay 0]
(temporary VANCE_HOME, the test suite's scripted LLM server on 127.0.0.1;
prints numbers, asserts nothing)

Both sides run in this process, against the same server, with the same reply
(``--chunks`` server-sent events, ``--chunk-delay`` seconds apart):

- bare: one streamed chat completion with the ``openai`` client (created
  once, as a program that makes many calls would), the request body exactly
  the one the turn sent (system prompt, task, model, max_tokens,
  temperature, stream options), every chunk read;
- turn: ``processes.runtime.run_turn`` on a new ``quick-lookup`` process
  (engine ford): claim, heartbeat, the prompts, the streamed call through
  ``llm.complete``, the stream file, recording the call, settling. The
  process is created before the clock starts.

The two alternate, after warm-up rounds of each, so a drift in machine load
hits both alike; every other round the bare request goes first, so neither
always follows the other (a server thread still closing the last
connection, a cache the other just warmed). Printed: the median, p10 and
p90 of each, the median difference (the runtime's overhead per turn) and
the ratio of the medians (the budget is a turn at most 1.3x the bare
request). Beside each wall-clock time the CPU time of the calling thread is
taken (``time.thread_time``: the server's threads are not in it), so the
runtime's own work reads the same on a machine that other work loads.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from llm_server import ScriptedLLMServer

ANSWER = ("The capital of Peru is Lima, on the Pacific coast; it has been the capital since"
          " the Spanish founded it in 1535 and is home to about ten million people.")
TASK = "What is the capital of Peru?"
WARMUP = 5
BUDGET = 1.3
"""A turn may take at most this many times the bare request (the issue's budget)."""


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=100, help="measured rounds (default 100)")
    parser.add_argument("--chunks", type=int, default=8, help="SSE chunks per answer")
    parser.add_argument("--chunk-delay", type=float, default=0.0,
                        help="seconds between two chunks (default 0: the pure overhead)")
    return parser.parse_args()


class Bench:
    """The server, the workspace and the bare client, set up once."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.server = ScriptedLLMServer().start()
        os.environ["VANCE_HOME"] = tempfile.mkdtemp(prefix="vance-bench-")
        os.environ.update(self.server.env(timeout=30))
        from vance_cli.base.config import load_settings
        from vance_cli.workspace import Workspace

        self.ws = Workspace(load_settings())
        self.count = 0
        self.cpu: dict[str, list[float]] = {"turn": [], "bare": []}
        """CPU milliseconds of this thread per call, by side."""
        self.body: dict[str, Any] = {}
        import openai

        self.client = openai.OpenAI(api_key="no-key-needed", base_url=self.server.url,
                                    timeout=30, max_retries=0)

    def _queue(self) -> None:
        self.server.reply(ANSWER, chunks=self.args.chunks, chunk_delay=self.args.chunk_delay)

    def turn(self) -> float:
        """One turn of a new process, in milliseconds."""
        from vance_cli.processes.model import ProcessSpec
        from vance_cli.processes.records import create_process
        from vance_cli.processes.runtime import run_turn

        self.count += 1
        process = create_process(self.ws, ProcessSpec(recipe="quick-lookup",
                                                      name=f"peru-{self.count}", goal=TASK))
        self._queue()
        start, cpu = time.perf_counter(), time.thread_time()
        report = run_turn(self.ws, process.id)
        elapsed = (time.perf_counter() - start) * 1000
        self.cpu["turn"].append((time.thread_time() - cpu) * 1000)
        if report.reply != ANSWER:
            raise SystemExit(f"the turn did not settle with the answer: {report}")
        self.body = dict(self.server.chat_requests[-1].json)
        return elapsed

    def bare(self) -> float:
        """The same streamed request with the openai client, in milliseconds."""
        self._queue()
        start, cpu = time.perf_counter(), time.thread_time()
        stream = self.client.chat.completions.create(**self.body)
        text = "".join(choice.delta.content or "" for chunk in stream
                       for choice in chunk.choices)
        elapsed = (time.perf_counter() - start) * 1000
        self.cpu["bare"].append((time.thread_time() - cpu) * 1000)
        if text != ANSWER:
            raise SystemExit(f"the bare request got {text!r}")
        return elapsed

    def close(self) -> None:
        self.client.close()
        self.ws.close()
        self.server.stop()


def _line(label: str, samples: list[float]) -> str:
    deciles = statistics.quantiles(samples, n=10)
    return (f"{label:<34} median {statistics.median(samples):7.2f} ms   p10 {deciles[0]:7.2f}"
            f"   p90 {deciles[-1]:7.2f}   (n={len(samples)})")


def main() -> None:
    args = _parse()
    bench = Bench(args)
    try:
        for _ in range(WARMUP):  # imports, first connections, the prompt and recipe caches
            bench.turn()
            bench.bare()
        turns: list[float] = []
        bares: list[float] = []
        for round_ in range(args.turns):  # the order alternates: neither always goes first
            if round_ % 2:
                bares.append(bench.bare())
                turns.append(bench.turn())
            else:
                turns.append(bench.turn())
                bares.append(bench.bare())
    finally:
        bench.close()
    cpu = {side: samples[WARMUP:] for side, samples in bench.cpu.items()}
    bare, turn = statistics.median(bares), statistics.median(turns)
    print(f"reply: {args.chunks} chunks, {args.chunk_delay:g} s apart, {len(ANSWER)} characters")
    print(_line("bare streamed request (openai)", bares))
    print(_line("ford turn (runtime.run_turn)", turns))
    print(f"overhead per turn: {turn - bare:.2f} ms (median difference)")
    print(f"ratio: {turn / bare:.2f}x the bare request (budget <= {BUDGET:g}x:"
          f" {'within' if turn / bare <= BUDGET else 'OVER'})")
    cpu_bare, cpu_turn = statistics.median(cpu["bare"]), statistics.median(cpu["turn"])
    print(f"CPU of the calling thread: bare {cpu_bare:.2f} ms, turn {cpu_turn:.2f} ms (medians);"
          f" the runtime's own work {cpu_turn - cpu_bare:.2f} ms")


if __name__ == "__main__":
    main()
