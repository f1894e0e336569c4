"""What the conversational engines share: their prompts, and a process's messages as a chat.

- An engine's base prompt is the document ``prompts/engines/<engine>.md``,
  looked up through the prompts cascade (a tenant or project can override it).
- A recipe's ``prompt`` is a template (the one sandbox, ``base.sandbox``)
  over ``task`` (the process's goal), ``params`` and ``lang``; the engine's
  system prompt is the base prompt, then the rendered recipe prompt.
- Inputs and earlier messages become chat messages: a task or steer is a
  ``user`` message, a reply an ``assistant`` message, an event a ``user``
  message wrapping ``<process-event source="…" type="…">…</process-event>``;
  notes stay out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vance_cli.base.errors import DocumentError, RenderError
from vance_cli.base.sandbox import TemplateRejected, compile_template, render
from vance_cli.documents.cascade import Kind, read_text
from vance_cli.processes.turn import Message, Turn

CHARS_PER_TOKEN = 4
"""Rough characters per token, to keep a conversation under a token cap without a tokenizer."""


def engine_prompt(turn: Turn, engine: str) -> str:
    """Return the base prompt of ``engine`` (``prompts/engines/<engine>.md``).

    Raises:
        DocumentError: no layer has it, or it cannot be read.
    """
    name = f"engines/{engine}"
    ref = turn.ws.cascade(Kind.PROMPTS).find(name)
    if ref is None:
        raise DocumentError(f"prompt '{name}' not found in any layer", path=f"prompts/{name}.md")
    return read_text(ref).strip()


def recipe_prompt(turn: Turn) -> str:
    """Return the process's recipe prompt rendered over ``task``, ``params`` and ``lang``.

    Raises:
        DocumentError: the template does not compile or fails to render.
    """
    source = turn.process.prompt or ""
    if not source.strip():
        return ""
    return fill(source, {"task": turn.process.goal, "params": dict(turn.process.params),
                         "lang": turn.ws.settings.lang}, f"recipe '{turn.process.recipe}' prompt")


def fill(source: str, variables: Mapping[str, Any], where: str) -> str:
    """Render a recipe's template (the one sandbox) and return the text, stripped.

    Args:
        source: the template.
        variables: its variables.
        where: what the template is, for the error (``recipe 'x' prompt``).

    Raises:
        DocumentError: the template does not compile or fails to render (the recipe's fault).
    """
    if "{" not in source:  # no template syntax: the text as it is, nothing to compile
        return source.strip()
    try:
        return render(compile_template(source), variables).strip()
    except TemplateRejected as exc:
        raise DocumentError(f"{where}: {exc}") from None
    except RenderError as exc:  # a limit of the sandbox, or any other render failure
        raise DocumentError(f"{where}: {exc.message}") from None


def system_prompt(turn: Turn, engine: str, *extra: str) -> str:
    """Return the engine's base prompt, the rendered recipe prompt and ``extra``, joined."""
    parts = [engine_prompt(turn, engine), recipe_prompt(turn), *extra]
    return "\n\n".join(p for p in parts if p)


def as_chat(messages: Iterable[Message]) -> list[dict[str, str]]:
    """Return messages as chat messages (notes left out; see the module rules)."""
    out: list[dict[str, str]] = []
    for message in messages:
        if message.role == "assistant":
            out.append({"role": "assistant", "content": message.content})
        elif message.role == "event":
            source = message.meta.get("source") or "?"
            out.append({"role": "user", "content": f'<process-event source="{source}"'
                        f' type="{message.kind}">\n{message.content}\n</process-event>'})
        elif message.role == "user":
            out.append({"role": "user", "content": message.content})
    return out


def within_tokens(chat: list[dict[str, str]], max_tokens: int) -> tuple[list[dict[str, str]], int]:
    """Drop the oldest messages until the chat fits ``max_tokens`` (estimated).

    The newest message always stays.

    Returns:
        ``(the kept messages, how many were dropped)``.
    """
    def size(items: list[dict[str, str]]) -> int:
        return sum(len(m["content"]) for m in items) // CHARS_PER_TOKEN

    kept = list(chat)
    dropped = 0
    while len(kept) > 1 and size(kept) > max_tokens:
        kept.pop(0)
        dropped += 1
    return kept, dropped


def number_param(params: dict[str, Any] | Any, key: str, default: float) -> float:
    """Return ``params[key]`` when it is a number (not a boolean), else ``default``."""
    value = params.get(key) if isinstance(params, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return default
