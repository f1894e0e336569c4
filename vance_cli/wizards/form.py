"""Filling a form: prefill sources, and the UI-free, field-by-field interactive walk.

Rules (docs/wizards.md "Running a wizard", "vance wizard open"):
- Prefills come from a link (``vance wizard open``), then ``--values FILE|-``
  (JSON or YAML, read with the one YAML reader, so CRLF files and a BOM
  change nothing), then ``--set K=V``; later sources win. They go through
  the same coercion and validation as typed answers.
- Keys that are not fields are reported (``Prefill.unknown``) for a warning;
  a link's unknown keys are dropped silently and its repeat fields are not
  prefilled.
- The walk asks each field in order, skipping ones whose prefill is valid; an
  invalid prefill is shown as the field's error and asked again (for a
  repeat: its entries are kept, and only their invalid fields are asked). A
  repeat asks entries while below its minimum (``min``, or 1 when required),
  then "another entry?" until the person says no or ``max`` is reached.
- The walk talks to the person only through an ``Asker`` (``vance_cli.cli.ask``
  is the terminal one). Ctrl-C (KeyboardInterrupt) and Ctrl-D (EOFError)
  become ``Cancelled`` carrying the partial answers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vance_cli.base import yamlio
from vance_cli.base.errors import Cancelled, DocumentError, FormInvalid, InputError
from vance_cli.base.files import atomic_write_text
from vance_cli.base.records import frozen
from vance_cli.base.yaml_types import as_text
from vance_cli.wizards.conditions import is_shown
from vance_cli.wizards.model import FieldType, WizardField
from vance_cli.wizards.validate import (
    ErrorCode,
    check_field,
    is_missing,
    message_for,
    parse_boolean,
    validate_form,
)


@frozen
class Prefill:
    """Values given before asking.

    Attributes:
        values: field name → raw value.
        unknown: keys given that are not fields of the wizard, in order.
    """

    values: Mapping[str, Any]
    unknown: tuple[str, ...] = ()


def read_values(text: str, source: str) -> dict[str, Any]:
    """Parse a values file (JSON or YAML) into ``{field: raw value}``.

    Args:
        text: the file's content.
        source: its name for messages (``"<stdin>"`` for ``-``).

    Raises:
        DocumentError: not valid JSON/YAML (with line and column).
        InputError: the top level is not a mapping.
    """
    data = yamlio.loads(text, source=source)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a mapping of field name to value, "
                         f"found {type(data).__name__}")
    return {str(key): value for key, value in data.items()}


def answers_text(answers: Mapping[str, Any]) -> str:
    """Return a form's raw answers as the JSON of an answers file (docs/wizards.md "Answers files").

    The raw answers, not the typed values: replayed with ``--values`` they go
    through the same coercion, so the render is the same byte for byte. Repeat
    entries are kept as lists of mappings; hidden fields were never answered.
    """
    return json.dumps(dict(answers), ensure_ascii=False, indent=2) + "\n"


def write_answers(path: Path, answers: Mapping[str, Any]) -> None:
    """Write an answers file (UTF-8 JSON, replaced atomically).

    Raises:
        DocumentError: the file cannot be written.
    """
    try:
        atomic_write_text(path, answers_text(answers))
    except OSError as exc:
        raise DocumentError(f"cannot write answers file: {exc.strerror}",
                            path=str(path)) from None


def merge_prefill(fields: Sequence[WizardField], *sources: Mapping[str, Any]) -> Prefill:
    """Merge prefill sources (later wins) and note keys that are not fields."""
    names = {f.name for f in fields}
    merged: dict[str, Any] = {}
    unknown: list[str] = []
    for source in sources:
        for key, value in source.items():
            if key in names:
                merged[key] = value
            elif key not in unknown:
                unknown.append(key)
    return Prefill(merged, tuple(unknown))


def link_prefill(fields: Sequence[WizardField], pairs: Sequence[tuple[str, str]]) -> Prefill:
    """Return a link's prefill: unknown keys and repeat fields dropped (docs/wizards.md)."""
    usable = {f.name for f in fields if f.type is not FieldType.REPEAT}
    return Prefill({key: value for key, value in pairs if key in usable})


