"""Lexical ranking of recipes for a task: field-weighted BM25 over an in-memory SQLite FTS5 index.

Used twice (DESIGN.md §5): to cap the inventory shown to the LLM at the 50
recipes most relevant to the task, and as the offline selector.

Why SQLite FTS5 and not ``bm25s``/``rank_bm25``: ``sqlite3`` is loaded
anyway for the state database, so the ranking costs no import time (those
libraries pull numpy, ≈ 145 ms), and FTS5 brings what they lack: a Porter
stemmer, Unicode case and diacritic folding (``unicode61 remove_diacritics
2``) and per-field postings. The score itself is computed here from FTS5's
postings (``fts5vocab``), not by FTS5's ``bm25()``: that one uses the classic
IDF ``log((N - n + 0.5) / (n + 0.5))``, which is zero or negative for a word
in half the recipes or more — useless for a tenant with three recipes —
and it counts every expansion of a task word as a separate term. Here the
IDF is Lucene's ``log(1 + (N - n + 0.5) / (n + 0.5))`` (always positive) and
all index terms a task word expands to count as that one word.

Cost: the index is built once per call; only the postings of index terms
related to a task word are read (candidates share the word's first
``MIN_PREFIX`` characters), and field lengths come from FTS5's ``docsize``
table, so a 5,000-recipe inventory ranks in about a tenth of a second.

Invariants:
- Each recipe is one row with five fields: name (``-``, ``_`` and ``/``
  split words), title, tags, trigger keywords, description; field weights
  are ``FIELD_WEIGHTS``.
- The task is reduced to its content words: Unicode words, stop words of
  English and German removed, stemmed by the same tokenizer as the index.
- A multi-word tag (``unit tests``, ``for and against``) is one phrase
  term: it matches the same words in a row in the task, and its single
  words are no tag evidence on their own (``root`` is not ``root cause``).
- A task word also matches index terms that share a long common prefix
  (``related``): German inflection and compounds (``übersetze`` /
  ``übersetzen``, ``zusammenfassen`` / ``zusammenfassung``) and the
  Porter stemmer's loose ends (``summar`` / ``summari``).
- Score per recipe (BM25F): the sum over distinct task words of
  ``idf * tf * (k1 + 1) / (tf + k1)``, where ``tf`` is the count of the
  word's terms in the recipe, weighted per field (``FIELD_WEIGHTS``) and
  length-normalised per field (``FIELD_B``: only the description). Higher
  is better; ties and zero scores keep name order, so the ranking is
  deterministic.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vance_cli.recipes import Recipe

FIELDS = ("name", "title", "tags", "keywords", "description")
"""Indexed fields of a recipe, in column order."""

TAG_WEIGHT = 3.0
"""BM25 weight of the tags field: tags are the recipe author's chosen intent
words (verbs and deliverables), so one tag word counts three times a word of
running text."""

FIELD_WEIGHTS = (1.0, 1.0, TAG_WEIGHT, 1.0, 1.0)
"""BM25 weight per field of ``FIELDS``. Everything but the tags is ordinary
text: names are often topic words (``python``), and a trigger keyword's
strong signal is its whole phrase, which the trigger fast path already
uses; its single words are ordinary evidence."""

TOKENIZER = "porter unicode61 remove_diacritics 2 tokenchars '_'"
"""FTS5 tokenizer: Porter stemming over Unicode words, case and accents folded;
``_`` is a word character, so a multi-word tag indexed as ``unit_tests`` is one term."""

_TOKENIZE = "\"" + TOKENIZER + "\""  # the fts5 option, quoted for SQL

PHRASE_JOINER = "_"
"""Joins the words of a multi-word tag (and of the task's word n-grams) into one term."""

MAX_PHRASE = 4
"""Longest multi-word tag matched as a phrase, in words."""

BM25_K1 = 1.2
"""BM25 term-frequency saturation (the usual value, also FTS5's)."""

FIELD_B = (0.0, 0.0, 0.0, 0.0, 0.75)
"""BM25F length normalisation per field of ``FIELDS``: only the description is
running text (the usual ``b = 0.75``); names, titles, tag and keyword lists are
short lists of alternatives, and a recipe with many synonyms must not be
penalised for them."""

MIN_PREFIX = 5
"""Shortest term, in characters, that matches the longer terms it is a prefix of."""

MIN_COMMON = 6
"""Shortest common prefix, in characters, that relates two terms neither of which is a
prefix of the other (``englisch`` / ``english``; not ``compani`` / ``compar``)."""

COMMON_SHARE = 0.75
"""Share of the shorter term that such a common prefix must cover."""

INVENTORY_CAP = 50
"""Most recipes shown to the LLM (DESIGN.md §5 step 4)."""

_WORD = re.compile(r"\w+", re.UNICODE)
_COLUMN = {name: i for i, name in enumerate(FIELDS)}

STOP_WORDS = frozenset("""
a about above after again against all also am an and any are as at be been before being
below between both but by can could did do does doing done down during each either else
ever every few for from further get gets got had has have having he her here hers him his
how i if in into is it its itself just let lets like me might mine more most much must my
myself need needs no nor not now of off on once one only or other our ours out over own
please put same shall she should so some such than that the their them then there these
they this those through to too under until up us very via want wants was we were what
which while whom whose why will with within without would you your yours
s t d ll m re ve
aber alle allem allen aller alles als also am an ander andere anderen auch auf aus bei
bin bis bitte bist da damit dann das dass dazu dein deine dem den der des dessen dich die
dies diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer
eines er es etwas euch euer für gegen habe haben hat hatte hier ich ihm ihn ihnen ihr ihre
im in ins ist ja jede jedem jeden jeder jedes jetzt kann kannst kein keine können mal man
manche mein meine meinem meinen meiner mich mir mit muss nach nicht noch nun nur ob oder
ohne sehr sein seine sich sie sind so soll solche sollte über um und uns unser unsere
unter vom von vor war waren was weil welche wenn werden wie wir wird wurde zu zum
zur
task tasks aufgabe
""".split())
"""English and German function words dropped from the task: they carry no intent.
The question words who/when/where (wer/wann/wo) are kept: they ask for a fact.
"task" itself is dropped too: every request is one, so it tells recipes apart no more
than "the" does."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked recipe.

    Attributes:
        recipe: the recipe.
        score: BM25 relevance (0 when nothing matched; higher is better).
        terms: the task's words that matched, in task order.
    """

    recipe: Recipe
    score: float
    terms: tuple[str, ...]


def content_words(task: str) -> list[str]:
    """Return the task's words that carry meaning: lower-cased, stop words removed, in order."""
    return [w for w in _WORD.findall(task.lower()) if w not in STOP_WORDS and not w.isdigit()]


def phrases(task: str) -> list[str]:
    """Return the task's runs of 2 to ``MAX_PHRASE`` words, each joined into one term.

    Stop words stay in (``for_and_against``), as in the tags they are matched against.
    """
    words = _WORD.findall(task.lower())
    return [PHRASE_JOINER.join(words[i:i + n]) for n in range(2, MAX_PHRASE + 1)
            for i in range(len(words) - n + 1)]


def tag_terms(tags: Iterable[str]) -> str:
    """Return the tags as index text: a multi-word tag becomes one joined phrase term."""
    return " ; ".join(PHRASE_JOINER.join(_WORD.findall(tag.lower())) for tag in tags)


def related(query: str, term: str) -> bool:
    """True when two stemmed terms count as the same word.

    Equal; or one, of at least ``MIN_PREFIX`` characters, is a prefix of the
    other (``ubersetz`` / ``ubersetzen``, ``zusammen`` / ``zusammenfassung``,
    ``summar`` / ``summari``); or they share a prefix of at least
    ``MIN_COMMON`` characters covering ``COMMON_SHARE`` of the shorter one
    (``englisch`` / ``english``; not ``transfer`` / ``translat``).
    """
    if query == term:
        return True
    shorter = min(len(query), len(term))
    if shorter < MIN_PREFIX:
        return False
    common = 0
    for a, b in zip(query, term, strict=False):
        if a != b:
            break
        common += 1
    if common == shorter:
        return True
    return common >= MIN_COMMON and common >= COMMON_SHARE * shorter


def _field_texts(recipe: Recipe) -> tuple[str, ...]:
    name = re.sub(r"[-_/.]+", " ", recipe.name)
    return (name, recipe.title, tag_terms(recipe.tags), " ; ".join(recipe.keywords),
            recipe.description)


class _Index:
    """An in-memory FTS5 index of recipes plus a scratch table to stem the task."""

    def __init__(self, recipes: Sequence[Recipe]) -> None:
        self.conn = sqlite3.connect(":memory:")
        cols = ", ".join(FIELDS)
        self.conn.execute(f"CREATE VIRTUAL TABLE doc USING fts5({cols}, tokenize={_TOKENIZE})")
        self.conn.execute("CREATE VIRTUAL TABLE doc_terms USING fts5vocab(doc, 'instance')")
        self.conn.execute("CREATE VIRTUAL TABLE doc_rows USING fts5vocab(doc, 'row')")
        self.conn.execute(f"CREATE VIRTUAL TABLE task USING fts5(body, tokenize={_TOKENIZE})")
        self.conn.execute("CREATE VIRTUAL TABLE task_terms USING fts5vocab(task, 'instance')")
        self.conn.executemany(
            f"INSERT INTO doc (rowid, {cols}) VALUES (?, ?, ?, ?, ?, ?)",
            [(i, *_field_texts(r)) for i, r in enumerate(recipes)],
        )
        self.size = len(recipes)

    def stems(self, words: Sequence[str]) -> list[tuple[str, str]]:
        """Return ``(word, stem)`` for each word, via the index's own tokenizer."""
        self.conn.execute("DELETE FROM task")
        self.conn.execute("INSERT INTO task (rowid, body) VALUES (1, ?)", (" ".join(words),))
        rows = self.conn.execute("SELECT term, offset FROM task_terms ORDER BY offset").fetchall()
        by_offset = {offset: term for term, offset in rows}
        return [(w, by_offset[i]) for i, w in enumerate(words) if i in by_offset]

    def terms(self) -> list[str]:
        """Return the index's distinct terms, sorted."""
        return [term for (term,) in self.conn.execute("SELECT term FROM doc_rows")]

    def norms(self) -> list[tuple[float, ...]]:
        """Return per row, per field, the BM25F factor ``w_c / (1 - b_c + b_c * len_c / avg_c)``.

        Field lengths (in tokens) come from FTS5's ``docsize`` table: one
        varint per column per row (SQLite's documented FTS5 file format).
        """
        lengths = [_varints(blob) for _row, blob in
                   self.conn.execute("SELECT id, sz FROM doc_docsize ORDER BY id")]
        out: list[tuple[float, ...]] = []
        averages = [sum(row[c] for row in lengths) / max(1, self.size)
                    for c in range(len(FIELDS))]
        for row in lengths:
            out.append(tuple(
                weight / (1 - b + b * (row[c] / averages[c] if averages[c] else 0.0))
                for c, (weight, b) in enumerate(zip(FIELD_WEIGHTS, FIELD_B, strict=True))))
        return out

    def postings(self, term: str, norms: Sequence[tuple[float, ...]]) -> dict[int, float]:
        """Return rowid → BM25F pseudo-frequency of ``term``.

        Each occurrence counts its field's factor (``norms``); they are summed per row.
        """
        freq: dict[int, float] = defaultdict(float)
        for row, col in self.conn.execute(
                "SELECT doc, col FROM doc_terms WHERE term = ?", (term,)):
            freq[row] += norms[row][_COLUMN[col]]
        return freq

    def close(self) -> None:
        self.conn.close()


def idf(n_docs: int, n_with: int) -> float:
    """Lucene's BM25 IDF: ``log(1 + (N - n + 0.5) / (n + 0.5))``, always positive."""
    return math.log(1 + (n_docs - n_with + 0.5) / (n_with + 0.5))


def rank(recipes: Sequence[Recipe], task: str) -> list[Hit]:
    """Rank every recipe by lexical relevance to ``task``.

    Args:
        recipes: the candidates (any order).
        task: the task text (untrusted; only its words are used).

    Returns:
        One Hit per recipe, best first; equal scores in name order.

    Rule: DESIGN.md §5 step 4 (the 50-entry cap) and the offline selector.
    """
    ordered = sorted(recipes, key=lambda r: r.name)
    scores: dict[int, float] = {}
    matched: dict[int, list[str]] = {}
    words = content_words(task)
    if ordered and words:
        index = _Index(ordered)
        try:
            scores = _score(index, words + phrases(task), matched)
        finally:
            index.close()
    hits = [Hit(r, round(scores.get(i, 0.0), 4), tuple(matched.get(i, ())))
            for i, r in enumerate(ordered)]
    hits.sort(key=lambda h: -h.score)  # stable: equal scores stay in name order
    return hits


def _score(index: _Index, words: Sequence[str], matched: dict[int, list[str]]) -> dict[int, float]:
    """BM25 over the task's distinct words; notes the matched words per row in ``matched``.

    Only the postings of terms related to a task word are read, so the cost
    grows with the task, not with the whole index.
    """
    norms = index.norms()
    known = index.terms()
    exact = set(known)
    by_prefix: dict[str, list[str]] = defaultdict(list)  # sorted, as ``known``
    for term in known:
        if PHRASE_JOINER not in term and len(term) >= MIN_PREFIX:
            by_prefix[term[:MIN_PREFIX]].append(term)
    scores: dict[int, float] = defaultdict(float)
    seen: set[str] = set()
    for word, stem in index.stems(words):
        if stem in seen:
            continue
        seen.add(stem)
        if PHRASE_JOINER in stem or len(stem) < MIN_PREFIX:
            # a phrase matches only the same phrase; a short word only itself
            found = [stem] if stem in exact else []
        else:  # any related term shares the first MIN_PREFIX characters (see related())
            found = [t for t in by_prefix.get(stem[:MIN_PREFIX], ()) if related(stem, t)]
        tf: dict[int, float] = defaultdict(float)
        for term in found:
            for row, count in index.postings(term, norms).items():
                tf[row] += count
        weight = idf(index.size, len(tf))
        for row, freq in tf.items():
            scores[row] += weight * freq * (BM25_K1 + 1) / (freq + BM25_K1)
            matched.setdefault(row, []).append(word.replace(PHRASE_JOINER, " "))
    return scores


def _varints(blob: bytes) -> list[int]:
    """Decode SQLite's big-endian varints (7 bits a byte, high bit = more follows)."""
    values: list[int] = []
    value = 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            values.append(value)
            value = 0
    return values


def cap_inventory(recipes: Sequence[Recipe], task: str,
                  limit: int = INVENTORY_CAP) -> tuple[list[Recipe], bool]:
    """Return the recipes to show the LLM, in name order, and whether any were left out.

    Args:
        recipes: the whole inventory.
        task: the task text.
        limit: most entries shown.

    Returns:
        ``(recipes, capped)``: all of them when there are at most ``limit``;
        else the ``limit`` most relevant to the task by ``rank`` (never an
        arbitrary cut), then sorted by name.

    Rule: DESIGN.md §5 step 4.
    """
    ordered = sorted(recipes, key=lambda r: r.name)
    if len(ordered) <= limit:
        return ordered, False
    best = [h.recipe for h in rank(ordered, task)[:limit]]
    return sorted(best, key=lambda r: r.name), True


def single_term_score(n_docs: int, weight: float) -> float:
    """Return the BM25 score of one task word that occurs once in one recipe only.

    The word sits in a field of weight ``weight``, of average length where
    length matters: ``idf(N, 1) * weight * (k1 + 1) / (weight + k1)``. The offline
    selector's threshold is expressed in this unit, so it means the same for
    any inventory size.

    Args:
        n_docs: number of recipes ranked.
        weight: the field weight.
    """
    return idf(n_docs, 1) * weight * (BM25_K1 + 1) / (weight + BM25_K1)
