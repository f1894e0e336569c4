"""arthur's params schema (docs/engines.md "arthur")."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from vance_cli.recipes.params import Common, ToolParams


class ArthurParams(ToolParams, Common):
    """arthur: the conversational lead (docs/engines.md "arthur")."""

    model_config = ConfigDict(extra="allow")

    maxActions: int = Field(default=3, ge=1, le=10)
    maxContextTokens: int = Field(default=64_000, ge=1_000)
