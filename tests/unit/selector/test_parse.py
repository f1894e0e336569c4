"""The tolerant reply parser: one row per rule (DESIGN.md §5 step 5)."""

from __future__ import annotations

import pytest

from vance_cli.selector.decision import NoneReason, SelectorFailure
from vance_cli.selector.parse import (
    Reply,
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


def test_a_cut_off_object_is_never_repaired() -> None:
    with pytest.raises(SelectorFailure) as info:
        parse_reply("{'decision': 'MATCH', 'recipe': 'coding'", "stop")
    assert info.value.reason is NoneReason.JSON_ERROR


# Hostile replies: each ends quickly (linear time; bench/replies.py prints the figures)
# with the reason a broken reply gets, never another exception.
HOSTILE = [
    ("{" * 200 + "}" * 200, NoneReason.INVALID_DECISION),
    ("{" * 500 + "a" * 9000 + "}" * 500, NoneReason.JSON_ERROR),
    ("<think>" * 14285, NoneReason.NO_JSON),
    ("</think>" * 14285, NoneReason.NO_JSON),
    ('{"decision": "NONE", "x": ' + "[" * 10_000 + "]" * 10_000 + "}", NoneReason.JSON_ERROR),
    ("{'a':" * 30_000, NoneReason.JSON_ERROR),
    ('{"x":"' * 30_000, NoneReason.JSON_ERROR),
    ('{"a":[' + "1," * 90_000, NoneReason.JSON_ERROR),
    ("{}" * 90_000, NoneReason.INVALID_DECISION),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("reply", "reason"), HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_replies_end_as_a_none_reason(reply: str, reason: NoneReason) -> None:
    with pytest.raises(SelectorFailure) as info:
        parse_reply(reply, "stop")
    assert info.value.reason is reason


def test_deep_nesting_is_a_json_error_not_a_recursion_error() -> None:
    with pytest.raises(SelectorFailure) as info:
        parse_reply('{"decision": "MATCH", "recipe": ' + "[" * 10_000 + "]" * 10_000 + "}",
                    "stop")
    assert info.value.reason is NoneReason.JSON_ERROR
    assert "nested too deeply" in info.value.rationale


@pytest.mark.parametrize("reply", [
    '{"decision": "NONE", "recipe": null, "rationale": "I never use <think> tags"}',
    '{"decision": "NONE", "recipe": null, "rationale": "no </think> here"}',
    '<think>hm</think>{"decision": "NONE", "rationale": "a <thinking> b </think> c"}',
])
def test_think_tags_inside_the_answer_are_text(reply: str) -> None:
    assert parse_reply(reply, "stop").decision == "NONE"
    assert "think" in parse_reply(reply, "stop").rationale


def test_a_draft_inside_a_think_block_is_not_an_answer() -> None:
    reply = ('<think>maybe {"decision": "MATCH", "recipe": "x", "rationale": "</think>"}'
             "</think>" + OK)
    assert parse_reply(reply, "stop") == Reply("MATCH", "coding", "Code.")


@pytest.mark.parametrize("reply", [
    '{"decision": "MATCH", "recipe": "coding", "recipe": "python"}',
    '{"decision": "MATCH", "recipe": "coding", "Recipe": "python"}',
    '{"decision": "MATCH", "decision": "NONE", "recipe": "coding"}',
    "{'decision': 'MATCH', 'recipe': 'coding', 'recipe': 'python'}",
])
def test_a_key_given_twice_differently_is_ambiguous(reply: str) -> None:
    with pytest.raises(SelectorFailure) as info:
        parse_reply(reply, "stop")
    assert info.value.reason is NoneReason.AMBIGUOUS
    assert info.value.rationale.startswith("LLM reply holds several answers that disagree")


def test_a_key_given_twice_alike_is_one_answer() -> None:
    assert parse_reply('{"decision": "MATCH", "recipe": "coding", "recipe": "coding"}',
                       "stop") == Reply("MATCH", "coding", "")


@pytest.mark.parametrize("reply", ["NONE", " none\n", "`NONE`", '"NONE"', "**NONE**", "NONE.",
                                   "<think>no idea</think>NONE"])
def test_a_bare_none_is_the_models_answer(reply: str) -> None:
    assert parse_reply(reply, "stop") == Reply("NONE", None, "")


def test_an_answer_wrapped_in_another_object_is_found() -> None:
    assert parse_reply('{"answer": ' + OK + "}", "stop") == Reply("MATCH", "coding", "Code.")


def test_a_deeply_nested_rationale_is_text() -> None:
    reply = ('{"decision": "NONE", "rationale": ' + "[" * 900 + '"deep"' + "]" * 900 + "}")
    assert parse_reply(reply, "stop").rationale == "deep"
