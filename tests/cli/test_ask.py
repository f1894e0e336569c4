"""The terminal Asker, driven through prompt-toolkit's pipe input (no real terminal)."""

from __future__ import annotations

import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from terminal import Key

from vance_cli.base.errors import Cancelled
from vance_cli.cli import ask
from vance_cli.cli.ask import TerminalAsker
from vance_cli.documents.cascade import Layer
from vance_cli.wizards.form import fill_form
from vance_cli.wizards.loader import LoadedWizard, parse_wizard


def _wizard(*fields: dict[str, Any]) -> LoadedWizard:
    return parse_wizard({"title": "T", "promptTemplate": "x", "fields": list(fields)},
                        "t", Layer.RESOURCE, Path("t.yaml"))


@pytest.fixture()
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as inp:
        yield inp


def _fill(pipe: PipeInput, wizard: LoadedWizard, *keys: str, environ: dict[str, str] | None = None,
          prefill: dict[str, Any] | None = None, lang: str = "en") -> dict[str, Any]:
    pipe.send_text("".join(keys))
    asker = TerminalAsker(lang, input=pipe, output=DummyOutput(), environ=environ or {})
    return fill_form(wizard.spec.fields, prefill or {}, asker, lang)


def test_every_field_type(pipe: PipeInput) -> None:
    wizard = _wizard(
        {"name": "s", "type": "string", "required": True},
        {"name": "pw", "type": "password"},
        {"name": "n", "type": "integer", "integerMin": 1, "integerMax": 9},
        {"name": "b", "type": "boolean"},
        {"name": "sel", "type": "select", "choices": ["a", "b", "c"], "required": True},
        {"name": "multi", "type": "multi_select", "choices": ["x", "y", "z"]},
    )
    answers = _fill(pipe, wizard,
                    Key.ENTER, "hello", Key.ENTER,            # empty refused, then typed
                    "s3cret", Key.ENTER,
                    "12", Key.ENTER, Key.BACKSPACE * 2, "x", Key.ENTER,  # above max, not a number
                    Key.BACKSPACE, "4", Key.ENTER,
                    "y", Key.ENTER,
                    Key.DOWN, Key.DOWN, Key.ENTER,
                    Key.SPACE, Key.DOWN, Key.DOWN, Key.SPACE, Key.ENTER)
    assert answers == {"s": "hello", "pw": "s3cret", "n": "4", "b": True, "sel": "c",
                       "multi": ["x", "z"]}


def test_defaults_are_offered_and_optional_select_can_be_left_empty(pipe: PipeInput) -> None:
    wizard = _wizard(
        {"name": "s", "type": "string", "defaultValue": "dflt"},
        {"name": "n", "type": "integer", "defaultValue": 1200},
        {"name": "b", "type": "boolean", "defaultValue": True},
        {"name": "sel", "type": "select", "choices": ["a", "b"], "defaultValue": "b"},
        {"name": "opt", "type": "select", "choices": ["a", "b"]},
    )
    answers = _fill(pipe, wizard, Key.ENTER, Key.ENTER, Key.ENTER, Key.ENTER,
                    Key.UP, Key.ENTER)
    assert answers == {"s": "dflt", "n": "1200", "b": True, "sel": "b", "opt": ""}


def test_german_labels_do_not_change_the_values(pipe: PipeInput) -> None:
    wizard = _wizard({"name": "sel", "type": "select", "required": True, "choices": [
        {"value": "no", "label": {"de": "Nein", "en": "No"}},
        {"value": "3.10", "label": {"de": "Drei", "en": "Three"}}]})
    assert _fill(pipe, wizard, Key.DOWN, Key.ENTER, lang="de") == {"sel": "3.10"}


def _editor(tmp_path: Path, text: str) -> Path:
    script = tmp_path / "editor.sh"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--flag" ]; then echo flag > "$(dirname "$0")/flag.log"; shift; fi\n'
        f"printf '{text}' > \"$1\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


