"""Every location vance reads or writes, as one ``Paths`` object.

Rules (docs/documents.md):
- ``VANCE_HOME`` (or ``--home``) puts config, data and state in one folder:
  ``<home>/config.yaml``, ``<home>/data/``, ``<home>/state/``.
- Without it, platformdirs' user config, user data and user state dirs for
  the app name ``vance``.
- The bundled layer lives inside the installed package
  (``vance_cli/_bundled/{catalog,wizards}``, put there by the wheel build from
  the repo's top-level folders). A source checkout or editable install has no
  ``_bundled`` folder, so the repo's top-level folders are used directly.

Nothing here creates a directory on import or construction; writers call
``ensure()`` on what they need.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path

from vance_cli.base.names import check_id
from vance_cli.base.records import frozen

APP_NAME = "vance"
"""Application name given to platformdirs."""

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The installed ``vance_cli`` package folder."""


def bundled_dir(kind: str) -> Path:
    """Return the folder of a bundled document kind.

    Args:
        kind: ``"catalog"`` (engines.yaml, recipes/, prompts/) or ``"wizards"``.

    Returns:
        The folder inside the installed wheel when present, else the repo's
        top-level folder of that name (source checkout, editable install).
    """
    packaged = _PACKAGE_DIR / "_bundled" / kind
    if packaged.is_dir():
        return packaged
    return _PACKAGE_DIR.parent / kind


@frozen
class Paths:
    """The config, data and state folders, and every file named inside them.

    Attributes:
        config_dir: holds ``config.yaml``.
        data_dir: holds ``tenants/<tenant>/projects/<project>/…`` documents.
        state_dir: holds the SQLite database, the active catalog, logs and history.
    """

    config_dir: Path
    data_dir: Path
    state_dir: Path

    @classmethod
    def resolve(cls, home: str | os.PathLike[str] | None = None,
                environ: Mapping[str, str] | None = None) -> Paths:
        """Build the paths from ``--home``, else ``VANCE_HOME``, else platformdirs.

        Args:
            home: the ``--home`` flag value, or None.
            environ: environment mapping; defaults to ``os.environ``.

        Returns:
            Absolute paths (``~`` expanded); nothing is created.

        Raises:
            OSError: ``ELOOP`` when the home is a symlink loop (Python 3.11
                raises RuntimeError there; 3.13 an OSError, as here).
        """
        env = os.environ if environ is None else environ
        root = home or env.get("VANCE_HOME") or None
        if root:
            try:
                base = Path(root).expanduser().resolve()
            except RuntimeError as exc:  # "Symlink loop from …" before Python 3.13
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(root)) from exc
            return cls(base, base / "data", base / "state")
        import platformdirs  # only when there is no VANCE_HOME (≈40 ms)

        return cls(
            Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_state_dir(APP_NAME, appauthor=False)),
        )

    @property
    def config_file(self) -> Path:
        """The YAML config file ``vance config set`` writes."""
        return self.config_dir / "config.yaml"

    @property
    def db_file(self) -> Path:
        """The SQLite state database (processes, events, decision log)."""
        return self.state_dir / "vance.db"

    @property
    def catalog_state_dir(self) -> Path:
        """Folder of the active engine catalog record and its lock (docs/catalog.md)."""
        return self.state_dir / "catalog"

    @property
    def active_catalog_file(self) -> Path:
        """JSON record of the active catalog: source file, time, engines."""
        return self.catalog_state_dir / "active.json"

    @property
    def logs_dir(self) -> Path:
        """Log files of detached background workers."""
        return self.state_dir / "logs"

    @property
    def streams_dir(self) -> Path:
        """The live text of each process's latest turn (``vance process follow`` reads it)."""
        return self.state_dir / "streams"

    @property
    def replies_dir(self) -> Path:
        """Where full replies too long to store as a message are kept (``<id>-<turn>.txt``)."""
        return self.state_dir / "replies"

    @property
    def history_file(self) -> Path:
        """``vance shell`` input history."""
        return self.state_dir / "shell-history"

    @property
    def cache_dir(self) -> Path:
        """Rebuildable caches (parsed documents); safe to delete."""
        return self.state_dir / "cache"

    def tenant_dir(self, tenant: str) -> Path:
        """Return ``<data>/tenants/<tenant>``.

        Raises:
            InvalidId: ``tenant`` is not one valid path segment (``documents.check_id``);
                settings are checked when read, this is the second line of defence.
        """
        return self.data_dir / "tenants" / check_id(tenant, "tenant")

    def project_dir(self, tenant: str, project: str) -> Path:
        """Return ``<data>/tenants/<tenant>/projects/<project>`` (``_tenant``: the tenant's own).

        Raises:
            InvalidId: ``tenant`` or ``project`` is not one valid path segment.
        """
        return self.tenant_dir(tenant) / "projects" / check_id(project, "project")

    def own_dirs(self) -> tuple[Path, ...]:
        """Return the three roots, so ``.vance`` discovery never mistakes them for a project."""
        return (self.config_dir, self.data_dir, self.state_dir)


def ensure(path: Path) -> Path:
    """Create ``path`` (a directory) with parents if missing and return it."""
    path.mkdir(parents=True, exist_ok=True)
    return path


def find_project_folder(start: Path, paths: Paths) -> Path | None:
    """Find a ``.vance/`` folder in ``start`` or a parent, as git finds ``.git``.

    Args:
        start: the folder to start from (usually the current directory).
        paths: resolved paths; a ``.vance`` that *is* vance's own home (e.g.
            ``VANCE_HOME=~/.vance``) is not a project folder.

    Returns:
        The ``.vance`` folder, or None when there is none up to the root.
    """
    own = {p.resolve() for p in paths.own_dirs()}
    current = start.resolve()
    for folder in (current, *current.parents):
        candidate = folder / ".vance"
        if candidate.is_dir() and candidate.resolve() not in own:
            return candidate
    return None
