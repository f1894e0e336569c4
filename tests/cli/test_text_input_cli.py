"""Arguments, stdin and environment that are not UTF-8: exit 2, a clear line, JSON with --json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli

BAD = b"\xe9".decode("utf-8", "surrogateescape")  # how Python hands a Latin-1 'é' in argv


@pytest.mark.parametrize(
    ("args", "stdin", "names"),
    [
        (["delegate", "--task", "-", "--json"], b"\xff Translate", "stdin (--task -)"),
        (["delegate", "--task", f"Translate th{BAD} text", "--json"], None,
         "argument 3 ('Translate th\\xe9 text', the value of --task)"),
        (["delegate", f"--task=Translate th{BAD} text", "--json"], None,
         "argument 2 ('--task=Translate th\\xe9 text', the value of --task)"),
        (["process", "show", f"{BAD}abc", "--json"], None, "argument 3 ('\\xe9abc')"),
        (["wizard", "render", "essay-recipe", "--set", f"recipeName=n{BAD}", "--json"], None,
         "argument 5 ('recipeName=n\\xe9', the value of --set)"),
        (["wizard", "render", "essay-recipe", "--values", "-", "--json"], b"recipeName: n\xe9\n",
         "stdin (--values -)"),
        (["delegate", "--task-template", "{{ item }}", "--items", "-", "--json"],
         b"Translate \xe9\n", "stdin (--items -)"),
    ],
)
def test_not_utf8_is_an_input_error(args: list[str], stdin: bytes | None, names: str) -> None:
    result = run_cli(args, input=stdin)
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(f"vance: error: {names} is not valid UTF-8 (byte 0x")
    assert result.stderr.count("\n") == 1 and "UnicodeEncodeError" not in result.stderr
    assert result.json()["error"] == "invalid_input"
    assert "not valid UTF-8" in result.json()["message"]


def test_not_utf8_environment_value_names_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_LLM_MODEL", f"qwen{BAD}")
    result = run_cli(["delegate", "--task", "Translate this", "--json"])
    assert result.exit_code == 2
    assert result.json()["message"] == ("llm.model (env:VANCE_LLM_MODEL): the value is not "
                                         "valid UTF-8 (byte 0xe9 at character 5)")


def test_shell_script_line_not_utf8_stops_the_script() -> None:
    result = run_cli(["shell", "--dry-run"], input=b"Translate this\nTranslate \xff\n")
    assert result.exit_code == 2
    assert "vance: error: stdin line 2 is not valid UTF-8 (byte 0xff at offset 10)" in \
        result.stderr


def test_debug_hint_only_without_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.cli.commands import recipe as recipes

    def broken(*_args: object, **_kw: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(recipes, "load_recipes", broken)
    plain = run_cli(["recipe", "list"])
    assert plain.exit_code == 1
    assert plain.stderr == ("vance: error: RuntimeError: boom (run with --debug for the "
                            "traceback)\n")
    debug = run_cli(["--debug", "recipe", "list"])
    assert debug.exit_code == 1
    assert "Traceback" in debug.stderr and "run with --debug" not in debug.stderr
    assert debug.stderr.endswith("vance: error: RuntimeError: boom\n")


def test_real_argv_bytes_in_a_subprocess() -> None:
    import json
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "vance_cli", "delegate", "--task", b"Translate th\xe9 text",
         "--json"], capture_output=True, env={**os.environ, "LANG": "C.UTF-8"}, timeout=60)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"] == "invalid_input"
    assert done.stderr.decode() == ("vance: error: argument 3 ('Translate th\\xe9 text', the value"
                                    " of --task) is not valid UTF-8 (byte 0xe9 at character 13)\n")


@pytest.mark.parametrize(("args", "option"), [
    ("delegate --task - --json", "--task"),
    ("wizard render gremium --values - --json", "--values"),
    ("delegate --task-template 'x {{ item }}' --items - --json", "--items"),
])
def test_closed_stdin_is_a_clear_usage_error(args: str, option: str) -> None:
    proc = subprocess.run(["bash", "-c", f"{sys.executable} -m vance_cli {args} <&-"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert f"{option} - reads stdin, but stdin is closed" in proc.stderr
    assert "Traceback" not in proc.stderr and "AttributeError" not in proc.stderr
    assert json.loads(proc.stdout)["error"] == "invalid_input"


def test_a_values_file_that_is_not_utf8_names_the_byte(tmp_path: Path) -> None:
    bad = tmp_path / "values.json"
    bad.write_bytes(b'{"name": "caf\xe9"}')
    result = run_cli(["wizard", "render", "gremium", "--values", str(bad), "--json"])
    assert result.exit_code == 2
    assert f"values file '{bad}' is not valid UTF-8 (byte 0xe9 at offset 13)" in result.stderr
