"""The tolerant reply parser: one row per rule (DESIGN.md §5 step 5)."""

from __future__ import annotations

import pytest

from vance_cli.selector.decision import NoneReason, SelectorFailure
from vance_cli.selector.parse import (
    Reply,
    balanced_span,
    check_name,
    clean_name,
    parse_reply,
    strip_thinking,
)

OK = '{"decision": "MATCH", "recipe": "coding", "rationale": "Code."}'

PARSED = [
    # (reply, finish_reason, decision, recipe, rationale)
    (OK, "stop", "MATCH", "coding", "Code."),
    ("```json\n" + OK + "\n```", "stop", "MATCH", "coding", "Code."),
    ("```\n" + OK + "\n```", None, "MATCH", "coding", "Code."),
    ("Sure! Here it is:\n" + OK + "\nAnything else?", "stop", "MATCH", "coding", "Code."),
    ("<think>\nMaybe {decision} is coding… {\"x\": 1}\n</think>\n" + OK, "stop",
     "MATCH", "coding", "Code."),
    ("<THINK>hm</THINK>" + OK, "stop", "MATCH", "coding", "Code."),
    ("reasoning without opening tag</think>" + OK, "stop", "MATCH", "coding", "Code."),
    ('{"decision": "match", "recipe": "coding", "rationale": "r"}', "stop", "MATCH", "coding", "r"),
    ('{"Decision": " Match ", "Recipe": "coding"}', "stop", "MATCH", "coding", ""),
    ('{"decision": "MATCH", "recipe": "`coding`", "rationale": "r"}', "stop",
     "MATCH", "coding", "r"),
    ('{"decision": "MATCH", "recipe": " \'coding\' ", "rationale": "r"}', "stop",
     "MATCH", "coding", "r"),
    ('{"decision": "MATCH", "recipe": "\\"coding\\"", "rationale": "r"}', "stop",
     "MATCH", "coding", "r"),
    ('{"decision": "NONE", "recipe": null, "rationale": "Nothing fits."}', "stop",
     "NONE", None, "Nothing fits."),
    ('{"decision": "none", "recipe": "coding", "rationale": "x"}', "stop", "NONE", None, "x"),
    # complete objects with syntax slips are repaired
    ("{'decision': 'MATCH', 'recipe': 'coding', 'rationale': 'single quotes'}", "stop",
     "MATCH", "coding", "single quotes"),
    ('{"decision": "MATCH", "recipe": "coding", "rationale": "trailing",}', "stop",
     "MATCH", "coding", "trailing"),
    # an echoed format example before the real answer is skipped
    ('Format: {"decision": "MATCH|NONE", "recipe": "..."}\nAnswer: ' + OK, "stop",
     "MATCH", "coding", "Code."),
    # the same answer twice is one answer
    (OK + "\n" + OK, "stop", "MATCH", "coding", "Code."),
    # inner braces of the answer are not separate candidates
    ('{"decision": "MATCH", "recipe": "coding", "rationale": "a {b} c", "extra": {"d": 1}}',
     "stop", "MATCH", "coding", "a {b} c"),
    # a rationale in another JSON shape is text, never Python's repr
    ('{"decision": "MATCH", "recipe": "coding", "rationale": ["Code.", "With tests."]}',
     "stop", "MATCH", "coding", "Code. With tests."),
    ('{"decision": "NONE", "recipe": null, "rationale": {"why": "nothing fits"}}',
     "stop", "NONE", None, '{"why": "nothing fits"}'),
    ('{"decision": "MATCH", "recipe": "coding", "rationale": 42}', "stop",
     "MATCH", "coding", "42"),
]


@pytest.mark.parametrize(("reply", "finish", "decision", "recipe", "rationale"), PARSED)
def test_parses(reply: str, finish: str | None, decision: str, recipe: str | None,
                rationale: str) -> None:
    assert parse_reply(reply, finish) == Reply(decision, recipe, rationale)


