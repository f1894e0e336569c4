"""How processes and their events are shown on the command line, and the shared options."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from vance_cli.base.wording import counted, shorten
from vance_cli.cli import output
from vance_cli.cli.commands.process_plan import plan_field
from vance_cli.processes.model import Status

if TYPE_CHECKING:
    from vance_cli.engines.registry import EngineRegistry
    from vance_cli.processes.events import Event
    from vance_cli.processes.model import Process

IdArg = Annotated[str, typer.Argument(metavar="ID", help="Process id or unique prefix.")]
"""A process id (or a unique prefix) argument."""

IdsArg = Annotated[list[str], typer.Argument(
    metavar="ID...", help="Process ids, names (this session) or unique id prefixes.")]
"""One or more process ids (or names, unique prefixes)."""

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
"""The ``--json`` flag."""

ParamOpt = Annotated[list[str] | None, typer.Option(
    "--param", "-p", help="KEY=VALUE (string) or KEY:=JSON; repeatable; overlays recipe params.")]
"""The repeatable ``--param`` option."""

YesToolsOpt = Annotated[list[str] | None, typer.Option(
    "--yes-tools", metavar="NAME", help="Let the turn call tool NAME (or a pattern: srv.*) "
    "without asking; repeatable; for this command only.")]
"""The repeatable ``--yes-tools`` option of commands that start a turn."""

WaitFlag = Annotated[bool, typer.Option(
    "--wait", "-w", help="Run the turn here and wait for it (the answer streams in on a "
    "terminal); exit 1 if it fails.")]
"""The ``--wait`` flag of commands that start a turn."""


PARAMS_CHARS = 200
"""Longer params are shown by their keys only (an orchestrator's phases, heads …)."""


WAITS = "input waits"
"""Beside the status of a process that is not running with inputs no turn has taken."""


def status_label(process: Process, waiting: int) -> str:
    """Return the status for a table, e.g. ``CLOSED/FAILED`` or ``IDLE (input waits)``."""
    waits = waiting and process.status is not Status.RUNNING and not \
        (process.status is Status.CLOSED and not process.failed_turn)
    return process.label + (f" ({WAITS})" if waits else "")


def print_process(process: Process, totals: dict[str, float] | None = None,
                  waiting: int = 0, *, engines: EngineRegistry) -> None:
    """Print one process for people (used by create, show, wait and stop).

    Args:
        process: the process.
        engines: the engines, whose plan view draws the process's state.
        totals: its LLM usage (``processes.views.llm_totals``), shown when given.
        waiting: how many inputs no turn has taken yet (``processes.views.input_waiting``).
    """
    output.fields(process_pairs(process, totals, waiting, engines=engines))


def process_pairs(process: Process, totals: dict[str, float] | None = None,
                  waiting: int = 0, *, engines: EngineRegistry) -> list[tuple[str, object]]:
    """Return the ``label: value`` lines of one process (see ``print_process``)."""
    data = process.to_json()
    pairs = [("id", data["id"]), ("name", data["name"]), ("recipe", data["recipe"]),
             ("engine", data["engine"]), ("status", process.label)]
    if data["closeReason"]:
        pairs.append(("close reason", _close_reason(process)))
    if status_label(process, waiting) != process.label:
        pairs.append(("input", f"{counted(waiting, 'message')} no turn has answered yet;"
                               f" 'vance process run {process.id}' runs it"))
    if data["parentProcessId"]:
        pairs.append(("parent", data["parentProcessId"]))
    pairs += [("session", data["session"]), ("title", data["title"])]
    if data["goal"]:
        pairs.append(("goal", _cut(data["goal"])))
    pairs.append(("created", data["createdAt"]))
    if data["params"]:
        shown = json.dumps(data["params"], ensure_ascii=False)
        if len(shown) > PARAMS_CHARS:
            shown = ", ".join(data["params"]) + " ('--json' shows them)"
        pairs.append(("params", shown))
    if process.turns:
        pairs.append(("turns", process.turns))
    if totals and totals["calls"]:
        pairs.append(("llm", f"{counted(int(totals['calls']), 'call')},"
                             f" {totals['tokensIn']:g} tokens in,"
                             f" {totals['tokensOut']:g} out, {totals['latencyMs']:g} ms"))
    drawn = plan_field(engines.plan(process.engine), process.state, process.status.value)
    if drawn:
        pairs.append(drawn)
    outcome = data.get("outcome") or {}
    if outcome and not drawn:
        pairs.append(("outcome", json.dumps(outcome, ensure_ascii=False)))
    elif outcome.get("reason"):
        pairs.append(("reason", outcome["reason"]))
    if data.get("result"):
        pairs.append(("result", data["result"]))
    return pairs


def _close_reason(process: Process) -> str:
    """Return a closed process's reason for people: a failed turn reads FAILED, not STALE."""
    if process.failed_turn:  # the JSON keeps its STALE
        assert process.outcome is not None
        return f"FAILED: turn {process.outcome['turn']} failed ({process.close_reason} in --json)"
    return str(process.close_reason)


def as_tree(processes: Sequence[Process]) -> list[tuple[Process, int]]:
    """Order processes as a tree: each top one, then its children under it, with depths.

    Args:
        processes: newest first (``list_processes``).

    Returns:
        (process, depth) pairs: top-level processes (no parent, or a parent not
        among ``processes``) newest first at depth 0; under each, its children
        oldest first (the order an orchestrator started them), depth + 1.
    """
    known = {p.id for p in processes}
    children: dict[str, list[Process]] = {}
    for process in reversed(processes):
        parent = process.parent_process_id
        if parent is not None and parent in known:
            children.setdefault(parent, []).append(process)
    ordered: list[tuple[Process, int]] = []
    pending = [(p, 0) for p in reversed(processes) if p.parent_process_id not in known]
    while pending:  # depth first, without recursion (a tree may be deep)
        process, depth = pending.pop()
        ordered.append((process, depth))
        pending += [(c, depth + 1) for c in reversed(children.get(process.id, ()))]
    return ordered


GOAL_SHOWN = 1_000
"""Characters of a goal ``process show`` prints for people (``--json`` has it whole)."""


def _cut(text: str) -> str:
    if len(text) <= GOAL_SHOWN:
        return text
    return f"{shorten(text, GOAL_SHOWN)} ({len(text):,} characters; --json shows it whole)"


def print_event(event: Event) -> None:
    """Print one event for people: id, time, kind, what it is about, then its data."""
    data = dict(event.payload)
    if event.kind == "child_closed":
        about = (f"{data.get('name')} ({event.source}) closed {data.get('closeReason')}"
                 f" — for {event.recipient}")
        detail = data.get("outcome") or data.get("result")
    else:
        about = f"from {event.source or '-'} for {event.recipient}"
        detail = data
    state = "" if event.consumed_at is None else f" [consumed {event.consumed_at}]"
    output.say(f"#{event.id} {event.created_at} {event.kind}: {about}{state}")
    if detail:
        output.say("    " + json.dumps(detail, ensure_ascii=False))
