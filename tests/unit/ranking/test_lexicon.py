"""lexicon: same word (stems), stop words, negation, clauses and head words, phrases."""

from __future__ import annotations

import pytest

from vance_cli.ranking import lexicon
from vance_cli.ranking.lexicon import (
    NEGATIONS,
    is_content,
    language,
    negated_at,
    ngrams,
    prose_words,
    tokens,
    word_keys,
)


def _same(a: str, b: str) -> bool:
    return bool(set(word_keys(a)) & set(word_keys(b)))


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("translate", "translating", True),        # English inflection
    ("summarize", "summarizes", True),
    ("übersetze", "übersetzen", True),         # German imperative / infinitive
    ("übersetzung", "übersetz", True),
    ("englische", "englisch", True),
    ("Zusammenfassung", "zusammenfassen", True),
    ("water", "waterfall", False),             # a longer word is not an inflection
    ("compose", "composition", False),         # derivation is not inflection
    ("personen", "personas", False),
    ("code", "codebase", False),
    ("reuse", "reusable", False),
])
def test_same_word_is_inflection_only(a: str, b: str, expected: bool) -> None:
    assert _same(a, b) is expected
    assert _same(b, a) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Please summarize the report", "en"),
    ("Fasse bitte das Protokoll zusammen", "de"),
    ("TL;DR", None),
    ("Feature X", None),
])
def test_language_from_function_words(text: str, expected: str | None) -> None:
    assert language(text) == expected


@pytest.mark.parametrize("word", ["the", "please", "give", "make", "create", "write", "three",
                                  "2024", "bitte", "mach", "erstelle", "drei", "task", "draft",
                                  "brauche", "benötige", "verfasse", "formuliere"])
def test_function_words_light_verbs_and_numbers_carry_no_intent(word: str) -> None:
    assert not is_content(word)


@pytest.mark.parametrize("word", ["who", "when", "why", "wann", "warum", "summarize"])
def test_question_words_are_content(word: str) -> None:
    assert is_content(word)


def _heads(task: str) -> list[str]:
    return [t.word for t in tokens(task) if t.head]


@pytest.mark.parametrize(("task", "heads", "not_heads"), [
    ("Translate the text for me", ["translate"], []),
    ("Can you explain this module to me?", ["explain"], []),
    ("Kannst du den Artikel über Steuern kurz zusammenfassen?", ["zusammenfassen"], ["steuern"]),
    ("Write a persuasive essay on transit", ["persuasive", "essay"], []),  # object of "write"
    ("Wie heißt die Hauptstadt von Kanada?", ["hauptstadt"], []),
    ("Generate a picture of a cat translating a book", ["picture"], ["translating"]),
    ("Post the summary on Slack", ["post"], ["summary"]),                    # a content predicate
    ("Start a rock playlist for our debate night", ["start"], ["debate"]),
    ("Fix the bug. Then explain the fix", ["fix", "explain"], []),
    ("I'm bored and just want to chat about books", ["chat"], []),           # "and" opens a clause
    ("Our importer crashes on empty lines, please patch it", ["patch"], []),  # so does "please"
    ("Paint a picture of two people debating", ["paint"], ["debating"]),    # English: not last
    ("Lass uns über Ideen für den Ausflug plaudern", ["plaudern"], []),     # German: verb last
    # a German comma ends a clause of its own: the word before it may be a verb
    ("Ich würde gern über Ideen für unser Fest plaudern, hast du Lust?", ["plaudern"], ["fest"]),
    ("Ideas for the party, plans for the trip and so on", [], ["party"]),   # English: no
    # A capitalised last word is a noun, not the verb of a German request
    ("Schreib mir eine Erörterung für die 10. Klasse", ["erörterung"], ["klasse"]),
    ("Ich brauche einen Aufsatz über die Rolle der Industrie", ["aufsatz"], ["rolle", "industrie"]),
    # A full stop after a number is an ordinal, not the end of a sentence
    ("Ein Aufsatz über das 19. Jahrhundert bitte", ["aufsatz"], ["jahrhundert"]),
    # … unless the number is long or has a separator: then it ends its sentence
    ("My rent is 1,350. Calculate my share", ["calculate"], []),
    ("We moved in 2023. Explain the costs", ["explain"], []),
    # The object after a light verb is a head wherever the verb stands
    ("My professor wants an essay on Kant", ["professor", "essay"], ["kant"]),
    ("I need a background report on the EU", ["background", "report"], ["eu"]),
])
def test_head_words(task: str, heads: list[str], not_heads: list[str]) -> None:
    found = _heads(task)
    assert set(heads) <= set(found), found
    assert not set(not_heads) & set(found), found


