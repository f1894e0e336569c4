"""The Jinja2 sandbox wizards render in, and its policy (docs/wizards.md "Templates").

Policy, enforced in two places:

- at **load** (``compile_template``): the template parses, and its syntax tree
  holds no ``{% include %}``, ``{% import %}``, ``{% from … import %}`` or
  ``{% extends %}`` (there is no loader either, so they could not work) and no
  literal access to a name starting with ``_`` (``''.__class__``,
  ``x['__mro__']``, ``x|attr('__class__')``), so a wizard that reaches for
  internals never loads;
- at **render** (``WizardEnvironment``): the sandbox refuses private and
  internal attributes reached dynamically — and unlike Jinja2's default, which
  renders them empty, raises, so the attempt is visible; ``range`` and the
  ``*``/``**`` operators are bounded; output stops at ``MAX_OUTPUT_CHARS``.

Every exception raised while rendering becomes one ``RenderError`` (more than
``SecurityError`` can escape a sandbox: ``TypeError``, ``ZeroDivisionError``,
``RecursionError`` …).

Syntax: undefined variables render empty, also ``a.b.c``
(``ChainableUndefined``); no HTML escaping; ``trim_blocks`` so a block tag
eats its newline and a ``{% for %}`` list renders one item a line; Pebble's
``{% elseif %}`` is accepted as ``{% elif %}``.

This module imports jinja2 at the top: it *is* the Jinja layer. Everything
else imports it lazily, inside the functions that compile or render.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any

from jinja2 import ChainableUndefined, Template, TemplateSyntaxError, nodes
from jinja2.exceptions import SecurityError
from jinja2.ext import Extension
from jinja2.lexer import TOKEN_BLOCK_BEGIN, TOKEN_NAME, Token, TokenStream
from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment

from vance_cli.base.errors import RenderError

MAX_OUTPUT_CHARS = 1_000_000
"""Characters a render may produce (docs/wizards.md); more is a RenderError, not a truncation."""

MAX_RANGE = 10_000
"""Items ``range()`` may yield in a template (Jinja2's sandbox allows 100,000); a prompt
never needs more, and nested loops multiply it."""

MAX_EXPONENT = 64
"""Largest exponent ``**`` accepts: ``10 ** 10 ** 10`` would pin the CPU building a number."""

FORBIDDEN_TAGS: Mapping[type[nodes.Node], str] = {
    nodes.Include: "include",
    nodes.Import: "import",
    nodes.FromImport: "from … import",
    nodes.Extends: "extends",
}
"""Tags rejected at load: a wizard is one self-contained template with no file access."""

PRIVATE_PREFIX = "_"
"""Names starting with this are internals (``__class__``, ``_private``); never reachable."""


class ElseIfExtension(Extension):
    """Rewrite ``{% elseif %}`` (Pebble, the seed's syntax) to ``{% elif %}`` in the token stream.

    Working on tokens (not on the text) keeps ``{% raw %}`` blocks and line numbers intact.
    """

    def filter_stream(self, stream: TokenStream) -> Iterable[Token]:
        """Yield the tokens, with a ``name:elseif`` right after a block start renamed."""
        previous: Token | None = None
        for token in stream:
            out = token
            if (token.type == TOKEN_NAME and token.value == "elseif"
                    and previous is not None and previous.type == TOKEN_BLOCK_BEGIN):
                out = Token(token.lineno, TOKEN_NAME, "elif")
            previous = out
            yield out


def bounded_range(*args: int) -> range:
    """``range`` for templates, at most ``MAX_RANGE`` items.

    Raises:
        SecurityError: the range is longer.
    """
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise SecurityError(f"range() of {len(rng)} items exceeds the limit of {MAX_RANGE}")
    return rng


class WizardEnvironment(SandboxedEnvironment):
    """The sandboxed Jinja2 environment of wizards: no loader, no escaping, policy above."""

    intercepted_binops = frozenset({"*", "**"})

    def __init__(self) -> None:
        super().__init__(
            loader=None,
            autoescape=False,
            undefined=ChainableUndefined,
            trim_blocks=True,
            extensions=[ElseIfExtension],
        )
        self.globals["range"] = bounded_range

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        """Refuse a private or internal attribute reached at render time (raise, never blank).

        Raises:
            SecurityError: always.
        """
        raise SecurityError(
            f"access to attribute {attribute!r} of a {type(obj).__name__} is not allowed")

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """Apply ``*`` and ``**`` within bounds (see ``MAX_OUTPUT_CHARS``, ``MAX_EXPONENT``).

        Raises:
            SecurityError: a repeated text or list longer than ``MAX_OUTPUT_CHARS``,
                or an exponent above ``MAX_EXPONENT``.
        """
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if (isinstance(seq, str | list | tuple) and isinstance(times, int)
                        and len(seq) * times > MAX_OUTPUT_CHARS):
                    raise SecurityError("repetition would exceed the output limit")
        if operator == "**" and isinstance(right, int | float) and abs(right) > MAX_EXPONENT:
            raise SecurityError(f"exponent above {MAX_EXPONENT}")
        return super().call_binop(context, operator, left, right)


class TemplateRejected(ValueError):
    """A template that fails to parse or breaks the load policy.

    Attributes:
        reason: one line for a person.
        line: 1-based line in the template, when known.
    """

    def __init__(self, reason: str, line: int | None = None) -> None:
        where = f"line {line}: " if line else ""
        super().__init__(where + reason)
        self.reason = reason
        self.line = line


@cache
def environment() -> WizardEnvironment:
    """Return the shared wizard environment (built once per process)."""
    return WizardEnvironment()


def _check_policy(tree: nodes.Template) -> None:
    for node_type, tag in FORBIDDEN_TAGS.items():
        for node in tree.find_all(node_type):
            raise TemplateRejected(f"{{% {tag} %}} is not allowed in a wizard template",
                                   node.lineno)
    for getattr_node in tree.find_all(nodes.Getattr):
        if getattr_node.attr.startswith(PRIVATE_PREFIX):
            raise TemplateRejected(f"access to '{getattr_node.attr}' is not allowed",
                                   getattr_node.lineno)
    for getitem in tree.find_all(nodes.Getitem):
        key = getitem.arg
        if isinstance(key, nodes.Const) and str(key.value).startswith(PRIVATE_PREFIX):
            raise TemplateRejected(f"access to '{key.value}' is not allowed", getitem.lineno)
    for filt in tree.find_all(nodes.Filter):
        if filt.name == "attr" and any(isinstance(a, nodes.Const)
                                       and str(a.value).startswith(PRIVATE_PREFIX)
                                       for a in filt.args):
            raise TemplateRejected("attr() of a private name is not allowed", filt.lineno)


def compile_template(source: str) -> Template:
    """Parse, check and compile a wizard template.

    Args:
        source: the template text.

    Returns:
        The compiled template.

    Raises:
        TemplateRejected: a syntax error, or a tag or name the policy forbids (with its line).

    Rule: docs/wizards.md "Templates"; fail at load, never at render.
    """
    env = environment()
    try:
        tree = env.parse(source)
    except TemplateSyntaxError as exc:
        raise TemplateRejected(exc.message or "syntax error", exc.lineno) from None
    _check_policy(tree)
    try:
        return env.from_string(tree)
    except TemplateSyntaxError as exc:  # pragma: no cover - compile-time checks after parse
        raise TemplateRejected(exc.message or "syntax error", exc.lineno) from None


def compile_condition(source: str) -> Template:
    """Compile a follow-up condition: a Jinja2 expression, or a ``{{ … }}`` / ``{% … %}`` text.

    Raises:
        TemplateRejected: as ``compile_template``.
    """
    text = source.strip()
    if "{{" in text or "{%" in text:
        return compile_template(text)
    return compile_template("{% if " + text + " %}true{% endif %}")


def _chunks(template: Template, variables: Mapping[str, Any]) -> Iterator[str]:
    size = 0
    for chunk in template.generate(dict(variables)):
        size += len(chunk)
        if size > MAX_OUTPUT_CHARS:
            raise OverflowError(f"output exceeds {MAX_OUTPUT_CHARS:,} characters")
        yield chunk


def render(template: Template, variables: Mapping[str, Any], wizard: str | None = None) -> str:
    """Render a compiled template in the sandbox.

    Args:
        template: from ``compile_template``.
        variables: name → value (form values plus ``lang``, ``user``, ``project``).
        wizard: the wizard's name, for the error message.

    Returns:
        The text, at most ``MAX_OUTPUT_CHARS`` characters.

    Raises:
        RenderError: anything went wrong while rendering (one error, never a traceback).
    """
    try:
        return "".join(_chunks(template, variables))
    except Exception as exc:  # every render failure becomes one RenderError
        name = f"wizard '{wizard}'" if wizard else "template"
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RenderError(f"{name}: rendering failed: {detail}", wizard=wizard) from None


def truthy_text(text: str) -> bool:
    """Return whether a rendered condition counts as true (non-blank, not false/0/no/none)."""
    value = text.strip().lower()
    return value not in ("", "false", "0", "no", "none")
