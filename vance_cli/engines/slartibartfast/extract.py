"""Find the recipe in a model's reply, tolerantly.

Real models do not answer with a bare YAML document: they wrap it in a code
fence (```` ```yaml ````, ```` ```yml ````, ```` ```json ````, or none named),
put prose before and after it, think aloud in ``<think>…</think>`` first, or
answer in JSON. Rules, first that finds something wins:

1. Reasoning blocks are dropped (``base.reply_scan.strip_thinking``).
2. Fenced code blocks (a reply cut off inside its last fence counts too):
   the **last** block that parses to a recipe-like mapping wins, since a
   model that drafts and then corrects itself puts the final version last.
3. No fence: the text from the first line that starts with a recipe key
   (``name:``, ``engine:`` …) up to the longest run of lines that parses
   (prose after the document is cut off).
4. Bare JSON objects anywhere in the text: the last recipe-like one.

"Recipe-like" means a mapping with at least two of ``name``, ``engine``
and ``description`` (one level of wrapping such as ``recipe: {…}`` is
unwrapped). When the reply holds something that looks like a recipe but
does not parse, the parse error (with line and column inside the
extracted text) is returned, so a repair request can quote it.

YAML is read with ``vance_cli.base.yamlio`` (safe, no YAML 1.1 surprises,
duplicate keys are errors); JSON with ``base.reply_scan``. Small models write
plain values holding ``": "`` (``prompt: Step 1: outline``), which YAML
refuses ("mapping values are not allowed"): such a value is quoted and the
text read again, a line at a time, at most ``MAX_QUOTE_FIXES`` times
(``quote_values``). A parse error that remains quotes its line, so the repair
request shows the model exactly what to change. Every step is
bounded by the reply's length, so the fallback cutoff holds whatever a
model sends (docs/decisions/0009-linear-reply-parsing.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from vance_cli.base import reply_scan, yamlio
from vance_cli.base.errors import DocumentError
from vance_cli.base.records import frozen

MAX_REPLY_CHARS = 200_000
"""Longest reply examined, in characters (replies are capped by tokens anyway)."""

MAX_PROSE_LINES = 400
"""Most lines of an unfenced document read before trailing prose is cut off."""

MAX_PROSE_TRIES = 8
"""Most parses when cutting trailing prose off an unfenced document: each try ends at
the line the previous one failed on, so a handful finds the document in prose."""

MAX_QUOTE_FIXES = 20
"""Most values quoted in one document (each is one more parse)."""

_PLAIN_VALUE = re.compile(r"""^(?P<key>[ \t]*(?:-[ \t]+)?[A-Za-z_][\w.-]*[ \t]*:[ \t]+)"""
                          r"""(?P<value>[^\s"'|>&*!%@`{\[#][^\n]*)$""")
"""A ``key: value`` line whose value is plain (not quoted, not a block, flow or anchor)."""

RECIPE_MARKERS = frozenset({"name", "engine", "description"})
"""Keys of which a mapping needs at least two to count as a recipe."""

# Possessive quantifiers (*+, {3,}+): a long line of backticks without a newline fails
# at once instead of trying every split of it (that was quadratic).
_FENCE = re.compile(
    r"^[ \t]*+(?P<fence>`{3,}+|~{3,}+)[ \t]*+(?P<lang>[A-Za-z0-9_+.-]*+)[^\n]*+\n"
    r"(?P<body>.*?)(?:^[ \t]*+(?P=fence)[ \t]*+$|\Z)",
    re.MULTILINE | re.DOTALL)
_MEANT = re.compile(r"""^[ \t]*+["']?(engine|description)["']?[ \t]*+:""", re.MULTILINE)
"""A line that starts a recipe key (spaces and tabs only: a class with newlines would span
lines and make the search quadratic)."""
_KEY_LINE = re.compile(r"""^["']?(name|title|engine|description)["']?[ \t]*:""", re.MULTILINE)


@frozen
class Extracted:
    """What was found in a reply.

    Attributes:
        text: the extracted document text ("" when nothing was found).
        format: ``yaml`` or ``json``; None when nothing was found.
        data: the parsed recipe mapping, or None.
        error: why no mapping could be read (a parse error with position,
            or "no recipe found"), or None when ``data`` is set.
    """

    text: str
    format: str | None
    data: dict[str, Any] | None
    error: str | None


NOTHING = "the reply holds no recipe: expected one YAML document in a ```yaml code block"
"""Error when the reply holds nothing recipe-like at all."""


def _recipe_like(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and len(value) == 1:
        inner = next(iter(value.values()))
        if isinstance(inner, dict) and str(next(iter(value))).lower() == "recipe":
            value = inner
    if isinstance(value, dict) and len(RECIPE_MARKERS & {str(k) for k in value}) >= 2:
        return value
    return None


def _parse(text: str, fmt: str) -> Any:
    """Parse ``text`` as ``fmt``; raises ValueError with a one-line message and position."""
    if fmt == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"JSON error: {exc.msg} (line {exc.lineno}, column {exc.colno})"
                             ) from None

    try:
        return quote_values(text)
    except DocumentError as exc:
        raise ValueError(_where(exc, text)) from None


def quote_values(text: str) -> Any:
    """Parse YAML ``text``, quoting plain values that hold ``": "`` where YAML refuses them.

    Raises:
        DocumentError: the text does not parse, even with such values quoted (the error of
            the last parse).
    """
    for _ in range(MAX_QUOTE_FIXES):
        try:
            return yamlio.loads(text)
        except DocumentError as exc:
            fixed = _quoted_at(text, exc)
            if fixed is None:
                raise
            text = fixed
    return yamlio.loads(text)


def _quoted_at(text: str, exc: DocumentError) -> str | None:
    """Return ``text`` with the plain value on the error's line quoted, or None."""
    if exc.line is None or "mapping values are not allowed" not in exc.reason:
        return None
    lines = text.split("\n")
    index = exc.line - 1
    found = _PLAIN_VALUE.match(lines[index]) if 0 <= index < len(lines) else None
    if found is None or ": " not in found.group("value"):
        return None
    value = found.group("value").rstrip()
    lines[index] = found.group("key") + json.dumps(value, ensure_ascii=False)
    return "\n".join(lines)


def _where(exc: DocumentError, text: str = "") -> str:
    """A YAML error as one line with its position and, when known, the line itself."""
    where = exc.reason + (f" (line {exc.line}, column {exc.column})" if exc.line is not None
                          else "")
    lines = text.split("\n")
    if exc.line is not None and 0 < exc.line <= len(lines) and lines[exc.line - 1].strip():
        line = lines[exc.line - 1]
        where += f" in the line `{line.strip()[:120]}`"
        if "mapping values are not allowed" in exc.reason:
            value = line.split(":", 1)[-1]
            where += (": put a value that holds ': ' in double quotes" if ": " in value
                      else ": check its indentation against the line above")
    return where


def _format_of(lang: str, text: str) -> str:
    lang = lang.lower()
    if lang == "json" or (lang not in ("yaml", "yml") and text.lstrip().startswith("{")):
        return "json"
    return "yaml"


def _looks_like_recipe(text: str) -> bool:
    """True for text that seems meant as a recipe (so its parse error is worth reporting)."""
    return bool(_MEANT.search(text))


def _fenced(body: str) -> Iterator[tuple[str, str]]:
    for found in _FENCE.finditer(body):
        yield found.group("lang"), found.group("body")


def _from_fences(body: str) -> Extracted | None:
    blocks = list(_fenced(body))
    problem: Extracted | None = None
    for lang, text in reversed(blocks):
        fmt = _format_of(lang, text)
        try:
            data = _recipe_like(_parse(text, fmt))
        except ValueError as exc:
            if problem is None and (lang.lower() in ("yaml", "yml", "json")
                                    or _looks_like_recipe(text)):
                problem = Extracted(text.strip(), fmt, None, str(exc))
            continue
        if data is not None:
            return Extracted(text.strip(), fmt, data, None)
    return problem


def _from_key_lines(body: str) -> Extracted | None:
    first = _KEY_LINE.search(body)
    if first is None:
        return None
    lines = body[first.start():].split("\n", MAX_PROSE_LINES)[:MAX_PROSE_LINES]
    start, end = 0, len(lines)
    first_error: str | None = None
    for _ in range(MAX_PROSE_TRIES):
        text = "\n".join(lines[start:end])
        try:
            data = _recipe_like(quote_values(text))
        except DocumentError as exc:
            first_error = first_error or _where(exc, text)
            # cut at the line the error is on (a shorter document cannot fail later)
            bad = exc.line if exc.line is not None and exc.line > 1 else end - start
            end = start + min(bad, end - start) - 1
            if end <= start:
                break
            continue
        if data is not None:
            return Extracted(text.strip(), "yaml", data, None)
        break  # a shorter prefix of this mapping has fewer keys still
    text = "\n".join(lines[start:start + MAX_PROSE_LINES]).strip()
    if first_error and _looks_like_recipe(text):
        return Extracted(text, "yaml", None, first_error)
    return None


def _from_json_objects(body: str) -> Extracted | None:
    found: Extracted | None = None
    for item in reply_scan.find_objects(body):
        for obj in reply_scan.walk(item.value, lambda o: _recipe_like(o) is None):
            data = _recipe_like(obj)
            if data is not None:
                found = Extracted(body[item.start:item.end], "json", data, None)
    return found


def extract_recipe(reply: str) -> Extracted:
    """Find the recipe document in a reply (see the module rules).

    Args:
        reply: the model's reply text, unchanged.

    Returns:
        An Extracted: ``data`` set when a recipe-like mapping was read, else
        ``error`` says why (with the extracted text when there was some).
    """
    body = reply_scan.strip_thinking(reply[:MAX_REPLY_CHARS])
    fenced = _from_fences(body)
    if fenced is not None and fenced.data is not None:
        return fenced
    unfenced = _from_key_lines(_FENCE.sub("", body)) or _from_json_objects(body)
    if unfenced is not None and unfenced.data is not None:
        return unfenced
    return fenced or unfenced or Extracted("", None, None, NOTHING)
