"""A tool's arguments: a pydantic model made from the dataclasses the command line uses.

Rules (docs/mcp.md "Tools"):
- A tool's input schema is generated from dataclass fields — a core value
  such as ``DelegateRequest`` or ``ProcessSpec``, or one of the option
  values in ``mcp/options.py`` — never written by hand: types and defaults
  come from the fields, descriptions from the class's ``Attributes:``
  docstring section.
- Arguments are camelCase, as the keys of the JSON documents
  (``steerContent``, ``processId``); an argument the tool does not know is
  refused, as the command line refuses an unknown flag.
- Validated arguments become instances of those same dataclasses, so a tool
  calls the core exactly as its command does.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from vance_cli.base.errors import InputError
from vance_cli.base.records import frozen

_ATTRIBUTE = re.compile(r"^    (\w+): ?(.*)$")
"""One ``name: text`` entry of a Google-style ``Attributes:`` section (after ``getdoc``)."""


@frozen
class Part:
    """Fields of one dataclass that a tool takes as arguments.

    Attributes:
        source: the dataclass (frozen; fields not offered keep their defaults).
        names: field name → argument name, in the order the schema lists them.
        notes: argument descriptions that replace the docstring's, by field name
            (for a field whose docstring speaks to developers, not to callers).
    """

    source: type[Any]
    names: Mapping[str, str]
    notes: Mapping[str, str] = field(default_factory=dict)

    def build(self, values: Mapping[str, Any]) -> Any:
        """Return an instance of ``source`` from validated values (by field name)."""
        return self.source(**{name: values[name] for name in self.names})


def attribute_docs(cls: type[Any]) -> dict[str, str]:
    """Return the ``Attributes:`` entries of a class docstring as one line each.

    Returns:
        Field name → its description, continuation lines joined, RST double
        backticks made single (Markdown code, as a calling model reads it).
    """
    docs: dict[str, str] = {}
    current: str | None = None
    inside = False
    for line in (inspect.getdoc(cls) or "").splitlines():
        if line.strip() == "Attributes:":
            inside = True
            continue
        if not inside:
            continue
        if line and not line.startswith(" "):
            break  # the next section
        match = _ATTRIBUTE.match(line)
        if match:
            current = match.group(1)
            docs[current] = match.group(2).strip()
        elif current is not None and line.strip():
            docs[current] += " " + line.strip()
    return {name: text.replace("``", "`") for name, text in docs.items()}


def _field_info(spec: dataclasses.Field[Any], alias: str, description: str | None) -> Any:
    """Return the pydantic field of a dataclass field: its default, alias and description."""
    if spec.default is not dataclasses.MISSING:
        return Field(spec.default, alias=alias, description=description)
    if spec.default_factory is not dataclasses.MISSING:
        return Field(default_factory=spec.default_factory, alias=alias, description=description)
    return Field(alias=alias, description=description)


def arguments_model(tool: str, parts: Sequence[Part]) -> type[BaseModel]:
    """Build the pydantic model of a tool's arguments from its parts' dataclass fields.

    Args:
        tool: the tool's name (names the model).
        parts: the dataclasses and the fields each offers.

    Returns:
        A model that validates by argument name and forbids unknown arguments.

    Raises:
        KeyError: a part names a field its dataclass does not have.
        ValueError: two parts offer the same field name.
    """
    definitions: dict[str, Any] = {}
    for part in parts:
        hints = typing.get_type_hints(part.source)
        docs = {**attribute_docs(part.source), **part.notes}
        specs = {spec.name: spec for spec in dataclasses.fields(part.source)}
        for name, argument in part.names.items():
            if name in definitions:
                raise ValueError(f"tool {tool}: field '{name}' is offered twice")
            definitions[name] = (hints[name], _field_info(specs[name], argument, docs.get(name)))
    config = ConfigDict(extra="forbid", populate_by_name=False)
    model: type[BaseModel] = create_model(tool, __config__=config, **definitions)
    return model


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Return the JSON schema of a tool's arguments, without pydantic's generated titles.

    The titles repeat each argument's name ("Steercontent"); a calling model
    reads the names and descriptions.
    """
    schema = model.model_json_schema(by_alias=True)
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def parse_arguments(model: type[BaseModel], parts: Sequence[Part],
                    arguments: Mapping[str, Any]) -> list[Any]:
    """Validate a call's arguments and return one dataclass instance per part, in order.

    Raises:
        InputError: an argument is missing, unknown or of the wrong type; the
            message names every such argument (``errors`` holds them).
    """
    try:
        values = model.model_validate(dict(arguments))
    except ValidationError as exc:
        errors = [{"argument": ".".join(str(p) for p in e["loc"]), "error": e["msg"]}
                  for e in exc.errors()]
        raise InputError("invalid arguments: " + "; ".join(
            f"{e['argument']}: {e['error']}" for e in errors), errors=errors) from None
    by_field = {name: getattr(values, name) for name in type(values).model_fields}
    return [part.build(by_field) for part in parts]
