"""An orchestrating process's work, drawn for people: its engine's plan view.

``vance process show`` draws the engine state the process keeps
(docs/engines.md): each engine says how, in plain lines (``Engine.plan``:
vogon's phases, zaphod's heads, marvin's task tree); this only lays them
out as one field. ``--json`` has the state as it is stored (``state``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vance_cli.processes.engine import PlanView


def plan_field(plan: PlanView | None, state: Mapping[str, Any] | None,
               process_status: str = "RUNNING") -> tuple[str, str] | None:
    """Return ``(label, text)`` for ``process show``, or None when there is nothing to draw.

    The text puts each of the plan view's lines on a line of its own, indented.
    """
    if plan is None or not state:
        return None
    lines = plan.lines(state, process_status)
    return (plan.label, "".join(f"\n  {line}" for line in lines)) if lines else None
