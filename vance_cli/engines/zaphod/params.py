"""zaphod's params schema (docs/engines.md "zaphod")."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from vance_cli.recipes.params import Common, Name, lowered, valid_name


class Head(BaseModel):
    """One head of a zaphod council: a name, a persona, the recipe that answers."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    persona: str = ""
    recipe: str = "default"

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return valid_name(value)


class ZaphodParams(Common):
    """zaphod: a council or a debate of heads (docs/engines.md "zaphod")."""

    pattern: Annotated[Literal["council", "debate"], BeforeValidator(lowered)] = "council"
    heads: list[Head] = Field(default_factory=list, max_length=10)
    """Without heads, a first call picks ``personas`` heads that fit the question."""
    personas: int = Field(default=3, ge=2, le=10)
    maxRounds: int = Field(default=3, ge=1, le=10)
    synthesisPrompt: str = ""
    maxParallel: int = Field(default=4, ge=1, le=10)

    @model_validator(mode="after")
    def _unique_heads(self) -> ZaphodParams:
        names = [h.name for h in self.heads]
        if len(set(names)) != len(names):
            raise ValueError("head names must be unique")
        if self.pattern == "debate" and len(self.heads) == 1:
            raise ValueError("a debate needs at least two heads")
        return self
