"""The wizard schema: typed, frozen models parsed from a wizard's YAML (docs/wizards.md).

A wizard is ``wizards/<name>.yaml``; its name is the file name. Keys:
``title`` (required), ``description``, ``icon``, ``category``, ``fields``
(required, may be empty), ``promptTemplate`` (required), ``validatorPrompt``,
``suggestedFollowUps``, ``availableIn``, ``steps``; a field may carry ``showIf``.

Invariants:
- Unknown keys are errors (a typo like ``integermax`` would otherwise drop a
  bound silently); a top-level ``name`` key is tolerated and ignored, since
  the file name is the name.
- Every text the schema expects goes through ``yaml_types.as_text``, so YAML 1.1
  look-alikes never corrupt choice values or labels: ``3.10`` stays ``"3.10"``,
  ``010`` stays ``"010"``; ``no``/``on`` are strings already (``yamlio``).
- A LocalizableText is a mapping language → text; a plain scalar means
  ``{en: <text>}``. It resolves to the session language, else ``en``, else its
  first non-blank entry.
- Field names are identifiers (they are template variables), unique per
  level, and never ``lang``, ``user`` or ``project`` (the built-in variables).
- Models are frozen; sequences are tuples.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from vance_cli.base.errors import InvalidDocumentName
from vance_cli.base.names import check_name
from vance_cli.base.yaml_types import as_text

RawYaml = Any
"""Plain data as ``yamlio`` yields it (dict, list, str, numbers with ``source``, bool, None)."""

FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""A field name: usable as a Jinja2 variable, and as a key in a link's query."""

RESERVED_NAMES = frozenset({"lang", "user", "project"})
"""Template variables vance supplies itself (docs/wizards.md "Templates"): no field shadows them."""


class FieldType(StrEnum):
    """The field types of docs/wizards.md; anything else is ``unknown_field_type`` at load."""

    STRING = "string"
    TEXTAREA = "textarea"
    PASSWORD = "password"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    SELECT = "select"
    MULTI_SELECT = "multi_select"
    REPEAT = "repeat"


TEXT_TYPES = frozenset({FieldType.STRING, FieldType.TEXTAREA, FieldType.PASSWORD})
"""Field types whose value is one string."""

CHOICE_TYPES = frozenset({FieldType.SELECT, FieldType.MULTI_SELECT})
"""Field types that need ``choices``."""


def _scalar_text(value: Any, what: str) -> str:
    if isinstance(value, dict | list) or value is None:
        raise ValueError(f"{what} must be text, found {_kind(value)}")
    return str(as_text(value))


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


class LocalizableText(RootModel[tuple[tuple[str, str], ...]]):
    """Text in several languages: ``(language, text)`` pairs in the order written.

    YAML forms accepted: ``"Council"`` (means ``{en: "Council"}``) or
    ``{de: "Gremium", en: "Council"}``. Language keys are lower-cased.
    """

    model_config = ConfigDict(frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, data: Any) -> Any:
        if isinstance(data, tuple):
            return data
        if isinstance(data, dict):
            return tuple((str(as_text(k)).strip().lower(), _scalar_text(v, f"text for '{k}'"))
                         for k, v in data.items())
        return (("en", _scalar_text(data, "text")),)

    @classmethod
    def of(cls, text: str) -> LocalizableText:
        """Return the LocalizableText ``{en: text}``."""
        return cls((("en", text),))

    def resolve(self, lang: str) -> str:
        """Return the text in ``lang``, else English, else the first non-blank entry.

        Args:
            lang: a language code such as ``de``; a region (``de-CH``, ``de_AT``)
                falls back to its base language.

        Returns:
            The text, or ``""`` when every entry is blank.

        Rule: docs/wizards.md "Texts and language".
        """
        entries = dict(self.root)
        wanted = lang.strip().lower()
        for key in (wanted, re.split(r"[-_]", wanted)[0], "en"):
            text = entries.get(key, "")
            if text.strip():
                return text
        return next((text for _, text in self.root if text.strip()), "")

    def is_blank(self) -> bool:
        """Return True when no entry has visible text."""
        return not any(text.strip() for _, text in self.root)

    def to_json(self) -> dict[str, str]:
        """Return the mapping ``{language: text}``."""
        return dict(self.root)


