"""How the LLM selector and the offline selector combine.

Rule: docs/delegate.md, "How the two selectors combine".

With an LLM configured the offline selector still runs first (milliseconds, no call). Its
decision is *confident* when its evidence cannot be mistaken for topic words:

- a MATCH whose recipe has a cue heading the request's first clause (``Hit.main``: the
  deliverable asked for, "*Translate* this …"), a matched multi-word tag or trigger
  keyword (``Hit.phrases``) or ``CONFIDENT_WORDS`` distinct content words of the task, and
  is not the general worker or the one-fact recipe chosen by their fallback rules;
- a NONE by the live-question or act-in-the-world rule (``reading``): no recipe has the
  access such a task needs.

``selector.combine`` says what the LLM may change:

- ``offline-first`` (default): a confident offline decision stands and the LLM is not
  asked; otherwise the LLM decides, but its NONE does not overrule an offline MATCH. A
  small model then cannot make a clear case worse, and the person does not wait tens of
  seconds for a CPU model to confirm it.
- ``llm-checked``: the LLM is always asked; an offline MATCH beats an LLM NONE.
- ``llm``: the LLM decides alone (its NONE, its failures).

An LLM NONE stands where the offline selector found no recipe too; against an offline
MATCH it loses (``offline-first``, ``llm-checked``): on the labelled sets the right answer
to a task the offline selector matched without confidence was NONE 1 time in 125, and
Qwen2.5-Coder-1.5B answered NONE to such tasks it should have matched (docs/delegate.md).
A NONE sends the task to Slartibartfast; another recipe the LLM names stands. The recipe
it names must exist (constrained output and the verbatim check), and when the LLM call or
its reply fails the offline MATCH, if there is one, is the decision, saying so.

With an offline MATCH, it and the ranking's next recipes are shown to the LLM as a
shortlist (``shortlist``); with an offline NONE there is none: the recipes the offline
selector rejected, listed as candidates, are what a small model then picks (Qwen2.5-0.5B
chose ``translate``, the top word count of "Draw a mind map about the Python programming
language", the offline NONE).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from vance_cli.base.records import frozen
from vance_cli.ranking import bm25 as ranking
from vance_cli.ranking import lexicon, reading
from vance_cli.selector.decision import Decision, NoneReason
from vance_cli.selector.offline import (
    FACT_TAG,
    GENERAL_TAG,
    OFFLINE,
    select_offline,
    threshold,
)

if TYPE_CHECKING:
    from vance_cli.recipes.loader import Recipe

CONFIDENT_WORDS = 3
"""Distinct content words of the task matching one recipe that make an offline MATCH
confident: on the labelled sets every such MATCH was right (docs/delegate.md)."""

SHORTLIST = 5
"""Recipes of the offline ranking shown to the LLM first (its best, then by score)."""

BESIDE_LLM = "offline selector"
"""How an offline rationale starts when an LLM is configured (not "no LLM configured")."""

UNUSABLE = frozenset({NoneReason.LLM_ERROR, NoneReason.TIMEOUT, NoneReason.NO_JSON,
                      NoneReason.JSON_ERROR, NoneReason.TRUNCATED, NoneReason.INVALID_DECISION,
                      NoneReason.AMBIGUOUS, NoneReason.UNKNOWN_RECIPE})
"""NONE reasons that say the LLM gave no usable answer (as opposed to its own NONE)."""


@frozen
class OfflineView:
    """The offline selector's answer as the LLM path weighs it.

    Attributes:
        decision: the offline decision (mode ``offline``).
        confident: True when its evidence is strong (module docstring).
        why: the evidence that makes it confident, for the rationale ("" when not).
        shortlist: recipe names for the prompt, the offline choice first, at most
            ``SHORTLIST``; empty when the offline decision is NONE.
    """

    decision: Decision
    confident: bool
    why: str
    shortlist: tuple[str, ...]


def offline_view(task: str, inventory: Sequence[Recipe]) -> OfflineView:
    """Run the offline selector and judge its confidence (see the module docstring)."""
    decision = select_offline(task, inventory)
    decision = replace(decision, rationale=decision.rationale.replace(OFFLINE, BESIDE_LLM, 1))
    hits = [hit for hit in ranking.rank(inventory, task) if hit.score > 0]
    names: list[str] = []
    if decision.recipe is not None:  # an offline NONE shows no shortlist (module docstring)
        names = [decision.recipe.name,
                 *(h.recipe.name for h in hits if h.recipe.name != decision.recipe.name)]
    why = _confidence(task, inventory, decision, hits)
    return OfflineView(decision, bool(why), why, tuple(names[:SHORTLIST]))


def _confidence(task: str, inventory: Sequence[Recipe], decision: Decision,
                hits: Sequence[ranking.Hit]) -> str:
    if decision.recipe is None:
        return _none_confidence(task, inventory, hits)
    tags = set(map(str.casefold, decision.recipe.tags))
    hit = next((h for h in hits if h.recipe.name == decision.recipe.name), None)
    if hit is None or ({GENERAL_TAG, FACT_TAG} & tags and not (hit.main or hit.phrases)):
        return ""
    if hit.main:
        return f"cue '{hit.main[0]}' heads the request"
    if hit.phrases:
        return f"phrase '{hit.phrases[0]}'"
    return f"{hit.words} words of the task" if hit.words >= CONFIDENT_WORDS else ""


def _none_confidence(task: str, inventory: Sequence[Recipe],
                     hits: Sequence[ranking.Hit]) -> str:
    read = reading.read(lexicon.analysed(task)).text
    if reading.live_question(read) is not None:
        return "the task asks for live data no recipe has"
    act = reading.action_request(read)
    limit = threshold(len(inventory))
    if act is not None and not any(h.cues or h.phrases for h in hits if h.score >= limit):
        return f"the task asks for an act in the world ('{act}')"
    return ""


def decided_offline(view: OfflineView) -> Decision:
    """Return the confident offline decision taken without asking the LLM (``offline-first``)."""
    return replace(view.decision, rationale=f"{view.decision.rationale}; confident ({view.why}),"
                   " so the LLM was not asked (selector.combine offline-first)")


def combine(view: OfflineView, asked: Decision, mode: str) -> Decision:
    """Return the decision after the LLM answered ``asked`` (see the module docstring).

    Args:
        view: the offline selector's answer.
        asked: the LLM path's decision (mode ``llm``, with its trace).
        mode: ``selector.combine``.

    Returns:
        ``asked``, or the offline MATCH (with the LLM's trace and a rationale saying why).
    """
    offline = view.decision
    if mode == "llm" or offline.recipe is None or asked.recipe is not None:
        return asked
    if asked.reason in UNUSABLE:
        note = (f"the LLM gave no usable answer ({asked.reason.value if asked.reason else '?'}:"
                f" {asked.rationale[:160]}), so the offline decision stands")
    elif view.confident:
        note = (f"the LLM answered NONE ({asked.rationale[:160]}), but the offline match is "
                f"confident ({view.why}) and wins")
    else:
        note = (f"the LLM answered NONE ({asked.rationale[:160]}), but an LLM NONE does not "
                f"overrule an offline match (selector.combine {mode})")
    return replace(offline, rationale=f"{offline.rationale}; {note}", trace=asked.trace)
