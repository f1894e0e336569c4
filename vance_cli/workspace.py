"""The workspace: settings plus the layers, cascades and database they imply.

One ``Workspace`` is built per command from ``Settings`` and the current
directory; every core function takes it instead of re-deriving paths.

Layers (docs/documents.md), highest first:
- PROJECT: a ``.vance/`` folder found from the current directory upwards,
  else ``<data>/tenants/<t>/projects/<project>/`` (absent when the project is
  ``_tenant`` or empty);
- USER (wizards only): ``projects/_user_<user>/``;
- VANCE: the tenant's own ``projects/_tenant/``, or the folder of
  ``documents.shared`` (a checkout the team shares) in its place;
- RESOURCE: the bundled documents shipped with the package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from vance_cli.base.paths import bundled_dir, find_project_folder
from vance_cli.catalog.model import active_catalog
from vance_cli.documents.cache import WIZARDS_FILE_NAME, DocumentCache
from vance_cli.documents.cascade import Cascade, DirectoryLayer, Kind, Layer
from vance_cli.engines.registry import EngineRegistry
from vance_cli.state.db import Database
from vance_cli.state.stores import open_state

if TYPE_CHECKING:
    from vance_cli.base.config import Settings
    from vance_cli.catalog.model import Catalog

TENANT_PROJECT = "_tenant"
"""The tenant's own project id (docs/documents.md)."""


@dataclass
class Workspace:
    """Everything a command needs to find documents and state.

    Attributes:
        settings: resolved settings.
        cwd: the folder ``.vance/`` discovery starts from.
    """

    settings: Settings
    cwd: Path = field(default_factory=Path.cwd)
    _catalog: Catalog | None = field(default=None, init=False, repr=False, compare=False)

    @cached_property
    def project_folder(self) -> Path | None:
        """The project layer's folder: a discovered ``.vance/``, the project's data folder, or None.

        None when no ``.vance/`` is found and the project is ``_tenant`` or empty.
        """
        found = find_project_folder(self.cwd, self.settings.paths)
        if found is not None:
            return found
        if not self.settings.has_project:
            return None
        return self.settings.paths.project_dir(self.settings.tenant, self.settings.project)

    @property
    def tenant_folder(self) -> Path:
        """The tenant layer's folder: ``documents.shared`` when set, else ``projects/_tenant``."""
        shared = self.settings.documents_shared
        if shared:
            return Path(shared)
        return self.settings.paths.project_dir(self.settings.tenant, TENANT_PROJECT)

    @property
    def user_folder(self) -> Path:
        """The user layer's folder, ``projects/_user_<user>`` (wizards only)."""
        return self.settings.paths.project_dir(self.settings.tenant, f"_user_{self.settings.user}")

    @property
    def availability_id(self) -> str:
        """The project id wizards' ``availableIn`` is matched against (``_tenant`` without one)."""
        return self.settings.project if self.settings.has_project else TENANT_PROJECT

    def layers(self, kind: Kind) -> tuple[DirectoryLayer, ...]:
        """Return the layers of ``kind``, highest first (the user layer only for wizards)."""
        out: list[DirectoryLayer] = []
        if self.project_folder is not None:
            out.append(DirectoryLayer(Layer.PROJECT, self.project_folder))
        if kind is Kind.WIZARDS:
            out.append(DirectoryLayer(Layer.USER, self.user_folder))
        out.append(DirectoryLayer(Layer.VANCE, self.tenant_folder))
        out.append(DirectoryLayer(Layer.RESOURCE, bundled_root(kind)))
        return tuple(out)

    def cascade(self, kind: Kind) -> Cascade:
        """Return the cascade of ``kind`` (recipes, wizards or prompts); built once per kind."""
        cascade = self._cascades.get(kind)
        if cascade is None:
            cascade = self._cascades[kind] = Cascade(kind, self.layers(kind))
        return cascade

    @cached_property
    def _cascades(self) -> dict[Kind, Cascade]:
        return {}

    @property
    def write_folder(self) -> Path:
        """Where generated documents go: the project layer, else the tenant layer."""
        return self.project_folder or self.tenant_folder

    @cached_property
    def db(self) -> Database:
        """The state store (``state.url``), opened on first use (a SQLite file is migrated)."""
        return open_state(self.settings.state_target)

    @cached_property
    def document_cache(self) -> DocumentCache:
        """The parsed-document cache in the state dir (read on first use)."""
        return DocumentCache.load(self.settings.paths.cache_dir)

    @cached_property
    def wizard_cache(self) -> DocumentCache:
        """The wizard listing's parsed-document cache in the state dir (read on first use)."""
        return DocumentCache.load(self.settings.paths.cache_dir, WIZARDS_FILE_NAME)

    def catalog(self) -> Catalog:
        """Return the active engine catalog (docs/catalog.md#reload), read once.

        ``refresh_catalog`` reads it again: a catalog reload does, and the
        shell before each line.
        """
        if self._catalog is None:
            self._catalog = active_catalog(self.settings.paths, self.document_cache)
        return self._catalog

    def refresh_catalog(self) -> None:
        """Read the active catalog again at its next use (another command may have reloaded it)."""
        self._catalog = None

    @cached_property
    def engines(self) -> EngineRegistry:
        """The engine registry (engines load on first use)."""
        return EngineRegistry()

    def fork(self) -> Workspace:
        """Return a new workspace over the same settings and folder, with its own connection.

        For a thread that works on the state database beside this one.
        """
        return Workspace(self.settings, self.cwd)

    def close(self) -> None:
        """Close the database connection if one was opened."""
        if "db" in self.__dict__:
            self.__dict__.pop("db").close()


def bundled_root(kind: Kind) -> Path:
    """Return the bundled layer's root for ``kind``.

    Recipes, prompts and strategies live in the bundled ``catalog/`` folder
    (``catalog/recipes``, ``catalog/prompts``, ``catalog/strategies``); wizards in the bundled
    ``wizards/`` folder itself, so its parent is the root.
    """
    if kind is Kind.WIZARDS:
        return bundled_dir("wizards").parent
    return bundled_dir("catalog")
