"""The recipe selector: picks one recipe for a task, or answers NONE (docs/delegate.md).

``select()`` is the entry point; ``Decision`` and ``NoneReason`` are its
result types. ``prompt`` renders the LLM prompt, ``parse`` reads the reply
tolerantly, ``offline`` decides by lexical ranking when no LLM is configured.
"""

from __future__ import annotations
