"""Orchestrators on a real terminal: progress lines while the turn runs, answers streamed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from llm_server import ScriptedLLMServer
from terminal import end, spawn_vance

pytestmark = pytest.mark.e2e

ESSAY = "Write a short essay about the history of tea"


def _spawn(args: list[str], home: Path, extra: dict[str, str]) -> pexpect.spawn:
    return spawn_vance(args, env={"VANCE_HOME": str(home), "TERM": "xterm-256color", **extra},
                       dimensions=(40, 120))


def test_essay_phases_show_their_progress_and_the_final_text_streams(
        llm_server: ScriptedLLMServer, vance_home: Path) -> None:
    for text in ("OUTLINE-TEXT", "DRAFT-TEXT", "REVIEW-TEXT", "FINAL-ESSAY-TEXT"):
        llm_server.reply(text, chunks=3, chunk_delay=0.05)
    child = _spawn(["delegate", "--task", ESSAY, "--wait"], vance_home, llm_server.env())
    child.expect(r"phase 1/4 outline: running \(default, process [0-9a-f]{8}\)")
    child.expect("OUTLINE-TEXT")
    child.expect("phase 1/4 outline: done")
    child.expect("phase 2/4 draft: running")
    child.expect("phase 3/4 review: done")
    child.expect("FINAL-ESSAY-TEXT")
    child.expect("phase 4/4 final: done")
    end(child)
    assert child.exitstatus == 0


def test_council_heads_report_as_they_answer(llm_server: ScriptedLLMServer,
                                             vance_home: Path) -> None:
    llm_server.reply(json.dumps({"heads": [{"name": "a", "persona": "A."},
                                           {"name": "b", "persona": "B."}]}))
    llm_server.reply("VIEW-A")
    llm_server.reply("VIEW-B")
    llm_server.reply("SYNTHESIS-TEXT", chunks=3)
    child = _spawn(["process", "create", "--recipe", "council-three-perspectives", "--name",
                    "c", "--goal", "Open a second shop?", "--wait"], vance_home,
                   llm_server.env())
    child.expect("council: a, b")
    child.expect(r"head [ab]: answered \(round 1")
    child.expect(r"head [ab]: answered \(round 1")
    child.expect("synthesis")
    child.expect("SYNTHESIS-TEXT")
    end(child)
    assert child.exitstatus == 0


def test_progress_lines_stay_off_a_pipe(llm_server: ScriptedLLMServer, vance_home: Path) -> None:
    for text in ("O", "D", "R", "FINAL"):
        llm_server.reply(text)
    env = {"VANCE_HOME": str(vance_home), "PATH": "/usr/bin:/bin", **llm_server.env()}
    done = subprocess.run([sys.executable, "-m", "vance_cli", "delegate", "--task", ESSAY,
                           "--wait"], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "phase 1/4" not in done.stderr and "phase" not in done.stdout.split("FINAL")[0]
