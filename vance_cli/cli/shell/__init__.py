"""``vance shell``: the REPL, its slash commands, completion and line dispatch."""

from __future__ import annotations