class Choice(BaseModel):
    """One option of a ``select`` / ``multi_select``: a value and its label.

    A plain scalar in YAML (``- formal``) is a choice whose label is its value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: str
    label: LocalizableText | None = None

    @model_validator(mode="before")
    @classmethod
    def _plain_scalar(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return data
        return {"value": data}

    @field_validator("value", mode="before")
    @classmethod
    def _value_text(cls, value: Any) -> str:
        text = _scalar_text(value, "a choice value").strip()
        if not text:
            raise ValueError("a choice value must not be empty")
        return text

    def label_in(self, lang: str) -> str:
        """Return the label in ``lang`` (docs/wizards.md "Texts and language"), else the value."""
        if self.label is None:
            return self.value
        return self.label.resolve(lang) or self.value


class WizardField(BaseModel):
    """One form field. Type-specific keys are ignored on other types.

    Attributes:
        name: template variable name (identifier).
        type: one of ``FieldType``.
        label: question text; falls back to the name.
        help: one line shown with the question.
        required: a missing value is the error ``required``.
        default_value: ``defaultValue``: used when the value is missing; checked at load.
        rows: ``textarea`` height hint.
        integer_min: ``integerMin``, inclusive.
        integer_max: ``integerMax``, inclusive.
        choices: ``select`` / ``multi_select`` options, values unique.
        min: ``repeat``: fewest entries.
        max: ``repeat``: most entries.
        item: ``repeat``: the fields of one entry.
        show_if: ``showIf``: a sandbox expression over the answers given so far
            (docs/wizards.md "Conditional fields"); None: always asked.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    name: str
    type: FieldType
    label: LocalizableText | None = None
    help: LocalizableText | None = None
    required: bool = False
    default_value: RawYaml = Field(default=None, alias="defaultValue")
    rows: int | None = Field(default=None, ge=1)
    integer_min: int | None = Field(default=None, alias="integerMin")
    integer_max: int | None = Field(default=None, alias="integerMax")
    choices: tuple[Choice, ...] = ()
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=1)
    item: tuple[WizardField, ...] = ()
    show_if: str | None = Field(default=None, alias="showIf")

    @field_validator("show_if", mode="before")
    @classmethod
    def _condition_text(cls, value: Any) -> str | None:
        if value is None:
            return None
        text = _scalar_text(value, "showIf").strip()
        return text or None

    @field_validator("name", mode="before")
    @classmethod
    def _check_name(cls, value: Any) -> str:
        text = _scalar_text(value, "a field name")
        if not FIELD_NAME.fullmatch(text):
            raise ValueError(f"field name '{text}' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)")
        if text in RESERVED_NAMES:
            raise ValueError(f"field name '{text}' clashes with the template variable '{text}'")
        return text

    @field_validator("type", mode="before")
    @classmethod
    def _check_type(cls, value: Any) -> FieldType:
        text = str(as_text(value)) if not isinstance(value, dict | list) else repr(value)
        try:
            return FieldType(text)
        except ValueError:
            known = ", ".join(t.value for t in FieldType)
            raise ValueError(f"unknown_field_type '{text}' (known types: {known})") from None

    @model_validator(mode="after")
    def _check_type_keys(self) -> WizardField:
        if self.type in CHOICE_TYPES:
            if not self.choices:
                raise ValueError(f"a {self.type.value} field needs 'choices'")
            values = [c.value for c in self.choices]
            duplicates = sorted({v for v in values if values.count(v) > 1})
            if duplicates:
                raise ValueError(f"duplicate choice values: {', '.join(duplicates)}")
        if self.type is FieldType.REPEAT:
            if not self.item:
                raise ValueError("a repeat field needs 'item' (the fields of one entry)")
            check_unique_names(self.item)
            if self.min is not None and self.max is not None and self.min > self.max:
                raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        if (self.type is FieldType.INTEGER and self.integer_min is not None
                and self.integer_max is not None and self.integer_min > self.integer_max):
            raise ValueError(
                f"integerMin ({self.integer_min}) is greater than integerMax ({self.integer_max})")
        return self

    def label_in(self, lang: str) -> str:
        """Return the label in ``lang``, else the field name."""
        text = self.label.resolve(lang) if self.label is not None else ""
        return text or self.name

    def help_in(self, lang: str) -> str:
        """Return the help text in ``lang``, or ``""``."""
        return self.help.resolve(lang) if self.help is not None else ""

    def choice_values(self) -> tuple[str, ...]:
        """Return the allowed values of a select / multi_select, in declared order."""
        return tuple(c.value for c in self.choices)


def check_unique_names(fields: tuple[WizardField, ...]) -> None:
    """Raise ValueError when two fields on one level share a name."""
    names = [f.name for f in fields]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate field names: {', '.join(duplicates)}")


