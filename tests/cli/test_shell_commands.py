"""``vance shell``: line parsing, the command table, and dispatch (script mode, in-process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from helpers import build_file_tree, run_cli

from vance_cli.base.config import load_settings
from vance_cli.base.errors import InputError
from vance_cli.cli.app import app
from vance_cli.cli.shell.commands import (
    COMMANDS,
    DelegateArgs,
    ParsedLine,
    WizardArgs,
    find_command,
    parse_delegate_args,
    parse_line,
    parse_wizard_args,
    unknown_command,
)
from vance_cli.cli.shell.dispatch import Shell
from vance_cli.processes.model import Status
from vance_cli.processes.records import transition
from vance_cli.processes.worker import worker_identity
from vance_cli.state import process_store
from vance_cli.workspace import Workspace

BUNDLED_CATALOG = Path(__file__).resolve().parents[2] / "catalog" / "engines.yaml"


@pytest.mark.parametrize(("line", "expected"), [
    ("", ParsedLine("empty")),
    ("   \t ", ParsedLine("empty")),
    ("Translate this letter", ParsedLine("task", "Translate this letter")),
    ("  padded task  ", ParsedLine("task", "padded task")),
    ("/help", ParsedLine("command", "", "help")),
    ("/HELP", ParsedLine("command", "", "HELP")),
    ("/process  show  3f9a ", ParsedLine("command", "show  3f9a", "process")),
    ("/delegate Write about 'tea'", ParsedLine("command", "Write about 'tea'", "delegate")),
    ("//etc/hosts explained", ParsedLine("task", "/etc/hosts explained")),
    ("/", ParsedLine("command", "", "")),
    ("line one\n/not a command", ParsedLine("task", "line one\n/not a command")),
    ("/delegate\nTask on the next line", ParsedLine("command", "Task on the next line",
                                                    "delegate")),
], ids=repr)
def test_parse_line(line: str, expected: ParsedLine) -> None:
    assert parse_line(line) == expected


@pytest.mark.parametrize(("name", "found"), [
    ("wizard", "wizard"), ("Wizard", "wizard"), ("exit", "quit"), ("quit", "quit"),
    ("process", "process"), ("catalog", "catalog"), ("help", "help"), ("delegate", "delegate"),
    ("wiz", None), ("", None), ("processes", None),
])
def test_find_command(name: str, found: str | None) -> None:
    command = find_command(name)
    assert (command.name if command else None) == found


def test_every_command_named_in_the_issue_is_in_the_table() -> None:
    names = {c.name for c in COMMANDS}
    assert {"wizard", "delegate", "process", "catalog", "help", "quit"} <= names
    assert find_command("exit") is find_command("quit")


@pytest.mark.parametrize(("typed", "suggested"), [
    ("wizrd", ["/wizard"]), ("proces", ["/process"]), ("quti", ["/quit"]),
    ("catalgo", ["/catalog"]), ("zzzz", []),
])
def test_unknown_command_suggests_close_names(typed: str, suggested: list[str]) -> None:
    error = unknown_command(typed)
    assert error.exit_code == 2
    assert error.details["close"][:len(suggested)] == suggested
    assert f"'/{typed}'" in error.message
    assert ("did you mean" in error.message) == bool(suggested)
    assert suggested or "/help lists the commands" in error.message


@pytest.mark.parametrize(("words", "expected"), [
    ([], WizardArgs(None)),
    (["gremium"], WizardArgs("gremium")),
    (["essay-mit-recipe", "--set", "recipe=x", "-s", "topic=y z", "--dry-run"],
     WizardArgs("essay-mit-recipe", ("recipe=x", "topic=y z"), True)),
    (["--set=recipe=x", "essay-mit-recipe"], WizardArgs("essay-mit-recipe", ("recipe=x",))),
    (["gremium", "--values", "a.yaml", "-s", "x=1"],
     WizardArgs("gremium", ("x=1",), values="a.yaml")),
    (["--values=b.json", "gremium"], WizardArgs("gremium", values="b.json")),
])
def test_parse_wizard_args(words: list[str], expected: WizardArgs) -> None:
    assert parse_wizard_args(words) == expected


@pytest.mark.parametrize(("words", "message"), [
    (["gremium", "--valuez", "x"], "no option '--valuez' \\(it takes --set KEY=VALUE, --values"
                                    " FILE and --dry-run\\)"),
    (["gremium", "--values"], "--values needs FILE"),
    (["gremium", "--values", "-"], "takes a file: the shell's stdin is its own input"),
    (["gremium", "--set"], "--set needs KEY=VALUE"),
    (["gremium", "essay-recipe"], "one wizard name"),
])
def test_parse_wizard_args_rejects(words: list[str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_wizard_args(words)


@pytest.mark.parametrize(("text", "expected"), [
    ("Write it", DelegateArgs("Write it")),
    ("--dry-run Write it", DelegateArgs("Write it", dry_run=True)),
    ("--no-fallback Book a flight", DelegateArgs("Book a flight", fallback=False)),
    ("--dry-run --async-fallback  Plan it", DelegateArgs("Plan it", True, True, True)),
    ("-- --dry-runner is a word", DelegateArgs("--dry-runner is a word")),
    ("it's 'quoted' \"text\" --no-fallback", DelegateArgs("it's 'quoted' \"text\" --no-fallback")),
])
def test_parse_delegate_args_keeps_the_task_verbatim(text: str, expected: DelegateArgs) -> None:
    assert parse_delegate_args(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("", "usage: /delegate"),
    ("--dry-run", "usage: /delegate"),
    ("--no-fallbak Book a flight", "unknown option --no-fallbak"),
    ("--dry-runner is a word", "put -- before a task that starts with --"),
    ("--no-fallback --async-fallback x", "exclude each other"),
])
def test_delegate_flags_and_task_errors(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_delegate_args(text)


def test_delegate_no_fallback_reaches_the_delegate() -> None:
    result = run_cli(["shell"], input="/delegate --no-fallback Transfer 200 euros\n")
    assert result.exit_code == 0, result.stderr
    assert "decision: NONE" in result.stdout and "fallback:" not in result.stdout
    (entry,) = run_cli(["log", "--json"]).json()
    assert entry["task"] == "Transfer 200 euros"


# --- dispatch, through `vance shell` with a script on stdin --------------------------------

TEA = "Write a short essay about the history of tea"


def _log() -> list[dict[str, object]]:
    return run_cli(["log", "--json"]).json()  # type: ignore[no-any-return]


def test_a_plain_line_prints_what_vance_delegate_prints() -> None:
    shell = run_cli(["shell", "--dry-run"], input=TEA + "\n")
    direct = run_cli(["delegate", "--task", TEA, "--dry-run"])
    assert shell.exit_code == direct.exit_code == 0
    assert shell.stdout == direct.stdout
    assert "decision: MATCH" in shell.stdout and "recipe: essay-pipeline" in shell.stdout
    tasks = [entry["task"] for entry in _log()]
    assert tasks == [TEA, TEA]


def test_delegate_command_and_plain_text_start_a_process_without_dry_run() -> None:
    result = run_cli(["shell"], input=f"/delegate {TEA}\n/process list --json\n")
    assert result.exit_code == 0, result.stderr
    listing = json.loads(result.stdout[result.stdout.index("["):])
    assert [p["recipe"] for p in listing] == ["essay-pipeline"]


def test_script_stops_at_the_first_failing_line_with_its_exit_code() -> None:
    script = "# a comment\n\n/help\n/wizrd gremium\n/process list\n"
    result = run_cli(["shell"], input=script)
    assert result.exit_code == 2
    assert "vance: error: line 4: unknown command '/wizrd' — did you mean /wizard or /wizards?" \
        in result.stderr
    assert "0 processes" not in result.stdout  # line 5 never ran
    assert "/wizard [NAME]" in result.stdout  # /help ran


def test_quit_ends_the_script_with_exit_0() -> None:
    result = run_cli(["shell"], input="/exit\n/wizrd\n")
    assert result.exit_code == 0 and result.stderr == ""


def test_a_none_decision_is_not_a_failure() -> None:
    result = run_cli(["shell", "--dry-run"], input="qwzx vlorp\n/log -n 1 --json\n")
    assert result.exit_code == 0, result.stderr
    assert "decision: NONE" in result.stdout


def test_unknown_subcommand_and_usage_errors_name_the_shell_command() -> None:
    result = run_cli(["shell"], input="/process lst\n")
    assert result.exit_code == 2
    assert "/process has no subcommand 'lst' — did you mean list" in result.stderr
    result = run_cli(["shell"], input="/process show\n")
    assert result.exit_code == 2
    assert "Missing argument 'ID' — see '/process show --help'" in result.stderr
    result = run_cli(["shell"], input="/process list --frob\n")
    assert result.exit_code == 2 and "--frob" in result.stderr


def test_process_wait_keeps_the_exit_codes_of_vance_process_wait() -> None:
    created = run_cli(["process", "create", "--recipe", "translate", "--name", "w1", "--json"])
    pid = created.json()["id"]
    ws = Workspace(load_settings())  # a turn is under way: RUNNING under this (live) pid
    transition(ws, pid, Status.RUNNING)
    with ws.db.transaction():
        process_store.set_worker(ws.db, pid, os.getpid(), worker_identity())
    ws.close()
    result = run_cli(["shell"], input=f"/process wait {pid[:8]} --timeout 0.2\n")
    assert result.exit_code == 124
    assert "timed out" in result.stderr
    run_cli(["process", "stop", pid])
    result = run_cli(["shell"], input=f"/process wait {pid} --json\n/process show {pid} --json\n")
    assert result.exit_code == 1  # closed, but STOPPED rather than DONE
    assert json.loads(result.stdout)["process"]["closeReason"] == "STOPPED"


def test_group_without_subcommand_and_help_show_the_groups_help() -> None:
    for script in ("/catalog\n", "/help catalog\n", "/catalog --help\n"):
        result = run_cli(["shell"], input=script)
        assert result.exit_code == 0, (script, result.stderr)
        assert "Usage: /catalog" in result.stdout and "reload" in result.stdout
    result = run_cli(["shell"], input="/help wizard\n")
    assert "usage: /wizard [NAME]" in result.stdout


def test_help_for_an_unknown_command_is_an_error() -> None:
    result = run_cli(["shell"], input="/help wizzard\n")
    assert result.exit_code == 2 and "did you mean /wizard" in result.stderr


def test_unbalanced_quotes_are_a_usage_error() -> None:
    result = run_cli(["shell"], input="/process show 'abc\n")
    assert result.exit_code == 2 and "cannot split the arguments" in result.stderr


def test_wizard_without_a_terminal_needs_set_and_sends_at_once() -> None:
    result = run_cli(["shell"], input="/wizard essay-mit-recipe --set recipe=plain\n")
    assert result.exit_code == 2
    assert "topic" in result.stderr and "stdin is not a terminal" in result.stderr
    line = "/wizard essay-mit-recipe --set recipe=plain --set 'topic=Trees in cities' --dry-run"
    result = run_cli(["shell"], input=line + "\n")
    assert result.exit_code == 0, result.stderr
    assert "decision: MATCH" in result.stdout
    (entry,) = _log()
    assert str(entry["task"]).startswith('Write an essay with the essay recipe "plain"')
    assert "Topic: Trees in cities" in str(entry["task"]) and entry["dryRun"] is True


def test_wizard_in_a_script_takes_a_values_file(tmp_path: Path) -> None:
    answers = tmp_path / "answers.yaml"
    answers.write_text("recipe: plain\ntopic: from the file\n", encoding="utf-8")
    missing = run_cli(["shell"], input="/wizard essay-mit-recipe --set recipe=plain\n")
    assert ("give them with /wizard essay-mit-recipe --set KEY=VALUE or --values FILE"
            in missing.stderr)
    line = f"/wizard essay-mit-recipe --values {answers} --set 'topic=Set wins' --dry-run"
    result = run_cli(["shell"], input=line + "\n")
    assert result.exit_code == 0, result.stderr
    (entry,) = _log()
    assert "Topic: Set wins" in str(entry["task"])
    assert str(entry["task"]).startswith('Write an essay with the essay recipe "plain"')


def test_wizard_prefill_of_an_unknown_field_warns() -> None:
    line = "/wizard essay-mit-recipe --set recipe=r --set topic=t --set colour=red --dry-run"
    result = run_cli(["shell"], input=line + "\n")
    assert result.exit_code == 0
    assert "'colour' is not a field of wizard 'essay-mit-recipe'" in result.stderr


def test_wizard_without_a_name_lists_the_wizards() -> None:
    result = run_cli(["shell"], input="/wizard\n")
    assert result.exit_code == 0
    assert "essay-mit-recipe" in result.stdout and "gremium" in result.stdout


def test_unknown_wizard_suggests_names() -> None:
    result = run_cli(["shell"], input="/wizard gremiun\n")
    assert result.exit_code == 2 and "did you mean 'gremium'" in result.stderr


def test_catalog_reload_of_a_bad_file_keeps_the_previous_catalog(tmp_path: Path) -> None:
    build_file_tree(tmp_path, {"good.yaml": BUNDLED_CATALOG.read_text(encoding="utf-8"),
                               "bad.yaml": "engines:\n  ford: [unclosed\n"})
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    result = run_cli(["shell"], input=f"/catalog reload --file {good}\n/catalog show --json\n")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout[result.stdout.index("{"):])["source"] == str(good)
    result = run_cli(["shell"], input=f"/catalog reload --file {bad}\n")
    assert result.exit_code == 1
    assert f"{bad}:" in result.stderr and f"still active: {good}" in result.stderr
    assert run_cli(["catalog", "show", "--json"]).json()["source"] == str(good)


def test_catalog_reload_is_seen_by_later_lines_of_the_same_shell(tmp_path: Path) -> None:
    text = BUNDLED_CATALOG.read_text(encoding="utf-8")
    build_file_tree(tmp_path, {"mine.yaml": text})
    mine = tmp_path / "mine.yaml"
    result = run_cli(["shell"], input=f"/catalog show --json\n/catalog reload --file {mine}\n"
                                      "/catalog show --json\n")
    assert result.exit_code == 0, result.stderr
    first, second = (json.loads(line) for line in result.stdout.splitlines()
                     if line.startswith("{"))  # piped: one line per document
    assert first["source"] == "bundled"
    assert second["source"] == str(mine)


def test_global_flags_reach_the_shells_commands(tmp_path: Path) -> None:
    result = run_cli(["--session", "s2", "shell"], input=f"/delegate {TEA}\n")
    assert result.exit_code == 0
    assert [p["session"] for p in run_cli(["--session", "s2", "process", "list", "--json"]).json()
            ] == ["s2"]
    assert run_cli(["process", "list", "--json"]).json() == []


def test_unexpected_error_is_one_line_and_the_traceback_needs_debug(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import vance_cli.cli.commands.delegate as delegate_command

    def boom(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(delegate_command, "delegate_and_start", boom)
    result = run_cli(["shell"], input=f"{TEA}\n")
    assert result.exit_code == 1
    assert "vance: error: line 1: RuntimeError: disk on fire (run with --debug" in result.stderr
    assert "Traceback" not in result.stderr
    result = run_cli(["--debug", "shell"], input=f"{TEA}\n")
    assert "Traceback" in result.stderr and "disk on fire" in result.stderr


# --- the real program, stdin a pipe ------------------------------------------------------

def _vance(args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vance_cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=60, check=False)


def test_piped_stdin_runs_as_a_script_without_prompt_or_colors() -> None:
    result = _vance(["shell", "--dry-run"], f"/help\n{TEA}\n")
    assert result.returncode == 0, result.stderr
    assert "vance>" not in result.stdout + result.stderr
    assert "\x1b" not in result.stdout + result.stderr
    assert "/wizard [NAME]" in result.stdout and "decision: MATCH" in result.stdout


def test_empty_stdin_ends_at_once_with_exit_0() -> None:
    result = _vance(["shell"], "")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_shell_help_imports_no_prompt_toolkit() -> None:
    code = ("import sys\nfrom vance_cli.cli.boundary import run\nrun(['shell', '--help'])\n"
            "sys.stderr.write('MODULES=' + ','.join(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    loaded = {m.split(".")[0] for m in proc.stderr.rsplit("MODULES=", 1)[1].split(",")}
    assert "Usage" in proc.stdout
    assert loaded & {"prompt_toolkit", "questionary", "openai", "jinja2"} == set()


def test_a_json_command_that_fails_prints_the_json_error_as_vance_does() -> None:
    shell = run_cli(["shell"], input="/process show nope --json\n")
    direct = run_cli(["process", "show", "nope", "--json"])
    assert shell.exit_code == direct.exit_code == 2
    assert shell.json() == direct.json()
    assert shell.json()["error"] == "process_not_found"


def test_help_speaks_german_in_a_german_session() -> None:
    result = run_cli(["--lang", "de", "shell"], input="/help\n")
    assert result.exit_code == 0
    assert "einen Wizard ausfüllen" in result.stdout
    assert "fill a wizard" not in result.stdout


def test_a_reload_from_another_terminal_applies_to_the_shells_next_line(
        tmp_path: Path) -> None:
    extra = ("  deep-thought:\n    purpose: Computes the answer.\n"
             "    when_to_use: Questions that take long.\n    not_for: Anything urgent.\n")
    build_file_tree(tmp_path, {"mine.yaml": BUNDLED_CATALOG.read_text(encoding="utf-8")
                               .rstrip("\n") + "\n" + extra})
    with typer.main.get_command(app).make_context("vance", ["shell"]) as ctx:
        shell = Shell(ctx, interactive=False)
        assert "deep-thought" not in shell.ws.catalog().names  # read, and kept
        assert run_cli(["catalog", "reload", "--file", str(tmp_path / "mine.yaml")]
                       ).exit_code == 0  # another terminal
        assert "deep-thought" not in shell.ws.catalog().names
        assert shell.run_line("/help").code == 0
        assert "deep-thought" in shell.ws.catalog().names
