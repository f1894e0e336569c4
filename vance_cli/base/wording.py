"""Wording for people: counted nouns ("1 process", "2 processes"), shortened texts.

One helper for every count a message or caption shows, in the core and the
command-line layer alike, so no message says "1 items"; one for every text
cut to fit (a goal, a task), so none is cut in the middle of a word.
"""

from __future__ import annotations


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """Return ``"<count> <noun>"`` with the noun in the singular for exactly one.

    Args:
        count: how many.
        singular: the noun for one, e.g. ``"process"``.
        plural: the noun for any other count; None → ``singular + "s"``.

    Returns:
        e.g. ``"1 process"``, ``"0 processes"``, ``"3 recipes"``.
    """
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


def shorten(text: str, limit: int) -> str:
    """Return ``text`` cut to at most ``limit`` characters at a word boundary, ending in ``…``.

    Args:
        text: any text; runs of white space (line breaks too) become one space.
        limit: longest result, in characters, the ``…`` included.

    Returns:
        The text on one line when it fits; else its words up to the last that
        fits, then ``…`` (a single word longer than the limit is cut inside).
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[:max(0, limit - 1)]
    if flat[len(head)] != " " and " " in head:
        head = head[:head.rindex(" ")]
    return head.rstrip(" ,;:.-") + "…"
