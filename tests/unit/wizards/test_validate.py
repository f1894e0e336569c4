"""Form validation: one row per rule of DESIGN.md §8 "Validation before render"."""

from __future__ import annotations

from typing import Any

import pytest

from vance_cli.base import yamlio
from vance_cli.base.errors import FormInvalid
from vance_cli.wizards.model import WizardField
from vance_cli.wizards.validate import (
    ErrorCode,
    message_for,
    missing_required,
    parse_boolean,
    parse_integer,
    require_valid,
    validate_form,
)


def _field(**spec: Any) -> WizardField:
    return WizardField.model_validate(spec)


STRING = _field(name="s", type="string")
REQ_STRING = _field(name="s", type="string", required=True)
TEXTAREA = _field(name="s", type="textarea", required=True)
PASSWORD = _field(name="s", type="password")
INTEGER = _field(name="n", type="integer", integerMin=1, integerMax=10)
BOOLEAN = _field(name="b", type="boolean")
SELECT = _field(name="c", type="select", choices=["a", "no", "3.10"])
MULTI = _field(name="m", type="multi_select", choices=["a", "b", "c"], required=True)
REPEAT = _field(name="members", type="repeat", min=2, max=3, required=True,
                item=[{"name": "name", "type": "string", "required": True},
                      {"name": "age", "type": "integer"}])
DEFAULTED = _field(name="d", type="integer", required=True, defaultValue=5)

# (field, raw value, expected typed value or None, expected [(path, code)])
CASES: list[tuple[WizardField, Any, Any, list[tuple[str, str]]]] = [
    # missing: absent, null, blank string
    (REQ_STRING, None, "", [("s", "required")]),
    (REQ_STRING, "   ", "", [("s", "required")]),
    (STRING, None, "", []),
    (STRING, "  hi  ", "hi", []),
    (STRING, 42, "42", []),
    (STRING, True, None, [("s", "expected_string")]),
    (STRING, ["x"], None, [("s", "expected_string")]),
    (STRING, {"a": 1}, None, [("s", "expected_string")]),
    (TEXTAREA, "line 1\r\nline 2\r\n\r\n", "line 1\nline 2", []),
    (PASSWORD, "  secret  ", "  secret  ", []),
    # integers from text
    (INTEGER, "7", 7, []),
    (INTEGER, " +7 ", 7, []),
    (INTEGER, 7, 7, []),
    (INTEGER, "0", 0, [("n", "below_min")]),
    (INTEGER, "11", 11, [("n", "above_max")]),
    (INTEGER, "1e3", None, [("n", "expected_integer")]),
    (INTEGER, "1_000", None, [("n", "expected_integer")]),
    (INTEGER, "42.0", None, [("n", "expected_integer")]),
    (INTEGER, 12.5, None, [("n", "expected_integer")]),
    (INTEGER, 4.0, None, [("n", "expected_integer")]),
    (INTEGER, "twelve", None, [("n", "expected_integer")]),
    (INTEGER, True, None, [("n", "expected_integer")]),
    (INTEGER, "٣", None, [("n", "expected_integer")]),  # Arabic-Indic 3: not ASCII
    (INTEGER, "99999999999", None, [("n", "expected_integer")]),
    (INTEGER, "", None, []),
    # booleans from text
    (BOOLEAN, "YES", True, []),
    (BOOLEAN, "no", False, []),
    (BOOLEAN, "1", True, []),
    (BOOLEAN, 0, False, []),
    (BOOLEAN, False, False, []),
    (BOOLEAN, "on", None, [("b", "expected_boolean")]),
    (BOOLEAN, "maybe", None, [("b", "expected_boolean")]),
    (BOOLEAN, None, False, []),
    # select: whitelist, compared as text
    (SELECT, "a", "a", []),
    (SELECT, " no ", "no", []),
    (SELECT, "3.1", "3.1", [("c", "invalid_choice")]),
    (SELECT, "b", "b", [("c", "invalid_choice")]),
    (SELECT, ["a"], None, [("c", "expected_string")]),
    # multi_select
    (MULTI, ["a", "c"], ["a", "c"], []),
    (MULTI, "a, b", ["a", "b"], []),
    (MULTI, ["a", "x", "b", "y"], ["a", "b"], [("m[1]", "invalid_choice"),
                                                ("m[3]", "invalid_choice")]),
    (MULTI, [], [], [("m", "required")]),
    (MULTI, [{"a": 1}], [], [("m", "expected_string_list")]),
    (MULTI, 5, [], [("m", "expected_string_list")]),
    # repeat: bounds, recursion, 0-based paths
    (REPEAT, [{"name": "a"}, {"name": "b", "age": "3"}], [{"name": "a"}, {"name": "b", "age": 3}],
     []),
    (REPEAT, [{"name": "a"}], [{"name": "a"}], [("members", "too_few_entries")]),
    (REPEAT, [{"name": "a"}] * 4, [{"name": "a"}] * 4, [("members", "too_many_entries")]),
    (REPEAT, [{"name": "a"}, {"name": ""}, {"age": "x"}], None,
     [("members[1].name", "required"), ("members[2].name", "required"),
      ("members[2].age", "expected_integer")]),
    (REPEAT, [{"name": "a"}, "b"], None, [("members[1]", "expected_object")]),
    (REPEAT, {"name": "a"}, [], [("members", "expected_array")]),
    (REPEAT, [], [], [("members", "required")]),
    # defaults fill missing values
    (DEFAULTED, None, 5, []),
    (DEFAULTED, "  ", 5, []),
    (DEFAULTED, "8", 8, []),
]


