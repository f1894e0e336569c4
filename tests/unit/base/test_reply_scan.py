"""Linear-time reading of model replies: reasoning blocks, JSON anywhere, relaxed JSON."""

from __future__ import annotations

import pytest

from vance_cli.base.reply_scan import find_objects, first_error, strip_thinking, walk


@pytest.mark.parametrize(("text", "stripped"), [
    ("a<think>b</think>c<think>d</think>e", "a c e"),
    ("x</think>y", "y"),
    ("y<think>z", "y"),
    ("<THINK>a</think>b", " b"),
    ("<think>a<reasoning>b</think>c", " c"),
    ('<think>x</think>{"r": "<think>"}', ' {"r": "<think>"}'),
    ('{"r": "</think>"} tail', '{"r": "</think>"} tail'),
    ("no tags at all", "no tags at all"),
])
def test_strip_thinking(text: str, stripped: str) -> None:
    assert strip_thinking(text) == stripped


def _values(text: str, relaxed: bool = False) -> list[object]:
    return [f.value for f in find_objects(text, relaxed)]


def test_objects_anywhere_in_order_inner_ones_by_walking() -> None:
    text = 'a {"x": {"y": 1}} b {bad} c {"z": [{"w": 2}]}'
    assert _values(text) == [{"x": {"y": 1}}, {"z": [{"w": 2}]}]
    assert [dict(o) for f in find_objects(text) for o in walk(f.value)] == [
        {"x": {"y": 1}}, {"y": 1}, {"z": [{"w": 2}]}, {"w": 2}]


def test_an_object_longer_than_the_first_window_decodes() -> None:
    text = '{"a": "' + "x" * 5000 + '", "b": true}'
    assert _values(text) == [{"a": "x" * 5000, "b": True}]


@pytest.mark.parametrize(("text", "value"), [
    ("{'a': 'b', \"c\": 1,}", {"a": "b", "c": 1}),
    ("{a: [1, 2,], b: True, c: None}", {"a": [1, 2], "b": True, "c": None}),
    ("{'it\\'s': 'say \"hi\"'}", {"it's": 'say "hi"'}),
])
def test_relaxed_grammar(text: str, value: object) -> None:
    assert _values(text, relaxed=True) == [value]


@pytest.mark.parametrize("text", ["{MATCH coding}", "{a: b}", "{'a': 1", "{a: 1 b: 2}",
                                  "{" * 300 + "}" * 300])
def test_relaxed_grammar_refuses_garbage(text: str) -> None:
    assert [v for v in _values(text, relaxed=True) if v] == []


def test_keys_given_twice_differently_are_remembered() -> None:
    (obj,) = _values('{"a": 1, "A ": 2, "b": 3, "b": 3}')
    assert obj.clashes == {"a"}  # type: ignore[attr-defined]
    (relaxed,) = _values("{a: 1, a: 2}", relaxed=True)
    assert relaxed.clashes == {"a"}  # type: ignore[attr-defined]


def test_first_error_says_where() -> None:
    assert first_error('x\n{"a": }') == "Expecting value (line 2, column 7)"
    assert first_error('{"a": ' + "[" * 10_000).endswith("nested too deeply")


def test_escaped_lone_surrogates_decode_as_replacement_characters() -> None:
    (obj,) = _values('{"a": "x\\udcff", "b": ["\\ud83d\\ude00", "\\\\udcff"]}')
    assert obj == {"a": "x\ufffd", "b": ["\U0001f600", "\\udcff"]}
