"""Routing accuracy of the selector over labelled cases (prints numbers, asserts nothing).

Each line of the cases file is ``{"task": …, "expected": "<recipe>" | null}``
(null: NONE is right). The selector runs exactly as ``vance delegate`` runs
it — trigger fast path first, then the LLM when one is configured (config
file or ``VANCE_LLM_*``/``OPENAI_*`` variables), else the offline lexical
selector. ``--offline`` forces the offline selector. Nothing is written:
no process is started and the decision log is not touched.

Prints one line per case, then accuracy, NONE precision and NONE recall.

Usage:
  python bench/routing_accuracy.py                       # tests/data/routing/cases.jsonl
  python bench/routing_accuracy.py --cases /work/shared/routing/cases.jsonl
  python bench/routing_accuracy.py --cases bench/data/dev_cases.jsonl --offline
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CASES = ROOT / "tests" / "data" / "routing" / "cases.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES,
                        help=f"JSON-lines cases (default {DEFAULT_CASES.relative_to(ROOT)})")
    parser.add_argument("--offline", action="store_true",
                        help="ignore any configured LLM: run the offline selector")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
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

    right = none_predicted = none_expected = none_right = 0
    modes: Counter[str] = Counter()
    for case in cases:
        decision = select(ws, case["task"], recipes=recipes)
        got = decision.recipe.name if decision.recipe else None
        expected = case["expected"]
        ok = got == expected
        right += ok
        modes[decision.mode.value] += 1
        none_predicted += got is None
        none_expected += expected is None
        none_right += got is None and expected is None
        if not args.quiet:
            mark = "ok  " if ok else "MISS"
            print(f"{mark} expected {expected or 'NONE':<28} got {got or 'NONE':<28} "
                  f"[{decision.mode.value}] {case['task'][:70]}")
            if not ok:
                print(f"       rationale: {decision.rationale[:160]}")
    precision = none_right / none_predicted if none_predicted else float("nan")
    recall = none_right / none_expected if none_expected else float("nan")
    print(f"accuracy        {right / len(cases):.3f}  ({right}/{len(cases)})")
    print(f"NONE precision  {precision:.3f}  ({none_right}/{none_predicted} NONE answers right)")
    print(f"NONE recall     {recall:.3f}  ({none_right}/{none_expected} expected NONEs found)")
    print("modes           " + ", ".join(f"{m} {n}" for m, n in sorted(modes.items())))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
