"""Reply parsing on hostile replies: milliseconds per shape and size (prints numbers only).

Each shape is a reply an LLM endpoint could send — unclosed or nested braces,
thousands of ``<think>`` tags, unterminated strings, a lone fence — at each
size, read by the selector's parser (``parse_reply``) and by Slartibartfast's
extraction (``extract_recipe``). The budget is linear time: at most 50 ms per
100 kB (docs/decisions/0009-linear-reply-parsing.md). This script only reports.

Then hostile servers against the LLM client (tests/llm_server.py on 127.0.0.1):
a reply trickled one byte every 2 s, keep-alive lines only, a body that never
ends (streamed and plain), a 50 MB streamed reply. Each call runs in a child
process, which reports its wall time and peak RSS (docs/configuration.md
"Deadlines and caps": the deadline ends the first two at ``--timeout``, the caps
the others).

Last, whole turns against a trickling server, as ``vance`` commands in child
processes with a fresh home (issue 26's acceptance): a turn under a
``--turn-budget`` (``turn.timeout``) in the foreground (``delegate --wait``)
and in a worker, and the selector under ``llm.timeout`` = ``--timeout``. Each
is timed from the moment the hostile request reached the server: to the
command's end (foreground, selector) or to the turn record's end (worker).

Usage: python bench/replies.py [--sizes 10000,100000,200000] [--runs 3] [--timeout 5]
       [--turn-budget 5] [--no-hostile]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vance_cli.engines.slartibartfast.extract import extract_recipe
from vance_cli.selector.decision import SelectorFailure
from vance_cli.selector.parse import parse_reply

OK = '{"decision": "MATCH", "recipe": "coding", "rationale": "Code."}'


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


SHAPES: dict[str, Callable[[int], str]] = {
    "open braces": lambda n: "{" * n,
    "braces then closers": lambda n: "{" * (n // 2) + "}" * (n // 2),
    "nested braces around text": lambda n: "{" * 500 + "a" * (n - 1000) + "}" * 500,
    'repeated {"': lambda n: _repeat('{"', n),
    'repeated {"a":': lambda n: _repeat('{"a":', n),
    'repeated {"x":"': lambda n: _repeat('{"x":"', n),
    "deep arrays": lambda n: '{"a":' + "[" * (n - 5),
    "empty objects": lambda n: _repeat("{}", n),
    "<think> tags": lambda n: _repeat("<think>", n),
    "</think> tags": lambda n: _repeat("</think>", n),
    "single-quoted keys": lambda n: _repeat("{'a':", n),
    "unquoted keys": lambda n: _repeat("{a:{b:[", n),
    "answers, agreeing": lambda n: _repeat(OK + " ", n),
    "unterminated string": lambda n: '{"decision": "' + "x" * n,
    "open array of numbers": lambda n: '{"a":[' + _repeat("1,", n),
    "backticks": lambda n: "`" * n,
    "fence without newline": lambda n: "```" + "x" * n,
    "newlines": lambda n: "\n" * n,
}


def _selector(text: str) -> None:
    try:
        parse_reply(text, "stop")
    except SelectorFailure:
        pass


def _best_ms(func: Callable[[str], object], text: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        func(text)
        best = min(best, time.perf_counter() - start)
    return best * 1000


REPO = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
from vance_cli.base.errors import LLMError
from vance_cli.llm import LLMConfig, complete
import vance_cli.llm_guard  # openai imported before the clock starts
url, stream, timeout = sys.argv[1], sys.argv[2] == "stream", float(sys.argv[3])
config = LLMConfig(base_url=url, api_key=None, model="m", timeout=timeout, max_retries=2,
                   json_mode="none")
began = time.monotonic()
try:
    answer = complete(config, [{"role": "user", "content": "hi"}], max_tokens=10**9,
                      on_text=(lambda piece: None) if stream else None)
    outcome = f"{len(answer.text):,} chars kept, truncated: {answer.truncated}"
except LLMError as exc:
    outcome = exc.message.split(" (at ")[0]
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps([time.monotonic() - began, int(peak.split()[1]) / 1024, outcome]))
"""

def _hostile(timeout: float) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from llm_server import ScriptedLLMServer

    cases = [("trickle, 1 byte / 2 s", "stream", lambda s: s.trickle("Lima.", every=2.0)),
             ("keep-alive lines only", "stream", lambda s: s.keep_alive(every=0.5)),
             ("endless body, streamed", "stream", lambda s: s.endless()),
             ("endless body, plain", "plain", lambda s: s.endless()),
             ("50 MB reply, streamed", "stream", lambda s: s.huge(50_000_000))]
    print(f"\n{'hostile server':24} {'seconds':>8} {'peak MB':>8}  outcome")
    server = ScriptedLLMServer().start()
    try:
        for name, mode, script in cases:
            script(server)
            done = subprocess.run([sys.executable, "-c", CHILD, server.url, mode, str(timeout)],
                                  cwd=REPO, capture_output=True, text=True, check=True)
            seconds, peak, outcome = json.loads(done.stdout)
            print(f"{name:24} {seconds:>8.2f} {peak:>8.1f}  {outcome}")
    finally:
        server.stop()


