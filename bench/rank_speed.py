"""Time of ``ranking.rank()`` at 50, 500 and 5,000 recipes (prints numbers, asserts nothing).

The recipes are generated as ``bench/rank_identity.py`` generates them
(varied English and German words, multi-word tags, negations; seeded), in
memory. Each of ``--tasks`` routing tasks is ranked in three states, and the
median over the tasks is printed per state:

- **cold**: nothing known yet — every recipe's text is analysed and every
  word stemmed (a process whose parsed-document cache is empty);
- **warm**: the recipes' analyses were read from the parsed-document cache
  (handed over as a warm ``load_recipes`` does, not timed) but no word was
  stemmed yet — a warm ``vance delegate`` run;
- **repeat**: the same inventory ranked again in the same process (a batch).

A version of vance without ``vance_cli.ranking.terms`` keeps nothing between
calls; all three states are then the same.

Usage: python bench/rank_speed.py [--sizes 50,500,5000] [--tasks 20]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rank_identity import big_tasks, generated, tasks


def _forget(stored: list[tuple[Any, Any]] | None) -> None:
    """Drop what the ranking keeps between calls (stems, analyses); then ``stored``, if any.

    ``stored``: (recipe, stored analysis) pairs to hand over as a warm
    ``load_recipes`` does (``recipe_terms.remember``).
    """
    from vance_cli.ranking import bm25 as ranking
    from vance_cli.ranking import lexicon

    lexicon.word_keys.cache_clear()
    getattr(ranking, "_keys_of", {}).clear()
    try:
        from vance_cli.ranking import terms as recipe_terms
    except ImportError:
        return
    recipe_terms._memo.clear()
    for recipe, analysis in stored or ():
        recipe_terms.remember(recipe, analysis)


def _stored(recipes: list[Any]) -> list[tuple[Any, Any]]:
    """Return each recipe with its analysis as the document cache holds it (after JSON)."""
    try:
        from vance_cli.ranking import terms as recipe_terms
    except ImportError:
        return []
    return [(r, json.loads(json.dumps(recipe_terms.to_cache(recipe_terms.analyse(r)))))
            for r in recipes]


def _median_ms(recipes: list[Any], chosen: list[str], before: Callable[[], None]) -> float:
    from vance_cli.ranking.bm25 import rank

    samples = []
    for task in chosen:
        before()
        start = time.perf_counter()
        rank(recipes, task)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,500,5000")
    parser.add_argument("--tasks", type=int, default=20)
    args = parser.parse_args()

    from vance_cli.base.config import load_settings
    from vance_cli.recipes.loader import load_recipes
    from vance_cli.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="vance-rank-speed-") as home:
        os.environ["VANCE_HOME"] = home
        bundled = load_recipes(Workspace(load_settings())).inventory()
    every = tasks()
    chosen = big_tasks(args.tasks)
    print(f"rank() median over {len(chosen)} tasks, ms")
    print(f"{'recipes':>8} {'cold':>9} {'warm':>9} {'repeat':>9}")
    for size in (int(s) for s in args.sizes.split(",")):
        recipes = generated(bundled, every, size)
        stored = _stored(recipes)
        cold = _median_ms(recipes, chosen, lambda: _forget(None))
        warm = _median_ms(recipes, chosen, functools.partial(_forget, stored))
        repeat = _median_ms(recipes, chosen, lambda: None)
        print(f"{size:>8,} {cold:>9.1f} {warm:>9.1f} {repeat:>9.1f}")


if __name__ == "__main__":
    main()
