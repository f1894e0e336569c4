"""What ``vance wizard list`` shows: availableIn filtering, grouping and order.

Rules (docs/wizards.md "availableIn" and "Texts and language"):
- ``availableIn`` holds globs on the project id: ``*`` matches any run of
  characters without ``/``, every other character matches itself, the whole
  id must match. ``!`` before a pattern excludes. A wizard is visible when a
  positive pattern matches and no exclude does; only excludes → ``*`` is
  implied; no patterns → visible everywhere. Without a project the id is
  ``_tenant``. Only listing applies it (``show``, ``render``, ``open`` do not).
- Entries are grouped by category (categories alphabetical, case-insensitive;
  uncategorised last), alphabetical by title within a group, titles and
  descriptions in the session language.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from vance_cli.base.records import frozen
from vance_cli.base.yaml_types import as_text
from vance_cli.wizards.loader import LoadedWizard
from vance_cli.wizards.model import CHOICE_TYPES, TEXT_TYPES, FieldType, WizardField

EXCLUDE = "!"
"""Prefix of an exclude pattern."""


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    parts = (re.escape(piece) for piece in pattern.split("*"))
    return re.compile("[^/]*".join(parts))


def glob_matches(pattern: str, project_id: str) -> bool:
    """Return whether ``pattern`` (``*`` = any run without ``/``) matches the whole id."""
    return _glob(pattern).fullmatch(project_id) is not None


def is_available(patterns: Sequence[str], project_id: str) -> bool:
    """Apply ``availableIn`` to a project id.

    Args:
        patterns: the wizard's patterns, e.g. ``["_user_*", "_tenant"]`` or ``["!demo-*"]``.
        project_id: the current project id; ``_tenant`` when there is no project.

    Returns:
        True when the wizard is listed in that project.

    Rule: docs/wizards.md "availableIn".
    """
    if not patterns:
        return True
    positive = [p for p in patterns if not p.startswith(EXCLUDE)]
    negative = [p[1:].strip() for p in patterns if p.startswith(EXCLUDE)]
    if not positive:
        positive = ["*"]
    if any(glob_matches(p, project_id) for p in negative):
        return False
    return any(glob_matches(p, project_id) for p in positive)


@frozen
class WizardGroup:
    """One category of the listing.

    Attributes:
        category: the category in the session language (``""``: uncategorised).
        wizards: alphabetical by title.
    """

    category: str
    wizards: tuple[LoadedWizard, ...]


def _title_key(wizard: LoadedWizard, lang: str) -> tuple[str, str]:
    return wizard.spec.title_in(lang).casefold(), wizard.name


def group_wizards(wizards: Sequence[LoadedWizard], project_id: str, lang: str,
                  category: str | None = None) -> list[WizardGroup]:
    """Return the visible wizards, grouped by category and sorted by title.

    Args:
        wizards: loaded wizards (broken ones are not in here).
        project_id: compared against ``availableIn``.
        lang: session language for titles and categories.
        category: keep only this category (case-insensitive; any of its languages).

    Rule: docs/wizards.md "availableIn".
    """
    groups: dict[str, list[LoadedWizard]] = {}
    for wizard in wizards:
        if not is_available(wizard.spec.available_in, project_id):
            continue
        if category is not None and not _in_category(wizard, category):
            continue
        groups.setdefault(wizard.spec.category_in(lang), []).append(wizard)
    order = sorted(groups, key=lambda c: (c == "", c.casefold()))
    return [WizardGroup(c, tuple(sorted(groups[c], key=lambda w: _title_key(w, lang))))
            for c in order]


def _in_category(wizard: LoadedWizard, wanted: str) -> bool:
    spec = wizard.spec.category
    names = [text for _, text in spec.root] if spec is not None else [""]
    return wanted.strip().casefold() in {n.strip().casefold() for n in names}


def listing_json(groups: Sequence[WizardGroup], lang: str) -> list[dict[str, Any]]:
    """Return ``vance wizard list --json``: a flat list of summaries in display order."""
    return [w.summary(lang) for g in groups for w in g.wizards]


def field_json(field: WizardField, lang: str) -> dict[str, Any]:
    """Return one field as ``vance wizard show --json`` prints it (type-specific keys only)."""
    data: dict[str, Any] = {
        "name": field.name, "type": field.type.value, "label": field.label_in(lang),
        "help": field.help_in(lang), "required": field.required,
        "defaultValue": _shown_default(field),
    }
    if field.type is FieldType.TEXTAREA:
        data["rows"] = field.rows
    elif field.type is FieldType.INTEGER:
        data["integerMin"] = field.integer_min
        data["integerMax"] = field.integer_max
    elif field.type in CHOICE_TYPES:
        data["choices"] = [{"value": c.value, "label": c.label_in(lang)} for c in field.choices]
    elif field.type is FieldType.REPEAT:
        data["min"] = field.min
        data["max"] = field.max
        data["item"] = [field_json(f, lang) for f in field.item]
    if field.show_if is not None:
        data["showIf"] = field.show_if
    return data


def _shown_default(field: WizardField) -> Any:
    value = field.default_value
    if value is None:
        return None
    if field.type is FieldType.PASSWORD:
        return "****"
    return as_text(value) if field.type in TEXT_TYPES or field.type is FieldType.SELECT \
        else value


def wizard_details(wizard: LoadedWizard, lang: str) -> dict[str, Any]:
    """Return ``vance wizard show --json``: the listing entry, availableIn, fields, follow-ups.

    Templates (``promptTemplate``, ``validatorPrompt``, follow-up labels and
    prefills) are never part of it.
    """
    return {
        **wizard.summary(lang),
        "availableIn": list(wizard.spec.available_in),
        "fields": [field_json(f, lang) for f in wizard.spec.fields],
        "followUps": [{"wizard": f.wizard} for f in wizard.spec.suggested_follow_ups],
        "steps": [{"title": title, "fields": [f.name for f in fields]}
                  for title, fields in wizard.spec.steps_in(lang)],
        "checks": wizard.spec.validator_prompt is not None,
    }


def _details(field: WizardField, lang: str) -> str:
    if field.type in CHOICE_TYPES:
        return ", ".join(f"{c.value}" + (f" ({c.label_in(lang)})" if c.label_in(lang) != c.value
                                         else "") for c in field.choices)
    if field.type is FieldType.INTEGER and (field.integer_min, field.integer_max) != (None, None):
        low = "" if field.integer_min is None else str(field.integer_min)
        high = "" if field.integer_max is None else str(field.integer_max)
        return f"{low}…{high}"
    if field.type is FieldType.REPEAT:
        fewest = field.min or 0
        return f"{fewest}…{field.max} entries" if field.max else f"at least {fewest} entries"
    return ""


def field_rows(wizard: LoadedWizard, lang: str) -> list[tuple[Any, ...]]:
    """Return ``(path, type, label, required, default, details)`` rows, repeat items indented.

    ``required`` is a boolean and ``default`` the typed default (None when
    there is none): the printer shows values for people.
    """
    rows: list[tuple[Any, ...]] = []

    def walk(fields: Sequence[WizardField], prefix: str) -> None:
        for field in fields:
            rows.append((prefix + field.name, field.type.value, field.label_in(lang),
                         field.required, _shown_default(field), _details(field, lang)))
            if field.type is FieldType.REPEAT:
                walk(field.item, f"{prefix}{field.name}[].")

    walk(wizard.spec.fields, "")
    return rows
