"""Numbers that remember how they were written, and the text a schema gets back for them.

See docs/documents.md ("YAML"): ``3.10`` stays ``"3.10"`` where a schema
expects text, ``010`` stays ``"010"``.
"""

from __future__ import annotations

from typing import Any

RawYaml = Any
"""Plain data as YAML yields it: dict, list, str, int, float, bool, None."""


class YamlInt(int):
    """An int that remembers the text it was written as (``source``)."""

    source: str

    def __new__(cls, value: int, source: str) -> YamlInt:
        """Build the int ``value`` remembering ``source``."""
        obj = super().__new__(cls, value)
        obj.source = source
        return obj


class YamlFloat(float):
    """A float that remembers the text it was written as (``source``), e.g. ``"3.10"``."""

    source: str

    def __new__(cls, value: float, source: str) -> YamlFloat:
        """Build the float ``value`` remembering ``source``."""
        obj = super().__new__(cls, value)
        obj.source = source
        return obj


def as_text(value: Any) -> Any:
    """Return the written text of a YAML number, else ``value`` unchanged.

    Use where a schema expects a string: ``3.10`` stays ``"3.10"``, ``010``
    stays ``"010"``; a boolean becomes ``"true"``/``"false"``.
    """
    if isinstance(value, YamlInt | YamlFloat):
        return value.source
    if isinstance(value, bool):
        return "true" if value else "false"
    return value
