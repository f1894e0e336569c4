"""A recipe's index terms for the lexical ranking: worked out once per text, then kept.

Reading a recipe's words the way ``vance_cli.lexicon`` says (negated
stretches and question words left out of its title and description, each tag
and trigger keyword split into words) is most of what ranking a big inventory
costs, and the result depends only on the recipe's text and the rules. So it
is done once per text and kept: in memory for the process, and in the
parsed-document cache (``doc_cache``) beside the parsed recipe, so a warm run
does not redo it for unchanged files.

Invariants:
- A recipe's analysis is one list of index terms per indexed field
  (``ranking.FIELDS``: title, tags, trigger keywords, description), in text
  order, repeats kept (BM25 counts them). A term is one word, or — for a tag
  or keyword of several words — its words joined by single spaces (a
  *phrase*; a word never holds a space). All of it is plain JSON.
- In memory, analyses are kept by the recipe's indexed text (title, tags,
  keywords, description), not by the recipe object: a recipe built anywhere
  (a test, a generated recipe) is analysed once, and a changed text is a new
  entry.
- On disk, an analysis is stored with ``VERSION``; ``remember`` takes it only
  under the current one, so bumping ``VERSION`` when the rules change
  invalidates every stored analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vance_cli.recipes import Recipe

VERSION = 1
"""Version of the rules that turn a recipe's text into index terms (``vance_cli.lexicon``
and ``_analyse`` here). Bump it whenever they change what terms a text yields: stored
analyses of another version are ignored. ``tests/unit/test_recipe_terms.py`` pins the
analysis of sample texts to this number, so a change that forgets the bump fails there."""

Analysis = tuple[list[str], ...]
"""Index terms per field of ``ranking.FIELDS`` (four lists)."""

MEMO_LIMIT = 50_000
"""Most analyses kept in memory; the memo starts over when it is full."""

_Text = tuple[str, tuple[str, ...], tuple[str, ...], str]

_memo: dict[_Text, Analysis] = {}


def _text(recipe: Recipe) -> _Text:
    return recipe.title, tuple(recipe.tags), tuple(recipe.keywords), recipe.description


def analyse(recipe: Recipe) -> Analysis:
    """Return the recipe's index terms per field (see the module docstring).

    Args:
        recipe: any recipe; only its title, tags, keywords and description are read.

    Returns:
        Four lists of terms (title, tags, keywords, description); shared, do not change them.
    """
    key = _text(recipe)
    found = _memo.get(key)
    if found is None:
        found = _analyse(recipe)
        _keep(key, found)
    return found


def _analyse(recipe: Recipe) -> Analysis:
    from vance_cli import lexicon

    def listed(items: Sequence[str]) -> list[str]:
        return [" ".join(found) for found in map(lexicon.words, items) if found]

    return (lexicon.prose_words(recipe.title), listed(recipe.tags), listed(recipe.keywords),
            lexicon.prose_words(recipe.description))


def _keep(key: _Text, analysis: Analysis) -> None:
    if len(_memo) >= MEMO_LIMIT:
        _memo.clear()
    _memo[key] = analysis


def to_cache(analysis: Analysis) -> dict[str, Any]:
    """Return ``analysis`` as the parsed-document cache stores it: ``{"version", "fields"}``."""
    return {"version": VERSION, "fields": list(analysis)}


def remember(recipe: Recipe, cached: Any) -> None:
    """Keep a stored analysis of ``recipe`` (``to_cache`` output) in memory.

    Args:
        recipe: the recipe it was worked out for (its text is the memo key).
        cached: what the cache held; ignored unless it is ``to_cache``
            output of the current ``VERSION``.
    """
    if not isinstance(cached, dict) or cached.get("version") != VERSION:
        return
    fields = cached.get("fields")
    if isinstance(fields, list) and len(fields) == 4 and all(isinstance(f, list) for f in fields):
        _keep(_text(recipe), tuple(fields))
