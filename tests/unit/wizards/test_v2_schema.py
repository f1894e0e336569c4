"""Wizards v2 in the schema and the render: showIf, steps (docs/wizards.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vance_cli.base.errors import DocumentError, FormInvalid
from vance_cli.documents.cascade import Layer
from vance_cli.wizards.loader import LoadedWizard, parse_wizard
from vance_cli.wizards.prompt import RenderContext, build_prompt

CONTEXT = RenderContext("en", "u", "_tenant")


def _wizard(template: str, *fields: dict[str, Any], **keys: Any) -> LoadedWizard:
    return parse_wizard({"title": "T", "promptTemplate": template, "fields": list(fields),
                         **keys}, "t", Layer.RESOURCE, Path("t.yaml"))


FORMAL = _wizard(
    "{{ tone }}|{{ greeting is defined }}|{{ sign }}",
    {"name": "tone", "type": "select", "choices": ["formal", "casual"], "required": True},
    {"name": "greeting", "type": "string", "required": True, "showIf": 'tone == "formal"'},
    {"name": "sign", "type": "string", "showIf": 'tone == "formal"', "defaultValue": "Regards"},
)


def test_a_required_field_hidden_by_show_if_does_not_block_the_render() -> None:
    prompt = build_prompt(FORMAL, {"tone": "casual"}, CONTEXT)
    assert prompt.text == "casual|False|Regards"  # hidden: absent, unless it has a default


def test_a_hidden_field_is_not_validated_even_when_given() -> None:
    assert build_prompt(FORMAL, {"tone": "casual", "greeting": ""}, CONTEXT).text \
        == "casual|False|Regards"


def test_a_shown_required_field_is_still_required() -> None:
    with pytest.raises(FormInvalid) as caught:
        build_prompt(FORMAL, {"tone": "formal"}, CONTEXT)
    assert [e["field"] for e in caught.value.errors] == ["greeting"]
    assert build_prompt(FORMAL, {"tone": "formal", "greeting": "Dear"}, CONTEXT).text \
        == "formal|True|Regards"


def test_show_if_over_a_list_length_and_a_boolean() -> None:
    wizard = _wizard(
        "{{ chair | default('-') }}|{{ test | default('-') }}",
        {"name": "members", "type": "multi_select", "choices": ["a", "b", "c"]},
        {"name": "chair", "type": "string", "showIf": "members | length > 2"},
        {"name": "now", "type": "boolean"},
        {"name": "test", "type": "string", "showIf": "now"},
    )
    assert build_prompt(wizard, {"members": "a,b", "chair": "x", "test": "q"}, CONTEXT).text \
        == "-|-"
    assert build_prompt(wizard, {"members": "a,b,c", "chair": "x", "now": "yes", "test": "q"},
                        CONTEXT).text == "x|q"


@pytest.mark.parametrize(("condition", "reason"), [
    ("later == 1", "fields[0].showIf: 'later' is a later field"),
    ("nosuch", "fields[0].showIf: 'nosuch' is not a field"),
    ("first", "fields[0].showIf: 'first' is the field itself"),
    ("(", "fields[0].showIf:"),
])
def test_lint_reports_a_show_if_naming_an_unknown_or_later_field(condition: str,
                                                                 reason: str) -> None:
    with pytest.raises(DocumentError) as caught:
        _wizard("x", {"name": "first", "type": "string", "showIf": condition},
                {"name": "later", "type": "integer"})
    assert reason in caught.value.message


def test_show_if_may_read_the_built_in_variables() -> None:
    wizard = _wizard("{{ a | default('-') }}", {"name": "a", "type": "string",
                                                 "showIf": 'lang == "de"'})
    assert build_prompt(wizard, {"a": "x"}, CONTEXT).text == "-"


STEPS = [{"title": "One", "fields": ["a"]}, {"title": {"en": "Two", "de": "Zwei"},
                                               "fields": ["b", "c"]}]


def test_steps_group_the_fields_into_pages() -> None:
    wizard = _wizard("x", {"name": "a", "type": "string"}, {"name": "b", "type": "string"},
                     {"name": "c", "type": "string"}, steps=STEPS)
    assert [(title, [f.name for f in fields]) for title, fields in wizard.spec.steps_in("de")] \
        == [("One", ["a"]), ("Zwei", ["b", "c"])]


@pytest.mark.parametrize(("steps", "reason"), [
    ([{"title": "One", "fields": ["a", "zz"]}], "steps[0].fields: 'zz' is not a field"),
    ([{"title": "One", "fields": ["a"]}, {"title": "Two", "fields": ["a", "b", "c"]}],
     "'a' is on two steps"),
    ([{"title": "One", "fields": ["a", "b"]}], "field c on no step"),
    ([{"title": "One", "fields": ["b", "a", "c"]}], "another order"),
    ([{"title": "One"}], "steps[0].fields: missing required key"),
    ([{"title": "One", "fields": ["a", "b", "c"], "colour": 1}], "colour"),
])
def test_the_schema_refuses_bad_steps_with_the_field_named(steps: Any, reason: str) -> None:
    with pytest.raises(DocumentError) as caught:
        _wizard("x", {"name": "a", "type": "string"}, {"name": "b", "type": "string"},
                {"name": "c", "type": "string"}, steps=steps)
    assert reason in caught.value.message


@pytest.mark.parametrize("compile_now", [True, False], ids=["load", "listing"])
@pytest.mark.parametrize(("source", "reason"), [
    ("{{ members", "validatorPrompt line 1:"),
    ("{% include 'x' %}", "validatorPrompt line 1:"),
])
def test_a_validator_prompt_that_does_not_compile_breaks_the_wizard(
        source: str, reason: str, compile_now: bool) -> None:
    with pytest.raises(DocumentError) as caught:
        parse_wizard({"title": "T", "promptTemplate": "x", "validatorPrompt": source,
                      "fields": [{"name": "members", "type": "string"}]},
                     "t", Layer.RESOURCE, Path("t.yaml"), compile_now)
    assert caught.value.reason.startswith(reason), caught.value.message
