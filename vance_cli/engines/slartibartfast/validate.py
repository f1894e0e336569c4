"""Check a recipe Slartibartfast wrote, collecting every problem for the repair request.

Rules (docs/delegate.md). A candidate is valid when:
- it is a mapping whose ``name`` is a valid document name of one segment
  (``documents.check_name``, no ``/``), starting with a letter or digit
  (``.`` would make a hidden file, ``_`` is the convention for reserved
  names), at most ``NAME_MAX`` characters, and not the name of an existing
  recipe (compared case-insensitively, so ``Coding`` does not shadow
  ``coding`` in a listing);
- ``engine`` names an engine of the **active** catalog, and not
  ``slartibartfast`` itself (a recipe that only designs recipes would not do
  the work the task asks for);
- ``description`` is a non-empty string;
- the rest has the shape of a recipe: the one recipe schema
  (``recipes.schema``: only known keys, ``title`` a text, ``params`` as the
  engine's params schema says, ``tags`` texts …), so a generated recipe
  loads like any other;
- every recipe its params name (a vogon phase's ``worker``, a zaphod head's
  ``recipe``, marvin's ``availableRecipes``) exists, so it can run.

The shorthand small models write (a vogon phase as a plain string …) is
expanded first (``shorthand``). All problems are collected, not only the
first, so one repair round can fix them all. ``name`` is not a recipe key
(a recipe's name is its file name): it is taken out, and the rest is stored
in a fixed key order.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from vance_cli.base.names import is_valid_name
from vance_cli.base.records import frozen
from vance_cli.engines.registry import EngineRegistry
from vance_cli.engines.slartibartfast.shorthand import expand as expand_shorthand
from vance_cli.recipes.references import EngineRules

SLART_ENGINE = "slartibartfast"
"""The engine that designs recipes; generated recipes must name a working engine instead."""

NAME_MAX = 64
"""Longest generated recipe name, in characters."""

KEY_ORDER = ("title", "engine", "description", "prompt", "params", "tags", "triggers",
             "internal")
"""Order of keys in a stored generated recipe (unknown keys are rejected before)."""

_NAME_TRIM = " \t\r\n\"'`"


@frozen
class Checked:
    """The result of checking one candidate.

    Attributes:
        name: the recipe's own name (one segment), or None when missing/invalid.
        data: the recipe mapping to store (without ``name``, keys in
            ``KEY_ORDER``), or None when there are errors.
        errors: one line per problem, empty when valid.
    """

    name: str | None
    data: dict[str, Any] | None
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when the candidate is valid and can be stored."""
        return not self.errors and self.data is not None and self.name is not None


def check_recipe_name(value: Any, existing: Collection[str]) -> tuple[str | None, list[str]]:
    """Check the ``name`` a candidate gave itself.

    Args:
        value: the raw ``name`` value.
        existing: names of the recipes that exist (case-insensitive clash check).

    Returns:
        ``(clean name or None, errors)``.
    """
    if value is None or (isinstance(value, str) and not value.strip(_NAME_TRIM)):
        return None, ["'name' is required: a new, short recipe name such as 'smart-home-lights'"]
    if not isinstance(value, str):
        return None, ["'name' must be a string such as 'smart-home-lights'"]
    name = value.strip(_NAME_TRIM)
    problem = _name_problem(name, existing)
    return (None, [problem]) if problem else (name, [])


def _name_problem(name: str, existing: Collection[str]) -> str | None:

    if "/" in name or "\\" in name:
        return f"'name' {name!r} must be one name without '/' (no folders)"
    if not is_valid_name(name):
        return f"'name' {name!r} may use only letters, digits, '-', '_' and '.'"
    if not name[0].isalnum():
        return f"'name' {name!r} must start with a letter or a digit"
    if len(name) > NAME_MAX:
        return f"'name' is longer than {NAME_MAX} characters"
    if name.lower() in {n.lower() for n in existing}:
        return f"'name' {name!r} is already an existing recipe; choose a new name"
    return None


def _engine_errors(value: Any, engines: Sequence[str]) -> list[str]:
    usable = [e for e in engines if e != SLART_ENGINE]
    choices = ", ".join(usable)
    if not isinstance(value, str) or not value.strip():
        return [f"'engine' is required: one of {choices}"]
    engine = value.strip()
    if engine == SLART_ENGINE:
        return [f"engine '{SLART_ENGINE}' only designs recipes; choose the engine that does "
                f"the work: one of {choices}"]
    if engine not in engines:
        return [f"engine '{engine}' is not in the engine catalog; use one of: {choices}"]
    return []


def _shape_errors(data: dict[str, Any], rules: EngineRules) -> list[str]:
    """Every problem the recipe schema finds, but those of ``engine`` and ``description``.

    Those two get messages written for the model that repairs the recipe
    (``_engine_errors``, the description check).
    """
    from vance_cli.recipes import schema as recipe_schema  # heavy: pydantic

    own = ("engine:", "description:")
    return [text for text in recipe_schema.problems(data, rules) if not text.startswith(own)]


def _reference_errors(data: dict[str, Any], existing: Collection[str],
                      rules: EngineRules) -> list[str]:
    """A recipe a phase, head or task list names must exist, so the recipe can run."""
    known = set(existing)
    return [f"{where}: '{name}' is not an existing recipe; name one of the existing recipes"
            " (or, for a phase, leave 'worker' out and give it a 'prompt')"
            for where, name in rules.references(str(data["engine"]).strip(),
                                                data.get("params") or {})
            if name not in known]


def check_candidate(data: Any, engines: Sequence[str], existing: Collection[str],
                    rules: EngineRules | None = None) -> Checked:
    """Check a parsed candidate and return what to store, or every problem.

    Args:
        data: the parsed reply (``extract.Extracted.data``).
        engines: engine names of the active catalog.
        existing: recipe names that exist (the new name must differ).
        rules: the engines' params schemas and references (default: this
            installation's engines).

    Returns:
        A Checked; ``ok`` when it may be stored.

    Rule: docs/delegate.md "Slartibartfast fallback" (required fields, engine in
    the catalog, a valid and new document name, the recipe schema).
    """
    if not isinstance(data, dict):
        return Checked(None, None, ("the recipe must be a YAML mapping with the keys name, "
                                    "title, engine, description, tags and params",))
    body = expand_shorthand({str(k): v for k, v in data.items() if str(k) != "name"})
    name, errors = check_recipe_name(data.get("name"), existing)
    errors += _engine_errors(body.get("engine"), engines)
    description = body.get("description")
    if not isinstance(description, str) or not description.strip():
        errors.append("'description' is required: two or three sentences on what the recipe "
                      "delivers and when to use it")
    rules = rules if rules is not None else EngineRegistry()
    errors += _shape_errors(body, rules)
    if not errors:
        errors += _reference_errors(body, existing, rules)
    if errors:
        return Checked(name, None, tuple(errors))
    body["engine"] = str(body["engine"]).strip()
    ordered = {key: body[key] for key in KEY_ORDER if key in body}
    return Checked(name, ordered, ())
