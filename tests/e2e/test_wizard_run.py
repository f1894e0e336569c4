"""``vance wizard run`` driven in a real pseudo-terminal with pexpect, ``$EDITOR`` a script."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pexpect
import pytest
from helpers import CliResult, run_cli
from llm_server import ScriptedLLMServer
from terminal import TIMEOUT, Key, end, finish, spawn_vance

pytestmark = pytest.mark.e2e

PURPOSE = "Advise the team on the product roadmap.\\nWeigh cost against user value.\\n"


def _editor(tmp_path: Path) -> Path:
    """An editor script: records its arguments, writes the purpose into the file it is given."""
    script = tmp_path / "editor.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{tmp_path}/editor-args.log"\n'
        'for last; do :; done\n'  # the file is the last argument
        f"printf '{PURPOSE}' > \"$last\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def _spawn(args: list[str], env: Mapping[str, str], tmp_path: Path) -> pexpect.spawn:
    return spawn_vance(args, env={**env, "NO_COLOR": "1"}, cwd=tmp_path,
                       log=tmp_path / "pty.log")


def _answer_gremium(child: pexpect.spawn, edit: bool = True, check: str = "") -> None:
    _answer_gremium_form(child, check)
    child.expect("Esc Enter")  # the final, editable buffer: the shell's keys
    if edit:
        child.send(Key.END_OF_BUFFER + Key.ESC_ENTER + "Answer in two short paragraphs.")
    child.send(Key.ENTER)


def _answer_gremium_form(child: pexpect.spawn, check: str) -> None:
    """Answer gremium's three steps and its check question (``y``: expect the suggestion)."""
    child.expect("The council — step 1 of 3")
    child.expect("Council name")
    child.send("product-board" + Key.ENTER)
    child.expect("Purpose: opening")  # the editor runs and writes the purpose
    child.expect("Members — step 2 of 3")
    child.expect("Members 1/8")
    child.expect("Name")
    child.send("Ada" + Key.ENTER)
    child.expect("Persona")
    child.send("A pragmatic engineer who asks what things cost." + Key.ENTER)
    child.expect("Members 2/8")  # below min: no question, the second entry starts
    child.expect("Name")
    child.send("Grace" + Key.ENTER)
    child.expect("Persona")
    child.send("A user researcher who speaks for the users." + Key.ENTER)
    child.expect("Add another entry")
    child.send("n" + Key.ENTER)  # y/n choose, Enter submits
    child.expect("Go back to step 1")
    child.send(Key.ENTER)  # no: the default
    child.expect("Try it — step 3 of 3")
    child.expect("Create the council right away")
    child.send("y" + Key.ENTER)
    child.expect("Test question")
    child.send("Should we rewrite billing this quarter?" + Key.ENTER)
    child.expect("Go back to step 2")
    child.send(Key.ENTER)
    child.expect("Check the answers with the LLM")
    child.send(check + Key.ENTER)
    if check == "y":
        child.expect("members: Give Grace a persona of her own.")


def _vance(*args: str, stdin: str | None = None) -> CliResult:
    """``vance ARGS`` in-process: reads what the program in the terminal left behind."""
    return run_cli(args, input=stdin)


@pytest.mark.parametrize("with_argument", [False, True], ids=["editor", "editor-with-arg"])
def test_run_gremium_sends_the_edited_prompt_to_the_selector(tmp_path: Path,
                                                             with_argument: bool) -> None:
    script = _editor(tmp_path)
    editor = f"{script} --flag" if with_argument else str(script)
    child = _spawn(["wizard", "run", "gremium"], {"EDITOR": editor}, tmp_path)
    _answer_gremium(child)
    child.expect(r"decision:\S* (MATCH|NONE)")  # Rich may bold the label
    decision = child.match.group(1)
    # no LLM configured: gremium asks for a reusable recipe, slartibartfast's trigger keyword
    child.expect(r"rationale:\S* trigger keyword 'reusable recipe' of recipe 'slartibartfast'")
    status, log = finish(child)
    assert status == 0, log
    assert "Traceback" not in log
    args = (tmp_path / "editor-args.log").read_text().split()
    assert (args[0] == "--flag") is with_argument and args[-1].endswith(".md")

    # the selector got the rendered prompt with the editor's purpose and the buffer edit
    (entry,) = json.loads(_vance("log", "--json", "-n", "1").stdout)
    task = entry["task"]
    assert task.startswith('Create a reusable recipe for an advisory council named "product-board"')
    assert "Advise the team on the product roadmap.\nWeigh cost against user value." in task
    assert "\n- Ada: A pragmatic engineer" in task and "\n- Grace: A user researcher" in task
    assert "Test question: Should we rewrite billing this quarter?" in task
    assert task.endswith("Answer in two short paragraphs.")
    assert entry["decision"] == decision and entry["dryRun"] is False

    # same code path as vance delegate: the same task gets the same decision
    same = json.loads(_vance("delegate", "--task", "-", "--dry-run", "--json", stdin=task).stdout)
    assert (same["decision"], same["recipe"]) == (decision, entry["recipe"])


