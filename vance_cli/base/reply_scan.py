r"""Read a model's free-text reply in linear time: reasoning blocks and JSON objects anywhere.

A reply is untrusted text of up to a few hundred kilobytes. Everything here
is bounded by the reply's length, whatever it holds (docs/delegate.md
"Limits"; the reasoning in docs/decisions/0009-linear-reply-parsing.md):

- ``strip_thinking`` drops ``<think>…</think>`` blocks in one pass over the
  tags. A tag inside a JSON object that decodes is text, not a marker, so an
  answer whose rationale mentions ``<think>`` still parses.
- ``find_objects`` yields every top-level JSON object that decodes at a
  ``{``, in order. A decoded object is skipped as a whole (its inner objects
  are reached by ``walk``). Each try decodes a window of the text that grows
  only while the decoder needs more, and all tries together may read at most
  ``SCAN_FACTOR`` times the text (plus ``MAX_TRIES`` tries at all), so a
  reply of nested or unclosed braces costs a bounded number of passes instead
  of one pass per brace. Nesting too deep for the decoder fails that try,
  never the caller.
- ``relaxed`` mode reads the slips models make — single quotes, trailing
  commas, unquoted keys — with a small iterative grammar (no unquoted
  values: ``{MATCH coding}`` stays an error), again within a token budget.
- An escaped lone surrogate (``"\\udcff"``) decodes as U+FFFD: no encoder
  (SQLite, stdout) would take the surrogate itself.
- A decoded object is a ``JsonObject``: a dict that also remembers the keys
  (folded to lower case) given twice with different values, which plain
  ``json`` would silently resolve as "last one wins".
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from vance_cli.base.records import frozen

SCAN_FACTOR = 4
"""All strict tries together read at most this many times the text (plus one window each)."""

MAX_TRIES = 2_000
"""Most ``{`` positions tried per scan; each failed try costs an exception (about 3 µs)."""

WINDOW = 512
"""First window a try decodes, in characters; it grows fourfold while the decoder needs more."""

_MARGIN = 16
"""A failure this close to a window's end may be the cut's doing (``tru`` of ``true``): widen."""

RELAXED_TOKENS = 2_000
"""Tokens the relaxed grammar may read beyond one per 16 characters of text."""

MAX_DEPTH = 200
"""Deepest nesting the relaxed grammar follows (an answer object is flat)."""

_TAG = re.compile(r"<(/?)(think|thinking|reasoning)>", re.IGNORECASE)
_STRICT_START = re.compile(r"\{[ \t\n\r]*[\"}]")
_RELAXED_START = re.compile(r"\{[ \t\n\r]*[\"'A-Za-z_$}]")
_TOKEN = re.compile(
    r"""[ \t\n\r]*+(?:(?P<punct>[{}\[\]:,])|(?P<dq>"(?:[^"\\\n]|\\.)*+")"""
    r"""|(?P<sq>'(?:[^'\\\n]|\\.)*+')|(?P<num>-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?"""
    r"""(?:[eE][+-]?[0-9]++)?)|(?P<word>[A-Za-z_$][A-Za-z0-9_$]*+))""")
