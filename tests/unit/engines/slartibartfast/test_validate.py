"""The checks a generated recipe must pass, one row per rule."""

from __future__ import annotations

from typing import Any

import pytest

from vance_cli.engines.slartibartfast.validate import KEY_ORDER, check_candidate

ENGINES = ("arthur", "ford", "marvin", "vogon", "zaphod", "slartibartfast")
EXISTING = {"coding", "essay-pipeline", "session-root"}
GOOD: dict[str, Any] = {"name": "smart-home-control", "title": "Smart home", "engine": "ford",
                        "description": "Switches devices.", "tags": ["switch"]}


def _with(**changes: Any) -> dict[str, Any]:
    data = {**GOOD, **changes}
    return {k: v for k, v in data.items() if v is not None}


def test_a_good_recipe_passes_and_loses_its_name() -> None:
    checked = check_candidate({**GOOD, "params": {"steps": 2}}, ENGINES, EXISTING)
    assert checked.ok and checked.errors == ()
    assert checked.name == "smart-home-control"
    assert checked.data is not None and "name" not in checked.data
    assert list(checked.data) == [k for k in KEY_ORDER if k in checked.data]


def test_name_is_trimmed_of_quotes_and_backticks() -> None:
    assert check_candidate(_with(name=" `lights` "), ENGINES, EXISTING).name == "lights"


@pytest.mark.parametrize(("data", "error"), [
    (_with(name=None), "'name' is required"),
    (_with(name=""), "'name' is required"),
    (_with(name=42), "'name' must be a string"),
    (_with(name="home/lights"), "must be one name without '/'"),
    (_with(name="../lights"), "must be one name without '/'"),
    (_with(name="smart home"), "may use only letters, digits"),
    (_with(name="lichter-schalten-ä"), "may use only letters, digits"),
    (_with(name="_hidden"), "must start with a letter or a digit"),
    (_with(name=".hidden"), "must start with a letter or a digit"),
    (_with(name="x" * 65), "longer than 64"),
    (_with(name="coding"), "already an existing recipe"),
    (_with(name="Essay-Pipeline"), "already an existing recipe"),
    (_with(engine=None), "'engine' is required"),
    (_with(engine="teleporter"), "engine 'teleporter' is not in the engine catalog"),
    (_with(engine="slartibartfast"), "only designs recipes"),
    (_with(engine=["ford"]), "'engine' is required"),
    (_with(description=None), "'description' is required"),
    (_with(description="   "), "'description' is required"),
    (_with(steps=["a"]), "steps: unknown key"),
    (_with(params=["a"]), "params: expected a mapping"),
    (_with(title=["a"]), "title: expected text"),
    (_with(tags="switch"), "tags: expected a list"),
    (_with(internal="yes"), "internal: expected true or false"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_rule(data: dict[str, Any], error: str) -> None:
    checked = check_candidate(data, ENGINES, EXISTING)
    assert not checked.ok and checked.data is None
    assert any(error in e for e in checked.errors), checked.errors


def test_unknown_engine_lists_the_usable_ones_without_slartibartfast() -> None:
    [error] = check_candidate(_with(engine="teleporter"), ENGINES, EXISTING).errors
    assert error.endswith("use one of: arthur, ford, marvin, vogon, zaphod")


def test_every_problem_is_reported_at_once() -> None:
    checked = check_candidate({"name": "coding", "engine": "teleporter", "colour": "red"},
                              ENGINES, EXISTING)
    assert len(checked.errors) == 4, checked.errors
    joined = " | ".join(checked.errors)
    for part in ("already an existing recipe", "teleporter", "'description' is required",
                 "colour: unknown key"):
        assert part in joined


@pytest.mark.parametrize("data", [["name", "engine"], "name: x", None, 3])
def test_not_a_mapping(data: Any) -> None:
    checked = check_candidate(data, ENGINES, EXISTING)
    assert checked.errors and "must be a YAML mapping" in checked.errors[0]
