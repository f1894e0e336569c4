"""zaphod: a council or a debate of heads (docs/engines.md "zaphod").

The descriptor, the recipes its heads name and the plan view; the turn is
``zaphod.turn``, loaded when a turn runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.processes.engine import Engine, PlanView, short_id

if TYPE_CHECKING:
    from vance_cli.processes.turn import Turn, TurnOutcome
    from vance_cli.recipes.params import Common

DEFAULT_HEAD_RECIPE = "default"
"""A head's recipe when it names none (``zaphod.params.Head``)."""


def _turn(turn: Turn) -> TurnOutcome:
    from vance_cli.engines.zaphod.turn import run_turn  # deferred: a turn's code loads with it

    return run_turn(turn)


def _params() -> type[Common]:
    from vance_cli.engines.zaphod.params import ZaphodParams  # heavy: pydantic

    return ZaphodParams


def references(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Return each head's recipe (``default`` for a head that names none)."""
    heads = params.get("heads")
    found = []
    for i, head in enumerate(h for h in (heads if isinstance(heads, list) else [])
                             if isinstance(h, Mapping)):
        recipe = head.get("recipe")
        name = recipe.strip() if isinstance(recipe, str) and recipe.strip() \
            else DEFAULT_HEAD_RECIPE
        found.append((f"params.heads[{i}].recipe", name))
    return found


def plan_lines(state: Mapping[str, Any], process_status: str = "RUNNING") -> list[str]:
    """Return the pattern and one line per head: its status and process."""
    heads: Sequence[Mapping[str, Any]] = state.get("heads") or []
    width = max((len(str(h.get("name"))) for h in heads), default=0)
    rounds = state.get("rounds", 0)
    lines = [f"{state.get('pattern')}, {rounds} round{'s' if rounds != 1 else ''}"
             + ("; consensus reached" if state.get("consensusReached") else "")]
    for head in heads:
        status = str(head.get("status"))
        if head.get("error"):
            status += f": {head['error']}"
        lines.append(f"{str(head.get('name')).ljust(width)}  {status}"
                     + (f" (process {short_id(head.get('process'))})" if head.get("process")
                        else ""))
    return lines


ENGINE = Engine(name="zaphod", run_turn=_turn, orchestrates=True, params=_params,
                references=references, plan=PlanView("heads", plan_lines))
"""zaphod as vance sees it: its heads are child processes, run side by side."""