def test_print_redirected_to_a_file_holds_only_the_prompt(tmp_path: Path) -> None:
    out = tmp_path / "prompt.txt"
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"}
    command = (f"'{sys.executable}' -m vance_cli wizard run essay-mit-recipe "
               f"--set recipe=plain --print > '{out}'")
    child = pexpect.spawn("/bin/sh", ["-c", command],
                          env=env, cwd=str(tmp_path), encoding="utf-8", timeout=TIMEOUT,
                          dimensions=(50, 200))
    child.expect("Topic")
    child.send("Trees in cities" + Key.ENTER)
    child.expect("Audience")
    child.send(Key.ENTER)
    child.expect("Esc Enter")
    child.send(Key.ENTER)
    end(child)
    assert child.exitstatus == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith('Write an essay with the essay recipe "plain"')
    assert "Topic: Trees in cities\n" in text
    assert "\x1b" not in text and "Esc Enter" not in text and "Audience (optional)" not in text


@pytest.mark.parametrize("key", [Key.CTRL_C, Key.CTRL_D], ids=["ctrl-c", "ctrl-d"])
def test_cancel_exits_130_without_traceback_and_writes_nothing(tmp_path: Path, key: Key) -> None:
    child = _spawn(["wizard", "run", "gremium", "--print"], {"EDITOR": str(_editor(tmp_path))},
                   tmp_path)
    child.expect("Council name")
    child.send("half typed")
    child.send(key)
    status, log = finish(child)
    assert status == 130
    assert "Traceback" not in log and "cancelled" in log
    assert "Create a reusable recipe for an advisory council" not in log


def test_cancel_in_the_final_buffer_exits_130(tmp_path: Path) -> None:
    child = _spawn(["wizard", "run", "essay-mit-recipe", "--set", "recipe=r", "--set", "topic=t",
                    "--set", "audience=a", "--print"], {}, tmp_path)
    child.expect("Esc Enter")
    # the prompt's last words, drawn by the buffer once it reads keys (a Ctrl-C right after
    # the title, printed before it, is the terminal's SIGINT, not the buffer's key)
    child.expect("instead of improvising one")
    child.send(Key.CTRL_C)
    status, log = finish(child)
    assert status == 130 and "Traceback" not in log


def test_open_the_follow_up_link_starts_the_form_with_the_recipe_prefilled(
        tmp_path: Path) -> None:
    rendered = _vance("wizard", "render", "essay-recipe", "--set", "recipeName=slow & calm",
                      "--set", "style=personal", "--set", "length=900", "--json")
    assert rendered.exit_code == 0, rendered.stderr
    link = json.loads(rendered.stdout)["prompt"].splitlines()[-1]
    uri = link[link.index("](") + 2:-1]
    assert uri.startswith("vance:/wizards/essay-mit-recipe?kind=wizard&recipe=")

    child = _spawn(["wizard", "open", uri], {}, tmp_path)
    child.expect("Topic")  # the recipe came from the link: the form starts at the next field
    before_topic = child.before
    child.send("Trees in cities" + Key.ENTER)
    child.expect("Audience")
    child.send("city planners" + Key.ENTER)
    child.expect("Esc Enter")  # the rendered prompt, editable, carries the prefilled recipe
    child.expect('essay recipe "slow & calm"')
    child.send(Key.ENTER)
    child.expect(r"decision:\S* (MATCH|NONE)")
    status, log = finish(child)
    assert status == 0, log
    assert "Recipe" not in before_topic and "Traceback" not in log
    (entry,) = json.loads(_vance("log", "--json", "-n", "1").stdout)
    assert entry["task"].startswith('Write an essay with the essay recipe "slow & calm"')
    assert "Topic: Trees in cities\nAudience: city planners\n" in entry["task"]


