"""The engine catalog: which engines exist and what each is for.

Invariants (DESIGN.md §1, §7):
- A catalog file is a YAML mapping ``engines:`` of engine name → ``purpose``,
  ``when_to_use``, ``not_for`` (non-empty strings). Engine names match
  ``ENGINE_NAME``. Validation collects every problem with its line.
- The bundled ``catalog/engines.yaml`` is active until an operator activates
  another file. The active catalog is recorded as one JSON document in the
  state dir (source file, activation time, engines), written atomically, so a
  reader always sees one whole catalog.
- A ``Catalog`` is a frozen value; a reload builds a new one and swaps the
  record in; on any error the previous one stays active.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vance_cli.errors import CatalogError, DocumentError, UnknownEngine
from vance_cli.paths import Paths, bundled_dir

ENGINE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
"""Engine names: lower-case, start with a letter, at most 64 characters."""

ENGINE_FIELDS = ("purpose", "when_to_use", "not_for")
"""Required text fields of an engine entry."""

BUNDLED_SOURCE = "bundled"
"""``Catalog.source`` of the catalog shipped with the package."""


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


def parse_catalog(text: str, source: str) -> Catalog:
    """Parse and validate catalog text.

    Args:
        text: YAML text of a catalog file.
        source: file name for messages and ``Catalog.source``.

    Returns:
        A validated Catalog (``activated_at`` None).

    Raises:
        CatalogError: YAML syntax error (with line and column) or every schema
            problem found, one per line.
    """
    import hashlib

    from vance_cli import yamlio

    try:
        data = yamlio.loads(text, source=source)
    except DocumentError as exc:
        raise CatalogError(exc.message, path=source, line=exc.line, column=exc.column) from None
    problems: list[str] = []
    engines: dict[str, Engine] = {}
    raw = data.get("engines") if isinstance(data, dict) else None
    if not isinstance(data, dict):
        problems.append("top level must be a mapping with an 'engines:' key")
    elif not isinstance(raw, dict) or not raw:
        problems.append("'engines:' must be a non-empty mapping of engine name to its description")
    else:
        for name, entry in raw.items():
            engine = _check_engine(name, entry, problems)
            if engine is not None:
                engines[engine.name] = engine
    if problems:
        raise CatalogError(
            f"{source}: invalid engine catalog: " + "; ".join(problems),
            path=source, problems=problems,
        )
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Catalog(engines=engines, source=source, sha256=digest)


def _check_engine(name: Any, entry: Any, problems: list[str]) -> Engine | None:
    if not isinstance(name, str) or not ENGINE_NAME.match(name):
        problems.append(f"engine name {name!r} is not valid (lower-case letters, digits, - and _)")
        return None
    if not isinstance(entry, dict):
        problems.append(f"engines.{name}: expected a mapping with {', '.join(ENGINE_FIELDS)}")
        return None
    values: dict[str, str] = {}
    for key in ENGINE_FIELDS:
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            problems.append(f"engines.{name}.{key}: required, a non-empty string")
        else:
            values[key] = " ".join(value.split())
    unknown = sorted(set(entry) - set(ENGINE_FIELDS))
    if unknown:
        problems.append(f"engines.{name}: unknown keys {', '.join(map(str, unknown))}")
    if len(values) != len(ENGINE_FIELDS) or unknown:
        return None
    return Engine(name=name, **values)


def load_catalog_file(path: Path) -> Catalog:
    """Read and validate a catalog file.

    Raises:
        CatalogError: unreadable, not UTF-8, invalid YAML or invalid schema.
    """
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read: {exc.strerror}", path=str(path)) from None
    except UnicodeDecodeError:
        raise CatalogError(f"{path}: not UTF-8", path=str(path)) from None
    return parse_catalog(text, source=str(path))


def bundled_catalog() -> Catalog:
    """Return the catalog shipped with the package (``catalog/engines.yaml``).

    Raises:
        CatalogError: the bundled file is broken (a packaging bug).
    """
    catalog = load_catalog_file(bundled_dir("catalog") / "engines.yaml")
    return Catalog(engines=catalog.engines, source=BUNDLED_SOURCE, sha256=catalog.sha256)


def catalog_to_record(catalog: Catalog) -> str:
    """Serialize a catalog as the active-catalog record (JSON text)."""
    return json.dumps(catalog.to_json(), ensure_ascii=False, indent=2) + "\n"


def catalog_from_record(text: str) -> Catalog:
    """Rebuild a catalog from its active-catalog record.

    Raises:
        CatalogError: the record is not a whole, valid record.
    """
    try:
        data = json.loads(text)
        engines = {e["name"]: Engine(e["name"], e["purpose"], e["when_to_use"], e["not_for"])
                   for e in data["engines"]}
        return Catalog(engines=engines, source=data["source"],
                       activated_at=data.get("activatedAt"), sha256=data.get("sha256", ""))
    except (ValueError, KeyError, TypeError) as exc:
        raise CatalogError(f"active catalog record is damaged: {exc}") from None


def active_catalog(paths: Paths) -> Catalog:
    """Return the active catalog: the last activated record, else the bundled one.

    Args:
        paths: where the active-catalog record lives.

    Raises:
        CatalogError: the record exists but is damaged (it is written
            atomically, so only outside interference does that).
    """
    record = paths.active_catalog_file
    try:
        text = record.read_text(encoding="utf-8")
    except FileNotFoundError:
        return bundled_catalog()
    return catalog_from_record(text)
