"""material: quoted passages, fenced blocks and the lines after a request line are no evidence."""

from __future__ import annotations

import pytest

from vance_cli.ranking.material import request


@pytest.mark.parametrize(("task", "kept", "left_out"), [
    # a quoted passage of three words or more is material
    ("Summarise this: \"The city plans solar panels, costs rise by 3 percent\"",
     "Summarise this", "percent"),
    ("Schreib eine Erörterung zum Thema 'Sollten Handys verboten werden?' bitte",
     "Schreib eine Erörterung zum Thema", "Handys"),
    ("Übersetze den Satz „Wir freuen uns auf Sie“ ins Englische", "ins Englische", "freuen"),
    ("Translate «the office is closed today» into German", "into German", "office"),
    # a quoted word or two is part of the request
    ("Was bedeutet 'Idempotenz'?", "Idempotenz", None),
    ("Who wrote \"Faust\"?", "Faust", None),
    # apostrophes open no quote
    ("Write a toast for my grandma's birthday, it's on Friday", "grandma's birthday", None),
    # a fenced code block
    ("Explain this:\n```\ndef translate(x):\n    return x\n```", "Explain this", "translate"),
    # the lines after a request line ending with a colon
    ("tl;dr this thread pls:\n\nAnna: I'll fix checkout by the 9th", "tl;dr this thread",
     "checkout"),
    ("Turn these notes into a post:\n- opened in Leipzig\n- hiring", "into a post", "Leipzig"),
])
def test_material_is_blanked_out(task: str, kept: str, left_out: str | None) -> None:
    found = request(task)
    assert len(found) == len(task)          # offsets stay offsets into the task
    assert kept in found
    if left_out is not None:
        assert left_out not in found


def test_a_heading_line_is_no_request() -> None:
    task = "Context:\nWe sell shoes online. Summarise our reviews"
    assert request(task) == task


def test_a_task_without_material_is_unchanged() -> None:
    task = "Fix the bug in the parser, then add a regression test."
    assert request(task) is task or request(task) == task
