"""vance against a real local model (prints numbers, asserts nothing).

For each tier of the real-model tier (``.ci/real-model``, docs/development.md) it starts the
tier's llama.cpp server and prints, each figure with the model, its quantization and the
machine:

- the server's speed: prompt tokens/s and generated tokens/s;
- the selector on the labelled sets (default: the repository's copy of the routing cases,
  ``tests/data/routing/cases.jsonl``): accuracy, NONE precision and recall, parse failures,
  unknown-recipe answers, LLM errors, seconds and prompt tokens per LLM decision, each beside
  the offline selector on the same cases; the modes that decided;
- Slartibartfast on 5 no-fit tasks: how many designed a valid recipe, and whether a process of
  that recipe then ran;
- how often arthur's actions and marvin's plans parse (every ``action`` and ``plan`` call of
  their processes, read by the engines' own readers);
- whether a zaphod council, a vogon essay and a marvin plan finish, and their times.

Everything runs in this process through vance's own code (``select()``, the CLI's ``run``),
on a temporary ``VANCE_HOME``; the LLM calls of processes are recorded by wrapping the one
function they go through. Nothing is asserted: the numbers are read.

Usage:
  python bench/real_model.py --tier small
  python bench/real_model.py --tier small --tier medium --limit 15   # the first 15 cases only
  python bench/real_model.py --tier medium --only selector --combine llm-checked

``--combine`` names the ``selector.combine`` modes measured (docs/delegate.md, "How the two
selectors combine"); ``llm`` is the LLM alone.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "real-model"
CACHE = Path(os.environ.get("VANCE_REAL_MODEL_CACHE") or "/var/cache/vance-real-model")
DEFAULT_CASES = [ROOT / "tests" / "data" / "routing" / "cases.jsonl"]
NONE = "NONE"
PARSE_FAILURES = {"no_json", "json_error", "invalid_decision", "ambiguous_reply", "truncated"}
SECTIONS = ("speed", "selector", "slart", "engines")
FALLBACK_TIMEOUT = "1800"
"""Slartibartfast's cutoff and a turn's budget in seconds (defaults 240 and 600): a shared
2-core CPU evaluates a prompt at a few tokens/s (marvin's plan turn on Qwen2.5-Coder-0.5B ran
out of 600 s), and the figure is whether the model's output works; each run's time is
printed beside it."""

NO_FIT_TASKS = (
    "Turn my customer interview notes into persona documents",
    "Create a weekly meal plan with a shopping list for a family of four",
    "Write a job ad for a senior backend engineer, with five screening questions",
    "Plan a two-day team offsite agenda with sessions and timings",
    "Design a four-week running plan for a beginner who wants to run 5 km",
)
"""Tasks no bundled recipe covers as they ask (a document kind of its own each)."""

ARTHUR_MESSAGES = (
    "Hi! What can you help me with?",
    "What is the capital of Peru?",
    "I want to think through whether to learn Rust or Go next. Ask me what you need to know.",
    "Please explain in two sentences what a hash map is.",
    "Thanks, that is all for today.",
)
"""Messages to a ``discuss`` (arthur) process, one turn each."""


def machine() -> str:
    """Return the CPU model and core count, as every figure names them."""
    model = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} cores, {platform.system()}"


def start_tier(tier: str) -> dict[str, str]:
    """Start (or reuse) the tier's server; return its VANCE_LLM_* lines and quantization."""
    done = subprocess.run([str(SCRIPT), "start", tier], capture_output=True, text=True,
                          check=True)
    values = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    log = (CACHE / "run" / f"{tier}.log").read_text(errors="replace")
    found = re.search(r"file type\s*=\s*(.+)", log)
    values["quant"] = found.group(1).strip() if found else "?"
    return values


def _ratio(right: int, total: int) -> str:
    return f"{right / total:.3f} ({right}/{total})" if total else "— (0)"


def speed(tag: str) -> None:
    """Print the server's prompt and generation speed (two calls)."""
    from vance_cli import llm
    from vance_cli.base.config import load_settings

    config = llm.LLMConfig.from_settings(load_settings())
    filler = " ".join(f"word{i}" for i in range(600))  # a fresh prompt: no cached prefix
    read = llm.complete(config, [{"role": "user", "content": f"{time.time()} {filler}"}],
                        max_tokens=1)
    gen = llm.complete(config, [{"role": "user", "content": "Write six sentences about tea."}],
                       max_tokens=128, temperature=0.0)
    print(f"speed [{tag}]: prompt {read.prompt_tokens} tokens in {read.latency_ms / 1000:.1f}"
          f" s = {(read.prompt_tokens or 0) / (read.latency_ms / 1000):.0f} tokens/s; generated"
          f" {gen.completion_tokens} tokens in {gen.latency_ms / 1000:.1f} s ="
          f" {(gen.completion_tokens or 0) / (gen.latency_ms / 1000):.1f} tokens/s (with its"
          f" {gen.prompt_tokens}-token prompt)")


