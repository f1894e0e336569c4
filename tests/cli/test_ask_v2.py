"""showIf and steps in the terminal walk, over prompt-toolkit's pipe input (docs/wizards.md)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.plain_text import PlainTextOutput
from terminal import Key

from vance_cli.cli.ask import TerminalAsker
from vance_cli.documents.cascade import Layer
from vance_cli.wizards.form import fill_form
from vance_cli.wizards.loader import LoadedWizard, parse_wizard


def _wizard(*fields: dict[str, Any], **keys: Any) -> LoadedWizard:
    return parse_wizard({"title": "T", "promptTemplate": "x", "fields": list(fields), **keys},
                        "t", Layer.RESOURCE, Path("t.yaml"))


@pytest.fixture()
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as inp:
        yield inp


def test_a_field_hidden_by_show_if_is_not_asked(pipe: PipeInput) -> None:
    wizard = _wizard({"name": "now", "type": "boolean"},
                     {"name": "question", "type": "string", "required": True, "showIf": "now"},
                     {"name": "last", "type": "string"})
    pipe.send_text("n" + Key.ENTER + "end" + Key.ENTER)  # "question" is skipped
    asker = TerminalAsker("en", input=pipe, output=DummyOutput(), environ={})
    assert fill_form(wizard.spec.fields, {}, asker, "en") == {"now": False, "last": "end"}


def test_a_field_shown_by_show_if_is_asked(pipe: PipeInput) -> None:
    wizard = _wizard({"name": "now", "type": "boolean"},
                     {"name": "question", "type": "string", "required": True, "showIf": "now"})
    pipe.send_text("y" + Key.ENTER + "why?" + Key.ENTER)
    asker = TerminalAsker("en", input=pipe, output=DummyOutput(), environ={})
    assert fill_form(wizard.spec.fields, {}, asker, "en") == {"now": True, "question": "why?"}


STEPS = [{"title": "Basics", "fields": ["a"]}, {"title": "People", "fields": ["b"]},
         {"title": "End", "fields": ["c"]}]


def test_steps_show_a_header_and_go_back_one_step(pipe: PipeInput) -> None:
    wizard = _wizard({"name": "a", "type": "string"}, {"name": "b", "type": "string"},
                     {"name": "c", "type": "string"}, steps=STEPS)
    pipe.send_text("first" + Key.ENTER
                   + "bee" + Key.ENTER + "y" + Key.ENTER             # step 2, then: back to step 1
                   + Key.BACKSPACE * 5 + "again" + Key.ENTER  # its answer is the default
                   + Key.ENTER + "n" + Key.ENTER          # step 2 kept as it was, go on
                   + "sea" + Key.ENTER + "n" + Key.ENTER)
    screen = io.StringIO()
    asker = TerminalAsker("en", input=pipe, output=PlainTextOutput(screen), environ={})
    answers = fill_form(wizard.spec.fields, {}, asker, "en", wizard.spec.steps_in("en"))
    assert answers == {"a": "again", "b": "bee", "c": "sea"}
    text = screen.getvalue()
    assert text.count("Basics — step 1 of 3") == 2
    assert text.count("People — step 2 of 3") == 2
    assert "End — step 3 of 3" in text
    assert "Go back to step 1 (“Basics”)" in text
    assert "Go back to step 2 (“People”)" in text


def test_going_back_drops_an_answer_its_show_if_now_hides(pipe: PipeInput) -> None:
    wizard = _wizard({"name": "now", "type": "boolean"},
                     {"name": "q", "type": "string", "showIf": "now"},
                     steps=[{"title": "One", "fields": ["now"]},
                            {"title": "Two", "fields": ["q"]}])
    pipe.send_text("y" + Key.ENTER + "ask" + Key.ENTER + "y" + Key.ENTER  # back
                   + "n" + Key.ENTER + "n" + Key.ENTER)  # now = no: q hidden
    asker = TerminalAsker("en", input=pipe, output=DummyOutput(), environ={})
    assert fill_form(wizard.spec.fields, {}, asker, "en", wizard.spec.steps_in("en")) \
        == {"now": False}


def test_an_integer_default_is_replaced_by_typing_not_appended_to(pipe: PipeInput) -> None:
    wizard = _wizard({"name": "n", "type": "integer", "defaultValue": 1200},
                     {"name": "m", "type": "integer", "defaultValue": 5, "integerMax": 9})
    pipe.send_text("7" + Key.ENTER + Key.ENTER)  # typed over the first; the second kept
    asker = TerminalAsker("en", input=pipe, output=DummyOutput(), environ={})
    assert fill_form(wizard.spec.fields, {}, asker, "en") == {"n": "7", "m": "5"}


def test_after_the_editor_the_form_echoes_the_first_line(pipe: PipeInput,
                                                          tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nfor last; do :; done\nprintf "First line\\nsecond\\n" '
                      '> "$last"\n')
    editor.chmod(0o755)
    wizard = _wizard({"name": "t", "type": "textarea", "label": "Purpose"})
    screen = io.StringIO()
    asker = TerminalAsker("en", input=pipe, output=PlainTextOutput(screen),
                          environ={"EDITOR": str(editor)})
    assert fill_form(wizard.spec.fields, {}, asker, "en") == {"t": "First line\nsecond"}
    assert "Purpose: First line …" in screen.getvalue()


@pytest.mark.parametrize(("text", "width", "indent", "wrapped"), [
    ("short", 50, "", "short"),
    ("How many words should the essay have at most", 25, "",
     "How many words should\nthe essay have at most"),
    ("How many words should the essay have at most", 25, "  ",
     "How many words should\n  the essay have at most"),
    ("see https://example.org/a/very/long/path/that/is/one/word now", 22, "",
     "see\nhttps://example.org/a/very/long/path/that/is/one/word\nnow"),
    ("first line\n\nthird", 30, "", "first line\n\nthird"),
])
def test_wrap_words_breaks_lines_between_words_only(text: str, width: int, indent: str,
                                                    wrapped: str) -> None:
    from vance_cli.cli.ask import wrap_words

    assert wrap_words(text, width, indent) == wrapped
