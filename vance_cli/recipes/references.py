"""The recipes a recipe's params name: a vogon phase's worker, a zaphod head, marvin's list.

A recipe that names a recipe no layer has could not run; ``load_recipes``
leaves it out with the reason, like any broken document, and
Slartibartfast's validator sends such a recipe back for repair. This reads
params the engine's schema has already accepted (``recipes.params``), as
plain data, so loading recipes never needs the schema library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_HEAD_RECIPE = "default"
"""A zaphod head's recipe when it names none (``recipes.params.Head``)."""


def recipe_references(engine: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Return the recipes ``params`` name, as ``(where, recipe)`` pairs.

    E.g. ``("params.phases[2].worker", "coding")``. Entries of the wrong
    shape are skipped: the engine's schema reports those.
    """
    found: list[tuple[str, str]] = []
    if engine == "vogon":
        for i, phase in enumerate(_entries(params.get("phases"))):
            worker = phase.get("worker")
            if isinstance(worker, str) and worker.strip():
                found.append((f"params.phases[{i}].worker", worker.strip()))
    elif engine == "zaphod":
        for i, head in enumerate(_entries(params.get("heads"))):
            recipe = head.get("recipe")
            name = recipe.strip() if isinstance(recipe, str) and recipe.strip() \
                else DEFAULT_HEAD_RECIPE
            found.append((f"params.heads[{i}].recipe", name))
    elif engine == "marvin":
        listed = params.get("availableRecipes")
        for i, name in enumerate(listed if isinstance(listed, list) else []):
            if isinstance(name, str) and name.strip():
                found.append((f"params.availableRecipes[{i}]", name.strip()))
    return found


def _entries(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def missing_references(engine: str, params: Mapping[str, Any],
                       known: set[str]) -> list[str]:
    """Return one problem per recipe ``params`` name that is not in ``known``."""
    return [f"{where}: recipe '{name}' does not exist"
            for where, name in recipe_references(engine, params) if name not in known]
