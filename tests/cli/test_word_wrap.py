"""The final buffer's soft word wrap (vance_cli/cli/word_wrap.py), rendered by prompt-toolkit."""

from __future__ import annotations

import asyncio

import pytest
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.layout.containers import Window
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.processors import TransformationInput
from prompt_toolkit.layout.screen import Point, Screen, WritePosition

from vance_cli.cli.word_wrap import WordWrap, padding

TEXT = "You are the moderator of a council of three experts answering one question"


def _render(text: str, width: int, cursor: int, prompt: str = "") -> tuple[list[str], Point]:
    """Draw a buffer holding ``text`` into a window ``width`` cells wide, as the prompt does.

    ``prompt`` is drawn before the first row, and blanks of its width before every other
    row, as the shell's input line does with its prompt and continuation.
    """

    def prefix(line: int, wrap: int) -> list[tuple[str, str]]:
        return [("", prompt if (line, wrap) == (0, 0) else " " * len(prompt))]

    async def draw() -> tuple[list[str], Point]:
        buffer = Buffer(document=Document(text, cursor))
        wrap = WordWrap(lambda: len(prompt)) if prompt else WordWrap()
        window = Window(BufferControl(buffer=buffer, input_processors=[wrap]),
                        wrap_lines=True, get_line_prefix=prefix)
        screen = Screen()
        window.write_to_screen(screen, MouseHandlers(), WritePosition(0, 0, width, 12),
                               parent_style="", erase_bg=False, z_index=None)
        rows = ["".join(screen.data_buffer[y][x].char for x in range(width)).rstrip()
                for y in range(12)]
        assert window.render_info is not None
        return [row for row in rows if row], window.render_info.cursor_position

    return asyncio.run(draw())


def test_long_lines_wrap_between_words_and_the_text_is_unchanged() -> None:
    rows, _ = _render(TEXT + "\nsecond line", 20, 0)
    assert rows == ["You are the", "moderator of a", "council of three", "experts answering",
                    "one question", "second line"]  # without it: "You are the moderato" / "r of…"
    assert " ".join(rows[:-1]) == TEXT


def test_a_prompt_before_the_rows_narrows_them_and_words_still_wrap_whole() -> None:
    rows, cursor = _render(TEXT, 27, TEXT.index("council"), prompt="vance> ")
    assert rows == ["vance> You are the", "       moderator of a", "       council of three",
                    "       experts answering", "       one question"]
    assert cursor == Point(7, 2)  # without the prompt's width: "vance> You are the moderato"


@pytest.mark.parametrize(("word", "point"), [("moderator", Point(0, 1)), ("council", Point(0, 2)),
                                             ("question", Point(4, 4))])
def test_the_cursor_sits_where_its_character_is_shown(word: str, point: Point) -> None:
    _, cursor = _render(TEXT, 20, TEXT.index(word))
    assert cursor == point


def test_a_word_wider_than_the_window_still_breaks_at_the_edge() -> None:
    rows, _ = _render("abc " + "x" * 30, 20, 0)
    assert rows == ["abc " + "x" * 16, "x" * 14]


def test_a_line_that_fits_is_left_alone() -> None:
    assert padding("short line", 20) == []
    assert padding(TEXT, 1) == []


def test_display_and_source_positions_map_back_and_forth() -> None:
    line = TEXT
    ti = TransformationInput(buffer_control=None, document=Document(line), lineno=0,  # type: ignore[arg-type]
                             source_to_display=lambda i: i, fragments=[("", line)], width=20,
                             height=5)
    transformation = WordWrap().apply_transformation(ti)
    shown = "".join(fragment[1] for fragment in transformation.fragments)
    for source in range(len(line) + 1):
        display = transformation.source_to_display(source)
        assert transformation.display_to_source(display) == source
        if source < len(line):
            assert shown[display] == line[source]
    pad_start = shown.index("the ") + 4  # a click on the padding lands on the next word
    assert transformation.display_to_source(pad_start) == line.index("moderator")
