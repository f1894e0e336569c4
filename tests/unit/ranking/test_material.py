"""material: quoted passages, fenced blocks and the lines after a request line are no evidence."""

from __future__ import annotations

import pytest

from vance_cli.ranking.material import code_line, pasted_code, request


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
    # the paragraphs after a first one that points at them
    ("Can you give me the gist of this?\n\nThe council met on Tuesday.", "the gist of this",
     "council"),
    ("Was steht hier drin?\n\nDer Rat tagte am Dienstag.", "Was steht hier drin", "Rat"),
])
def test_material_is_blanked_out(task: str, kept: str, left_out: str | None) -> None:
    found = request(task)
    assert len(found) == len(task)          # offsets stay offsets into the task
    assert kept in found
    if left_out is not None:
        assert left_out not in found


def test_a_second_paragraph_is_no_material_unless_the_first_points_at_it() -> None:
    task = "Write a haiku about autumn.\n\nMake it melancholic, please."
    assert request(task) == task


def test_a_heading_line_is_no_request() -> None:
    task = "Context:\nWe sell shoes online. Summarise our reviews"
    assert request(task) == task


def test_a_task_without_material_is_unchanged() -> None:
    task = "Fix the bug in the parser, then add a regression test."
    assert request(task) is task or request(task) == task


@pytest.mark.parametrize(("line", "code"), [
    ("def avg(xs):", True),
    ("    return sum(xs) / len(xs)", True),
    ("for f in *.csv; do", True),
    ('  tail -n +2 "$f" >> all.csv', True),
    ("const total = items.reduce((a, b) => a + b, 0)", True),
    ("if (user == null) {", True),
    ("}", True),
    ("- opened our new office in Leipzig (Friday)", False),   # prose ends in brackets too
    ("Return the book to the library, then call me", False),
    ("Anna: I'll fix checkout by the 9th", False),
    ("Budget: 5,000 euros for the party", False),
])
def test_a_code_line(line: str, code: bool) -> None:
    assert code_line(line) is code


def test_pasted_code_is_material_and_evidence() -> None:
    task = ("What does this bash script do, line by line?\nfor f in *.csv; do\n"
            "  tail -n +2 \"$f\" >> all.csv\ndone")
    found = request(task)
    assert len(found) == len(task) and "tail" not in found and "line by line" in found
    assert pasted_code(task)
    assert pasted_code("this crashes when the list is empty, pls fix:\ndef avg(xs):\n"
                       "    return sum(xs) / len(xs)")


def test_code_in_backticks_is_pasted_code_and_a_name_in_backticks_is_not() -> None:
    task = "Not sure what this line does: `const x = arr.reduce((a, b) => a + b, 0);` explain?"
    assert pasted_code(task) and "reduce" not in request(task) and "explain" in request(task)
    assert not pasted_code("Use the `translate` recipe for this letter")


@pytest.mark.parametrize("task", [
    "def avg(xs): return sum(xs) / len(xs)",                # one line: the request itself
    "Turn these notes into a post:\n- opened in Leipzig (Friday)\n- hiring",
    "Summarise this thread:\nAnna: can we move the launch?\nTom: no",
])
def test_no_pasted_code(task: str) -> None:
    assert not pasted_code(task)


@pytest.mark.parametrize("line", ["From: Anna <anna@example.com>", "If possible: Friday"])
def test_prose_lines_with_statement_words_are_no_code(line: str) -> None:
    assert not code_line(line)