def test_negated_stretches_are_left_out_of_a_task() -> None:
    words = [t.word for t in tokens("Don't change anything, just explain it. No code, but tests")]
    assert words == ["explain", "tests"]


@pytest.mark.parametrize("task", [
    "Do not write an essay, just book me a flight",
    "No code, but tests. Never again; then without notes and with care\nnot this",
    "Keine Übersetzung, sondern eine Zusammenfassung ohne Quellen und dann nichts mehr",
    "A summary without citations or links but with a title",
])
def test_negated_at_agrees_with_the_words_tokens_leave_out(task: str) -> None:
    import re

    # One rule: a word negated_at calls negated is exactly one tokens() leaves out
    # for negation (NEGATIONS words themselves aside: they are stop words anyway).
    offsets = {m.start(): m.group().casefold() for m in re.finditer(r"\w+", task)}
    flags = negated_at(task, offsets)
    kept = {t.word for t in tokens(task)}
    for offset, word in offsets.items():
        if word in NEGATIONS or not is_content(word):
            continue
        assert flags[offset] == (word not in kept), word


def test_negated_stretches_and_question_words_are_left_out_of_prose() -> None:
    kept = prose_words("Delivers a written analysis, not code or a finished essay. "
                       "Use it only when it fits; it doesn't change the code.")
    assert "analysis" in kept and "fits" in kept
    assert not {"code", "essay", "finished", "when", "change"} & set(kept)


def test_german_nouns_are_marked() -> None:
    marked = {t.word: t.noun for t in tokens("Schreib einen Erörterungsaufsatz über JavaScript")}
    assert marked["erörterungsaufsatz"] is True
    assert marked["javascript"] is False        # an inner capital: not a German noun
    assert {t.word: t.noun for t in tokens("Analyse this")}["analyse"] is False  # sentence start


def test_words_after_a_topic_word_are_the_topic_up_to_the_clause_end() -> None:
    topic = {t.word: t.topic for t in tokens("Let's chat about whether remote work is changing "
                                             "friendships and then write a summary")}
    assert topic["chat"] is False
    assert topic["remote"] is True and topic["changing"] is True
    assert topic["summary"] is False                  # a new clause
    assert {t.word: t.topic for t in tokens("Ein Referat über den Buchdruck")}["buchdruck"]
    # a comma ends the topic too, and a German verb at the end is the request
    topic = {t.word: t.topic for t in tokens("Write an essay about tea, with sources")}
    assert topic["tea"] is True and topic["sources"] is False
    topic = {t.word: t.topic for t in tokens("Ich möchte über Ideen für das Fest plaudern")}
    assert topic["ideen"] is True and topic["plaudern"] is False


def test_phrases_may_leave_out_pronouns_and_determiners_but_not_negated_words() -> None:
    grams = {g for _p, g in ngrams("Walk me through it and bounce some ideas", 3)}
    assert ("walk", "through") in grams and ("bounce", "ideas") in grams
    assert ("walk", "me", "through") in grams
    negated = {g for _p, g in ngrams("Skip this, no bullet points", 2)}
    assert ("bullet", "points") not in negated


def test_a_phrasal_verb_may_have_its_object_before_the_particle() -> None:
    grams = {g for _p, g in ngrams("Can you boil this email thread down to who wants what?", 2)}
    assert ("boil", "down") in grams
    assert ("boil", "down") not in {g for _p, g in ngrams("Boil the pasta. Calm down.", 2)}
    assert ("sum", "up") not in {g for _p, g in ngrams("Sum the five long rows of values up", 2)}


