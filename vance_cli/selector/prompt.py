"""The selector prompt: the ``prompts/recipe-selector.md`` template, rendered into chat messages.

Rules (docs/delegate.md step 4):
- The template is a document looked up through the prompts cascade
  (project → tenant → bundled), so a tenant can override it.
- It is rendered by Jinja2 in vance's one sandbox (``base.sandbox``, with its
  load policy and its limits on steps, time and sizes; imported lazily: the
  offline path never loads Jinja2). Variables: ``engines``, ``recipes`` (at
  most 50), ``total_recipes``, ``shortlist`` (the offline ranking's best names),
  ``task`` and ``marker``.
- The system message depends on the inventory only, never on the task, so a
  llama.cpp server reuses its evaluated prefix from one decision to the next
  (on a CPU that is most of a decision's time); everything that depends on the
  task, the shortlist included, is in the user message.
- The task is untrusted: it is passed as a template *variable*, never
  formatted into template source (no ``str.format``, no second rendering),
  so braces or Jinja syntax in it are plain text. The template puts it
  between two marker lines carrying a random token the task cannot know,
  so a fake end marker in the task ends nothing.
- A template that never uses ``{{ task }}`` is an error (``check_task_used``),
  found before any LLM call: the LLM would choose without the task.
- A line ``<!-- user -->`` in the template splits it into the system
  message (before) and the user message (after). The split is made on the
  template source, before rendering, so the task cannot move it.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import DocumentError
from vance_cli.documents.cascade import Kind, read_text
from vance_cli.ranking.lexicon import ANALYSED_CHARS

if TYPE_CHECKING:
    from jinja2 import Environment

    from vance_cli.base.sandbox import GuardedEnvironment
    from vance_cli.catalog.model import Catalog
    from vance_cli.recipes.loader import Recipe
    from vance_cli.workspace import Workspace

PROMPT_NAME = "recipe-selector"
"""Document name of the selector prompt in the prompts cascade."""

SHORT_PROMPT_NAME = "recipe-selector-short"
"""The short selector prompt, asked when the full one exceeds the model's context window."""

CONTEXT_EXCEEDED = re.compile(r"context (?:window|length)|n_ctx|maximum context|too many tokens"
                              r"|exceeds? (?:the )?(?:model'?s? )?context", re.IGNORECASE)
"""How servers say a prompt does not fit (llama.cpp: "Requested tokens (3300) exceed context
window of 2048"; OpenAI: "maximum context length is …")."""


def context_exceeded(message: str) -> bool:
    """True when an LLM error message says the prompt does not fit the context window."""
    return bool(CONTEXT_EXCEEDED.search(message))

USER_SPLIT = "<!-- user -->"
"""A template line of exactly this text splits the system message from the user message."""

TASK_VARIABLE = "task"
"""The template variable that holds the task; a prompt template must use it."""

MAX_PROMPT_CHARS = 400_000
"""Longest rendered prompt, in characters: a runaway template is an error, not a huge request."""

PROMPT_TASK_CHARS = ANALYSED_CHARS
"""Characters of a task the LLM is shown (as the lexical analysis reads them): a longer
task is cut there with a note, so any task fits the prompt; the process gets it whole."""


def prompt_task(task: str) -> str:
    """Return the task as a prompt shows it: whole, or its first ``PROMPT_TASK_CHARS`` and a note.

    Rule: docs/delegate.md "Limits" (the selector sees a marked cut).
    """
    if len(task) <= PROMPT_TASK_CHARS:
        return task
    rest = len(task) - PROMPT_TASK_CHARS
    return (f"{task[:PROMPT_TASK_CHARS]}\n[… cut here: {rest:,} more characters of the task are "
            "not shown; the process gets the whole task]")


def reply_schema(names: Sequence[str]) -> dict[str, Any]:
    """Return the JSON schema of the reply, for constrained output.

    The answer is one of two shapes: ``MATCH`` with ``recipe`` one of the
    inventory's names, or ``NONE`` with ``recipe`` null, so a server with
    constrained decoding can neither spell an unknown name nor pair MATCH with
    no recipe (SmolLM2-135M did, under a schema that allowed it). The two
    shapes sit under one key, ``answer``, since strict structured outputs
    want an object at the root; the parser finds the answer object wherever
    it stands (docs/delegate.md "Reading the reply").

    Args:
        names: the recipe names shown in the prompt.
    """
    def shape(decision: str, recipe: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object",
                "properties": {"decision": {"type": "string", "enum": [decision]},
                               "recipe": recipe, "rationale": {"type": "string"}},
                "required": ["decision", "recipe", "rationale"],
                "additionalProperties": False}

    return {
        "type": "object",
        "properties": {"answer": {"anyOf": [
            shape("MATCH", {"type": "string", "enum": list(names)}),
            shape("NONE", {"type": "null"})]}},
        "required": ["answer"],
        "additionalProperties": False,
    }


def new_marker(task: str) -> str:
    """Return a random delimiter token (64 bits) that does not occur in ``task``."""
    while True:
        marker = secrets.token_hex(8)
        if marker not in task:
            return marker


