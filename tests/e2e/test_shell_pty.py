"""``vance shell`` driven in a real pseudo-terminal with pexpect (DESIGN.md §9, issue 4)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from pathlib import Path

import pexpect
import pytest
from helpers import CliResult, build_file_tree, run_cli
from llm_server import ScriptedLLMServer
from terminal import ANSI, TIMEOUT, Key, finish, spawn_vance

pytestmark = pytest.mark.e2e

PROMPT = "vance>"
"""The shell's prompt as it appears on the screen (styles may follow it)."""

BUNDLED_CATALOG = Path(__file__).resolve().parents[2] / "catalog" / "engines.yaml"


def _spawn(tmp_path: Path, *args: str, env: Mapping[str, str] | None = None) -> pexpect.spawn:
    child = spawn_vance([*args, "shell"], env={**(env or {}), "NO_COLOR": "1"}, cwd=tmp_path,
                        log=tmp_path / "pty.log")
    child.expect(PROMPT)
    return child


def _vance(*args: str) -> CliResult:
    """``vance ARGS`` in-process: what the shell left behind, read by another process."""
    return run_cli(args)


def _field(label: str, value: str) -> str:
    return f"{label}:{ANSI} {value}"


def test_wizard_completion_form_buffer_edit_and_send(tmp_path: Path) -> None:
    child = _spawn(tmp_path)
    child.send("/wiz")
    child.expect("fill a wizard")  # the completion menu, while typing
    child.send(Key.TAB)  # completes to /wizard
    child.send(" ")
    child.expect("essay-mit-recipe")  # the wizard names of the listing
    child.expect("gremium")
    child.send("essay-m")
    child.send(Key.TAB)  # the one match
    child.send(Key.ENTER)
    child.expect("Recipe")  # only a completed "/wizard essay-mit-recipe" gets here
    child.send("plain-essay" + Key.ENTER)
    child.expect("Topic")
    child.send("Trees in cities" + Key.ENTER)
    child.expect("Audience")
    child.send(Key.ENTER)
    child.expect("Save the answers to a file")
    child.send(Key.ENTER)  # no: the default
    child.expect("The prompt is in the input line")
    child.expect(PROMPT + r".*Write an essay with the essay recipe")  # in the shell's own input
    child.send(Key.END_OF_BUFFER + Key.ESC_ENTER + "Keep it under 800 words.")
    child.send(Key.ENTER)
    child.expect(_field("decision", "MATCH"))
    child.expect(_field("recipe", "essay-pipeline"))
    child.expect(_field("process", r"\S+ \(\S+, IDLE\)"))
    child.expect(PROMPT)
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0, log
    assert "Traceback" not in log

    (entry,) = json.loads(_vance("log", "--json").stdout)
    assert entry["task"].startswith('Write an essay with the essay recipe "plain-essay"')
    assert "Topic: Trees in cities\n" in entry["task"]
    assert entry["task"].endswith("improvising one.\nKeep it under 800 words.")
    assert (entry["decision"], entry["recipe"], entry["dryRun"]) == ("MATCH", "essay-pipeline",
                                                                      False)
    (process,) = json.loads(_vance("process", "list", "--json").stdout)
    assert process["goal"] == entry["task"]


def test_ctrl_c_clears_the_line_and_ctrl_d_exits_0(tmp_path: Path) -> None:
    child = _spawn(tmp_path)
    child.send("/hel")
    child.send(Key.CTRL_C)
    child.expect(PROMPT)
    child.send("p" + Key.ENTER)  # "/help" if the line had survived; alone it is a task
    child.expect(_field("decision", "NONE"))
    child.expect(PROMPT)
    child.send(Key.CTRL_D)
    status, log = finish(child)
    assert status == 0, log
    assert "Traceback" not in log and "/wizard [NAME]" not in log
    (entry,) = json.loads(_vance("log", "--json").stdout)
    assert entry["task"] == "p"


def test_errors_inside_commands_do_not_end_the_shell(tmp_path: Path) -> None:
    child = _spawn(tmp_path)
    child.send("/wizrd" + Key.ENTER)
    child.expect("unknown command '/wizrd' — did you mean /wizard or /wizards\\?")
    child.send("/process show nope" + Key.ENTER)
    child.expect("no process with id or name 'nope'")
    child.send("/wizard no-such-wizard" + Key.ENTER)
    child.expect("unknown wizard 'no-such-wizard'")
    child.send("/help" + Key.ENTER)
    child.expect("/wizard \\[NAME\\]")
    child.expect(PROMPT)
    child.send(Key.CTRL_D)
    status, log = finish(child)
    assert status == 0 and "Traceback" not in log


