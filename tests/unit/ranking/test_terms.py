"""A recipe's index terms: what they are, the memo by text, the stored form and its version."""

from __future__ import annotations

import json

import pytest

from vance_cli.ranking import terms as recipe_terms
from vance_cli.ranking.terms import VERSION, analyse, remember, to_cache
from vance_cli.recipes.loader import Recipe

SAMPLE = Recipe(
    name="sample", engine="ford", title="Who writes the Überblick?",
    description="Delivers a written analysis, not code or an essay. Don't translate it; use it "
                "when nothing else fits, but explain why: 3 steps, snake_case names.",
    tags=("root cause", "Walk-through", "!!!", "Übersetzen", "why"),
    keywords=("for and against", "pro/contra"))

PINNED = {
    1: (["writes", "the", "überblick"],
        ["root cause", "walk through", "übersetzen", "why"],
        ["for and against", "pro contra"],
        ["delivers", "a", "written", "analysis", "do", "use", "it", "nothing", "else", "fits",
         "but", "explain", "3", "steps", "snake_case", "names"]),
    # 2: a hyphenated adjective's participle is dropped ("open-ended" is "open"); the
    # sample holds none, so its terms are those of 1
    2: (["writes", "the", "überblick"],
        ["root cause", "walk through", "übersetzen", "why"],
        ["for and against", "pro contra"],
        ["delivers", "a", "written", "analysis", "do", "use", "it", "nothing", "else", "fits",
         "but", "explain", "3", "steps", "snake_case", "names"]),
}
"""The analysis of ``SAMPLE`` under each ``VERSION`` of the rules. When a change of
``lexicon`` or ``recipe_terms`` makes this test fail, bump ``recipe_terms.VERSION`` (so
stored analyses are dropped) and add the new analysis under the new number; never edit
an old entry."""


def _recipe(description: str, tags: tuple[str, ...] = (), name: str = "r") -> Recipe:
    return Recipe(name=name, engine="ford", description=description, tags=tags)


def test_the_rules_yield_the_pinned_terms_of_this_version() -> None:
    assert VERSION in PINNED, "bumped VERSION: pin the sample's analysis under it"
    assert analyse(SAMPLE) == PINNED[VERSION], (
        "the rules changed what terms a text yields: bump recipe_terms.VERSION and pin the "
        "new analysis under it")


def test_terms_leave_out_negations_and_question_words_of_running_text_only() -> None:
    title, tags, _keywords, description = analyse(SAMPLE)
    assert "who" not in title and "why" in tags and "why" not in description
    assert "code" not in description and "translate" not in description
    assert "walk through" in tags and "!!!" not in " ".join(tags)  # a tag without words is none


def test_the_memo_is_keyed_by_text_not_by_recipe() -> None:
    first = analyse(_recipe("Summarize the report", name="a"))
    assert analyse(_recipe("Summarize the report", name="b")) is first
    assert analyse(_recipe("Summarize the reports", name="a")) is not first
    assert analyse(_recipe("Summarize the report", tags=("x",))) is not first


def test_the_memo_starts_over_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recipe_terms, "MEMO_LIMIT", 3)
    recipe_terms._memo.clear()
    for i in range(5):
        analyse(_recipe(f"text {i}"))
    assert 1 <= len(recipe_terms._memo) <= 3


def test_a_stored_analysis_round_trips_through_json() -> None:
    recipe = _recipe("Translate the letter, not the envelope", tags=("into spanish",))
    stored = json.loads(json.dumps(to_cache(analyse(recipe))))
    assert stored == {"version": VERSION, "title": "", "tags": ["into spanish"], "keywords": [],
                      "description": "translate the letter"}
    recipe_terms._memo.clear()
    remember(recipe, stored)
    assert analyse(recipe) == ([], ["into spanish"], [], ["translate", "the", "letter"])
    recipe_terms._memo.clear()
    remember(recipe, {**stored, "description": "marker"})
    assert analyse(recipe)[3] == ["marker"]  # taken as stored, not worked out again


def test_the_sample_round_trips_through_the_stored_form() -> None:
    recipe_terms._memo.clear()
    remember(SAMPLE, json.loads(json.dumps(to_cache(PINNED[VERSION]))))
    assert analyse(SAMPLE) == PINNED[VERSION]


VALID = {"version": VERSION, "title": "", "tags": [], "keywords": [], "description": "x"}


@pytest.mark.parametrize("stored", [
    None, [], "x", {**VALID, "version": None}, {**VALID, "version": VERSION + 1},
    {**VALID, "tags": None}, {**VALID, "description": ["x"]}, {"version": VERSION},
])
def test_a_foreign_or_broken_stored_analysis_is_ignored(stored: object) -> None:
    recipe = _recipe("Plan the trip")
    recipe_terms._memo.clear()
    remember(recipe, stored)
    assert analyse(recipe) == ([], [], [], ["plan", "the", "trip"])
