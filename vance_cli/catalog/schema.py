"""The engine catalog schema: what a catalog file may hold, checked once, in one place.

A catalog file (docs/catalog.md "Format") is a mapping with one key,
``engines:``, a non-empty mapping of engine name → ``purpose``,
``when_to_use``, ``not_for`` (non-empty texts; a YAML number is the text
written). Engine names are lower-case, start with a letter and hold letters,
digits, ``-`` and ``_`` (at most 64 characters). Any other key is an error,
with a "did you mean".

This module imports pydantic: a file is validated when an operator
validates or reloads one, and the bundled catalog once per version (the
document cache keeps the result).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError

from vance_cli.base import schema
from vance_cli.base.yaml_types import as_text

ENGINE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
"""Engine names: lower-case, start with a letter, at most 64 characters."""


def _text(value: Any) -> Any:
    value = as_text(value) if not isinstance(value, dict | list) else value
    if isinstance(value, str) and not value.strip():
        raise ValueError("must not be empty")
    return value


def _engine_name(name: str) -> str:
    if not ENGINE_NAME.match(name):
        raise ValueError(f"engine name {name!r} is not valid (lower-case letter first, then "
                         "letters, digits, - and _)")
    return name


RequiredText = Annotated[str, BeforeValidator(_text)]
"""A non-blank text; a YAML number is its written text."""
EngineName = Annotated[str, AfterValidator(_engine_name)]
"""A valid engine name (``ENGINE_NAME``)."""


class EngineEntry(BaseModel):
    """One engine of the catalog: what it is for, and not for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    purpose: RequiredText
    when_to_use: RequiredText
    not_for: RequiredText


class CatalogDocument(BaseModel):
    """A catalog file, as written."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engines: dict[EngineName, EngineEntry]


def validate(data: Any) -> dict[str, dict[str, str]]:
    """Check a catalog document; return engine name → its three texts, white space collapsed.

    Raises:
        CatalogInvalid: every problem, each with its key path.
    """
    if not isinstance(data, dict):
        raise CatalogInvalid([((), "the top level must be a mapping with an 'engines:' key")])
    try:
        document = CatalogDocument.model_validate(data)
    except ValidationError as exc:
        raise CatalogInvalid(schema.problems(exc, CatalogDocument)) from None
    if not document.engines:
        raise CatalogInvalid([(("engines",), "engines: must name at least one engine")])
    return {name: {key: " ".join(value.split()) for key, value in entry.model_dump().items()}
            for name, entry in document.engines.items()}


class CatalogInvalid(ValueError):
    """A catalog document that breaks the schema.

    Attributes:
        problems: ``(key path, "path: problem")`` pairs, in document order.
    """

    def __init__(self, problems: list[tuple[tuple[str, ...], str]]) -> None:
        super().__init__("; ".join(text for _, text in problems))
        self.problems = problems
