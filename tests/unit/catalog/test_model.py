from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from vance_cli.base.errors import CatalogError, UnknownEngine
from vance_cli.catalog.model import (
    DIGEST_KEY,
    Catalog,
    bundled_catalog,
    catalog_from_record,
    catalog_to_record,
    parse_catalog,
    record_digest,
)

SIX = ["arthur", "ford", "marvin", "vogon", "zaphod", "slartibartfast"]


def test_bundled_catalog_has_the_six_engines() -> None:
    catalog = bundled_catalog()
    assert sorted(catalog.names) == sorted(SIX)
    assert catalog.source == "bundled"
    for engine in catalog.engines.values():
        assert engine.purpose and engine.when_to_use and engine.not_for


def test_unknown_engine_lists_available() -> None:
    with pytest.raises(UnknownEngine, match="ford"):
        bundled_catalog().get("deep-thought")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("engines: [a, b]", "c.yaml:1: engines: expected a mapping"),
        ("engines: {}", "engines: must name at least one engine"),
        ("- a", "top level must be a mapping"),
        ("engines:\n  Ford!:\n    purpose: p\n    when_to_use: w\n    not_for: n\n",
         "engines.Ford!: engine name 'Ford!' is not valid"),
        ("engines:\n  ford:\n    purpose: p\n    when_to_use: ''\n    not_for: n\n",
         "c.yaml:4: engines.ford.when_to_use: must not be empty"),
        ("engines:\n  ford:\n    purpose: p\n    when_to_use: w\n    not_for: n\n    x: 1\n",
         "c.yaml:6: engines.ford.x: unknown key"),
        ("engines:\n  ford:\n    purpose: p\n    when_to_us: w\n    not_for: n\n",
         r"engines.ford.when_to_us: unknown key \(did you mean 'when_to_use'\?\)"),
        ("engines:\n  ford:\n    purpose: p\n    when_to_use: w\n    not_for: n\nfoo: 1\n",
         "c.yaml:6: foo: unknown key"),
        ("engine:\n  ford: {}\n", r"engine: unknown key \(did you mean 'engines'\?\)"),
        ("foo: 1\n", "engines: missing required key; c.yaml:1: foo: unknown key"),
    ],
)
def test_catalog_validation(text: str, message: str) -> None:
    with pytest.raises(CatalogError, match=message):
        parse_catalog(text, "c.yaml")


def test_catalog_syntax_error_has_position() -> None:
    with pytest.raises(CatalogError) as info:
        parse_catalog("engines:\n  ford: {purpose: p\n", "c.yaml")
    assert info.value.details["line"] is not None
    assert "c.yaml:" in str(info.value)


@pytest.mark.parametrize(("value", "text"), [("3.10", "3.10"), ("010", "010"), ("42", "42"),
                                            ("true", "true")])
def test_scalar_text_fields_keep_what_was_written(value: str, text: str) -> None:
    catalog = parse_catalog(f"engines:\n  ford:\n    purpose: p\n    when_to_use: {value}\n"
                            "    not_for: n\n", "c.yaml")
    assert catalog.engines["ford"].when_to_use == text


def _record(catalog: Catalog | None = None) -> dict:
    return json.loads(catalog_to_record(catalog or bundled_catalog()))


def test_record_round_trips_and_carries_its_digest() -> None:
    record = _record()
    assert record[DIGEST_KEY] == record_digest(record)
    again = catalog_from_record(json.dumps(record, indent=4))  # indentation does not matter
    assert again.engines == bundled_catalog().engines


def _without_ford(record: dict) -> dict:
    return {**record, "engines": [e for e in record["engines"] if e["name"] != "ford"]}


@pytest.mark.parametrize(("edit", "reason"), [
    (_without_ford, "its content does not match its 'recordDigest' (edited by hand?)"),
    (lambda r: {k: v for k, v in _without_ford(r).items() if k != DIGEST_KEY},
     "it has no 'recordDigest'"),
    (lambda r: {**r, "source": "/elsewhere.yaml"}, "does not match its 'recordDigest'"),
])
def test_a_hand_edited_record_is_damaged(edit: Callable[[dict], dict], reason: str) -> None:
    with pytest.raises(CatalogError) as caught:
        catalog_from_record(json.dumps(edit(_record())))
    assert caught.value.message.startswith("active catalog record is damaged: ")
    assert reason in caught.value.message


def _resealed(record: dict) -> str:
    return json.dumps({**record, DIGEST_KEY: record_digest(record)})


@pytest.mark.parametrize(("edit", "reason"), [
    (lambda r: {**r, "engines": [{k: v for k, v in e.items() if k != "when_to_use"}
                                 if e["name"] == "ford" else e for e in r["engines"]]},
     "engine 'ford' has no 'when_to_use'"),
    (lambda r: {**r, "engines": [{"purpose": "p"}]}, "engine #1 has no 'name'"),
    (lambda r: {k: v for k, v in r.items() if k != "source"}, "'source' is missing"),
    (lambda r: {**r, "engines": []}, "'engines' is missing or empty"),
])
def test_a_broken_record_says_what_is_missing(edit: Callable[[dict], dict], reason: str) -> None:
    with pytest.raises(CatalogError) as caught:
        catalog_from_record(_resealed(edit(_record())))
    assert caught.value.message == f"active catalog record is damaged: {reason}"

