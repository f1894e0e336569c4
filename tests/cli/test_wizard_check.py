"""``vance wizard check``: the validatorPrompt asked of a scripted LLM (docs/wizards.md)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from helpers import run_cli
from llm_server import ScriptedLLMServer

MEMBERS = json.dumps([{"name": "Ada", "persona": "An engineer."},
                      {"name": "Grace", "persona": "An engineer."}])
VALUES = ["--set", "councilName=board", "--set", "purpose=Advise.",
          "--set", f"members:={MEMBERS}"]


def test_check_returns_suggestions_for_a_named_field_and_drops_an_unknown_one(
        llm_server: ScriptedLLMServer, vance_home: Path) -> None:
    llm_server.reply(json.dumps({"suggestions": [
        {"field": "members", "suggestion": "Give Grace a persona of her own."},
        {"field": "budget", "suggestion": "Name a budget."}]}))
    result = run_cli(["wizard", "check", "gremium", *VALUES, "--json"], env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    assert result.json() == {
        "suggestions": [{"field": "members", "suggestion": "Give Grace a persona of her own."}],
        "notes": ["dropped a suggestion for 'budget': not a field of this wizard"]}
    assert "dropped a suggestion for 'budget'" in result.stderr
    (request,) = llm_server.requests
    body = request.json
    user = body["messages"][-1]["content"]
    assert 'named "board"' in user and "- Grace: An engineer." in user
    schema = body["response_format"]["json_schema"]["schema"]
    field = schema["properties"]["suggestions"]["items"]["properties"]["field"]
    assert field["enum"] == ["councilName", "purpose", "members", "createNow", "testQuestion"]


def test_check_is_recorded_with_the_other_llm_calls(llm_server: ScriptedLLMServer,
                                                     vance_home: Path) -> None:
    llm_server.reply('{"suggestions": []}', prompt_tokens=42, completion_tokens=7)
    result = run_cli(["wizard", "check", "gremium", *VALUES], env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    assert "no suggestions" in result.stderr + result.stdout
    db = vance_home / "state" / "vance.db"
    rows = sqlite3.connect(db).execute(
        "SELECT process_id, purpose, model, tokens_in, tokens_out FROM llm_calls").fetchall()
    assert rows == [(None, "wizard-check", "test-model", 42, 7)]


def test_check_without_an_llm_says_one_line_and_exits_0(vance_home: Path) -> None:
    result = run_cli(["wizard", "check", "gremium", *VALUES])
    assert result.exit_code == 0
    assert len(result.stderr.strip().splitlines()) == 1
    assert "no LLM configured: the answers were not checked" in result.stderr


def test_check_of_a_wizard_without_validator_prompt_exits_0(vance_home: Path) -> None:
    result = run_cli(["wizard", "check", "essay-mit-recipe", "--set", "recipe=x", "--json"])
    assert result.exit_code == 0
    assert result.json()["suggestions"] == []
    assert "no validatorPrompt" in result.stderr


def test_a_failing_llm_is_a_note_not_an_error(llm_server: ScriptedLLMServer,
                                              vance_home: Path) -> None:
    llm_server.fail(500, "boom")
    result = run_cli(["wizard", "check", "gremium", *VALUES, "--json"], env=llm_server.env())
    assert result.exit_code == 0
    assert result.json()["suggestions"] == []
    assert "the check could not run" in result.stderr


def test_a_validator_prompt_that_does_not_compile_is_a_broken_wizard_not_a_crash(
        llm_server: ScriptedLLMServer, project_dir: Path) -> None:
    (project_dir / "wizards").mkdir(parents=True)
    (project_dir / "wizards" / "w.yaml").write_text(
        "title: W\nvalidatorPrompt: '{{ a'\nfields:\n  - name: a\n    type: string\n"
        "promptTemplate: x\n", encoding="utf-8")
    checked = run_cli(["wizard", "check", "w", "--set", "a=1", "--json"], env=llm_server.env())
    assert checked.exit_code == 2, checked.stdout
    assert checked.json()["error"] == "wizard_broken"
    assert "validatorPrompt line 1" in checked.json()["message"]
    assert llm_server.requests == []
    linted = run_cli(["wizard", "lint", "--json"])
    assert linted.exit_code == 1
    assert [w["reason"] for w in linted.json()["wizards"] if w["name"] == "w"] == [
        "validatorPrompt line 1: unexpected end of template, expected 'end of print statement'."]
    listed = run_cli(["wizard", "list", "--json"])
    assert "wizard 'w' (PROJECT) left out: validatorPrompt line 1" in listed.stderr