def test_history_persists_across_two_runs(tmp_path: Path, vance_home: Path) -> None:
    child = _spawn(tmp_path)
    child.send("/recipe show translate" + Key.ENTER)
    child.expect(_field("engine", r"\w+"))
    child.send("/quit" + Key.ENTER)
    assert finish(child)[0] == 0

    child = _spawn(tmp_path)
    child.send(Key.UP)  # /quit
    child.send(Key.UP)  # /recipe show translate
    child.expect("recipe show translate")  # redrawn over "/quit" (only the changed cells)
    child.send(Key.ENTER)
    child.expect(_field("engine", r"\w+"))
    child.expect(PROMPT)
    child.send(Key.CTRL_D)
    status, log = finish(child)
    assert status == 0, log
    assert log.count("description") >= 2  # `recipe show` ran in both runs
    history = (vance_home / "state" / "shell-history").read_text(encoding="utf-8")
    assert history.count("+/recipe show translate") == 2 and "+/quit" in history


def test_catalog_reload_of_a_bad_file_keeps_the_previous_catalog(tmp_path: Path) -> None:
    build_file_tree(tmp_path, {"good.yaml": BUNDLED_CATALOG.read_text(encoding="utf-8"),
                               "bad.yaml": "engines:\n  ford: {purpose: [unclosed\n"})
    child = _spawn(tmp_path)
    child.send("/catalog reload --file good.yaml" + Key.ENTER)
    child.expect("activated .*good.yaml")
    child.send("/catalog reload --file bad.yaml" + Key.ENTER)
    child.expect(r"vance: error: \S*bad.yaml:\d+")
    child.expect("catalog not reloaded; still active: .*good.yaml")
    child.expect(PROMPT)
    child.send("/catalog show" + Key.ENTER)
    child.expect("active catalog: .*good.yaml since")
    child.send("Write a short essay about the history of tea" + Key.ENTER)
    child.expect(_field("decision", "MATCH"))
    child.expect(PROMPT)
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0 and "Traceback" not in log
    shown = json.loads(_vance("catalog", "show", "--json").stdout)
    assert shown["source"] == str(tmp_path / "good.yaml")


