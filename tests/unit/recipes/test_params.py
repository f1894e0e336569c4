"""Engine params: one schema per engine, for recipes, processes and Slartibartfast."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import build_file_tree, run_cli

from vance_cli.base.errors import InputError
from vance_cli.engines.registry import EngineRegistry
from vance_cli.processes.model import ProcessSpec
from vance_cli.processes.records import create_process
from vance_cli.recipes import params
from vance_cli.recipes.loader import load_recipes
from vance_cli.workspace import Workspace

ENGINES = EngineRegistry()


def problems(engine: str, given: dict[str, object]) -> list[str]:
    return params.problems(ENGINES.params_model(engine), given)


def test_every_bundled_recipe_fits_its_engine(ws: Workspace) -> None:
    found = load_recipes(ws)
    assert found.problems == ()
    for recipe in found.recipes.values():
        assert problems(recipe.engine, recipe.params) == [], recipe.name


@pytest.mark.parametrize(("engine", "given", "problem"), [
    ("zaphod", {"pattern": "parliament"}, "params.pattern"),
    ("zaphod", {"maxRound": 2}, "did you mean 'maxRounds'"),
    ("zaphod", {"pattern": "debate", "heads": [{"name": "solo"}]}, "at least two heads"),
    ("zaphod", {"heads": [{"name": "a b"}]}, "not a valid name"),
    ("vogon", {"phases": [{"name": "x"}]}, "needs a worker (a recipe) or a prompt"),
    ("vogon", {"phases": [{"name": "x", "prompt": "p"}, {"name": "x", "prompt": "q"}]},
     "phase names must be unique"),
    ("vogon", {"strategy": "s", "phases": [{"name": "x", "prompt": "p"}]}, "not both"),
    ("vogon", {"phases": [{"name": "x", "prompt": "p", "checkpoint": {"type": "decision"}}]},
     "at least two options"),
    ("marvin", {"maxTreeNodes": 0}, "params.maxTreeNodes"),
    ("ford", {"temperature": 3}, "params.temperature"),
])
def test_broken_params_are_named(engine: str, given: dict[str, object], problem: str) -> None:
    found = problems(engine, given)
    assert found and any(problem in text for text in found), found


def test_case_and_extra_keys_follow_the_engine() -> None:
    assert problems("zaphod", {"pattern": "COUNCIL"}) == []
    assert problems("vogon", {"words": 800, "phases": [{"name": "a", "prompt": "p"}]}) == []
    assert problems("ford", {"targetLanguage": "de"}) == []
    assert problems("no-such-engine", {"anything": 1}) == []


def test_a_recipe_with_broken_params_is_left_out_with_the_reason(
        ws: Workspace, project_dir: Path) -> None:
    build_file_tree(project_dir, {
        "recipes/bad-council.yaml": "engine: zaphod\ndescription: d\nparams: {maxRounds: 99}\n",
        "recipes/good-council.yaml": "engine: zaphod\ndescription: d\nparams: {maxRounds: 2}\n"})
    found = load_recipes(ws)
    assert "good-council" in found.recipes and "bad-council" not in found.recipes
    [problem] = [p for p in found.problems if p.name == "bad-council"]
    assert "params.maxRounds" in problem.reason
    listed = run_cli(["recipe", "list"])
    assert "recipe 'bad-council' left out: " in listed.stderr
    assert "bad-council.yaml: params.maxRounds: expected at most 10" \
        in listed.stderr


def test_caller_params_are_checked_when_a_process_starts(ws: Workspace) -> None:
    with pytest.raises(InputError, match=r"params\.maxRounds"):
        create_process(ws, ProcessSpec(recipe="debate-pro-contra", name="d",
                                       params={"maxRounds": "many"}))
    result = run_cli(["process", "create", "--recipe", "debate-pro-contra", "--name", "d",
                      "--param", "pattern=parliament"])
    assert result.exit_code == 2 and "params.pattern" in result.stderr
    assert run_cli(["process", "list", "--json"]).json() == []


def test_the_outline_names_keys_defaults_and_choices() -> None:
    text = params.outline(ENGINES.params_model("zaphod"))
    assert 'pattern?: "council" | "debate" = "council"' in text
    assert "heads?: [{name: string, persona?: string" in text
    assert "model" not in text  # the keys every engine knows are not repeated
    assert params.outline(ENGINES.params_model("ford")).endswith(", …}")  # more keys allowed
    assert "maxWorkerSpawns?: integer = 50" in params.outline(ENGINES.params_model("vogon"))


def test_effective_params_fill_in_the_defaults() -> None:
    filled = params.effective(ENGINES.params_model("marvin"), {"maxItems": 5})
    assert filled["maxItems"] == 5 and filled["maxTreeNodes"] == 30
    zaphod = ENGINES.params_model("zaphod")
    assert params.effective(zaphod, {"pattern": "nope"}) == {"pattern": "nope"}


def test_recipe_references_list_workers_heads_and_available_recipes() -> None:
    assert ENGINES.references("vogon", {"phases": [
        {"name": "a", "worker": "coding"}, {"name": "b", "prompt": "p"}]}) == [
        ("params.phases[0].worker", "coding")]
    assert ENGINES.references("zaphod", {"heads": [{"name": "x"}]}) == [
        ("params.heads[0].recipe", "default")]
    assert ENGINES.references("marvin", {"availableRecipes": ["translate"]}) == [
        ("params.availableRecipes[0]", "translate")]
    assert ENGINES.references("ford", {"phases": [{"worker": "coding"}]}) == []
    assert ENGINES.references("no-such-engine", {"heads": [{"recipe": "x"}]}) == []


def test_a_recipe_naming_a_missing_recipe_is_left_out(ws: Workspace, project_dir: Path) -> None:
    build_file_tree(project_dir, {
        "recipes/ask-nobody.yaml": ("engine: zaphod\ndescription: d\nparams:\n  heads:\n"
                                    "    - {name: a, recipe: nope}\n    - {name: b}\n"),
        "recipes/run-nothing.yaml": ("engine: vogon\ndescription: d\nparams:\n  phases:\n"
                                     "    - {name: a, worker: no-such-recipe}\n")})
    found = load_recipes(ws)
    reasons = {p.name: p.reason for p in found.problems}
    assert reasons["ask-nobody"].endswith("params.heads[0].recipe: recipe 'nope' does not exist")
    assert "params.phases[0].worker: recipe 'no-such-recipe' does not exist" in \
        reasons["run-nothing"]
    assert "ask-nobody" not in found.recipes and "debate-pro-contra" in found.recipes