def selector(tag: str, cases_files: Sequence[Path], limit: int | None,
             combines: Sequence[str]) -> None:
    """Print the selector's figures on each labelled set, each combine mode beside offline.

    Each case runs through ``select()`` once per mode; the LLM call itself is made once per
    case and shared by the modes that ask it (``shared_asking``): the prompt is the same
    (but for its random marker) and the temperature 0, so a second call would cost a
    decision's time for the same answer.
    """
    from dataclasses import replace

    from vance_cli.base.config import load_settings
    from vance_cli.recipes.loader import load_recipes
    from vance_cli.selector.core import select
    from vance_cli.workspace import Workspace

    settings = load_settings()
    runs = {"offline": Workspace(replace(settings, llm_base_url=None, llm_api_key=None))}
    for combine in combines:
        runs[combine] = Workspace(replace(settings, selector_combine=combine))
    recipes = load_recipes(runs["offline"])
    for path in cases_files:
        cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip()][:limit]
        print(f"selector [{tag}] on {_shown(path)} ({len(cases)} cases):", flush=True)
        rows: dict[str, list[tuple[str, str, Any, float | None]]] = {k: [] for k in runs}
        with shared_asking() as seconds:
            for case in cases:
                for label, ws in runs.items():
                    decision = select(ws, case["task"], recipes=recipes)
                    rows[label].append((case["expected"] or NONE,
                                        decision.recipe.name if decision.recipe else NONE,
                                        decision, seconds.get(case["task"])))
        for label, found in rows.items():
            _selector_line(label, found)


def _shown(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(ROOT))
    return str(path)


@contextlib.contextmanager
def shared_asking() -> Iterator[dict[str, float]]:
    """Make the selector's LLM call once per task; yield task -> seconds of that call."""
    from vance_cli.selector import asking

    original = asking.ask_llm
    answers: dict[str, Any] = {}
    seconds: dict[str, float] = {}

    def ask_llm(ws: Any, task: str, *args: Any, **kwargs: Any) -> Any:
        if task not in answers:
            started = time.perf_counter()
            answers[task] = original(ws, task, *args, **kwargs)
            seconds[task] = time.perf_counter() - started
        return answers[task]

    asking.ask_llm = ask_llm
    try:
        yield seconds
    finally:
        asking.ask_llm = original


def _selector_line(label: str, rows: Sequence[tuple[str, str, Any, float | None]]) -> None:
    right = sum(e == g for e, g, _d, _s in rows)
    said_none = sum(g == NONE for _e, g, _d, _s in rows)
    want_none = sum(e == NONE for e, _g, _d, _s in rows)
    none_right = sum(e == g == NONE for e, g, _d, _s in rows)
    reasons = Counter(d.reason.value for _e, _g, d, _s in rows if d.reason is not None)
    modes = Counter(d.mode.value for _e, _g, d, _s in rows)
    asked = [(d, s) for _e, _g, d, s in rows if d.trace.endpoint is not None]
    tokens = [d.trace.prompt_tokens for d, _s in asked if d.trace.prompt_tokens]
    print(f"  {label:<13} accuracy {_ratio(right, len(rows))}  NONE precision"
          f" {_ratio(none_right, said_none)}  recall {_ratio(none_right, want_none)}")
    print(f"  {'':<13} parse failures {sum(reasons[r] for r in PARSE_FAILURES)}, unknown recipe"
          f" {reasons['unknown_recipe']}, LLM errors {reasons['llm_error'] + reasons['timeout']};"
          f" modes {dict(sorted(modes.items()))}")
    timed = [s for _d, s in asked if s is not None]
    if asked:
        print(f"  {'':<13} {len(asked)} LLM decisions: {statistics.mean(timed) if timed else 0:.1f}"
              f" s and {statistics.mean(tokens) if tokens else 0:.0f} prompt tokens each (mean)")
    misses = [(e, g, d) for e, g, d, _s in rows if e != g]
    for expected, got, decision in misses[:40]:
        print(f"  {'':<13} miss: expected {expected}, got {got} [{decision.mode.value}"
              f"{' ' + decision.reason.value if decision.reason else ''}]")
    sys.stdout.flush()


