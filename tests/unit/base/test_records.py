"""``frozen`` behaves as ``dataclass(frozen=True, slots=True)``: each class is defined both
ways and every observable behaviour is compared."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from collections.abc import Callable
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest

from vance_cli.base.records import frozen

STD = dataclass(frozen=True, slots=True)


def _shapes(make: Callable[[type], type]) -> dict[str, type]:
    """The same class bodies, decorated with ``make``."""

    class Empty:
        """No fields."""

    class One:
        """One field."""

        a: int

    class Mixed:
        """Defaults, a factory, fields left out of comparison, hash and repr."""

        name: str
        size: float = 1.0
        tags: tuple[str, ...] = ()
        extra: dict[str, Any] = field(default_factory=dict, hash=False)
        note: str = field(default="", compare=False)
        secret: str | None = field(default=None, repr=False)
        weight: int = field(default=0, hash=False)
        only_hash: int = field(default=0, compare=False, hash=True)

    class Derived:
        """A field set after init."""

        items: tuple[str, ...]
        count: int = field(init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "count", len(self.items))

    class Odd:
        """A field called self, and one set from its default, not a parameter."""

        self: int
        kind: str = field(default="odd", init=False)
        made: list[int] = field(default_factory=list, init=False)

    class Custom:  # noqa: PLW1641 - the decorator adds the hash, as dataclass does
        """Its own repr and equality."""

        a: int

        def __repr__(self) -> str:
            return f"<custom {self.a}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Custom) and other.a % 2 == self.a % 2

    return {cls.__name__: make(cls) for cls in (Empty, One, Mixed, Derived, Odd, Custom)}


STD_SHAPES = _shapes(STD)
RECORD_SHAPES = _shapes(frozen)

SAMPLES: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "Empty": [((), {})],
    "One": [((1,), {}), ((2,), {}), ((float("nan"),), {}), (("x",), {})],
    "Mixed": [(("a",), {}), (("a", 2.0, ("t",)), {"extra": {"k": [1]}, "note": "n",
                                                    "secret": "s", "weight": 3,
                                                    "only_hash": 4}),
              (("a",), {"note": "other"}), (("a",), {"only_hash": 9}), (("b",), {})],
    "Derived": [((("x", "y"),), {}), (((),), {})],
    "Odd": [((1,), {}), ((), {"self": 2})],
    "Custom": [((1,), {}), ((3,), {}), ((2,), {})],
}


def _pairs(name: str) -> list[tuple[Any, Any]]:
    std, rec = STD_SHAPES[name], RECORD_SHAPES[name]
    return [(std(*args, **kwargs), rec(*args, **kwargs)) for args, kwargs in SAMPLES[name]]


def _outcome(change: Callable[..., None], obj: Any, attribute: str) -> tuple[type, str]:
    """The error a change of a frozen object raises."""
    args = (obj, attribute, 1) if change is setattr else (obj, attribute)
    with pytest.raises((FrozenInstanceError, TypeError)) as raised:
        change(*args)
    return type(raised.value), str(raised.value)


def _hash_or_error(obj: Any) -> object:
    try:
        return hash(obj)
    except TypeError as exc:
        return str(exc)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_equality_hash_and_repr_are_those_of_a_frozen_dataclass(name: str) -> None:
    pairs = _pairs(name)
    for std_a, rec_a in pairs:
        assert repr(rec_a) == repr(std_a)
        assert _hash_or_error(rec_a) == _hash_or_error(std_a)
        for std_b, rec_b in pairs:
            assert (rec_a == rec_b) == (std_a == std_b), (rec_a, rec_b)
            assert (rec_a != rec_b) == (std_a != std_b), (rec_a, rec_b)
        assert rec_a != std_a  # another class: never equal
        assert (rec_a == object()) is False
        stranger = object()
        assert rec_a.__eq__(stranger) is std_a.__eq__(stranger)  # NotImplemented, unless own


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_fields_init_replace_and_frozen_attributes_are_those_of_a_frozen_dataclass(
        name: str) -> None:
    std, rec = STD_SHAPES[name], RECORD_SHAPES[name]
    assert [(f.name, f.init, f.compare, f.repr, f.hash) for f in dataclasses.fields(rec)] == [
        (f.name, f.init, f.compare, f.repr, f.hash) for f in dataclasses.fields(std)]
    assert rec.__match_args__ == std.__match_args__
    assert str(inspect.signature(rec)) == str(inspect.signature(std))
    assert rec.__init__.__qualname__ == std.__init__.__qualname__
    assert repr(rec.__dataclass_params__) == repr(std.__dataclass_params__)
    assert rec.__slots__ == std.__slots__
    assert rec.__doc__ == std.__doc__
    for std_obj, rec_obj in _pairs(name):
        assert not hasattr(rec_obj, "__dict__")
        assert dataclasses.asdict(rec_obj) == dataclasses.asdict(std_obj)
        for attribute in [f.name for f in dataclasses.fields(rec)]:
            assert _outcome(setattr, rec_obj, attribute) == _outcome(setattr, std_obj, attribute)
            assert _outcome(delattr, rec_obj, attribute) == _outcome(delattr, std_obj, attribute)
        # a name that is no field: FrozenInstanceError too (Python 3.11's own slotted frozen
        # dataclass fails there with a TypeError from super(), a bug of its own)
        assert _outcome(setattr, rec_obj, "other") == (
            FrozenInstanceError, "cannot assign to field 'other'")
        assert _outcome(delattr, rec_obj, "other") == (
            FrozenInstanceError, "cannot delete field 'other'")
        changes = {f.name: getattr(rec_obj, f.name) for f in dataclasses.fields(rec) if f.init}
        assert repr(dataclasses.replace(rec_obj, **changes)) == repr(
            dataclasses.replace(std_obj, **changes))
        for duplicate in (copy.copy(rec_obj), copy.deepcopy(rec_obj)):
            assert type(duplicate) is rec
            assert repr(duplicate) == repr(rec_obj)


def test_missing_and_unknown_arguments_fail_as_with_a_dataclass() -> None:
    for args, kwargs in (((), {}), ((1, 2), {}), ((1,), {"b": 2})):
        with pytest.raises(TypeError) as got:
            RECORD_SHAPES["One"](*args, **kwargs)
        with pytest.raises(TypeError) as expected:
            STD_SHAPES["One"](*args, **kwargs)
        assert str(got.value) == str(expected.value)


def test_a_value_that_holds_itself_is_shown_as_dots() -> None:
    items: list[Any] = []
    std, rec = STD_SHAPES["One"](items), RECORD_SHAPES["One"](items)
    items.append(rec)
    assert repr(rec) == "_shapes.<locals>.One(a=[...])"
    items[0] = std
    assert repr(std) == "_shapes.<locals>.One(a=[...])"


@frozen
class Pickled:
    """A record at module level, so pickle can find it."""

    name: str
    values: tuple[int, ...] = ()


def test_a_record_pickles() -> None:
    value = Pickled("a", (1, 2))
    assert pickle.loads(pickle.dumps(value)) == value


def test_an_instance_of_a_subclass_is_not_equal() -> None:
    for shapes in (STD_SHAPES, RECORD_SHAPES):
        one = shapes["One"]
        sub = type("Sub", (one,), {"__slots__": ()})
        assert one(1) != sub(1)
        assert sub(1) == sub(1)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_wrong_calls_fail_as_with_a_dataclass(name: str) -> None:
    std, rec = STD_SHAPES[name], RECORD_SHAPES[name]
    for args, kwargs in (((), {}), ((1, 2, 3, 4, 5, 6, 7, 8, 9, 10), {}), ((), {"nope": 1})):
        assert _call_error(rec, args, kwargs) == _call_error(std, args, kwargs)


def _call_error(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    try:
        cls(*args, **kwargs)
    except TypeError as exc:
        return str(exc)
    return None


def test_a_field_without_a_default_after_one_with_a_default_is_refused() -> None:
    for make in (STD, frozen):
        with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
            make(type("Bad", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1}))


def test_what_frozen_does_not_make_is_refused() -> None:
    with pytest.raises(TypeError, match="keyword-only"):
        frozen(type("KwOnly", (), {"__annotations__": {"a": "int"},
                                   "a": field(default=1, kw_only=True)}))
    with pytest.raises(TypeError, match="defines its own"):
        frozen(type("OwnInit", (), {"__annotations__": {"a": "int"},
                                    "__init__": lambda self, a: None}))


def test_init_is_compiled_at_its_first_use_and_then_stays() -> None:
    @frozen
    class Late:
        a: int
        b: str = "x"

    assert not inspect.isfunction(Late.__dict__["__init__"])  # not compiled yet
    assert list(inspect.signature(Late).parameters) == ["a", "b"]
    compiled = Late.__dict__["__init__"]
    assert inspect.isfunction(compiled) and compiled.__qualname__.endswith("Late.__init__")
    assert Late(1) == Late(1, "x") and Late.__dict__["__init__"] is compiled

    @frozen
    class Made:
        a: int

    assert Made(3).a == 3  # made before anything inspected it
