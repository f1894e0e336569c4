"""ford's turn: the system prompt it builds, the conversation it sends, the notes it keeps.

docs/engines.md "ford": base prompt (``prompts/engines/ford.md``, overridable
through the layers) + the recipe's ``prompt`` template; one streamed call;
a steer continues with the whole history; a cut-off reply gets a note.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, build_file_tree
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.processes.inputs import submit, transcript
from vance_cli.processes.model import ProcessSpec
from vance_cli.processes.records import create_process
from vance_cli.processes.runtime import run_turn
from vance_cli.workspace import Workspace

BASE = (REPO / "catalog" / "prompts" / "engines" / "ford.md").read_text(encoding="utf-8").strip()


@pytest.fixture()
def ws(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    workspace = Workspace(load_settings())
    yield workspace
    workspace.close()


def first_request(ws: Workspace, llm: ScriptedLLMServer, recipe: str, goal: str,
                  **params: Any) -> dict[str, Any]:
    process = create_process(ws, ProcessSpec(recipe=recipe, name="p", goal=goal, params=params))
    llm.reply("done")
    assert run_turn(ws, process.id).settle == "IDLE"
    body: dict[str, Any] = llm.chat_requests[-1].json
    return body


def test_the_system_prompt_is_the_base_prompt_then_the_recipes(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    body = first_request(ws, llm_server, "quick-lookup", "What is the capital of Peru?")
    process = create_process(ws, ProcessSpec(recipe="quick-lookup", name="q"))
    assert process.prompt and "{" not in process.prompt
    assert body["messages"][0] == {"role": "system",
                                   "content": f"{BASE}\n\n{process.prompt.strip()}"}
    assert body["messages"][1:] == [{"role": "user", "content": "What is the capital of Peru?"}]
    assert (body["stream"], body["temperature"], body["max_tokens"]) == (True, 0.7, 4096)
    assert "response_format" not in body


def test_the_recipe_prompt_is_a_template_over_params(ws: Workspace,
                                                      llm_server: ScriptedLLMServer) -> None:
    body = first_request(ws, llm_server, "translate", "Bonjour tout le monde",
                         targetLanguage="German")
    system = body["messages"][0]["content"]
    assert system.startswith(BASE + "\n\n")
    assert "into the language it asks for (German)." in system
    assert "placeholders such as {name} or %s" in system  # single braces are text
    assert "{%" not in system


def test_a_layer_can_override_the_base_prompt(ws: Workspace, llm_server: ScriptedLLMServer,
                                              project_dir: Path) -> None:
    build_file_tree(project_dir, {"prompts/engines/ford.md": "You are terse.\n"})
    body = first_request(ws, llm_server, "quick-lookup", "What is the capital of Peru?")
    system = body["messages"][0]["content"]
    assert system.startswith("You are terse.\n\nAnswer the question") and BASE not in system


def test_params_set_model_temperature_and_max_tokens(ws: Workspace,
                                                     llm_server: ScriptedLLMServer) -> None:
    body = first_request(ws, llm_server, "quick-lookup", "Peru?", model="big-model",
                         temperature=0.1, maxTokens=300)
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("big-model", 0.1, 300)


def test_a_cut_off_reply_is_kept_with_a_note_that_the_next_turn_leaves_out(
        ws: Workspace, llm_server: ScriptedLLMServer) -> None:
    process = create_process(ws, ProcessSpec(recipe="quick-lookup", name="p", goal="Peru?"))
    llm_server.reply("Lima is the cap", finish_reason="length")
    assert run_turn(ws, process.id).reply == "Lima is the cap"
    submit(ws, process.id, "Go on.")
    llm_server.reply("…ital of Peru.")
    run_turn(ws, process.id)
    kinds = [(m.role, m.kind, m.turn) for m in transcript(ws, process.id)]
    assert kinds == [("user", "task", 1), ("note", "truncated", 1), ("assistant", "reply", 1),
                     ("user", "steer", 2), ("assistant", "reply", 2)]
    sent = llm_server.chat_requests[-1].json["messages"]
    assert [(m["role"], m["content"]) for m in sent[1:]] == [
        ("user", "Peru?"), ("assistant", "Lima is the cap"), ("user", "Go on.")]
