"""Parsing of repeated ``KEY=VALUE`` options (``--param``, ``--set``).

``K=V`` gives the string ``V``; ``K:=JSON`` gives the parsed JSON value
(``n:=3``, ``flags:='["a","b"]'``), as httpie's raw-JSON items.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from vance_cli.errors import InputError


def parse_assignments(items: Sequence[str] | None, option: str) -> dict[str, Any]:
    """Parse ``KEY=VALUE`` / ``KEY:=JSON`` items into a dict (later items win).

    Args:
        items: the option's values, in command-line order.
        option: the option name for messages, e.g. ``"--param"``.

    Raises:
        InputError: an item without ``=``, an empty key, or invalid JSON after ``:=``.
    """
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip(" :"):
            raise InputError(f"{option} expects KEY=VALUE (or KEY:=JSON), got {item!r}")
        if key.endswith(":"):
            key = key[:-1]
            try:
                out[key.strip()] = json.loads(value)
            except json.JSONDecodeError as exc:
                raise InputError(f"{option} {key}:= needs JSON: {exc.msg}") from None
        else:
            out[key.strip()] = value
    return out
