"""What the rule tests of the offline rounds share: one decision, the bundled inventory."""

from __future__ import annotations

from vance_cli.base.config import load_settings
from vance_cli.recipes.loader import Recipe, load_recipes
from vance_cli.selector.core import select
from vance_cli.selector.decision import Mode
from vance_cli.workspace import Workspace


def decide(task: str) -> tuple[str | None, Mode]:
    """Return the recipe the selector picks for ``task`` (None: NONE) and how it decided."""
    ws = Workspace(load_settings())
    decision = select(ws, task)
    return (decision.recipe.name if decision.recipe else None), decision.mode


def inventory() -> list[Recipe]:
    """Return the bundled recipes the selector chooses from."""
    ws = Workspace(load_settings())
    return load_recipes(ws).inventory(ws.catalog().names)
