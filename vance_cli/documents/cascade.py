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
- A document is read only as a regular file of bounded size inside its layer
  (``read_text``; ``files.read_limited``): a FIFO, a device or a link out of
  the layer is refused with a reason, and the loaders report it as the
  document's problem (a warning naming the file). The text of a file that
  has settled is kept in memory while its signature holds (``read_text``). A folder of a layer that
  cannot be read is listed as a problem too (``DocumentRef.problem``), never
  silently left out.
"""

from __future__ import annotations

import builtins
import os
import stat
import time
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any

from vance_cli.base import files, yamlio
from vance_cli.base.errors import DocumentError
from vance_cli.base.names import SEGMENT, check_name
from vance_cli.base.records import frozen


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


@frozen
class DocumentRef:
    """A document found in a layer.

    Attributes:
        name: document name (relative path, no extension).
        layer: the layer it came from.
        path: the file on disk.
        root: the layer's folder (a link may not lead out of it), or None.
        problem: why the entry cannot be read at all (a folder of the layer
            that cannot be listed), else None.
    """

    name: str
    layer: Layer
    path: Path
    root: Path | None = None
    problem: str | None = None



MAX_DOCUMENT_BYTES = yamlio.MAX_DOCUMENT_BYTES
"""Largest document file read, in bytes (recipes, wizards, prompts)."""


TEXTS_KEPT = 64
"""Documents whose text ``read_text`` keeps in memory (the prompts a process reads each turn)."""

SETTLED_NS = 2_000_000_000
"""A file changed less than this long ago (ns) is read again each time: a rewrite within
the file system's timestamp granularity could keep size and times."""

_texts: dict[tuple[str, str | None, int], tuple[tuple[int, ...], str]] = {}


def read_text(ref: DocumentRef, limit: int = MAX_DOCUMENT_BYTES) -> str:
    """Read a document as UTF-8 text (a BOM tolerated), refused as the module rules say.

    The text of a file that has not changed for ``SETTLED_NS`` is kept in
    memory and given again while the file's device, inode, size, mode,
    modification and change times are the same (a link that now leads
    elsewhere changes them), so a prompt read at every turn costs one stat.

    Raises:
        DocumentError: the entry has a problem, the file is refused or
            unreadable, or it is not UTF-8; the message names the file.
    """
    if ref.problem is not None:
        raise DocumentError(ref.problem, path=str(ref.path))
    key = (str(ref.path), None if ref.root is None else str(ref.root), limit)
    signature: tuple[int, ...] = ()
    try:
        st = os.stat(ref.path)
        signature = (st.st_dev, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns,
                     st.st_ctime_ns)
    except OSError:
        pass
    kept = _texts.get(key)
    if signature and kept is not None and kept[0] == signature:
        return kept[1]
    try:
        data = files.read_limited(ref.path, limit, ref.root)
    except files.FileRefused as exc:
        raise DocumentError(exc.reason, path=str(ref.path)) from None
    except OSError as exc:
        raise DocumentError(f"cannot read file: {exc.strerror}", path=str(ref.path)) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(files.not_utf8(exc), path=str(ref.path)) from None
    if signature and time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLED_NS:
        if key not in _texts and len(_texts) >= TEXTS_KEPT:
            for oldest in list(_texts)[:1]:  # threads may race here: never a KeyError
                _texts.pop(oldest, None)
        _texts[key] = (signature, text)
    return text


def load_yaml(ref: DocumentRef) -> Any:
    """Read and parse a YAML document (``yamlio.load_file``, inside its layer).

    Raises:
        DocumentError: as ``read_text``, or invalid YAML (with position).
    """
    if ref.problem is not None:
        raise DocumentError(ref.problem, path=str(ref.path))
    return yamlio.load_file(ref.path, ref.root)


@frozen
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
        path = os.path.join(self.root, kind.value, name + EXTENSIONS[kind])
        try:  # one stat; not is_file(): a FIFO or a device of that name is found, refused when read
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            return None
        return None if stat.S_ISDIR(mode) else Path(path)

    def iter_documents(self, kind: Kind,
                       unreadable: list[tuple[str, Path, str]] | None = None,
                       ) -> Iterator[tuple[str, Path]]:
        """Yield ``(name, path)`` for every file of ``kind`` below this layer, sorted by name.

        Files whose names are not valid document names are skipped (they could
        never be looked up); hidden files and folders (``.`` prefix) too. A
        folder whose name is not a valid segment is not entered: nothing
        below it has a valid name.

        Args:
            kind: recipes, wizards or prompts.
            unreadable: receives ``(label, folder, reason)`` for each folder that
                cannot be read (a missing kind folder is no problem).
        """
        base = self.root / kind.value
        ext = EXTENSIONS[kind]
        cut = len(ext)
        found: list[tuple[str, Path]] = []

        def refused(error: OSError) -> None:
            folder = Path(error.filename or base)
            if unreadable is not None and os.path.lexists(folder):
                label = os.path.relpath(folder, self.root).replace(os.sep, "/") + "/"
                unreadable.append((label, folder, "cannot read this folder: "
                                   f"{error.strerror or error}; its documents are left out"))

        # One Path per folder and one regex match per file segment: this is the
        # inner loop of every listing (5,000 recipes list in a few milliseconds).
        for folder, dirs, names in os.walk(base, onerror=refused):
            dirs[:] = [d for d in dirs if not d.startswith(".") and SEGMENT.fullmatch(d)]
            rel = os.path.relpath(folder, base)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            where = Path(folder)
            for filename in names:
                if filename.startswith(".") or not filename.endswith(ext):
                    continue
                stem = filename[:-cut]
                if stem and SEGMENT.fullmatch(stem):
                    found.append((prefix + stem, where / filename))
        found.sort(key=_first)
        yield from found


def _first(pair: tuple[str, Path]) -> str:
    return pair[0]


@frozen
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
                return DocumentRef(name, layer.layer, path, layer.root)
        return None

    def list(self) -> builtins.list[DocumentRef]:
        """Return every document over all layers, deduplicated by name (first layer wins).

        Returns:
            Refs sorted by name.
        """
        seen: dict[str, DocumentRef] = {}
        for layer in self.layers:
            unreadable: list[tuple[str, Path, str]] = []
            for name, path in layer.iter_documents(self.kind, unreadable):
                if name not in seen:
                    seen[name] = DocumentRef(name, layer.layer, path, layer.root)
            for label, folder, reason in unreadable:
                seen.setdefault(label, DocumentRef(label, layer.layer, folder, layer.root,
                                                   reason))
        return [seen[n] for n in sorted(seen)]

    def names(self) -> builtins.list[str]:
        """Return the sorted names of ``list()``."""
        return [ref.name for ref in self.list()]


