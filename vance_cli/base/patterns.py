"""Regular expressions compiled when first used, not when their module is imported.

A module of many patterns costs its importer the compiling of all of them
(a fraction of a millisecond each), even when a run needs few: the offline
selector's reading rules need most of theirs only for some tasks. ``Lazy``
keeps the source and compiles it on first use, once per process.
"""

from __future__ import annotations

import re


class Lazy:
    """A regular expression compiled on first use.

    Args:
        source: the pattern.
        flags: ``re`` flags.
        needs: strings of which every match holds one (casefolded); ``may_match``
            then tells most texts apart without compiling the pattern.
    """

    __slots__ = ("_compiled", "flags", "needs", "source")

    def __init__(self, source: str, flags: int = 0, needs: tuple[str, ...] = ()) -> None:
        self.source = source
        self.flags = flags
        self.needs = needs
        self._compiled: re.Pattern[str] | None = None

    def may_match(self, text: str) -> bool:
        """False when ``text`` holds none of ``needs`` (so the pattern cannot match it)."""
        if not self.needs:
            return True
        folded = text.casefold()
        return any(need in folded for need in self.needs)

    @property
    def re(self) -> re.Pattern[str]:
        """The compiled pattern (compiled by the first caller)."""
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled
