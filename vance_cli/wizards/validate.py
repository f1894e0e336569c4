"""Form validation: raw answers → typed values, or every error with its 0-based path.

Rules (docs/wizards.md "Validation"):
- All errors are collected, never fail-fast. A path is the field name, with
  ``[i]`` (0-based) for a repeat entry or a multi_select element and ``.`` for
  a field inside an entry: ``members[2].name``, ``tags[0]``.
- Missing = absent, null, or a string blank after trimming. A missing value
  takes the field's ``defaultValue`` when it has one; still missing and
  required → ``required``; still missing and optional → no further checks.
  A required repeat or multi_select given as an empty list is ``required`` too.
- Values from flags, files and links are coerced exactly like typed answers:
  integers from text are an optional sign, ASCII digits and surrounding
  spaces, within 32 bits (not ``1_000``, ``1e3``, ``42.0``, nor a boolean);
  booleans from text are ``true/false/1/0/yes/no`` in any case; a
  multi_select given as text is a comma-separated list.
- ``string`` and ``select`` values are trimmed; ``textarea`` loses CRLF and
  trailing white space; ``password`` is kept byte for byte.
- Keys that are not fields are ignored here (callers may warn).
- A field whose ``showIf`` is false over the values before it is hidden: not
  validated (not even when required), and left out of the values unless it
  has a default (docs/wizards.md "Conditional fields").

The error codes are those of the original system (``ErrorCode``), so
existing clients understand them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from vance_cli.base.errors import FormInvalid
from vance_cli.base.records import frozen
from vance_cli.base.yaml_types import YamlFloat, YamlInt
from vance_cli.wizards.conditions import is_shown
from vance_cli.wizards.model import TEXT_TYPES, FieldType, WizardField

INT32_MIN = -(2**31)
"""Smallest integer a field accepts (the original system's 32-bit ``int``)."""
INT32_MAX = 2**31 - 1
"""Largest integer a field accepts."""

_INTEGER_TEXT = re.compile(r"^\s*[+-]?[0-9]+\s*$")
_BOOLEAN_TEXT = {"true": True, "1": True, "yes": True,
                 "false": False, "0": False, "no": False}


class ErrorCode(StrEnum):
    """Validation error codes (docs/wizards.md), stable for clients."""

    REQUIRED = "required"
    EXPECTED_STRING = "expected_string"
    EXPECTED_INTEGER = "expected_integer"
    BELOW_MIN = "below_min"
    ABOVE_MAX = "above_max"
    EXPECTED_BOOLEAN = "expected_boolean"
    INVALID_CHOICE = "invalid_choice"
    EXPECTED_STRING_LIST = "expected_string_list"
    EXPECTED_ARRAY = "expected_array"
    TOO_FEW_ENTRIES = "too_few_entries"
    TOO_MANY_ENTRIES = "too_many_entries"
    EXPECTED_OBJECT = "expected_object"
    UNKNOWN_FIELD_TYPE = "unknown_field_type"


MESSAGES: Mapping[str, Mapping[ErrorCode, str]] = {
    "en": {
        ErrorCode.REQUIRED: "a value is required",
        ErrorCode.EXPECTED_STRING: "expected text",
        ErrorCode.EXPECTED_INTEGER: "expected a whole number",
        ErrorCode.BELOW_MIN: "must be at least {min}",
        ErrorCode.ABOVE_MAX: "must be at most {max}",
        ErrorCode.EXPECTED_BOOLEAN: "expected yes or no",
        ErrorCode.INVALID_CHOICE: "not one of: {choices}",
        ErrorCode.EXPECTED_STRING_LIST: "expected a list of texts",
        ErrorCode.EXPECTED_ARRAY: "expected a list of entries",
        ErrorCode.TOO_FEW_ENTRIES: "needs at least {min} entries",
        ErrorCode.TOO_MANY_ENTRIES: "allows at most {max} entries",
        ErrorCode.EXPECTED_OBJECT: "expected an entry with fields",
        ErrorCode.UNKNOWN_FIELD_TYPE: "unknown field type",
    },
    "de": {
        ErrorCode.REQUIRED: "ein Wert ist erforderlich",
        ErrorCode.EXPECTED_STRING: "Text erwartet",
        ErrorCode.EXPECTED_INTEGER: "ganze Zahl erwartet",
        ErrorCode.BELOW_MIN: "muss mindestens {min} sein",
        ErrorCode.ABOVE_MAX: "darf höchstens {max} sein",
        ErrorCode.EXPECTED_BOOLEAN: "ja oder nein erwartet",
        ErrorCode.INVALID_CHOICE: "keine der Möglichkeiten: {choices}",
        ErrorCode.EXPECTED_STRING_LIST: "Liste von Texten erwartet",
        ErrorCode.EXPECTED_ARRAY: "Liste von Einträgen erwartet",
        ErrorCode.TOO_FEW_ENTRIES: "braucht mindestens {min} Einträge",
        ErrorCode.TOO_MANY_ENTRIES: "erlaubt höchstens {max} Einträge",
        ErrorCode.EXPECTED_OBJECT: "Eintrag mit Feldern erwartet",
        ErrorCode.UNKNOWN_FIELD_TYPE: "unbekannter Feldtyp",
    },
}
"""Human text per error code, for inline display (German for ``de``, else English)."""


@frozen
class FieldError:
    """One validation error.

    Attributes:
        field: 0-based path, e.g. ``members[2].name``.
        error: the code.
    """

    field: str
    error: ErrorCode

    def to_json(self) -> dict[str, str]:
        """Return ``{"field": path, "error": code}``."""
        return {"field": self.field, "error": self.error.value}


@frozen
class FormResult:
    """The outcome of validating a form.

    Attributes:
        values: field name → typed value (see ``validate_form``).
        errors: every error found, in field order.
    """

    values: Mapping[str, Any]
    errors: tuple[FieldError, ...] = ()

    @property
    def ok(self) -> bool:
        """True when there are no errors."""
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        """Return ``{"errors": [...]}`` (docs/wizards.md)."""
        return {"errors": [e.to_json() for e in self.errors]}


def message_for(field: WizardField, code: ErrorCode, lang: str) -> str:
    """Return the human text of ``code`` for ``field`` in ``lang`` (German or English).

    Args:
        field: the field the error is about (its bounds and choices fill the text).
        code: the error code.
        lang: session language; ``de`` gives German, anything else English.
    """
    table = MESSAGES["de" if lang.lower().startswith("de") else "en"]
    low = field.integer_min if field.type is FieldType.INTEGER else field.min
    high = field.integer_max if field.type is FieldType.INTEGER else field.max
    return table[code].format(min=low, max=high, choices=", ".join(field.choice_values()))


def is_missing(raw: Any) -> bool:
    """Return True for absent-like values: None, or a string blank after trimming."""
    return raw is None or (isinstance(raw, str) and not raw.strip())


def parse_integer(raw: Any) -> int | None:
    """Return the integer ``raw`` spells, or None.

    Accepts an ``int`` (not ``bool``) or text of an optional sign, ASCII digits
    and surrounding spaces; a YAML number is judged by the text it was written
    as (so ``0x10`` and ``1e3`` are not integers). The result must fit in 32 bits.

    Rule: docs/wizards.md "Validation".
    """
    if isinstance(raw, bool) or isinstance(raw, float):
        return None
    if isinstance(raw, YamlInt):
        raw = raw.source
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, str) and _INTEGER_TEXT.fullmatch(raw):
        value = int(raw.strip())
    else:
        return None
    return value if INT32_MIN <= value <= INT32_MAX else None


