"""Lexical ranking of recipes for a task: field-weighted BM25 (BM25F) over stemmed words.

Used twice (docs/delegate.md): to cap the inventory shown to the LLM at the 50
recipes most relevant to the task, and by the offline selector, which also
weighs each hit's evidence (``Hit.words``, ``Hit.phrases``, ``Hit.cues``).

Why hand-written and not ``bm25s``/``rank_bm25``: those pull numpy (≈ 145 ms
of import) to rank a few dozen short documents, and lack what matters here:
the stemmers of two languages at once, phrase terms, per-field weights, and
the evidence the offline selector needs.

Speed (tens of milliseconds for 5,000 recipes): reading a recipe's words is
done once per text and kept (``recipe_terms``: in memory, and in the
parsed-document cache for a warm run). The index built per call holds only
the terms that can match the task: the stem keys the task can ask for (its
words, its runs of words that start like a phrase term of the inventory, the
compound heads of its German nouns) are worked out first, and only the
inventory's terms with one of those keys get postings. Field lengths count
every term, so every score is the one a full index gives.

Invariants:
- The task is read first (``vance_cli.ranking.reading``): quoted or pasted
  material is left out and shapes are read as words (a code path as
  ``code``, a question about given numbers as ``calculate`` …). Words a
  reading adds without a place in the task (``Reading.extra``) count as
  content words, never as head words.
- A word of the task that matches nothing and is one slip from exactly one
  word of the inventory is read as that word; one that is a two-word tag or
  keyword written as one word ("tradeoffs" for ``trade-offs``) is read as
  those two words (``vance_cli.ranking.spelling``).
- A recipe is indexed by four fields, ``FIELDS``: title, tags, trigger
  keywords and description (its negated stretches and question words left
  out, ``lexicon.prose_words``), weighted by ``FIELD_WEIGHTS``. Not by its
  name: a name is an identifier (``marvin``, ``vogon``; ``python`` is a topic
  word), and the task is untrusted — "answer MATCH coding" must not make the
  word ``coding`` evidence for the recipe named ``coding``. For the same
  reason a recipe name of several words written in the task
  (``web-research``) is blanked out before ranking.
- Words are compared as ``vance_cli.ranking.lexicon`` says: the same word when their
  English or German Snowball stems are equal (inflection only; only the
  task's language when it is clear). A German noun of the task that matches
  nothing may match the tag its compound ends with (``COMPOUND_HEAD``).
- A multi-word tag or trigger keyword (``unit tests``, ``for and against``,
  ``into spanish``) is one phrase term: it matches the same words in a row
  in the task (each compared as above); its single words are no tag evidence
  on their own (``root`` is not ``root cause``).
- Score (BM25F): the sum over the task's distinct content words and phrases
  of ``idf * tf * (k1 + 1) / (tf + k1)``; ``tf`` is the word's count in the
  recipe, weighted per field and length-normalised per field (``FIELD_B``:
  only the description is running text). The IDF is Lucene's
  ``log(1 + (N - n + 0.5) / (n + 0.5))``, always positive (the classic one is
  zero or negative for a word in half the recipes — useless for a tenant
  with three recipes). Higher is better; ties and zero scores keep name
  order, so the ranking is deterministic.
- Evidence per hit: ``words``, the task's distinct content words that
  matched (a matched phrase adds its content words); ``phrases``, the
  matched multi-word tags and keywords; ``cues``, the task's head words
  (``lexicon``: where a request names what it wants) that are a single-word
  tag or keyword of this recipe and of no other — an unambiguous intent word
  in the predicate's or the object's place; ``intent``, how many distinct
  task words are a single-word tag or keyword of this recipe; ``named``,
  how many of those are head words, shared with other recipes or not.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vance_cli.base.records import frozen
from vance_cli.ranking import lexicon, reading, spelling
from vance_cli.ranking import terms as recipe_terms

if TYPE_CHECKING:
    from vance_cli.ranking.terms import Analysis
    from vance_cli.recipes.loader import Recipe

FIELDS = ("title", "tags", "keywords", "description")
"""Indexed fields of a recipe."""

TAG_WEIGHT = 3.0
"""BM25 weight of tags and trigger keywords: the recipe author's chosen intent
words (verbs and deliverables), so one counts three times a word of running text."""

FIELD_WEIGHTS = (1.0, TAG_WEIGHT, TAG_WEIGHT, 1.0)
"""BM25 weight per field of ``FIELDS``."""

INTENT_FIELDS = frozenset({"tags", "keywords"})
"""Fields whose single words can be a cue (see the module docstring)."""

FIELD_B = (0.0, 0.0, 0.0, 0.75)
"""BM25F length normalisation per field of ``FIELDS``: only the description is
running text (the usual ``b = 0.75``); titles, tag and keyword lists are short
lists of alternatives, and a recipe with many synonyms must not be penalised
for them."""

BM25_K1 = 1.2
"""BM25 term-frequency saturation (the usual value)."""

COMPOUND_HEAD = 5
"""Shortest German stem of a single-word tag, in letters, that the head of a compound
matches: a German noun of the task (``lexicon.Token.noun``) that matches nothing
directly counts as the tag it ends with (German compounds put their head last:
an ``Erörterungsaufsatz`` is an ``Aufsatz``). Only written-as-a-noun words: the
same suffix inside other words is chance (``vielversprechend`` is no
``sprechen``, ``JavaScript`` no ``script``)."""

COMPOUND_FIRST = 3
"""Shortest first part of such a compound, in letters."""

INVENTORY_CAP = 50
"""Most recipes shown to the LLM (docs/delegate.md step 4)."""

_NAME_SEPARATOR = re.compile(r"[-_/.]")

_RE_CASE = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
"""The characters that ``re`` (IGNORECASE) takes for an ASCII letter of a name and
``str.lower`` does not lower to it: capital I with dot and dotless i (i), long s (s),
the Kelvin sign (k). ``test_ranking`` checks this against ``re`` over all of Unicode."""

_ENGLISH = slice(0, 1)
_LANGUAGE_KEYS = {"en": _ENGLISH, "de": slice(1, 2), None: slice(0, 2)}
"""Which of a task word's stem keys (English, German) to look up, by the task's language."""

Term = str
"""An index term: one word, or the words of a multi-word tag or keyword joined by
spaces (``recipe_terms``)."""

EXTRA_POSITION = 1_000_000
"""Position given to the words a reading adds (after every word of an analysed task)."""

KEYS_LIMIT = 200_000
"""Most index terms whose stem keys are kept in memory (``_term_keys``)."""

_keys_of: dict[Term, tuple[str, str]] = {}


@frozen
class Hit:
    """One ranked recipe and the evidence for it.

    Attributes:
        recipe: the recipe.
        score: BM25F relevance (0 when nothing matched; higher is better).
        terms: the task's words and phrases that matched, in task order.
        words: how many distinct content words of the task matched.
        phrases: the matched multi-word tags and trigger keywords, in task order.
        cues: the task's head words that are an intent word of this recipe only.
        intent: how many distinct content words of the task matched a single-word
            tag or trigger keyword of this recipe (the author's intent words).
        named: how many of those are head words of the task, whether or not other
            recipes tag them too ("Write *tests* for …").
        main: the cues that are a head word of the request's first clause (its
            predicate or object, ``lexicon.Token.main``): the deliverable asked for.
    """

    recipe: Recipe
    score: float
    terms: tuple[str, ...] = ()
    words: int = 0
    phrases: tuple[str, ...] = ()
    cues: tuple[str, ...] = ()
    intent: int = 0
    named: int = 0
    main: tuple[str, ...] = ()


@dataclass
class _Evidence:
    score: float = 0.0
    terms: list[tuple[int, str]] = field(default_factory=list)
    covered: set[str] = field(default_factory=set)
    phrases: list[tuple[int, str]] = field(default_factory=list)
    cues: list[str] = field(default_factory=list)
    intent: int = 0
    named: int = 0
    main: list[str] = field(default_factory=list)


@frozen
class _Query:
    """What of one task the index is searched for.

    Attributes:
        keep: which stem keys of a task word count (``_LANGUAGE_KEYS``).
        tokens: the task's content words (``lexicon.tokens``).
        grams: the task's runs of words that start like a phrase term of the
            inventory (``lexicon.ngrams``, up to its longest phrase), in order.
        keys: every stem key a lookup of these words and runs can ask for,
            compound heads (``COMPOUND_HEAD``) included.
        phrase_words: the words of the inventory's phrase terms (for ``spelling``).
        pairs: the inventory's phrase terms of two words, first word → second words
            (for ``spelling.split_compound``).
    """

    keep: slice
    tokens: list[lexicon.Token]
    grams: list[tuple[int, tuple[str, ...]]]
    keys: set[str]
    phrase_words: set[str]
    pairs: dict[str, set[str]]


def _query(task: str, vocabulary: set[Term], extra: Sequence[str] = ()) -> _Query:
    """Read the task against the inventory's distinct index terms ``vocabulary``.

    ``extra``: words the task shows without a place in it (``reading.Reading.extra``).
    """
    keep = _LANGUAGE_KEYS[lexicon.language(task)]
    tokens = lexicon.tokens(task)
    tokens += [lexicon.Token(word, EXTRA_POSITION + i, False) for i, word in enumerate(extra)]
    keys: set[str] = set()
    for token in tokens:
        token_keys = lexicon.word_keys(token.word)[keep]
        keys.update(token_keys)
        if token.noun and keep != _ENGLISH:  # the compound heads _Index.lookup may try
            stem = token_keys[-1][2:]
            keys.update("g:" + stem[cut:]
                        for cut in range(COMPOUND_FIRST, len(stem) - COMPOUND_HEAD + 1))
    phrases = [term.split(" ") for term in vocabulary if " " in term]
    longest = max([2, *map(len, phrases)])
    starts = {key for words in phrases for key in lexicon.word_keys(words[0])}
    grams = [(start, gram) for start, gram in lexicon.ngrams(task, longest)
             if not starts.isdisjoint(lexicon.word_keys(gram[0]))]
    for _start, gram in grams:
        keys.update(lexicon.phrase_keys(gram)[keep])
    pairs: dict[str, set[str]] = defaultdict(set)
    for words in phrases:
        if len(words) == 2:
            pairs[words[0]].add(words[1])
    return _Query(keep, tokens, grams, keys, {word for words in phrases for word in words},
                  pairs)


def _term_keys(term: Term) -> tuple[str, str]:
    """Return the English and German stem keys of an index term (memoised per term)."""
    keys = _keys_of.get(term)
    if keys is None:
        keys = (lexicon.phrase_keys(tuple(term.split(" "))) if " " in term
                else lexicon.word_keys(term))
        if len(_keys_of) >= KEYS_LIMIT:
            _keys_of.clear()
        _keys_of[term] = keys
    return keys


class _Index:
    """Postings of the recipes' index terms that can match one task.

    Only the terms of ``wanted`` get postings: a lookup asks for stem keys,
    and every term with a key asked for is in ``wanted``, so each lookup
    finds what a full index would. Field lengths (BM25 normalisation) count
    every term.
    """

    def __init__(self, analyses: Sequence[Analysis], wanted: set[Term]) -> None:
        self.size = len(analyses)
        self.rows: dict[Term, dict[int, float]] = defaultdict(lambda: defaultdict(float))
        self.intent: dict[Term, set[int]] = defaultdict(set)
        self.by_key: dict[str, set[Term]] = defaultdict(set)
        self.suffixes: dict[str, set[Term]] = defaultdict(set)
        for column, (name, weight, b) in enumerate(zip(FIELDS, FIELD_WEIGHTS, FIELD_B,
                                                       strict=True)):
            fields = [analysis[column] for analysis in analyses]
            lengths = [len(terms) for terms in fields]
            average = sum(lengths) / max(1, len(lengths))
            for row, terms in enumerate(fields):
                if wanted.isdisjoint(terms):
                    continue
                ratio = lengths[row] / average if average else 0.0
                norm = weight / (1 - b + b * ratio)
                for term in terms:
                    if term in wanted:
                        self._add(term, row, norm, name in INTENT_FIELDS)

    def _add(self, term: Term, row: int, norm: float, intent: bool) -> None:
        self.rows[term][row] += norm
        keys = _term_keys(term)
        if intent and " " not in term:
            self.intent[term].add(row)
            if len(keys[1]) - 2 >= COMPOUND_HEAD:
                self.suffixes[keys[1][2:]].add(term)
        for key in keys:
            self.by_key[key].add(term)

    def lookup(self, keys: Sequence[str], noun: bool = False
               ) -> tuple[dict[int, float], set[Term]]:
        """Return row → summed pseudo-frequency of the terms matching ``keys``, and those terms.

        A German noun (``noun``) that matches no term directly matches the
        intent words it ends with (a compound's head, see ``COMPOUND_HEAD``).
        """
        terms: set[Term] = set().union(*(self.by_key.get(k, set()) for k in keys))
        if noun and not terms and keys[-1].startswith("g:"):
            stem = keys[-1][2:]
            for cut in range(COMPOUND_FIRST, len(stem) - COMPOUND_HEAD + 1):
                terms |= self.suffixes.get(stem[cut:], set())
        tf: dict[int, float] = defaultdict(float)
        for term in terms:
            for row, count in self.rows[term].items():
                tf[row] += count
        return tf, terms


def idf(n_docs: int, n_with: int) -> float:
    """Lucene's BM25 IDF: ``log(1 + (N - n + 0.5) / (n + 0.5))``, always positive."""
    return math.log(1 + (n_docs - n_with + 0.5) / (n_with + 0.5))


def _saturate(freq: float) -> float:
    return freq * (BM25_K1 + 1) / (freq + BM25_K1)


def rank(recipes: Sequence[Recipe], task: str) -> list[Hit]:
    """Rank every recipe by lexical relevance to ``task``.

    Args:
        recipes: the candidates (any order).
        task: the task text (untrusted; only the words of its first
            ``lexicon.ANALYSED_CHARS`` characters are used).

    Returns:
        One Hit per recipe, best first; equal scores in name order.

    Rule: docs/delegate.md step 4 (the 50-entry cap) and the offline selector.
    """
    ordered = sorted(recipes, key=lambda r: r.name)
    found: dict[int, _Evidence] = defaultdict(_Evidence)
    read = reading.read(_without_names(lexicon.analysed(task), ordered))
    task = read.text
    if ordered and (task.strip() or read.extra):
        analyses = [recipe_terms.analyse(r) for r in ordered]
        vocabulary: set[Term] = set().union(*(terms for a in analyses for terms in a))
        query = _query(task, vocabulary, read.extra)
        wanted = {t for t in vocabulary if not query.keys.isdisjoint(_term_keys(t))}
        fixed = _typos(task, query, wanted, vocabulary)
        if fixed != task:
            task = fixed
            query = _query(task, vocabulary, read.extra)
            wanted = {t for t in vocabulary if not query.keys.isdisjoint(_term_keys(t))}
        index = _Index(analyses, wanted)
        _match_words(index, query, found)
        _match_phrases(index, query, found)
    hits = [_hit(r, found[i]) if i in found else Hit(r, 0.0) for i, r in enumerate(ordered)]
    hits.sort(key=lambda h: -h.score)  # stable: equal scores stay in name order
    return hits


def _typos(task: str, query: _Query, wanted: set[Term], vocabulary: set[Term]) -> str:
    """Return ``task`` with each word that matched nothing and is a typo corrected.

    Rule: ``vance_cli.ranking.spelling``; a correct task comes back unchanged.
    """
    matched = {key for word in spelling.known_words(wanted) for key in _term_keys(word)}
    unmatched = {t.word for t in query.tokens if len(t.word) >= spelling.TYPO_MIN
                 and matched.isdisjoint(lexicon.word_keys(t.word)[query.keep])}
    if not unmatched:
        return task
    for word in sorted(unmatched):
        if (word in vocabulary or word in query.phrase_words or lexicon.is_genre(word)
                or lexicon.is_exception(word)):
            continue  # a known word that only matched nothing by its stem
        meant = (spelling.split_compound(word, query.pairs)
                 or spelling.correct(word, vocabulary, query.phrase_words))
        if meant is not None:
            task = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", meant, task, flags=re.IGNORECASE)
    return task


def _without_names(task: str, recipes: Sequence[Recipe]) -> str:
    """Blank out the recipe names that the task writes as identifiers.

    A name is an identifier, and the task is untrusted: "answer MATCH
    web-research" must not make ``web`` and ``research`` evidence. Written as
    an identifier: a name of several words (``web-research``) anywhere; a
    one-word name (``translate``, also an ordinary word) only in quotes or
    backticks or right after ``MATCH``, ``recipe`` or ``Rezept``.
    """
    names = _written([r.name for r in recipes], task)
    several = [name for name in names if _NAME_SEPARATOR.search(name)]
    if several:
        task = _names_pattern(several).sub(" ", task)
    single = "|".join(re.escape(name) for name in _written(names, task)
                      if not _NAME_SEPARATOR.search(name))
    if single:
        reference = r"(?:\b(?:match|recipe|rezept)\W{0,3}|(?<=[`'\"]))"
        task = re.sub(reference + rf"(?:{single})\b", " ", task, flags=re.IGNORECASE)
    return task


def _written(names: Iterable[str], task: str) -> list[str]:
    """Return those of ``names`` that the task may hold in any case, in their order.

    A sieve before matching names with ``re`` (compiling a pattern of
    thousands of names costs more than ranking them): it keeps every name
    that the task holds as ``re`` compares with IGNORECASE, and some more.
    """
    text = task.translate(_RE_CASE).lower()
    return [name for name in names if name.lower() in text]


def _names_pattern(names: Sequence[str]) -> re.Pattern[str]:
    """Match any of ``names`` as a whole word (not inside a longer name), any case."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)


def _hit(recipe: Recipe, ev: _Evidence) -> Hit:
    return Hit(recipe, round(ev.score, 4), tuple(t for _p, t in sorted(ev.terms)),
               len(ev.covered), tuple(t for _p, t in sorted(ev.phrases)), tuple(ev.cues),
               ev.intent, ev.named, tuple(ev.main))


def _match_words(index: _Index, query: _Query, found: dict[int, _Evidence]) -> None:
    """Score the task's distinct content words; note words, cues per row in ``found``."""
    seen: set[str] = set()
    for token in query.tokens:
        keys = lexicon.word_keys(token.word)
        if keys[0] in seen:
            continue
        seen.add(keys[0])
        tf, terms = index.lookup(keys[query.keep], token.noun and query.keep != _ENGLISH)
        weight = idf(index.size, len(tf))
        for row, freq in tf.items():
            ev = found[row]
            ev.score += weight * _saturate(freq)
            ev.terms.append((token.position, token.word))
            if not token.topic:
                ev.covered.add(keys[0])
        rows = set().union(*(index.intent.get(t, set()) for t in terms))
        for row in rows:
            found[row].intent += 1
        if token.head:
            for row in rows:
                found[row].named += 1
            if len(rows) == 1:
                row = rows.pop()
                found[row].cues.append(token.word)
                if token.main:
                    found[row].main.append(token.word)


def _match_phrases(index: _Index, query: _Query, found: dict[int, _Evidence]) -> None:
    """Score the task's runs of words that are a multi-word tag or keyword."""
    seen: set[str] = set()
    for start, gram in query.grams:
        keys = lexicon.phrase_keys(gram)[query.keep]
        if keys[0] in seen or not any(k in index.by_key for k in keys):
            continue
        seen.add(keys[0])
        tf, _terms = index.lookup(keys)
        weight = idf(index.size, len(tf))
        text = " ".join(gram)
        for row, freq in tf.items():
            ev = found[row]
            ev.score += weight * _saturate(freq)
            ev.terms.append((start, text))
            ev.phrases.append((start, text))
            ev.covered.update(lexicon.word_keys(w)[0] for w in gram if lexicon.is_content(w))


def cap_inventory(recipes: Sequence[Recipe], task: str,
                  limit: int = INVENTORY_CAP) -> tuple[list[Recipe], bool]:
    """Return the recipes to show the LLM, in name order, and whether any were left out.

    Args:
        recipes: the whole inventory.
        task: the task text (only its first ``lexicon.ANALYSED_CHARS``
            characters are read).
        limit: most entries shown.

    Returns:
        ``(recipes, capped)``: all of them when there are at most ``limit``;
        else the ``limit`` most relevant to the task (never an arbitrary
        cut), then sorted by name. Most relevant: first the recipes the task
        names (the LLM may then weigh the person's explicit choice; showing a
        recipe is not choosing it), then the best by ``rank``.

    Rule: docs/delegate.md step 4.
    """
    ordered = sorted(recipes, key=lambda r: r.name)
    if len(ordered) <= limit:
        return ordered, False
    task = lexicon.analysed(task)
    named = {name for name in _written([r.name for r in ordered], task)
             if _names_pattern([name]).search(task)}
    ranked = [h.recipe for h in rank(ordered, task)]
    best = ([r for r in ranked if r.name in named] + [r for r in ranked if r.name not in named])
    return sorted(best[:limit], key=lambda r: r.name), True


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
    return idf(n_docs, 1) * _saturate(weight)
