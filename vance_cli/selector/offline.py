"""The offline selector: lexical ranking with a relevance threshold (no LLM configured).

Rule (DESIGN.md §5, last paragraph): with no ``llm.base_url`` and no key the
selector ranks the inventory by lexical relevance (``vance_cli.ranking``:
BM25 over names, titles, tags, trigger keywords and descriptions) and
answers ``MATCH`` for the best recipe only when its score reaches the
threshold; below it, ``NONE`` with reason ``offline_no_match``. Every
rationale says it ran offline.

The threshold is not fitted to any set of tasks. It is the midpoint between
two evidence units of the ranking (``ranking.single_term_score``): one
distinctive word in a recipe's running text (weight 1) and one distinctive
tag word (``ranking.TAG_WEIGHT``). So a single word of description is never
enough — "Python" in "a mind map about Python" does not pick ``python`` —
while one tag word that only one recipe has (an intent such as
``summarize`` or ``übersetzen``) is, and so are two description words.
Expressed in these units it adapts to the size of the inventory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from vance_cli import ranking
from vance_cli.selector.decision import Decision, Mode, NoneReason, match, none

if TYPE_CHECKING:
    from vance_cli.recipes import Recipe

OFFLINE = "offline selector (no LLM configured)"
"""How every offline rationale starts."""


def threshold(n_recipes: int) -> float:
    """Return the minimum score for an offline MATCH among ``n_recipes`` recipes.

    The midpoint between one distinctive description word and one
    distinctive tag word (see the module docstring).
    """
    text_word = ranking.single_term_score(n_recipes, 1.0)
    tag_word = ranking.single_term_score(n_recipes, ranking.TAG_WEIGHT)
    return (text_word + tag_word) / 2


def select_offline(task: str, inventory: Sequence[Recipe]) -> Decision:
    """Pick the best recipe by lexical relevance, or NONE under the threshold.

    Args:
        task: the task text (non-empty).
        inventory: the selector's inventory (non-empty).

    Returns:
        A MATCH or a NONE ``offline_no_match`` decision, mode ``offline``.

    Rule: DESIGN.md §5, last paragraph.
    """
    hits = ranking.rank(inventory, task)
    limit = threshold(len(inventory))
    best = hits[0] if hits else None
    if best is not None and best.score >= limit:
        return match(best.recipe, f"{OFFLINE}: '{best.recipe.name}' matched "
                     f"{_words(best.terms)} (score {best.score:.1f} ≥ threshold {limit:.1f})",
                     Mode.OFFLINE)
    if best is None or best.score <= 0:
        detail = "no recipe shares a meaningful word with the task"
    else:
        detail = (f"no recipe reached the threshold (best '{best.recipe.name}' "
                  f"{best.score:.1f} < {limit:.1f}, matched {_words(best.terms)})")
    return none(NoneReason.OFFLINE_NO_MATCH, f"{OFFLINE}: {detail}", Mode.OFFLINE)


def _words(terms: Sequence[str]) -> str:
    return ", ".join(f"'{t}'" for t in terms[:6]) or "nothing"