def parse_boolean(raw: Any) -> bool | None:
    """Return the boolean ``raw`` spells (``true/false/1/0/yes/no``, any case), or None.

    Rule: docs/wizards.md "Validation".
    """
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, YamlInt):
        raw = raw.source
    if isinstance(raw, int):
        raw = str(raw)
    if isinstance(raw, str):
        return _BOOLEAN_TEXT.get(raw.strip().lower())
    return None


def _text(raw: Any) -> str | None:
    """Return ``raw`` as text when it is a string or a number, else None."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, YamlInt | YamlFloat):
        return raw.source
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return str(raw)
    return None


def _coerce_text(field: WizardField, raw: Any) -> tuple[Any, ErrorCode | None]:
    text = _text(raw)
    if text is None:
        return None, ErrorCode.EXPECTED_STRING
    if field.type is FieldType.STRING:
        return text.strip(), None
    if field.type is FieldType.TEXTAREA:
        return text.replace("\r\n", "\n").replace("\r", "\n").rstrip().lstrip("\n"), None
    return text, None


def _coerce_integer(field: WizardField, raw: Any) -> tuple[Any, ErrorCode | None]:
    value = parse_integer(raw)
    if value is None:
        return None, ErrorCode.EXPECTED_INTEGER
    if field.integer_min is not None and value < field.integer_min:
        return value, ErrorCode.BELOW_MIN
    if field.integer_max is not None and value > field.integer_max:
        return value, ErrorCode.ABOVE_MAX
    return value, None


def _coerce_select(field: WizardField, raw: Any) -> tuple[Any, ErrorCode | None]:
    text = _text(raw)
    if text is None:
        return None, ErrorCode.EXPECTED_STRING
    text = text.strip()
    if text not in field.choice_values():
        return text, ErrorCode.INVALID_CHOICE
    return text, None


def check_scalar(field: WizardField, raw: Any) -> tuple[Any, ErrorCode | None]:
    """Coerce one present value of a non-list field and check it.

    Args:
        field: a field of type string, textarea, password, integer, boolean or select.
        raw: the value as given (typed text, flag text, JSON or YAML data).

    Returns:
        ``(typed value, None)``, or ``(best-effort value, error code)``.
    """
    if field.type in TEXT_TYPES:
        return _coerce_text(field, raw)
    if field.type is FieldType.INTEGER:
        return _coerce_integer(field, raw)
    if field.type is FieldType.BOOLEAN:
        value = parse_boolean(raw)
        return (value, None) if value is not None else (None, ErrorCode.EXPECTED_BOOLEAN)
    if field.type is FieldType.SELECT:
        return _coerce_select(field, raw)
    return None, ErrorCode.UNKNOWN_FIELD_TYPE


def _multi_select(field: WizardField, raw: Any, path: str) -> tuple[list[str], list[FieldError]]:
    if isinstance(raw, str):
        raw = [part for part in raw.split(",") if part.strip()]
    if not isinstance(raw, list):
        return [], [FieldError(path, ErrorCode.EXPECTED_STRING_LIST)]
    values: list[str] = []
    errors: list[FieldError] = []
    allowed = field.choice_values()
    for index, element in enumerate(raw):
        text = _text(element)
        if text is None:
            errors.append(FieldError(path, ErrorCode.EXPECTED_STRING_LIST))
            continue
        text = text.strip()
        if text not in allowed:
            errors.append(FieldError(f"{path}[{index}]", ErrorCode.INVALID_CHOICE))
        elif text not in values:
            values.append(text)
    if not values and field.required and not errors:
        errors.append(FieldError(path, ErrorCode.REQUIRED))
    return values, errors


def _repeat(field: WizardField, raw: Any, path: str) -> tuple[list[Any], list[FieldError]]:
    if not isinstance(raw, list):
        return [], [FieldError(path, ErrorCode.EXPECTED_ARRAY)]
    errors: list[FieldError] = []
    if not raw and field.required:
        errors.append(FieldError(path, ErrorCode.REQUIRED))
    elif field.min is not None and len(raw) < field.min:
        errors.append(FieldError(path, ErrorCode.TOO_FEW_ENTRIES))
    if field.max is not None and len(raw) > field.max:
        errors.append(FieldError(path, ErrorCode.TOO_MANY_ENTRIES))
    entries: list[Any] = []
    for index, entry in enumerate(raw):
        where = f"{path}[{index}]"
        if not isinstance(entry, Mapping):
            errors.append(FieldError(where, ErrorCode.EXPECTED_OBJECT))
            continue
        result = validate_form(field.item, entry, prefix=where + ".")
        entries.append(dict(result.values))
        errors.extend(result.errors)
    return entries, errors


def empty_value(field: WizardField) -> Any:
    """Return the value a missing optional field gets (``None`` means: leave it undefined).

    Text and select fields get ``""``, booleans ``False``, lists ``[]``; a
    missing integer stays undefined, so it renders empty and tests false.
    """
    if field.type in TEXT_TYPES or field.type is FieldType.SELECT:
        return ""
    if field.type is FieldType.BOOLEAN:
        return False
    if field.type in (FieldType.MULTI_SELECT, FieldType.REPEAT):
        return []
    return None


def check_field(field: WizardField, raw: Any, path: str | None = None
                ) -> tuple[Any, list[FieldError]]:
    """Coerce and validate one field's raw value (defaults applied, lists recursed).

    Args:
        field: the field.
        raw: its raw value; None when absent.
        path: the error path; the field's name when None.

    Returns:
        ``(typed value, errors)``. A missing optional value gives ``empty_value(field)``.

    Rule: docs/wizards.md "Validation".
    """
    where = field.name if path is None else path
    if is_missing(raw) and not is_missing(field.default_value):
        raw = field.default_value
    if is_missing(raw):
        if field.required:
            return empty_value(field), [FieldError(where, ErrorCode.REQUIRED)]
        return empty_value(field), []
    if field.type is FieldType.MULTI_SELECT:
        return _multi_select(field, raw, where)
    if field.type is FieldType.REPEAT:
        return _repeat(field, raw, where)
    value, code = check_scalar(field, raw)
    return value, ([] if code is None else [FieldError(where, code)])


def validate_form(fields: Sequence[WizardField], raw: Mapping[str, Any],
                  prefix: str = "") -> FormResult:
    """Validate every field of a form, collecting all errors.

    Args:
        fields: the form's fields, in order.
        raw: field name → raw value; keys that are not fields are ignored.
        prefix: path prefix for nested entries, e.g. ``"members[2]."``.

    Returns:
        A FormResult: ``values`` holds every field (missing optional integers
        are left out, so templates see them undefined), ``errors`` every problem.

    Rule: docs/wizards.md "Validation".
    """
    values: dict[str, Any] = {}
    errors: list[FieldError] = []
    for field in fields:
        if not is_shown(field, values):  # hidden: not validated; only a default is kept
            if not is_missing(field.default_value):
                value, _ = check_field(field, None, prefix + field.name)
                if value is not None:
                    values[field.name] = value
            continue
        value, problems = check_field(field, raw.get(field.name), prefix + field.name)
        if value is not None:
            values[field.name] = value
        errors.extend(problems)
    return FormResult(values, tuple(errors))


def require_valid(fields: Sequence[WizardField], raw: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a form and return its typed values.

    Raises:
        FormInvalid: any field failed; carries every error (``{"errors": [...]}``).
    """
    result = validate_form(fields, raw)
    if not result.ok:
        raise FormInvalid([e.to_json() for e in result.errors])
    return dict(result.values)


def missing_required(fields: Sequence[WizardField], raw: Mapping[str, Any]) -> list[str]:
    """Return the top-level required, shown fields that have no value and no default, in order."""
    values = validate_form(fields, raw).values
    return [f.name for i, f in enumerate(fields)
            if f.required and is_shown(f, {g.name: values[g.name] for g in fields[:i]
                                           if g.name in values}) and is_missing(f.default_value)
            and (is_missing(raw.get(f.name)) or raw.get(f.name) == [])]


__all__ = ["ErrorCode", "FieldError", "FormResult", "check_field",
           "check_scalar", "empty_value", "is_missing", "message_for", "missing_required",
           "parse_boolean", "parse_integer", "require_valid", "validate_form"]
