"""Wording for people: counted nouns ("1 process", "2 processes").

One helper for every count a message or caption shows, in the core and the
command-line layer alike, so no message says "1 items".
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
