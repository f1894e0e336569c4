"""A delegate request, the formats of a batch's items, and default process names from a task."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from vance_cli.base.records import frozen

if TYPE_CHECKING:
    pass





SLUG_SOURCE_MAX = 4096
"""Characters of a task that ``slugify`` reads (its first words make the slug)."""


SLUG_MAX = 40
"""Longest slug part of a default process name, in characters (cut at a word boundary)."""


SUFFIX_BYTES = 3
"""Random bytes of a default name's suffix (6 hex characters)."""


@frozen
class DelegateRequest:
    """What ``vance delegate`` was asked.

    Attributes:
        task: the task text (untrusted).
        name: process name; None → slug of the task plus a short unique suffix.
        title: process title ("" → the recipe's title).
        steer: initial steer message.
        params: caller params, overlaid on the recipe's.
        caller: id (or unique prefix) of the calling process.
        dry_run: decide only; start nothing.
        log_task: False keeps the task private in the decision log (``--no-log``).
        decide_on: the part of the task the selector decides on (and the decision
            log and the default name read); None → the whole task. The process
            always gets the whole task as its goal: a wizard prompt without its
            follow-up links (docs/wizards.md "Follow-ups").
        yes_tools: tools the command allows (``--yes-tools``) for the process's first turn.
    """

    task: str
    name: str | None = None
    title: str = ""
    steer: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    caller: str | None = None
    dry_run: bool = False
    log_task: bool = True
    decide_on: str | None = None
    yes_tools: tuple[str, ...] = ()

    @property
    def selector_task(self) -> str:
        """The text the selector decides on: ``decide_on``, else the whole task."""
        return self.task if self.decide_on is None else self.decide_on


class ItemsFormat(StrEnum):
    """How the items input of a batch is read (``delegate.batch_input``)."""

    AUTO = "auto"
    """JSON lines when the first non-blank line starts with ``{``, else plain lines."""
    LINES = "lines"
    """Each non-blank line, trimmed, is one item."""
    JSONL = "jsonl"
    """Each non-blank line is one JSON object."""


MATERIAL_SEPARATOR = "\n\n"
"""Between the instruction and the material piped beside it, in the process's goal."""


def with_material(instruction: str, material: str | None) -> tuple[str, str | None]:
    """Join an instruction and the material given beside it (``cat f | vance delegate "…"``).

    The selector decides on the instruction alone; the process gets both,
    the instruction first (docs/delegate.md "Material").

    Args:
        instruction: the task as typed (trimmed here).
        material: text piped on stdin, or None.

    Returns:
        ``(task, decide_on)`` for ``DelegateRequest``: ``decide_on`` is None
        when there is no material, or no instruction (then the material is
        the task, as with ``--task -``).
    """
    instruction, body = instruction.strip(), (material or "").strip()
    if not body:
        return instruction, None
    if not instruction:
        return body, None
    return f"{instruction}{MATERIAL_SEPARATOR}{body}", instruction


_GERMAN_LETTERS = str.maketrans({"ß": "ss", "ä": "ae", "ö": "oe", "ü": "ue"})
"""German spelling without umlauts and sharp s (``Straße`` → ``strasse``, ``Übung`` → ``uebung``),
applied after lower-casing (which makes ``ẞ Ä Ö Ü`` these)."""


def slugify(task: str, limit: int = SLUG_MAX) -> str:
    """Return a lower-case slug of the task's first words, at most ``limit`` characters.

    The one slug of vance: default process names of ``delegate``, batch items
    and the Slartibartfast fallback's spawned process all come from here.
    The same text gives the same slug, however it is written: it is
    NFC-normalised first (a decomposed ``u`` + ``◌̈`` is ``ü``), German
    letters are spelled out (``ß``/``ẞ`` → ``ss``, ``ä``/``Ä`` → ``ae``,
    ``ö`` → ``oe``, ``ü`` → ``ue``), and other accents are dropped by NFKD
    (``crème brûlée`` → ``creme-brulee``). Letters of other scripts stay as
    they are (a process name may hold them). Why no ``python-slugify``: it
    spells ``ä`` as ``a`` unless told otherwise, transliterates every
    script (``日本`` → ``ri-ben``) and loads a Unidecode table; this is
    eight lines.

    Args:
        task: any text.
        limit: longest slug, in characters; cut at a word boundary (a single
            longer word is cut at ``limit``).

    Returns:
        Words joined by ``-``; ``"task"`` when the text has no letters or digits.
    """
    # the first words are all a slug needs: a bounded head keeps a huge task cheap
    folded = unicodedata.normalize("NFC", task[:SLUG_SOURCE_MAX]).lower()
    folded = folded.translate(_GERMAN_LETTERS)
    folded = unicodedata.normalize("NFKD", folded)
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    slug = ""
    for word in re.findall(r"[^\W_]+", folded):
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > limit:
            if not slug:
                slug = word[:limit]
            break
        slug = candidate
    return slug or "task"


def default_name(task: str) -> str:
    """Return a process name for a task: its slug plus ``-`` and 6 random hex characters."""
    import secrets  # stdlib, off the light paths: only a started process needs a name

    return f"{slugify(task)}-{secrets.token_hex(SUFFIX_BYTES)}"
