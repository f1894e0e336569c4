"""The shorthand small models write for a recipe, read as the recipe schema's own form.

Rules (docs/delegate.md "How a recipe is designed"): before a candidate is checked, and
only where the meaning is plain:

- a vogon phase given as a string (``phases: [Outline the essay, Write the draft]``) is a
  phase with that ``prompt`` and a name made of its first words (``outline-the-essay``);
  a phase given as a one-key mapping of a name to a text (``- outline: Outline it``) is a
  phase of that name and prompt;
- a zaphod head given as a string is a head with that ``persona``, named the same way.

Anything else is left as it is, for the checks to report. Names are unique: a repeated
one gets ``-2``, ``-3`` …
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

NAME_WORDS = 4
"""Words of a shorthand phase's or head's text that make its name."""

_WORD = re.compile(r"[a-z0-9]+")


def expand(body: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``body`` (a recipe without ``name``) with the shorthand expanded."""
    out = dict(body)
    params = out.get("params")
    if not isinstance(params, Mapping):
        return out
    engine = str(out.get("engine") or "").strip()
    params = dict(params)
    if engine == "vogon" and isinstance(params.get("phases"), list):
        params["phases"] = _items(params["phases"], "prompt")
    if engine == "zaphod" and isinstance(params.get("heads"), list):
        params["heads"] = _items(params["heads"], "persona")
    out["params"] = params
    return out


def _items(items: list[Any], text_key: str) -> list[Any]:
    taken: set[str] = {str(i["name"]) for i in items if isinstance(i, Mapping) and "name" in i}
    expanded: list[Any] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            expanded.append({"name": _unique(_slug(item), taken), text_key: item.strip()})
        elif (isinstance(item, Mapping) and len(item) == 1 and "name" not in item
              and isinstance(next(iter(item.values())), str)):
            key, text = next(iter(item.items()))
            expanded.append({"name": _unique(_slug(str(key)), taken), text_key: text})
        else:
            expanded.append(item)
    return expanded


def _slug(text: str) -> str:
    return "-".join(_WORD.findall(text.lower())[:NAME_WORDS]) or "step"


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}-{n}"
    taken.add(candidate)
    return candidate
