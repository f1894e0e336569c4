"""Typos: a task word one slip away from a word of the inventory reads as that word.

People type fast ("wats the capitol of australia", "can u explian", "standard
deviaton"); the ranking compares stems, and a misspelt word matches nothing.
Rule (docs/delegate.md, "Offline selector"): a word of the task of at least
``TYPO_MIN`` letters that matches no index term, and that one slip turns into
exactly one word of the inventory's index terms, is read as that word. A slip
is one letter missing, doubled or changed, or two neighbours swapped — never
the first letter, which people rarely get wrong and which keeps real words
apart (``refine`` is not ``define``); see ``slips`` for the letters that
keep other real words apart.

A two-word tag or keyword written as one word ("tradeoffs" for
``trade-offs``, "followup" for ``follow up``) is read as its two words
(``split_compound``): a compound is spelt closed, hyphenated or open.

Invariants:
- Only words that match nothing are corrected, so a correct task reads as before.
- Ambiguity corrects nothing: when the slips lead to two different words,
  the word stays as written.
- Cost: about 60 candidate spellings per letter of each unmatched word,
  looked up in the sets of words the ranking already has.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet

from vance_cli.ranking import lexicon

TYPO_MIN = 6
"""Fewest letters of a word that may be a typo: shorter words are too close to each
other ("fact" / "face", "wats" / "what") to guess."""

CHANGE_MIN = 8
"""Fewest letters of a word in which one changed letter counts as a slip ("standart");
in shorter words a changed letter is mostly another word ("export" / "expert",
"invest" / "invent", "charge" / "change")."""

VOWEL_CHANGE_MIN = 7
"""Fewest letters of a word in which one vowel written for another counts as a slip
("capitol" / "capital")."""

ALPHABET = "abcdefghijklmnopqrstuvwxyzäöüß"
"""Letters a slip may add or change (case-folded English and German)."""

VOWELS = "aeiouäöüy"

COMPOUND_PART = 3
"""Fewest letters of each part of a compound that ``split_compound`` splits ("up" is
too short to be found inside a word by chance: "setup" is no "set up" of a recipe)."""


def slips(word: str) -> Iterator[str]:
    """Yield every spelling one slip away from ``word`` (see the module docstring).

    Neither the first nor the last letter is left out or added (a word one
    letter longer or shorter at its end is mostly another word: ``weight`` /
    ``weigh``, ``locale`` / ``local``); a letter too many is only a doubled
    one ("simmulate"; ``clause`` is not ``cause``); a letter is changed only
    in long words (``CHANGE_MIN``, ``VOWEL_CHANGE_MIN``).

    Args:
        word: a case-folded word.
    """
    n = len(word)
    for i in range(1, n):
        if i + 1 < n:
            if word[i] in (word[i - 1], word[i + 1]):
                yield word[:i] + word[i + 1:]                          # a doubled letter
            yield word[:i] + word[i + 1] + word[i] + word[i + 2:]      # neighbours swapped
        yield from (word[:i] + letter + word[i:] for letter in ALPHABET)  # a letter added
        if n >= CHANGE_MIN:
            letters = ALPHABET
        elif n >= VOWEL_CHANGE_MIN and word[i] in VOWELS:
            letters = VOWELS
        else:
            continue
        yield from (word[:i] + letter + word[i + 1:] for letter in letters if letter != word[i])


def correct(word: str, *known: AbstractSet[str]) -> str | None:
    """Return the one known word that ``word`` is a slip of, or None.

    Args:
        word: a case-folded word of the task that matched nothing.
        known: sets of the inventory's words (case-folded), e.g. its
            single-word terms and the words of its phrase terms.

    Returns:
        The word meant, when exactly one is one slip away; None when the word
        is short, a number, or no word or several are that close.
    """
    if len(word) < TYPO_MIN or not word.isalpha():
        return None
    candidates = set(slips(word))
    found: set[str] = set().union(*(candidates & words for words in known))
    return found.pop() if len(found) == 1 else None


def split_compound(word: str, pairs: Mapping[str, AbstractSet[str]]) -> str | None:
    """Return ``word`` split into a two-word phrase term it writes as one word, or None.

    "tradeoffs" is ``trade`` + ``offs``, the phrase ``trade offs`` (a tag
    ``trade-offs``); the second part is compared by its stems, so
    "tradeoff" splits too. Each part has at least ``COMPOUND_PART`` letters.

    Args:
        word: a case-folded word of the task that matched nothing.
        pairs: the inventory's two-word phrase terms, first word → second words.

    Returns:
        The two words joined by a space, when exactly one split matches.
    """
    if len(word) < 2 * COMPOUND_PART or not word.isalpha():
        return None
    found = set()
    for cut in range(COMPOUND_PART, len(word) - COMPOUND_PART + 1):
        seconds = pairs.get(word[:cut])
        if not seconds:
            continue
        rest = word[cut:]
        keys = set(lexicon.word_keys(rest))
        if any(not keys.isdisjoint(lexicon.word_keys(second)) for second in seconds):
            found.add(f"{word[:cut]} {rest}")
    return found.pop() if len(found) == 1 else None


def known_words(terms: Iterable[str]) -> set[str]:
    """Return the words of index terms (a phrase term gives each of its words)."""
    return {word for term in terms for word in term.split(" ")}
