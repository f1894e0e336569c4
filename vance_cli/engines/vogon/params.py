"""vogon's params schema and its strategy documents (docs/engines.md "vogon")."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from vance_cli.recipes.params import Common, Name, lowered, valid_name


class Checkpoint(BaseModel):
    """A phase's checkpoint: the process waits ``BLOCKED`` for the person's answer.

    - ``approval``: yes goes on; no (optionally ``no: why``) runs the phase
      again with the answer as feedback;
    - ``decision``: the answer must be one of ``options``; it is kept as the
      phase's decision for later inputs (``{{ decisions.<phase> }}``);
    - ``feedback``: any text goes on, kept for later inputs (``{{ feedback.<phase> }}``).
    """

    model_config = ConfigDict(extra="forbid")

    type: Annotated[Literal["approval", "decision", "feedback"], BeforeValidator(lowered)]
    message: str = ""
    options: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _options_for_decisions(self) -> Checkpoint:
        if self.type == "decision" and len(self.options) < 2:
            raise ValueError("a decision checkpoint needs at least two options")
        return self


class Scorer(BaseModel):
    """A loop's scorer: an LLM call that rates the phase's output (``{score, summary}``)."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = "Rate how well the text does what the task asks."
    threshold: float = Field(default=0.7, ge=0, le=1)


class Loop(BaseModel):
    """A phase that runs again, with the scorer's summary as feedback, until it scores enough."""

    model_config = ConfigDict(extra="forbid")

    maxIterations: int = Field(default=3, ge=1, le=10)
    scorer: Scorer | None = None


class Phase(BaseModel):
    """One phase of a vogon plan: a worker (a ford child process) and its input."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    worker: str | None = None
    """A recipe name; without one, ``default`` runs the phase with ``prompt``."""
    prompt: str | None = None
    """The worker's instructions when it has no recipe of its own (a template)."""
    input: str = ""
    """The worker's task: a template over ``task``, ``params``, ``phases`` (earlier outputs),
    ``decisions``, ``feedback``; empty: the task and the previous phase's output."""
    checkpoint: Checkpoint | None = None
    loop: Loop | None = None

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return valid_name(value)

    @model_validator(mode="after")
    def _worker_or_prompt(self) -> Phase:
        if not self.worker and not (self.prompt or "").strip():
            raise ValueError(f"phase '{self.name}' needs a worker (a recipe) or a prompt")
        return self


class VogonParams(Common):
    """vogon: fixed phases with checkpoints (docs/engines.md "vogon").

    More keys feed its templates (``{{ params.words }}``).
    """

    model_config = ConfigDict(extra="allow")

    strategy: str | None = None
    """A playbook by name: the document ``strategies/<name>.yaml`` (its ``phases``, ``result``)."""
    phases: list[Phase] = Field(default_factory=list)
    result: str = ""
    """The result: a template over the same names as a phase's input; empty: the last output."""
    maxWorkerSpawns: int = Field(default=50, ge=1, le=500)

    @model_validator(mode="after")
    def _one_plan(self) -> VogonParams:
        if self.strategy and self.phases:
            raise ValueError("give 'strategy' or 'phases', not both")
        names = [p.name for p in self.phases]
        if len(set(names)) != len(names):
            raise ValueError("phase names must be unique")
        return self


class StrategyDocument(BaseModel):
    """A vogon playbook document (``strategies/<name>.yaml``)."""

    model_config = ConfigDict(extra="forbid")

    title: str = ""
    description: str = ""
    phases: list[Phase] = Field(min_length=1)
    result: str = ""
