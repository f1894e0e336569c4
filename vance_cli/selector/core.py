"""``select()``: one task in, one ``Decision`` out — the selector flow of docs/delegate.md.

Steps, first that decides wins:
1. empty task → NONE ``empty_task`` (no LLM call);
2. empty inventory → NONE ``no_recipes`` (no LLM call);
3. explicit recipe name: the request names exactly one recipe of the
   inventory as a recipe ("with the essay recipe "plain-essay"") → MATCH
   (``named_recipe``, no LLM call);
4. trigger fast path: exactly one recipe has a trigger keyword occurring in
   the lower-cased task, and the rest of the request names no other
   deliverable → MATCH (no LLM call);
5. no LLM configured → the offline selector (``offline.py``);
6. the offline selector still runs; ``selector.combine`` says whether its
   confident decision stands without a call (``combine.py``);
7. one LLM call (catalog + inventory, capped at 50 by relevance, the offline
   shortlist), tolerant parse, verbatim name check; then ``combine``.

``select()`` never raises: every failure becomes NONE through ``none_for``.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from vance_cli.base.text_input import is_blank
from vance_cli.ranking import bm25 as ranking
from vance_cli.ranking import lexicon, material, reading
from vance_cli.recipes.loader import load_recipes
from vance_cli.selector.decision import Decision, Mode, NoneReason, match, none, none_for
from vance_cli.selector.offline import intent, select_offline, threshold

if TYPE_CHECKING:
    from vance_cli.recipes.loader import Recipe, RecipeSet
    from vance_cli.workspace import Workspace

Progress = Callable[[], AbstractContextManager[object]]
"""Factory of a context manager wrapped around the LLM call (the CLI's spinner)."""


RECIPE_WORDS = ("recipe", "rezept")
"""Words that say the name next to them is a recipe's ("the recipe code-read", "the
plain-essay recipe", "mit dem Rezept „discuss“", "dem discuss-Rezept")."""

_QUOTE = "[\"'`\u201c\u201d\u201e\u2018\u2019\u00ab\u00bb]?"
_CALLED = r"(?:\s+(?:called|named|namens|mit\s+dem\s+namen))?\s*[:=]?\s*"


def named_recipe(task: str, inventory: Sequence[Recipe]) -> tuple[Recipe, str] | None:
    """Return ``(recipe, words)`` when the request names exactly one recipe as a recipe.

    A name of the inventory, whole (not inside a longer name) and in any
    case, right after *recipe*/*Rezept* (a *called*, *named* or a colon, and
    quotes, allowed between) or right before it ("the plain-essay recipe",
    "dem discuss-Rezept"). A bare name is an ordinary word ("translate",
    "default") or a trick ("answer MATCH coding"), and names nothing. Quoted or
    pasted material (``material.request``) and negated stretches ("not the
    recipe coding") name nothing either. Two recipes named: None, the
    selector decides.

    Args:
        task: the task text.
        inventory: the selector's inventory.

    Returns:
        The recipe and the words that named it, or None.

    Rule: docs/delegate.md, "How the selector decides" (the explicit recipe name wins).
    """
    text = material.request(lexicon.analysed(task))
    folded = text.casefold()
    if not any(word in folded for word in RECIPE_WORDS):
        return None
    names = {r.name.casefold(): r for r in inventory if r.name.casefold() in folded}
    if not names:
        return None
    found: dict[str, tuple[Recipe, str, int]] = {}
    for match_ in _named_pattern(tuple(sorted(names, key=len, reverse=True))).finditer(text):
        name = (match_.group("after") or match_.group("before")).casefold()
        found.setdefault(name, (names[name], match_.group().strip(), match_.start()))
    negated = lexicon.negated_at(text, (start for _r, _w, start in found.values()))
    named = [(recipe, words) for recipe, words, start in found.values() if not negated[start]]
    return named[0] if len(named) == 1 else None


@functools.cache
def _named_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in names)
    recipe = "(?:" + "|".join(RECIPE_WORDS) + ")"
    return re.compile(rf"(?<![\w-]){recipe}{_CALLED}{_QUOTE}(?P<after>{alternatives}){_QUOTE}"
                      rf"(?![\w-])|(?<![\w-]){_QUOTE}(?P<before>{alternatives}){_QUOTE}[\s-]"
                      rf"{recipe}\b", re.IGNORECASE)


def trigger_match(task: str, inventory: Sequence[Recipe]) -> tuple[Recipe, str] | None:
    """Return ``(recipe, keyword)`` when exactly one recipe's trigger keyword occurs in the task.

    The task is lower-cased; a keyword occurs when it stands in that text as
    whole words, any run of white space or hyphens between them:
    ``übersetze`` fires in "Übersetze diese E-Mail" but not inside the book
    title "Übersetzen als Kunst", ``translate this`` not inside
    "mistranslate this", ``write an essay`` not in "write an essay-grading
    script" (a compound's head is its last part), and ``for and against`` in
    "a for-and-against showdown". Quoted or pasted material (``material.request``) is not the
    request: a keyword in it does not occur. Nor does a keyword inside a
    negated stretch: "Do not write an essay, just book me a flight" holds no
    ``write an essay`` (the negation rule of ``lexicon``, the one the ranking
    uses), nor a translating into plain words ("Translate this regex into
    plain English" asks for an explanation, ``reading.plain_words``). The
    fast path never costs a wrong spawn: when in doubt, the
    selector decides. Only the task's first ``lexicon.ANALYSED_CHARS``
    characters are read, as by the ranking.

    Rule: docs/delegate.md step 3.
    """
    reading_ = reading.read(lexicon.analysed(task))
    read = reading_.text
    text = read.lower()
    hits: list[tuple[int, Recipe, str]] = []  # (offset in text, recipe, keyword), keyword order
    for recipe in inventory:
        for keyword in recipe.keywords:
            words = tuple(keyword.lower().split())
            # each word stands in the text as it is, so a keyword with a word missing cannot
            # occur: no pattern is compiled for it (most keywords, in most tasks)
            if words and all(word in text for word in words):
                hits += [(m.start(), recipe, " ".join(words))
                         for m in _whole_words(words).finditer(text)]
    if not hits:
        return None
    negated = lexicon.negated_at(text, (offset for offset, _r, _k in hits))
    fired: dict[str, tuple[Recipe, str]] = {}
    for offset, recipe, keyword in hits:
        if not negated[offset]:
            fired.setdefault(recipe.name, (recipe, keyword))
    if len(fired) != 1:
        return None
    recipe, keyword = next(iter(fired.values()))
    if reading.own_source(read, reading_.given) is not None:
        return None  # the person's own data, not given: a rule the ranking applies
    return None if _gives_way(task, read, recipe, inventory) else (recipe, keyword)