PERU = "What is the capital of Peru?"


def _vance(args: list[str], env: dict[str, str]) -> tuple[float, dict[str, object]]:
    """Run ``vance ARGS --json``; return when it ended (``time.monotonic``) and its document."""
    done = subprocess.run([sys.executable, "-m", "vance_cli", *args, "--json"], cwd=REPO,
                          env=env, capture_output=True, text=True, check=False)
    ended = time.monotonic()
    try:
        return ended, json.loads(done.stdout)
    except ValueError:
        return ended, {"error": (done.stdout + done.stderr).strip()[-200:]}


def _turn_record(home: str, process_id: str) -> tuple[float, str]:
    """The first turn's (seconds, reason) from the state database of ``home``."""
    os.environ["VANCE_HOME"] = home
    from vance_cli.base.clock import parse_time
    from vance_cli.base.config import load_settings
    from vance_cli.state import conversation
    from vance_cli.workspace import Workspace

    ws = Workspace(load_settings())
    try:
        turn = conversation.turns(ws.db, process_id)[0]
    finally:
        ws.close()
    seconds = (parse_time(turn["ended_at"]) - parse_time(turn["started_at"])).total_seconds()
    return seconds, str(turn["reason"])


def _turns(timeout: float, budget: float) -> None:
    """Whole turns against a trickling server: foreground, worker, selector (seconds)."""
    sys.path.insert(0, str(REPO / "tests"))
    from llm_server import ScriptedLLMServer

    match = json.dumps({"decision": "MATCH", "recipe": "quick-lookup", "rationale": "it fits"})
    print(f"\n{'trickle, 1 byte / 2 s':34} {'bound s':>8} {'seconds':>8}  outcome")
    server = ScriptedLLMServer().start()
    try:
        with tempfile.TemporaryDirectory(prefix="vance-bench-turns-") as home:
            env = {**os.environ, **server.env(timeout=60, max_retries=2), "VANCE_HOME": home,
                   "VANCE_TURN_TIMEOUT": str(budget)}
            server.reply(match)
            server.trickle("The capital of Peru is Lima.", every=2.0)
            ended, doc = _vance(["delegate", "--task", PERU, "--wait"], env)
            process: dict[str, object] = doc.get("process", {})  # type: ignore[assignment]
            found: dict[str, object] = process.get("outcome") or {}  # type: ignore[assignment]
            outcome = str(found.get("reason") or doc.get("error"))
            print(f"{'turn in the foreground (--wait)':34} {budget:>8.1f} "
                  f"{ended - server.chat_requests[-1].at:>8.2f}  {outcome[:70]}")

            server.reply(match)
            server.trickle("The capital of Peru is Lima.", every=2.0)
            _, doc = _vance(["delegate", "--task", PERU], env)
            process = doc.get("process", {})  # type: ignore[assignment]
            pid = str(process.get("id"))
            _vance(["process", "wait", pid, "--timeout", str(budget * 6)], env)
            seconds, reason = _turn_record(home, pid)
            print(f"{'turn in a worker (record)':34} {budget:>8.1f} {seconds:>8.2f}  "
                  f"{reason[:70]}")

            server.trickle(match, every=0.5)
            env["VANCE_LLM_TIMEOUT"] = str(timeout)
            ended, doc = _vance(["delegate", "--task", PERU, "--no-fallback"], env)
            print(f"{'selector (llm.timeout)':34} {timeout:>8.1f} "
                  f"{ended - server.chat_requests[-1].at:>8.2f}  "
                  f"{doc.get('decision')} {doc.get('reason')}")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,200000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=5.0,
                        help="llm.timeout of the hostile cases, seconds")
    parser.add_argument("--turn-budget", type=float, default=5.0,
                        help="turn.timeout of the whole-turn cases, seconds")
    parser.add_argument("--no-hostile", action="store_true", help="skip the hostile servers")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'shape':28} {'size':>8} {'selector ms':>12} {'slart ms':>9}")
    worst = dict.fromkeys(sizes, 0.0)
    for name, make in SHAPES.items():
        for size in sizes:
            text = make(size)
            sel = _best_ms(_selector, text, args.runs)
            slart = _best_ms(extract_recipe, text, args.runs)
            worst[size] = max(worst[size], sel, slart)
            print(f"{name:28} {len(text):>8} {sel:>12.1f} {slart:>9.1f}")
    for size, ms in worst.items():
        print(f"worst at {size:,} characters: {ms:.1f} ms")
    if not args.no_hostile:
        _hostile(args.timeout)
        _turns(args.timeout, args.turn_budget)


if __name__ == "__main__":
    main()
