"""Tolerant parsing of the selector LLM's reply, and the verbatim name check.

Rules (docs/delegate.md step 5), in order:
1. ``finish_reason == "length"`` → NONE ``truncated``, even if a name is readable.
2. ``<think>…</think>`` blocks are dropped (also an unclosed one, and text
   before a lone ``</think>`` whose opening tag the server stripped).
3. Every ``{`` starts a candidate; the first that decodes as a JSON object
   with a ``decision`` key is the answer, wherever it stands (code fences,
   prose around it). Keys are read case-insensitively.
4. Only when no candidate decodes: a *complete* candidate (its braces
   balance outside strings) may be repaired with ``json-repair`` (single
   quotes, trailing commas, unquoted keys). An object that never closes (a
   reply cut off mid-way) is never repaired: that would turn garbage into a
   MATCH.
5. No ``{`` at all → ``no_json`` (``LLM reply has no JSON object``); a ``{``
   but nothing decodes → ``json_error`` (``JSON parse error: …``).
6. ``decision`` is read case-insensitively; anything but MATCH/NONE, MATCH
   without a recipe, or a recipe that is not a string (a number is never an
   index) → ``invalid_decision``. Such an object is skipped when another,
   valid answer object follows (a model echoing the format first).
7. Several valid answer objects that disagree → ``ambiguous_reply``.
8. The recipe name is trimmed of surrounding white space, quotes and
   backticks only, then compared verbatim (``check_name``); a close name only
   goes into the rationale as "did you mean".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vance_cli.base.names import close_matches
from vance_cli.selector.decision import MATCH, NONE, NoneReason, SelectorFailure

MAX_REPLY_CHARS = 200_000
"""Longest reply scanned for JSON objects, in characters (replies are capped by tokens anyway)."""

MAX_CANDIDATES = 500
"""Most ``{`` positions tried, so a pathological reply cannot make parsing quadratic."""

NO_JSON = "LLM reply has no JSON object"
"""Rationale for an empty reply or one without ``{`` (docs/delegate.md table)."""

JSON_ERROR = "JSON parse error: "
"""Rationale prefix for a malformed object (docs/delegate.md table)."""

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_OPEN_THINK = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_CLOSE_THINK = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_NAME_TRIM = " \t\r\n\"'`\u2018\u2019\u201c\u201d"
"""Trimmed from both ends of a recipe name: white space, straight and curly quotes, backticks."""


@dataclass(frozen=True, slots=True)
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


def strip_thinking(text: str) -> str:
    """Drop reasoning blocks (``<think>…</think>``) from a reply.

    An opening tag that never closes hides the rest of the reply; a closing
    tag without an opening one hides everything before it.
    """
    text = _THINK.sub(" ", text)
    close = list(_CLOSE_THINK.finditer(text))
    if close:
        text = text[close[-1].end():]
    opened = _OPEN_THINK.search(text)
    if opened:
        text = text[:opened.start()]
    return text


def _lower_keys(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k).strip().lower(): v for k, v in obj.items()}


def _decoded(text: str) -> Iterator[dict[str, Any]]:
    """Yield each JSON object that decodes at some ``{``, in order of position."""
    decoder = json.JSONDecoder()
    tried = 0
    pos = text.find("{")
    while pos != -1 and tried < MAX_CANDIDATES:
        tried += 1
        try:
            obj, end = decoder.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict):
            yield obj
            if "decision" in _lower_keys(obj):
                pos = text.find("{", end)  # its inner braces are part of this answer
                continue
        pos = text.find("{", pos + 1)


def balanced_span(text: str, start: int) -> str | None:
    """Return ``text[start:]`` up to the brace that closes the one at ``start``, or None.

    Braces inside double- or single-quoted strings do not count; None when
    the object never closes (a cut-off reply).
    """
    depth, quote, escaped = 0, "", False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return None


def _repaired(text: str) -> Iterator[dict[str, Any]]:
    """Yield objects that ``json-repair`` recovers from complete (balanced) candidates."""
    import json_repair

    tried = 0
    pos = text.find("{")
    while pos != -1 and tried < MAX_CANDIDATES:
        tried += 1
        span = balanced_span(text, pos)
        if span is not None:
            try:
                obj = json_repair.loads(span)
            except Exception:  # a failed repair: not this candidate
                obj = None
            if isinstance(obj, dict):
                yield obj
        pos = text.find("{", pos + 1)


def _first_error(text: str) -> str:
    try:
        json.JSONDecoder().raw_decode(text, text.find("{"))
    except json.JSONDecodeError as exc:
        return f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
    return "no object with a 'decision' key"  # pragma: no cover - caller saw none decode


def _answers(text: str) -> list[dict[str, Any]]:
    found = [_lower_keys(o) for o in _decoded(text)]
    answers = [o for o in found if "decision" in o]
    if not answers:
        repaired = [_lower_keys(o) for o in _repaired(text)]
        answers = [o for o in repaired if "decision" in o]
        found = found or repaired
    if answers:
        return answers
    if found:
        raise SelectorFailure(NoneReason.INVALID_DECISION,
                              "LLM reply object has no 'decision' key")
    if "{" in text:
        raise SelectorFailure(NoneReason.JSON_ERROR, JSON_ERROR + _first_error(text))
    raise SelectorFailure(NoneReason.NO_JSON, NO_JSON)


def clean_name(value: str) -> str:
    """Trim surrounding white space, quotes and backticks from a recipe name (nothing else)."""
    return value.strip(_NAME_TRIM)


def _rationale_text(value: Any) -> str:
    """The rationale as one line of text, whatever JSON shape the model gave it.

    A string as it is; a list (models sometimes give reasons as bullet items)
    joined with spaces; any other value as compact JSON (never Python's repr);
    null as "".
    """
    if value is None:
        return ""
    if isinstance(value, list):
        text = " ".join(_rationale_text(item) for item in value)
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False)
    return " ".join(text.split())


def _normalized(obj: Mapping[str, Any]) -> Reply:
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
            ``invalid_decision`` or ``ambiguous_reply``.

    Rule: docs/delegate.md step 5.
    """
    if finish_reason == "length":
        raise SelectorFailure(NoneReason.TRUNCATED,
                              "LLM reply was cut off at the token limit (finish_reason=length)")
    body = strip_thinking(text[:MAX_REPLY_CHARS])
    if not body.strip():
        raise SelectorFailure(NoneReason.NO_JSON, NO_JSON)
    valid: list[Reply] = []
    problem: SelectorFailure | None = None
    for obj in _answers(body):
        try:
            valid.append(_normalized(obj))
        except SelectorFailure as exc:  # e.g. an echoed format example before the answer
            problem = problem or exc
    if not valid:
        assert problem is not None  # _answers returned at least one object
        raise problem
    if len({(r.decision, r.recipe) for r in valid}) > 1:
        raise SelectorFailure(NoneReason.AMBIGUOUS, "LLM reply holds several answers that disagree")
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