@contextlib.contextmanager
def recorded_calls() -> Iterator[list[tuple[str, str]]]:
    """Record ``(purpose, reply text)`` of every LLM call a process turn makes ("" failed)."""
    from vance_cli.processes.turn import Turn

    calls: list[tuple[str, str]] = []
    original = Turn.complete

    def complete(self: Any, messages: Any, **kwargs: Any) -> Any:
        try:
            answer = original(self, messages, **kwargs)
        except Exception:
            calls.append((str(kwargs.get("purpose", "reply")), ""))  # a failed call: no parse
            raise
        calls.append((str(kwargs.get("purpose", "reply")), answer.text))
        return answer

    Turn.complete = complete  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        Turn.complete = original  # type: ignore[method-assign]


def vance(*args: str) -> tuple[int, dict[str, Any] | None, float, str]:
    """Run ``vance ARGS --json`` in-process; return (exit code, JSON, seconds, stderr tail)."""
    from vance_cli.cli import output
    from vance_cli.cli.boundary import run

    output.console.cache_clear()
    output.err_console.cache_clear()
    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run([*args, "--json"])
    seconds = time.perf_counter() - started
    try:
        data = json.loads(out.getvalue())
    except ValueError:
        data = None
    return code, data, seconds, err.getvalue().strip()[-300:]


def slart(tag: str, run: bool = True) -> None:
    """Print Slartibartfast's valid-recipe rate on the no-fit tasks, and whether each ran.

    ``run`` False: the designs only (a generated process may take long on a CPU model).
    """
    valid = ran = 0
    for task in NO_FIT_TASKS:
        code, data, seconds, err = vance("process", "create", "--recipe", "slartibartfast",
                                         "--goal", task, "--wait")
        outcome = ((data or {}).get("process") or data or {}).get("outcome") or {}
        name = outcome.get("recipeName")
        line = f"  {seconds:6.1f} s  {'recipe ' + name if name else 'no recipe'}"
        if name and not run:
            valid += 1
        elif name:
            valid += 1
            run_code, _d, run_s, run_err = vance("process", "create", "--recipe", name,
                                                 "--steer", task, "--wait")
            ran += run_code == 0
            line += f"; its process {'ran' if run_code == 0 else 'failed'} ({run_s:.1f} s)"
            if run_code:
                line += f": {(run_err or json.dumps(_d))[-160:]}"
        else:
            line += f" (exit {code}: {outcome.get('reason') or err[-160:]})"
        print(line + f"  — {task[:60]}")
    print(f"slartibartfast [{tag}]: valid recipe {valid}/{len(NO_FIT_TASKS)}, its process ran"
          f" {ran}/{valid}" if run else f"slartibartfast [{tag}]: valid recipe"
          f" {valid}/{len(NO_FIT_TASKS)} (designs only: the processes were not run)")


ENGINE_RUNS = ("council", "essay", "marvin", "arthur")
"""The engines section's runs, in order (``--engine`` picks some)."""


def engines(tag: str, only: Sequence[str] = ENGINE_RUNS) -> None:
    """Print arthur/marvin parse rates and whether a council, an essay and a plan finish."""
    from vance_cli.base import replies
    from vance_cli.engines.arthur import turn as arthur
    from vance_cli.engines.marvin import turn as marvin

    runs: list[tuple[str, Sequence[str]]] = [
        ("council", ("process", "create", "--recipe", "council-three-perspectives", "--steer",
                     "Should a five-person startup move to a four-day work week?", "--wait")),
        ("essay", ("process", "create", "--recipe", "essay-pipeline", "--steer",
                   "Write a short essay about the history of tea in England", "--wait")),
        ("marvin", ("process", "create", "--recipe", "marvin", "--goal",
                    "Write a short guide to brewing green tea: its history, the equipment and"
                    " the steps", "-p", "maxTreeNodes:=4", "-p", "maxItems:=2", "--wait")),
    ]
    with recorded_calls() as calls:
        for label, args in [(label, args) for label, args in runs if label in only]:
            code, data, seconds, err = vance(*args)
            status = ((data or {}).get("process") or data or {}).get("status", "?")
            why = err or json.dumps(data)[-200:]
            print(f"  {label:<8} {'finished' if code == 0 else 'FAILED'} (exit {code}, {status})"
                  f" in {seconds:.1f} s" + (f": {why[-200:]}" if code else ""))
        if "arthur" in only:
            _arthur()
    plans = [text for purpose, text in calls if purpose == "plan"]
    actions = [text for purpose, text in calls if purpose == "action"]
    plans_ok = sum(marvin.read_plan(text) is not None for text in plans)
    actions_ok = sum(_action_parses(text, replies.find_object, arthur.ACTIONS)
                     for text in actions)
    print(f"engines [{tag}]: marvin plans parse {_ratio(plans_ok, len(plans))}; arthur"
          f" actions parse {_ratio(actions_ok, len(actions))}")


