"""Schema problems for people: a pydantic ``ValidationError`` as one line per problem.

The one reading of schema errors for every document kind (recipes, the engine
catalog, wizards): ``path: problem``, 0-based list indexes in brackets
(``fields[2].name``), a "did you mean" for an unknown key from the keys
allowed at that place, and at most ``MAX_LISTED`` problems named.

This module imports pydantic: it is used by the schema modules, which load
only when a document has to be parsed (docs/decisions/0003-imports.md).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from vance_cli.base.names import close_matches

MAX_LISTED = 3
"""Problems named in one reason; more are counted ("and 2 more")."""

PLAIN: dict[str, str] = {
    "missing": "missing required key",
    "dict_type": "expected a mapping",
    "list_type": "expected a list",
    "string_type": "expected text",
    "bool_type": "expected true or false",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
}
"""Plain words for pydantic's common error types (its own messages speak of Python types)."""


def path_text(loc: Sequence[int | str]) -> str:
    """Return a pydantic error location as a key path: ``fields[2].name``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).startswith(("function-", "tuple[", "list[", "dict[", "[key]")):
            out += ("." if out else "") + str(part)
    return out


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """Return the models an annotation holds: ``M``, ``list[M]``, ``dict[str, M]``, ``M | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _models_in(typing.get_args(annotation)[0])
    if origin is not None or isinstance(annotation, types.UnionType):
        for arg in typing.get_args(annotation):
            found += _models_in(arg)
    return found


BOUNDS = {
    "literal_error": "expected {expected}",
    "greater_than_equal": "expected at least {ge}",
    "greater_than": "expected more than {gt}",
    "less_than_equal": "expected at most {le}",
    "less_than": "expected less than {lt}",
    "too_long": "expected at most {max_length} entries",
    "too_short": "expected at least {min_length} entries",
}
"""Pydantic's messages about a bound, in plain words (the bound from the error's context)."""


def allowed_keys(model: type[BaseModel], loc: Sequence[int | str]) -> tuple[str, ...]:
    """Return the keys allowed where ``loc`` (an unknown key's location) points.

    Walks from ``model`` along the location's keys into nested models (a
    list or mapping of models included), so a nested key's suggestions come
    from its own mapping.
    """
    current = model
    for part in loc[:-1]:
        if not isinstance(part, str):
            continue
        field = _field_named(current, part)
        if field is None:
            continue
        nested = _models_in(field.annotation)
        if nested:
            current = nested[0]
    return tuple(info.alias or name for name, info in current.model_fields.items())


def _field_named(model: type[BaseModel], key: str) -> Any:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def problems(exc: ValidationError, model: type[BaseModel]) -> list[tuple[tuple[str, ...], str]]:
    """Return every problem as ``(key path, "path: text")``, in pydantic's order.

    Args:
        exc: the validation error of ``model``.
        model: the schema that was validated (for "did you mean").
    """
    out: list[tuple[tuple[str, ...], str]] = []
    for err in exc.errors():
        loc = err["loc"]
        kind = err["type"]
        if kind in PLAIN:
            text = PLAIN[kind]
        elif kind == "extra_forbidden":
            close = close_matches(str(loc[-1]), allowed_keys(model, loc), 1)
            text = "unknown key" + (f" (did you mean '{close[0]}'?)" if close else "")
        elif kind == "value_error" and "error" in err.get("ctx", {}):
            text = str(err["ctx"]["error"])
        elif kind in BOUNDS and "ctx" in err:
            text = BOUNDS[kind].format(**err["ctx"])
        else:
            text = err["msg"]
        where = path_text(loc)
        keys = tuple(str(p) for p in loc if isinstance(p, str) and p != "[key]")
        out.append((keys, f"{where}: {text}" if where else text))
    return out


def reason(exc: ValidationError, model: type[BaseModel]) -> str:
    """Return one line naming the first ``MAX_LISTED`` problems (``; ``-joined) and the count."""
    found = [text for _, text in problems(exc, model)]
    more = len(found) - MAX_LISTED
    return "; ".join(found[:MAX_LISTED]) + (f" (and {more} more)" if more > 0 else "")
