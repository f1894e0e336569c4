"""The limits every template render runs under: steps, time and the size of every value.

A template is untrusted code. Jinja2's sandbox keeps it away from Python's
internals but not from the machine: ``{{ 'x'|center(10**9) }}`` builds a
gigabyte in one call, ``{{ lipsum(10**6) }}`` runs for minutes, three nested
loops of 10,000 never end. The guards here (docs/wizards.md "Templates";
docs/decisions/0010-one-template-sandbox.md) make every such template fail fast
with one line:

- **Steps and time**: each loop iteration, call, filter and guarded operator
  is a step; a render may take ``MAX_STEPS`` of them and ``MAX_SECONDS`` of
  wall time (checked at every step), counted per render (``Budget``).
- **Sizes before they exist**: an operation that makes a text or a list is
  checked *before* it runs against ``MAX_VALUE_CHARS`` — the characters its
  result would print as (``printed_size``, which counts a list that holds
  the same big list a thousand times a thousand times). Repetition,
  concatenation, ``%``/``format`` widths, padding, ``replace``, ``join``,
  ``lipsum`` and every filter's input and result are checked.
- **No amplifiers**: lists and dicts cannot be changed in place (no
  ``append``, ``extend``, ``update`` …), and string methods outside a known
  list (``translate``, ``expandtabs`` …) are refused.

This module imports jinja2 at the top: it is part of the Jinja layer, loaded
only with ``base.sandbox``.
"""

from __future__ import annotations

import functools
import itertools
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence, Sized
from contextvars import ContextVar
from typing import Any

from jinja2.exceptions import SecurityError
from jinja2.filters import make_attrgetter
from jinja2.runtime import Undefined
from jinja2.sandbox import SandboxedFormatter
from jinja2.utils import Namespace, generate_lorem_ipsum

MAX_VALUE_CHARS = 1_000_000
"""Characters a template's output, or any text or list it builds, may print as
(docs/wizards.md); more is an error, never a truncation."""

MAX_STEPS = 200_000
"""Loop iterations, calls, filters and guarded operators one render may take:
a prompt needs a few hundred; three nested loops of 10,000 would need 10^12."""

MAX_SECONDS = 1.0
"""Wall time one render may take, in seconds: the backstop for slow steps (a filter
over a megabyte in a loop). Real templates render in milliseconds."""

MAX_RANGE = 10_000
"""Items ``range()`` may yield in a template (Jinja2's sandbox allows 100,000); a prompt
never needs more, and nested loops multiply it."""

MAX_EXPONENT = 64
"""Largest exponent ``**`` accepts: ``10 ** 10 ** 10`` would pin the CPU building a number."""

MAX_INT_BITS = 10_000
"""Largest integer a template may compute, in bits (about 3,000 digits): squaring a
number in a loop doubles its size each time."""

MAX_ITEMS = 100_000
"""Largest count the ``batch`` and ``slice`` filters accept (they build that many lists)."""

SAFE_STR_METHODS = frozenset({
    "capitalize", "casefold", "count", "encode", "endswith", "find", "index", "isalnum",
    "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric",
    "isprintable", "isspace", "istitle", "isupper", "lower", "lstrip", "partition",
    "removeprefix", "removesuffix", "rfind", "rindex", "rpartition", "rsplit", "rstrip",
    "split", "splitlines", "startswith", "strip", "swapcase", "title", "upper",
    # checked below: their result may be larger than the text
    "center", "ljust", "rjust", "zfill", "join", "replace", "format", "format_map",
})
"""String methods a template may call: those that cannot make a text longer than their
inputs, and those whose result size is checked first."""

_PRINTF = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")
_DIGITS = re.compile(r"\d+")


class Budget:
    """Steps and time left to one render (see ``MAX_STEPS``, ``MAX_SECONDS``)."""

    __slots__ = ("deadline", "steps")

    def __init__(self) -> None:
        self.steps = MAX_STEPS
        self.deadline = time.monotonic() + MAX_SECONDS

    def step(self) -> None:
        """Take one step.

        Raises:
            SecurityError: no steps or time left.
        """
        self.steps -= 1
        if self.steps < 0:
            raise SecurityError(f"the template took more than {MAX_STEPS:,} steps "
                                "(loop iterations and calls)")
        if time.monotonic() > self.deadline:
            raise SecurityError(f"the template ran longer than {MAX_SECONDS:g} s")


_BUDGET: ContextVar[Budget | None] = ContextVar("vance_template_budget", default=None)


def step() -> None:
    """Take one step of the current render's budget (no budget outside a render)."""
    budget = _BUDGET.get()
    if budget is not None:
        budget.step()


def budgeted(chunks: Iterator[str]) -> Iterator[str]:
    """Yield the chunks of one render, all produced under one fresh ``Budget``."""
    token = _BUDGET.set(Budget())
    try:
        yield from chunks
    finally:
        _BUDGET.reset(token)