class FollowUp(BaseModel):
    """A suggested next wizard, appended to the prompt as a link (docs/wizards.md "Follow-ups").

    Attributes:
        wizard: the target wizard's name (a document name).
        label: link text; a template over the form values; empty → the wizard's name.
        prefill: ``(key, template)`` pairs in declaration order.
        condition: a Jinja2 expression (or ``{{ … }}`` template) over the form
            values; absent → always shown.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    wizard: str
    label: LocalizableText | None = None
    prefill: tuple[tuple[str, str], ...] = ()
    condition: str | None = None

    @field_validator("wizard", mode="before")
    @classmethod
    def _check_wizard(cls, value: Any) -> str:
        text = _scalar_text(value, "a wizard name").strip()
        try:
            return check_name(text)
        except InvalidDocumentName as exc:
            raise ValueError(exc.message) from None

    @field_validator("prefill", mode="before")
    @classmethod
    def _prefill_pairs(cls, value: Any) -> Any:
        if value is None:
            return ()
        if not isinstance(value, dict):
            raise ValueError(f"prefill must be a mapping of field name to value, found "
                             f"{_kind(value)}")
        return tuple((str(as_text(k)), _scalar_text(v, f"prefill '{k}'"))
                     for k, v in value.items())

    @field_validator("condition", mode="before")
    @classmethod
    def _condition_text(cls, value: Any) -> str | None:
        if value is None:
            return None
        text = _scalar_text(value, "a condition").strip()
        return text or None


class Step(BaseModel):
    """One page of a multi-step wizard (docs/wizards.md "Steps").

    Attributes:
        title: the page's heading.
        fields: the names of the top-level fields on this page, in order.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: LocalizableText
    fields: tuple[str, ...]

    @field_validator("fields", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if not isinstance(value, list) or not value:
            raise ValueError("a step needs 'fields': a non-empty list of field names")
        return tuple(_scalar_text(v, "a field name") for v in value)


def check_steps(steps: tuple[Step, ...], fields: tuple[WizardField, ...]) -> None:
    """Raise ValueError unless the steps list every top-level field once, in the fields' order."""
    names = [f.name for f in fields]
    listed: list[str] = []
    for index, step in enumerate(steps):
        for name in step.fields:
            if name not in names:
                raise ValueError(f"steps[{index}].fields: '{name}' is not a field")
            if name in listed:
                raise ValueError(f"steps[{index}].fields: '{name}' is on two steps")
            listed.append(name)
    left = [n for n in names if n not in listed]
    if left:
        raise ValueError(f"steps: field{'s' if len(left) > 1 else ''} {', '.join(left)}"
                         " on no step (every field belongs to one step)")
    if listed != names:
        raise ValueError("steps: the steps list the fields in another order than 'fields'"
                         f" ({', '.join(listed)})")


class Wizard(BaseModel):
    """A wizard document (docs/wizards.md "Format"); the name comes from the file name.

    Attributes:
        title: display title.
        description: one or two sentences for listings.
        icon: free-form icon name, shown as given.
        category: group heading in listings.
        fields: the form, asked in order.
        prompt_template: ``promptTemplate``: Jinja2 text rendered over the values.
        validator_prompt: ``validatorPrompt``: a template over the same variables as
            ``promptTemplate``, run by ``vance wizard check``.
        suggested_follow_ups: ``suggestedFollowUps``.
        available_in: ``availableIn`` globs on the project id (listing only).
        steps: ``steps``: pages of fields; empty: one page.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    name: str | None = None
    title: LocalizableText
    description: LocalizableText | None = None
    icon: str | None = None
    category: LocalizableText | None = None
    fields: tuple[WizardField, ...]
    prompt_template: str = Field(alias="promptTemplate")
    validator_prompt: str | None = Field(default=None, alias="validatorPrompt")
    suggested_follow_ups: tuple[FollowUp, ...] = Field(default=(), alias="suggestedFollowUps")
    available_in: tuple[str, ...] = Field(default=(), alias="availableIn")
    steps: tuple[Step, ...] = ()

    @field_validator("name", "icon", "validator_prompt", mode="before")
    @classmethod
    def _optional_text(cls, value: Any) -> str | None:
        return None if value is None else _scalar_text(value, "this key")

    @field_validator("prompt_template", mode="before")
    @classmethod
    def _template_text(cls, value: Any) -> str:
        text = _scalar_text(value, "promptTemplate")
        if not text.strip():
            raise ValueError("promptTemplate is empty")
        return text

    @field_validator("fields", "suggested_follow_ups", "steps", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return () if value is None else value

    @field_validator("available_in", mode="before")
    @classmethod
    def _patterns(cls, value: Any) -> tuple[str, ...]:
        if value is None:
            return ()
        items = value if isinstance(value, list) else [value]
        patterns = tuple(_scalar_text(v, "an availableIn pattern").strip() for v in items)
        return tuple(p for p in patterns if p)

    @model_validator(mode="after")
    def _check(self) -> Wizard:
        if self.title.is_blank():
            raise ValueError("title is empty")
        check_unique_names(self.fields)
        if self.steps:
            check_steps(self.steps, self.fields)
        return self

    def pages(self) -> tuple[tuple[WizardField, ...], ...]:
        """Return the fields page by page: the steps', or one page of all fields."""
        if not self.steps:
            return (self.fields,)
        by_name = {f.name: f for f in self.fields}
        return tuple(tuple(by_name[n] for n in step.fields) for step in self.steps)

    def steps_in(self, lang: str) -> tuple[tuple[str, tuple[WizardField, ...]], ...]:
        """Return ``(title, fields)`` per step in ``lang``; empty without steps."""
        return tuple((step.title.resolve(lang), page)
                     for step, page in zip(self.steps, self.pages(), strict=False)) \
            if self.steps else ()

    def title_in(self, lang: str) -> str:
        """Return the title in ``lang`` (docs/wizards.md "Texts and language")."""
        return self.title.resolve(lang)

    def description_in(self, lang: str) -> str:
        """Return the description in ``lang``, or ``""``."""
        return self.description.resolve(lang) if self.description is not None else ""

    def category_in(self, lang: str) -> str:
        """Return the category in ``lang``, or ``""`` (uncategorised)."""
        return self.category.resolve(lang) if self.category is not None else ""


WizardField.model_rebuild()
