"""A JSON object out of an engine's reply: tolerant, and linear in the reply's length."""

from __future__ import annotations

import pytest

from vance_cli.base.replies import find_object, without_thinking


@pytest.mark.parametrize(("reply", "found"), [
    ('{"a": 1}', {"a": 1}),
    ('<think>{"draft": 1}</think>\n```json\n{"a": 1}\n```', {"a": 1}),
    ('Sure: {"a": 1} done', {"a": 1}),
    ("{'a': 1, b: [2,],}", {"a": 1, "b": [2]}),
    ("no object here", None),
    ("{MATCH coding}", None),
])
def test_find_object(reply: str, found: object) -> None:
    assert find_object(reply) == found


@pytest.mark.timeout(10)
@pytest.mark.parametrize("reply", [
    "<think>" * 28_000,
    '{"a":' + "[" * 100_000 + "}",
    "{" + "a:{" * 60_000 + "}",
    "{" * 500 + "a" * 9000 + "}" * 500,
])
def test_hostile_replies_end_without_an_object(reply: str) -> None:
    assert find_object(reply) is None


def test_without_thinking() -> None:
    assert without_thinking("a<think>b</think>c") == "a c"
