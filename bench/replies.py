"""Reply parsing on hostile replies: milliseconds per shape and size (prints numbers only).

Each shape is a reply an LLM endpoint could send — unclosed or nested braces,
thousands of ``<think>`` tags, unterminated strings, a lone fence — at each
size, read by the selector's parser (``parse_reply``) and by Slartibartfast's
extraction (``extract_recipe``). The budget is linear time: at most 50 ms per
100 kB (docs/decisions/0009-linear-reply-parsing.md). This script only reports.

Usage: python bench/replies.py [--sizes 10000,100000,200000] [--runs 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,200000")
    parser.add_argument("--runs", type=int, default=3)
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


if __name__ == "__main__":
    main()