def printed_size(value: Any, limit: int = MAX_VALUE_CHARS) -> int:
    """Return about how many characters ``str(value)`` has, stopping once past ``limit``.

    Texts count their length, containers their items (plus 2 a piece for
    separators) — a list held many times counts many times, without building
    anything; numbers and other objects count their short ``repr``.
    """
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str | bytes):
            total += len(item)
        elif isinstance(item, list | tuple | set | frozenset):
            total += 2 + 2 * len(item)
            stack.extend(itertools.islice(item, limit))
        elif isinstance(item, Mapping):
            total += 2 + 4 * len(item)
            stack.extend(itertools.islice(itertools.chain.from_iterable(item.items()), limit))
        elif isinstance(item, Namespace):
            stack.append(item._Namespace__attrs)
        elif isinstance(item, int) and not isinstance(item, bool):
            total += item.bit_length() // 3 + 1
        elif not isinstance(item, Undefined):
            total += 16
    return total


def check_size(size: int, what: str) -> None:
    """Refuse a result of ``size`` characters above ``MAX_VALUE_CHARS``.

    Raises:
        SecurityError: naming ``what`` and the limit.
    """
    if size > MAX_VALUE_CHARS:
        raise SecurityError(f"{what} would exceed the limit of {MAX_VALUE_CHARS:,} characters")


def check_value(value: Any, what: str) -> None:
    """Refuse a value that prints longer than ``MAX_VALUE_CHARS`` (see ``check_size``)."""
    check_size(printed_size(value), what)


def check_binop(operator: str, left: Any, right: Any) -> None:
    """Check ``left <operator> right`` before it runs.

    Raises:
        SecurityError: a text or list longer than ``MAX_VALUE_CHARS``, an
            exponent above ``MAX_EXPONENT``, or a number above ``MAX_INT_BITS``.
    """
    ints = (isinstance(left, int) and isinstance(right, int))
    if operator == "*":
        if ints and left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise SecurityError(f"the product would exceed {MAX_INT_BITS:,} bits")
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, str | list | tuple) and isinstance(times, int) and times > 0:
                check_size(printed_size(seq, MAX_VALUE_CHARS // times) * times, "repetition")
    elif operator == "**" and isinstance(right, int | float):
        if abs(right) > MAX_EXPONENT:
            raise SecurityError(f"exponent above {MAX_EXPONENT}")
        if isinstance(left, int) and left.bit_length() * abs(right) > MAX_INT_BITS:
            raise SecurityError(f"the power would exceed {MAX_INT_BITS:,} bits")
    elif operator == "+" and isinstance(left, str | list | tuple):
        check_size(printed_size(left) + printed_size(right), "concatenation")
    elif operator == "%" and isinstance(left, str):
        check_printf(left, right)


def check_printf(fmt: str, args: Any) -> None:
    """Check ``fmt % args`` (the ``%`` operator and the ``format`` filter) before it runs.

    Raises:
        SecurityError: widths, precisions and arguments would make more than
            ``MAX_VALUE_CHARS`` characters.
    """
    values = args if isinstance(args, tuple) else (args,)
    size = len(fmt) + sum(printed_size(v) for v in values)
    for width, precision in _PRINTF.findall(fmt):
        size += sum(int(n) for n in (width, precision) if n.isdigit())
        if "*" in (width, precision):
            size += sum(abs(v) for v in values if isinstance(v, int))
    check_size(size, "formatting")


class GuardedFormatter(SandboxedFormatter):
    """``str.format`` for templates: Jinja2's sandboxed formatter, widths checked first.

    Each field's width and value count towards ``MAX_VALUE_CHARS`` for all
    fields together.

    Args:
        env: the sandbox, for its attribute checks.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._size = 0

    def format_field(self, value: Any, format_spec: str) -> Any:
        """Format one field after checking its width and value."""
        step()
        widths = sum(int(n) for n in _DIGITS.findall(format_spec))
        self._size += widths + printed_size(value)
        check_size(self._size, "formatting")
        return super().format_field(value, format_spec)


def materialized(items: Iterator[Any]) -> list[Any]:
    """Return the items of a lazy sequence (``map``, ``select``) as a list, to check it.

    Raises:
        SecurityError: more than ``MAX_VALUE_CHARS`` items.
    """
    listed = list(itertools.islice(items, MAX_VALUE_CHARS + 1))
    check_size(len(listed), "a sequence")
    return listed


def check_method(method: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Check a call of a string method before it runs (``args`` hold no lazy sequences).

    Raises:
        SecurityError: a method not in ``SAFE_STR_METHODS``, or a result
            longer than ``MAX_VALUE_CHARS``.
    """
    owner, name = getattr(method, "__self__", None), getattr(method, "__name__", "")
    if not isinstance(owner, str | bytes):
        return
    if name not in SAFE_STR_METHODS:
        raise SecurityError(f"str.{name}() is not allowed in a template")
    if name in ("center", "ljust", "rjust", "zfill") and args and isinstance(args[0], int):
        check_size(max(len(owner), args[0]), f"str.{name}()")
    elif name == "join" and args and isinstance(args[0], Sized):
        check_size(len(owner) * max(0, len(args[0]) - 1) + printed_size(args[0]), "str.join()")
    elif name == "replace" and len(args) >= 2:
        _check_replace(owner, args[0], args[1], args[2] if len(args) > 2 else -1)


def _check_replace(text: Any, old: Any, new: Any, count: Any) -> None:
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)):
        return
    found = len(text) + 1 if old == "" else text.count(old)
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    check_size(len(text) + found * (len(new) - len(old)), "replace()")


