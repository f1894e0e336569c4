"""Offline routing, round 4 (docs/decisions/0015-offline-round-4.md): one test per mechanism.

Each sentence here is the test's own (not a case of a routing set); each
names the rule it checks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import build_file_tree, run_cli
from llm_server import ScriptedLLMServer
from routing_rules import decide as _decide
from routing_rules import inventory as _inventory

from vance_cli.ranking import lexicon, reading
from vance_cli.selector.core import named_recipe, trigger_match
from vance_cli.selector.decision import Mode

# -- the explicit recipe name wins ---------------------------------------------------------

@pytest.mark.parametrize(("task", "recipe"), [
    ("Use the recipe code-read to tell me what happens in our login flow.", "code-read"),
    ('Mit dem Rezept "discuss": ein paar Gedanken zu meinem Urlaub.', "discuss"),
    ("Run this through the translate recipe: I like trains.", "translate"),
    ('Write an essay with the essay recipe "document-summary": on tea', "document-summary"),
])
def test_a_recipe_named_as_a_recipe_wins_before_the_trigger(task: str, recipe: str) -> None:
    assert _decide(task) == (recipe, Mode.NAMED)


def test_the_named_recipe_needs_no_llm_call(llm_server: ScriptedLLMServer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    assert _decide("Use the recipe discuss for a chat about gardening") == ("discuss", Mode.NAMED)
    assert llm_server.requests == []


@pytest.mark.parametrize("task", [
    "answer MATCH coding",                                   # a bare name is no reference
    "Translate this into French: I like trains.",            # an ordinary word
    "Don't use the recipe coding, just explain closures",    # negated
    "Use the recipe coding or the recipe code-read for this",  # two named: the selector decides
    'Summarise: "the recipe coding is the best of all recipes we have"',  # material
])
def test_no_recipe_reference_names_nothing(task: str) -> None:
    assert named_recipe(task, _inventory()) is None


def test_wizard_prompt_naming_an_existing_recipe_reaches_it(project_dir: Path) -> None:
    """Issue 20 item 2: essay-mit-recipe naming plain-essay reaches it, not essay-pipeline."""
    build_file_tree(project_dir, {"recipes/plain-essay.yaml":
                                  "engine: ford\ndescription: A plain essay in one go.\n"})
    result = run_cli(["wizard", "run", "essay-mit-recipe", "--set", "recipe=plain-essay",
                      "--set", "topic=Trees in cities", "--no-input", "--dry-run", "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["decision"], data["recipe"]) == ("MATCH", "plain-essay")


def test_gremium_prompt_reaches_slartibartfast_offline(tmp_path: Path) -> None:
    """Issue 20 item 11: the bundled gremium wizard's rendered prompt reaches its recipe."""
    values = tmp_path / "board.json"
    values.write_text(json.dumps({
        "councilName": "product-board", "purpose": "Advise on the roadmap.", "createNow": False,
        "members": [{"name": "Ada", "persona": "A pragmatic CTO"},
                    {"name": "Ben", "persona": "A sales lead"}]}), encoding="utf-8")
    result = run_cli(["wizard", "run", "gremium", "--values", str(values), "--no-input",
                      "--dry-run", "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["recipe"] == "slartibartfast"


# -- the fast path gives way ---------------------------------------------------------------

def test_trigger_fires_no_translate_keyword_on_a_code_port() -> None:
    assert trigger_match("Please translate this old Perl helper into Python.", _inventory()) is None
    assert _decide("Please translate this old Perl helper into Python.")[0] == "coding"


def test_trigger_gives_way_when_the_predicate_is_another_recipes_cue() -> None:
    task = "Summarise this op-ed with its arguments for and against:\n\nCars pay a fee to enter."
    assert trigger_match(task, _inventory()) is None
    assert _decide(task)[0] == "document-summary"
    # the keyword at the predicate still fires
    hit = trigger_match("Give me a for and against on school uniforms", _inventory())
    assert hit is not None and hit[0].name == "debate-pro-contra"


# -- deliverable over decoration -----------------------------------------------------------

def test_a_frequency_phrase_does_not_outvote_the_predicate() -> None:
    # 'each time' is slartibartfast's tag; 'debug' at the predicate is coding's cue
    assert _decide("Debug the login handler, it times out each time I try.")[0] == "coding"


# -- question shape from the sentence ------------------------------------------------------

@pytest.mark.parametrize(("sentence", "asked"), [
    ("how many vacation days do I have left", True),
    ("wie hoch ist die Zugspitze", True),
    ("Is Pluto a planet", True),
    ("Hat mein Vermieter geantwortet", True),
    ("Can you translate this", False),          # a request
    ("Kannst du das übersetzen", False),
    ("Do a code review of my branch", False),   # 'do' opens requests
    ("Write a poem about rain.", False),
])
def test_questions_are_told_by_word_order(sentence: str, asked: bool) -> None:
    assert reading.asks(sentence) is asked


@pytest.mark.parametrize("task", ["how many sick days do I have left this year",
                                  "When is my next dentist appointment?",
                                  "Wann kommt mein Paket"])
def test_own_data_and_own_events_to_come_are_none(task: str) -> None:
    assert reading.live_question(task) == "own"
    assert _decide(task)[0] is None


def test_a_fact_question_without_question_mark_is_a_fact() -> None:
    assert reading.fact_question("Is Pluto a planet")
    assert _decide("who wrote the Magic Mountain")[0] == "quick-lookup"


def test_what_is_going_on_after_numbers_asks_for_causes() -> None:
    task = "Sign-ups were 900 in May and 300 in June. What's going on?"
    assert "why" in reading.read(task).text
    assert _decide(task)[0] == "analyze"


# -- greetings and politeness --------------------------------------------------------------

@pytest.mark.parametrize("task", ["Hi there! Could you write a short note to my landlord?",
                                  "Hallo! Schreib mir bitte einen Gruß an meine Tante.",
                                  "Good morning :) please draft a reply to the caterer. Thanks!"])
def test_a_greeting_before_a_writing_request_is_left_out(task: str) -> None:
    assert _decide(task)[0] == "default"


def test_a_greeting_word_inside_the_request_stays() -> None:
    assert "Hello" in reading.read("Hello world program in Rust please").text


# -- single jobs: editing, lists, pasted material ------------------------------------------

@pytest.mark.parametrize("task", [
    "Fix the typo in this sentence: Their going home.",
    "Correct the grammar in my cover letter.",
    "Korrigiere bitte die Rechtschreibung in meiner Bewerbung.",
    "Make a packing list for a week in Iceland",
    "Erstelle eine Einkaufsliste für ein Grillfest.",
    "Write my standup note. Yesterday: fixed the login bug.",
    "Word a job ad for a part-time gardener.",
])
def test_single_jobs_go_to_the_general_worker(task: str) -> None:
    assert _decide(task)[0] == "default"


def test_an_editing_verb_on_code_is_still_code() -> None:
    assert lexicon.writing_job("Fix the crash in utils.py") is None
    assert _decide("Fix the typo in parse_date() in utils.py")[0] == "coding"


def test_a_known_genre_is_no_typo() -> None:
    # "bewerbung" is one letter from the analysis tag "bewertung": it is a word of its own
    assert _decide("Korrigiere die Bewerbung")[0] != "analyze"


# -- stems: exceptions from general word lists ---------------------------------------------

@pytest.mark.parametrize(("derived", "base"), [("personal", "person"), ("Gründer", "Gründe"),
                                               ("Gründerin", "Gründe"),
                                               ("functional", "function")])
def test_a_derivation_is_not_the_recipe_word_it_stems_to(derived: str, base: str) -> None:
    assert set(lexicon.word_keys(derived)).isdisjoint(lexicon.word_keys(base))
    assert lexicon.is_exception(derived)


def test_inflections_stay_the_same_word() -> None:
    assert not set(lexicon.word_keys("persons")).isdisjoint(lexicon.word_keys("person"))
    assert not set(lexicon.word_keys("Gründe")).isdisjoint(lexicon.word_keys("Grund"))
    assert not set(lexicon.word_keys("Gründers")).isdisjoint(lexicon.word_keys("Gründer"))


def test_an_exception_is_no_typo_of_a_recipe_word() -> None:
    # "personal" is one letter from the council's tag "personas"
    assert _decide("Write a personal note to my old teacher.")[0] == "default"


def test_the_participle_of_a_hyphenated_adjective_is_no_verb() -> None:
    assert "ended" not in lexicon.prose_words("Open-ended conversation")
    assert "ended" in lexicon.prose_words("The meeting ended early")


# -- material of a light verb, ports, texts with numbers, platforms ------------------------

def test_what_a_light_verb_makes_something_out_of_is_material() -> None:
    task = "Mach aus meinen Notizen zur Feier einen kurzen Facebook-Post."
    heads = {t.word for t in lexicon.tokens(task) if t.head}
    assert "notizen" not in heads and "post" in heads
    assert lexicon.writing_job(task) == "post"


def test_a_port_into_a_newer_version_of_a_language_is_a_port() -> None:
    assert "port" in reading.read("Translate this Perl helper into modern Python 3.").text


def test_what_a_text_says_is_no_computation_on_its_numbers() -> None:
    task = "What does this clause say? Rent rises by 3% a year, capped at 50 euros."
    assert "calculate" not in reading.read(task).text


def test_a_web_app_is_code() -> None:
    assert "code" in reading.read("Add a dark mode to our web app.").text


def test_two_versions_of_one_language_are_a_port_not_numbers() -> None:
    read = reading.read("Convert my Python 2.7 scraper so it works on Python 3.12")
    assert read.text.lstrip().startswith("port") and "calculate" not in read.extra
    assert _decide("Move our Java 8 service to Java 21")[0] == "coding"


def test_a_how_question_after_a_remedy_for_code_asks_for_a_fix() -> None:
    task = "My parse_date() raises a ValueError on empty input, how do I make it go away?"
    assert reading.read(task).text.lstrip().startswith("fix")
    assert _decide(task)[0] == "coding"


def test_how_long_until_an_own_event_is_own_data() -> None:
    assert reading.live_question("How long until my car insurance runs out?") == "own"


def test_a_text_made_shorter_is_an_edit_and_its_text_is_material() -> None:
    task = "Make this sentence friendlier: After long debate we decline your offer."
    assert "debate" not in reading.read(task).text
    assert lexicon.writing_job(reading.read(task).text) == "sentence"
    assert _decide(task)[0] == "default"


def test_the_input_of_a_turning_verb_is_not_the_deliverable() -> None:
    assert _decide("Turn my lecture notes into a short quiz")[0] == "default"


@pytest.mark.parametrize("task", ["did the package arrive", "Was the meeting with Anna moved",
                                  "Hallo, wie geht's?",
                                  "Create a list of my contacts who have birthdays this month"])
def test_shapes_that_stay_none(task: str) -> None:
    assert _decide(task)[0] is None


def test_a_build_file_is_code_and_a_cue_beats_a_frequency_phrase() -> None:
    assert reading.is_code("Makefile")
    task = "The tests fail each time I push. Fix our Dockerfile so the build passes."
    assert _decide(task)[0] == "coding"
