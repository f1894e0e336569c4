"""The sync Slartibartfast fallback in a real pseudo-terminal: spinner, outcome, Ctrl-C."""

from __future__ import annotations

import threading
from pathlib import Path

import pexpect
import pytest
from helpers import run_cli
from llm_server import ScriptedLLMServer
from terminal import ANSI, end, spawn_vance

pytestmark = pytest.mark.e2e

NONE = '{"decision": "NONE", "recipe": null, "rationale": "No recipe controls devices."}'
RECIPE = ("```yaml\nname: smart-home-control\ntitle: Smart home\nengine: ford\n"
          "description: Switches smart-home devices.\n```")


def _spawn(args: list[str], home: Path, extra: dict[str, str]) -> pexpect.spawn:
    return spawn_vance(args, env={"VANCE_HOME": str(home), "TERM": "xterm-256color", **extra},
                       dimensions=(40, 200))


def test_spinner_then_generated(llm_server: ScriptedLLMServer, vance_home: Path) -> None:
    llm_server.reply(NONE)
    gate = threading.Event()  # the recipe comes only once the spinner was seen
    llm_server.reply(RECIPE, gate=gate)
    child = _spawn(["delegate", "--task", "Turn off the lights", "--name", "lights"],
                   vance_home, llm_server.env())
    child.expect("Slartibartfast is designing a new recipe")
    gate.set()
    child.expect(f"fallback:{ANSI} GENERATED")
    child.expect(f"new recipe:{ANSI} _slart/")
    end(child)
    assert child.exitstatus == 0


def test_ctrl_c_stops_slart_and_exits_130(llm_server: ScriptedLLMServer,
                                          vance_home: Path) -> None:
    llm_server.reply(NONE)
    llm_server.reply(RECIPE, delay=20)
    child = _spawn(["delegate", "--task", "Turn off the lights"], vance_home,
                   llm_server.env(timeout=30))
    child.expect("Slartibartfast is designing a new recipe")
    child.sendintr()
    end(child)
    assert child.exitstatus == 130
    assert "Traceback" not in (child.before or "")
    listed = run_cli(["process", "list", "--json"])
    assert listed.exit_code == 0, listed.stderr
    [slart] = listed.json()
    assert (slart["recipe"], slart["status"], slart["closeReason"]) == \
        ("slartibartfast", "CLOSED", "STOPPED")
    assert slart["outcome"]["reason"] == "interrupted while Slartibartfast was working"
