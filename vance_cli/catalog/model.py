"""The engine catalog: which engines exist and what each is for.

Invariants (docs/catalog.md):
- A catalog file follows the one catalog schema (``catalog.schema``);
  validation collects every problem, each with its line.
- The bundled ``catalog/engines.yaml`` is active until an operator activates
  another file. The active catalog is recorded as one JSON document in the
  state dir (source file, activation time, engines), written atomically, so a
  reader always sees one whole catalog.
- A ``Catalog`` is a frozen value; a reload (``catalog_admin``) builds a new
  one and swaps the record in; on any error the previous one stays active.
- The record carries ``recordDigest``, the SHA-256 of its own content
  (``record_digest``), checked on every read. A damaged record — not valid
  JSON, not a valid catalog, or edited by hand so the digest no longer
  matches (only outside interference does that, since it is written
  atomically) — must not brick every command, nor be used silently:
  ``load_active`` falls back to the bundled catalog and says why in
  ``ActiveCatalog.warning``; ``vance catalog show`` prints it, and the next
  successful reload replaces the record. A record without a digest counts
  as damaged too (removing the digest must not be a way around it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.base import files, yamlio
from vance_cli.base.errors import CatalogError, DocumentError, UnknownEngine
from vance_cli.base.paths import Paths, bundled_dir
from vance_cli.base.records import frozen

if TYPE_CHECKING:
    from vance_cli.documents.cache import DocumentCache

ENGINE_FIELDS = ("purpose", "when_to_use", "not_for")
"""Required text fields of an engine entry."""

BUNDLED_SOURCE = "bundled"
"""``Catalog.source`` of the catalog shipped with the package."""

DIGEST_KEY = "recordDigest"
"""Key of the active-catalog record's integrity digest (SHA-256 of the rest, hex)."""


@frozen
class CatalogProblem:
    """One thing wrong with a catalog file.

    Attributes:
        file: the file, as given.
        problem: what is wrong, one line (starts with the key path when there is one).
        line: 1-based line, when known.
        column: 1-based column, when known (YAML syntax errors).
    """

    file: str
    problem: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.problem}"

    def to_json(self) -> dict[str, Any]:
        """Return ``{"file", "line", "column", "problem"}``."""
        return {"file": self.file, "line": self.line, "column": self.column,
                "problem": self.problem}


@frozen
class Engine:
    """One engine as the catalog describes it.

    Attributes:
        name: e.g. ``"ford"``.
        purpose: what it is, one or two sentences.
        when_to_use: the tasks it fits.
        not_for: the tasks it does not fit.
    """

    name: str
    purpose: str
    when_to_use: str
    not_for: str

    def to_json(self) -> dict[str, str]:
        """Return ``{"name", "purpose", "when_to_use", "not_for"}``."""
        return {"name": self.name, "purpose": self.purpose,
                "when_to_use": self.when_to_use, "not_for": self.not_for}


@frozen
class Catalog:
    """A validated engine catalog.

    Attributes:
        engines: name → Engine, in file order.
        source: the file it was read from, or ``"bundled"``.
        activated_at: ISO-8601 UTC time it became active, None for the bundled default.
        sha256: hex digest of the source text, to tell two versions apart.
    """

    engines: Mapping[str, Engine]
    source: str = BUNDLED_SOURCE
    activated_at: str | None = None
    sha256: str = ""
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(self.engines))

    def get(self, name: str, recipe: str | None = None) -> Engine:
        """Return the engine ``name``.

        Raises:
            UnknownEngine: not in this catalog; the message lists the available ones.
        """
        try:
            return self.engines[name]
        except KeyError:
            raise UnknownEngine(name, self.names, recipe=recipe) from None

    def to_json(self) -> dict[str, Any]:
        """Return ``{"source", "activatedAt", "sha256", "engines": [...]}``."""
        return {
            "source": self.source,
            "activatedAt": self.activated_at,
            "sha256": self.sha256,
            "engines": [e.to_json() for e in self.engines.values()],
        }


def catalog_error(problems: Sequence[CatalogProblem]) -> CatalogError:
    """Build the CatalogError for ``problems`` (message: every problem, ``; ``-joined).

    Args:
        problems: at least one problem; the first gives ``path``/``line``/``column``.
    """
    first = problems[0]
    return CatalogError(
        "; ".join(str(p) for p in problems), path=first.file, line=first.line,
        column=first.column, problems=[p.to_json() for p in problems],
    )


