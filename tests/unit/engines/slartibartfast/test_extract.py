"""Slartibartfast's tolerant reading of real-model replies."""

from __future__ import annotations

import pytest

from vance_cli.engines.slartibartfast.extract import NOTHING, extract_recipe

RECIPE_YAML = """name: smart-home-control
title: Control smart-home devices
engine: ford
description: >-
  Switches smart-home devices.
tags: [switch, steuern]"""

RECIPE_JSON = ('{"name": "smart-home-control", "engine": "ford", '
               '"description": "Switches smart-home devices.", "tags": ["switch"]}')

EXPECTED = {"name": "smart-home-control", "engine": "ford"}

# (id, reply, format): every reply must yield the smart-home-control recipe
CASES = [
    ("fenced-yaml", f"```yaml\n{RECIPE_YAML}\n```", "yaml"),
    ("fenced-yml-prose", f"Sure! Here it is:\n\n```yml\n{RECIPE_YAML}\n```\n\nEnjoy.", "yaml"),
    ("think-then-fence", f"<think>The person wants lights off. engine: marvin? no.</think>\n"
                         f"```yaml\n{RECIPE_YAML}\n```", "yaml"),
    ("think-with-a-draft-block", "<think>\n```yaml\nname: draft\nengine: marvin\n"
                                 "description: wrong\n```\n</think>\n"
                                 f"```yaml\n{RECIPE_YAML}\n```", "yaml"),
    ("fenced-json", f"```json\n{RECIPE_JSON}\n```", "json"),
    ("unlabelled-fence", f"```\n{RECIPE_YAML}\n```", "yaml"),
    ("tilde-fence", f"~~~yaml\n{RECIPE_YAML}\n~~~", "yaml"),
    ("draft-then-final", "First try:\n```yaml\nname: x\nengine: teleporter\n"
                         "description: nope\n```\nBetter:\n"
                         f"```yaml\n{RECIPE_YAML}\n```", "yaml"),
    ("recipe-then-shell", f"```yaml\n{RECIPE_YAML}\n```\nRun it:\n```sh\nvance process "
                          "create --recipe x\n```", "yaml"),
    ("no-fence-prose-around", f"Here is the recipe you asked for:\n\n{RECIPE_YAML}\n\n"
                              "Let me know if you need changes!", "yaml"),
    ("bare-json-in-prose", f"The recipe: {RECIPE_JSON} — done.", "json"),
    ("wrapped-in-recipe-key", "```yaml\nrecipe:\n  " + RECIPE_YAML.replace("\n", "\n  ")
                              + "\n```", "yaml"),
    ("cut-off-fence", f"```yaml\n{RECIPE_YAML}\n", "yaml"),
    ("crlf-line-ends", f"```yaml\r\n{RECIPE_YAML}\r\n```".replace("\n", "\r\n"), "yaml"),
]


@pytest.mark.parametrize(("reply", "fmt"), [(c[1], c[2]) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_recipe_is_found(reply: str, fmt: str) -> None:
    found = extract_recipe(reply)
    assert found.error is None, found.error
    assert found.data is not None and found.format == fmt
    assert {k: found.data[k] for k in EXPECTED} == EXPECTED
    assert "smart-home-control" in found.text


def test_yaml_numbers_keep_their_text() -> None:
    found = extract_recipe("```yaml\nname: v\nengine: ford\ndescription: d\n"
                           "params:\n  version: 3.10\n  flag: no\n```")
    assert found.data is not None
    assert found.data["params"]["flag"] == "no"  # YAML 1.1 would make it False
    assert found.data["params"]["version"].source == "3.10"


@pytest.mark.parametrize(("reply", "error"), [
    ("", NOTHING),
    ("I cannot design a recipe for that.", NOTHING),
    ("<think>engine: ford\ndescription: x\nname: y", NOTHING),  # an unclosed think hides it
    ("```yaml\nname: x\nengine: ford\n  description: [bad\n```", "YAML error"),
    ("```yaml\nname: x\nengine: ford\nengine: marvin\ndescription: d\n```", "duplicate"),
    ('```json\n{"name": "x", "engine": "ford",}\n```', "JSON error"),
], ids=["empty", "prose-only", "unclosed-think", "yaml-syntax", "duplicate-key", "bad-json"])
def test_unreadable_replies_say_why(reply: str, error: str) -> None:
    found = extract_recipe(reply)
    assert found.data is None and found.error is not None
    assert error in found.error


def test_yaml_error_carries_a_position() -> None:
    found = extract_recipe("```yaml\nname: x\nengine: ford\ndescription: [open\n```")
    assert found.error is not None and "(line " in found.error and "column" in found.error
    assert found.text.startswith("name: x")


def test_a_mapping_without_recipe_keys_is_not_a_recipe() -> None:
    found = extract_recipe("```yaml\nsteps: [a, b]\n```")
    assert found.data is None and found.error == NOTHING


# Hostile replies end quickly (linear time), so the fallback cutoff holds whatever a
# model sends; bench/replies.py prints the figures.
HOSTILE = [
    "<think>" * 28_000,
    "```" + "x" * 200_000,
    "`" * 200_000,
    "\n" * 200_000,
    "{" * 500 + "a" * 9000 + "}" * 500,
    '{"a":' * 30_000 + "1" + "}" * 30_000,
    "engine: x\n" + "".join(f"k{i}: {'v' * 400}\n" for i in range(450)),
    'engine: x\nname: y\ndescription: "abc\n' + "prose line\n" * 10_000,
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("reply", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_replies_end_without_a_recipe(reply: str) -> None:
    found = extract_recipe(reply)
    assert found.data is None and found.error


def test_a_recipe_mentioning_think_tags_in_json_is_read() -> None:
    reply = '{"name": "x", "engine": "ford", "description": "explains <think> tags"}'
    assert extract_recipe(reply).data == {"name": "x", "engine": "ford",
                                          "description": "explains <think> tags"}


def test_prose_after_an_unfenced_document_is_cut_at_the_failing_line() -> None:
    reply = "name: x\nengine: ford\ndescription: d\nThat is all: I hope it helps, really: yes\n"
    assert extract_recipe(reply).data == {"name": "x", "engine": "ford", "description": "d"}
