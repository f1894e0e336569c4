"""The selector prompt: the ``prompts/recipe-selector.md`` template, rendered into chat messages.

Rules (DESIGN.md §5 step 4):
- The template is a document looked up through the prompts cascade
  (project → tenant → bundled), so a tenant can override it.
- It is rendered by Jinja2 in a sandbox (imported here, lazily: the offline
  path never loads Jinja2). Variables: ``engines``, ``recipes`` (at most 50),
  ``total_recipes``, ``task`` and ``marker``.
- The task is untrusted: it is passed as a template *variable*, never
  formatted into template source (no ``str.format``, no second rendering),
  so braces or Jinja syntax in it are plain text. The template puts it
  between two marker lines carrying a random token the task cannot know,
  so a fake end marker in the task ends nothing.
- A line ``<!-- user -->`` in the template splits it into the system
  message (before) and the user message (after). The split is made on the
  template source, before rendering, so the task cannot move it.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.documents import Kind
from vance_cli.errors import DocumentError

if TYPE_CHECKING:
    from vance_cli.catalog import Catalog
    from vance_cli.recipes import Recipe
    from vance_cli.workspace import Workspace

PROMPT_NAME = "recipe-selector"
"""Document name of the selector prompt in the prompts cascade."""

USER_SPLIT = "<!-- user -->"
"""A template line of exactly this text splits the system message from the user message."""

MAX_PROMPT_CHARS = 400_000
"""Longest rendered prompt, in characters: a runaway template is an error, not a huge request."""


def reply_schema(names: Sequence[str]) -> dict[str, Any]:
    """Return the JSON schema of the reply, used in ``json_schema`` mode.

    ``recipe`` is one of the inventory's names or null, so a server with
    constrained decoding cannot even spell an unknown name.

    Args:
        names: the recipe names shown in the prompt.
    """
    return {
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["MATCH", "NONE"]},
            "recipe": {"anyOf": [{"type": "string", "enum": list(names)}, {"type": "null"}]},
            "rationale": {"type": "string"},
        },
        "required": ["decision", "recipe", "rationale"],
        "additionalProperties": False,
    }


def new_marker(task: str) -> str:
    """Return a random delimiter token (64 bits) that does not occur in ``task``."""
    while True:
        marker = secrets.token_hex(8)
        if marker not in task:
            return marker


def template_source(ws: Workspace) -> tuple[str, str]:
    """Return ``(source text, file path)`` of the selector prompt found through the cascade.

    Raises:
        DocumentError: no layer has it, or the file is unreadable or not UTF-8.
    """
    ref = ws.cascade(Kind.PROMPTS).find(PROMPT_NAME)
    if ref is None:
        raise DocumentError(f"prompt '{PROMPT_NAME}' not found in any layer",
                            path=f"prompts/{PROMPT_NAME}.md")
    try:
        return ref.path.read_bytes().decode("utf-8-sig"), str(ref.path)
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError(f"cannot read the selector prompt: {exc}", path=str(ref.path)) from None


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
                    catalog: Catalog, total_recipes: int) -> list[dict[str, str]]:
    """Render the selector prompt into chat messages.

    Args:
        source: template source (``template_source``).
        path: its file, for error messages.
        task: the task text (untrusted; passed as a variable only).
        recipes: the inventory entries to show (already capped), in display order.
        catalog: the active engine catalog.
        total_recipes: size of the whole inventory.

    Returns:
        ``[{"role": "system", …}, {"role": "user", …}]`` (no system message
        when the template has no split line).

    Raises:
        DocumentError: the template does not compile or fails to render, or
            renders more than ``MAX_PROMPT_CHARS``.
    """
    from jinja2 import TemplateError
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, autoescape=False)
    context = {
        "engines": [e.to_json() for e in catalog.engines.values()],
        "recipes": [{"name": r.name, "engine": r.engine, "title": r.title,
                     "description": r.description} for r in recipes],
        "total_recipes": total_recipes,
        "task": task,
        "marker": new_marker(task),
    }
    messages: list[dict[str, str]] = []
    system, user = split_source(source)
    offsets = (0, system.count("\n") + 1 if system else 0)
    for role, part, offset in zip(("system", "user"), (system, user), offsets, strict=True):
        if not part.strip():
            continue
        try:
            text = env.from_string(part).render(context).strip()
        except TemplateError as exc:
            line = getattr(exc, "lineno", None)
            raise DocumentError(f"selector prompt template: {exc}", path=path,
                                line=line + offset if line else None) from None
        if len(text) > MAX_PROMPT_CHARS:
            raise DocumentError("selector prompt renders too long", path=path)
        messages.append({"role": role, "content": text})
    if not messages or messages[-1]["role"] != "user":
        raise DocumentError(f"selector prompt has no user part after '{USER_SPLIT}'", path=path)
    return messages