def template_source(ws: Workspace, name: str = PROMPT_NAME) -> tuple[str, str]:
    """Return ``(source text, file path)`` of a selector prompt found through the cascade.

    Args:
        ws: the workspace.
        name: ``PROMPT_NAME`` or ``SHORT_PROMPT_NAME``.

    Raises:
        DocumentError: no layer has it, or the file is unreadable or not UTF-8.
    """
    ref = ws.cascade(Kind.PROMPTS).find(name)
    if ref is None:
        raise DocumentError(f"prompt '{name}' not found in any layer",
                            path=f"prompts/{name}.md")
    return read_text(ref), str(ref.path)


def check_task_used(env: Environment, parts: Sequence[str], path: str, what: str) -> None:
    """Fail when none of the template ``parts`` uses the ``task`` variable.

    Checked on the parsed template (``jinja2.meta.find_undeclared_variables``),
    before rendering and before any LLM call: a tenant's override that lost
    ``{{ task }}`` would send a prompt without the task. A part that does not
    parse is left to rendering, which reports the syntax error with its line.

    Args:
        env: the Jinja2 environment that will render the parts.
        parts: template sources whose messages carry the task (not the repair part).
        path: the template file, for the message.
        what: the prompt's name for people, e.g. ``"selector prompt"``.

    Raises:
        DocumentError: no part uses ``task`` (``details["variable"] == "task"``).
    """
    from jinja2 import TemplateSyntaxError, meta

    used: set[str] = set()
    for part in parts:
        try:
            used |= meta.find_undeclared_variables(env.parse(part))
        except TemplateSyntaxError:
            return
    if TASK_VARIABLE not in used:
        raise DocumentError(
            f"{what} template never uses the variable '{TASK_VARIABLE}' "
            f"({{{{ {TASK_VARIABLE} }}}}): the LLM would get a prompt without the task",
            path=path, variable=TASK_VARIABLE)


def split_source(source: str) -> tuple[str, str]:
    """Split template source at the ``USER_SPLIT`` line into (system part, user part).

    Without that line the whole template is the user message (system part "").
    """
    lines = source.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == USER_SPLIT:
            return "".join(lines[:i]), "".join(lines[i + 1:])
    return "", source


def render_messages(source: str, path: str, task: str, recipes: Sequence[Recipe],
                    catalog: Catalog, total_recipes: int,
                    shortlist: Sequence[str] = ()) -> list[dict[str, str]]:
    """Render the selector prompt into chat messages.

    Args:
        source: template source (``template_source``).
        path: its file, for error messages.
        task: the task text (untrusted; passed as a variable only).
        recipes: the inventory entries to show (already capped), in display order.
        catalog: the active engine catalog.
        total_recipes: size of the whole inventory.
        shortlist: the offline ranking's best recipe names, best first (may be empty).

    Returns:
        ``[{"role": "system", …}, {"role": "user", …}]`` (no system message
        when the template has no split line).

    Raises:
        DocumentError: the template does not compile, never uses ``task``,
            fails to render, or renders more than ``MAX_PROMPT_CHARS``.
    """
    env = prompt_environment()
    context = {
        "engines": [e.to_json() for e in catalog.engines.values()],
        "recipes": [{"name": r.name, "engine": r.engine, "title": r.title,
                     "description": r.description} for r in recipes],
        "total_recipes": total_recipes,
        "shortlist": list(shortlist),
        "task": prompt_task(task),
        "marker": new_marker(task),
    }
    messages: list[dict[str, str]] = []
    system, user = split_source(source)
    if not user.strip():
        raise DocumentError(f"selector prompt has no user part after '{USER_SPLIT}'", path=path)
    check_task_used(env, (system, user), path, "selector prompt")
    offsets = (0, system.count("\n") + 1 if system else 0)
    for role, part, offset in zip(("system", "user"), (system, user), offsets, strict=True):
        if not part.strip():
            continue
        text = render_part(env, part, context, path, "selector prompt", offset)
        if len(text) > MAX_PROMPT_CHARS:
            raise DocumentError("selector prompt renders too long", path=path)
        messages.append({"role": role, "content": text})
    return messages


def prompt_environment() -> GuardedEnvironment:
    """Return the sandbox prompt templates render in (undefined renders empty, lstrip_blocks)."""
    from jinja2 import Undefined

    from vance_cli.base import sandbox  # heavy: jinja2

    return sandbox.environment(Undefined, lstrip_blocks=True)


def render_part(env: GuardedEnvironment, part: str, context: dict[str, Any], path: str,
                what: str, offset: int = 0) -> str:
    """Compile and render one part of a prompt template in the sandbox, trimmed.

    Args:
        env: from ``prompt_environment``.
        part: the part's template source.
        context: the variables.
        path: the template file, for messages.
        what: the prompt's name for people, e.g. ``"selector prompt"``.
        offset: lines of the file before this part (for the line in messages).

    Raises:
        DocumentError: the part breaks the sandbox's load policy, does not
            compile, or fails to render (a limit, an error), one line.
    """
    from vance_cli.base import sandbox  # heavy: jinja2

    try:
        template = sandbox.compile_template(part, env)
    except sandbox.TemplateRejected as exc:
        raise DocumentError(f"{what} template: {exc.reason}", path=path,
                            line=exc.line + offset if exc.line else None) from None
    try:
        return sandbox.render_text(template, context).strip()
    except Exception as exc:  # every render failure is this document's error
        line = getattr(exc, "lineno", None)
        raise DocumentError(f"{what} template: {sandbox.describe(exc)}", path=path,
                            line=line + offset if line else None) from None
