"""``vance delegate`` in a real pseudo-terminal: spinner on the terminal, task typed on stdin."""

from __future__ import annotations

import io
import os
import sys
import threading
from pathlib import Path

import pexpect
import pytest
from llm_server import ScriptedLLMServer
from terminal import ANSI, end, spawn_vance

pytestmark = pytest.mark.e2e

def _field(label: str, value: str) -> str:
    return f"{label}:{ANSI} {value}"


def _spawn(args: list[str], home: Path, extra: dict[str, str] | None = None) -> pexpect.spawn:
    return spawn_vance(args, env={"VANCE_HOME": str(home), "TERM": "xterm-256color",
                                  **(extra or {})}, dimensions=(40, 120))


def test_spinner_shows_on_the_terminal_while_the_llm_answers(
        llm_server: ScriptedLLMServer, vance_home: Path) -> None:
    gate = threading.Event()  # the answer comes only once the spinner was seen
    llm_server.reply('{"decision": "MATCH", "recipe": "translate", "rationale": "T."}',
                     gate=gate)
    child = _spawn(["delegate", "--task", "Render this in French"], vance_home,
                   llm_server.env())
    child.expect("Asking the selector")
    gate.set()
    child.expect(_field("decision", "MATCH"))
    child.expect(_field("recipe", "translate"))
    end(child)
    assert child.exitstatus == 0


def test_task_typed_on_stdin_ends_with_ctrl_d(vance_home: Path) -> None:
    child = _spawn(["delegate", "--task", "-", "--dry-run"], vance_home)
    child.expect("Reading the task from stdin; end it with Ctrl-D.")
    child.sendline("Write a short essay about the history of tea")
    child.sendeof()
    child.expect(_field("decision", "MATCH"))
    child.expect(_field("recipe", "essay-pipeline"))
    child.expect(_field("process", r"none \(dry run: nothing started\)"))
    end(child)
    assert child.exitstatus == 0


def test_ctrl_c_while_waiting_for_the_llm_exits_130(
        llm_server: ScriptedLLMServer, vance_home: Path) -> None:
    llm_server.reply('{"decision": "NONE", "recipe": null, "rationale": "n"}', delay=20)
    child = _spawn(["delegate", "--task", "Render this in French"], vance_home,
                   llm_server.env(timeout=30))
    child.expect("Asking the selector")
    child.sendintr()
    end(child)
    assert child.exitstatus == 130, (child.signalstatus, child.before)
    assert "Traceback" not in (child.before or "")


def test_batch_shows_a_progress_bar_on_the_terminal_and_keeps_stdout_clean(
        llm_server: ScriptedLLMServer, vance_home: Path, tmp_path: Path) -> None:
    llm_server.reply('{"decision": "NONE", "recipe": null, "rationale": "vague"}')
    gate = threading.Event()  # the first item's answer comes only once the bar was seen
    for i in range(3):
        llm_server.reply('{"decision": "MATCH", "recipe": "translate", "rationale": "fr"}',
                         gate=gate if i == 0 else None)
    items, out = tmp_path / "items.txt", tmp_path / "out.jsonl"
    items.write_text("alpha\nbeta\ngamma\n")
    command = (f"{sys.executable} -m vance_cli delegate --task-template 'Handle {{{{ item }}}}'"
               f" --items {items} > {out}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VANCE_", "OPENAI_"))}
    env.update({"VANCE_HOME": str(vance_home), "TERM": "xterm-256color", "COLUMNS": "120",
                **llm_server.env()})
    child = pexpect.spawn("/bin/sh", ["-c", command], env=env, encoding="utf-8", timeout=30,
                          dimensions=(40, 120))
    child.expect("Delegating")  # the bar, on stderr (the terminal)
    gate.set()
    child.expect(r"batch: 3 items; 4 selector calls")
    end(child)
    assert child.exitstatus == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and all(line.startswith('{"decision": "MATCH"') for line in lines)


def test_batch_lines_on_a_terminal_stdout_show_no_bar(vance_home: Path, tmp_path: Path) -> None:
    items = tmp_path / "items.txt"
    items.write_text("tea\ncoffee\n")
    child = _spawn(["delegate", "--task-template", "Write a short essay about {{ item }}",
                    "--items", str(items), "--dry-run"], vance_home)
    seen = io.StringIO()
    child.logfile_read = seen
    child.expect(r"batch: 2 items; 1 selector call")
    end(child)
    assert child.exitstatus == 0
    assert seen.getvalue().count('{"decision": "MATCH"') == 2
    assert "Delegating" not in seen.getvalue()
