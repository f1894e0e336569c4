"""What the recipe layer asks of an engine: its params schema, the recipes its params name.

The recipe layer sits below the engines, so it asks by name through an
``EngineRules`` (``Workspace.engines`` is one) and never imports an engine.
A recipe that names a recipe no layer has could not run; ``load_recipes``
leaves it out with the reason, like any broken document, and
Slartibartfast's validator sends such a recipe back for repair.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vance_cli.recipes.params import Common


class EngineRules(Protocol):
    """An engine's rules for the recipes that name it, asked by engine name."""

    def params_model(self, name: str) -> type[Common] | None:
        """Return the engine's params schema, or None (any params)."""

    def references(self, name: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Return the recipes ``params`` name, as ``(where, recipe)`` pairs.

        E.g. ``("params.phases[2].worker", "coding")``. Entries of the wrong
        shape are skipped: the engine's schema reports those.
        """


def missing_references(rules: EngineRules, engine: str, params: Mapping[str, Any],
                       known: set[str]) -> list[str]:
    """Return one problem per recipe ``params`` name that is not in ``known``."""
    return [f"{where}: recipe '{name}' does not exist"
            for where, name in rules.references(engine, params) if name not in known]
