"""patterns.Lazy: compiled on first use, once."""

from __future__ import annotations

import re

from vance_cli.base.patterns import Lazy


def test_a_lazy_pattern_compiles_on_first_use_once() -> None:
    lazy = Lazy(r"\bwho\b", re.IGNORECASE)
    assert lazy._compiled is None          # nothing compiled at definition
    first = lazy.re
    assert first.search("Who wrote it?") is not None
    assert lazy.re is first and first.flags & re.IGNORECASE


def test_may_match_tells_texts_without_a_needed_word_apart_without_compiling() -> None:
    pattern = Lazy(r"\bshould\s+we\b", re.IGNORECASE, needs=("should",))
    assert not pattern.may_match("Summarize this meeting")
    assert pattern._compiled is None  # nothing compiled for that answer
    assert pattern.may_match("SHOULD we open a shop?")  # casefolded, as the pattern ignores case
    assert pattern.re.search("SHOULD we open a shop?") is not None
    assert Lazy("x").may_match("anything")  # without needs every text may match
