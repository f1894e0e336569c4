from __future__ import annotations

from pathlib import Path

import pytest

from vance_cli.base import files, yaml_dialect, yaml_types, yamlio
from vance_cli.base.errors import DocumentError


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        ("v: no", "no", str),
        ("v: on", "on", str),
        ("v: yes", "yes", str),
        ("v: off", "off", str),
        ("v: true", True, bool),
        ("v: False", False, bool),
        ("v: 3.10", 3.1, float),
        ("v: 010", 10, int),
        ("v: 1_000", "1_000", str),
        ("v: 2026-01-01", "2026-01-01", str),
        ("v: 1:30", "1:30", str),
        ("v: ~", None, type(None)),
        ("v:", None, type(None)),
    ],
)
def test_yaml_12_scalars(text: str, expected: object, kind: type) -> None:
    value = yamlio.loads(text)["v"]
    assert value == expected
    assert isinstance(value, kind)


@pytest.mark.parametrize(("text", "source"), [("v: 3.10", "3.10"), ("v: 010", "010"),
                                              ("v: 1e3", "1e3"), ("v: true", "true"),
                                              ("v: plain", "plain")])
def test_numbers_keep_their_written_text(text: str, source: str) -> None:
    assert yaml_types.as_text(yamlio.loads(text)["v"]) == source


def test_bom_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes("\ufeffname: Tee\n".encode())
    assert yamlio.load_mapping(path) == {"name": "Tee"}


def test_invalid_utf8_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(DocumentError) as info:
        yamlio.load_file(path)
    assert "bad.yaml" in str(info.value) and "UTF-8" in str(info.value)


def test_syntax_error_has_line_and_column() -> None:
    with pytest.raises(DocumentError) as info:
        yamlio.loads("a: 1\nb: [1, 2\nc: 3\n", source="x.yaml")
    assert info.value.path == "x.yaml"
    assert info.value.line == 3
    assert str(info.value).startswith("x.yaml:3:")


def test_duplicate_key_is_an_error() -> None:
    with pytest.raises(DocumentError, match="duplicate key 'a'") as info:
        yamlio.loads("a: 1\nb: 2\na: 3\n")
    assert info.value.line == 3


def test_merge_keys_still_work() -> None:
    data = yamlio.loads("base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n")
    assert data["m"] == {"x": 1, "y": 2}


def test_unsafe_tags_are_refused() -> None:
    with pytest.raises(DocumentError):
        yamlio.loads("v: !!python/object/apply:os.system ['true']")


def test_top_level_must_be_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n")
    with pytest.raises(DocumentError, match="expected a mapping"):
        yamlio.load_mapping(path)


def test_atomic_write_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "c.yaml"
    files.atomic_write_text(path, yamlio.dumps({"llm": {"model": "m", "timeout": 3.5}}),
                             mode=0o600)
    assert yamlio.load_mapping(path) == {"llm": {"model": "m", "timeout": 3.5}}
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["c.yaml"]


@pytest.mark.skipif(not getattr(__import__("yaml"), "__with_libyaml__", False),
                    reason="PyYAML built without LibYAML")
def test_reader_uses_the_libyaml_parser_when_present() -> None:
    import yaml

    assert issubclass(yaml_dialect.VanceLoader, yaml.CSafeLoader)
    assert yaml_dialect.VanceLoader.__mro__.index(yaml.CSafeLoader) == 1
    assert yaml.cyaml.CParser in yaml_dialect.VanceLoader.__mro__


def _laughs(levels: int) -> str:
    text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, levels):
        text += f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n"
    return text


@pytest.mark.timeout(10)
@pytest.mark.parametrize("text", [_laughs(9), "a: &a [1, *a]\n"])
def test_aliases_that_expand_without_end_are_refused(text: str) -> None:
    with pytest.raises(DocumentError, match="aliases"):
        yamlio.loads(text)


def test_ordinary_aliases_still_load() -> None:
    assert yamlio.loads(_laughs(3))["a2"][0][0] == ["x"] * 10
    assert yamlio.loads("a: &a [1, 2]\nb: *a\n") == {"a": [1, 2], "b": [1, 2]}