@pytest.mark.parametrize("with_argument", [False, True])
def test_textarea_opens_the_editor_with_arguments_honoured(pipe: PipeInput, tmp_path: Path,
                                                           with_argument: bool) -> None:
    script = _editor(tmp_path, "First line\\r\\nSecond line\\n\\n")
    command = f"{script} --flag" if with_argument else str(script)
    wizard = _wizard({"name": "t", "type": "textarea", "required": True})
    answers = _fill(pipe, wizard, environ={"EDITOR": command})
    assert answers == {"t": "First line\nSecond line"}
    assert (tmp_path / "flag.log").exists() is with_argument


def test_visual_wins_over_editor_and_a_failing_editor_falls_back(pipe: PipeInput,
                                                                 tmp_path: Path) -> None:
    assert ask.editor_command({"VISUAL": "code --wait", "EDITOR": "vi"}) == "code --wait"
    assert ask.editor_command({"EDITOR": "  "}) is None
    wizard = _wizard({"name": "t", "type": "textarea", "required": True})
    answers = _fill(pipe, wizard, "typed instead", Key.ESC_ENTER,
                    environ={"EDITOR": str(tmp_path / "missing-editor")})
    assert answers == {"t": "typed instead"}


def test_textarea_without_an_editor_is_a_multiline_prompt(pipe: PipeInput) -> None:
    wizard = _wizard({"name": "t", "type": "textarea", "required": True})
    answers = _fill(pipe, wizard, "line one", Key.ENTER, "line two", Key.ESC_ENTER)
    assert answers == {"t": "line one\nline two"}


@pytest.mark.parametrize("key", [Key.CTRL_C, Key.CTRL_D])
@pytest.mark.parametrize("field", [
    {"name": "s", "type": "string"},
    {"name": "b", "type": "boolean"},
    {"name": "sel", "type": "select", "choices": ["a"]},
    {"name": "m", "type": "multi_select", "choices": ["a"]},
])
def test_ctrl_c_and_ctrl_d_cancel_every_prompt(pipe: PipeInput, key: Key,
                                               field: dict[str, Any]) -> None:
    wizard = _wizard({"name": "first", "type": "string"}, field)
    with pytest.raises(Cancelled) as caught:
        _fill(pipe, wizard, "kept", Key.ENTER, "partial", key)
    assert caught.value.partial == {"first": "kept"}


def test_repeat_loop_asks_another_within_bounds(pipe: PipeInput) -> None:
    wizard = _wizard({"name": "r", "type": "repeat", "min": 1, "max": 2,
                      "item": [{"name": "v", "type": "string", "required": True}]})
    assert _fill(pipe, wizard, "one", Key.ENTER, "y", Key.ENTER, "two", Key.ENTER) == {
        "r": [{"v": "one"}, {"v": "two"}]}  # max reached: no third question


def test_yes_no_waits_for_enter(pipe: PipeInput) -> None:
    """A habitual "n⏎" answers one question: the letter chooses, Enter submits."""
    wizard = _wizard({"name": "first", "type": "boolean", "defaultValue": True},
                     {"name": "second", "type": "boolean", "defaultValue": True},
                     {"name": "third", "type": "boolean", "defaultValue": False})
    assert _fill(pipe, wizard, "n", Key.ENTER, "y", "n", Key.ENTER, Key.ENTER) == {
        "first": False, "second": False, "third": False}


def test_final_buffer_has_the_shell_s_keys_enter_sends_esc_enter_adds_a_line(
        pipe: PipeInput) -> None:
    asker = TerminalAsker("en", input=pipe, output=DummyOutput())
    pipe.send_text(Key.BACKSPACE * 6 + "text" + Key.ESC_ENTER + "second line" + Key.ENTER)
    assert asker.edit_prompt("Rendered prompt", printing=False) == (
        "Rendered text\nsecond line")
    pipe.send_text(Key.CTRL_C)
    with pytest.raises(KeyboardInterrupt):
        asker.edit_prompt("x", printing=True)


