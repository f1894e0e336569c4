"""Golden files: each bundled wizard, fixed answers, the exact rendered prompt.

The answers are ``tests/data/wizards/<name>.yaml``; the expected prompts are
``tests/golden/wizards/<case>.md``, compared exactly. They change only when the
suite runs with ``VANCE_UPDATE_GOLDEN=1`` (then the files are rewritten and the
diff is reviewed in git).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "wizards"
GOLDEN = ROOT / "golden" / "wizards"
UPDATE = os.environ.get("VANCE_UPDATE_GOLDEN", "") == "1"  # read before the fixture clears VANCE_*

# (case, wizard, language)
CASES = [
    ("gremium", "gremium", "en"),
    ("vogon-strategie", "vogon-strategie", "en"),
    ("essay-recipe", "essay-recipe", "en"),
    ("essay-recipe.de", "essay-recipe", "de"),
    ("essay-mit-recipe", "essay-mit-recipe", "en"),
    ("create-project", "create-project", "en"),
]


def _render(wizard: str, lang: str) -> str:
    result = run_cli(["--lang", lang, "--user", "anna", "wizard", "render", wizard,
                      "--values", str(DATA / f"{wizard}.yaml"), "--json"])
    assert result.exit_code == 0, result.stderr
    prompt: str = result.json()["prompt"]
    return prompt


@pytest.mark.parametrize(("case", "wizard", "lang"), CASES, ids=[c[0] for c in CASES])
def test_golden_prompt(case: str, wizard: str, lang: str) -> None:
    prompt = _render(wizard, lang)
    golden = GOLDEN / f"{case}.md"
    if UPDATE:
        golden.write_text(prompt + "\n", encoding="utf-8")
    assert golden.is_file(), f"missing {golden}; run with VANCE_UPDATE_GOLDEN=1"
    assert prompt + "\n" == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize(("case", "wizard", "lang"), CASES, ids=[c[0] for c in CASES])
def test_golden_layout_is_readable(case: str, wizard: str, lang: str) -> None:
    prompt = _render(wizard, lang)
    lines = prompt.split("\n")
    assert prompt == prompt.strip(), "no leading or trailing blank lines"
    assert "\n\n\n" not in prompt, "at most one blank line in a row"
    assert all(line == line.rstrip() for line in lines), "no trailing spaces"
    assert "{{" not in prompt and "{%" not in prompt, "no template syntax left"
    for line in lines:  # one list item a line
        assert len(re.findall(r"(?:^|\s)- \S", line)) <= 1, line
        assert len(re.findall(r"(?:^|\s)\d+\. \S", line)) <= 1, line


def test_gremium_lists_every_member_on_its_own_line() -> None:
    lines = _render("gremium", "en").split("\n")
    for name in ("Ada", "Grace", "Linus"):
        assert sum(1 for line in lines if line.startswith(f"- {name}: ")) == 1
    assert "Test question: Should we rewrite the billing module this quarter?" in lines


def test_vogon_phases_are_numbered_one_a_line() -> None:
    lines = _render("vogon-strategie", "en").split("\n")
    assert [line.split(".")[0] for line in lines if re.match(r"^\d+\. ", line)] == [
        "1", "2", "3", "4"]
