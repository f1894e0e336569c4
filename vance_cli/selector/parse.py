"""Tolerant parsing of the selector LLM's reply, and the verbatim name check.

Rules (docs/delegate.md step 5), in order; every step is linear in the
reply's length (``base.reply_scan``):
1. ``finish_reason == "length"`` → NONE ``truncated``, even if a name is readable.
2. ``<think>…</think>`` blocks are dropped (also an unclosed one, and text
   before a lone ``</think>`` whose opening tag the server stripped); a tag
   inside a JSON object that decodes is text.
3. Every ``{`` starts a candidate; the first that decodes as a JSON object
   with a ``decision`` key is the answer, wherever it stands (code fences,
   prose around it, or wrapped in another object). Keys are read
   case-insensitively.
4. Only when no candidate decodes: the relaxed grammar may read a complete
   object with slips (single quotes, trailing commas, unquoted keys). An
   object that never closes (a reply cut off mid-way) is never read: that
   would turn garbage into a MATCH.
5. No ``{`` at all → ``no_json`` (``LLM reply has no JSON object``), except a
   bare ``NONE``, which is the model's answer (``llm_none``); a ``{`` but
   nothing decodes → ``json_error`` (``JSON parse error: …``), also for
   nesting too deep to follow.
6. ``decision`` is read case-insensitively; anything but MATCH/NONE, MATCH
   without a recipe, or a recipe that is not a string (a number is never an
   index) → ``invalid_decision``. Such an object is skipped when another,
   valid answer object follows (a model echoing the format first).
7. Several valid answer objects that disagree, or ``decision`` or ``recipe``
   given twice in one object with different values → ``ambiguous_reply``.
8. The recipe name is trimmed of surrounding white space, quotes and
   backticks only, then compared verbatim (``check_name``); a close name only
   goes into the rationale as "did you mean".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from vance_cli.base import reply_scan
from vance_cli.base.names import close_matches
from vance_cli.base.records import frozen
from vance_cli.base.reply_scan import JsonObject
from vance_cli.selector.decision import MATCH, NONE, NoneReason, SelectorFailure

MAX_REPLY_CHARS = 200_000
"""Longest reply scanned for JSON objects, in characters (replies are capped by tokens anyway)."""

NO_JSON = "LLM reply has no JSON object"
"""Rationale for an empty reply or one without ``{`` (docs/delegate.md table)."""

JSON_ERROR = "JSON parse error: "
"""Rationale prefix for a malformed object (docs/delegate.md table)."""

AMBIGUOUS = "LLM reply holds several answers that disagree"
"""Rationale prefix of ``ambiguous_reply`` (docs/delegate.md table)."""

_NAME_TRIM = " \t\r\n\"'`\u2018\u2019\u201c\u201d"
"""Trimmed from both ends of a recipe name: white space, straight and curly quotes, backticks."""

_BARE_NONE = re.compile(r"[\s\"'`*.]*none[\s\"'`*.]*", re.IGNORECASE)
"""A reply that is only the word NONE (in quotes, backticks, bold or with a period)."""

strip_thinking = reply_scan.strip_thinking


@frozen
class Reply:
    """A parsed selector reply.

    Attributes:
        decision: ``MATCH`` or ``NONE``.
        recipe: the trimmed recipe name (MATCH only), not yet checked.
        rationale: the LLM's rationale ("" when it gave none).
    """

    decision: str
    recipe: str | None
    rationale: str


def _lower_keys(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k).strip().lower(): v for k, v in obj.items()}


def _has_decision(obj: JsonObject) -> bool:
    return "decision" in _lower_keys(obj)


def _found(text: str, relaxed: bool) -> list[JsonObject]:
    """Every object in ``text``: top-level ones and those nested in an object without a decision."""
    return [inner for found in reply_scan.find_objects(text, relaxed)
            for inner in reply_scan.walk(found.value, lambda o: not _has_decision(o))]


def _answers(text: str) -> list[JsonObject]:
    found = _found(text, relaxed=False)
    answers = [o for o in found if _has_decision(o)]
    if not answers:
        repaired = _found(text, relaxed=True)
        answers = [o for o in repaired if _has_decision(o)]
        found = found or repaired
    if answers:
        return answers
    if found:
        raise SelectorFailure(NoneReason.INVALID_DECISION,
                              "LLM reply object has no 'decision' key")
    if "{" in text:
        raise SelectorFailure(NoneReason.JSON_ERROR, JSON_ERROR + reply_scan.first_error(text))
    raise SelectorFailure(NoneReason.NO_JSON, NO_JSON)


def clean_name(value: str) -> str:
    """Trim surrounding white space, quotes and backticks from a recipe name (nothing else)."""
    return value.strip(_NAME_TRIM)


def _rationale_text(value: Any) -> str:
    """The rationale as one line of text, whatever JSON shape the model gave it.

    A string as it is; a list (models sometimes give reasons as bullet items)
    joined with spaces, nested lists flattened; any other value as compact
    JSON (never Python's repr); null as "".
    """
    parts: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, str):
            parts.append(item)
        elif item is not None:
            try:
                parts.append(json.dumps(item, ensure_ascii=False))
            except (RecursionError, ValueError):
                parts.append("(nested too deeply)")
    return " ".join(" ".join(parts).split())


def _normalized(answer: JsonObject) -> Reply:
    twice = sorted(answer.clashes & {"decision", "recipe"})
    if twice:
        raise SelectorFailure(NoneReason.AMBIGUOUS,
                              f"{AMBIGUOUS}: one object gives '{twice[0]}' twice, differently")
    obj = _lower_keys(answer)
    raw_decision = obj.get("decision")
    decision = clean_name(raw_decision).upper() if isinstance(raw_decision, str) else None
    rationale_text = _rationale_text(obj.get("rationale"))
    if decision == NONE:
        return Reply(NONE, None, rationale_text)
    if decision != MATCH:
        raise SelectorFailure(NoneReason.INVALID_DECISION,
                              f"invalid decision {raw_decision!r} — expected MATCH or NONE")
    recipe = obj.get("recipe")
    if recipe is None or (isinstance(recipe, str) and not clean_name(recipe)):
        raise SelectorFailure(NoneReason.INVALID_DECISION, "MATCH without a recipe name")
    if not isinstance(recipe, str):
        raise SelectorFailure(NoneReason.INVALID_DECISION,
                              f"recipe must be a name, got {json.dumps(recipe)[:80]}")
    return Reply(MATCH, clean_name(recipe), rationale_text)


def parse_reply(text: str, finish_reason: str | None) -> Reply:
    """Parse a selector reply tolerantly (see the module rules).

    Args:
        text: the reply as the LLM sent it.
        finish_reason: the server's finish reason.

    Returns:
        The Reply (its recipe name is not yet checked against the inventory).

    Raises:
        SelectorFailure: with reason ``truncated``, ``no_json``, ``json_error``,
            ``invalid_decision`` or ``ambiguous_reply``; never anything
            else, whatever the reply (time linear in its length).

    Rule: docs/delegate.md step 5.
    """
    if finish_reason == "length":
        raise SelectorFailure(NoneReason.TRUNCATED,
                              "LLM reply was cut off at the token limit (finish_reason=length)")
    body = strip_thinking(text[:MAX_REPLY_CHARS])
    if not body.strip():
        raise SelectorFailure(NoneReason.NO_JSON, NO_JSON)
    if "{" not in body and _BARE_NONE.fullmatch(body):
        return Reply(NONE, None, "")
    valid: list[Reply] = []
    problem: SelectorFailure | None = None
    for obj in _answers(body):
        try:
            valid.append(_normalized(obj))
        except SelectorFailure as exc:  # e.g. an echoed format example before the answer
            if exc.reason is NoneReason.AMBIGUOUS:
                raise
            problem = problem or exc
    if not valid:
        assert problem is not None  # _answers returned at least one object
        raise problem
    if len({(r.decision, r.recipe) for r in valid}) > 1:
        raise SelectorFailure(NoneReason.AMBIGUOUS, AMBIGUOUS)
    return valid[0]


def check_name(name: str, inventory: Sequence[str]) -> str:
    """Return ``name`` when the inventory has exactly that name.

    Raises:
        SelectorFailure: ``unknown_recipe``; the rationale starts with
            ``unknown recipe '<name>' — not in inventory`` and adds up to 3
            close names as "did you mean".
    """
    if name in inventory:
        return name
    close = close_matches(name, list(inventory), limit=3)
    hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    raise SelectorFailure(NoneReason.UNKNOWN_RECIPE,
                          f"unknown recipe '{name}' — not in inventory{hint}")
