"""Slartibartfast's prompt: the ``prompts/slartibartfast.md`` template, rendered into messages.

Rules (docs/delegate.md; the selector prompt's rules apply the same way):
- The template is a document found through the prompts cascade (project →
  tenant → bundled), so a tenant can override it; the bundled one is English.
- It is rendered by Jinja2 in vance's one sandbox (``base.sandbox``, with
  its limits; imported lazily). The task is
  untrusted: it is only ever a template *variable* between two marker lines
  carrying a random token, never formatted into template source.
- The template has three parts, split on the template source before
  rendering (so nothing in the task can move a split): the system message,
  then after a line ``<!-- user -->`` the first user message, then after a
  line ``<!-- repair -->`` the message that sends validation errors back.
- Variables: ``engines`` (``{name, purpose, when_to_use, not_for, params}``,
  the engines a recipe may use; ``params`` outlines the engine's params
  schema, ``recipes.params.outline``), ``recipes`` (``{name, engine, title}``, existing
  recipes whose names are taken; at most ``MAX_LISTED`` of them),
  ``total_recipes``, ``task``, ``marker``, ``max_attempts``; the repair part
  also gets ``errors`` (one string each) and ``attempt`` (the number of the
  try that answers it). The system or first user part must use ``task``
  (``check_task_used``): without it the prompt is an error before any LLM call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import DocumentError
from vance_cli.base.records import frozen
from vance_cli.documents.cascade import Kind, read_text
from vance_cli.selector.prompt import (
    MAX_PROMPT_CHARS,
    USER_SPLIT,
    check_task_used,
    new_marker,
    prompt_environment,
    prompt_task,
    render_part,
    split_source,
)

if TYPE_CHECKING:
    from vance_cli.catalog.model import Engine
    from vance_cli.recipes.loader import Recipe
    from vance_cli.workspace import Workspace

PROMPT_NAME = "slartibartfast"
"""Document name of Slartibartfast's prompt in the prompts cascade."""

REPAIR_SPLIT = "<!-- repair -->"
"""A template line of exactly this text starts the repair message."""

MAX_LISTED = 200
"""Most existing recipe names shown (names are short; the clash check covers all of them)."""


def split_repair(source: str) -> tuple[str, str]:
    """Split template source at the ``REPAIR_SPLIT`` line into (before, repair part).

    Raises:
        DocumentError: the template has no repair part.
    """
    lines = source.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == REPAIR_SPLIT:
            return "".join(lines[:i]), "".join(lines[i + 1:])
    raise DocumentError(f"Slartibartfast prompt has no '{REPAIR_SPLIT}' part",
                        path=f"prompts/{PROMPT_NAME}.md")


@frozen
class SlartPrompt:
    """The three template parts and the values every part sees.

    Attributes:
        path: the template file (for error messages).
        system: system part source.
        user: first user message source.
        repair: repair message source.
        context: variables shared by all parts (task, marker, engines, recipes …).
    """

    path: str
    system: str
    user: str
    repair: str
    context: Mapping[str, Any]

    def first_messages(self) -> list[dict[str, str]]:
        """Return the first request: ``[{"role": "system", …}, {"role": "user", …}]``.

        Raises:
            DocumentError: the template fails to render or renders too long.
        """
        messages = []
        if self.system.strip():
            messages.append({"role": "system", "content": self._render(self.system, {})})
        messages.append({"role": "user", "content": self._render(self.user, {})})
        return messages

    def repair_message(self, errors: Sequence[str], attempt: int) -> dict[str, str]:
        """Return the user message that sends ``errors`` back for try number ``attempt``.

        Raises:
            DocumentError: the template fails to render or renders too long.
        """
        return {"role": "user",
                "content": self._render(self.repair, {"errors": list(errors),
                                                      "attempt": attempt})}

    def _render(self, part: str, extra: Mapping[str, Any]) -> str:
        text = render_part(prompt_environment(), part, {**self.context, **extra}, self.path,
                           "Slartibartfast prompt")
        if len(text) > MAX_PROMPT_CHARS:
            raise DocumentError("Slartibartfast prompt renders too long", path=self.path)
        if not text:
            raise DocumentError("Slartibartfast prompt renders an empty message", path=self.path)
        return text


def load_prompt(ws: Workspace, task: str, engines: Sequence[Engine],
                recipes: Sequence[Recipe], max_attempts: int) -> SlartPrompt:
    """Find the template through the cascade and bind the shared variables.

    Args:
        ws: workspace (prompts cascade).
        task: the task text (untrusted; passed as a variable only).
        engines: engines a generated recipe may use (in catalog order).
        recipes: existing recipes whose names are taken.
        max_attempts: the first try plus the repairs allowed.

    Raises:
        DocumentError: no layer has the template, it is unreadable, a part is
            missing, or neither the system nor the user part uses ``task``.
    """
    ref = ws.cascade(Kind.PROMPTS).find(PROMPT_NAME)
    if ref is None:
        raise DocumentError(f"prompt '{PROMPT_NAME}' not found in any layer",
                            path=f"prompts/{PROMPT_NAME}.md")
    source = read_text(ref)
    before, repair = split_repair(source)
    system, user = split_source(before)
    if not user.strip():
        raise DocumentError(f"Slartibartfast prompt has no user part after '{USER_SPLIT}'",
                            path=str(ref.path))
    check_task_used(prompt_environment(), (system, user), str(ref.path), "Slartibartfast prompt")
    from vance_cli.recipes import params  # heavy: pydantic, only when a prompt is built

    shown = list(recipes)[:MAX_LISTED]
    context = {
        "engines": [{**e.to_json(), "params": params.outline(ws.engines.params_model(e.name))}
                    for e in engines],
        "recipes": [{"name": r.name, "engine": r.engine, "title": r.title} for r in shown],
        "total_recipes": len(recipes),
        "task": prompt_task(task),
        "marker": new_marker(task),
        "max_attempts": max_attempts,
    }
    return SlartPrompt(str(ref.path), system, user, repair, context)