def require_complete(fields: Sequence[WizardField], values: Mapping[str, Any],
                     why: str | None = None, how: str | None = None) -> None:
    """Check a form that cannot be asked for; raise naming every missing field.

    Args:
        fields: the form.
        values: the prefill.
        why: why nobody can be asked (e.g. "stdin is not a terminal"), for the message.
        how: how the caller can give values, naming only options that exist
            where the message is shown (e.g. "give them with --set KEY=VALUE").

    Raises:
        FormInvalid: any error; the message names the missing fields first.
    """
    result = validate_form(fields, values)
    if result.ok:
        return
    missing = [e.field for e in result.errors if e.error is ErrorCode.REQUIRED]
    message = None
    if missing:
        message = f"missing values for {', '.join(missing)}"
        hints = "; ".join(part for part in (why, how) if part)
        if hints:
            message += f" ({hints})"
        others = [f"{e.field}: {e.error.value}" for e in result.errors
                  if e.error is not ErrorCode.REQUIRED]
        if others:
            message += "; invalid: " + ", ".join(others)
    raise FormInvalid([e.to_json() for e in result.errors], message=message)


@frozen
class Question:
    """One field to ask.

    Attributes:
        field: the field.
        path: 0-based path, e.g. ``members[1].name``.
        label: question text in the session language.
        help: help text, or ``""``.
        default: shown and accepted on Enter: text, a bool, a list of values, or None.
        error: why a prefilled value was refused, shown with the question, or None.
        lang: session language (for messages).
        choices: ``(value, label)`` pairs of a select / multi_select.
    """

    field: WizardField
    path: str
    label: str
    help: str
    default: Any
    error: str | None
    lang: str
    choices: tuple[tuple[str, str], ...] = ()

    @property
    def type(self) -> FieldType:
        """The field's type."""
        return self.field.type

    def check(self, raw: Any) -> str | None:
        """Return the message of the first error of answer ``raw``, or None when it is valid."""
        _, errors = check_field(self.field, raw, self.path)
        return message_for(self.field, errors[0].error, self.lang) if errors else None


@frozen
class RepeatQuestion:
    """The "another entry?" question of a repeat field.

    Attributes:
        field: the repeat field.
        path: its path.
        label: its label in the session language.
        count: entries so far.
        low: entries that must exist (min, or 1 when required).
        high: entries allowed at most, or None.
        lang: session language.
    """

    field: WizardField
    path: str
    label: str
    count: int
    low: int
    high: int | None
    lang: str


class Asker(Protocol):
    """Asks a person; the terminal implementation is ``vance_cli.cli.ask.TerminalAsker``."""

    def ask(self, question: Question) -> Any:
        """Return the raw answer (text, bool or list of values); must satisfy ``question.check``.

        Raises:
            KeyboardInterrupt: Ctrl-C.
            EOFError: Ctrl-D.
        """

    def another(self, question: RepeatQuestion) -> bool:
        """Return whether to add another entry."""

    def section(self, title: str) -> None:
        """Show a heading (a repeat entry starts)."""


def _default(field: WizardField, given: Any) -> Any:
    value = field.default_value if is_missing(given) else given
    if is_missing(value):
        return None
    if field.type is FieldType.BOOLEAN:
        return parse_boolean(value)

    if field.type is FieldType.MULTI_SELECT:
        return [str(as_text(v)) for v in value] if isinstance(value, list) else [
            p.strip() for p in str(as_text(value)).split(",") if p.strip()]
    if isinstance(value, list | dict):
        return None
    return str(as_text(value))


@frozen
class StepQuestion:
    """The "go back?" question at the end of a step after the first.

    Attributes:
        number: the step just finished, 1-based.
        total: how many steps the wizard has.
        previous: the title of the step before it.
        lang: session language.
    """

    number: int
    total: int
    previous: str
    lang: str


