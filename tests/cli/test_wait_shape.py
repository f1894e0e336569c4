"""The live output of a ``--wait`` turn: answers printed one after another stay apart.

Issue 20, item 4: vogon's phases stream one after the other into the same
sink; a progress line between them (shown on stderr only on a terminal)
must leave the next phase's text apart from the previous one on stdout too.
"""

from __future__ import annotations

import pytest

from vance_cli.cli.run import TerminalSink


@pytest.mark.parametrize(("pieces", "expected"), [
    (["Outline: a, b", ("phase 2/2 draft: running",), "Draft text."],
     "Outline: a, b\n\nDraft text.\n"),
    (["Outline.\n", ("phase 2/2 draft: running",), "Draft."], "Outline.\n\nDraft.\n"),
    (["Outline.", ("phase 1/2 outline: done",), "\n\nQuestion?\n"], "Outline.\n\nQuestion?\n"),
    ([("phase 1/1 outline: running",), "Only."], "Only.\n"),  # nothing before: no gap
    (["One ", "answer."], "One answer.\n"),
])
def test_text_after_a_progress_line_starts_apart(
        capsys: pytest.CaptureFixture[str], pieces: list[object], expected: str) -> None:
    sink = TerminalSink(live=True)
    for piece in pieces:
        if isinstance(piece, tuple):
            sink.status(piece[0])
        else:
            assert isinstance(piece, str)
            sink.text(piece)
    sink.end()
    assert capsys.readouterr().out == expected
