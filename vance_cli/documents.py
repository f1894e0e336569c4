"""Documents and the cascade of layers they are looked up in.

Rules (DESIGN.md §2):
- A document name is a relative path of ``[A-Za-z0-9_.-]`` segments; ``..``,
  ``.``, absolute paths and empty segments are rejected before any disk access
  (``check_name``), as Jinja's ``split_template_path`` does.
- A layer is a folder holding ``recipes/``, ``wizards/``, ``prompts/``; the
  name of a document is its path under the kind folder without the extension.
- A cascade is an ordered tuple of layers, highest first. ``find`` returns the
  first layer that has the name; ``list`` is the union over all layers,
  deduplicated by name, first layer wins, each entry with its layer.
- Layer origins are reported as ``PROJECT``, ``USER``, ``VANCE`` (tenant) and
  ``RESOURCE`` (bundled).
"""

from __future__ import annotations

import builtins
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from vance_cli.errors import InvalidDocumentName, InvalidId

_SEGMENT = re.compile(r"^[A-Za-z0-9_.-]+$")

ID_MAX = 128
"""Longest tenant, project, user or session id, in characters: an id is a folder name
(``_user_<user>`` too), and file systems allow 255 bytes per name."""


class Layer(StrEnum):
    """Where a document came from, highest priority first (DESIGN.md §2)."""

    PROJECT = "PROJECT"
    USER = "USER"
    VANCE = "VANCE"
    RESOURCE = "RESOURCE"


class Kind(StrEnum):
    """Document kinds: the folder name inside a layer."""

    RECIPES = "recipes"
    WIZARDS = "wizards"
    PROMPTS = "prompts"


EXTENSIONS: dict[Kind, str] = {Kind.RECIPES: ".yaml", Kind.WIZARDS: ".yaml", Kind.PROMPTS: ".md"}
"""File extension per kind; it is not part of the document name."""


def check_name(name: str) -> str:
    """Validate a document name and return it unchanged.

    Args:
        name: e.g. ``"essay-pipeline"`` or ``"_slart/20261129-ab12/newsletter"``.

    Returns:
        The same name.

    Raises:
        InvalidDocumentName: empty, absolute, with ``..``/``.``, an empty
            segment, or a character outside ``[A-Za-z0-9_.-]``.
    """
    if not isinstance(name, str) or not name:
        raise InvalidDocumentName("document name is empty", name=str(name))
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise InvalidDocumentName(f"document name '{name}' is an absolute path", name=name)
    for segment in name.split("/"):
        if segment == "":
            raise InvalidDocumentName(f"document name '{name}' has an empty segment", name=name)
        if segment in (".", ".."):
            raise InvalidDocumentName(
                f"document name '{name}' contains '{segment}'", name=name
            )
        if not _SEGMENT.fullmatch(segment):
            raise InvalidDocumentName(
                f"document name '{name}' has a character outside [A-Za-z0-9_.-]", name=name
            )
    return name


def check_id(value: str, kind: str) -> str:
    """Validate a tenant, project, user or session id and return it unchanged.

    An id becomes one path segment (``<data>/tenants/<tenant>/projects/<project>``),
    so it follows the document-segment rule: ``[A-Za-z0-9_.-]+``, not ``.`` or
    ``..``, at most ``ID_MAX`` characters. Settings check every id when they are
    read (flags, environment, config file, ``config set``); ``Paths`` checks
    again before it builds a folder from one.

    Args:
        value: the id as given.
        kind: what it is, for the message: ``"tenant"``, ``"project"`` …

    Returns:
        The same id.

    Raises:
        InvalidId: empty, ``.``/``..``, too long, or a character outside ``[A-Za-z0-9_.-]``.

    Rule: DESIGN.md §2.
    """
    if not isinstance(value, str) or not value:
        raise InvalidId(f"{kind} id is empty", kind=kind, value=str(value))
    if value in (".", ".."):
        raise InvalidId(f"{kind} id {value!r} is not allowed (it names a folder, not an id)",
                        kind=kind, value=value)
    if len(value) > ID_MAX:
        raise InvalidId(f"{kind} id is longer than {ID_MAX} characters", kind=kind, value=value)
    if not _SEGMENT.fullmatch(value):
        raise InvalidId(f"{kind} id {value!r} may only hold letters, digits, '_', '.' and '-' "
                        "(it becomes a folder name)", kind=kind, value=value)
    return value


