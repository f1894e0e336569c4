"""arthur: the conversational lead (docs/engines.md "arthur").

The descriptor only; the turn is ``arthur.turn``, loaded when a turn runs.
A child's result starts arthur's next turn (``wakes_on_events``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vance_cli.processes.engine import Engine

if TYPE_CHECKING:
    from vance_cli.processes.turn import Turn, TurnOutcome
    from vance_cli.recipes.params import Common


def _turn(turn: Turn) -> TurnOutcome:
    from vance_cli.engines.arthur.turn import run_turn  # deferred: a turn's code loads with it

    return run_turn(turn)


def _params() -> type[Common]:
    from vance_cli.engines.arthur.params import ArthurParams  # heavy: pydantic

    return ArthurParams


ENGINE = Engine(name="arthur", run_turn=_turn, params=_params, wakes_on_events=True,
                delegates=True, tools=("files", "code", "web"))
"""arthur as vance sees it: it delegates, and a child's result starts its next turn."""
