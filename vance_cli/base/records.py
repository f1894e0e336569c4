"""``frozen``: a frozen, slotted dataclass that compiles one method instead of six.

``@frozen`` gives what ``@dataclass(frozen=True, slots=True)`` gives: the
same ``__init__`` (signature, defaults, factories, ``__post_init__``),
fields (``dataclasses.fields``, ``replace``, ``asdict``, the same
``__dataclass_params__``), frozen attributes (``FrozenInstanceError``),
slots, pickling and copying, ``__match_args__``, and an ``__eq__``,
``__hash__`` and ``__repr__`` that behave exactly as the generated ones:
equal when of the same class and the compared fields are equal
(``field(compare=False)`` left out), the hash of those fields
(``field(hash=…)`` honoured), ``Name(a=1, b='x')`` with
``field(repr=False)`` left out and ``...`` for a value that contains
itself. ``tests/unit/base/test_records.py`` compares the two.

The difference is cost. A dataclass compiles each method it makes
(``exec``, some 0.1 ms each); only ``__init__`` differs in its code from
class to class. Here it alone is compiled, as ``dataclasses`` would write
it, and the other methods are closures over the class's field names: a value
class costs about a third of what it did to define, which an offline
``vance delegate`` pays for some thirty classes on every run
(docs/decisions/0012-startup-path.md).

Not supported (refused with a ``TypeError`` when the class is made):
``InitVar`` and keyword-only fields, and a class body with its own
``__init__``, ``__setattr__`` or ``__delattr__``. One difference: setting
or deleting an attribute that is no field raises ``FrozenInstanceError``,
where Python 3.11's own slotted frozen dataclass fails with a ``TypeError``
from ``super()``.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
import sys
from _thread import get_ident
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")

_MISSING = object()
_HAS_FACTORY = type("_HAS_DEFAULT_FACTORY", (), {"__repr__": lambda self: "<factory>"})()
"""The default of a parameter whose field has a default factory (shown as ``<factory>``)."""
_OWN = ("__init__", "__setattr__", "__delattr__", "__getstate__", "__setstate__", "__eq__",
        "__hash__", "__repr__")


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: type[T]) -> type[T]:
    """Return ``cls`` as a frozen, slotted dataclass with shared equality, hash and repr.

    Args:
        cls: a class body with annotated fields, as for ``dataclasses.dataclass``.

    Returns:
        The new class (slots make a new one, as with ``dataclass(slots=True)``).
        An ``__eq__``, ``__hash__`` or ``__repr__`` the body defines is kept.

    Raises:
        TypeError: the body has ``InitVar`` or keyword-only fields (not supported), or
            defines ``__init__``, ``__setattr__`` or ``__delattr__``.
    """
    own = {name: cls.__dict__.get(name, _MISSING) for name in _OWN}
    for name in ("__init__", "__setattr__", "__delattr__"):
        if own[name] is not _MISSING:
            raise TypeError(f"@frozen makes {name}: {cls.__qualname__} defines its own")
    made = dataclasses.dataclass(init=False, repr=False, eq=False, slots=True)(cls)
    fields = dataclasses.fields(made)  # type: ignore[arg-type]
    if len(fields) != len(made.__dataclass_fields__) or any(f.kw_only for f in fields):  # type: ignore[attr-defined]
        raise TypeError(f"@frozen: {cls.__qualname__} has InitVar or keyword-only fields")
    names = tuple(f.name for f in fields)
    methods: dict[str, Any] = {
        "__init__": _CompileOnUse(made, fields), "__setattr__": _setattr(made, names),
        "__delattr__": _delattr(made, names), "__getstate__": _getstate(names),
        "__setstate__": _setstate(names),
        "__eq__": _eq(_key(tuple(f.name for f in fields if f.compare))),
        "__repr__": _repr(tuple(f.name for f in fields if f.repr)),
    }
    # as dataclasses decides: a body's own __hash__ stays, unless it is the None that
    # Python puts there for a body that defines __eq__ alone
    if own["__hash__"] is None and own["__eq__"] is not _MISSING:
        own["__hash__"] = _MISSING
    methods["__hash__"] = _hash(_key(tuple(f.name for f in fields
                                          if (f.compare if f.hash is None else f.hash))))
    _check_order(fields)
    for name, method in methods.items():
        if own[name] is _MISSING:
            if not isinstance(method, _CompileOnUse):
                method.__qualname__ = f"{made.__qualname__}.{name}"
            setattr(made, name, method)
    params = copy.copy(made.__dataclass_params__)  # type: ignore[attr-defined]
    params.init = params.repr = params.eq = params.frozen = True
    made.__dataclass_params__ = params  # type: ignore[attr-defined]
    return made


def _check_order(fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """Refuse what ``dataclass`` refuses: a parameter without a default after one with one.

    Raises:
        TypeError: a field without a default follows one with a default.
    """
    defaulted = False
    for f in fields:
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            defaulted = True
        elif defaulted:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


class _CompileOnUse:
    """A record's ``__init__``, compiled when it is first looked up (made or inspected).

    A short command defines dozens of records and makes few of them; compiling each
    ``__init__`` at class creation cost about a tenth of the offline delegate's start-up.
    The first lookup puts the compiled function on the class in this object's place.
    """

    __slots__ = ("_cls", "_fields")

    def __init__(self, cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]) -> None:
        self._cls, self._fields = cls, fields

    def __get__(self, instance: object, owner: type[Any] | None = None) -> Any:
        """Return the compiled ``__init__`` (bound to ``instance`` when one is given)."""
        function = _init(self._cls, self._fields)
        function.__qualname__ = f"{self._cls.__qualname__}.__init__"
        self._cls.__init__ = function
        return function.__get__(instance, owner)


def _init(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """Compile the ``__init__`` that ``dataclass(frozen=True)`` makes (the one compiled method).

    Raises:
        TypeError: a field without a default follows one with a default.
    """
    self = "__dataclass_self__" if "self" in {f.name for f in fields} else "self"
    scope: dict[str, Any] = {"__dataclass_builtins_object__": object,
                             "_HAS_DEFAULT_FACTORY": _HAS_FACTORY, "_return_type": None}
    params, body, defaulted = [self], [], False
    for f in fields:
        default, factory = f.default is not dataclasses.MISSING, \
            f.default_factory is not dataclasses.MISSING
        scope[f"_type_{f.name}"] = f.type
        if default or factory:
            scope[f"_dflt_{f.name}"] = f.default_factory if factory else f.default
        if f.init:
            if default or factory:
                defaulted = True
            elif defaulted:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            given = "=_HAS_DEFAULT_FACTORY" if factory else f"=_dflt_{f.name}" if default else ""
            params.append(f"{f.name}:_type_{f.name}{given}")
            value = (f"_dflt_{f.name}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}"
                     if factory else f.name)
        elif factory or default:  # not a parameter: set from its default
            value = f"_dflt_{f.name}()" if factory else f"_dflt_{f.name}"
        else:  # left unset, as dataclasses leaves it
            continue
        body.append(f"__dataclass_builtins_object__.__setattr__({self},{f.name!r},{value})")
    if hasattr(cls, "__post_init__"):
        body.append(f"{self}.__post_init__()")
    lines = "\n".join(f"  {line}" for line in body or ["pass"])
    source = (f"def __create_fn__({', '.join(scope)}):\n"
              f" def __init__({','.join(params)})->_return_type:\n{lines}\n return __init__")
    module = sys.modules.get(cls.__module__)
    namespace: dict[str, Any] = {}
    # dont_inherit: this module's ``from __future__ import annotations`` would turn the
    # parameters' annotations into the names of the scope's variables
    exec(compile(source, "<string>", "exec", dont_inherit=True),
         module.__dict__ if module else {}, namespace)
    function: Callable[..., None] = namespace["__create_fn__"](**scope)
    return function


def _setattr(cls: type[Any], names: tuple[str, ...]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _delattr(cls: type[Any], names: tuple[str, ...]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__


def _getstate(names: tuple[str, ...]) -> Callable[[Any], list[Any]]:
    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    return __getstate__


def _setstate(names: tuple[str, ...]) -> Callable[[Any, list[Any]], None]:
    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=False):
            object.__setattr__(self, name, value)

    return __setstate__


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