def _arthur() -> None:
    """Hold a conversation of ``ARTHUR_MESSAGES`` with a ``discuss`` process; print its turns."""
    code, data, seconds, err = vance("process", "create", "--recipe", "discuss", "--steer",
                                     ARTHUR_MESSAGES[0], "--wait")
    pid = str(((data or {}).get("process") or data or {}).get("id") or "")
    codes = [code]
    for message in ARTHUR_MESSAGES[1:] if pid else ():
        code, _d, more, err = vance("process", "steer", pid, message, "--wait")
        codes.append(code)
        seconds += more
    print(f"  arthur   {sum(c == 0 for c in codes)}/{len(ARTHUR_MESSAGES)} turns settled"
          f" (exit codes {codes}) in {seconds:.1f} s" + (f": {err[-200:]}" if code else ""))


def _action_parses(text: str, find: Callable[[str], Any], kinds: Sequence[str]) -> bool:
    found = find(text)
    if found is None:
        return False
    listed = found.get("actions")
    items = listed if isinstance(listed, list) else [found]
    return bool(items) and all(isinstance(i, dict) and str(i.get("action", "")).strip().lower()
                               in kinds for i in items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", action="append", choices=("tiny", "small", "medium"),
                        help="a tier to measure (repeatable; default small)")
    parser.add_argument("--cases", type=Path, action="append",
                        help="a labelled set (repeatable; default tests/data/routing/cases.jsonl)")
    parser.add_argument("--limit", type=int, help="only the first N cases of each set")
    parser.add_argument("--only", action="append", choices=SECTIONS,
                        help="only these sections (repeatable)")
    parser.add_argument("--engine", action="append", choices=ENGINE_RUNS,
                        help="runs of the engines section (repeatable; default all)")
    parser.add_argument("--designs-only", action="store_true",
                        help="Slartibartfast: only design, do not run the generated processes")
    parser.add_argument("--combine", action="append",
                        choices=("offline-first", "llm-checked", "llm"),
                        help="selector.combine modes to measure (repeatable; default all"
                             " three)")
    args = parser.parse_args()
    sections = args.only or SECTIONS
    print(f"machine: {machine()}; vance at {_commit()}")
    for tier in args.tier or ["small"]:
        values = start_tier(tier)
        tag = f"{values['VANCE_LLM_MODEL']}, {values['quant']}, llama-cpp-python server"
        with tempfile.TemporaryDirectory() as home, _environment(home, values):
            began = time.perf_counter()
            if "speed" in sections:
                speed(tag)
            if "selector" in sections:
                selector(tag, args.cases or DEFAULT_CASES, args.limit,
                         args.combine or ["offline-first", "llm-checked", "llm"])
            if "slart" in sections:
                slart(tag, run=not args.designs_only)
            if "engines" in sections:
                engines(tag, args.engine or ENGINE_RUNS)
            print(f"[{tag}] took {time.perf_counter() - began:.0f} s\n")
        sys.stdout.flush()


def _commit() -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or "?"


@contextlib.contextmanager
def _environment(home: str, values: dict[str, str]) -> Iterator[None]:
    """Point vance at the tier's server and a fresh home for the block."""
    keep = dict(os.environ)
    os.environ.update({"VANCE_HOME": home, "VANCE_LLM_BASE_URL": values["VANCE_LLM_BASE_URL"],
                       "VANCE_LLM_MODEL": values["VANCE_LLM_MODEL"], "VANCE_LLM_TIMEOUT": "600",
                       "VANCE_LLM_MAX_RETRIES": "0", "VANCE_FALLBACK_TIMEOUT": FALLBACK_TIMEOUT,
                       "VANCE_TURN_TIMEOUT": FALLBACK_TIMEOUT})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(keep)


if __name__ == "__main__":
    main()