def bounded_range(*args: int) -> range:
    """``range`` for templates, at most ``MAX_RANGE`` items.

    Raises:
        SecurityError: the range is longer.
    """
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise SecurityError(f"range() of {len(rng)} items exceeds the limit of {MAX_RANGE}")
    return rng


def bounded_lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    """``lipsum`` for templates: at most ``MAX_VALUE_CHARS`` characters of filler text.

    Raises:
        SecurityError: ``n`` paragraphs of up to ``max`` words would be longer.
    """
    check_size(int(n) * int(max) * 12, "lipsum()")
    return str(generate_lorem_ipsum(n=n, html=html, min=min, max=max))


def guarded_loop(iterable: Any) -> Iterator[Any]:
    """Yield the items of a ``{% for %}`` loop, one step each."""
    for item in iterable:
        step()
        yield item


def guarded_concat(values: Sequence[Any]) -> str:
    """``a ~ b ~ c`` for templates: the texts joined, their size checked first."""
    step()
    check_size(sum(printed_size(v) for v in values), "concatenation")
    return "".join(str(v) for v in values)


def _filter_checks(name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Checks of the filters whose result may be much larger than their input."""
    value = args[0] if args else None
    arg = functools.partial(_arg, args, kwargs)
    text_size = printed_size(value)
    lines = str(value).count("\n") + 1 if isinstance(value, str) else 1
    if name == "center":
        check_size(max(text_size, _int(arg(1, "width", 80))), "center()")
    elif name == "indent":
        width = arg(1, "width", 4)
        check_size(text_size + lines * (len(width) if isinstance(width, str) else _int(width)),
                   "indent()")
    elif name == "wordwrap":
        wrap = arg(3, "wrapstring", None)
        breaks = text_size // max(1, _int(arg(1, "width", 79))) + lines
        check_size(text_size + breaks * len(wrap if isinstance(wrap, str) else "\n"),
                   "wordwrap()")
    elif name == "format":
        check_printf(str(value), tuple(args[1:]) or tuple(kwargs.values()))
    elif name == "replace":
        _check_replace(value, arg(1, "old", None), arg(2, "new", None), arg(3, "count", -1))
    elif name == "join" and isinstance(value, Sized):
        check_size(printed_size(value) + printed_size(arg(1, "d", "")) * len(value), "join()")
    elif name in ("batch", "slice"):
        count = _int(arg(1, "linecount" if name == "batch" else "slices", 1))
        if count > MAX_ITEMS:
            raise SecurityError(f"{name}() of {count:,} exceeds the limit of {MAX_ITEMS:,}")
    elif name == "urlize":
        extra = sum(printed_size(a) for a in (*args[1:], *kwargs.values()))
        check_size(text_size * 3 + (text_size // 4 + 1) * extra, "urlize()")


def _arg(args: Sequence[Any], kwargs: Mapping[str, Any], index: int, key: str,
         default: Any) -> Any:
    return args[index] if len(args) > index else kwargs.get(key, default)


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def guard_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """Return ``func`` wrapped in the checks: one step, the input, the named checks, the result.

    The wrapper keeps Jinja2's ``pass_context``/``pass_environment`` marks; the
    value the filter works on is the first argument after that.
    """
    skip = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        step()
        if len(args) > skip and isinstance(args[skip], Iterator):  # map(), select() …
            args = (*args[:skip], materialized(args[skip]), *args[skip + 1:])
        own = args[skip:]
        if own:
            check_value(own[0], f"the input of {name}()")
        _filter_checks(name, own, kwargs)
        if name == "sum":
            return _linear_sum(func, args, kwargs)
        result = func(*args, **kwargs)
        if isinstance(result, str | list | tuple | dict):
            check_value(result, f"{name}()")
        return result

    return guarded


def _linear_sum(func: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    """The ``sum`` filter (``environment, iterable, attribute, start``); lists in linear time.

    Python's ``sum`` adds lists by copying the total each time, quadratic in
    their number; ``start=[]`` makes a template do that.
    """
    start = _arg(args, kwargs, 3, "start", 0)
    if not isinstance(start, list | tuple):
        return func(*args, **kwargs)
    getter = make_attrgetter(args[0], _arg(args, kwargs, 2, "attribute", None))
    total, size = list(start), printed_size(start)
    for item in _arg(args, kwargs, 1, "iterable", ()):
        step()
        part = getter(item)
        size += printed_size(part)
        check_size(size, "sum()")
        total.extend(part)
    return type(start)(total)
