"""Write ``vance_cli/ranking/stem_exceptions.py``: words the Snowball stemmers conflate wrongly.

The offline selector compares words by their Snowball stems, meant as
inflection only (docs/delegate.md, "Offline selector"). The stemmers also
strip some derivational endings: English *personal* becomes *person*, German
*Gründer* (founder) becomes *grund*, the stem of *Gründe* (reasons). This
script finds such collisions with the words of the bundled recipes (titles,
tags, trigger keywords, descriptions) in two general word lists:

- English: the GCIDE word list of ``english-words``; two words are the same
  word when one is an inflection of the other (``-s``, ``-es``, ``-ed``,
  ``-ing``, with a silent *e* dropped, a consonant doubled or *y* → *ie*);
  a word of the list with a recipe word's stem that is no inflection of it is
  another word: an exception.
- German: the Wiktionary nouns of ``german-nouns`` with all their forms; a
  noun form with the stem of a recipe word that is a noun, whose lemma is not
  that word's lemma, is an exception (*Gründer* beside *Gründe*). A verb's
  nouns (*Abwägung* beside *abwägen*) name its act and stay together.
- English derivations that name the verb's act (``SAME_SENSE``: *-ion*,
  *-ment*) stay together too.

An exception's key is its own lemma (English: its shortest inflectional base
in the list), so its inflections still match one another, never the recipe
word. Run it when the bundled recipes' words change, with a Python that has
``english-words``, ``german-nouns``, ``PyStemmer`` and ``PyYAML`` (not
dependencies of vance: the output is a plain module)::

    python bench/stem_exceptions.py            # rewrites the module
    python bench/stem_exceptions.py --check    # exit 1 when it is out of date
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import unicodedata
from importlib import resources
from pathlib import Path

import Stemmer
import yaml

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "catalog" / "recipes"
OUT = ROOT / "vance_cli" / "ranking" / "stem_exceptions.py"
_WORD = re.compile(r"\w+")


def fold(text: str) -> str:
    """Case-fold and drop accents, as ``lexicon.fold``."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def recipe_words() -> set[str]:
    """Every word of the bundled recipes' titles, tags, keywords and descriptions."""
    found: set[str] = set()
    for path in sorted(RECIPES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        texts = [str(data.get("title", "")), str(data.get("description", "")),
                 *map(str, data.get("tags", []) or []),
                 *map(str, (data.get("triggers") or {}).get("keywords", []) or [])]
        for text in texts:
            found.update(w.casefold() for w in _WORD.findall(text) if not w.isdigit())
    return found


def bases(word: str) -> set[str]:
    """The word and what it is an inflection of (English)."""
    found = {word}
    for end, add in (("s", ""), ("es", ""), ("ies", "y"), ("ied", "y"), ("ed", ""), ("ed", "e"),
                     ("d", ""), ("ing", ""), ("ing", "e")):
        if word.endswith(end) and len(word) - len(end) >= 2:
            found.add(word[:len(word) - len(end)] + add)
    for end in ("ing", "ed"):  # a consonant doubled: "stopping", "planned"
        stem = word[:-len(end)] if word.endswith(end) else ""
        if len(stem) >= 3 and stem[-1] == stem[-2]:
            found.add(stem[:-1])
    return found


SAME_SENSE = ("ion", "ions", "ment", "ments")
"""English derivations that name the act of the verb they come from (*abstraction*,
*argumentation*, *assessment*): the same thing asked for, kept together."""


def english(vocabulary: set[str]) -> dict[str, str]:
    """English exceptions: word → key (see the module docstring)."""
    from english_words import get_english_words_set

    stem = Stemmer.Stemmer("english").stemWord
    words = {w for w in get_english_words_set(["gcide"], lower=True, alpha=True)
             if w.isascii() and len(w) >= 3}
    wanted = {fold(stem(fold(v))): v for v in vocabulary if v.isascii()}
    by_stem: dict[str, list[str]] = {}
    for word in words:
        key = fold(stem(word))
        if key in wanted:
            by_stem.setdefault(key, []).append(word)
    found: dict[str, str] = {}
    for key, members in by_stem.items():
        own = {v for v in vocabulary if fold(stem(fold(v))) == key}
        own_bases = set().union(*(bases(v) for v in own))
        for word in members:
            if word in own or not bases(word).isdisjoint(own_bases) or word.endswith(SAME_SENSE):
                continue
            known = sorted((b for b in bases(word) if b in words), key=len)
            found[word] = known[0] if known else word
    return found


def german(vocabulary: set[str]) -> dict[str, str]:
    """German exceptions: noun form → key (its lemma), see the module docstring."""
    stem = Stemmer.Stemmer("german").stemWord
    source = resources.files("german_nouns") / "nouns.csv"
    lemma_of: dict[str, set[str]] = {}
    with source.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            lemma = row["lemma"]
            if not lemma or not lemma[0].isupper() or " " in lemma:
                continue
            for column, value in row.items():
                if column not in {"lemma", "pos", "genus"} and not column.startswith("genus") \
                        and value and " " not in value and value[0].isupper():
                    lemma_of.setdefault(value.casefold(), set()).add(lemma.casefold())
            lemma_of.setdefault(lemma.casefold(), set()).add(lemma.casefold())
    wanted: dict[str, set[str]] = {}
    for v in vocabulary:
        if v in lemma_of:  # a noun: another noun's forms with its stem are another word
            wanted.setdefault(fold(stem(v)), set()).update(lemma_of[v] | {v})
    found: dict[str, str] = {}
    for form, lemmas in lemma_of.items():
        key = fold(stem(form))
        own = wanted.get(key)
        if own is None or not lemmas.isdisjoint(own) or form in own:
            continue
        found[form] = fold(min(lemmas, key=len))
    return found


def render(en: dict[str, str], de: dict[str, str]) -> str:
    """The module's source."""
    def table(name: str, doc: str, items: dict[str, str]) -> str:
        rows = "".join(f"    {k!r}: {v!r},\n" for k, v in sorted(items.items()))
        return f"{name}: dict[str, str] = {{\n{rows}}}\n\"\"\"{doc}\"\"\"\n"

    return ('"""Words the Snowball stemmers conflate with a bundled recipe word, wrongly.\n\n'
            "Generated by ``bench/stem_exceptions.py`` from general word lists (GCIDE via\n"
            "``english-words``, German Wiktionary nouns via ``german-nouns``); do not edit.\n"
            "Each maps a case-folded word to the key it is compared by instead of its stem\n"
            '(``lexicon.word_keys``).\n"""\n\n'
            "from __future__ import annotations\n\n"
            + table("ENGLISH", "English words that are derivations, not inflections, of a recipe "
                    "word's stem.", en) + "\n"
            + table("GERMAN", "German noun forms of another lemma than the recipe word with "
                    "that stem.", de))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the module is stale")
    args = parser.parse_args()
    vocabulary = recipe_words()
    source = render(english(vocabulary), german(vocabulary))
    if args.check:
        return 0 if OUT.read_text(encoding="utf-8") == source else 1
    OUT.write_text(source, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} ({source.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