def test_prompts_go_to_the_terminal_stream_never_stdout(
        pipe: PipeInput, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert ask.terminal_stream() is sys.stderr
    from prompt_toolkit.output.plain_text import PlainTextOutput

    output = PlainTextOutput(sys.stderr)
    pipe.send_text("answer" + Key.ENTER)
    asker = TerminalAsker("en", input=pipe, output=output)
    asker.section("Heading")
    assert fill_form(_wizard({"name": "s", "type": "string", "label": "Your name"}).spec.fields,
                     {}, asker, "en") == {"s": "answer"}
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Heading" in captured.err and "Your name" in captured.err


@pytest.mark.timeout(20)
def test_an_editor_that_never_saves_is_opened_a_few_times_then_the_text_is_typed(
        pipe: PipeInput, tmp_path: Path) -> None:
    counter = tmp_path / "count"
    script = tmp_path / "lazy-editor"
    script.write_text(f"#!/bin/sh\necho x >> {counter}\nexit 0\n")  # exits 0, writes nothing
    script.chmod(stat.S_IRWXU)
    wizard = _wizard({"name": "t", "type": "textarea", "required": True})
    said: list[str] = []
    asker = TerminalAsker("en", input=pipe, output=DummyOutput(), environ={"EDITOR": str(script)})
    asker._say = lambda text, style="": said.append(text)  # type: ignore[method-assign]
    pipe.send_text("typed instead" + Key.ESC_ENTER)
    assert fill_form(wizard.spec.fields, {}, asker, "en") == {"t": "typed instead"}
    assert counter.read_text().count("x") == ask.EDITOR_TRIES
    assert said.count("the editor closed without saving") == ask.EDITOR_TRIES
    assert "no valid text from the editor after 3 tries; type it here instead" in said


def _screen_of(pipe: PipeInput, wizard: LoadedWizard, keys: str, lang: str) -> tuple[Any, str]:
    import io

    from prompt_toolkit.output.plain_text import PlainTextOutput

    screen = io.StringIO()
    pipe.send_text(keys)
    asker = TerminalAsker(lang, input=pipe, output=PlainTextOutput(screen), environ={})
    return fill_form(wizard.spec.fields, {}, asker, lang), screen.getvalue()


@pytest.mark.parametrize(("lang", "keys", "answer", "shown"), [
    ("de", "j" + Key.ENTER, True, "(j/N)"),
    ("de", "J" + Key.ENTER, True, "Ja"),
    ("de", "n" + Key.ENTER, False, "Nein"),
    ("en", "y" + Key.ENTER, True, "(y/N)"),
])
def test_yes_no_speaks_the_session_language(pipe: PipeInput, lang: str, keys: str,
                                            answer: bool, shown: str) -> None:
    wizard = _wizard({"name": "b", "type": "boolean"})
    answers, screen = _screen_of(pipe, wizard, keys, lang)
    assert answers == {"b": answer} and shown in screen
    assert "(Y/n)" not in screen or lang == "en"


@pytest.mark.parametrize(("lang", "hint"), [("de", "(Pfeiltasten verwenden)"),
                                            ("en", "(Use arrow keys)")])
def test_menus_explain_their_keys_in_the_session_language(pipe: PipeInput, lang: str,
                                                          hint: str) -> None:
    wizard = _wizard({"name": "sel", "type": "select", "required": True, "choices": ["a"]})
    _answers, screen = _screen_of(pipe, wizard, Key.ENTER, lang)
    assert hint in screen


@pytest.mark.parametrize(("lang", "printing", "toolbar"), [
    ("de", False, " Enter: an den Selector senden · Esc Enter: neue Zeile · Strg-C: abbrechen "),
    ("de", True, " Enter: ausgeben · Esc Enter: neue Zeile · Strg-C: abbrechen "),
    ("en", False, " Enter: send to the selector · Esc Enter: new line · Ctrl-C: cancel "),
])
def test_the_prompt_toolbar_is_a_grammatical_phrase(
        pipe: PipeInput, monkeypatch: pytest.MonkeyPatch, lang: str, printing: bool,
        toolbar: str) -> None:
    from prompt_toolkit import PromptSession

    seen: list[object] = []
    real = PromptSession.__init__

    def spy(self: PromptSession[str], *args: Any, **kwargs: Any) -> None:
        seen.append(kwargs.get("bottom_toolbar"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(PromptSession, "__init__", spy)
    pipe.send_text(Key.ENTER)
    TerminalAsker(lang, input=pipe, output=DummyOutput()).edit_prompt("x", printing)
    assert seen == [toolbar]
