"""Tool arguments come from the CLI's dataclasses: schemas generated, values parsed back."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from vance_cli.base.errors import InputError
from vance_cli.delegate.request import DelegateRequest
from vance_cli.mcp.arguments import (
    Part,
    arguments_model,
    attribute_docs,
    input_schema,
    parse_arguments,
)
from vance_cli.mcp.options import DelegateRun
from vance_cli.mcp.tools import BY_NAME, TOOLS, Tool


@dataclass(frozen=True, slots=True)
class Sample:
    """A sample.

    Attributes:
        first_name: the first line,
            and its ``continuation``.
        count: how many.

    Raises:
        Nothing: a later section is not an attribute.
    """

    first_name: str
    count: int = 2


def test_attribute_docs_reads_the_attributes_section() -> None:
    assert attribute_docs(Sample) == {"first_name": "the first line, and its `continuation`.",
                                      "count": "how many."}


def test_the_schema_comes_from_the_fields_types_defaults_and_docs() -> None:
    part = Part(Sample, {"first_name": "firstName", "count": "count"}, notes={"count": "N."})
    schema = input_schema(arguments_model("sample", [part]))
    assert schema == {
        "type": "object", "additionalProperties": False, "required": ["firstName"],
        "properties": {
            "firstName": {"type": "string", "description": "the first line, and its "
                          "`continuation`."},
            "count": {"type": "integer", "default": 2, "description": "N."},
        },
    }


DELEGATE = [Part(DelegateRequest, {"task": "task", "name": "name", "steer": "steerContent",
                                   "params": "params"}),
            Part(DelegateRun, {"wait": "wait"})]


def test_arguments_become_the_core_values() -> None:
    model = arguments_model("delegate", DELEGATE)
    request, run = parse_arguments(model, DELEGATE, {
        "task": "Translate this", "steerContent": "formal", "params": {"targetLanguage": "fr"},
        "wait": True})
    assert request == DelegateRequest(task="Translate this", steer="formal",
                                      params={"targetLanguage": "fr"})
    assert run == DelegateRun(wait=True)


@pytest.mark.parametrize(("arguments", "named"), [
    ({}, "task: Field required"),
    ({"task": "x", "steer": "y"}, "steer: Extra inputs are not permitted"),
    ({"task": "x", "params": [1]}, "params: Input should be a valid dictionary"),
    ({"task": "x", "wait": "maybe"}, "wait: Input should be a valid boolean"),
])
def test_invalid_arguments_are_one_input_error_naming_each(arguments: dict[str, object],
                                                          named: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_arguments(arguments_model("delegate", DELEGATE), DELEGATE, arguments)
    assert caught.value.message.startswith("invalid arguments: ")
    assert named in caught.value.message


def test_a_field_offered_twice_is_refused() -> None:
    part = Part(DelegateRun, {"wait": "wait"})
    with pytest.raises(ValueError, match="offered twice"):
        arguments_model("twice", [part, part])


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_property_is_a_dataclass_field_with_a_description(tool: Tool) -> None:
    schema = tool.input_schema
    offered = {argument: (part.source, name) for part in tool.parts
               for name, argument in part.names.items()}
    assert set(schema["properties"]) == set(offered)
    for argument, (source, name) in offered.items():
        assert name in {f.name for f in dataclasses.fields(source)}
        assert schema["properties"][argument].get("description"), argument
    assert schema["additionalProperties"] is False


def test_the_delegate_tool_takes_the_issue_s_arguments() -> None:
    schema = BY_NAME["process_create_delegate"].input_schema
    assert list(schema["properties"]) == [
        "task", "name", "title", "steerContent", "params", "fallbackOnNone", "asyncFallback",
        "wait"]
    assert schema["required"] == ["task"]
    assert schema["properties"]["fallbackOnNone"]["default"] is True