@pytest.mark.parametrize(("field", "raw", "value", "errors"), CASES,
                         ids=[f"{c[0].type.value}-{c[1]!r}"[:40] for c in CASES])
def test_validation_rule(field: WizardField, raw: Any, value: Any,
                         errors: list[tuple[str, str]]) -> None:
    result = validate_form([field], {} if raw is None else {field.name: raw})
    assert [(e.field, e.error.value) for e in result.errors] == errors
    if value is not None:
        assert result.values.get(field.name) == value


def test_all_errors_are_collected_across_fields() -> None:
    fields = [REQ_STRING, INTEGER, REPEAT]
    result = validate_form(fields, {"n": "x", "members": [{"name": ""}]})
    assert [e.to_json() for e in result.errors] == [
        {"field": "s", "error": "required"},
        {"field": "n", "error": "expected_integer"},
        {"field": "members", "error": "too_few_entries"},
        {"field": "members[0].name", "error": "required"},
    ]
    assert result.to_json() == {"errors": [e.to_json() for e in result.errors]}


def test_unknown_keys_are_ignored_and_missing_optional_integer_stays_undefined() -> None:
    result = validate_form([INTEGER, STRING], {"nope": 1})
    assert result.ok and result.values == {"s": ""}


def test_require_valid_raises_form_invalid_with_every_error() -> None:
    with pytest.raises(FormInvalid) as caught:
        require_valid([REQ_STRING, INTEGER], {"n": "99"})
    assert caught.value.to_json() == {"errors": [{"field": "s", "error": "required"},
                                                 {"field": "n", "error": "above_max"}]}
    assert caught.value.exit_code == 2


def test_yaml_numbers_keep_their_written_text() -> None:
    data = yamlio.loads("c: 3.10\nn: 010\nhex: 0x10\n")
    assert validate_form([SELECT], data).values["c"] == "3.10"
    hexed = _field(name="hex", type="integer")
    assert validate_form([hexed], data).errors[0].error is ErrorCode.EXPECTED_INTEGER
    assert validate_form([_field(name="n", type="integer")], data).values["n"] == 10


@pytest.mark.parametrize(("text", "value"), [
    ("-2147483648", -2147483648), ("2147483647", 2147483647), ("2147483648", None),
    ("-2147483649", None), ("  -0 ", 0), ("+", None), ("", None), ("1 2", None),
])
def test_parse_integer_32_bit_range(text: str, value: int | None) -> None:
    assert parse_integer(text) == value


@pytest.mark.parametrize(("text", "value"), [
    ("true", True), ("TRUE", True), (" Yes ", True), ("1", True),
    ("false", False), ("No", False), ("0", False), ("off", None), ("y", None), ("", None),
])
def test_parse_boolean(text: str, value: bool | None) -> None:
    assert parse_boolean(text) == value


def test_every_error_code_has_a_message_in_both_languages() -> None:
    for lang in ("en", "de"):
        for code in ErrorCode:
            assert message_for(INTEGER, code, lang)
    assert message_for(INTEGER, ErrorCode.BELOW_MIN, "de") == "muss mindestens 1 sein"
    assert message_for(SELECT, ErrorCode.INVALID_CHOICE, "en") == "not one of: a, no, 3.10"


def test_error_codes_are_the_documented_set() -> None:
    assert {c.value for c in ErrorCode} == {
        "required", "expected_string", "expected_integer", "below_min", "above_max",
        "expected_boolean", "invalid_choice", "expected_string_list", "expected_array",
        "too_few_entries", "too_many_entries", "expected_object", "unknown_field_type"}


def test_missing_required_names_fields_without_values_or_defaults() -> None:
    assert missing_required([REQ_STRING, DEFAULTED, REPEAT, STRING], {"members": []}) == [
        "s", "members"]
