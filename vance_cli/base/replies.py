"""A JSON object out of a model's reply, tolerantly and in linear time.

Real models wrap JSON in code fences, put prose or ``<think>…</think>``
around it, or leave a trailing comma. ``find_object`` tries a fixed number
of candidate spans — the whole reply without its reasoning, each fenced
block, the span from the first ``{`` to the last ``}`` — each decoded once,
so a hostile reply costs time proportional to its length; only when none
decodes, the last complete candidate is read with the relaxed grammar of
``reply_scan`` (single quotes, trailing commas, unquoted keys). Reasoning
blocks go as ``reply_scan.strip_thinking`` drops them (one pass, linear).
Used by engines whose turns ask for structured answers (arthur's actions);
the selector has its own rules (``selector.parse``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from vance_cli.base import reply_scan

MAX_REPLY_CHARS = 200_000
"""Longest reply looked at, in characters (replies are capped by tokens anyway)."""

_FENCE = re.compile(r"```[a-zA-Z]*[ \t]*\n(.*?)```", re.S)


def without_thinking(text: str) -> str:
    """Return the reply without ``<think>…</think>`` blocks (an unclosed one hides the rest)."""
    return reply_scan.strip_thinking(text)


def _candidates(text: str) -> Iterator[str]:
    stripped = text.strip()
    yield stripped
    for match in _FENCE.finditer(stripped):
        yield match.group(1).strip()
    first, last = stripped.find("{"), stripped.rfind("}")
    if first != -1 and last > first:
        yield stripped[first:last + 1]


def find_object(reply: str) -> dict[str, Any] | None:
    """Return the JSON object a reply holds, or None when it holds none.

    Args:
        reply: the model's text (at most ``MAX_REPLY_CHARS`` are read).
    """
    text = without_thinking(reply[:MAX_REPLY_CHARS])
    last: str | None = None
    for candidate in _candidates(text):
        if not candidate.startswith("{"):
            continue
        last = candidate
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):  # nested too deeply is no object either
            continue
        if isinstance(value, dict):
            return value
    if last is None or not last.endswith("}"):
        return None
    repaired = next(reply_scan.find_objects(last, relaxed=True), None)
    if repaired is None or repaired.start != 0 or last[repaired.end:].strip():
        return None
    return dict(repaired.value) or None
