"""ford: one concrete job, one answer (docs/engines.md "ford").

The descriptor only; the turn is ``ford.turn``, loaded when a turn runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vance_cli.processes.engine import Engine

if TYPE_CHECKING:
    from vance_cli.processes.turn import Turn, TurnOutcome
    from vance_cli.recipes.params import Common


def _turn(turn: Turn) -> TurnOutcome:
    from vance_cli.engines.ford.turn import run_turn  # deferred: a turn's code loads with it

    return run_turn(turn)


def _params() -> type[Common]:
    from vance_cli.engines.ford.params import FordParams  # heavy: pydantic

    return FordParams


ENGINE = Engine(name="ford", run_turn=_turn, params=_params, tools=("files", "code", "web"))
"""ford as vance sees it: tools as its recipe allows (docs/tools.md), no children."""
