"""Routing accuracy of the selector over labelled cases (prints numbers, asserts nothing).

Each line of the cases file is ``{"task": …, "expected": "<recipe>" | null,
"lang": "en" | "de"}`` (null: NONE is right; a case without ``lang`` counts
as ``en``). The selector runs exactly as ``vance delegate`` runs it — trigger
fast path first, then the LLM when one is configured (config file or
``VANCE_LLM_*``/``OPENAI_*`` variables), else the offline lexical selector.
``--offline`` forces the offline selector. Nothing is written: no process is
started and the decision log is not touched.

Prints one line per case (``--quiet``: none), then accuracy, NONE precision
and recall, accuracy per language, how many cases each mode decided, and the
time per decision in-process (median and slowest, milliseconds; the first
decision, which loads the stemmers, is reported apart). ``--confusion`` adds
the per-class table: for each expected recipe (and NONE), how many cases,
how many right, and what was chosen instead.

Usage:
  python bench/routing_accuracy.py                       # tests/data/routing/cases.jsonl
  python bench/routing_accuracy.py --cases /work/shared/routing/cases.jsonl
  python bench/routing_accuracy.py --cases bench/data/dev_cases.jsonl --offline --confusion
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CASES = ROOT / "tests" / "data" / "routing" / "cases.jsonl"
NONE = "NONE"


def _ratio(right: int, total: int) -> str:
    return f"{right / total:.3f}  ({right}/{total})" if total else "—      (0 cases)"


def _confusion(pairs: list[tuple[str, str]]) -> None:
    """Print expected → got counts per expected class, NONE last."""
    by_expected: dict[str, Counter[str]] = defaultdict(Counter)
    for expected, got in pairs:
        by_expected[expected][got] += 1
    names = sorted(k for k in by_expected if k != NONE) + ([NONE] if NONE in by_expected else [])
    print(f"{'expected':<28} {'n':>3} {'right':>5}  got instead")
    for name in names:
        counts = by_expected[name]
        wrong = ", ".join(f"{got} {n}" for got, n in sorted(counts.items(),
                                                            key=lambda kv: (-kv[1], kv[0]))
                          if got != name)
        print(f"{name:<28} {sum(counts.values()):>3} {counts[name]:>5}  {wrong or '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES,
                        help=f"JSON-lines cases (default {DEFAULT_CASES.relative_to(ROOT)})")
    parser.add_argument("--offline", action="store_true",
                        help="ignore any configured LLM: run the offline selector")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.add_argument("--confusion", action="store_true",
                        help="print the per-class confusion (expected -> got counts)")
    args = parser.parse_args()

    from vance_cli.base.config import load_settings
    from vance_cli.llm import safe_endpoint
    from vance_cli.recipes.loader import load_recipes
    from vance_cli.selector.core import select
    from vance_cli.workspace import Workspace

    settings = load_settings()
    if args.offline:
        settings = replace(settings, llm_base_url=None, llm_api_key=None)
    ws = Workspace(settings)
    recipes = load_recipes(ws)
    cases = [json.loads(line) for line in args.cases.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    where = (f"LLM {safe_endpoint(settings.llm_base_url or 'https://api.openai.com/v1')} "
             f"model {settings.llm_model or '(server default)'}"
             if settings.llm_configured else "offline selector (no LLM configured)")
    print(f"{len(cases)} cases from {args.cases}; {where}; {len(recipes.inventory())} recipes")

    pairs: list[tuple[str, str]] = []
    per_lang: dict[str, list[bool]] = defaultdict(list)
    modes: Counter[str] = Counter()
    millis: list[float] = []
    for case in cases:
        started = time.perf_counter()
        decision = select(ws, case["task"], recipes=recipes)
        millis.append((time.perf_counter() - started) * 1000)
        got = decision.recipe.name if decision.recipe else NONE
        expected = case["expected"] or NONE
        pairs.append((expected, got))
        per_lang[case.get("lang") or "en"].append(got == expected)
        modes[decision.mode.value] += 1
        if not args.quiet:
            mark = "ok  " if got == expected else "MISS"
            print(f"{mark} expected {expected:<28} got {got:<28} "
                  f"[{decision.mode.value}] {case['task'][:70]}")
            if got != expected:
                print(f"       rationale: {decision.rationale[:160]}")

    right = sum(e == g for e, g in pairs)
    none_predicted = sum(g == NONE for _e, g in pairs)
    none_expected = sum(e == NONE for e, _g in pairs)
    none_right = sum(e == g == NONE for e, g in pairs)
    print(f"accuracy        {_ratio(right, len(pairs))}")
    print(f"NONE precision  {_ratio(none_right, none_predicted)} NONE answers right")
    print(f"NONE recall     {_ratio(none_right, none_expected)} expected NONEs found")
    for lang in sorted(per_lang):
        print(f"accuracy {lang:<6} {_ratio(sum(per_lang[lang]), len(per_lang[lang]))}")
    print("modes           " + ", ".join(f"{m} {n}" for m, n in sorted(modes.items())))
    if len(millis) > 1:
        rest = millis[1:]
        print(f"ms per decision median {statistics.median(rest):.2f}, max {max(rest):.2f} "
              f"(first {millis[0]:.1f}, stemmers loaded)")
    if args.confusion:
        _confusion(pairs)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