_ESCAPES = re.compile(r"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                      r"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""An escaped backslash, an escaped surrogate pair, or an escaped lone surrogate."""
_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None,
                          "True": True, "False": False, "None": None}


class JsonObject(dict[str, Any]):
    """A decoded JSON object; ``clashes`` holds the lower-cased keys given twice, differently."""

    __slots__ = ("clashes",)

    def __init__(self, pairs: Sequence[tuple[str, Any]] = ()) -> None:
        super().__init__()
        seen: dict[str, Any] = {}
        clashes: set[str] = set()
        for key, value in pairs:
            folded = key.strip().lower()
            if folded in seen:
                try:
                    differs = bool(seen[folded] != value)
                except RecursionError:
                    differs = True
                if differs:
                    clashes.add(folded)
            seen[folded] = value
            self[key] = value
        self.clashes: frozenset[str] = frozenset(clashes)


@frozen
class Found:
    """One decoded top-level object: ``text[start:end]`` is its source."""

    start: int
    end: int
    value: JsonObject


_DECODER = json.JSONDecoder(object_pairs_hook=JsonObject)


def strip_thinking(text: str, keep: Sequence[tuple[int, int]] | None = None) -> str:
    """Drop reasoning blocks (``<think>…</think>``, also ``thinking``, ``reasoning``).

    A block ends at the first closing tag of its own name; an opening tag
    that never closes hides the rest of the reply; a closing tag without an
    opening one hides everything before it. Tags inside a JSON object that
    decodes are text.

    Args:
        text: the reply.
        keep: ``(start, end)`` spans, in order, whose tags are text; None →
            the spans of ``find_objects(text)`` (computed only when a tag occurs).

    Returns:
        The reply without its reasoning, blocks replaced by a space.
    """
    tags = list(_TAG.finditer(text))
    if not tags:
        return text
    spans = [(f.start, f.end) for f in find_objects(text)] if keep is None else keep
    pieces: list[str] = []
    begin, block, index = 0, "", 0
    for tag in tags:
        while index < len(spans) and spans[index][1] <= tag.start():
            index += 1
        if index < len(spans) and spans[index][0] <= tag.start():
            continue  # inside a JSON object: text
        closing, name = tag.group(1) == "/", tag.group(2).lower()
        if block:
            if closing and name == block:
                block, begin = "", tag.end()
                pieces.append(" ")
        elif closing:  # a stray closing tag: its opening one was stripped by the server
            pieces, begin = [], tag.end()
        else:
            pieces.append(text[begin:tag.start()])
            block = name
    if not block:
        pieces.append(text[begin:])
    return "".join(pieces)


def _strict_at(text: str, pos: int) -> tuple[JsonObject | None, int, int]:
    """Decode the object at ``pos``: ``(object or None, end, characters read)``."""
    window, read = WINDOW, 0
    while True:
        stop = min(len(text), pos + window)
        chunk = text[pos:stop]
        read += len(chunk)
        try:
            value, end = _DECODER.raw_decode(chunk)
        except json.JSONDecodeError as exc:
            if stop >= len(text) or not (exc.pos >= len(chunk) - _MARGIN
                                          or exc.msg.startswith("Unterminated string")):
                return None, pos, read
        except RecursionError:  # nested deeper than the decoder goes: not an answer
            return None, pos, read
        else:
            return (value if isinstance(value, JsonObject) else None), pos + end, read
        window *= 4


def find_objects(text: str, relaxed: bool = False) -> Iterator[Found]:
    """Yield the top-level JSON objects that decode somewhere in ``text``, in order.

    Args:
        text: free text (a model's reply).
        relaxed: read single quotes, trailing commas and unquoted keys too
            (slower; for replies in which no strict object was found).

    Yields:
        Each object that decodes at a ``{`` outside the objects found before
        it. The scan stops early (linear time) when its budget is spent.
    """
    text = _scrub_escapes(text)
    starts = _RELAXED_START if relaxed else _STRICT_START
    budget = (len(text) // 16 + RELAXED_TOKENS) if relaxed else (SCAN_FACTOR * len(text)
                                                                 + WINDOW)
    tries, pos = 0, 0
    while budget > 0 and tries < MAX_TRIES:
        found = starts.search(text, pos)
        if found is None:
            return
        start = found.start()
        tries += 1
        if relaxed:
            value, end, cost = _relaxed_at(text, start, budget)
        else:
            value, end, cost = _strict_at(text, start)
        budget -= cost
        if value is not None:
            yield Found(start, end, value)
            pos = end
        else:
            pos = start + 1


def _scrub_escapes(text: str) -> str:
    r"""Turn each escaped lone surrogate into ``\\ufffd`` (same length: positions stay)."""
    if "\\u" not in text:
        return text
    return _ESCAPES.sub(lambda m: m.group(0) if len(m.group(0)) != 6 else "\\ufffd", text)


def walk(value: Any, descend: Callable[[JsonObject], bool] = lambda _obj: True,
         ) -> Iterator[JsonObject]:
    """Yield ``value`` and the objects nested in it, outer before inner, in order.

    Args:
        value: a decoded JSON value.
        descend: whether to look inside an object (its own children only).
    """
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, JsonObject):
            yield item
            if descend(item):
                stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def first_error(text: str) -> str:
    """Say why the object at the first ``{`` does not decode: ``message (line L, column C)``."""
    pos = text.find("{")
    chunk = _scrub_escapes(text[pos:pos + 4 * WINDOW * WINDOW])
    try:
        _DECODER.raw_decode(chunk)
    except json.JSONDecodeError as exc:
        where = pos + exc.pos
        line = text.count("\n", 0, where) + 1
        return f"{exc.msg} (line {line}, column {where - text.rfind(chr(10), 0, where)})"
    except RecursionError:
        return "objects nested too deeply"
    return "no object with the expected keys"


def _string(token: str) -> str:
    """Decode a double- or single-quoted string token (JSON escapes, and an escaped quote)."""
    if token[0] == "'":
        inner = re.sub(r"\\(.)|\"", lambda m: ('\\"' if m.group(1) is None
                                               else "'" if m.group(1) == "'" else m.group(0)),
                       token[1:-1])
        token = f'"{inner}"'
    decoded = json.loads(token)
    assert isinstance(decoded, str)
    return decoded


class _Frame:
    """An open object or array of the relaxed grammar."""

    __slots__ = ("closer", "expecting", "items", "key")

    def __init__(self, opener: str) -> None:
        self.closer = "}" if opener == "{" else "]"
        self.expecting = "key" if opener == "{" else "item"
        self.items: list[Any] = []
        self.key = ""


def _relaxed_at(text: str, pos: int, budget: int) -> tuple[JsonObject | None, int, int]:
    """Read one object at ``pos`` in the relaxed grammar: ``(object or None, end, tokens)``."""
    stack: list[_Frame] = []
    tokens, at = 0, pos
    while tokens < budget:
        token = _TOKEN.match(text, at)
        if token is None:
            return None, pos, tokens + 1
        tokens, at = tokens + 1, token.end()
        kind = token.lastgroup or "punct"
        try:
            value, done = _relaxed_step(stack, kind, token.group(kind))
        except ValueError:
            return None, pos, tokens
        if done:
            return (value if isinstance(value, JsonObject) else None), at, tokens
    return None, pos, tokens


_PENDING = object()
"""A step that completed no value."""


def _relaxed_step(stack: list[_Frame], kind: str, raw: str) -> tuple[Any, bool]:
    """Apply one token; return ``(finished top-level value, True)`` or ``(_PENDING, False)``.

    Expecting ``key`` (or ``}``), ``:``, ``value``, ``item`` (a value or
    ``]``) or ``,`` (or the closer); a comma before the closer is allowed.

    Raises:
        ValueError: the token does not fit the grammar here.
    """
    punct = raw if kind == "punct" else ""
    if not stack:
        if punct != "{":
            raise ValueError("not an object")
        stack.append(_Frame(punct))
        return _PENDING, False
    frame = stack[-1]
    expecting = frame.expecting
    if punct and punct == frame.closer and expecting in (",", "key", "item"):
        stack.pop()
        return _complete(stack, JsonObject(frame.items) if punct == "}" else frame.items)
    if expecting == "key":
        if kind not in ("dq", "sq", "word"):
            raise ValueError("expected a key")
        frame.key, frame.expecting = (raw if kind == "word" else _string(raw)), ":"
    elif expecting in (":", ","):
        if punct != expecting:
            raise ValueError(f"expected {expecting!r}")
        frame.expecting = ("value" if expecting == ":"
                           else "key" if frame.closer == "}" else "item")
    else:
        return _relaxed_value(stack, kind, raw)
    return _PENDING, False


def _relaxed_value(stack: list[_Frame], kind: str, raw: str) -> tuple[Any, bool]:
    """Apply a token where a value is expected (see ``_relaxed_step``)."""
    if kind == "punct" and raw in ("{", "["):
        if len(stack) >= MAX_DEPTH:
            raise ValueError("nested too deeply")
        stack.append(_Frame(raw))
        return _PENDING, False
    if kind == "word":
        if raw not in _WORDS:
            raise ValueError("unquoted value")
        return _complete(stack, _WORDS[raw])
    if kind in ("dq", "sq", "num"):
        return _complete(stack, json.loads(raw) if kind == "num" else _string(raw))
    raise ValueError("expected a value")


def _complete(stack: list[_Frame], value: Any) -> tuple[Any, bool]:
    """A value is complete: store it in the enclosing container, or finish."""
    if not stack:
        return value, True
    frame = stack[-1]
    frame.items.append((frame.key, value) if frame.closer == "}" else value)
    frame.expecting = ","
    return _PENDING, False
