"""Documents and the cascade of layers they are looked up in.

Rules (docs/documents.md):
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
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from vance_cli.base.names import SEGMENT, check_name


class Layer(StrEnum):
    """Where a document came from, highest priority first (docs/documents.md)."""

    PROJECT = "PROJECT"
    USER = "USER"
    VANCE = "VANCE"
    RESOURCE = "RESOURCE"


class Kind(StrEnum):
    """Document kinds: the folder name inside a layer."""

    RECIPES = "recipes"
    WIZARDS = "wizards"
    PROMPTS = "prompts"
    STRATEGIES = "strategies"
    """vogon playbooks (``strategies/<name>.yaml``: phases and a result)."""


EXTENSIONS: dict[Kind, str] = {Kind.RECIPES: ".yaml", Kind.WIZARDS: ".yaml", Kind.PROMPTS: ".md",
                               Kind.STRATEGIES: ".yaml"}
"""File extension per kind; it is not part of the document name."""


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
            dirs[:] = [d for d in dirs if not d.startswith(".") and SEGMENT.fullmatch(d)]
            rel = os.path.relpath(folder, base)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            where = Path(folder)
            for filename in files:
                if filename.startswith(".") or not filename.endswith(ext):
                    continue
                stem = filename[:-cut]
                if stem and SEGMENT.fullmatch(stem):
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