@dataclass
class _Walk:
    asker: Asker
    lang: str
    answers: dict[str, Any] = field(default_factory=dict)
    revisit: bool = False
    """Going back to a step: every field is asked again, its earlier answer the default."""

    def fields(self, fields: Sequence[WizardField], prefill: Mapping[str, Any], prefix: str,
               into: dict[str, Any], earlier: Sequence[WizardField] = ()) -> None:
        before = list(earlier)
        for item in fields:
            shown = is_shown(item, validate_form(before, into).values)
            before.append(item)
            if not shown:  # hidden by its showIf: not asked, and an earlier answer dropped
                into.pop(item.name, None)
                continue
            path = prefix + item.name
            given = prefill.get(item.name)
            error = None
            if not is_missing(given) and not self.revisit:
                _, errors = check_field(item, given, path)
                if not errors:
                    into[item.name] = given
                    continue
                error = f"{path}: {message_for(item, errors[0].error, self.lang)}"
                if item.type is FieldType.REPEAT:
                    own = [e for e in errors if e.field == path]
                    if own:
                        self.asker.section(
                            f"{path}: {message_for(item, own[0].error, self.lang)}")
            if item.type is FieldType.REPEAT:
                into[item.name] = []
                self.repeat(item, path, into[item.name], given if isinstance(given, list) else [])
                continue
            into[item.name] = self.asker.ask(Question(
                item, path, item.label_in(self.lang), item.help_in(self.lang),
                _default(item, given if error or self.revisit else None), error, self.lang,
                tuple((c.value, c.label_in(self.lang)) for c in item.choices)))

    def entry(self, item: WizardField, path: str, entries: list[Any],
              given: Mapping[str, Any]) -> None:
        count = len(entries)
        self.asker.section(f"{item.label_in(self.lang)} {count + 1}"
                           + (f"/{item.max}" if item.max else ""))
        entry: dict[str, Any] = {}
        entries.append(entry)
        self.fields(item.item, given, f"{path}[{count}].", entry)

    def repeat(self, item: WizardField, path: str, entries: list[Any],
               given: Sequence[Any]) -> None:
        low = max(item.min or 0, 1 if item.required else 0)
        high = item.max
        for raw in given[:high]:  # an invalid prefill keeps its entries; bad fields are asked
            self.entry(item, path, entries, raw if isinstance(raw, Mapping) else {})
        while high is None or len(entries) < high:
            if len(entries) >= low and not self.asker.another(RepeatQuestion(
                    item, path, item.label_in(self.lang), len(entries), low, high, self.lang)):
                break
            self.entry(item, path, entries, {})


STEP_HEADER = {"en": "{title} — step {number} of {total}",
               "de": "{title} — Schritt {number} von {total}"}
"""The heading of a page of a multi-step wizard (docs/wizards.md "Steps")."""


def step_header(title: str, number: int, total: int, lang: str) -> str:
    """Return ``"<title> — step 2 of 3"`` in the session language."""
    pattern = STEP_HEADER["de" if lang.lower().startswith("de") else "en"]
    return pattern.format(title=title, number=number, total=total)


def fill_form(fields: Sequence[WizardField], prefill: Mapping[str, Any], asker: Asker,
              lang: str, steps: Sequence[tuple[str, Sequence[WizardField]]] = ()
              ) -> dict[str, Any]:
    """Ask every shown field that has no valid prefill, in order; return all raw answers.

    Args:
        fields: the wizard's fields.
        prefill: field name → raw value given beforehand.
        asker: the person (terminal or a scripted one in tests).
        lang: session language for labels, help and messages.
        steps: ``(title, fields)`` pages (``Wizard.steps``); empty or one: no headers.
            After each step but the first the asker's ``back`` (when it has one)
            may return True to go back one step; its fields are asked again with
            the earlier answers as defaults.

    Returns:
        Field name → raw answer (prefills included; hidden fields left out);
        validate with ``build_prompt``.

    Raises:
        Cancelled: Ctrl-C or Ctrl-D; ``partial`` holds the answers so far.

    Rule: docs/wizards.md "Running a wizard", "Steps", "Conditional fields".
    """
    walk = _Walk(asker, lang)
    try:
        if len(steps) < 2:
            walk.fields(fields, prefill, "", walk.answers)
            return walk.answers
        _pages(walk, steps, prefill)
    except (KeyboardInterrupt, EOFError):
        raise Cancelled(partial=walk.answers) from None
    return walk.answers


def _pages(walk: _Walk, steps: Sequence[tuple[str, Sequence[WizardField]]],
           prefill: Mapping[str, Any]) -> None:
    back = getattr(walk.asker, "back", None)
    index = 0
    visited: set[int] = set()
    while index < len(steps):
        title, page = steps[index]
        walk.asker.section(step_header(title, index + 1, len(steps), walk.lang))
        earlier = [f for _, fields in steps[:index] for f in fields]
        walk.revisit = index in visited
        visited.add(index)
        walk.fields(page, {**prefill, **walk.answers} if walk.revisit else prefill, "",
                    walk.answers, earlier)
        if index > 0 and back is not None and back(StepQuestion(
                index + 1, len(steps), steps[index - 1][0], walk.lang)):
            index -= 1
            continue
        index += 1
