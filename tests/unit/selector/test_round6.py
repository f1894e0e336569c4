"""Offline routing, round 6 (docs/decisions/0017-offline-round-6.md): one test per mechanism.

Each sentence here is the test's own (not a case of a routing set); each
names the rule it checks.
"""

from __future__ import annotations

import pytest
from routing_rules import decide as _decide

# -- what a recipe is not for --------------------------------------------------------------

@pytest.mark.parametrize("task", [
    "Compare the Kobo Libra and the PocketBook Era for e-reading, with links to tests",
    "Vergleiche den Thermomix und den Monsieur Cuisine, mit Links zu Testberichten",
])
def test_the_word_a_recipe_disowns_wins_for_its_recipe_on_its_own(task: str) -> None:
    # analyze rests on 'compare' alone and says it is not for comparisons with links to
    # check; web-research's tag 'links' reaches the threshold by itself, one word as it is
    assert _decide(task)[0] == "web-research"


def test_without_the_disowned_word_the_comparison_stays_an_analysis() -> None:
    assert _decide("Compare the Kobo Libra and the PocketBook Era for reading in bed")[0] \
        == "analyze"
