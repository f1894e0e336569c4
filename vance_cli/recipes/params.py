"""Engine params: one schema per engine, for a recipe's ``params`` and a process's.

A recipe's ``params`` are checked against its engine's schema when the
recipe loads (a recipe whose params break it is left out, with the
reason), again when a process starts (the recipe's params overlaid by the
caller's ``--param``), and when Slartibartfast writes a recipe; engines read
their params through the same schema, with its defaults. Each engine names
its schema in its descriptor (``Engine.params``); an engine without one
takes any params.

Every engine knows ``model`` (the model of its calls), ``budget``
(``llmCalls``, ``tokens``, ``turnSeconds``: docs/processes.md "Budgets") and
``passive`` (a mailbox that never runs). The conversational engines (ford,
arthur) take more keys, for their recipe's prompt template
(``{{ params.targetLanguage }}``), and so does vogon (its phase templates);
zaphod and marvin take only their own. docs/engines.md lists every param.

This module imports pydantic: it loads when a document is parsed or a turn
runs, never on a warm offline path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from vance_cli.base import schema

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A phase or head name: a letter or digit first, then letters, digits, ``_ . -``."""


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def _name(value: str) -> str:
    if not NAME.match(value):
        raise ValueError(f"{value!r} is not a valid name (letters, digits, '_', '.', '-')")
    return value


Name = Annotated[str, BeforeValidator(lambda v: v.strip() if isinstance(v, str) else v)]
"""A phase or head name (checked by the models that use it)."""


class Budget(BaseModel):
    """``params.budget``: what one turn may spend (docs/processes.md "Budgets")."""

    model_config = ConfigDict(extra="forbid")

    llmCalls: int | None = Field(default=None, gt=0)
    tokens: int | None = Field(default=None, gt=0)
    turnSeconds: float | None = Field(default=None, gt=0)


class Common(BaseModel):
    """The params every engine knows."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    budget: Budget | None = None
    passive: bool = False


class ToolParams(BaseModel):
    """The tool loop's params (docs/tools.md#recipes): which tools, how many rounds, approval."""

    allowedTools: list[str] | None = None
    """Tool names the process may call (built-ins, ``srv.tool`` or ``srv.*``); none: no tools."""
    allowedToolsAdd: list[str] | None = None
    allowedToolsRemove: list[str] | None = None
    """Names or fnmatch patterns taken away."""
    maxIterations: int = Field(default=5, ge=1, le=50)
    """Model calls of a turn that may ask for tools."""
    toolApproval: Annotated[Literal["refuse", "checkpoint"] | None, BeforeValidator(_lower)] = None
    """A call that asks, with no one to ask: refused (None, ``refuse``), or parked
    (``checkpoint``: ``BLOCKED``) for approval."""
    toolsAllow: list[str] | None = None
    toolsDeny: list[str] | None = None
    toolsAsk: list[str] | None = None
    """The recipe's gate rules, after the config's (patterns as ``tools.allow``)."""


class FordParams(ToolParams, Common):
    """ford: one concrete job (docs/engines.md "ford"); more keys feed the recipe's prompt."""

    model_config = ConfigDict(extra="allow")

    temperature: float = Field(default=0.7, ge=0, le=2)
    maxTokens: int = Field(default=4096, ge=1, le=200_000)


class ArthurParams(ToolParams, Common):
    """arthur: the conversational lead (docs/engines.md "arthur")."""

    model_config = ConfigDict(extra="allow")

    maxActions: int = Field(default=3, ge=1, le=10)
    maxContextTokens: int = Field(default=64_000, ge=1_000)


class SlartibartfastParams(Common):
    """slartibartfast: its run (set by vance: ``runId``, ``auditFile``, the cutoff)."""

    model_config = ConfigDict(extra="allow")


class Checkpoint(BaseModel):
    """A phase's checkpoint: the process waits ``BLOCKED`` for the person's answer.

    - ``approval``: yes goes on; no (optionally ``no: why``) runs the phase
      again with the answer as feedback;
    - ``decision``: the answer must be one of ``options``; it is kept as the
      phase's decision for later inputs (``{{ decisions.<phase> }}``);
    - ``feedback``: any text goes on, kept for later inputs (``{{ feedback.<phase> }}``).
    """

    model_config = ConfigDict(extra="forbid")

    type: Annotated[Literal["approval", "decision", "feedback"], BeforeValidator(_lower)]
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
        return _name(value)

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


