"""Batch input: the items file and the task template rendered over each item.

Rules (docs/exit-codes.md, ``vance delegate --task-template T --items FILE|-``):
- Items are read as UTF-8 (a BOM is tolerated); lines end in LF, CRLF
  or CR. Blank lines (white space or zero-width characters only,
  ``text_input.is_blank``) are skipped; an item's
  ``number`` counts only the others (1-based), its ``line`` is its line in
  the input, for messages.
- Format: plain lines (each line, trimmed, is one item) or JSON lines (each
  line one JSON object). ``auto`` picks JSON lines when the first non-blank
  line starts with ``{``, plain lines otherwise; ``--items-format`` forces
  one. In JSON lines a line that is not a JSON object is a bad item — it is
  reported in its place and the batch goes on.
- The template is Jinja2 in vance's one sandbox (``base.sandbox``, with its
  limits on steps, time and sizes), and is checked whole when the batch
  starts: a syntax error, a tag that would read another file (``include``,
  ``import``, ``extends``) or a reach for internals (``__class__``) stops
  the batch before any item runs (exit 2). Messages name the template's option
  (``--task-template``, ``--title``, ``--steer``) and an item as
  ``item N (line L)``. Variables:
  ``item`` (the trimmed line, or the object), ``index`` (the item's number)
  and, for an object, each of its keys (``item`` and ``index`` win over
  keys of those names). An undefined variable is an error for that item,
  never an empty slot: a task with a hole in it would start the wrong work
  (in a test — ``{% if item.urgent %}`` — it is simply false).
- The *shape* of the template is the template rendered with every variable
  replaced by ``PLACEHOLDER``; the selector decides once on that text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import InputError, TaskTemplateError
from vance_cli.base.records import frozen
from vance_cli.base.text_input import decode_utf8, is_blank
from vance_cli.delegate.request import ItemsFormat

if TYPE_CHECKING:
    from jinja2 import Template, Undefined

PLACEHOLDER = "…"
"""What every variable renders as in the template's shape. An ellipsis reads
to an LLM as "some text goes here" ("Translate … into French") and carries no
word, so it adds nothing to the lexical ranking and fires no trigger keyword."""

MAX_TASK_CHARS = 1_000_000
"""Longest rendered task, in characters (the sandbox's output cap, ``MAX_OUTPUT_CHARS``)."""

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WORD = re.compile(r"\w")


@frozen
class Item:
    """One item of a batch.

    Attributes:
        number: 1-based position among the items (blank lines not counted).
        line: 1-based line in the input.
        value: the trimmed line, or the parsed JSON object; None when unreadable.
        problem: why the line is not a usable item (bad JSON), else None.
    """

    number: int
    line: int
    value: str | dict[str, Any] | None
    problem: str | None = None


def decode_items(data: bytes, source: str) -> str:
    """Decode an items input as UTF-8 (BOM tolerated).

    Args:
        data: the raw bytes.
        source: the file name or ``-``, for the message.

    Raises:
        InputError: not UTF-8.
    """
    where = "stdin (--items -)" if source == "-" else f"items file '{source}'"
    return decode_utf8(data, where, field="items")


def parse_items(text: str, fmt: ItemsFormat = ItemsFormat.AUTO) -> list[Item]:
    """Split the items input into items (never raises for a bad line).

    Args:
        text: the whole input, decoded.
        fmt: plain lines, JSON lines, or ``auto`` (see module rules).

    Returns:
        The items in input order; a bad JSON line is an Item with ``problem`` set.
    """
    entries = [(i, line) for i, line in enumerate(_LINE_BREAK.split(text), 1)
               if not is_blank(line)]
    if fmt is ItemsFormat.AUTO:
        first = entries[0][1].lstrip() if entries else ""
        fmt = ItemsFormat.JSONL if first.startswith("{") else ItemsFormat.LINES
    items: list[Item] = []
    for number, (line_no, line) in enumerate(entries, 1):
        if fmt is ItemsFormat.LINES:
            items.append(Item(number, line_no, line.strip()))
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            items.append(Item(number, line_no, None, f"invalid JSON: {exc}"))
            continue
        if not isinstance(value, dict):
            items.append(Item(number, line_no, None,
                              f"expected a JSON object, got {type(value).__name__}"))
            continue
        items.append(Item(number, line_no, value))
    return items


def item_label(item: Item) -> str:
    """Return how messages name an item: ``item 3 (line 4)``."""
    return f"item {item.number} (line {item.line})"


def item_context(item: Item) -> dict[str, Any]:
    """Return the template variables of an item: its keys, then ``item`` and ``index``."""
    keys: Mapping[str, Any] = item.value if isinstance(item.value, dict) else {}
    return {**keys, "item": item.value, "index": item.number}


TASK_LABEL = "task template (--task-template)"
"""How messages name the task template."""
TITLE_LABEL = "title template (--title)"
"""How messages name the ``--title`` template."""
STEER_LABEL = "steer template (--steer)"
"""How messages name the ``--steer`` template."""

NO_ITEMS = "no items: nothing to decide"
"""Why the template's shape was not asked: the batch has no items."""
SAYS_NOTHING = "it says nothing without an item"
"""Why the template's shape was not asked: it holds no word besides its variables."""
NEEDS_AN_ITEM = "it renders only with a real item"
"""Why the template's shape was not asked: rendering it without an item fails."""


class TaskTemplate:
    """A compiled task template: renders one task per item, and the template's shape.

    Args:
        source: the template text (``--task-template``, ``--title`` or ``--steer``).
        label: how messages name it (``TASK_LABEL``, ``TITLE_LABEL``, ``STEER_LABEL``).

    Raises:
        TaskTemplateError: the template does not compile, or uses ``include``,
            ``import`` or ``extends`` (exit 2 before any item runs).
    """

    def __init__(self, source: str, label: str = TASK_LABEL) -> None:
        from vance_cli.base import sandbox  # heavy: jinja2

        self.source = source
        self.label = label
        strict = sandbox.environment(_strict_class(), lstrip_blocks=True)
        try:
            tree = sandbox.parse_template(source, strict)
            self._strict = sandbox.compile_tree(tree, strict)
            self._shape = sandbox.compile_tree(
                tree, sandbox.environment(_placeholder_class(), lstrip_blocks=True))
        except sandbox.TemplateRejected as exc:
            raise _rejected(exc, label) from None

    def render(self, item: Item) -> str:
        """Return the task for ``item``, trimmed.

        Raises:
            InputError: the item is unreadable (not a JSON object).
            TaskTemplateError: a variable is undefined,
                the sandbox refuses an operation, any other render failure, or
                the task is longer than ``MAX_TASK_CHARS``.
        """
        if item.problem is not None:
            raise InputError(f"{item_label(item)}: {item.problem}", field="items",
                             item=item.number, line=item.line)
        context = item_context(item)
        try:
            return _render(self._strict, context)
        except Exception as exc:  # every render failure is this item's error
            raise TaskTemplateError(f"{item_label(item)}: {self.label}: "
                                    f"{_describe(exc, context)}", item=item.number,
                                    line=item.line) from None

    def shape(self) -> str | None:
        """Return the template with every variable as ``PLACEHOLDER``, or None.

        None when the shape says nothing about the task — it cannot be
        rendered without a real item, or holds no word besides placeholders
        (``{{ item }}``) — so only the items themselves can be decided.
        """
        return self.shape_or_why()[0]

    def shape_or_why(self) -> tuple[str | None, str]:
        """Return ``(shape, "")``, or ``(None, why)`` (``SAYS_NOTHING`` or ``NEEDS_AN_ITEM``)."""
        try:
            text = _render(self._shape, {})
        except Exception:  # e.g. arithmetic on an item: only real items render
            return None, NEEDS_AN_ITEM
        if _WORD.search(text.replace(PLACEHOLDER, "")):
            return text, ""
        return None, SAYS_NOTHING


def _render(template: Template, context: Mapping[str, Any]) -> str:
    from vance_cli.base import sandbox  # heavy: jinja2

    return sandbox.render_text(template, context).strip()


def _rejected(exc: Any, label: str) -> TaskTemplateError:
    """The TaskTemplateError of a template the sandbox refused at load (a TemplateRejected)."""
    where = f" (line {exc.line})" if exc.line else ""
    if exc.tag:
        return TaskTemplateError(
            f"{label} uses {{% {exc.tag} %}}{where}: a template cannot read other files;"
            " include, import and extends are not allowed", line=exc.line)
    verb = "does not compile" if exc.syntax else "is not allowed"
    return TaskTemplateError(f"{label} {verb}: {exc.reason}{where}", line=exc.line)


def _describe(exc: BaseException, context: Mapping[str, Any]) -> str:
    from jinja2 import UndefinedError

    text = " ".join(str(exc).split())
    if isinstance(exc, OverflowError):
        return f"the task renders longer than {MAX_TASK_CHARS} characters"
    if isinstance(exc, UndefinedError):
        return f"{text} (this item has: {', '.join(sorted(context))})"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@functools.cache
def _strict_class() -> type[Undefined]:
    """Return an Undefined that fails when output or used, but is false in a test.

    So ``{% if item.urgent %}`` works for items without that key, while
    ``{{ item.topic }}`` without a topic is the item's error.
    """
    from jinja2 import StrictUndefined

    class Strict(StrictUndefined):
        __slots__ = ()

        def __bool__(self) -> bool:  # type: ignore[override]  # false, not an error
            return False

    return Strict


@functools.cache
def _placeholder_class() -> type[Undefined]:
    """Return an Undefined that renders as ``PLACEHOLDER`` through any chain of lookups."""
    from jinja2 import ChainableUndefined

    class Placeholder(ChainableUndefined):
        __slots__ = ()

        def __str__(self) -> str:
            return PLACEHOLDER

    return Placeholder
