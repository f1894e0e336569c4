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
    """

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def re(self) -> re.Pattern[str]:
        """The compiled pattern (compiled by the first caller)."""
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled
