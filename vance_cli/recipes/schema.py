"""The recipe schema: what a recipe document may hold, checked once, in one place.

A recipe document (``recipes/<name>.yaml``, docs/documents.md "Recipes")
holds ``engine`` and ``description`` (required), and optionally ``title``,
``params`` (a mapping), ``tags`` (texts), ``triggers.keywords`` (texts),
``internal`` (true/false) and ``prompt`` (the engine's instructions: a
template over ``task``, ``params`` and ``lang``). The ``params`` follow the
engine's schema (``recipes.params``). Any other key is an error, with a "did you mean".
YAML numbers where text is expected are read as the text written
(``tags: [3.10]`` is ``"3.10"``).

Used by the loader (a file), by Slartibartfast's validator (a generated
recipe) and, through the loader, by the document cache, which stores the
validated ``RecipeDocument.to_cache()`` and rebuilds recipes from it without
validating again. This module imports pydantic: the loader imports it only
when a file has to be parsed (a warm run reads the cache).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, ValidationError

from vance_cli.base import schema
from vance_cli.base.yaml_types import as_text
from vance_cli.recipes import params

if TYPE_CHECKING:
    from vance_cli.recipes.references import EngineRules


def _text(value: Any) -> Any:
    """A YAML scalar where text is expected: the written text of a number or boolean."""
    return as_text(value) if not isinstance(value, dict | list) else value


def _required_text(value: Any) -> Any:
    value = _text(value)
    if isinstance(value, str) and not value.strip():
        raise ValueError("must not be empty")
    return value


Text = Annotated[str, BeforeValidator(_text)]
"""A text; a YAML number is its written text."""
RequiredText = Annotated[str, BeforeValidator(_required_text)]
"""A non-blank text."""


def _empty_is_default(value: Any) -> Any:
    """``key:`` with no value (null) means the default, as an absent key does."""
    return {} if value is None else value


class Triggers(BaseModel):
    """``triggers:``: the trigger fast path's keywords (docs/delegate.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    keywords: list[Text] = Field(default_factory=list)


class RecipeDocument(BaseModel):
    """One recipe document, as written (its name is its file name, not a key)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: RequiredText
    description: RequiredText
    title: Text = ""
    params: Annotated[dict[str, Any], BeforeValidator(_empty_is_default)] = Field(
        default_factory=dict)
    tags: list[Text] = Field(default_factory=list)
    triggers: Annotated[Triggers, BeforeValidator(_empty_is_default)] = Field(
        default_factory=Triggers)
    internal: StrictBool = False
    prompt: Text = ""

    def to_cache(self) -> dict[str, Any]:
        """Return the normalised content a ``Recipe`` is built from (JSON-able).

        Engine and title trimmed, the description's white space collapsed,
        keywords lower-cased, blank keywords dropped.
        """
        return {
            "engine": self.engine.strip(), "description": " ".join(self.description.split()),
            "title": self.title.strip(), "params": dict(self.params), "tags": list(self.tags),
            "keywords": [k.strip().lower() for k in self.triggers.keywords if k.strip()],
            "internal": self.internal, "prompt": self.prompt.strip(),
        }


KEYS = tuple(info.alias or name for name, info in RecipeDocument.model_fields.items())
"""The top-level keys a recipe may have."""


def validate(data: Any, rules: EngineRules | None = None) -> dict[str, Any]:
    """Check a recipe document and return its normalised content (``to_cache``).

    ``rules`` give the engine's params schema (None: the params are not checked).

    Raises:
        ValueError: every problem, one ``path: problem`` each, ``; ``-joined
            (the first ``schema.MAX_LISTED`` named).
    """
    if not isinstance(data, dict):
        found = "an empty file" if data is None else type(data).__name__
        raise ValueError(f"a recipe must be a mapping, found {found}")
    try:
        document = RecipeDocument.model_validate(data)
    except ValidationError as exc:
        raise ValueError(schema.reason(exc, RecipeDocument)) from None
    wrong = _params_problems(document, rules)
    if wrong:
        more = len(wrong) - schema.MAX_LISTED
        raise ValueError("; ".join(wrong[:schema.MAX_LISTED])
                         + (f" (and {more} more)" if more > 0 else ""))
    return document.to_cache()


def problems(data: dict[str, Any], rules: EngineRules | None = None) -> list[str]:
    """Return every problem of a recipe mapping (all of them, for a repair request).

    The params are checked against the engine's schema too (``rules``), when
    the rest of the recipe is sound.
    """
    try:
        document = RecipeDocument.model_validate(data)
    except ValidationError as exc:
        return [text for _, text in schema.problems(exc, RecipeDocument)]
    return _params_problems(document, rules)


def _params_problems(document: RecipeDocument, rules: EngineRules | None) -> list[str]:
    if rules is None:
        return []
    return params.problems(rules.params_model(document.engine.strip()), document.params)