def is_valid_name(name: str) -> bool:
    """Return True when ``check_name`` would accept ``name``."""
    try:
        check_name(name)
    except InvalidDocumentName:
        return False
    return True


@dataclass(frozen=True, slots=True)
class DocumentRef:
    """A document found in a layer.

    Attributes:
        name: document name (relative path, no extension).
        layer: the layer it came from.
        path: the file on disk.
    """

    name: str
    layer: Layer
    path: Path


@dataclass(frozen=True, slots=True)
class DirectoryLayer:
    """One layer: a folder that holds ``recipes/``, ``wizards/`` and ``prompts/``.

    Attributes:
        layer: its origin label.
        root: the folder (may not exist: then it holds nothing).
    """

    layer: Layer
    root: Path

    def find(self, kind: Kind, name: str) -> Path | None:
        """Return the file of ``name`` in this layer, or None (name must be checked already)."""
        path = self.root / kind.value / (name + EXTENSIONS[kind])
        return path if path.is_file() else None

    def iter_documents(self, kind: Kind) -> Iterator[tuple[str, Path]]:
        """Yield ``(name, path)`` for every file of ``kind`` below this layer, sorted by name.

        Files whose names are not valid document names are skipped (they could
        never be looked up); hidden files and folders (``.`` prefix) too. A
        folder whose name is not a valid segment is not entered: nothing
        below it has a valid name.
        """
        base = self.root / kind.value
        ext = EXTENSIONS[kind]
        cut = len(ext)
        found: list[tuple[str, Path]] = []
        # One Path per folder and one regex match per file segment: this is the
        # inner loop of every listing (5,000 recipes list in a few milliseconds).
        for folder, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if not d.startswith(".") and _SEGMENT.fullmatch(d)]
            rel = os.path.relpath(folder, base)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            where = Path(folder)
            for filename in files:
                if filename.startswith(".") or not filename.endswith(ext):
                    continue
                stem = filename[:-cut]
                if stem and _SEGMENT.fullmatch(stem):
                    found.append((prefix + stem, where / filename))
        found.sort(key=_first)
        yield from found


def _first(pair: tuple[str, Path]) -> str:
    return pair[0]


@dataclass(frozen=True, slots=True)
class Cascade:
    """Ordered layers for one document kind; first layer that has a name wins.

    Attributes:
        kind: recipes, wizards or prompts.
        layers: highest priority first.
    """

    kind: Kind
    layers: tuple[DirectoryLayer, ...]

    def find(self, name: str) -> DocumentRef | None:
        """Look ``name`` up through the layers.

        Returns:
            The first hit, or None.

        Raises:
            InvalidDocumentName: the name fails ``check_name`` (checked before disk access).
        """
        check_name(name)
        for layer in self.layers:
            path = layer.find(self.kind, name)
            if path is not None:
                return DocumentRef(name, layer.layer, path)
        return None

    def list(self) -> builtins.list[DocumentRef]:
        """Return every document over all layers, deduplicated by name (first layer wins).

        Returns:
            Refs sorted by name.
        """
        seen: dict[str, DocumentRef] = {}
        for layer in self.layers:
            for name, path in layer.iter_documents(self.kind):
                if name not in seen:
                    seen[name] = DocumentRef(name, layer.layer, path)
        return [seen[n] for n in sorted(seen)]

    def names(self) -> builtins.list[str]:
        """Return the sorted names of ``list()``."""
        return [ref.name for ref in self.list()]


def close_matches(name: str, candidates: Sequence[str], limit: int = 5) -> list[str]:
    """Return up to ``limit`` candidates that look like ``name``, best first ("did you mean").

    Uses difflib's ratio (cutoff 0.5) plus candidates that contain ``name`` or
    are contained in it, so ``essay`` suggests ``essay-pipeline``.
    """
    import difflib

    ranked = difflib.get_close_matches(name, candidates, n=limit, cutoff=0.5)
    lowered = name.lower()
    for cand in candidates:
        if len(ranked) >= limit:
            break
        if cand not in ranked and lowered and (lowered in cand.lower() or cand.lower() in lowered):
            ranked.append(cand)
    return ranked[:limit]