FAILS = [
    # (reply, finish_reason, reason, rationale prefix)
    ("", "stop", NoneReason.NO_JSON, "LLM reply has no JSON object"),
    ("   \n", "stop", NoneReason.NO_JSON, "LLM reply has no JSON object"),
    ("I think the best recipe is essay-pipeline.", "stop", NoneReason.NO_JSON,
     "LLM reply has no JSON object"),
    ("<think>" + OK + "</think>", "stop", NoneReason.NO_JSON, "LLM reply has no JSON object"),
    ("<think>never closed " + OK, "stop", NoneReason.NO_JSON, "LLM reply has no JSON object"),
    ('{"decision": "MATCH", "recipe": "coding", "rationale": "truncated', "stop",
     NoneReason.JSON_ERROR, "JSON parse error: "),
    ('{"decision": "MATCH", "recipe": "coding"', "stop", NoneReason.JSON_ERROR,
     "JSON parse error: "),
    ("{decision MATCH", "stop", NoneReason.JSON_ERROR, "JSON parse error: "),
    # balanced but garbage: json-repair must not turn it into a MATCH
    ("{the decision is MATCH, recipe coding}", "stop", NoneReason.JSON_ERROR,
     "JSON parse error: "),
    ("{MATCH coding}", "stop", NoneReason.JSON_ERROR, "JSON parse error: "),
    (OK, "length", NoneReason.TRUNCATED, "LLM reply was cut off"),
    ('{"decision": "MATCH", "recipe": "cod', "length", NoneReason.TRUNCATED,
     "LLM reply was cut off"),
    ('{"decision": "MAYBE", "recipe": "coding"}', "stop", NoneReason.INVALID_DECISION,
     "invalid decision 'MAYBE'"),
    ('{"decision": 1, "recipe": "coding"}', "stop", NoneReason.INVALID_DECISION,
     "invalid decision 1"),
    ('{"decision": "MATCH", "recipe": null, "rationale": "?"}', "stop",
     NoneReason.INVALID_DECISION, "MATCH without a recipe name"),
    ('{"decision": "MATCH", "recipe": " `` ", "rationale": "?"}', "stop",
     NoneReason.INVALID_DECISION, "MATCH without a recipe name"),
    ('{"decision": "MATCH", "recipe": 3, "rationale": "the third"}', "stop",
     NoneReason.INVALID_DECISION, "recipe must be a name, got 3"),
    ('{"decision": "MATCH", "recipe": ["coding"]}', "stop", NoneReason.INVALID_DECISION,
     "recipe must be a name"),
    ('{"recipe": "coding"}', "stop", NoneReason.INVALID_DECISION, "LLM reply object has no"),
    (OK + '\n{"decision": "MATCH", "recipe": "python", "rationale": "or"}', "stop",
     NoneReason.AMBIGUOUS, "LLM reply holds several answers"),
    (OK + '\n{"decision": "NONE", "recipe": null, "rationale": "or not"}', "stop",
     NoneReason.AMBIGUOUS, "LLM reply holds several answers"),
]


@pytest.mark.parametrize(("reply", "finish", "reason", "prefix"), FAILS)
def test_failures(reply: str, finish: str | None, reason: NoneReason, prefix: str) -> None:
    with pytest.raises(SelectorFailure) as info:
        parse_reply(reply, finish)
    assert info.value.reason is reason
    assert info.value.rationale.startswith(prefix), info.value.rationale


@pytest.mark.parametrize(("name", "inventory", "prefix"), [
    ("essay-writer-pro", ["essay-pipeline", "coding"],
     "unknown recipe 'essay-writer-pro' — not in inventory"),
    ("Essay-Pipeline", ["essay-pipeline"], "unknown recipe 'Essay-Pipeline' — not in inventory"),
    ("root-shell", ["essay-pipeline"], "unknown recipe 'root-shell' — not in inventory"),
])
def test_names_are_compared_verbatim(name: str, inventory: list[str], prefix: str) -> None:
    with pytest.raises(SelectorFailure) as info:
        check_name(name, inventory)
    assert info.value.reason is NoneReason.UNKNOWN_RECIPE
    assert info.value.rationale.startswith(prefix)


def test_close_name_only_goes_into_the_rationale() -> None:
    with pytest.raises(SelectorFailure) as info:
        check_name("Essay-Pipeline", ["essay-pipeline", "coding"])
    assert "did you mean 'essay-pipeline'?" in info.value.rationale
    assert check_name("coding", ["essay-pipeline", "coding"]) == "coding"


@pytest.mark.parametrize(("raw", "clean"), [
    ("  coding ", "coding"), ("`coding`", "coding"), ("'coding'", "coding"),
    ('"coding"', "coding"), ("\u201ccoding\u201d", "coding"), ("**coding**", "**coding**"),
    ("coding.", "coding."), ("_slart/x/y", "_slart/x/y"),
])
def test_clean_name_trims_only_space_quotes_and_backticks(raw: str, clean: str) -> None:
    assert clean_name(raw) == clean


def test_strip_thinking() -> None:
    assert strip_thinking("a<think>b</think>c<think>d</think>e") == "a c e"
    assert strip_thinking("x</think>y") == "y"
    assert strip_thinking("y<think>z") == "y"


def test_balanced_span_ignores_braces_in_strings() -> None:
    text = 'pre {"a": "}{", "b": {"c": 1}} post'
    assert balanced_span(text, 4) == '{"a": "}{", "b": {"c": 1}}'
    assert balanced_span('{"a": 1', 0) is None