MAX_CATALOG_BYTES = 1_000_000
"""Largest catalog file read, in bytes; a larger one is refused before it is read."""

MAX_ENGINE_TEXT_CHARS = 100_000
"""Most characters all engines' texts (purpose, when_to_use, not_for) may hold together:
every selector and Slartibartfast prompt shows them all, and a prompt holds at most
400,000 characters next to the recipes and the task."""


def parse_catalog(text: str, source: str) -> Catalog:
    """Parse and validate catalog text.

    Args:
        text: YAML text of a catalog file.
        source: file name for messages and ``Catalog.source``.

    Returns:
        A validated Catalog (``activated_at`` None).

    Raises:
        CatalogError: YAML syntax error (with line and column) or every schema
            problem found, each with its line; ``details["problems"]`` lists
            them as ``CatalogProblem.to_json()``.
    """
    from vance_cli.catalog import schema  # heavy: pydantic

    try:
        data = yamlio.loads(text, source=source)
    except DocumentError as exc:
        raise catalog_error([CatalogProblem(source, exc.reason, exc.line, exc.column)]) from None
    try:
        engines = schema.validate(data)
    except schema.CatalogInvalid as invalid:
        lines = yamlio.key_lines(text)
        raise catalog_error([CatalogProblem(source, message, _line_of(lines, path))
                             for path, message in invalid.problems]) from None
    size = sum(len(value) for fields in engines.values() for value in fields.values())
    if size > MAX_ENGINE_TEXT_CHARS:
        raise catalog_error([CatalogProblem(
            source, f"the engines' texts hold {size:,} characters; at most "
            f"{MAX_ENGINE_TEXT_CHARS:,} fit: every selector prompt shows them all")])
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Catalog(engines={name: Engine(name=name, **fields) for name, fields in engines.items()},
                   source=source, sha256=digest)


def _line_of(lines: Mapping[tuple[str, ...], int], path: tuple[str, ...]) -> int | None:
    # The deepest key of the path that exists: a missing field points at its engine.
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return 1 if not path else None


def load_catalog_file(path: Path) -> Catalog:
    """Read and validate a catalog file.

    Raises:
        CatalogError: unreadable, not UTF-8, invalid YAML or invalid schema.
    """
    return parse_catalog(read_catalog_text(path), source=str(path))


def read_catalog_text(path: Path) -> str:
    """Read a catalog file as text (UTF-8, a BOM tolerated).

    Raises:
        CatalogError: the file cannot be read or is not UTF-8.
    """
    try:
        return files.read_limited(path, MAX_CATALOG_BYTES).decode("utf-8-sig")
    except files.FileRefused as exc:
        raise catalog_error([CatalogProblem(str(path), exc.reason)]) from None
    except OSError as exc:
        reason = f"cannot read: {exc.strerror or exc}"
        raise catalog_error([CatalogProblem(str(path), reason)]) from None
    except UnicodeDecodeError as exc:
        raise catalog_error([CatalogProblem(str(path), files.not_utf8(exc))]) from None


CACHE_KIND = "catalog"
"""Kind tag of the bundled catalog's entry in the parsed-document cache."""


def bundled_catalog(cache: DocumentCache | None = None) -> Catalog:
    """Return the catalog shipped with the package (``catalog/engines.yaml``).

    Args:
        cache: parsed-document cache; a hit skips the YAML parser and the schema
            (the bundled file changes only with the package).

    Raises:
        CatalogError: the bundled file is broken (a packaging bug).
    """
    path = bundled_dir("catalog") / "engines.yaml"
    signature = cache.signature(path) if cache else None
    cached = cache.get(path, CACHE_KIND, signature) if cache else None
    if isinstance(cached, dict):
        return Catalog(engines=_engines_of(cached["engines"]), source=BUNDLED_SOURCE,
                       sha256=cached["sha256"])
    catalog = load_catalog_file(path)
    bundled = Catalog(engines=catalog.engines, source=BUNDLED_SOURCE, sha256=catalog.sha256)
    if cache:
        cache.put(path, CACHE_KIND, signature, bundled.to_json())
        cache.save()
    return bundled


def _engines_of(entries: Sequence[Mapping[str, str]]) -> dict[str, Engine]:
    """Rebuild engines from ``Catalog.to_json()["engines"]`` (content vance wrote itself)."""
    return {e["name"]: Engine(name=e["name"], **{k: e[k] for k in ENGINE_FIELDS})
            for e in entries}


