"""marvin: a task tree (docs/engines.md "marvin").

The descriptor, the recipes a tree may use and the plan view; the turn is
``marvin.turn``, loaded when a turn runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from vance_cli.base.wording import shorten
from vance_cli.processes.engine import Engine, PlanView, short_id

if TYPE_CHECKING:
    from vance_cli.processes.turn import Turn, TurnOutcome
    from vance_cli.recipes.params import Common

GOAL_CHARS = 70
"""Characters of a task's goal shown in the tree."""


def _turn(turn: Turn) -> TurnOutcome:
    from vance_cli.engines.marvin.turn import run_turn  # deferred: a turn's code loads with it

    return run_turn(turn)


def _params() -> type[Common]:
    from vance_cli.engines.marvin.params import MarvinParams  # heavy: pydantic

    return MarvinParams


def references(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Return the recipes ``availableRecipes`` lists."""
    listed = params.get("availableRecipes")
    return [(f"params.availableRecipes[{i}]", name.strip())
            for i, name in enumerate(listed if isinstance(listed, list) else [])
            if isinstance(name, str) and name.strip()]


def _nodes(node: Mapping[str, Any], depth: int = 0) -> Iterator[tuple[Mapping[str, Any], int]]:
    for child in node.get("children") or ():
        yield child, depth
        yield from _nodes(child, depth + 1)


def plan_lines(state: Mapping[str, Any], process_status: str = "RUNNING") -> list[str]:
    """Return the task tree: one line per node, indented by depth, with status and worker."""
    tree = state.get("tree") or {}
    lines = [shorten(str(tree["goal"]), GOAL_CHARS)] if tree.get("goal") else []
    for node, depth in _nodes(tree):
        goal = shorten(str(node.get("goal") or node.get("item") or ""), GOAL_CHARS)
        extra = [str(node["recipe"])] if node.get("recipe") else []
        if node.get("process"):
            extra.append(short_id(node["process"]))
        if node.get("items"):
            extra.append(f"{len(node['items'])} items")
        status = str(node.get("status"))
        if node.get("error"):
            status += f": {node['error']}"
        lines.append(f"{'  ' * depth}{node.get('id')} {goal} — {status}"
                     + (f" ({', '.join(extra)})" if extra else ""))
    return lines


ENGINE = Engine(name="marvin", run_turn=_turn, orchestrates=True, params=_params,
                references=references, plan=PlanView("tree", plan_lines))
"""marvin as vance sees it: each task of its tree is a child process."""