def test_saved_answers_replay_the_same_prompt_byte_for_byte(tmp_path: Path) -> None:
    """The walk over steps, with --save-answers; --values on the file renders the same prompt."""
    out = tmp_path / "prompt.txt"
    answers = tmp_path / "answers.json"
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1",
           "EDITOR": str(_editor(tmp_path))}
    command = (f"'{sys.executable}' -m vance_cli wizard run gremium --print "
               f"--save-answers '{answers}' > '{out}'")
    child = pexpect.spawn("/bin/sh", ["-c", command], env=env, cwd=str(tmp_path),
                          encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200))
    child.logfile_read = (tmp_path / "pty.log").open("w")
    _answer_gremium(child, edit=False)
    end(child)
    assert child.exitstatus == 0, (tmp_path / "pty.log").read_text()
    printed = out.read_bytes()
    saved = json.loads(answers.read_text(encoding="utf-8"))
    assert [m["name"] for m in saved["members"]] == ["Ada", "Grace"]  # repeat fields kept
    replayed = _vance("wizard", "render", "gremium", "--values", str(answers))
    assert replayed.exit_code == 0, replayed.stderr
    assert replayed.stdout.encode() == printed  # byte for byte
    # and a subprocess, with no terminal at all, prints the same bytes
    again = subprocess.run([sys.executable, "-m", "vance_cli", "wizard", "render", "gremium",
                            "--values", str(answers)], cwd=tmp_path, env=env,
                           capture_output=True, timeout=TIMEOUT, check=True)
    assert again.stdout == printed


def test_the_check_step_before_send_prints_the_llm_suggestions(
        tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(json.dumps({"suggestions": [
        {"field": "members", "suggestion": "Give Grace a persona of her own."}]}))
    out = tmp_path / "prompt.txt"
    env = {**os.environ, **llm_server.env(), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1",
           "NO_COLOR": "1", "EDITOR": str(_editor(tmp_path))}
    command = f"'{sys.executable}' -m vance_cli wizard run gremium --print > '{out}'"
    child = pexpect.spawn("/bin/sh", ["-c", command], env=env, cwd=str(tmp_path),
                          encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200))
    child.logfile_read = (tmp_path / "pty.log").open("w")
    _answer_gremium(child, edit=False, check="y")
    end(child)
    assert child.exitstatus == 0, (tmp_path / "pty.log").read_text()
    assert out.read_text().startswith(
        'Create a reusable recipe for an advisory council named "product-board"')
    (request,) = llm_server.requests
    assert "- Ada: A pragmatic engineer" in request.json["messages"][-1]["content"]


def test_the_shell_s_wizard_offers_the_check_before_send_too(
        tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(json.dumps({"suggestions": [
        {"field": "members", "suggestion": "Give Grace a persona of her own."},
        {"field": "budget", "suggestion": "Name a budget."}]}))  # no such field: dropped
    env = {**llm_server.env(), "EDITOR": str(_editor(tmp_path))}
    child = _spawn(["shell"], env, tmp_path)
    child.expect("vance>")
    child.send("/wizard gremium" + Key.ENTER)
    _answer_gremium_form(child, check="y")
    child.expect("Save the answers to a file")
    child.send("n" + Key.ENTER)
    child.expect('Create a reusable recipe for an advisory council named "product-board"')
    child.send(Key.CTRL_C)  # drop the prefilled prompt: nothing is sent
    child.expect("vance>")
    child.send("/quit" + Key.ENTER)
    status, log = finish(child)
    assert status == 0 and "Traceback" not in log, log
    assert "Name a budget" not in log
    (request,) = llm_server.requests  # the check, and nothing sent to the selector
    assert "- Ada: A pragmatic engineer" in request.json["messages"][-1]["content"]


def test_going_back_one_step_changes_an_earlier_answer(tmp_path: Path) -> None:
    """Steps in a pty: on step 2, go back to step 1, change the council's name, go on."""
    out = tmp_path / "prompt.txt"
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1",
           "EDITOR": str(_editor(tmp_path))}
    command = (f"'{sys.executable}' -m vance_cli wizard run gremium --print "
               f"--set createNow=no > '{out}'")
    child = pexpect.spawn("/bin/sh", ["-c", command], env=env, cwd=str(tmp_path),
                          encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200))
    child.logfile_read = (tmp_path / "pty.log").open("w")
    child.expect("The council — step 1 of 3")
    child.expect("Council name")
    child.send("first-name" + Key.ENTER)
    child.expect("Purpose: opening")
    for name in ("Ada", "Grace"):
        child.expect("Name")
        child.send(name + Key.ENTER)
        child.expect("Persona")
        child.send(f"{name}'s persona." + Key.ENTER)
    child.expect("Add another entry")
    child.send("n" + Key.ENTER)
    child.expect("Go back to step 1")
    child.send("y" + Key.ENTER)                       # back
    child.expect("The council — step 1 of 3")
    child.expect("first-name")                        # the earlier answer is the default
    child.send(Key.BACKSPACE * 10 + "second-name" + Key.ENTER)
    child.expect("Purpose: opening")
    child.expect("Members — step 2 of 3")             # asked again, its answers the defaults
    for _ in range(4):
        child.send(Key.ENTER)
    child.expect("Add another entry")
    child.send("n" + Key.ENTER)
    child.expect("Go back to step 1")
    child.send(Key.ENTER)
    child.expect("Try it — step 3 of 3")              # createNow given: nothing asked here
    child.expect("Go back to step 2")
    child.send(Key.ENTER)
    child.expect("Check the answers")
    child.send(Key.ENTER)
    child.expect("Esc Enter")
    child.send(Key.ENTER)
    end(child)
    assert child.exitstatus == 0, (tmp_path / "pty.log").read_text()
    text = out.read_text()
    assert text.startswith('Create a reusable recipe for an advisory council named "second-name"')
    assert "- Ada: Ada's persona.\n" in text and "- Grace: Grace's persona.\n" in text


