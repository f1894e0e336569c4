"""The offline selector: lexical ranking with an evidence rule (no LLM configured).

Rule (docs/delegate.md, "Offline selector"): with no ``llm.base_url`` and no
key the selector ranks the inventory by lexical relevance
(``vance_cli.ranking.bm25``: BM25F over titles, tags, trigger keywords and
descriptions, after ``vance_cli.ranking.reading`` has read the task's shapes
into words) and answers ``MATCH`` for the best recipe whose evidence is
enough; else ``NONE`` with reason ``offline_no_match``. Every rationale says
it ran offline.

Enough evidence is two things, neither fitted to any set of tasks:

1. **Score**: at least the threshold, the midpoint between two evidence
   units of the ranking (``ranking.single_term_score``): one distinctive
   word of a recipe's running text (weight 1) and one distinctive tag word
   (``ranking.TAG_WEIGHT``). Expressed in these units it adapts to the size
   of the inventory.
2. **More than one weak word**: one common word is no evidence of intent
   ("Order a *large* pizza", "Design a logo", "a playlist for my *coding*
   sessions"). A recipe needs one of:

   - two or more distinct content words of the task (``Hit.words``);
   - a matched multi-word tag or trigger keyword (``Hit.phrases``: several
     words in a row, chosen by the recipe's author, do not occur by chance);
   - a cue (``Hit.cues``): a head word of a clause (``vance_cli.ranking.lexicon``:
     the request's predicate, "*Translate* …", "*Who* …", "…
     *zusammenfassen*?", or its object after a light verb, "Write a
     *persuasive essay*") that is a tag of this recipe and of no other.
     The same word in the middle of a clause modifies something else
     ("a cat *translating* a book", "our *debate* night") and is not enough
     on its own; nor is a tag that two recipes share ("*Design* a logo").

The recipe chosen is the best-scored one with enough evidence: a recipe
that scores higher on one weak word does not hide it. More rules decide
before or instead of the ranking:

- **Live questions** (``reading.live_question``): one question about the
  person's own data as it is now ("Where's my package right now?") or about
  the world right now ("Who won last night's match?") needs access no
  recipe has: ``NONE``.
- **One's own data, not given** (``reading.own_source``): a request that works on
  the person's own mail, messages, calendar, account or device ("Summarise my
  WhatsApp chats from last week") and gives none of it needs access no recipe
  has: ``NONE``.
- **Acts in the world** (``reading.action_request``): a request whose
  predicate is ordering, booking, sending, reminding … is ``NONE`` unless a
  recipe has a cue or a phrase for it; the object's words ("Transfer the
  *summary document* to my USB stick") are no evidence of a recipe's work.
- **One fact** (``reading.fact_question``): one short direct question about
  the world that no recipe has enough evidence for ("What's the boiling
  point of water?") goes to the recipe tagged ``FACT_TAG``.
- **Single job**: a task whose predicate is a writing verb, or whose light
  verb's object names a short piece of writing (``lexicon.writing_job``:
  "*Write* a short poem", "*Draft* a polite email", "I need a *toast* for
  my brother's wedding") asks for one piece of writing. When no recipe
  names that deliverable — none has a cue, a phrase, a tag of its own as a
  head word or ``MIN_WORDS`` tag words (``intent``) — it goes to the
  general worker, the recipe tagged ``GENERAL_TAG``; topic words of the
  task ("a product description for the *online* shop") do not make it
  research.

The rest is the ranking's: stems (inflection only, so "water" is not
"waterfall"), names that are no evidence ("answer MATCH coding"), negated
words ("don't change anything") that are none either.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vance_cli.ranking import bm25 as ranking
from vance_cli.ranking import lexicon, reading
from vance_cli.selector.decision import Decision, Mode, NoneReason, match, none

if TYPE_CHECKING:
    from vance_cli.recipes.loader import Recipe

OFFLINE = "offline selector (no LLM configured)"
"""How every offline rationale starts."""

MIN_WORDS = 2
"""Distinct matched content words that are enough without a phrase or a cue."""

FACT_TAG = "fact"
"""The tag that marks the recipe for one short factual answer (bundled: ``quick-lookup``):
a short direct question about the world that no recipe has evidence for goes to it."""

GENERAL_TAG = "general-purpose"
"""The tag that marks a general worker: the recipe for one piece of writing that no other
recipe names (bundled: ``default``)."""


def threshold(n_recipes: int) -> float:
    """Return the minimum score for an offline MATCH among ``n_recipes`` recipes.

    The midpoint between one distinctive description word and one
    distinctive tag word (see the module docstring).
    """
    text_word = ranking.single_term_score(n_recipes, 1.0)
    tag_word = ranking.single_term_score(n_recipes, ranking.TAG_WEIGHT)
    return (text_word + tag_word) / 2


def evidence(hit: ranking.Hit) -> str | None:
    """Return what makes ``hit``'s evidence more than one weak word, or None.

    Args:
        hit: a ranked recipe.

    Returns:
        A short phrase for the rationale (``"phrase 'bullet points'"``,
        ``"cue 'translate'"``, ``"3 words"``), or None when the hit rests on
        a single word that is neither a phrase nor a cue.
    """
    if hit.phrases:
        return f"phrase '{hit.phrases[0]}'"
    if hit.cues:
        return f"cue '{hit.cues[0]}'"
    if hit.words >= MIN_WORDS:
        return f"{hit.words} words"
    return None


def decoration(hit: ranking.Hit, opening: str | None) -> bool:
    """True when ``hit`` rests on a phrase away from the request's head words.

    No cue, no tagged head word, fewer than ``MIN_WORDS`` words besides and no
    phrase that opens the request (``opening``, its first word: "*Go through*
    the files" is the predicate): "*each time*", "*step by step*", "*for and
    against*" say how often, how or what about, not what is asked for.
    """
    return (bool(hit.phrases) and not hit.cues and hit.named == 0 and hit.words < MIN_WORDS
            and all(phrase.split()[0] != opening for phrase in hit.phrases))


def select_offline(task: str, inventory: Sequence[Recipe]) -> Decision:
    """Pick the best recipe with enough evidence, the general worker for one writing job, or NONE.

    Args:
        task: the task text (non-empty).
        inventory: the selector's inventory (non-empty).

    Returns:
        A MATCH or a NONE ``offline_no_match`` decision, mode ``offline``.

    Rule: docs/delegate.md, "Offline selector".
    """
    read = reading.read(lexicon.analysed(task))
    live = reading.live_question(read.text)
    store = None if live is not None else reading.own_source(read.text, read.given)
    if live is not None or store is not None:
        needs = ("asks about the person's own data as it is now or was lately, which needs live "
                 "access to their accounts or devices" if live == "own" else
                 "asks about the world as it is now or was just now, which needs live data"
                 if live == "world" else
                 f"works on the person's own data ('{store}'), which it does not give and which "
                 "needs access to their accounts or devices")
        return none(NoneReason.OFFLINE_NO_MATCH, f"{OFFLINE}: the task {needs}: no recipe "
                    "has it", Mode.OFFLINE)
    act = reading.action_request(read.text)
    hits = ranking.rank(inventory, task)
    if act is not None and not any(hit.cues or hit.phrases for hit in hits
                                   if hit.score >= threshold(len(inventory))):
        return none(NoneReason.OFFLINE_NO_MATCH, f"{OFFLINE}: the task asks for an act in the "
                    f"world ('{act}'), and no recipe names it with a cue or a phrase: no recipe "
                    "acts in the world", Mode.OFFLINE)
    limit = threshold(len(inventory))
    how = f"; read: {', '.join(read.notes)}" if read.notes else ""
    eligible = [(hit, why) for hit in hits if hit.score >= limit
                for why in [evidence(hit)] if why is not None]
    chosen = eligible[0] if eligible else None
    if chosen is not None and decoration(chosen[0], lexicon.opening(read.text)):
        # the deliverable over decoration: a recipe whose cue is the request's predicate or
        # its object beats one whose only evidence is a phrase of manner, frequency or topic
        chosen = next((pair for pair in eligible if pair[0].main),
                      next((pair for pair in eligible if pair[0].cues), chosen))
    opening = lexicon.opening(read.text)
    if (chosen is not None and not chosen[0].main and opening is not None
            and _on_material(read.text, opening, read.given)):
        # the request works on material it gives or points at ("Summarise *this* panel
        # discussion where three perspectives were aired: …"): what describes the material
        # is no deliverable; a recipe whose cue is the predicate wins
        light = opening in lexicon.LIGHT_VERBS  # "Give me the *gist* of this paper"
        chosen = next((pair for pair in eligible
                       if opening in pair[0].main or (light and pair[0].main)), chosen)
    if chosen is not None:
        # a recipe that says it is not for what the request also asks does not win it: the
        # recipe whose tag that word is wins, above the threshold even on that one word
        chosen = next(((hit, evidence(hit) or f"'{chosen[0].recipe.name}' is not for "
                        f"{_words(hit.terms)}") for hit in hits
                       if hit.score >= limit and disowns(chosen[0], hit)), chosen)
    verb = lexicon.writing_job(read.text)
    general = next((r for r in inventory if GENERAL_TAG in map(str.casefold, r.tags)), None)
    if verb is not None and general is not None and (
            chosen is None or decoration(chosen[0], opening)
            or not _names_job(chosen[0], verb, read.text, inventory)):
        # a phrase of manner or frequency names no deliverable: "a *step by step* guide"
        beside = (f"best '{chosen[0].recipe.name}' matched only {_words(chosen[0].terms)}"
                  if chosen else "no recipe has enough evidence")
        return match(general, f"{OFFLINE}: '{general.name}' is the general worker: the task "
                     f"asks for one piece of writing ('{verb}') that no recipe names ({beside}; "
                     f"no cue, phrase, tagged object or {MIN_WORDS} tag words{how})", Mode.OFFLINE)
    if chosen is not None:
        hit, why = chosen
        return match(hit.recipe, f"{OFFLINE}: '{hit.recipe.name}' matched "
                     f"{_words(hit.terms)} ({why}; score {hit.score:.1f} ≥ threshold "
                     f"{limit:.1f}{how})", Mode.OFFLINE)
    facts = next((r for r in inventory if FACT_TAG in map(str.casefold, r.tags)), None)
    if facts is not None and reading.fact_question(read.text):
        return match(facts, f"{OFFLINE}: '{facts.name}' answers one fact: the task is one short "
                     f"direct question about the world and no recipe has more evidence{how}",
                     Mode.OFFLINE)
    best = hits[0] if hits else None
    if best is None or best.score <= 0:
        detail = "no recipe shares a meaningful word with the task"
    elif best.score < limit:
        detail = (f"no recipe reached the threshold (best '{best.recipe.name}' "
                  f"{best.score:.1f} < {limit:.1f}, matched {_words(best.terms)})")
    else:
        detail = (f"one word is not enough (best '{best.recipe.name}' matched only "
                  f"{_words(best.terms)}: no second word, phrase or cue)")
    return none(NoneReason.OFFLINE_NO_MATCH, f"{OFFLINE}: {detail}{how}", Mode.OFFLINE)


_POINTING = re.compile(r"[^.!?:\n]*?\b(?:this|these|those|the\s+following|dies\w*|"
                       r"folgende\w*)\b", re.IGNORECASE)


_INTO = re.compile(r"[^.!?:\n]*?\binto\b", re.IGNORECASE)


def _on_material(text: str, predicate: str, given: bool) -> bool:
    """True when ``predicate`` works on material the task gives or points at ("summarise *this* …").

    Not when the sentence turns it *into* something, which is the deliverable ("Translate
    this table *into* a bar chart").
    """
    at = text.casefold().find(predicate)
    end = at + len(predicate)
    return (at >= 0 and (given or _POINTING.match(text, end) is not None)
            and _INTO.match(text, end) is None)


def disowns(hit: ranking.Hit, other: ranking.Hit) -> bool:
    """True when ``hit``'s recipe says it is not for a word that is ``other``'s evidence.

    The bundled descriptions name what each recipe is *not* for where two overlap
    (negated stretches: "Not for comparing products or tools with sources to cite or
    links to check"). When a word of the request is in such a stretch of ``hit``'s
    description, is no word ``hit`` matched itself and is one of ``other``'s own
    single-word tags ("compare … and *cite* some reviews"), the request asks for
    what ``hit`` disowns: ``other`` wins — when ``hit`` rests on one word and no phrase
    (more evidence than that stands: "requirements, design, code, tests" is the phased
    recipe's, whatever it says of a small code change).

    Args:
        hit: the chosen hit.
        other: another hit with enough evidence.
    """
    if (hit.words >= MIN_WORDS or hit.phrases or other.recipe.name == hit.recipe.name
            or not (other.cues or other.phrases or other.intent)):
        return False  # more evidence than one word stands
    refused = _refused(hit.recipe.description)
    if not refused:
        return False
    own = {key for term in hit.terms for word in term.split() for key in lexicon.word_keys(word)}
    tagged = _tag_keys(tuple(other.recipe.tags))
    return any(own.isdisjoint(keys) and not refused.isdisjoint(keys) and not tagged.isdisjoint(keys)
               for term in other.terms if " " not in term
               for keys in [set(lexicon.word_keys(term))])


@functools.lru_cache(maxsize=64)
def _tag_keys(tags: tuple[str, ...]) -> frozenset[str]:
    """The stem keys of the single-word tags among ``tags``."""
    return frozenset(key for tag in tags if " " not in tag.strip()
                     for key in lexicon.word_keys(tag.strip()))


@functools.lru_cache(maxsize=64)
def _refused(description: str) -> frozenset[str]:
    """The stem keys of the content words in ``description``'s negated stretches."""
    return frozenset(key for word in lexicon.negated_words(description)
                     for key in lexicon.word_keys(word))


def _names_job(hit: ranking.Hit, verb: str, text: str, inventory: Sequence[Recipe]) -> bool:
    """True when ``hit`` names the writing job's deliverable in the sentence that asks for it.

    The sentences after the one with the writing verb are its material ("Write my standup
    note. Yesterday: fixed the login bug."): their words do not outvote the verb.
    """
    sentences = [s for s in reading.sentences(text) if s.strip()]
    if len(sentences) < 2 or not intent(hit, verb):
        return intent(hit, verb)
    asked = next((s for s in sentences if lexicon.writing_job(s) == verb), sentences[0])
    return any(intent(other, verb) for other in ranking.rank(inventory, asked)
               if other.recipe.name == hit.recipe.name)


def intent(hit: ranking.Hit, verb: str = "") -> bool:
    """True when ``hit`` names the deliverable: a cue, a phrase, a tagged head word, 2 tag words.

    Two tag words: ``MIN_WORDS``.

    A head word that two recipes tag is no cue, but it still names what the
    request wants ("Write *tests* for the payment module").

    The writing verb ``verb`` is no cue of the deliverable (coding tags
    *rewrite*: "Rewrite this sentence" is no code), nor is a cue that names a
    short piece of writing (``lexicon.is_genre``: a research recipe's tag
    *Nachrichten*, news, is also the plural of *Nachricht*, a message): that
    is the general worker's deliverable, not this recipe's. Nor is a text that an
    editing verb corrects (``lexicon.EDITED_TEXTS``: "Korrigiere meinen *Aufsatz*").

    Rule: the single-job rule of docs/delegate.md, "Offline selector".
    """
    edited = verb in lexicon.EDITING_VERBS  # "Proofread my *essay*": the edit is the job
    cues = [cue for cue in hit.cues if cue != verb and not lexicon.is_genre(cue)
            and not (edited and cue in lexicon.EDITED_TEXTS)]
    return bool(cues or hit.phrases or hit.named > len(hit.cues) - len(cues)) or (
        hit.intent >= MIN_WORDS)


def _words(terms: Sequence[str]) -> str:
    return ", ".join(f"'{t}'" for t in terms[:6]) or "nothing"
