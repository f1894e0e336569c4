"""The shorthand small models write, read as the recipe schema's form (slartibartfast)."""

from __future__ import annotations

from typing import Any

import pytest

from vance_cli.engines.slartibartfast.extract import extract_recipe
from vance_cli.engines.slartibartfast.shorthand import expand
from vance_cli.engines.slartibartfast.validate import check_candidate

ENGINES = ("ford", "vogon", "zaphod", "marvin", "arthur", "slartibartfast")


def _vogon(phases: list[Any]) -> dict[str, Any]:
    return {"name": "persona-docs", "engine": "vogon", "description": "Writes personas.",
            "params": {"phases": phases}}


@pytest.mark.parametrize(("phases", "expected"), [
    (["Read the interview notes", "Write one persona per group"],
     [{"name": "read-the-interview-notes", "prompt": "Read the interview notes"},
      {"name": "write-one-persona-per", "prompt": "Write one persona per group"}]),
    ([{"cluster": "Group the notes"}, {"write": "Write the personas"}],
     [{"name": "cluster", "prompt": "Group the notes"},
      {"name": "write", "prompt": "Write the personas"}]),
    (["Draft", "Draft"], [{"name": "draft", "prompt": "Draft"},
                          {"name": "draft-2", "prompt": "Draft"}]),
    ([{"name": "a", "prompt": "x"}], [{"name": "a", "prompt": "x"}]),
])
def test_vogon_phases_as_strings_become_phases(phases: list[Any],
                                                expected: list[Any]) -> None:
    body = expand(_vogon(phases))
    assert body["params"]["phases"] == expected
    checked = check_candidate(_vogon(phases), ENGINES, ["default"])
    assert checked.ok, checked.errors


def test_zaphod_heads_as_strings_become_personas() -> None:
    body = expand({"engine": "zaphod", "params": {"heads": ["A cautious CFO", "A bold CTO"]}})
    assert body["params"]["heads"] == [{"name": "a-cautious-cfo", "persona": "A cautious CFO"},
                                       {"name": "a-bold-cto", "persona": "A bold CTO"}]


def test_other_engines_keep_their_lists() -> None:
    body = {"engine": "ford", "params": {"phases": ["a"]}}
    assert expand(body) == body


REPLY = """```yaml
name: offsite-agenda
title: Offsite agenda
engine: vogon
description: >-
  Plans a team offsite: sessions and timings.
params:
  phases:
    - name: sessions
      prompt: Step 1: list the sessions: goals first.
    - name: timings
      prompt: Step 2: give each session its time.
```"""
"""What Qwen2.5-Coder-0.5B wrote: plain values that hold ': ' (YAML refuses them)."""


def test_plain_values_holding_a_colon_are_quoted() -> None:
    found = extract_recipe(REPLY)
    assert found.error is None and found.data is not None
    phases = found.data["params"]["phases"]
    assert [p["prompt"] for p in phases] == ["Step 1: list the sessions: goals first.",
                                             "Step 2: give each session its time."]


def test_a_parse_error_quotes_its_line() -> None:
    found = extract_recipe("```yaml\nname: x\nengine: ford\n  description: two\n```")
    assert found.data is None and found.error is not None
    assert found.error.endswith("(line 3, column 14) in the line `description: two`: check its"
                                " indentation against the line above")