@pytest.mark.parametrize("word", ["wanna", "whats", "pls", "u"])
def test_chat_spellings_of_function_words_carry_no_intent(word: str) -> None:
    assert not is_content(word)


def test_analysed_text_is_a_bounded_prefix_without_a_cut_word() -> None:
    short = "Translate this letter"
    assert lexicon.analysed(short) is short
    exact = "x" * lexicon.ANALYSED_CHARS
    assert lexicon.analysed(exact) == exact
    huge = "word " * (lexicon.ANALYSED_CHARS // 5) + "übersetzung " * 100_000
    head = lexicon.analysed(huge)
    assert len(head) <= lexicon.ANALYSED_CHARS and huge.startswith(head)
    assert head.split() == ["word"] * (lexicon.ANALYSED_CHARS // 5)
    # a word cut by the limit is left out whole, not as a fragment
    cut = "a" * (lexicon.ANALYSED_CHARS - 3) + " translate"
    assert lexicon.analysed(cut + " " * 10) == "a" * (lexicon.ANALYSED_CHARS - 3) + " "
    # a cut right after a word keeps it
    whole = "b" * (lexicon.ANALYSED_CHARS - 4) + " tea essay"
    assert lexicon.analysed(whole) == "b" * (lexicon.ANALYSED_CHARS - 4) + " tea"


@pytest.mark.parametrize(("task", "verb"), [
    ("Write a short poem for my grandma", "write"),
    ("Can you write a cover letter for me?", "write"),            # after a modal opening
    ("I need you to write a wedding toast", "write"),
    ("Please draft a polite email to my landlord", "draft"),
    ("Verfasse eine freundliche Absage", "verfasse"),
    ("Kannst du mir eine kurze Rede schreiben?", "schreiben"),    # German: verb last
    ("Add dark mode and write tests for the toggle", None),      # a later step, not the predicate
    ("Don't write anything, just book a flight", None),          # negated
    ("My professor wants an essay. Can you write it?", None),    # the first predicate decides
    ("Compose a melody for my niece", None),                      # compose: also music
    ("Email the essay I wrote yesterday", None),
    # a light verb whose object names a short piece of writing
    ("I need a toast for my brother's wedding, about two minutes", "toast"),
    ("Can you give me a catchy slogan for my bakery?", "slogan"),
    ("Come up with a catchy slogan for my bakery", "slogan"),
    ("I need a LinkedIn post about our launch", "post"),
    ("Ich brauche eine kurze Rede für die Hochzeit", "rede"),
    ("Ich hätte gern einen Geburtstagsgruß für Anna", "geburtstagsgruss"),  # a compound head
    ("I need a post office near the station", None),     # the object's head is 'office'
    ("I need a history of the Roman empire", None),      # an English word's end is chance
    ("Create a birthday party invitation for my son", None),  # making: maybe a card
    ("Compose a song about Java", None),
    ("Come up with a new multi-step recipe for reviews", None),  # no piece of writing
    ("Make up a bedtime story about a brave little turtle", "story"),  # a verb of inventing
    ("make up your mind", None),
    # what a turning verb makes
    ("Turn these notes into a LinkedIn post announcing our new office:", "post"),
    ("Verwandle das Protokoll in eine kurze Rede", "rede"),
    ("Turn these notes into a summary", None),
    ("Turn on the lights in the kitchen", None),
    ("I need a birthday greeting for Tom", "greeting"),
    ("Need a short product description for handmade candles", "description"),
    ("Ich suche einen netten Spruch für die Glückwunschkarte", "spruch"),  # suche: light
    ("I need an email, not a letter", "email"),
    ("Tell me a joke about cats", "joke"),
])
def test_a_writing_job_is_a_writing_verb_or_a_short_text_asked_for(task: str,
                                                                    verb: str | None) -> None:
    assert lexicon.writing_job(task) == verb
