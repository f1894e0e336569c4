"""The offline selector's decision rules: evidence first, the single-job rule, live questions.

The ranking's own rules (reading, stems, heads) are tested in tests/unit/ranking; here
each row is a decision, over a small inventory or over the bundled recipes.
"""

from __future__ import annotations

import pytest

from vance_cli.base.config import load_settings
from vance_cli.recipes.loader import Recipe
from vance_cli.selector.core import select
from vance_cli.selector.decision import Mode, NoneReason
from vance_cli.selector.offline import GENERAL_TAG, OFFLINE, select_offline
from vance_cli.workspace import Workspace


def _recipe(name: str, tags: tuple[str, ...] = (), description: str = "d") -> Recipe:
    return Recipe(name=name, engine="ford", description=description, tags=tags)


INVENTORY = [
    _recipe("essay", ("essay", "article")),
    _recipe("general", (GENERAL_TAG,), "one concrete job"),
    _recipe("research", ("research", "online", "sources"), "findings about products online"),
    _recipe("coding", ("code", "tests", "fix")),
    _recipe("council", ("perspectives", "roles", "views")),
    _recipe("lookup", ("capital", "fact")),
]


@pytest.mark.parametrize(("task", "expected", "why"), [
    # one piece of writing that no recipe names goes to the general worker
    ("Write a short poem for my grandma's birthday", "general", "piece of writing ('write')"),
    ("Can you write a cover letter for a data analyst job?", "general", "'write'"),
    ("Draft a polite email to my landlord to fix the heating", "general", "'draft'"),
    # topic words are not the deliverable
    ("Write a product description for our online shop", "general", "matched only"),
    # a recipe that names the deliverable wins: a cue, a phrase or two tag words
    ("Write an essay about tea", "essay", "cue 'essay'"),
    ("Write a Go handler for POST /users, with tests", "coding", "2 words"),
    # no writing verb, but a light verb whose object is a short piece of writing
    ("I need a LinkedIn post about our launch", "general", "piece of writing ('post')"),
    ("Come up with a catchy slogan for my bakery", "general", "('slogan')"),
    # neither: the general worker is never a fallback
    ("Order a large pizza", None, "no recipe"),
    ("I need a logo for my bakery", None, "no recipe"),
])
def test_single_job_rule(task: str, expected: str | None, why: str) -> None:
    decision = select_offline(task, INVENTORY)
    assert (decision.recipe.name if decision.recipe else None) == expected, decision.rationale
    assert decision.rationale.startswith(OFFLINE) and why in decision.rationale


def test_a_cue_that_names_a_piece_of_writing_leaves_it_to_the_general_worker() -> None:
    # "Nachrichten" (news) is also the plural of "Nachricht" (a message)
    inventory = [*INVENTORY, _recipe("news", ("nachrichten", "news"))]
    decision = select_offline("Schreib eine kurze Nachricht an meine Nachbarin", inventory)
    assert decision.recipe is not None and decision.recipe.name == "general", decision.rationale


def test_a_tag_that_names_the_object_leaves_a_writing_job_to_its_recipe() -> None:
    # 'tests' is tagged by two recipes, so it is no cue; as the object it still names them
    inventory = [*INVENTORY, _recipe("feature", ("tests", "phases"))]
    coding = _recipe("coding", ("code", "tests", "fix"), "write tests for a module")
    inventory = [coding if r.name == "coding" else r for r in inventory]
    decision = select_offline("Write tests for the payment module", inventory)
    assert decision.recipe is not None and decision.recipe.name == "coding", decision.rationale


def test_without_a_general_worker_a_writing_job_is_none() -> None:
    inventory = [r for r in INVENTORY if r.name != "general"]
    decision = select_offline("Write a short poem for my grandma", inventory)
    assert decision.reason is NoneReason.OFFLINE_NO_MATCH


def test_the_best_recipe_with_evidence_is_chosen_not_only_the_best_score() -> None:
    # "essay" scores highest on one weak word; "lookup" has a cue
    inventory = [_recipe("essay", ("rolle",)), _recipe("lookup", ("aufsatz",)), _recipe("x")]
    decision = select_offline("Ich brauche einen Aufsatz über die Rolle der Bahn", inventory)
    assert decision.recipe is not None and decision.recipe.name == "lookup", decision.rationale


@pytest.mark.parametrize("task", [
    "Where's my Amazon package right now?",
    "What's my current checking account balance?",
    "How many visitors are on our website right now?",
    "Wie ist mein aktueller Kontostand?",
    # the state of one's own things, or what happened to them
    "How much money is in my savings account?",
    "Did my transfer to Anna go through?",
    "Wie viele Urlaubstage habe ich laut Personalportal noch übrig?",
])
def test_a_live_question_about_ones_own_data_is_none(task: str) -> None:
    decision = select_offline(task, [*INVENTORY, _recipe("where", ("where", "how many"))])
    assert decision.reason is NoneReason.OFFLINE_NO_MATCH and decision.mode is Mode.OFFLINE
    assert "own data as it is now" in decision.rationale


