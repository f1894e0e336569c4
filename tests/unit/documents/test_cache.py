"""The parsed-document cache: warm runs skip YAML, edits and broken files are honoured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import build_file_tree

from vance_cli.base.config import load_settings
from vance_cli.documents.cache import FILE_NAME, FORMAT, DocumentCache
from vance_cli.ranking import terms as recipe_terms
from vance_cli.ranking.bm25 import rank
from vance_cli.recipes.loader import find_recipe, load_recipes
from vance_cli.workspace import Workspace


def _ws() -> Workspace:
    return Workspace(load_settings())


def _cache_file(home: Path) -> Path:
    return home / "state" / "cache" / FILE_NAME


def test_cache_is_written_and_used(vance_home: Path, project_dir: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    build_file_tree(project_dir, {"recipes/mine.yaml": "engine: ford\ndescription: mine\n"
                                                       "params: {depth: 3, ratio: 3.10}\n"})
    first = load_recipes(_ws())
    data = json.loads(_cache_file(vance_home).read_text())
    assert str(project_dir / "recipes" / "mine.yaml") in data["entries"]

    import vance_cli.recipes.loader as recipes_module

    def no_yaml(*_a: object, **_k: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(recipes_module, "parse_recipe", no_yaml)
    second = load_recipes(_ws())
    assert second.recipes == first.recipes  # same values, layers and paths from the refs
    assert find_recipe(_ws(), "mine").params == {"depth": 3, "ratio": 3.1}


def test_an_edited_file_is_parsed_again(project_dir: Path) -> None:
    path = project_dir / "recipes" / "mine.yaml"
    build_file_tree(project_dir, {"recipes/mine.yaml": "engine: ford\ndescription: one\n"})
    assert load_recipes(_ws()).get("mine").description == "one"
    path.write_text("engine: ford\ndescription: two, longer\n")
    assert load_recipes(_ws()).get("mine").description == "two, longer"


def test_broken_files_are_remembered_as_problems(project_dir: Path) -> None:
    build_file_tree(project_dir,
                    {"recipes/bad.yaml": "engine: ford\ndescription: [unclosed\n"})
    first = load_recipes(_ws()).problems
    second = load_recipes(_ws()).problems
    assert first == second and first[0].name == "bad"
    assert "bad.yaml:3:1: YAML error" in first[0].reason


@pytest.mark.parametrize("content", ["not json", '{"format": 999, "entries": {}}', "[]"])
def test_foreign_or_broken_cache_is_ignored(vance_home: Path, content: str) -> None:
    _cache_file(vance_home).parent.mkdir(parents=True)
    _cache_file(vance_home).write_text(content)
    assert "essay-pipeline" in load_recipes(_ws()).recipes
    assert json.loads(_cache_file(vance_home).read_text())["format"] == FORMAT


def _no_analysis(*_a: object) -> None:
    raise AssertionError("analysed again")


def test_a_warm_run_reuses_the_ranking_analysis(vance_home: Path, project_dir: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    build_file_tree(project_dir, {
        "recipes/mine.yaml": "engine: ford\ndescription: Sort the invoices, not the receipts\n"
                             "tags: [sort invoices, bookkeeping]\n",
        "recipes/_hidden.yaml": "engine: ford\ndescription: internal\n"})
    task = "Please sort invoices for the bookkeeping, then the receipts"
    fresh = [(h.recipe.name, h.score, h.terms, h.phrases) for h in rank(
        load_recipes(_ws()).inventory(), task)]
    entries = json.loads(_cache_file(vance_home).read_text())["entries"]
    mine = entries[str(project_dir / "recipes" / "mine.yaml")]["value"]["analysis"]
    assert mine == {"version": recipe_terms.VERSION, "title": "",
                    "tags": ["sort invoices", "bookkeeping"], "keywords": [],
                    "description": "sort the invoices"}
    assert "analysis" not in entries[str(project_dir / "recipes" / "_hidden.yaml")]["value"]

    recipe_terms._memo.clear()
    monkeypatch.setattr(recipe_terms, "_analyse", _no_analysis)
    warm = [(h.recipe.name, h.score, h.terms, h.phrases) for h in rank(
        load_recipes(_ws()).inventory(), task)]
    assert warm == fresh and warm[0][0] == "mine" and warm[0][3] == ("sort invoices",)


def test_an_analysis_of_other_rules_is_not_reused(vance_home: Path, project_dir: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    build_file_tree(project_dir, {"recipes/mine.yaml": "engine: ford\ndescription: Sort\n"})
    load_recipes(_ws())
    data = json.loads(_cache_file(vance_home).read_text())
    entry = data["entries"][str(project_dir / "recipes" / "mine.yaml")]["value"]
    entry["analysis"] = {**entry["analysis"], "version": recipe_terms.VERSION - 1,
                         "description": "stale"}
    _cache_file(vance_home).write_text(json.dumps(data))
    recipe_terms._memo.clear()
    assert rank(load_recipes(_ws()).inventory(), "stale")[0].score == 0
    assert rank(load_recipes(_ws()).inventory(), "sort")[0].recipe.name == "mine"


def test_entries_of_deleted_files_are_dropped(tmp_path: Path) -> None:
    gone, kept = tmp_path / "gone.yaml", tmp_path / "kept.yaml"
    gone.write_text("a")
    kept.write_text("b")
    cache = DocumentCache.load(tmp_path / "cache")
    for path in (gone, kept):
        cache.put(path, "recipe", cache.signature(path), {"x": 1})
    gone.unlink()
    cache.save()
    reread = DocumentCache.load(tmp_path / "cache")
    assert reread.get(kept, "recipe", reread.signature(kept)) == {"x": 1}
    assert reread.get(gone, "recipe", [0, 0, 0]) is None


def test_unwritable_cache_costs_speed_only(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder should be")
    cache = DocumentCache.load(blocker)
    cache.put(tmp_path / "x", "recipe", [1, 2, 3], {})
    cache.save()  # no exception


def test_warm_offline_delegate_imports_no_yaml(vance_home: Path) -> None:
    env = {**os.environ, "VANCE_HOME": str(vance_home)}
    code = ("import sys\nfrom vance_cli.cli.boundary import run\n"
            "run(['delegate', '--task', 'Summarize these notes', '--dry-run', '--json'])\n"
            "sys.stderr.write('YAML=' + str('yaml' in sys.modules))\n")
    outputs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=60, check=False).stderr for _ in range(2)]
    assert outputs[0].endswith("YAML=True")   # cold: parsed and cached
    assert outputs[1].endswith("YAML=False")  # warm: from the cache


def test_a_warm_listing_neither_parses_yaml_nor_analyses_recipes(vance_home: Path) -> None:
    env = {**os.environ, "VANCE_HOME": str(vance_home)}
    code = ("import sys\nfrom vance_cli.base.config import load_settings\n"
            "from vance_cli.ranking import terms\n"
            "from vance_cli.recipes.loader import load_recipes\n"
            "from vance_cli.workspace import Workspace\n"
            "calls = []\nreal = terms._analyse\n"
            "terms._analyse = lambda *a: calls.append(1) or real(*a)\n"
            "load_recipes(Workspace(load_settings()))\n"
            "print('yaml' in sys.modules, len(calls) > 0)\n")
    outputs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=60, check=True).stdout for _ in range(2)]
    assert outputs[0].strip() == "True True"  # cold: parsed and analysed
    assert outputs[1].strip() == "False False"  # warm: parsed recipes and analyses from the cache
