"""The shell's REPL driven through prompt-toolkit's pipe input (keys as a terminal sends them)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from helpers import build_file_tree, run_cli
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output.plain_text import PlainTextOutput
from terminal import Key

from vance_cli.cli import output
from vance_cli.cli.app import app
from vance_cli.cli.shell.dispatch import Shell
from vance_cli.cli.shell.repl import run_interactive


class Run:
    """One REPL run: its exit code, stdout, stderr, and what the terminal showed."""

    def __init__(self, code: int, stdout: str, stderr: str, terminal: str) -> None:
        self.code, self.stdout, self.stderr, self.terminal = code, stdout, stderr, terminal


@pytest.fixture()
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as inp:
        yield inp


def _run(pipe: PipeInput, capsys: pytest.CaptureFixture[str], *keys: str,
         args: tuple[str, ...] = ("shell",), dry_run: bool = False) -> Run:
    output.console.cache_clear()
    pipe.send_text("".join(keys))
    screen = io.StringIO()
    term = PlainTextOutput(screen)
    root = typer.main.get_command(app)
    with root.make_context("vance", list(args)) as ctx:
        shell = Shell(ctx, dry_run=dry_run, interactive=True, term_input=pipe, term_output=term)
        code = run_interactive(shell, term_input=pipe, term_output=term)
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err, screen.getvalue())


def _tasks() -> list[str]:
    return [entry["task"] for entry in run_cli(["log", "--json"]).json()]


def test_help_then_ctrl_d_exits_0(pipe: PipeInput, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(pipe, capsys, "/help", Key.ENTER, Key.CTRL_D)
    assert run.code == 0
    assert "/wizard [NAME]" in run.stdout and "/quit" in run.stdout
    assert "vance shell — type a task for the selector, or /help." in run.terminal
    assert "vance> " in run.terminal


def test_ctrl_c_clears_the_line_and_the_shell_goes_on(
        pipe: PipeInput, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(pipe, capsys, "half typed task", Key.CTRL_C, "/quit", Key.ENTER)
    assert run.code == 0
    assert _tasks() == []  # the cleared line was never sent


def test_ctrl_d_on_a_non_empty_line_does_not_exit(
        pipe: PipeInput, capsys: pytest.CaptureFixture[str]) -> None:
    # Ctrl-D with text deletes the character under the cursor (none at the end): no exit
    run = _run(pipe, capsys, "/hel", Key.CTRL_D, "p", Key.ENTER, Key.CTRL_D)
    assert run.code == 0 and "/wizard [NAME]" in run.stdout


def test_errors_do_not_end_the_shell(pipe: PipeInput, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(pipe, capsys, "/wizrd", Key.ENTER, "/process show nope", Key.ENTER,
               "/help", Key.ENTER, "/exit", Key.ENTER)
    assert run.code == 0
    assert ("vance: error: unknown command '/wizrd' — did you mean /wizard or /wizards?"
            in run.stderr)
    assert "vance: error: no process with id or name 'nope'" in run.stderr
    assert "/wizard [NAME]" in run.stdout  # /help still ran after two failures


def test_plain_text_is_delegated(pipe: PipeInput, capsys: pytest.CaptureFixture[str]) -> None:
    task = "Write a short essay about the history of tea"
    run = _run(pipe, capsys, task, Key.ENTER, Key.CTRL_D, dry_run=True)
    assert run.code == 0
    assert "decision: MATCH" in run.stdout and "recipe: essay-pipeline" in run.stdout
    assert _tasks() == [task]


def test_wizard_prompt_lands_in_the_input_buffer_and_enter_sends_the_edit(
        pipe: PipeInput, capsys: pytest.CaptureFixture[str], vance_home: Path) -> None:
    run = _run(pipe, capsys,
               "/wizard essay-mit-recipe --dry-run", Key.ENTER,
               "plain-essay", Key.ENTER,                 # Recipe
               "Trees in cities", Key.ENTER,             # Topic
               Key.ENTER,                                # Audience (optional)
               Key.ENTER,                                # save the answers? no
               Key.END_OF_BUFFER, Key.ESC_ENTER, "Keep it under 800 words.", Key.ENTER,
               Key.CTRL_D)
    assert run.code == 0
    (task,) = _tasks()
    assert task.startswith('Write an essay with the essay recipe "plain-essay"')
    assert "Topic: Trees in cities\nAudience: curious general readers" in task
    assert task.endswith("say so and stop instead of improvising one.\n"
                         "Keep it under 800 words.")
    assert "decision: MATCH" in run.stdout and "dry run" in run.stdout
    assert "The prompt is in the input line" in run.terminal
    history = (vance_home / "state" / "shell-history").read_text(encoding="utf-8")
    assert "+/wizard essay-mit-recipe --dry-run" in history
    assert "Trees in cities" not in history  # the rendered prompt stays out of the file


def test_ctrl_c_discards_the_wizard_prompt(pipe: PipeInput,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(pipe, capsys,
               "/wizard essay-mit-recipe --set recipe=r --set topic=t", Key.ENTER,
               Key.ENTER,                                # Audience
               Key.ENTER,                                # save the answers? no
               Key.CTRL_C,                               # drop the rendered prompt
               "/help", Key.ENTER, Key.CTRL_D)
    assert run.code == 0
    assert _tasks() == []
    assert "/wizard [NAME]" in run.stdout  # the next line was an ordinary prompt again


def test_ctrl_c_in_the_wizard_form_cancels_only_the_form(
        pipe: PipeInput, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(pipe, capsys, "/wizard gremium", Key.ENTER, "half", Key.CTRL_C,
               "/help", Key.ENTER, Key.CTRL_D)
    assert run.code == 0
    assert "/wizard [NAME]" in run.stdout
    assert _tasks() == []


def test_a_wizard_prompt_that_starts_with_a_slash_is_still_a_task(
        pipe: PipeInput, capsys: pytest.CaptureFixture[str], project_dir: Path) -> None:
    build_file_tree(project_dir, {"wizards/slashy.yaml": """
        title: Slashy
        promptTemplate: "/quit is not a command here: {{ x }}"
        fields: [{name: x, type: string, required: true}]
        """})
    run = _run(pipe, capsys, "/wizard slashy", Key.ENTER, "tea", Key.ENTER,
               Key.ENTER,  # save the answers? no
               Key.ENTER, Key.CTRL_D, dry_run=True)
    assert run.code == 0
    assert _tasks() == ["/quit is not a command here: tea"]


def test_new_events_are_shown_between_prompts_and_stay_pending(
        pipe: PipeInput, capsys: pytest.CaptureFixture[str]) -> None:
    parent = run_cli(["process", "create", "--recipe", "translate", "--name", "boss",
                      "--json"]).json()["id"]
    old = run_cli(["process", "create", "--recipe", "translate", "--name", "old",
                   "--parent", parent, "--json"]).json()["id"]
    kid = run_cli(["process", "create", "--recipe", "translate", "--name", "kid",
                   "--parent", parent, "--json"]).json()["id"]
    run_cli(["process", "stop", old])  # pending before the shell starts: counted only
    run = _run(pipe, capsys, f"/process stop {kid}", Key.ENTER, Key.ENTER, Key.CTRL_D)
    assert run.code == 0
    assert "1 pending event(s) in this session" in run.terminal
    assert f"child_closed: kid ({kid}) closed STOPPED — for {parent}" in run.stdout
    assert f"old ({old})" not in run.stdout
    assert run.stdout.count("child_closed") == 1  # shown once, not at every prompt
    events = run_cli(["process", "events", "--json"]).json()
    assert [e["consumedAt"] for e in events] == [None, None]  # showing does not ack


def test_history_persists_across_runs(pipe: PipeInput, capsys: pytest.CaptureFixture[str],
                                      vance_home: Path) -> None:
    first = _run(pipe, capsys, "/recipe show translate", Key.ENTER, Key.CTRL_D)
    assert first.code == 0 and "translate" in first.stdout
    with create_pipe_input() as second_pipe:
        second = _run(second_pipe, capsys, Key.UP, Key.ENTER, "/log", Key.ENTER, Key.CTRL_D)
    assert second.code == 0
    assert "engine" in second.stdout and "translate" in second.stdout  # the recalled line ran
    history = (vance_home / "state" / "shell-history").read_text(encoding="utf-8")
    # a recalled line that repeats the newest entry is not stored twice (prompt-toolkit's rule)
    assert history.count("+/recipe show translate") == 1 and history.count("+/log") == 1


def test_the_wizard_toolbar_goes_once_its_prompt_is_sent(
        pipe: PipeInput, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from prompt_toolkit import PromptSession

    toolbars: list[object] = []
    real = PromptSession.prompt

    def spy(self: PromptSession[str], *args: object, **kwargs: object) -> str:
        try:
            return real(self, *args, **kwargs)  # type: ignore[arg-type]
        finally:
            toolbars.append(self.bottom_toolbar)

    monkeypatch.setattr(PromptSession, "prompt", spy)
    run = _run(pipe, capsys, "/wizard essay-mit-recipe --set recipe=r --set topic=t --dry-run",
               Key.ENTER, Key.ENTER, Key.ENTER, Key.ENTER, "/help", Key.ENTER, Key.CTRL_D)
    assert run.code == 0
    shell_prompts = [t for t in toolbars if t is None or "Enter: send" in str(t)]
    assert shell_prompts[0] is None                  # /wizard …
    assert "Enter: send" in str(shell_prompts[1])    # the wizard's prompt in the line
    assert shell_prompts[2:] == [None, None]         # /help, then Ctrl-D: no toolbar left
