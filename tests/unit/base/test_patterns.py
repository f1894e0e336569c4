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
