from __future__ import annotations

import pytest

from vance_cli.ranking import (
    INVENTORY_CAP,
    cap_inventory,
    content_words,
    phrases,
    rank,
    related,
    single_term_score,
    tag_terms,
)
from vance_cli.recipes import Recipe


def _recipe(name: str, description: str = "does things", tags: tuple[str, ...] = (),
            keywords: tuple[str, ...] = (), title: str = "") -> Recipe:
    return Recipe(name=name, engine="ford", description=description, tags=tags,
                  keywords=keywords, title=title)


def test_content_words_drop_function_words_and_numbers() -> None:
    assert content_words("Please summarize THE report of 2024, für mich und dich!") == \
        ["summarize", "report"]


def test_question_words_are_kept() -> None:
    assert content_words("Who wrote it and when?") == ["who", "wrote", "when"]


def test_phrases_join_runs_of_words() -> None:
    assert phrases("Pro and contra") == ["pro_and", "and_contra", "pro_and_contra"]


def test_multi_word_tags_become_one_term() -> None:
    assert tag_terms(["root cause", "tl;dr", "analyze"]) == "root_cause ; tl_dr ; analyze"


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("ubersetz", "ubersetz", True),
    ("ubersetz", "ubersetzen", True),           # imperative vs infinitive
    ("zusammen", "zusammenfassung", True),      # separable German verb
    ("summar", "summari", True),                # Porter's loose ends
    ("englisch", "english", True),              # shared prefix of 6 covering 86 %
    ("transfer", "translat", False),            # only "trans"
    ("compani", "compar", False),               # company is not compare
    ("plan", "planet", False),                  # too short to expand
    ("art", "articl", False),
])
def test_related_terms(a: str, b: str, expected: bool) -> None:
    assert related(a, b) is expected
    assert related(b, a) is expected


def test_rank_orders_by_relevance_and_ties_by_name() -> None:
    recipes = [_recipe("zeta"), _recipe("alpha"),
               _recipe("summary", tags=("summarize", "condense")),
               _recipe("translate", tags=("translate",))]
    hits = rank(recipes, "Please summarize this report")
    assert hits[0].recipe.name == "summary" and hits[0].score > 0
    assert hits[0].terms == ("summarize",)
    assert [h.recipe.name for h in hits[1:]] == ["alpha", "translate", "zeta"]
    assert all(h.score == 0 for h in hits[1:])


def test_rank_is_deterministic() -> None:
    recipes = [_recipe(f"r{i}", tags=("report",)) for i in range(5)]
    first = [h.recipe.name for h in rank(recipes, "a report")]
    assert first == [h.recipe.name for h in rank(list(reversed(recipes)), "a report")]
    assert first == sorted(first)


def test_german_inflections_match_tags() -> None:
    recipes = [_recipe("summary", tags=("zusammenfassen",)), _recipe("other")]
    assert rank(recipes, "Fasse das Protokoll zusammen")[0].recipe.name == "summary"


def test_phrase_tag_needs_the_whole_phrase() -> None:
    recipes = [_recipe("analyze", tags=("root cause",)), _recipe("other")]
    assert rank(recipes, "log in as root")[0].score == 0
    hit = rank(recipes, "find the root cause of the outage")[0]
    assert hit.recipe.name == "analyze" and "root cause" in hit.terms


def test_tag_words_weigh_more_than_description_words() -> None:
    recipes = [_recipe("a", description="we calculate numbers"),
               _recipe("b", tags=("calculate",)), _recipe("c")]
    hits = {h.recipe.name: h.score for h in rank(recipes, "calculate it")}
    assert hits["b"] > hits["a"] > 0


def test_empty_inputs() -> None:
    assert rank([], "anything") == []
    assert [h.score for h in rank([_recipe("a")], "the and of")] == [0.0]


def test_cap_keeps_everything_in_name_order_up_to_the_limit() -> None:
    recipes = [_recipe(f"r{i:02d}") for i in range(INVENTORY_CAP)][::-1]
    shown, capped = cap_inventory(recipes, "task")
    assert not capped and [r.name for r in shown] == sorted(r.name for r in recipes)


def test_cap_keeps_the_most_relevant_when_over_the_limit() -> None:
    filler = [_recipe(f"a{i:03d}") for i in range(120)]
    relevant = [_recipe("zz-translate", tags=("translate",)),
                _recipe("zz-summary", tags=("summarize",))]
    shown, capped = cap_inventory(filler + relevant, "summarize and translate this")
    names = [r.name for r in shown]
    assert capped and len(names) == INVENTORY_CAP
    assert {"zz-translate", "zz-summary"} <= set(names)
    assert names == sorted(names)


def test_single_term_score_grows_with_weight_and_inventory() -> None:
    assert single_term_score(17, 3.0) > single_term_score(17, 1.0) > 0
    assert single_term_score(100, 1.0) > single_term_score(17, 1.0)


def test_varints_decode_fts5_docsize_blobs() -> None:
    from vance_cli.ranking import _varints

    assert _varints(bytes([0, 5, 0x7F])) == [0, 5, 127]
    assert _varints(bytes([0x81, 0x00, 0x82, 0x80, 0x01, 3])) == [128, 2 * 16384 + 1, 3]


def test_description_length_normalises_only_the_description() -> None:
    short = _recipe("a-short", "summarize reports")
    long = _recipe("b-long", "summarize reports " + " ".join(f"filler{i}" for i in range(40)))
    other = _recipe("c-other", "translate letters")
    hits = {h.recipe.name: h.score for h in rank([short, long, other], "summarize")}
    assert hits["a-short"] > hits["b-long"] > 0 == hits["c-other"]
    # the name field is not length-normalised: a long name scores as a short one
    named = [_recipe("summarize", "a"), _recipe("summarize-" + "-".join("x" * 30), "a")]
    assert len({h.score for h in rank(named, "summarize")}) == 1
