"""The engine registry: which module defines each engine, and each engine's hooks.

An engine module defines one ``ENGINE`` value (``Engine``): its name and the
functions the generic process machinery calls for its processes — today the
close hook, which ends state an engine keeps outside the database (the
Slartibartfast run's ``audit.json``). The hooks are plain functions,
type-checked like any other call.

``ENGINE_MODULES`` is the table of engines, as ``cli.app.COMMANDS`` is the
table of commands: an engine's module is imported the first time a process
of that engine needs it, so a command that runs no engine loads none
(docs/decisions/0003-imports.md). The registry is reached as
``Workspace.engines``; the process layer below never imports an engine.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from vance_cli.base import logs
from vance_cli.base.records import frozen

if TYPE_CHECKING:
    from vance_cli.processes.model import Process
    from vance_cli.processes.runtime import Turn, TurnOutcome, TurnSink
    from vance_cli.workspace import Workspace

CloseHook = Callable[["Workspace", "Process"], None]
"""Called as ``hook(ws, process)`` after a process of the engine was closed."""

TurnStep = Callable[["Turn"], "TurnOutcome"]
"""One turn's work: takes the turn (inputs, history, LLM calls), returns its outcome."""

WholeRun = Callable[["Workspace", "Process", "TurnSink", bool], "Process"]
"""Runs a whole process by itself (``ws, process, sink, adopt``) and returns it closed."""


@frozen
class Engine:
    """One engine as the process machinery sees it.

    Attributes:
        name: the engine's name, as in the engine catalog.
        run_turn: one turn of a process (``processes.runtime`` claims, feeds and
            settles it).
        run_process: instead of turns, the engine runs the whole process itself
            (Slartibartfast, under its own cutoff).
        on_close: run after a process of this engine was closed (outside the
            write lock), by whoever closed it; bookkeeping only: the close stands.
        wakes_on_events: a child's result starts a turn of this engine's process
            (arthur reports what its children did).
        tools: the tools a turn can use (``files``, ``shell``, ``web``, ``code``);
            empty: the engine answers in its reply only. The engine catalog may
            claim no other (docs/engines.md "ford").
    """

    name: str
    run_turn: TurnStep | None = None
    run_process: WholeRun | None = None
    on_close: CloseHook | None = None
    wakes_on_events: bool = False
    tools: tuple[str, ...] = ()


ENGINE_MODULES: Mapping[str, str] = {
    "arthur": "vance_cli.engines.arthur",
    "ford": "vance_cli.engines.ford",
    "marvin": "vance_cli.engines.marvin",
    "slartibartfast": "vance_cli.engines.slartibartfast.registration",
    "vogon": "vance_cli.engines.vogon",
    "zaphod": "vance_cli.engines.zaphod",
}
"""Engine name → the module whose ``ENGINE`` defines it. Engines of the catalog that
have no module here run no code of their own yet."""


class EngineRegistry:
    """The engines of this installation, each loaded on first use."""

    def __init__(self, modules: Mapping[str, str] = ENGINE_MODULES) -> None:
        self._modules = dict(modules)
        self._loaded: dict[str, Engine] = {}

    def get(self, name: str) -> Engine | None:
        """Return the engine ``name``, or None when vance has no code for it.

        Raises:
            TypeError: the engine's module defines no ``Engine`` called ``ENGINE``.
        """
        if name not in self._loaded:
            module = self._modules.get(name)
            if module is None:
                return None
            engine = getattr(importlib.import_module(module), "ENGINE", None)
            if not isinstance(engine, Engine) or engine.name != name:
                raise TypeError(f"{module} defines no ENGINE named '{name}'")
            self._loaded[name] = engine
        return self._loaded[name]

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
