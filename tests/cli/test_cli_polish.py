"""What a new user meets first on the command line: suggestions, config keys, help, hints."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from helpers import REPO, run_cli

from vance_cli.base.wording import shorten


@pytest.mark.parametrize(("args", "typo", "suggested", "where"), [
    (["process", "lst"], "lst", "list", "vance process --help"),
    (["delegat", "--task", "x"], "delegat", "delegate", "vance --help"),
    (["confg", "show"], "confg", "config", "vance --help"),
])
def test_a_mistyped_command_gets_one_suggestion(args: list[str], typo: str, suggested: str,
                                                where: str) -> None:
    result = run_cli(args)
    assert result.exit_code == 2
    assert result.stderr == (f"vance: error: No such command '{typo}' (did you mean "
                             f"'{suggested}'?) — see '{where}'\n")


def test_an_unknown_command_with_nothing_close_points_to_help() -> None:
    result = run_cli(["xyzzy"])
    assert (result.exit_code, result.stderr) == (
        2, "vance: error: No such command 'xyzzy' — see 'vance --help'\n")


def test_config_get_and_unset(vance_home: Path) -> None:
    assert run_cli(["config", "set", "llm.model", "qwen"]).exit_code == 0
    got = run_cli(["config", "get", "llm.model"])
    assert (got.exit_code, got.stdout) == (0, "qwen\n")
    assert run_cli(["config", "get", "llm.model", "--json"]).json() == {
        "key": "llm.model", "value": "qwen", "origin": "file"}
    assert run_cli(["config", "get", "llm.timeout"]).stdout.strip() != ""
    unset = run_cli(["config", "unset", "llm.model"])
    assert (unset.exit_code, unset.stderr) == (0, "llm.model removed\n")
    assert run_cli(["config", "get", "llm.model", "--json"]).json()["origin"] == "default"
    again = run_cli(["config", "unset", "llm.model"])
    assert (again.exit_code, again.stderr) == (0, "llm.model is not set in the config file\n")
    assert run_cli(["config", "get", "llm.api_key"], env={"VANCE_LLM_API_KEY": "sk-secret-12345"}
                   ).stdout.count("secret") == 0


@pytest.mark.parametrize("command", ["get", "unset", "set"])
def test_a_mistyped_config_key_gets_a_did_you_mean(command: str) -> None:
    result = run_cli(["config", command, "llm.modle", *(["x"] if command == "set" else [])])
    assert result.exit_code == 2
    assert result.stderr.startswith("vance: error: unknown config key 'llm.modle' — did you "
                                    "mean 'llm.model'")
    assert "known keys" not in result.stderr
    far = run_cli(["config", command, "zzz", *(["x"] if command == "set" else [])])
    assert far.exit_code == 2 and "known keys: tenant, project" in far.stderr


@pytest.mark.parametrize(("command", "hidden", "shown"), [
    (["delegate"], "instruction", ["[TASK]", "The task in plain words"]),
    (["process", "show"], "ident", ["ID", "Process id or unique prefix."]),
    (["process", "steer"], "ident", ["ID", "The message for the process."]),
    (["process", "stop"], "idents", ["ID...", "Process ids, names"]),
])
def test_help_names_arguments_by_their_metavar_with_their_help(
        command: list[str], hidden: str, shown: list[str]) -> None:
    result = run_cli([*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    arguments = result.stdout.split("Arguments")[1].split("Options")[0]
    assert not re.search(rf"\b{hidden}\b", arguments), arguments
    for text in shown:
        assert text in arguments, arguments


def test_queued_names_the_processes_own_message_number() -> None:
    for name in ("first", "second"):
        assert run_cli(["process", "create", "--recipe", "coding", "--name", name,
                        "--steer", "start"]).exit_code == 0
    steered = run_cli(["process", "steer", "second", "and go on"])
    assert steered.exit_code == 0, steered.stderr
    count = len(run_cli(["process", "messages", "second", "--json"]).json())
    assert f"queued: message #{count} of " in steered.stdout, steered.stdout
    rows = run_cli(["process", "messages", "second"]).stdout.splitlines()
    assert rows[-1].split("\t")[0] == str(count) and rows[-1].endswith("and go on")


def test_the_recipe_did_you_mean_has_no_stray_punctuation() -> None:
    result = run_cli(["process", "create", "--recipe", "essay-pipline"])
    assert result.exit_code == 2
    assert "did you mean 'essay-pipeline'? Available: analyze" in result.stderr
    assert "?;" not in result.stderr


@pytest.mark.parametrize(("item", "hint"), [
    ("depth:=deep", "--param depth:= needs JSON (Expecting value); for text use depth=deep"),
    ("depth:=", "--param depth:= needs JSON; for text use depth=VALUE"),
])
def test_a_json_param_that_is_no_json_says_that_equals_gives_text(item: str, hint: str) -> None:
    result = run_cli(["process", "create", "--recipe", "coding", "--param", item])
    assert (result.exit_code, result.stderr) == (2, f"vance: error: {hint}\n")


@pytest.mark.parametrize(("text", "limit", "cut"), [
    ("Write an essay about the history of tea", 100, "Write an essay about the history of tea"),
    ("Write an essay about the history of tea", 25, "Write an essay about the…"),
    ("Write an essay about the history of tea", 24, "Write an essay about…"),
    ("Plan the\nmigration,  then run it", 20, "Plan the migration…"),
    ("x" * 30, 10, "x" * 9 + "…"),
])
def test_shorten_cuts_at_a_word_boundary_with_an_ellipsis(text: str, limit: int,
                                                          cut: str) -> None:
    assert shorten(text, limit) == cut
    assert len(shorten(text, limit)) <= limit


def test_a_long_goal_is_cut_between_words() -> None:
    goal = "migrate " * 200  # 1,600 characters of whole words
    assert run_cli(["process", "create", "--recipe", "coding", "--name", "big",
                    "--goal", goal]).exit_code == 0
    shown = next(line for line in run_cli(["process", "show", "big"]).stdout.splitlines()
                 if "goal" in line)
    assert re.search(r"migrate… \(1,600 characters", shown), shown


def _user_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are not docstrings (messages, hints, help)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docs]


def test_no_message_points_to_a_docs_file_that_a_wheel_install_lacks() -> None:
    found = [f"{path.relative_to(REPO)}:{line}: {text[:80]!r}"
             for path in sorted((REPO / "vance_cli").rglob("*.py"))
             for line, text in _user_strings(path) if "docs/" in text]
    assert found == []


def test_the_no_llm_hint_names_the_settings_not_a_file() -> None:
    result = run_cli(["process", "create", "--recipe", "coding", "--name", "x", "--steer", "go"])
    assert result.exit_code == 0
    assert "vance config set llm.base_url" in result.stdout + result.stderr
    assert "docs/" not in result.stdout + result.stderr
