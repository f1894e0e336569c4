from __future__ import annotations

import pytest

from vance_cli.catalog import bundled_catalog, parse_catalog
from vance_cli.errors import CatalogError, UnknownEngine

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
        ("engines: [a, b]", "non-empty mapping"),
        ("- a", "top level"),
        ("engines:\n  Ford!:\n    purpose: p\n    when_to_use: w\n    not_for: n\n",
         "not valid"),
        ("engines:\n  ford:\n    purpose: p\n    when_to_use: ''\n    not_for: n\n",
         "engines.ford.when_to_use: required"),
        ("engines:\n  ford:\n    purpose: p\n    when_to_use: w\n    not_for: n\n    x: 1\n",
         "unknown keys x"),
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
