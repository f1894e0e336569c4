"""``frozen``: a frozen, slotted dataclass whose comparison, hash and repr are shared functions.

``@frozen`` gives what ``@dataclass(frozen=True, slots=True)`` gives — the
same ``__init__``, fields (``dataclasses.fields``, ``replace``, ``asdict``),
frozen attributes (``FrozenInstanceError``), slots, pickling and
``__match_args__``, and an ``__eq__``, ``__hash__`` and ``__repr__`` that
behave exactly as the generated ones: equal when of the same class and the
compared fields are equal (``field(compare=False)`` left out), the hash of
those fields (``field(hash=…)`` honoured), ``Name(a=1, b='x')`` with
``field(repr=False)`` left out and ``...`` for a value that contains itself.

The difference is cost: a dataclass compiles each method it generates
(``exec``), and three of those six are the same code for every class. Here
they are closures over the class's field names, made without compiling
anything: a value class costs about a third less to define at import
(docs/decisions/0012-startup-path.md). Only ``__dataclass_params__`` tells
the difference (``eq`` and ``repr`` read False there).
"""

from __future__ import annotations

import dataclasses
import operator
from _thread import get_ident
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")

_MISSING = object()


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: type[T]) -> type[T]:
    """Return ``cls`` as a frozen, slotted dataclass with shared equality, hash and repr.

    Args:
        cls: a class body with annotated fields, as for ``dataclasses.dataclass``.

    Returns:
        The new class (slots make a new one, as with ``dataclass(slots=True)``).
        An ``__eq__``, ``__hash__`` or ``__repr__`` the body defines is kept.
    """
    own = {name: cls.__dict__.get(name, _MISSING) for name in ("__eq__", "__hash__", "__repr__")}
    made = dataclasses.dataclass(frozen=True, slots=True, eq=False, repr=False)(cls)
    fields = dataclasses.fields(made)  # type: ignore[arg-type]
    if own["__eq__"] is _MISSING:
        made.__eq__ = _eq(_key(tuple(f.name for f in fields if f.compare)))  # type: ignore[method-assign]
    # as dataclasses decides: a body's own __hash__ stays, unless it is the None that
    # Python puts there for a body that defines __eq__ alone
    if own["__hash__"] is _MISSING or (own["__hash__"] is None and own["__eq__"] is not _MISSING):
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        made.__hash__ = _hash(_key(hashed))  # type: ignore[method-assign,assignment]
    if own["__repr__"] is _MISSING:
        made.__repr__ = _repr(tuple(f.name for f in fields if f.repr))  # type: ignore[method-assign]
    return made


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """Return a function that gives an object's values of ``names`` as a tuple."""
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return operator.attrgetter(*names)


def _eq(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        marker = (id(self), get_ident())
        if marker in running:
            return "..."
        running.add(marker)
        try:
            shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        finally:
            running.discard(marker)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__
