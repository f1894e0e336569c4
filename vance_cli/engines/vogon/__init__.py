"""vogon: a fixed plan of phases, each a worker (docs/engines.md "vogon").

The descriptor, the recipes a plan names and the plan view; the turn is
``vogon.turn``, loaded when a turn runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vance_cli.processes.engine import Engine, PlanView, short_id

if TYPE_CHECKING:
    from vance_cli.processes.turn import Turn, TurnOutcome
    from vance_cli.recipes.params import Common


def _turn(turn: Turn) -> TurnOutcome:
    from vance_cli.engines.vogon.turn import run_turn  # deferred: a turn's code loads with it

    return run_turn(turn)


def _params() -> type[Common]:
    from vance_cli.engines.vogon.params import VogonParams  # heavy: pydantic

    return VogonParams


def references(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Return each phase's worker recipe (phases without one run ``default`` with a prompt)."""
    phases = params.get("phases")
    found = []
    for i, phase in enumerate(p for p in (phases if isinstance(phases, list) else [])
                              if isinstance(p, Mapping)):
        worker = phase.get("worker")
        if isinstance(worker, str) and worker.strip():
            found.append((f"params.phases[{i}].worker", worker.strip()))
    return found


def plan_lines(state: Mapping[str, Any], process_status: str = "RUNNING") -> list[str]:
    """Return one line per phase: its name, status, rounds and last worker.

    The phase under way reads ``running`` while the process runs, else
    ``interrupted`` (it waits, ``IDLE``) or ``failed`` (it closed).
    """
    under_way = {"RUNNING": "running", "CLOSED": "failed"}.get(process_status, "interrupted")
    phases: Sequence[Mapping[str, Any]] = state.get("plan", {}).get("phases") or []
    done: Mapping[str, Any] = state.get("done") or {}
    waiting = state.get("waiting")
    current = state.get("current") or {}
    width = max((len(str(p.get("name"))) for p in phases), default=0)
    lines = []
    for index, phase in enumerate(phases):
        name = str(phase.get("name"))
        record = done.get(name) or {}
        status = record.get("status") or "pending"
        if waiting and waiting.get("index") == index:
            status = f"done, waiting for your {waiting.get('type')}"
        elif current.get("name") == name and status == "pending":
            status = under_way
        extra = []
        if record.get("rounds", 0) > 1:
            extra.append(f"{record['rounds']} rounds")
        if record.get("score") is not None:
            extra.append(f"score {record['score']:.2f}")
        kids = record.get("children") or ([current.get("child")] if status == under_way else [])
        if kids:
            extra.append(f"process {short_id(kids[-1])}")
        lines.append(f"{index + 1}. {name.ljust(width)}  {status}"
                     + (f" ({', '.join(extra)})" if extra else ""))
    return lines


ENGINE = Engine(name="vogon", run_turn=_turn, orchestrates=True, params=_params,
                references=references, plan=PlanView("phases", plan_lines))
"""vogon as vance sees it: its phases' workers are child processes."""
