"""The delegate request: material given beside the instruction."""

from __future__ import annotations

import pytest

from vance_cli.delegate.request import with_material


@pytest.mark.parametrize(("instruction", "material", "task", "decide_on"), [
    ("summarize this", "Notes.\nMore notes.\n", "summarize this\n\nNotes.\nMore notes.",
     "summarize this"),
    ("  summarize this ", None, "summarize this", None),
    ("summarize this", " \n", "summarize this", None),
    ("", "Just the material", "Just the material", None),
])
def test_material_beside_the_instruction(instruction: str, material: str | None, task: str,
                                         decide_on: str | None) -> None:
    assert with_material(instruction, material) == (task, decide_on)
