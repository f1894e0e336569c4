"""The shell shows what comes back (issue 20, item 6; docs/shell.md).

arthur delegates from the shell; its child runs in a background worker, and
arthur's report — written by another background turn once the child
finished — appears above the waiting prompt without a key being pressed.
The real program runs in a pseudo-terminal against the scripted server.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import run_cli, wait_until
from llm_server import ScriptedLLMServer
from terminal import Key, finish, spawn_vance

pytestmark = pytest.mark.e2e

PROMPT = "vance>"
PERU = "What is the capital of Peru?"
LIMA = "Lima is the capital of Peru."
REPORT = "The worker says: Lima."


def _arthur(action: str, message: str, task: str = "") -> str:
    return json.dumps({"action": action, "message": message, "task": task, "options": []})


def _match(recipe: str) -> str:
    return json.dumps({"decision": "MATCH", "recipe": recipe, "rationale": "it fits"})


def test_arthurs_report_is_printed_when_it_arrives(tmp_path: Path,
                                                   llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(_match("discuss"))  # the shell's task goes to arthur
    llm_server.reply(_arthur("delegate", "I'll have a worker look it up.", PERU))
    llm_server.reply(_match("quick-lookup"))  # arthur's delegate: the selector
    llm_server.reply(LIMA)  # the child's turn, in its worker
    llm_server.reply(_arthur("answer", REPORT))  # arthur's next turn, in its worker
    child = spawn_vance(["shell"], env={**llm_server.env(timeout=60), "NO_COLOR": "1"},
                        cwd=tmp_path, log=tmp_path / "pty.log")
    child.expect(PROMPT)
    child.send("Let's find out the capital of Peru together" + Key.ENTER)
    child.expect("I'll have a worker look it up.")
    child.expect(PROMPT)  # the shell waits for the next line; nothing is typed from here
    assert wait_until(lambda: len(llm_server.chat_requests) == 5, timeout=60)
    child.expect(re.escape(REPORT))  # printed above the prompt as it arrived
    child.expect(PROMPT)  # and the prompt is drawn again
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0, log
    assert "Traceback" not in log
    lead = [p for p in run_cli(["process", "list", "--json"]).json() if p["recipe"] == "discuss"]
    assert lead and lead[0]["result"] == REPORT


RECIPE = ("```yaml\nname: smart-home-control\ntitle: Smart home\nengine: ford\n"
          "description: Switches smart-home devices.\n```")
DESIGN = "Design a reusable recipe for switching smart-home devices"
"""Its trigger keyword 'reusable recipe' matches the slartibartfast recipe (no selector call)."""


def test_a_slartibartfast_run_from_the_shell_names_the_recipe_and_how_to_use_it(
        tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(RECIPE)
    child = spawn_vance(["shell"], env={**llm_server.env(timeout=60), "NO_COLOR": "1"},
                        cwd=tmp_path, log=tmp_path / "pty.log")
    child.expect(PROMPT)
    child.send(DESIGN + Key.ENTER)
    child.expect(r"Slartibartfast designed the recipe '(_slart/[^']+)'")
    name = child.match.group(1)
    child.expect(re.escape(f"vance process create --recipe {name} --name NAME"))
    child.expect(re.escape(f"vance recipe promote {name} NEW-NAME"))
    child.expect(PROMPT)
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0, log


def test_a_slartibartfast_run_from_a_wizard_names_the_recipe_and_how_to_use_it(
        tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(RECIPE)
    child = spawn_vance(["wizard", "run", "essay-recipe", "--set", "recipeName=my-essays",
                         "--set", "style=academic", "--set", "format=short",
                         "--set", "length=800", "--set", "reviewLoop=false", "--no-input"],
                        env={**llm_server.env(timeout=60), "NO_COLOR": "1"}, cwd=tmp_path,
                        log=tmp_path / "pty.log")
    child.expect(r"Slartibartfast designed the recipe '(_slart/[^']+)'")
    name = child.match.group(1)
    child.expect(re.escape(f"vance recipe promote {name} NEW-NAME"))
    status, log = finish(child)
    assert status == 0, log