def _gives_way(task: str, read: str, recipe: Recipe, inventory: Sequence[Recipe]) -> bool:
    """True when the rest of the request names another deliverable: the ranking decides.

    "Summarise this op-ed, with its arguments for and against" fires the
    debate's ``for and against``, but its predicate *summarise* is the summary
    recipe's own tag: the keyword describes the material, the verb names the
    deliverable. And when the ranking's best recipe is another one that names
    the deliverable above the threshold (a cue, a phrase, a tagged head word,
    ``offline.intent``), the whole request outweighs the keyword: "Translate
    this table into a *bar chart*" asks for a chart. ``read``: the task as
    ``reading.read`` reads it.
    """
    hits = ranking.rank(inventory, task)
    best = hits[0] if hits else None
    if (best is not None and best.recipe.name != recipe.name
            and best.score >= threshold(len(inventory)) and intent(best)):
        return True
    heads = [token for token in lexicon.tokens(read) if token.head]
    if not heads or heads[0].word != lexicon.opening(read):
        return False  # the request opens with no predicate of substance ("I have to …")
    predicate = heads[0].word
    return any(predicate in hit.cues for hit in hits if hit.recipe.name != recipe.name)


@functools.cache
def _whole_words(words: tuple[str, ...]) -> re.Pattern[str]:
    """Match ``words`` in a row (white space or hyphens between them), not inside longer words.

    Nor as the first part of a hyphenated compound: in "an essay-grading script"
    the compound's last part is its head, *essay* only says which kind.
    """
    return re.compile(r"(?<!\w)" + r"[\s-]+".join(map(re.escape, words)) + r"(?!\w|-\w)")


def select(ws: Workspace, task: str, *, model: str | None = None,
           recipes: RecipeSet | None = None, progress: Progress | None = None) -> Decision:
    """Choose a recipe for ``task`` or answer NONE; never raises.

    Args:
        ws: workspace (settings, cascades, active catalog).
        task: the task text (untrusted).
        model: the caller's model preference (beats ``llm.model``).
        recipes: the loaded recipes; loaded from ``ws`` when None.
        progress: wraps the LLM call (a spinner); not used on other paths.

    Returns:
        The Decision; its trace's ``latency_ms`` is the whole selection's wall time.

    Rule: docs/delegate.md.
    """
    started = time.monotonic()
    try:
        decision = _select(ws, task, model, recipes, progress)
    except Exception as exc:  # select() never raises (docs/delegate.md step 5)
        reason, rationale = none_for(exc)
        decision = none(reason, rationale, Mode.PRECHECK)
    return decision.with_trace(latency_ms=round((time.monotonic() - started) * 1000, 1))


def _select(ws: Workspace, task: str, model: str | None, recipes: RecipeSet | None,
            progress: Progress | None) -> Decision:

    if is_blank(task):
        return none(NoneReason.EMPTY_TASK, "empty task description", Mode.PRECHECK)
    inventory = (load_recipes(ws) if recipes is None else recipes).inventory(ws.catalog().names)
    if not inventory:
        return none(NoneReason.NO_RECIPES,
                    "no recipes available: the inventory is empty (every recipe is hidden, "
                    "internal or failed to load)", Mode.PRECHECK)
    named = named_recipe(task, inventory)
    if named is not None:
        recipe, words = named
        return match(recipe, f"the task names recipe '{recipe.name}' ('{words}'): the explicit "
                     "recipe name wins", Mode.NAMED)
    triggered = trigger_match(task, inventory)
    if triggered is not None:
        recipe, keyword = triggered
        return match(recipe, f"trigger keyword '{keyword}' of recipe '{recipe.name}' occurs "
                     "in the task", Mode.TRIGGER)
    if not ws.settings.llm_configured:

        return select_offline(task, inventory)
    return _with_llm(ws, task, inventory, model, progress)


def _with_llm(ws: Workspace, task: str, inventory: Sequence[Recipe], model: str | None,
              progress: Progress | None) -> Decision:
    """Decide with the LLM configured: the offline view first, then maybe the call."""
    from vance_cli.selector import combine  # deferred: only the LLM path loads it
    from vance_cli.selector.asking import ask_llm  # deferred: the prompt and reply modules

    view = combine.offline_view(task, inventory)
    mode = ws.settings.selector_combine
    if mode == "offline-first" and view.confident:
        return combine.decided_offline(view)
    asked = ask_llm(ws, task, inventory, model, progress, view.shortlist)
    return combine.combine(view, asked, mode)
