"""Operator catalog operations: validate a catalog file, reload (activate) it, show status.

Rules (docs/catalog.md):
- The file reloaded is ``--file``, else the setting ``catalog.file``
  (``VANCE_ENGINE_CATALOG``), else ``catalog/engines.yaml`` of the shared
  folder (``documents.shared``, when it has one); with none it is a usage
  error. Setting ``catalog.file`` (or a ``git pull`` of the shared folder)
  alone activates nothing: the bundled catalog (or the last
  reloaded one) stays active until ``vance catalog reload``.
- A reload reads the file once, validates it into a new frozen ``Catalog``,
  and only then replaces the active-catalog record: temp file in the same
  folder, fsync, rename (``files.atomic_write_text``). Readers open the
  record once and read it whole, so they see the previous catalog or the new
  one, never a mix. On any problem nothing is written and the previous
  catalog stays active.
- Reloads serialise on a lock file beside the record (``filelock``), so the
  last reload to take the lock is the one that stays active, and the file it
  validated is exactly the one it activates.
- Orphans: a reload that would leave a recipe pointing at an engine the new
  catalog lacks is **refused** (the result lists every such recipe), unless
  the operator passes ``allow_orphans`` (``--allow-orphans``), which
  activates and reports the list as a warning. Recipes are collected from the
  current workspace's cascade (its ``.vance/`` or project folder, the tenant
  layer, the bundled layer) and from every project and tenant layer under the
  data folder, since the active catalog is shared by all of them.
  ``vance catalog validate`` applies the same rule, so it answers "would
  reload accept this file?".
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.base.clock import utc_now
from vance_cli.base.errors import CatalogError, DocumentError, InputError, require_path
from vance_cli.base.files import atomic_write_text
from vance_cli.base.records import frozen
from vance_cli.catalog.model import (
    BUNDLED_SOURCE,
    Catalog,
    CatalogProblem,
    bundled_catalog,
    catalog_to_record,
    load_active,
    parse_catalog,
    read_catalog_text,
)
from vance_cli.documents.cascade import DirectoryLayer, DocumentRef, Kind, Layer
from vance_cli.recipes.loader import load_recipe_file

if TYPE_CHECKING:
    from vance_cli.base.config import Settings
    from vance_cli.catalog.model import ActiveCatalog
    from vance_cli.workspace import Workspace

LOCK_TIMEOUT = 30.0
"""Seconds a reload waits for another reload to finish before it gives up (exit 1)."""

LOCK_NAME = "active.lock"
"""Lock file beside the active-catalog record; it stays on disk (that is harmless)."""


@frozen
class OrphanedRecipe:
    """A recipe whose engine a catalog does not have.

    Attributes:
        name: recipe name.
        engine: the engine it names.
        layer: where the file sits.
        path: the recipe file.
    """

    name: str
    engine: str
    layer: Layer
    path: Path

    def to_json(self) -> dict[str, str]:
        """Return ``{"recipe", "engine", "layer", "path"}``."""
        return {"recipe": self.name, "engine": self.engine, "layer": self.layer.value,
                "path": str(self.path)}


@frozen
class CatalogCheck:
    """What validating a catalog file found.

    Attributes:
        file: the file checked (absolute), or ``"bundled"``.
        catalog: the parsed catalog, None when it failed to parse or validate.
        problems: syntax and schema problems, each with its line.
        orphans: recipes whose engine the catalog lacks (empty when it did not parse).
        allow_orphans: orphans were accepted by the operator.
    """

    file: str
    catalog: Catalog | None
    problems: tuple[CatalogProblem, ...] = ()
    orphans: tuple[OrphanedRecipe, ...] = ()
    allow_orphans: bool = False

    @property
    def ok(self) -> bool:
        """True when a reload would activate it: no problems, and no orphans unless allowed."""
        return self.catalog is not None and not self.problems and (
            self.allow_orphans or not self.orphans)

    def to_json(self) -> dict[str, Any]:
        """Return ``{"file", "valid", "engines", "sha256", "problems", "orphans"}``."""
        return {
            "file": self.file, "valid": self.ok,
            "engines": list(self.catalog.names) if self.catalog else [],
            "sha256": self.catalog.sha256 if self.catalog else None,
            "problems": [p.to_json() for p in self.problems],
            "orphans": [o.to_json() for o in self.orphans],
        }


@frozen
class ReloadResult:
    """Outcome of ``vance catalog reload``.

    Attributes:
        activated: True when the file became the active catalog.
        check: the validation of the file.
        active: the catalog active after the reload (the new one, or the previous one).
        previous: the catalog that was active before.
    """

    activated: bool
    check: CatalogCheck
    active: Catalog
    previous: Catalog

    def to_json(self) -> dict[str, Any]:
        """Return ``{"activated", "file", "problems", "orphans", "active", "previous"}``."""
        data = self.check.to_json()
        return {
            "activated": self.activated, "file": data["file"], "problems": data["problems"],
            "orphans": data["orphans"], "active": _summary(self.active),
            "previous": _summary(self.previous),
        }


@frozen
class CatalogStatus:
    """What ``vance catalog show`` reports.

    Attributes:
        active: the active catalog and its record.
        configured_file: ``catalog.file`` / ``VANCE_ENGINE_CATALOG`` (else the shared
            folder's catalog), absolute, or None.
        reload_pending: True when the configured file differs from the active
            catalog (another file, or changed content), None when it cannot be read.
        without_code: catalog engines with no descriptor here (neither bundled
            nor an installed plugin): their processes cannot run.
    """

    active: ActiveCatalog
    configured_file: str | None
    reload_pending: bool | None
    without_code: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the catalog's keys plus ``record``, ``configuredFile``, ``reloadPending``.

        Also ``warning`` (why the bundled fallback is in use, else null) and
        ``withoutCode`` (engine names). The catalog's keys are ``source``,
        ``activatedAt``, ``sha256`` and ``engines``.
        """
        return {
            **self.active.catalog.to_json(),
            "record": str(self.active.record) if self.active.record else None,
            "configuredFile": self.configured_file, "reloadPending": self.reload_pending,
            "warning": self.active.warning, "withoutCode": list(self.without_code),
        }


def _summary(catalog: Catalog) -> dict[str, Any]:
    return {"source": catalog.source, "activatedAt": catalog.activated_at,
            "sha256": catalog.sha256, "engines": list(catalog.names)}


SHARED_CATALOG = Path("catalog") / "engines.yaml"
"""The engine catalog file inside the ``documents.shared`` folder (docs/teams.md)."""


def configured_catalog(settings: Settings) -> str | None:
    """Return the catalog file a plain ``vance catalog reload`` reads, or None.

    ``catalog.file`` (``VANCE_ENGINE_CATALOG``) when set; else the shared
    folder's ``catalog/engines.yaml`` when ``documents.shared`` is set and the
    file is there.
    """
    if settings.catalog_file:
        return settings.catalog_file
    if settings.documents_shared:
        shared = Path(settings.documents_shared) / SHARED_CATALOG
        if os.path.lexists(shared):
            return str(shared)
    return None


def catalog_source(settings: Settings, file: str | Path | None) -> Path:
    """Return the catalog file a reload reads: ``file``, else ``configured_catalog``.

    Args:
        settings: resolved settings (``catalog.file`` / ``VANCE_ENGINE_CATALOG``,
            ``documents.shared``).
        file: the ``--file`` option, or None.

    Returns:
        The absolute path (relative paths are taken from the current directory).

    Raises:
        InputError: neither is given (a usage error, exit 2).
    """
    chosen = file if file not in (None, "") else configured_catalog(settings)
    if not chosen:
        shared = (f", or put {SHARED_CATALOG.as_posix()} into the shared folder"
                  f" {settings.documents_shared}" if settings.documents_shared else "")
        raise InputError(
            "no catalog file to reload: pass --file FILE, or set catalog.file"
            " ('vance config set catalog.file /path/engines.yaml') or VANCE_ENGINE_CATALOG"
            + shared, field="file",
        )
    return Path(chosen).expanduser().absolute()


def check_catalog_text(ws: Workspace, text: str, source: str,
                       allow_orphans: bool = False) -> CatalogCheck:
    """Validate catalog text: syntax, schema, and the recipes it would orphan.

    Args:
        ws: workspace whose recipe layers are checked for orphans.
        text: the catalog file's text.
        source: its file name (absolute), or ``"bundled"``.
        allow_orphans: report orphans without failing the check.

    Returns:
        A CatalogCheck; never raises for a bad catalog (problems are data).
    """
    try:
        catalog = parse_catalog(text, source)
    except CatalogError as exc:
        problems = tuple(CatalogProblem(p["file"], p["problem"], p["line"], p["column"])
                         for p in exc.details.get("problems", ()))
        return CatalogCheck(source, None, problems or (CatalogProblem(source, exc.message),))
    return CatalogCheck(source, catalog, (), find_orphans(ws, catalog), allow_orphans)


def validate_catalog_file(ws: Workspace, file: str | Path,
                          allow_orphans: bool = False) -> CatalogCheck:
    """``vance catalog validate FILE``: check a file without activating it.

    Args:
        ws: workspace whose recipe layers are checked for orphans.
        file: the catalog file.
        allow_orphans: orphans do not make the check fail.

    Returns:
        A CatalogCheck (``ok`` says whether ``reload`` would accept it).

    Raises:
        PathNotFound: no file at ``file`` (exit 2, as every missing path).

    Rule: docs/catalog.md.
    """
    path = Path(file).expanduser().absolute()
    require_path(path, "catalog file")
    try:
        text = read_catalog_text(path)
    except CatalogError as exc:
        return CatalogCheck(str(path), None, (CatalogProblem(str(path), _reason(exc)),))
    return check_catalog_text(ws, text, str(path), allow_orphans)


def _reason(exc: CatalogError) -> str:
    problems = exc.details.get("problems") or [{"problem": exc.message}]
    return str(problems[0]["problem"])


def reload_catalog(ws: Workspace, file: str | Path | None = None, *, bundled: bool = False,
                   allow_orphans: bool = False,
                   lock_timeout: float = LOCK_TIMEOUT) -> ReloadResult:
    """``vance catalog reload``: validate a catalog file and make it active atomically.

    Args:
        ws: workspace (settings for the source and the record; recipes for orphans).
        file: ``--file``; None means ``catalog.file`` / ``VANCE_ENGINE_CATALOG``.
        bundled: activate the bundled catalog instead of a file (back to the default).
        allow_orphans: activate even if recipes would lose their engine.
        lock_timeout: seconds to wait for a concurrent reload.

    Returns:
        A ReloadResult; ``activated`` False (previous catalog still active)
        when the file has problems or would orphan recipes.

    Raises:
        InputError: no file given or configured.
        CatalogError: the lock was not free within ``lock_timeout``, or the
            record could not be written (the previous record is untouched).

    Rule: docs/catalog.md.
    """
    import filelock

    paths = ws.settings.paths
    source = None if bundled else catalog_source(ws.settings, file)
    lock_path = paths.catalog_state_dir / LOCK_NAME
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with filelock.FileLock(str(lock_path), timeout=lock_timeout):
            previous = load_active(paths).catalog
            check = _check_source(ws, source, allow_orphans)
            if not check.ok or check.catalog is None:
                return ReloadResult(False, check, previous, previous)
            catalog = replace(check.catalog, activated_at=utc_now())
            atomic_write_text(paths.active_catalog_file, catalog_to_record(catalog))
            ws.refresh_catalog()
            return ReloadResult(True, check, catalog, previous)
    except filelock.Timeout:
        raise CatalogError(f"another catalog reload holds {lock_path}; gave up after"
                           f" {lock_timeout:g} s (the active catalog is unchanged)",
                           path=str(lock_path)) from None
    except OSError as exc:
        raise CatalogError(f"cannot write the active catalog record {paths.active_catalog_file}:"
                           f" {exc.strerror or exc} (the active catalog is unchanged)",
                           path=str(paths.active_catalog_file)) from None


def _check_source(ws: Workspace, source: Path | None, allow_orphans: bool) -> CatalogCheck:
    if source is None:
        catalog = bundled_catalog()
        return CatalogCheck(BUNDLED_SOURCE, catalog, (), find_orphans(ws, catalog), allow_orphans)
    return validate_catalog_file(ws, source, allow_orphans)


def catalog_status(ws: Workspace) -> CatalogStatus:
    """``vance catalog show``: the active catalog, its record, and the configured file.

    Returns:
        A CatalogStatus; ``reload_pending`` compares the configured file with
        the active catalog by path and content hash; ``without_code`` asks
        ``ws.engines`` (bundled engines and plugins) for each catalog engine.
    """
    active = load_active(ws.settings.paths)
    without_code = tuple(ws.engines.without_code(active.catalog.names))
    configured = configured_catalog(ws.settings)
    if not configured:
        return CatalogStatus(active, None, None, without_code)
    path = Path(configured).expanduser().absolute()
    try:
        text = read_catalog_text(path)
    except CatalogError:
        return CatalogStatus(active, str(path), None, without_code)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    same = active.catalog.source == str(path) and active.catalog.sha256 == digest
    return CatalogStatus(active, str(path), not same, without_code)


def recipe_layers(ws: Workspace) -> list[DirectoryLayer]:
    """Return every layer that may hold recipes, for the orphan check.

    The workspace's own recipe cascade first, then every project and tenant
    layer under ``<data>/tenants/*/projects/*`` (``_user_*`` folders hold
    wizards only and are skipped). Duplicated folders are listed once.
    """
    layers = list(ws.layers(Kind.RECIPES))
    seen = {layer.root.resolve() for layer in layers}
    tenants = ws.settings.paths.data_dir / "tenants"
    for folder in sorted(tenants.glob("*/projects/*")):
        if not folder.is_dir() or folder.name.startswith("_user_"):
            continue
        if folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        layers.append(DirectoryLayer(Layer.VANCE if folder.name == "_tenant" else Layer.PROJECT,
                                     folder))
    return layers


def find_orphans(ws: Workspace, catalog: Catalog) -> tuple[OrphanedRecipe, ...]:
    """Return every recipe (any layer, hidden ones too) whose engine ``catalog`` lacks.

    Recipe files that fail to load are skipped: they cannot be spawned
    anyway, and ``vance recipe list`` reports them.
    """
    out: list[OrphanedRecipe] = []
    for layer in recipe_layers(ws):
        for name, path in layer.iter_documents(Kind.RECIPES):
            try:
                recipe = load_recipe_file(DocumentRef(name, layer.layer, path),
                                          rules=ws.engines)
            except DocumentError:
                continue
            if recipe.engine not in catalog.engines:
                out.append(OrphanedRecipe(name, recipe.engine, layer.layer, path))
    return tuple(out)
