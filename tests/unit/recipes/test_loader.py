from __future__ import annotations

from pathlib import Path

import pytest
from helpers import build_file_tree

from vance_cli.base.config import load_settings
from vance_cli.base.errors import DocumentError, UnknownRecipe
from vance_cli.documents.cascade import Layer
from vance_cli.recipes.loader import find_recipe, load_recipes, parse_recipe
from vance_cli.workspace import Workspace

BUNDLED = {
    "default", "analyze", "code-read", "coding", "python", "quick-lookup", "web-research",
    "document-summary", "translate", "discuss", "council-three-perspectives",
    "debate-pro-contra", "marvin", "vogon", "essay-pipeline", "waterfall-feature",
    "slartibartfast",
}


def _ws() -> Workspace:
    return Workspace(load_settings())


def test_bundled_inventory_has_the_required_recipes() -> None:
    found = load_recipes(_ws())
    assert found.problems == ()
    inventory = {r.name for r in found.inventory()}
    assert inventory == BUNDLED
    internal = [r for r in found.recipes.values() if r.internal]
    assert internal and all(r.name not in inventory for r in internal)
    engines = _ws().catalog().names
    assert all(r.engine in engines for r in found.recipes.values())


def test_inventory_drops_underscore_names_and_internal(project_dir: Path) -> None:
    build_file_tree(project_dir, {
        "recipes/_slart/run1/gen.yaml": "engine: ford\ndescription: generated\n",
        "recipes/_private.yaml": "engine: ford\ndescription: private\n",
        "recipes/hidden.yaml": "engine: ford\ndescription: h\ninternal: true\n",
        "recipes/mine.yaml": "engine: ford\ndescription: mine\n",
    })
    found = load_recipes(_ws())
    names = {r.name for r in found.inventory()}
    assert "mine" in names
    assert not names & {"_slart/run1/gen", "_private", "hidden"}
    assert {"_slart/run1/gen", "_private", "hidden"} <= set(found.recipes)


def test_project_overrides_tenant_overrides_bundled(project_dir: Path, tenant_dir: Path) -> None:
    build_file_tree(tenant_dir, {"recipes/translate.yaml": "engine: ford\ndescription: tenant\n",
                                 "recipes/coding.yaml": "engine: ford\ndescription: tenant c\n"})
    build_file_tree(project_dir, {"recipes/translate.yaml": "engine: ford\ndescription: proj\n"})
    ws = _ws()
    assert find_recipe(ws, "translate").layer is Layer.PROJECT
    assert find_recipe(ws, "coding").description == "tenant c"
    assert find_recipe(ws, "python").layer is Layer.RESOURCE


def test_one_broken_file_hides_nothing_else(project_dir: Path) -> None:
    build_file_tree(project_dir, {
        "recipes/broken.yaml": "engine: ford\ndescription: [unclosed\n",
        "recipes/noengine.yaml": "description: x\n",
        "recipes/good.yaml": "engine: ford\ndescription: fine\n",
    })
    found = load_recipes(_ws())
    assert "good" in found.recipes and BUNDLED <= set(found.recipes)
    problems = {p.name: p.reason for p in found.problems}
    assert set(problems) == {"broken", "noengine"}
    assert "YAML error" in problems["broken"] and ":3:" in problems["broken"]
    assert problems["noengine"].endswith("noengine.yaml: engine: missing required key")


def test_unknown_recipe_suggests_close_names() -> None:
    with pytest.raises(UnknownRecipe) as info:
        find_recipe(_ws(), "essay-pipline")
    assert info.value.close[0] == "essay-pipeline"
    assert "did you mean 'essay-pipeline'" in str(info.value)
    assert info.value.exit_code == 2
    message = info.value.message
    assert message.startswith("unknown recipe 'essay-pipline' — did you mean 'essay-pipeline'")
    available = [r.name for r in load_recipes(_ws()).inventory()]
    assert f"? Available: {', '.join(available)}" in message  # DESIGN.md §4
    assert "?;" not in message  # a question mark is the end of its sentence
    assert "session-root" not in message  # internal: not offered


def test_unknown_recipe_message_counts_what_it_does_not_list() -> None:
    names = [f"recipe-{i:03d}" for i in range(45)]
    error = UnknownRecipe("nothing-like-it", (), names)
    assert "recipe-019" in error.message and "recipe-020" not in error.message
    assert error.message.endswith("and 25 more (see 'vance recipe list')")
    assert error.details["available"] == names
    assert UnknownRecipe("x").message == "unknown recipe 'x'; no recipes are available"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "must be a mapping"),
        ({"engine": "ford"}, "description: missing required key"),
        ({"engine": "ford", "description": " "}, "description: must not be empty"),
        ({"engine": "ford", "description": "d", "params": [1]}, "params: expected a mapping"),
        ({"engine": "ford", "description": "d", "internal": "no"},
         "internal: expected true or false"),
        ({"engine": "ford", "description": "d", "color": 1}, "color: unknown key"),
        ({"engine": "ford", "descripton": "d"},
         r"descripton: unknown key \(did you mean 'description'\?\)"),
        ({"engine": "ford", "description": "d", "triggers": {"keyword": ["a"]}},
         r"triggers.keyword: unknown key \(did you mean 'keywords'\?\)"),
        ({"engine": "ford", "description": "d", "triggers": {"keywords": [{"a": 1}]}},
         "triggers.keywords"),
    ],
)
def test_recipe_schema_errors(data: object, message: str) -> None:
    with pytest.raises(DocumentError, match=message):
        parse_recipe(data, "x")


def test_keywords_are_lower_cased() -> None:
    recipe = parse_recipe({"engine": "ford", "description": "d",
                           "triggers": {"keywords": ["Write An Essay", " "]}}, "x")
    assert recipe.keywords == ("write an essay",)
