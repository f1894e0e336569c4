"""spelling: a word one slip from an inventory word reads as that word; real words stay apart."""

from __future__ import annotations

import pytest

from vance_cli.ranking.spelling import TYPO_MIN, correct, known_words, split_compound

KNOWN = known_words(["cause", "capital", "explain", "translate", "recommendation", "simulate",
                     "standard deviation", "expert", "invent", "change", "convert", "weigh",
                     "into german", "local", "analyse", "render", "define"])


@pytest.mark.parametrize(("typed", "meant"), [
    ("capitol", "capital"),               # a vowel for a vowel (7 letters)
    ("explian", "explain"),               # neighbours swapped
    ("transalte", "translate"),
    ("recomendation", "recommendation"),  # a letter missing
    ("simmulate", "simulate"),            # a letter doubled
    ("deviaton", "deviation"),            # a word of a phrase tag
    ("standart", "standard"),             # a changed letter in a long word
])
def test_a_slip_reads_as_the_word_meant(typed: str, meant: str) -> None:
    assert correct(typed, KNOWN) == meant


@pytest.mark.parametrize("word", [
    "export",     # expert: a changed letter in a short word is another word
    "invest",     # invent
    "charge",     # change
    "concert",    # convert: a changed consonant
    "weight",     # weigh: a letter at the end is another word
    "germany",    # german
    "locale",     # local
    "analyst",    # analyse
    "reader",     # render
    "clause",     # cause: a letter too many that doubles nothing
    "refine",     # define: the first letter is never a slip
    "wats",       # too short to guess
    "x2000y",     # not a word
])
def test_other_real_words_stay_apart(word: str) -> None:
    assert correct(word, KNOWN) is None


def test_short_words_are_never_guessed() -> None:
    assert len("fcat") < TYPO_MIN and correct("fcat", known_words(["fact"])) is None


def test_ambiguity_corrects_nothing() -> None:
    assert correct("planing", known_words(["planning"])) == "planning"
    assert correct("planing", known_words(["planning", "planting"])) is None


PAIRS = {"trade": {"offs"}, "follow": {"up"}, "sum": {"up"}, "bullet": {"points"},
         "set": {"up"}}


@pytest.mark.parametrize(("typed", "meant"), [
    ("tradeoffs", "trade offs"),     # a hyphenated tag written closed
    ("tradeoff", "trade off"),       # its second part by its stem
    ("bulletpoints", "bullet points"),
    ("followup", None),              # "up" is too short a part to split off
    ("setup", None),
    ("trademark", None),             # no phrase ends so
    ("trade", None),
])
def test_a_two_word_tag_written_as_one_word_reads_as_its_words(typed: str,
                                                             meant: str | None) -> None:
    assert split_compound(typed, PAIRS) == meant
