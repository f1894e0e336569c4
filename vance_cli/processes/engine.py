"""The engine descriptor: everything vance asks of an engine, in one value.

An engine module declares one ``ENGINE`` (``Engine``); ``engines.registry``
finds it by name (a bundled engine, or a plugin of the ``vance.engines``
entry-point group: docs/engines.md "Writing an engine"). The process layer
calls the turn and close hooks; the recipe layer asks for the params model
and the reference walk, the command line for the plan view, each through
``Workspace.engines`` — never by an engine's name.

Invariant: declaring a descriptor is cheap. A descriptor module imports no
heavy library and no turn code at its top; its hooks load their code on
first call (``# deferred:``) and ``params`` returns the model only when
asked, so listing recipes or the catalog loads no engine's turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from vance_cli.base.records import frozen

if TYPE_CHECKING:
    from vance_cli.processes.model import Process
    from vance_cli.processes.turn import Turn, TurnOutcome, TurnSink
    from vance_cli.recipes.params import Common
    from vance_cli.workspace import Workspace

TurnStep = Callable[["Turn"], "TurnOutcome"]
"""One turn's work: takes the turn (inputs, history, LLM calls), returns its outcome."""

WholeRun = Callable[["Workspace", "Process", "TurnSink", bool], "Process"]
"""Runs a whole process by itself (``ws, process, sink, adopt``) and returns it closed."""

CloseHook = Callable[["Workspace", "Process"], None]
"""Called as ``hook(ws, process)`` after a process of the engine was closed."""

ParamsModel = Callable[[], "type[Common]"]
"""Returns the engine's params schema (a pydantic model; imported when called)."""

ReferenceWalk = Callable[[Mapping[str, Any]], list[tuple[str, str]]]
"""Takes params (plain data, possibly malformed) and returns the recipes they name,
as ``(where, recipe)`` pairs, e.g. ``("params.phases[2].worker", "coding")``."""

SHORT_ID = 8
"""Characters of a child's id a plan view shows beside its phase, head or node."""

PlanLines = Callable[[Mapping[str, Any], str], list[str]]
"""Takes the engine state a process keeps and its status; returns plain lines to show."""


@frozen
class PlanView:
    """How ``process show`` draws a process's engine state.

    Attributes:
        label: the field's label (``phases``, ``heads``, ``tree``).
        lines: the drawing, one plain line each.
    """

    label: str
    lines: PlanLines


@frozen
class Engine:
    """One engine as vance sees it.

    Attributes:
        name: the engine's name, as in the engine catalog.
        run_turn: one turn of a process (``processes.runtime`` claims, feeds and
            settles it).
        run_process: instead of turns, the engine runs the whole process itself
            (Slartibartfast, under its own cutoff).
        on_close: run after a process of this engine was closed (outside the
            write lock), by whoever closed it; bookkeeping only: the close stands.
        wakes_on_events: a child's result starts a turn of this engine's process.
        orchestrates: its turns run child processes (nesting is bounded for
            these: docs/engines.md "Children").
        delegates: its turns start processes through the selector (arthur's
            delegate action); with ``orchestrates``, what the delegation limits
            count (docs/engines.md "Delegation limits").
        params: its params schema, or None: any params (the common keys unchecked).
        references: the recipes its params name (a recipe naming a missing one
            cannot run); None: its params name none.
        plan: how ``process show`` draws its state; None: not drawn.
        tools: the tools a turn can use (``files``, ``shell``, ``web``, ``code``);
            empty: the engine answers in its reply only. The engine catalog may
            claim no other (docs/engines.md "ford").
    """

    name: str
    run_turn: TurnStep | None = None
    run_process: WholeRun | None = None
    on_close: CloseHook | None = None
    wakes_on_events: bool = False
    orchestrates: bool = False
    delegates: bool = False
    params: ParamsModel | None = None
    references: ReferenceWalk | None = None
    plan: PlanView | None = None
    tools: tuple[str, ...] = ()

    @property
    def runs(self) -> bool:
        """True when the engine has code that runs a process (turns or a whole run)."""
        return self.run_turn is not None or self.run_process is not None


def short_id(pid: Any) -> str:
    """Return a child's id cut to ``SHORT_ID`` characters ("" for none), for plan views."""
    return str(pid)[:SHORT_ID] if pid else ""
