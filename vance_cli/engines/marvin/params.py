"""marvin's params schema (docs/engines.md "marvin")."""

from __future__ import annotations

from pydantic import Field

from vance_cli.recipes.params import Common


class MarvinParams(Common):
    """marvin: a task tree (docs/engines.md "marvin")."""

    maxTreeNodes: int = Field(default=30, ge=1, le=200)
    maxTreeDepth: int = Field(default=3, ge=1, le=5)
    maxItems: int = Field(default=20, ge=1, le=100)
    maxLlmCalls: int = Field(default=60, ge=2, le=1000)
    """LLM calls of one turn, marvin's own and its children's together."""
    availableRecipes: list[str] = Field(default_factory=list)
    """Recipes a task may name; empty: any visible recipe but marvin's own engine."""
