"""ford's params schema (docs/engines.md "ford")."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from vance_cli.recipes.params import Common, ToolParams


class FordParams(ToolParams, Common):
    """ford: one concrete job (docs/engines.md "ford"); more keys feed the recipe's prompt."""

    model_config = ConfigDict(extra="allow")

    temperature: float = Field(default=0.7, ge=0, le=2)
    maxTokens: int = Field(default=4096, ge=1, le=200_000)