class Head(BaseModel):
    """One head of a zaphod council: a name, a persona, the recipe that answers."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    persona: str = ""
    recipe: str = "default"

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return _name(value)


class ZaphodParams(Common):
    """zaphod: a council or a debate of heads (docs/engines.md "zaphod")."""

    pattern: Annotated[Literal["council", "debate"], BeforeValidator(_lower)] = "council"
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


class MarvinParams(Common):
    """marvin: a task tree (docs/engines.md "marvin")."""

    maxTreeNodes: int = Field(default=30, ge=1, le=200)
    maxTreeDepth: int = Field(default=3, ge=1, le=5)
    maxItems: int = Field(default=20, ge=1, le=100)
    maxLlmCalls: int = Field(default=60, ge=2, le=1000)
    """LLM calls of one turn, marvin's own and its children's together."""
    availableRecipes: list[str] = Field(default_factory=list)
    """Recipes a task may name; empty: any visible recipe but marvin's own engine."""


def problems(model: type[Common] | None, params: Mapping[str, Any]) -> list[str]:
    """Return every problem of ``params`` for an engine's schema (``params.``-prefixed paths).

    Args:
        model: the engine's schema (``Engine.params``); None: any params (no problems).
        params: the params to check.
    """
    if model is None:
        return []
    try:
        model.model_validate(dict(params))
    except ValidationError as exc:
        return [f"params.{text}" if keys else f"params: {text}"
                for keys, text in schema.problems(exc, model)]
    return []


def parse(model: type[Common] | None, params: Mapping[str, Any]) -> Common:
    """Return ``params`` read through the schema ``model`` (None: ``Common``), defaults filled in.

    Raises:
        ValueError: the params break the schema (every problem, ``; ``-joined).
    """
    model = model or Common
    try:
        return model.model_validate(dict(params))
    except ValidationError as exc:
        raise ValueError("; ".join(f"params.{t}" for _, t in schema.problems(exc, model))) \
            from None


def describe(model: type[Common] | None) -> dict[str, Any]:
    """Return the JSON schema of an engine's params (for people and for Slartibartfast)."""
    return (model or Common).model_json_schema()


def effective(model: type[Common] | None, params: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``params`` with the schema's defaults filled in (unset optional keys left out).

    Params that break the schema are returned as they are.
    """
    try:
        parsed = parse(model, params)
    except ValueError:
        return dict(params)
    data: dict[str, Any] = parsed.model_dump(exclude_none=True)
    return data


def outline(model: type[Common] | None) -> str:
    """Return an engine's params as one compact line, for a model that writes a recipe.

    E.g. ``{pattern?: "council" | "debate" = "council", heads?: [{name: string, …}], …}``:
    ``?`` marks an optional key, ``= value`` its default, ``…`` that more keys are allowed.
    """
    schema_doc = (model or Common).model_json_schema()
    return _outline(schema_doc, schema_doc.get("$defs", {}), skip=set(Common.model_fields))


def _outline(node: Mapping[str, Any], defs: Mapping[str, Any], skip: set[str] | None = None,
             depth: int = 0) -> str:
    if "$ref" in node:
        return _outline(defs[str(node["$ref"]).rsplit("/", 1)[-1]], defs, None, depth)
    if "anyOf" in node:
        kinds = [k for k in node["anyOf"] if k.get("type") != "null"]
        return " | ".join(_outline(k, defs, None, depth) for k in kinds) or "null"
    if "enum" in node or "const" in node:
        return " | ".join(f'"{v}"' for v in node.get("enum", [node.get("const")]))
    kind = node.get("type")
    if kind == "array":
        return f"[{_outline(node.get('items', {}), defs, None, depth)}]"
    if kind != "object" or "properties" not in node or depth >= 4:
        return str(kind or "any")
    required = set(node.get("required", ()))
    parts = []
    for key, value in node["properties"].items():
        if skip and key in skip:
            continue
        text = f"{key}{'' if key in required else '?'}: "
        text += _outline(value, defs, None, depth + 1)
        if "default" in value and value["default"] not in (None, [], {}, ""):
            text += f" = {json.dumps(value['default'])}"
        parts.append(text)
    if node.get("additionalProperties") is not False and skip is not None:
        parts.append("…")
    return "{" + ", ".join(parts) + "}"

