"""Loading wizards: fail-fast reasons, the load report, cascade order, lint."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import build_file_tree
from wizard_cases import BROKEN

from vance_cli.base.config import load_settings
from vance_cli.base.errors import InvalidDocumentName, UnknownWizard, WizardBroken
from vance_cli.documents.cascade import Kind, Layer
from vance_cli.wizards.loader import find_wizard, lint_cascade, lint_paths, load_cascade
from vance_cli.workspace import Workspace

BUNDLED = {"gremium", "vogon-strategie", "essay-recipe", "essay-mit-recipe", "create-project"}
GOOD = "title: Good\nfields: []\npromptTemplate: hello\n"

# (file content, a fragment the reason must contain)


def _ws() -> Workspace:
    return Workspace(load_settings())


@pytest.mark.parametrize(("content", "reason"), BROKEN, ids=[r for _, r in BROKEN])
def test_broken_file_reason(project_dir: Path, content: str | bytes, reason: str) -> None:
    build_file_tree(project_dir, {"wizards/bad.yaml": content, "wizards/good.yaml": GOOD})
    report = load_cascade(_ws().cascade(Kind.WIZARDS))
    (problem,) = report.problems
    assert problem.name == "bad" and problem.layer is Layer.PROJECT
    assert reason in (problem.reason or "")
    assert {w.name for w in report.wizards} == BUNDLED | {"good"}
    with pytest.raises(WizardBroken) as caught:
        find_wizard(_ws().cascade(Kind.WIZARDS), "bad")
    assert reason.replace("line 2:1: ", "") in caught.value.message
    assert caught.value.exit_code == 2


def test_bundled_wizards_all_load_with_both_languages() -> None:
    report = load_cascade(_ws().cascade(Kind.WIZARDS))
    assert report.ok and {w.name for w in report.wizards} == BUNDLED
    for wizard in report.wizards:
        spec = wizard.spec
        assert {"de", "en"} <= dict(spec.title.root).keys()
        assert spec.description is not None and {"de", "en"} <= dict(spec.description.root).keys()
        for field in spec.fields:
            assert field.label is not None and {"de", "en"} <= dict(field.label.root).keys()


def test_first_layer_wins_and_a_broken_override_is_not_replaced(project_dir: Path,
                                                                tenant_dir: Path) -> None:
    build_file_tree(tenant_dir, {"wizards/gremium.yaml": "title: Tenant council\nfields: []\n"
                                                         "promptTemplate: t\n"})
    cascade = _ws().cascade(Kind.WIZARDS)
    wizard = find_wizard(cascade, "gremium")
    assert wizard.layer is Layer.VANCE and wizard.spec.title_in("en") == "Tenant council"
    build_file_tree(project_dir, {"wizards/gremium.yaml": "title: [\n"})
    report = load_cascade(_ws().cascade(Kind.WIZARDS))
    assert [p.name for p in report.problems] == ["gremium"]
    assert "gremium" not in {w.name for w in report.wizards}
    lint = lint_cascade(_ws().cascade(Kind.WIZARDS))
    assert [(o.name, o.layer, o.ok) for o in lint.outcomes if o.name == "gremium"] == [
        ("gremium", Layer.PROJECT, False), ("gremium", Layer.VANCE, True),
        ("gremium", Layer.RESOURCE, True)]


def test_user_layer_is_only_the_current_users(vance_home: Path) -> None:
    users = vance_home / "data" / "tenants" / "default" / "projects"
    build_file_tree(users, {"_user_anna/wizards/mine.yaml": GOOD,
                            "_user_bob/wizards/bobs.yaml": GOOD})
    anna = Workspace(load_settings(flags={"user": "anna"}))
    names = {w.name for w in load_cascade(anna.cascade(Kind.WIZARDS)).wizards}
    assert "mine" in names and "bobs" not in names
    assert find_wizard(anna.cascade(Kind.WIZARDS), "mine").layer is Layer.USER


def test_unknown_and_malformed_names() -> None:
    cascade = _ws().cascade(Kind.WIZARDS)
    with pytest.raises(UnknownWizard) as caught:
        find_wizard(cascade, "gremum")
    assert caught.value.close[0] == "gremium" and caught.value.exit_code == 2
    assert "did you mean 'gremium'" in caught.value.message
    with pytest.raises(InvalidDocumentName):
        find_wizard(cascade, "../secrets")


def test_lint_paths_files_and_folders(tmp_path: Path) -> None:
    build_file_tree(tmp_path / "mine", {"a.yaml": GOOD, "sub/b.yaml": "title: [\n",
                                        "notes.txt": "ignored"})
    report = lint_paths([tmp_path / "mine"])
    assert [(o.name, o.ok, o.layer) for o in report.outcomes] == [("a", True, None),
                                                                  ("b", False, None)]
    assert report.to_json()["ok"] is False
    assert lint_paths([tmp_path / "mine" / "a.yaml"]).ok


@pytest.mark.parametrize("key", ["x", "mx", "maxi", "item", "rows"])
def test_unknown_top_level_key_suggests_only_top_level_keys(tmp_path: Path, key: str) -> None:
    """``x`` once suggested 'max' (a field key): suggestions come from the key's own mapping."""
    from vance_cli.wizards.loader import lint_paths

    path = tmp_path / "w.yaml"
    path.write_text(f"title: T\nfields: []\npromptTemplate: x\n{key}: 1\n", encoding="utf-8")
    reason = lint_paths([path]).problems[0].reason
    assert f"{key}: unknown key" in reason
    for field_key in ("max", "min", "item", "rows", "label", "name", "type"):
        assert f"'{field_key}'" not in reason, reason


def test_a_listing_parses_each_template_once_and_compiles_none(
        project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.base.sandbox import GuardedEnvironment

    build_file_tree(project_dir, {"wizards/good.yaml": GOOD})
    calls = {"parse": 0, "compile": 0}
    real_parse, real_compile = GuardedEnvironment.parse, GuardedEnvironment.compile

    def parse(self: GuardedEnvironment, *args: object, **kwargs: object) -> object:
        calls["parse"] += 1
        return real_parse(self, *args, **kwargs)  # type: ignore[arg-type]

    def compile_(self: GuardedEnvironment, *args: object, **kwargs: object) -> object:
        calls["compile"] += 1
        return real_compile(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(GuardedEnvironment, "parse", parse)
    monkeypatch.setattr(GuardedEnvironment, "compile", compile_)
    report = load_cascade(_ws().cascade(Kind.WIZARDS))
    templates = sum(1 + sum(1 + len(f.prefill) + len(f.label.root if f.label else ())
                            for f in w.spec.suggested_follow_ups)
                    + sum(1 for f in w.spec.fields if f.show_if) for w in report.wizards)
    assert calls["compile"] == 0
    assert 0 < calls["parse"] <= templates
    wizard = next(w for w in report.wizards if w.name == "gremium")
    assert wizard.template is not None and calls["compile"] >= 1  # compiled on first use
