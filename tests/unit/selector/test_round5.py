"""Offline routing, round 5 (docs/decisions/0016-offline-round-5.md): one test per mechanism.

Each sentence here is the test's own (not a case of a routing set); each
names the rule it checks.
"""

from __future__ import annotations

import pytest

from vance_cli.base.config import load_settings
from vance_cli.ranking import lexicon, reading
from vance_cli.recipes.loader import load_recipes
from vance_cli.selector.core import select, trigger_match
from vance_cli.selector.decision import Mode
from vance_cli.workspace import Workspace


def _decide(task: str) -> tuple[str | None, Mode]:
    ws = Workspace(load_settings())
    decision = select(ws, task)
    return (decision.recipe.name if decision.recipe else None), decision.mode


def _inventory() -> list:  # type: ignore[type-arg]
    ws = Workspace(load_settings())
    return load_recipes(ws).inventory(ws.catalog().names)


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