def test_ctrl_c_while_the_llm_answers_cancels_only_that_task(
        tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply('{"decision": "NONE", "recipe": null, "rationale": "n"}', delay=20)
    llm_server.reply('Sure!\n```json\n{"decision": "MATCH", "recipe": "translate",'
                     ' "rationale": "A translation."}\n```')
    llm_server.reply("Chère Madame, voici la lettre.")  # the shell runs the match's first turn
    child = _spawn(tmp_path, env=llm_server.env(timeout=30))
    child.send("Render this letter in French" + Key.ENTER)
    child.expect("Asking the selector")  # the spinner
    deadline = time.monotonic() + TIMEOUT
    while not llm_server.chat_requests and time.monotonic() < deadline:
        time.sleep(0.05)  # Ctrl-C once the request is out (importing openai takes a while)
    assert llm_server.chat_requests
    child.sendintr()
    child.expect("cancelled")
    child.expect(PROMPT)
    child.send("Render this other letter in French" + Key.ENTER)
    child.expect(_field("decision", "MATCH"))
    child.expect(_field("recipe", "translate"))
    child.expect(PROMPT)
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0, log
    assert "Traceback" not in log
    first, second, turn = (r.json["messages"][-1]["content"] for r in llm_server.chat_requests)
    assert "Render this letter in French" in first and "this other letter" in second
    assert turn == "Render this other letter in French"  # the translate process's task


def test_ctrl_c_in_the_wizard_form_returns_to_the_prompt(tmp_path: Path) -> None:
    child = _spawn(tmp_path)
    child.send("/wizard gremium" + Key.ENTER)
    child.expect("Council name")
    child.send("half typed" + Key.CTRL_C)
    child.expect("cancelled")
    child.expect(PROMPT)
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0 and "Traceback" not in log
    assert json.loads(_vance("log", "--json").stdout) == []


def test_an_event_from_another_process_is_shown_at_the_next_prompt(tmp_path: Path) -> None:
    boss = json.loads(_vance("process", "create", "--recipe", "translate", "--name", "boss",
                             "--json").stdout)["id"]
    kid = json.loads(_vance("process", "create", "--recipe", "translate", "--name", "kid",
                            "--parent", boss, "--json").stdout)["id"]
    child = _spawn(tmp_path)
    assert _vance("process", "stop", kid).exit_code == 0  # another program closes the child
    child.send(Key.ENTER)  # an empty line: just the next prompt
    child.expect(f"child_closed: kid \\({kid}\\) closed STOPPED — for {boss}")
    child.expect(PROMPT)
    child.send(Key.CTRL_D)
    status, log = finish(child)
    assert status == 0 and "Traceback" not in log
    (event,) = json.loads(_vance("process", "events", "--json").stdout)
    assert event["consumedAt"] is None  # shown, still pending for its recipient


def test_ctrl_x_ctrl_e_edits_the_wizard_prompt_in_the_editor_and_sends_it(
        tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nfor last; do :; done\n'
                      'printf "\\nAnswer in German." >> "$last"\n'
                      f'echo "$last" > "{tmp_path}/edited-file"\n')
    editor.chmod(0o755)
    child = _spawn(tmp_path, env={"EDITOR": str(editor)})
    child.send("/wizard essay-mit-recipe --set recipe=plain --set topic=Tea --dry-run"
               + Key.ENTER)
    child.expect("Audience")
    child.send(Key.ENTER)
    child.expect("Save the answers to a file")
    child.send(Key.ENTER)
    child.expect("The prompt is in the input line")
    child.expect(PROMPT)
    child.send(Key.CTRL_X + Key.CTRL_E)
    child.expect(_field("decision", "MATCH"))
    child.expect(PROMPT)
    child.send(Key.CTRL_D)
    status, log = finish(child)
    assert status == 0, log
    (entry,) = json.loads(_vance("log", "--json").stdout)
    assert entry["task"].startswith('Write an essay with the essay recipe "plain"')
    assert entry["task"].endswith("improvising one.\nAnswer in German.")
    assert (tmp_path / "edited-file").read_text().strip().endswith(".md")


def test_the_shell_offers_to_save_the_answers_and_they_replay(tmp_path: Path) -> None:
    child = _spawn(tmp_path)
    child.send("/wizard essay-mit-recipe --set recipe=plain" + Key.ENTER)
    child.expect("Topic")
    child.send("Tea" + Key.ENTER)
    child.expect("Audience")
    child.send(Key.ENTER)
    child.expect("Save the answers to a file")
    child.send("y" + Key.ENTER)
    child.expect("File")
    child.send(Key.ENTER)  # the offered name
    child.expect("answers saved to essay-mit-recipe-answers.json")
    child.expect(PROMPT + r".*Write an essay with the essay recipe")
    child.send(Key.CTRL_C)  # drop the prompt
    child.expect(PROMPT)
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0 and "Traceback" not in log
    saved = tmp_path / "essay-mit-recipe-answers.json"
    assert json.loads(saved.read_text()) == {"recipe": "plain", "topic": "Tea", "audience": ""}
    direct = _vance("wizard", "render", "essay-mit-recipe", "--set", "recipe=plain",
                    "--set", "topic=Tea")
    assert _vance("wizard", "render", "essay-mit-recipe", "--values", str(saved)).stdout \
        == direct.stdout


LONG_PROMPT = ("Write a thoughtful and considerably elaborate essay about tea, structured "
               "carefully with introduction, arguments, counterarguments and conclusion")


def test_the_wizards_prompt_in_the_input_line_wraps_between_words(tmp_path: Path) -> None:
    build_file_tree(tmp_path, {".vance/wizards/long.yaml": (
        "title: Long\ndescription: A wizard whose prompt is long.\n"
        "fields:\n  - name: topic\n    type: string\n    label: Topic\n"
        f"promptTemplate: \"{LONG_PROMPT.replace('tea', '{{ topic }}')}\"\n")})
    child = spawn_vance(["shell"], env={"NO_COLOR": "1"}, cwd=tmp_path, dimensions=(30, 50),
                        log=tmp_path / "pty.log")
    child.expect(PROMPT)
    child.send("/wizard long --set topic=tea" + Key.ENTER)
    child.expect("Save the answers")
    child.send(Key.ENTER)
    child.expect("conclusion")
    child.send(Key.CTRL_C)  # the prompt is dropped, nothing sent
    child.expect(PROMPT)
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0, log
    with open(tmp_path / "pty.log", encoding="utf-8", newline="") as raw:  # "\r" kept
        plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x07", "", raw.read()).replace("\r", "")
    at = plain.index("The prompt is in the input line")
    rows = plain[at:plain.index("conclusion", at) + len("conclusion")].split("\n")
    assert all(len(row) < 50 for row in rows), rows  # the terminal wraps none of them
    note, shown = rows[:3], rows[3:]
    assert " ".join(note).startswith("The prompt is in the input line: edit it, Enter sends")
    assert shown[0].startswith("vance> Write ") and all(r.startswith(" " * 7) for r in shown[1:])
    assert " ".join(row.strip() for row in shown).removeprefix("vance> ") == LONG_PROMPT