PROBE = """\
title: Probe
description: A wizard with long texts and a bounded integer.
fields:
  - name: words
    type: integer
    label: How many words should the essay have at most, counting every single word
    help: Pick a length between one hundred and two thousand words; the selector reads it
      as a hint for the structure.
    integerMin: 100
    integerMax: 2000
    defaultValue: 800
  - name: topic
    type: string
    label: Topic
    required: true
promptTemplate: "Write {{ words }} words on {{ topic }}"
"""


def _plain(log: str) -> str:
    """The terminal log without style codes and cursor moves, as lines of text."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x07", "", log)
    return text.replace("\r", "")


def test_a_narrow_terminal_wraps_questions_between_words_and_errors_sit_by_the_question(
        tmp_path: Path) -> None:
    (tmp_path / ".vance" / "wizards").mkdir(parents=True)
    (tmp_path / ".vance" / "wizards" / "probe.yaml").write_text(PROBE, encoding="utf-8")
    child = spawn_vance(["wizard", "run", "probe", "--print", "--set", "words=5"],
                        env={"NO_COLOR": "1"}, cwd=tmp_path, dimensions=(30, 50),
                        log=tmp_path / "pty.log")
    child.expect("counting every single word")
    child.send(Key.BACKSPACE * 3 + "300" + Key.ENTER)
    child.expect("Topic")
    child.send("tea" + Key.ENTER)
    child.expect("Esc Enter")
    child.send(Key.ENTER)
    status, log = finish(child)
    assert status == 0
    lines = [line for line in _plain(log).split("\n") if line.strip()]
    assert all(len(line) < 50 for line in lines[:5]), lines  # later ones hold redraws
    assert lines[:5] == [
        "Pick a length between one hundred and two",  # the help, between words
        "thousand words; the selector reads it as a hint",
        "for the structure.",
        "✗ words: must be at least 100",  # the refused prefill, right above its question
        "? How many words should the essay have at most,"]
    assert lines[5].startswith("  counting every single word ")  # the label goes on, indented
    assert "it (Esc Enter adds a new line, Ctrl-C cancels):" in lines


def test_a_typed_answer_that_fails_says_why_on_the_line_under_it(tmp_path: Path) -> None:
    (tmp_path / ".vance" / "wizards").mkdir(parents=True)
    (tmp_path / ".vance" / "wizards" / "probe.yaml").write_text(PROBE, encoding="utf-8")
    child = spawn_vance(["wizard", "run", "probe", "--print"], env={"NO_COLOR": "1"},
                        cwd=tmp_path, dimensions=(30, 50), log=tmp_path / "pty.log")
    child.expect("counting every single word")
    child.send("5" + Key.ENTER)  # refused: the question stays
    child.expect("must be at least 100")
    child.send(Key.BACKSPACE + "300" + Key.ENTER)
    child.expect("Topic")
    child.send("tea" + Key.ENTER)
    child.expect("Esc Enter")
    child.send(Key.ENTER)
    status, _ = finish(child)
    assert status == 0
    with open(tmp_path / "pty.log", encoding="utf-8", newline="") as raw:  # "\r" kept
        plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x07", "", raw.read()).replace("\r", "")
    rows = plain.split("\n")
    at = next(i for i, row in enumerate(rows) if row.startswith("must be at least 100"))
    # the reason is on the row right under the question and its answer
    assert rows[at - 1].startswith("  counting every single word "), rows[at - 2:at + 1]
