"""Offline routing, round 5 (docs/decisions/0016-offline-round-5.md): one test per mechanism.

Each sentence here is the test's own (not a case of a routing set); each
names the rule it checks.
"""

from __future__ import annotations

import pytest
from routing_rules import decide as _decide
from routing_rules import inventory as _inventory

from vance_cli.ranking import lexicon, reading
from vance_cli.selector.core import trigger_match
from vance_cli.selector.decision import Mode


def _read(task: str) -> reading.Reading:
    return reading.read(lexicon.analysed(task))


# -- one's own data, not given ----------------------------------------------------------------

@pytest.mark.parametrize("task", [
    "Condense my Telegram messages from yesterday into three bullets",
    "Work out the median of my card transactions in March",
    "Fasse die Nachrichten zusammen, die mir mein Chef weitergeleitet hat",
    "Rechne aus, wie viel ich laut meinem Girokonto für Strom zahle",
])
def test_a_request_on_ones_own_store_that_gives_nothing_is_none(task: str) -> None:
    assert _decide(task) == (None, Mode.OFFLINE)


@pytest.mark.parametrize(("task", "recipe"), [
    ("Summarise my notes from the workshop", "document-summary"),   # notes: no account
    ("Condense my messages: Hi Tom, the meeting moved to 3pm. Bye", "document-summary"),  # given
    ("Draft a reply to the message my landlord sent me", "default"),  # a piece of writing
])
def test_own_material_that_is_given_or_no_store_is_routed(task: str, recipe: str) -> None:
    assert _decide(task)[0] == recipe


def test_the_trigger_gives_way_to_ones_own_data() -> None:
    assert trigger_match("Übersetze die Sprachnachricht, die mir Anna geschickt hat",
                         _inventory()) is None
    assert trigger_match("Übersetze diese Nachricht: Ciao Anna", _inventory()) is not None


@pytest.mark.parametrize(("text", "kind"), [
    ("which appointments do I have next week?", "own"),
    ("how much did I pay for parking this month", "own"),
    ("Wie viel habe ich diesen Monat für Essen ausgegeben? Bitte ausrechnen.", "own"),
    ("how much does a litre of milk weigh", None),
    ("how do I have fewer meetings", None),
])
def test_first_person_questions_about_ones_things_are_own_data(text: str,
                                                                kind: str | None) -> None:
    assert reading.live_question(text) == kind


# -- a recipe that says it is not for it does not win it ---------------------------------------

def test_a_comparison_that_asks_for_sources_to_cite_is_research() -> None:
    assert _decide("compare three note-taking apps for students and cite sources")[0] == (
        "web-research")
    assert _decide("compare three note-taking apps for students")[0] == "analyze"


def test_negated_words_of_a_description_are_what_it_is_not_for() -> None:
    assert lexicon.negated_words("Reads code. It does not change the code.") == ["change",
                                                                                  "code"]


# -- code by its kind and inline ---------------------------------------------------------------

@pytest.mark.parametrize(("task", "recipe"), [
    ("my regex for phone numbers is too greedy, please fix it", "coding"),
    ("write a powershell one-liner that lists stopped services", "coding"),
    ("what does this return? SELECT id FROM users WHERE age > 30", "code-read"),
    ("this pattern misses some dates, fix it: \\d{2}\\.\\d{2}", "coding"),
])
def test_code_by_its_kind_or_written_inline_is_code(task: str, recipe: str) -> None:
    assert _decide(task)[0] == recipe


def test_a_measure_is_not_a_one_liner() -> None:
    assert "one-liner" not in _read("a bash one-liner please").text
    assert _read("a two-minute toast").text == "a two toast"


def test_making_code_faster_adds_change() -> None:
    assert "change" in _read("make it faster: `for x in xs: total += x;`").extra
    assert "change" not in _read("make this paragraph shorter").extra


# -- single writing jobs by their shape ----------------------------------------------------------

@pytest.mark.parametrize(("task", "verb"), [
    ("make the last paragraph of my talk sound warmer", "paragraph"),  # a seeming verb
    ("Formulier den Satz höflicher", "formulier"),               # a German imperative
    ("create a ten-question quiz on the solar system", "quiz"),  # a quiz is a text, made
])
def test_edits_imperatives_and_quizzes_are_one_writing_job(task: str, verb: str) -> None:
    assert lexicon.writing_job(task) == verb


def test_a_dash_between_spaces_ends_a_clause_part_as_a_comma_does() -> None:
    task = "Ich will mit dir über Gärten plaudern \u2013 ganz locker"
    heads = [t.word for t in lexicon.tokens(task) if t.head]
    assert "plaudern" in heads
