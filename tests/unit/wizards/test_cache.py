"""The wizard listing cache: warm listings skip YAML and template compilation, and nothing else."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers import build_file_tree
from wizard_cases import BROKEN

from vance_cli.base import yaml_types, yamlio
from vance_cli.base.config import load_settings
from vance_cli.documents.cache import pack_yaml, unpack_yaml
from vance_cli.documents.cascade import Kind
from vance_cli.wizards import loader
from vance_cli.wizards.loader import WizardLoadReport, load_cascade
from vance_cli.wizards.prompt import RenderContext, build_prompt
from vance_cli.workspace import Workspace

WIZARD = """\
title: {de: Zahlen, en: Numbers}
category: Tests
fields:
  - name: version
    type: select
    required: true
    choices:
      - {value: 3.10, label: Three ten}
      - {value: "010", label: {en: on, de: no}}
  - name: count
    type: integer
    integerMin: 1
    integerMax: 0x10
    defaultValue: 2
promptTemplate: "Use {{ version }} x{{ count }}"
suggestedFollowUps:
  - {wizard: numbers, label: "Again with {{ version }}", prefill: {version: "{{ version }}"}}
"""


def _list() -> WizardLoadReport:
    ws = Workspace(load_settings())
    return load_cascade(ws.cascade(Kind.WIZARDS), ws.wizard_cache)


def _summaries(report: WizardLoadReport) -> list[tuple[str, object, object]]:
    return [(w.name, w.spec, w.summary("de")) for w in report.wizards]


@pytest.mark.parametrize("text", [
    "a: 3.10\nb: 010\nc: [1, 1e3, .nan, -.inf, 0x1F, no, true, ~, 's']\nd: {x: {y: 2}}\n",
    "42", "plain", "[1, [2.50, {k: 007}]]", "",
])
def test_pack_and_unpack_keep_numbers_as_written(text: str) -> None:
    data = yamlio.loads(text)
    back = unpack_yaml(json.loads(json.dumps(pack_yaml(data))))

    def same(a: object, b: object) -> bool:
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b) and yaml_types.as_text(a) == \
                yaml_types.as_text(b)
        return type(a) is type(b) and a == b and yaml_types.as_text(a) == yaml_types.as_text(b)

    assert same(data, back)


@pytest.mark.parametrize("text", ["1: int key\n", "a: !!binary aGk=\n", "a: !!set {x}\n"])
def test_data_without_a_json_form_is_not_packed(text: str) -> None:
    assert pack_yaml(yamlio.loads(text)) is None


def test_a_warm_listing_skips_yaml_and_compilation(project_dir: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    build_file_tree(project_dir, {"wizards/numbers.yaml": WIZARD})
    cold = _list()

    def forbidden(*_a: object, **_k: object) -> None:
        raise AssertionError("parsed or compiled again")

    monkeypatch.setattr(loader.yamlio, "load_file", forbidden)
    monkeypatch.setattr(loader, "_compile", forbidden)
    warm = _list()
    assert _summaries(warm) == _summaries(cold)  # specs compare equal, field by field
    numbers = next(w for w in warm.wizards if w.name == "numbers")
    version = numbers.spec.fields[0]
    assert [c.value for c in version.choices] == ["3.10", "010"]
    assert numbers.spec.fields[1].integer_max == 16


def test_a_cached_wizard_still_renders(project_dir: Path) -> None:
    build_file_tree(project_dir, {"wizards/numbers.yaml": WIZARD})
    _list()
    numbers = next(w for w in _list().wizards if w.name == "numbers")  # from the cache
    prompt = build_prompt(numbers, {"version": "3.10", "count": 3},
                          RenderContext(lang="en", user="u", project="p"))
    assert prompt.text.startswith("Use 3.10 x3")
    assert "Again with 3.10" in prompt.text


def test_an_edited_wizard_is_read_again(project_dir: Path) -> None:
    build_file_tree(project_dir, {"wizards/numbers.yaml": WIZARD})
    _list()
    (project_dir / "wizards" / "numbers.yaml").write_text(
        WIZARD.replace("en: Numbers}", "en: Renamed}"), encoding="utf-8")
    numbers = next(w for w in _list().wizards if w.name == "numbers")
    assert numbers.summary("en")["title"] == "Renamed"


@pytest.mark.parametrize(("content", "reason"), BROKEN[:6], ids=[r for _, r in BROKEN[:6]])
def test_broken_wizards_stay_broken_from_the_cache(project_dir: Path, content: str | bytes,
                                                   reason: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    build_file_tree(project_dir, {"wizards/bad.yaml": content})
    first = _list().problems
    monkeypatch.setattr(loader.yamlio, "load_file", lambda *_a: pytest.fail("parsed again"))
    second = _list().problems
    assert [(p.name, p.reason) for p in first] == [(p.name, p.reason) for p in second]
    assert reason in (second[0].reason or "")


def test_wizards_have_their_own_cache_file(project_dir: Path, vance_home: Path) -> None:
    build_file_tree(project_dir, {"wizards/numbers.yaml": WIZARD,
                                  "recipes/mine.yaml": "engine: ford\ndescription: mine\n"})
    _list()
    from vance_cli.recipes.loader import load_recipes

    load_recipes(Workspace(load_settings()))
    cache = vance_home / "state" / "cache"
    wizards = json.loads((cache / "wizards.json").read_text())["entries"]
    recipes = json.loads((cache / "documents.json").read_text())["entries"]
    assert {e["kind"] for e in wizards.values()} == {"wizard"}
    assert {e["kind"] for e in recipes.values()} == {"recipe"}  # recipe commands load no wizards
