"""The engine registry: the engine of each name, bundled or a plugin, loaded on first use.

An engine is a module with one ``ENGINE`` (``processes.engine.Engine``). The
bundled engines are the packages ``vance_cli.engines.<name>`` of
``BUNDLED``; any other name is looked up in the ``vance.engines``
entry-point group of the installed distributions, as llm and datasette
find their plugins (docs/engines.md "Writing an engine"). A bundled name
wins over a plugin of the same name.

Lookups are lazy: a name is resolved (its module imported, entry points
read) the first time it is asked for, and a descriptor module is light
(``processes.engine``), so listing recipes loads no turn code. The
registry is reached as ``Workspace.engines``; the layers below ask it by
name and never import an engine.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from vance_cli.base import logs
from vance_cli.processes.engine import Engine, PlanView

if TYPE_CHECKING:
    from importlib import metadata

    from vance_cli.processes.turn import Process
    from vance_cli.recipes.params import Common
    from vance_cli.workspace import Workspace

BUNDLED = ("arthur", "ford", "marvin", "slartibartfast", "vogon", "zaphod")
"""The engines shipped with vance, each the package ``vance_cli.engines.<name>``."""

ENTRY_POINT_GROUP = "vance.engines"
"""The entry-point group a plugin engine registers under: ``name = "module"`` or
``name = "module:ENGINE"``."""

EntryPoints = Callable[[], Iterable["metadata.EntryPoint"]]
"""Returns the ``vance.engines`` entry points (of the installed distributions by default)."""


def installed_entry_points() -> list[metadata.EntryPoint]:
    """Return the ``vance.engines`` entry points of the installed distributions."""
    from importlib import metadata  # deferred: it reads every distribution; only plugins need it

    return list(metadata.entry_points(group=ENTRY_POINT_GROUP))


class EngineRegistry:
    """The engines of this installation, each loaded on first use.

    Args:
        modules: engine name → the module of its ``ENGINE``; defaults to the
            bundled engines.
        entry_points: where plugins are found (tests pass their own).
    """

    def __init__(self, modules: Mapping[str, str] | None = None,
                 entry_points: EntryPoints = installed_entry_points) -> None:
        self._modules = dict(modules if modules is not None else
                             {name: f"vance_cli.engines.{name}" for name in BUNDLED})
        self._entry_points = entry_points
        self._plugins: dict[str, metadata.EntryPoint] | None = None
        self._loaded: dict[str, Engine | None] = {}

    def plugins(self) -> dict[str, metadata.EntryPoint]:
        """Return the plugin engines by name (read once), bundled names left out."""
        if self._plugins is None:
            self._plugins = {ep.name: ep for ep in self._entry_points()
                             if ep.name not in self._modules}
        return self._plugins

    def names(self) -> list[str]:
        """Return the name of every engine with code here, bundled first, then plugins."""
        return [*self._modules, *sorted(self.plugins())]

    def get(self, name: str) -> Engine | None:
        """Return the engine ``name``, or None when vance has no code for it.

        Raises:
            TypeError: its module (or entry point) gives no ``Engine`` of that name.
        """
        if name not in self._loaded:
            self._loaded[name] = self._load(name)
        return self._loaded[name]

    def _load(self, name: str) -> Engine | None:
        module = self._modules.get(name)
        if module is not None:
            where, found = module, getattr(importlib.import_module(module), "ENGINE", None)
        elif name in self.plugins():
            entry = self.plugins()[name]
            where, found = entry.value, entry.load()
            found = getattr(found, "ENGINE", found)
        else:
            return None
        if not isinstance(found, Engine) or found.name != name:
            raise TypeError(f"{where} defines no ENGINE named '{name}'")
        return found

    def params_model(self, name: str) -> type[Common] | None:
        """Return the params schema of engine ``name``, or None (any params)."""
        engine = self.get(name)
        return engine.params() if engine is not None and engine.params is not None else None

    def references(self, name: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Return the recipes ``params`` of engine ``name`` name, as ``(where, recipe)``."""
        engine = self.get(name)
        if engine is None or engine.references is None:
            return []
        return engine.references(params)

    def orchestrates(self, name: str) -> bool:
        """True when engine ``name``'s turns run child processes."""
        engine = self.get(name)
        return engine is not None and engine.orchestrates

    def delegates(self, name: str) -> bool:
        """True when engine ``name``'s turns start processes (it delegates or orchestrates)."""
        engine = self.get(name)
        return engine is not None and (engine.delegates or engine.orchestrates)

    def plan(self, name: str) -> PlanView | None:
        """Return how ``process show`` draws engine ``name``'s state, or None."""
        engine = self.get(name)
        return engine.plan if engine is not None else None

    def without_code(self, names: Iterable[str]) -> list[str]:
        """Return those of ``names`` (catalog engines) that have no descriptor here."""
        return [name for name in names if self.get(name) is None]

    def run_close_hooks(self, ws: Workspace, processes: Iterable[Process]) -> list[str]:
        """Run the close hook of each closed process's engine, if it has one.

        A failing hook never undoes the close: it is logged (a warning naming
        the process and the error, ``base.logs``) and reported.

        Args:
            ws: the workspace of whoever closed the processes.
            processes: processes just closed, as stored after the close.

        Returns:
            One line per hook that failed (empty when all ran).
        """
        failures: list[str] = []
        for process in processes:
            engine = self.get(process.engine)
            if engine is None or engine.on_close is None:
                continue
            try:
                engine.on_close(ws, process)
            except Exception as exc:  # bookkeeping: the close stands, the failure is told
                line = (f"the {engine.name} close hook failed for process {process.id}: "
                        f"{type(exc).__name__}: {exc}")
                logs.warn(__name__, line)
                failures.append(line)
        return failures
