"""A recipe's index terms for the lexical ranking: worked out once per text, then kept.

Reading a recipe's words the way ``vance_cli.ranking.lexicon`` says (negated
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
  *phrase*; a word never holds white space, as no word character case-folds
  to any). Title and description terms are single words.
- In memory, analyses are kept by the recipe's indexed text (title, tags,
  keywords, description), not by the recipe object: a recipe built anywhere
  (a test, a generated recipe) is analysed once, and a changed text is a new
  entry.
- On disk (``to_cache``), title and description terms are one string each,
  words joined by spaces: a warm run parses a few thousand of them far faster
  than lists of words, and turns one into a list only when the recipe is
  ranked. A stored analysis carries ``VERSION``; ``remember`` takes it only
  under the current one, so bumping ``VERSION`` when the rules change
  invalidates every stored analysis.
- ``lexicon`` (and its stemmers) is imported only to work an analysis out:
  a warm ``load_recipes`` never imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.ranking import lexicon

if TYPE_CHECKING:
    from vance_cli.recipes.loader import Recipe

VERSION = 2
"""Version of the rules that turn a recipe's text into index terms (``vance_cli.ranking.lexicon``
and ``_analyse`` here). Bump it whenever they change what terms a text yields: stored
analyses of another version are ignored. ``tests/unit/test_recipe_terms.py`` pins the
analysis of sample texts to this number, so a change that forgets the bump fails there."""

Analysis = tuple[list[str], ...]
"""Index terms per field of ``ranking.FIELDS`` (four lists)."""

MEMO_LIMIT = 50_000
"""Most analyses kept in memory (each of the two tables); a full table starts over."""

_Text = tuple[str, tuple[str, ...], tuple[str, ...], str]

_memo: dict[_Text, Analysis] = {}
_stored: dict[_Text, dict[str, Any]] = {}  # read from the cache, not yet used


def _text(recipe: Recipe) -> _Text:
    return recipe.title, tuple(recipe.tags), tuple(recipe.keywords), recipe.description


def _put(table: dict[_Text, Any], key: _Text, value: Any) -> None:
    if len(table) >= MEMO_LIMIT:
        table.clear()
    table[key] = value


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
        stored = _stored.pop(key, None)
        found = _from_cache(stored) if stored is not None else None
        if found is None:
            found = _analyse(recipe)
        _put(_memo, key, found)
    return found


def _analyse(recipe: Recipe) -> Analysis:

    def listed(items: Sequence[str]) -> list[str]:
        return [" ".join(found) for found in map(lexicon.words, items) if found]

    return (lexicon.prose_words(recipe.title), listed(recipe.tags), listed(recipe.keywords),
            lexicon.prose_words(recipe.description))


def to_cache(analysis: Analysis) -> dict[str, Any]:
    """Return ``analysis`` as the parsed-document cache stores it.

    Returns:
        ``{"version", "title": "<words>", "tags": [terms], "keywords": [terms],
        "description": "<words>"}`` (see the module docstring).
    """
    title, tags, keywords, description = analysis
    return {"version": VERSION, "title": " ".join(title), "tags": tags, "keywords": keywords,
            "description": " ".join(description)}


def _from_cache(stored: dict[str, Any]) -> Analysis | None:
    """Return the analysis ``to_cache`` stored, or None when ``stored`` has another shape."""
    title, tags = stored.get("title"), stored.get("tags")
    keywords, description = stored.get("keywords"), stored.get("description")
    if not (isinstance(title, str) and isinstance(description, str)
            and isinstance(tags, list) and isinstance(keywords, list)):
        return None
    return title.split(), tags, keywords, description.split()


def remember(recipe: Recipe, cached: Any) -> None:
    """Keep a stored analysis of ``recipe`` (``to_cache`` output) for when it is ranked.

    Args:
        recipe: the recipe it was worked out for (its text is the key).
        cached: what the cache held; ignored unless it is ``to_cache``
            output of the current ``VERSION``.
    """
    if isinstance(cached, dict) and cached.get("version") == VERSION:
        _put(_stored, _text(recipe), cached)
