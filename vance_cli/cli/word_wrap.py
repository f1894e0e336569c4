"""Soft word wrap for an editable prompt-toolkit buffer (the wizard's final prompt).

prompt-toolkit wraps a long line at the window's edge, inside a word. ``WordWrap``
is an input processor that pads the display (never the text) with spaces in front
of a word that would cross the edge, so the word starts on the next screen row.
A word wider than the window still breaks at the edge. A prompt drawn before the
rows (the shell's ``vance> `` and its continuation of the same width) narrows
every row by its width. Rule: docs/wizards.md "Running a wizard".
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout.processors import Processor, Transformation, TransformationInput
from prompt_toolkit.layout.utils import explode_text_fragments
from prompt_toolkit.utils import get_cwidth


def padding(text: str, width: int) -> list[tuple[int, int]]:
    """Return where a line's display needs padding so no word crosses the edge.

    Args:
        text: one line of the buffer as displayed (no newline).
        width: the window's width in cells.

    Returns:
        ``(index, spaces)`` pairs, ascending: put ``spaces`` blanks before
        ``text[index]``. Empty when the line fits or ``width`` < 2.
    """
    if width < 2 or get_cwidth(text) <= width:
        return []
    pads: list[tuple[int, int]] = []
    column = 0
    index = 0
    while index < len(text):
        if text[index] != " " and (index == 0 or text[index - 1] == " "):
            end = text.find(" ", index)
            word = text[index:] if end == -1 else text[index:end]
            need = get_cwidth(word)
            if 0 < column and column + need > width >= need:
                pads.append((index, width - column))
                column = 0
        cells = get_cwidth(text[index])
        column = cells if column + cells > width else column + cells
        index += 1
    return pads


class WordWrap(Processor):
    """Pads the display so that words wrap whole at the window's edge.

    Args:
        prefix_width: returns the cells a line prefix takes on every screen row (a
            prompt, and a continuation as wide on the rows after it); None: no prefix.
    """

    def __init__(self, prefix_width: Callable[[], int] | None = None) -> None:
        self.prefix_width = prefix_width

    def apply_transformation(self, transformation_input: TransformationInput) -> Transformation:
        """Return the line's fragments with padding in front of words that would cross the edge."""
        fragments = explode_text_fragments(transformation_input.fragments)
        text = "".join(fragment[1] for fragment in fragments)
        taken = self.prefix_width() if self.prefix_width is not None else 0
        pads = padding(text, transformation_input.width - taken)
        if not pads:
            return Transformation(transformation_input.fragments)
        out: StyleAndTextTuples = []
        starts = dict(pads)
        for index, fragment in enumerate(fragments):
            if index in starts:
                out.append((fragment[0], " " * starts[index]))
            out.append(fragment)

        def to_display(position: int) -> int:
            return position + sum(spaces for at, spaces in pads if at <= position)

        def to_source(position: int) -> int:
            shift = 0
            for at, spaces in pads:
                if to_display(at) - spaces > position:
                    break
                shift += min(spaces, position - (to_display(at) - spaces))
            return position - shift

        return Transformation(out, source_to_display=to_display, display_to_source=to_source)
