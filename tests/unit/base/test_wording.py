"""``wording.counted``: one helper for every counted noun."""

from __future__ import annotations

import pytest

from vance_cli.base.wording import counted


@pytest.mark.parametrize(("count", "singular", "plural", "text"), [
    (0, "recipe", None, "0 recipes"),
    (1, "recipe", None, "1 recipe"),
    (2, "recipe", None, "2 recipes"),
    (1, "process", "processes", "1 process"),
    (3, "process", "processes", "3 processes"),
    (1, "selector call", None, "1 selector call"),
    (-1, "item", None, "-1 items"),
])
def test_counted(count: int, singular: str, plural: str | None, text: str) -> None:
    assert counted(count, singular, plural) == text