def record_digest(content: Mapping[str, Any]) -> str:
    """Return the SHA-256 (hex) of a record's content, without its ``recordDigest``.

    The content is serialized canonically (sorted keys, no spaces), so the
    digest does not depend on how the file is indented.
    """
    body = {k: v for k, v in content.items() if k != DIGEST_KEY}
    canonical = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def catalog_to_record(catalog: Catalog) -> str:
    """Serialize a catalog as the active-catalog record (JSON text, with its digest)."""
    content = catalog.to_json()
    content[DIGEST_KEY] = record_digest(content)
    return json.dumps(content, ensure_ascii=False, indent=2) + "\n"


def catalog_from_record(text: str) -> Catalog:
    """Rebuild a catalog from its active-catalog record.

    Raises:
        CatalogError: the record is not a whole, valid record: bad JSON, no
            digest or one that does not match (edited by hand), a missing key
            (the message names the engine and field), or an engine that fails
            the catalog's own checks.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _damaged(f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise _damaged("not a JSON object")
    if DIGEST_KEY not in data:
        raise _damaged(f"it has no '{DIGEST_KEY}' (written by hand or by an older vance?)")
    if data[DIGEST_KEY] != record_digest(data):
        raise _damaged(f"its content does not match its '{DIGEST_KEY}' (edited by hand?)")
    source, entries = data.get("source"), data.get("engines")
    if not isinstance(source, str) or not source:
        raise _damaged("'source' is missing")
    if not isinstance(entries, list) or not entries:
        raise _damaged("'engines' is missing or empty")
    engines: dict[str, Engine] = {}
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            raise _damaged(f"engine #{index + 1} has no 'name'")
        missing = [k for k in ENGINE_FIELDS if not isinstance(entry.get(k), str)]
        if missing:
            raise _damaged(f"engine '{name}' has no {', '.join(repr(k) for k in missing)}")
        # written by vance from a validated catalog, and its digest matches: taken as it is
        engines[name] = Engine(name=name, **{k: entry[k] for k in ENGINE_FIELDS})
    return Catalog(engines=engines, source=source, activated_at=data.get("activatedAt"),
                   sha256=str(data.get("sha256", "")))


def _damaged(reason: str) -> CatalogError:
    return CatalogError(f"active catalog record is damaged: {reason}")


@frozen
class ActiveCatalog:
    """The active catalog and how it was found.

    Attributes:
        catalog: the catalog every command uses.
        record: the active-catalog record file, or None when none was ever written.
        warning: why the bundled catalog is in use although a record exists
            (the record is damaged), else None.
    """

    catalog: Catalog
    record: Path | None
    warning: str | None = None


def load_active(paths: Paths, cache: DocumentCache | None = None) -> ActiveCatalog:
    """Read the active-catalog record; fall back to the bundled catalog.

    The record is one whole file (written by temp file + fsync + rename), so
    one read sees either the previous or the new catalog, never a mix.

    Args:
        paths: where the record lives.
        cache: parsed-document cache for the bundled catalog, or None.

    Returns:
        The record's catalog; the bundled one when there is no record; the
        bundled one with ``warning`` set when the record is unreadable or
        damaged (never an exception: a broken record must not stop every
        command, and ``vance catalog reload`` repairs it).

    Rule: docs/catalog.md.
    """
    record = paths.active_catalog_file
    try:
        text = record.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return ActiveCatalog(bundled_catalog(cache), None)
    except (OSError, UnicodeDecodeError) as exc:
        reason = f"active catalog record {record} is unreadable: {exc}"
        return ActiveCatalog(bundled_catalog(cache), record, _fallback_note(reason))
    try:
        return ActiveCatalog(catalog_from_record(text), record)
    except CatalogError as exc:
        note = _fallback_note(f"{record}: {exc.message}")
        return ActiveCatalog(bundled_catalog(cache), record, note)


def _fallback_note(reason: str) -> str:
    return (f"{reason}; using the bundled catalog until 'vance catalog reload' "
            "writes a new record")


def active_catalog(paths: Paths, cache: DocumentCache | None = None) -> Catalog:
    """Return the active catalog: the last activated record, else the bundled one.

    Args:
        paths: where the active-catalog record lives.
        cache: parsed-document cache for the bundled catalog, or None.

    Returns:
        ``load_active(paths, cache).catalog`` (the bundled catalog when the record is
        missing or damaged).

    Raises:
        CatalogError: only when the bundled file itself is broken (a packaging bug).
    """
    return load_active(paths, cache).catalog
