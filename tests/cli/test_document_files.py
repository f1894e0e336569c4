"""Document files someone else put there: only regular files, bounded, inside their layer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import run_cli

MAX_DOCUMENT_BYTES = 1_000_000
"""The documented cap (docs/documents.md "Files vance reads")."""
RECIPE = "engine: ford\ndescription: Answers quick questions about tea.\n"
WIZARD = "title: W\nfields: []\npromptTemplate: hello\n"


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("vance: warning: ")]


@pytest.mark.timeout(10)
def test_a_fifo_a_device_and_a_link_out_of_the_layer_are_skipped_with_a_warning(
        project_dir: Path) -> None:
    recipes = project_dir / "recipes"
    recipes.mkdir(parents=True)
    os.mkfifo(recipes / "x.yaml")                      # would block forever when opened
    (recipes / "zero.yaml").symlink_to("/dev/zero")    # would never end
    (recipes / "pw.yaml").symlink_to("/etc/passwd")    # outside the layer
    (recipes / "fine.yaml").write_text(RECIPE)
    (recipes / "alias.yaml").symlink_to(recipes / "fine.yaml")  # a link inside is fine
    for args in (["recipe", "list", "--json"],
                 ["delegate", "Write a short essay about tea", "--dry-run", "--json"]):
        result = run_cli(args)
        assert result.exit_code == 0, result.stderr
        warned = "\n".join(_warnings(result.stderr))
        assert f"recipe 'x' left out: {recipes / 'x.yaml'}: not a regular file (a FIFO)" in warned
        assert "recipe 'zero' left out" in warned and "recipe 'pw' left out" in warned
        assert "outside its layer" in warned and "root:" not in result.stderr
    names = [r["name"] for r in run_cli(["recipe", "list", "--json"]).json()]
    assert {"fine", "alias"} <= set(names) and not {"x", "zero", "pw"} & set(names)
    shown = run_cli(["recipe", "show", "x"])
    assert shown.exit_code != 0 and "not a regular file (a FIFO)" in shown.stderr


def test_a_link_loop_in_a_layer_is_a_warning_not_a_crash(project_dir: Path) -> None:
    for kind, text in (("recipes", RECIPE), ("wizards", WIZARD)):
        folder = project_dir / kind
        folder.mkdir(parents=True)
        (folder / "a.yaml").symlink_to("b.yaml")
        (folder / "b.yaml").symlink_to("a.yaml")
        (folder / "fine.yaml").write_text(text)
    for kind in ("recipe", "wizard"):
        result = run_cli([kind, "list", "--json"])
        assert result.exit_code == 0, result.stderr
        (line,) = [w for w in _warnings(result.stderr) if f"{kind} 'a' " in w]
        assert "left out" in line and "Too many levels of symbolic links" in line
        assert "fine" in {entry["name"] for entry in result.json()}


def test_a_file_over_the_size_cap_is_refused(project_dir: Path) -> None:
    recipes = project_dir / "recipes"
    recipes.mkdir(parents=True)
    (recipes / "huge.yaml").write_text(RECIPE + "# " + "x" * MAX_DOCUMENT_BYTES + "\n")
    result = run_cli(["recipe", "list", "--json"])
    assert f"larger than {MAX_DOCUMENT_BYTES:,} bytes: not read" in result.stderr


def test_an_unreadable_folder_is_a_warning_not_a_vanished_layer(
        project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = project_dir / "recipes" / "team"
    locked.mkdir(parents=True)
    (locked / "a.yaml").write_text(RECIPE)
    real = os.scandir

    def scandir(path: object = ".") -> object:  # root reads anything: refuse as a mode 000 would
        if Path(str(path)) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    result = run_cli(["recipe", "list", "--json"])
    assert result.exit_code == 0
    assert (f"recipe 'recipes/team/' left out: {locked}: cannot read this folder: Permission "
            "denied; its documents are left out") in result.stderr


@pytest.mark.timeout(10)
def test_wizards_and_prompts_are_read_the_same_way(project_dir: Path) -> None:
    wizards = project_dir / "wizards"
    wizards.mkdir(parents=True)
    os.mkfifo(wizards / "jam.yaml")
    (wizards / "ok.yaml").write_text(WIZARD)
    listed = run_cli(["wizard", "list", "--json"])
    assert listed.exit_code == 0
    assert "jam" in listed.stderr and "not a regular file (a FIFO)" in listed.stderr
    linted = run_cli(["wizard", "lint", "--json"])
    assert any(w["name"] == "jam" and "FIFO" in w["reason"]
               for w in linted.json()["wizards"] if not w["ok"])
    prompts = project_dir / "prompts"
    prompts.mkdir()
    os.mkfifo(prompts / "recipe-selector.md")
    env = {"VANCE_LLM_BASE_URL": "http://127.0.0.1:9/v1"}  # never asked: the prompt fails first
    decided = run_cli(["delegate", "Help me with the thing we discussed", "--json",
                       "--no-fallback"], env=env).json()
    assert decided["reason"] == "selector_error"
    assert "not a regular file (a FIFO)" in decided["rationale"]


@pytest.mark.timeout(10)
def test_a_catalog_file_is_read_the_same_way(tmp_path: Path) -> None:
    fifo = tmp_path / "engines.yaml"
    os.mkfifo(fifo)
    checked = run_cli(["catalog", "validate", str(fifo), "--json"])
    assert checked.exit_code == 1
    assert "not a regular file (a FIFO)" in checked.json()["problems"][0]["problem"]


def test_a_catalog_too_large_for_the_prompt_is_refused_at_reload(tmp_path: Path) -> None:
    MAX_ENGINE_TEXT_CHARS = 100_000  # docs/catalog.md "Limits"
    text = "x" * 900
    engines = "".join(f"  e{i}:\n    purpose: {text}\n    when_to_use: {text}\n"
                      f"    not_for: {text}\n" for i in range(MAX_ENGINE_TEXT_CHARS // 2000))
    big = tmp_path / "big.yaml"
    big.write_text("engines:\n" + engines)
    reloaded = run_cli(["catalog", "reload", "--file", str(big), "--allow-orphans", "--json"])
    assert reloaded.exit_code == 1
    assert reloaded.json()["activated"] is False
    assert f"at most {MAX_ENGINE_TEXT_CHARS:,} fit" in reloaded.json()["problems"][0]["problem"]
    assert run_cli(["catalog", "show", "--json"]).json()["source"] == "bundled"
    huge = tmp_path / "huge.yaml"
    huge.write_text("engines:\n" + "# " + "y" * 1_000_000 + "\n" + engines[:2000])
    assert "larger than 1,000,000 bytes" in run_cli(["catalog", "validate", str(huge)]).stderr


def test_a_task_of_any_length_reaches_the_process_whole(tmp_path: Path) -> None:
    import subprocess
    import sys

    from llm_server import ScriptedLLMServer

    server = ScriptedLLMServer().start()
    try:
        server.reply('{"decision": "MATCH", "recipe": "translate", "rationale": "French"}')
        task = "Render this paragraph in French. " * 15_000  # 495,000 characters
        env = {**os.environ, **server.env()}
        done = subprocess.run([sys.executable, "-m", "vance_cli", "delegate", "--task", "-",
                               "--json"], input=task, env=env, capture_output=True, text=True,
                              timeout=60)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["decision"], data["recipe"]) == ("MATCH", "translate")
    assert data["process"]["goal"] == task.strip()


def test_a_recipe_whose_engine_is_not_in_the_catalog_is_left_out(project_dir: Path) -> None:
    (project_dir / "recipes").mkdir(parents=True)
    (project_dir / "recipes" / "tea-poems.yaml").write_text(
        "engine: bard\ndescription: Writes poems about tea.\n"
        "triggers:\n  keywords: [poem about tea]\n")
    warning = ("recipe 'tea-poems' left out: its engine 'bard' is not in the active engine "
               "catalog")
    dry = run_cli(["delegate", "Write a poem about tea", "--dry-run", "--json"])
    assert dry.json()["recipe"] != "tea-poems" and warning in dry.stderr
    real = run_cli(["delegate", "Write a poem about tea", "--json", "--no-fallback"])
    assert real.exit_code == 0 and real.json()["recipe"] != "tea-poems"
    listed = run_cli(["recipe", "list", "--json"])
    assert "tea-poems" not in [r["name"] for r in listed.json()] and warning in listed.stderr
    every = run_cli(["recipe", "list", "--all", "--json"]).json()
    assert "tea-poems" in [r["name"] for r in every]


@pytest.mark.parametrize(("args", "message"), [
    (["catalog", "validate", "nope.yaml"], "catalog file {cwd}/nope.yaml"),
    (["catalog", "reload", "--file", "nope.yaml"], "catalog file {cwd}/nope.yaml"),
    (["wizard", "lint", "./nope"], "nope"),
    (["wizard", "render", "gremium", "--values", "nope.yaml"], "values file nope.yaml"),
    (["delegate", "--task-template", "Do {{ item }}", "--items", "nope.txt"],
     "items file nope.txt"),
])
def test_a_missing_path_is_exit_2_everywhere(args: list[str], message: str) -> None:
    result = run_cli([*args, "--json"])
    assert result.exit_code == 2, result.stderr
    expected = message.format(cwd=Path.cwd()) + ": no such file or folder"
    assert result.stderr.strip().endswith(expected)
    assert result.json()["error"] == "path_not_found"


@pytest.mark.parametrize(("file", "text", "hint"), [
    ("recipes/r.yaml", "enigne: ford\ndescription: x\n", "enigne: unknown key (did you mean "
                                                         "'engine'?)"),
    ("recipes/r.yaml", "engine: ford\ndescription: x\ntriggers:\n  keyword: [a]\n",
     "triggers.keyword: unknown key (did you mean 'keywords'?)"),
])
def test_recipe_key_typos_get_a_did_you_mean(project_dir: Path, file: str, text: str,
                                            hint: str) -> None:
    (project_dir / file).parent.mkdir(parents=True)
    (project_dir / file).write_text(text)
    assert hint in run_cli(["recipe", "list"]).stderr


def test_catalog_key_typos_get_a_did_you_mean(tmp_path: Path) -> None:
    catalog = tmp_path / "c.yaml"
    catalog.write_text("engines:\n  ford:\n    purpse: a\n    when_to_use: b\n    not_for: c\n")
    result = run_cli(["catalog", "validate", str(catalog)])
    assert result.exit_code == 1
    assert "engines.ford.purpse: unknown key (did you mean 'purpose'?)" in result.stderr
