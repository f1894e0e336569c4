"""The one Jinja2 sandbox every template renders in, and its policy (docs/wizards.md "Templates").

Wizard prompts, follow-up labels and conditions, batch task templates, the
selector's and Slartibartfast's prompt templates: all compile and render
here, so one set of rules holds for every template vance runs
(docs/decisions/0010-one-template-sandbox.md). Enforced in three places:

- at **load** (``compile_template``): the template parses, and its syntax tree
  holds no ``{% include %}``, ``{% import %}``, ``{% from … import %}`` or
  ``{% extends %}`` (there is no loader either, so they could not work) and no
  literal access to a name starting with ``_`` (``''.__class__``,
  ``x['__mro__']``, ``x|attr('__class__')``), so a template that reaches for
  internals never loads;
- in the **compiled code** (``GuardedCodeGenerator``): every ``{% for %}``
  iterates through ``sandbox_guard.guarded_loop`` and every ``~`` joins
  through ``guarded_concat``, so loops and concatenations are counted and
  checked;
- at **render** (``GuardedEnvironment``): the sandbox refuses private and
  internal attributes reached dynamically — and unlike Jinja2's default, which
  renders them empty, raises, so the attempt is visible; lists and dicts
  cannot be changed in place; operators, calls, filters, ``range`` and
  ``lipsum`` are bounded (``sandbox_guard``); a render has a budget of steps
  and time, and output stops at ``MAX_OUTPUT_CHARS``.

Every exception raised while rendering becomes one ``RenderError`` (more than
``SecurityError`` can escape a sandbox: ``TypeError``, ``ZeroDivisionError``,
``RecursionError`` …), or the caller's own error (``render_text``).

Syntax: no HTML escaping; ``trim_blocks`` so a block tag eats its newline
and a ``{% for %}`` list renders one item a line; Pebble's ``{% elseif %}``
is accepted as ``{% elif %}``. Per use: undefined variables render empty,
also ``a.b.c`` (``ChainableUndefined``, the default), or what the caller
chooses; ``lstrip_blocks`` on request (the prompt templates).

This module imports jinja2 at the top: it *is* the Jinja layer. Everything
else imports it lazily, inside the functions that compile or render.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from jinja2 import ChainableUndefined, Template, TemplateSyntaxError, Undefined, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.ext import Extension
from jinja2.lexer import TOKEN_BLOCK_BEGIN, TOKEN_NAME, Token, TokenStream
from jinja2.runtime import Context, LoopContext
from jinja2.sandbox import SandboxedEnvironment, modifies_known_mutable
from jinja2.utils import Namespace

from vance_cli.base import sandbox_guard as guard
from vance_cli.base.errors import RenderError
from vance_cli.base.sandbox_guard import MAX_EXPONENT, MAX_RANGE, MAX_VALUE_CHARS, bounded_range
from vance_cli.base.sandbox_policy import (
    FORBIDDEN_TAGS,
    PRIVATE_PREFIX,
    TemplateRejected,
    check_tree,
)

__all__ = ["FORBIDDEN_TAGS", "MAX_EXPONENT", "MAX_OUTPUT_CHARS", "MAX_RANGE", "PRIVATE_PREFIX",
           "TemplateRejected", "bounded_range"]

MAX_OUTPUT_CHARS = MAX_VALUE_CHARS
"""Characters a render may produce (docs/wizards.md); more is a RenderError, not a truncation."""

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


class GuardedCodeGenerator(CodeGenerator):
    """Jinja2's code generator, with every loop and every ``~`` going through the guards."""

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        """Compile a loop over ``environment.guard_loop(<iterable>)``: one step an item."""
        original = node.iter
        node.iter = nodes.Call(nodes.EnvironmentAttribute("guard_loop"), [original], [],
                               None, None, lineno=original.lineno)
        try:
            super().visit_For(node, frame)
        finally:
            node.iter = original

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        """Compile ``a ~ b`` as ``environment.guard_concat((a, b))`` (never HTML-escaped)."""
        self.write("environment.guard_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class GuardedEnvironment(SandboxedEnvironment):
    """The sandboxed environment of every template: no loader, no escaping, the policy above.

    Args:
        undefined: the class of undefined values.
        lstrip_blocks: strip white space before a block tag on its line.
    """

    code_generator_class = GuardedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, undefined: type[Undefined], lstrip_blocks: bool) -> None:
        super().__init__(
            loader=None,
            autoescape=False,
            undefined=undefined,
            trim_blocks=True,
            lstrip_blocks=lstrip_blocks,
            extensions=[ElseIfExtension],
            finalize=_finalize,
        )
        self.globals["range"] = bounded_range
        self.globals["lipsum"] = guard.bounded_lipsum
        self.filters = {name: guard.guard_filter(name, func)
                        for name, func in self.filters.items()}
        self.guard_loop = guard.guarded_loop
        self.guard_concat = guard.guarded_concat

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        """Refuse internals, and methods that change a list, dict or set in place."""
        return super().is_safe_attribute(obj, attr, value) and not modifies_known_mutable(
            obj, attr) and not (isinstance(obj, Namespace) and attr.startswith("_"))

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        """Refuse a private or internal attribute reached at render time (raise, never blank).

        Raises:
            SecurityError: always.
        """
        raise SecurityError(
            f"access to attribute {attribute!r} of a {type(obj).__name__} is not allowed")

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """Apply ``*``, ``**``, ``+`` and ``%`` within bounds (``sandbox_guard.check_binop``).

        Raises:
            SecurityError: the result would be too large (see ``sandbox_guard``).
        """
        guard.step()
        guard.check_binop(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Context, __obj: Any,
             *args: Any, **kwargs: Any) -> Any:
        """Call a function, macro or method from a template: one step, checked arguments.

        Raises:
            SecurityError: a refused method, a result that would be too large,
                or the render's budget is spent.
        """
        guard.step()
        args = tuple(guard.materialized(a) if isinstance(a, Iterator) else a for a in args)
        guard.check_method(__obj, args, kwargs)
        if isinstance(__obj, LoopContext) and args:  # loop(children) of a recursive loop
            args = (guard.guarded_loop(args[0]), *args[1:])
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(result, str | list | tuple | dict):
            guard.check_value(result, "a call's result")
        return result

    def wrap_str_format(self, value: Any) -> Any:
        """Return ``str.format``/``format_map`` bound to a text, with field widths checked."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        owner, is_map = value.__self__, value.__name__ == "format_map"

        def checked(*args: Any, **kwargs: Any) -> str:
            guard.step()
            if is_map:
                kwargs, args = dict(args[0]) if args else {}, ()
            return str(guard.GuardedFormatter(self).vformat(owner, args, kwargs))

        return checked


def _finalize(value: Any) -> Any:
    """Check a value before ``{{ … }}`` prints it (a list may print far longer than it is)."""
    if not isinstance(value, str):
        guard.check_value(value, "printing a value")
    return value


_ENVIRONMENTS: dict[tuple[type[Undefined], bool], GuardedEnvironment] = {}
"""One environment per set of options, built on first use (compiled templates keep theirs)."""


def environment(undefined: type[Undefined] = ChainableUndefined,
                lstrip_blocks: bool = False) -> GuardedEnvironment:
    """Return the shared environment for these options (built once per process).

    Args:
        undefined: the class of undefined values (``ChainableUndefined``:
            they render empty, also ``a.b.c``).
        lstrip_blocks: strip white space before a block tag on its line.
    """
    key = (undefined, lstrip_blocks)
    env = _ENVIRONMENTS.get(key)
    if env is None:  # two threads may both build one: either is fine
        env = _ENVIRONMENTS.setdefault(key, GuardedEnvironment(undefined, lstrip_blocks))
    return env


def parse_template(source: str, env: GuardedEnvironment | None = None) -> nodes.Template:
    """Parse a template and check the load policy.

    Args:
        source: the template text.
        env: the environment it will render in (default: ``environment()``).

    Returns:
        The syntax tree (``compile_tree`` turns it into a template; no second parse).

    Raises:
        TemplateRejected: a syntax error, or a tag or name the policy forbids (with its line).
    """
    env = env or environment()
    try:
        tree = env.parse(source)
    except TemplateSyntaxError as exc:
        raise TemplateRejected(exc.message or "syntax error", exc.lineno, syntax=True) from None
    check_tree(tree, env)
    return tree


def compile_tree(tree: nodes.Template, env: GuardedEnvironment | None = None) -> Template:
    """Compile a tree from ``parse_template`` in ``env`` (default: ``environment()``).

    Raises:
        TemplateRejected: the compiler refuses it (e.g. an assignment to ``loop``).
    """
    try:
        return (env or environment()).from_string(tree)
    except TemplateSyntaxError as exc:
        raise TemplateRejected(exc.message or "syntax error", exc.lineno, syntax=True) from None


def compile_template(source: str, env: GuardedEnvironment | None = None) -> Template:
    """Parse, check and compile a template.

    Args:
        source: the template text.
        env: the environment it will render in (default: ``environment()``).

    Returns:
        The compiled template.

    Raises:
        TemplateRejected: a syntax error, or a tag or name the policy forbids (with its line).

    Rule: docs/wizards.md "Templates"; fail at load, never at render.
    """
    return compile_tree(parse_template(source, env), env)


def condition_source(source: str) -> str:
    """Return a follow-up condition as template text: a bare expression is wrapped in an if."""
    text = source.strip()
    if "{{" in text or "{%" in text:
        return text
    return "{% if " + text + " %}true{% endif %}"


def compile_condition(source: str) -> Template:
    """Compile a follow-up condition: a Jinja2 expression, or a ``{{ … }}`` / ``{% … %}`` text.

    Raises:
        TemplateRejected: as ``compile_template``.
    """
    return compile_template(condition_source(source))


def _chunks(template: Template, variables: Mapping[str, Any]) -> Iterator[str]:
    size = 0
    for chunk in guard.budgeted(template.generate(dict(variables))):
        size += len(chunk)
        if size > MAX_OUTPUT_CHARS:
            raise OverflowError(f"output exceeds {MAX_OUTPUT_CHARS:,} characters")
        yield chunk


def render_text(template: Template, variables: Mapping[str, Any]) -> str:
    """Render a compiled template under the budget; errors pass through as raised.

    Args:
        template: from ``compile_template`` or ``compile_tree``.
        variables: name → value.

    Returns:
        The text, at most ``MAX_OUTPUT_CHARS`` characters.

    Raises:
        Exception: whatever rendering raised (``SecurityError`` for a limit,
            ``OverflowError`` for the output cap, ``UndefinedError`` …), for
            callers with their own error (batch items, prompt documents).
    """
    return "".join(_chunks(template, variables))


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
        return render_text(template, variables)
    except Exception as exc:  # every render failure becomes one RenderError
        name = f"wizard '{wizard}'" if wizard else "template"
        raise RenderError(f"{name}: rendering failed: {describe(exc)}", wizard=wizard) from None


def describe(exc: BaseException) -> str:
    """Return a render failure as one line: its message, else its type's name."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def truthy_text(text: str) -> bool:
    """Return whether a rendered condition counts as true (non-blank, not false/0/no/none)."""
    value = text.strip().lower()
    return value not in ("", "false", "0", "no", "none")
