"""An orchestrating process's work, drawn for people: phases, heads or the task tree.

``vance process show`` draws the engine state the process keeps
(docs/engines.md): vogon's phases with their status, zaphod's heads with
what became of them, marvin's task tree with each node's status. Lines
only; ``--json`` has the state as it is stored (``state``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from vance_cli.base.wording import shorten

SHORT_ID = 8
"""Characters of a child's id shown beside its phase, head or node."""

GOAL_CHARS = 70
"""Characters of a task's goal shown in the tree."""


def _short(pid: Any) -> str:
    return str(pid)[:SHORT_ID] if pid else ""


def vogon_lines(state: Mapping[str, Any], process_status: str = "RUNNING") -> list[str]:
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
            extra.append(f"process {_short(kids[-1])}")
        lines.append(f"{index + 1}. {name.ljust(width)}  {status}"
                     + (f" ({', '.join(extra)})" if extra else ""))
    return lines


def zaphod_lines(state: Mapping[str, Any], process_status: str = "RUNNING") -> list[str]:
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
                     + (f" (process {_short(head.get('process'))})" if head.get("process")
                        else ""))
    return lines


def _nodes(node: Mapping[str, Any], depth: int = 0) -> Iterator[tuple[Mapping[str, Any], int]]:
    for child in node.get("children") or ():
        yield child, depth
        yield from _nodes(child, depth + 1)


def marvin_lines(state: Mapping[str, Any], process_status: str = "RUNNING") -> list[str]:
    """Return the task tree: one line per node, indented by depth, with status and worker."""
    tree = state.get("tree") or {}
    lines = [shorten(str(tree["goal"]), GOAL_CHARS)] if tree.get("goal") else []
    for node, depth in _nodes(tree):
        goal = shorten(str(node.get("goal") or node.get("item") or ""), GOAL_CHARS)
        extra = [str(node["recipe"])] if node.get("recipe") else []
        if node.get("process"):
            extra.append(_short(node["process"]))
        if node.get("items"):
            extra.append(f"{len(node['items'])} items")
        status = str(node.get("status"))
        if node.get("error"):
            status += f": {node['error']}"
        lines.append(f"{'  ' * depth}{node.get('id')} {goal} — {status}"
                     + (f" ({', '.join(extra)})" if extra else ""))
    return lines


DRAWERS = {"vogon": ("phases", vogon_lines), "zaphod": ("heads", zaphod_lines),
           "marvin": ("tree", marvin_lines)}
"""Engine → (the field's label, how its state is drawn)."""


def plan_field(engine: str, state: Mapping[str, Any] | None,
               process_status: str = "RUNNING") -> tuple[str, str] | None:
    """Return ``(label, text)`` for ``process show``, or None when there is nothing to draw.

    The text puts each line on a line of its own, indented.
    """
    drawer = DRAWERS.get(engine)
    if drawer is None or not state:
        return None
    label, draw = drawer
    lines = draw(state, process_status)
    return (label, "".join(f"\n  {line}" for line in lines)) if lines else None