@pytest.mark.parametrize("task", [
    "How much water should my dog drink a day?",      # a general question: a modal
    "How many calories are in my lunch of 2 eggs and 3 slices of toast?",  # numbers
    "Where did my startup go wrong? We ran out of money after the second round.",  # two
])
def test_a_general_question_with_my_is_no_live_question(task: str) -> None:
    assert "own data" not in select_offline(task, INVENTORY).rationale


@pytest.mark.parametrize("task", [
    "Who won last night's Champions League match?",
    "Is the 14:32 train from Leeds to York running on time today?",
])
def test_a_question_about_the_world_right_now_is_none(task: str) -> None:
    decision = select_offline(task, [*INVENTORY, _recipe("who", ("who", "time", "calculate"))])
    assert decision.reason is NoneReason.OFFLINE_NO_MATCH and decision.mode is Mode.OFFLINE
    assert "the world as it is now" in decision.rationale


def test_the_rationale_says_what_was_read() -> None:
    decision = select_offline("Move all 40 of our repos from Bitbucket to GitHub",
                              [_recipe("marvin", ("migration", "subtasks")), _recipe("x")])
    assert decision.recipe is not None and decision.recipe.name == "marvin"
    assert "read: moving a whole system as 'migration'" in decision.rationale


BUNDLED = [
    # deliverable over topic words, and the single-job rule
    ("Write a short poem for my grandma's 90th birthday", "default"),
    ("Draft a polite email to my landlord about the broken heating", "default"),
    ("Write a two-minute wedding toast for my brother", "default"),   # a measure is no 'minutes'
    ("Verfasse eine freundliche Absage an einen Bewerber", "default"),
    ("I need a toast for my brother's wedding, about two minutes, funny but warm.", "default"),
    ("wirte a polite msg to my neighbour about the dog", "default"),
    ("Rewrite this sentence so it sounds more professional: 'hey, need it asap'", "default"),
    ("Rewrite this function so it uses async", "coding"),     # a writing verb, code named
    ("Write a short essay about the history of tea", "essay-pipeline"),
    ("just wanna chat about whether remote work is changing how people make friends",
     "discuss"),                                   # topic words are no evidence of their own
    # numbers as evidence for computation
    ("If I put 250 euros a month into an ETF at 6%, how much will I have after 25 years?",
     "python"),
    ("What's the standard deviaton of 4, 8, 15, 16, 23 and 42?", "python"),
    ("How many ounces in a kilo?", "quick-lookup"),
    ("wats the capitol of australia", "quick-lookup"),            # chat spelling and a typo
    ("What's the boiling point of water at sea level in Fahrenheit?", "quick-lookup"),  # shape
    # file paths as evidence for code reading (and for code changes)
    ("How does calculate_vat() in tax/utils.go compute the rate?", "code-read"),
    ("What does src/auth/middleware.py do? Walk me through it.", "code-read"),
    ("Port the legacy Perl script tools/rotate_logs.pl to Python 3.", "coding"),
    ("Translate our Java PaymentValidator class into Rust.", "coding"),
    # several roles asked for their views
    ("I'd like to hear a CFO, a head of sales and a customer on our pricing",
     "council-three-perspectives"),
    ("Wie führen wir die 4-Tage-Woche ein? Bitte jeweils aus Sicht der Geschäftsführung, "
     "des Betriebsrats und einer Teamleiterin.", "council-three-perspectives"),
    # large migrations
    ("Move all 40 of our repos from Bitbucket to GitHub, CI included.", "marvin"),
    # German genre words
    ("Schreib mir eine Erörterung zum Thema 'Sollten Handys an Schulen verboten werden?' für "
     "die 10. Klasse.", "essay-pipeline"),
    ("Ich brauche einen Aufsatz über die Rolle der Industrialisierung.", "essay-pipeline"),
    # material is no evidence
    ("tl;dr this thread pls:\n\nAnna: I'll fix checkout and need a test account.",
     "document-summary"),
    # actions in the world stay NONE
    ("Where's my Amazon package right now?", None),
    ("Move all my photos from my phone to the laptop.", None),
    ("Book a table, a taxi and a hotel for Friday.", None),
    ("Transfer 500 euros from savings to checking.", None),
    ("Transfer the summary document to my USB stick", None),      # an act, whatever its object
    ("Remind me at 5pm to read the code review comments", None),
]


@pytest.mark.parametrize(("task", "expected"), BUNDLED)
def test_bundled_recipes(task: str, expected: str | None) -> None:
    decision = select(Workspace(load_settings()), task)
    assert (decision.recipe.name if decision.recipe else None) == expected, decision.rationale
