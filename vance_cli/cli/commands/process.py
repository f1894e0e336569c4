"""``vance process``: processes and their turns (docs/processes.md).

This module holds the group and the commands about processes as records
(create, list, show, stop, events); ``process_turns`` holds the commands
about their turns (wait, run, steer, follow, result, messages).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vance_cli.base.errors import InputError
from vance_cli.base.wording import counted
from vance_cli.cli import context, output
from vance_cli.cli.args import parse_assignments
from vance_cli.cli.ask import confirm_removal
from vance_cli.cli.commands import process_turns
from vance_cli.cli.commands.process_view import (
    JsonFlag,
    ParamOpt,
    WaitFlag,
    YesToolsOpt,
    as_tree,
    print_event,
    print_process,
    status_label,
)
from vance_cli.delegate.request import default_name
from vance_cli.processes.events import ack_events, follow_events, pending_events, resolve_query
from vance_cli.processes.lifecycle import StopResult, reap_and_load, reap_stale, stop_process
from vance_cli.processes.model import ProcessSpec, Status
from vance_cli.processes.records import create_process, list_processes
from vance_cli.processes.removal import plan_prune, plan_rm, remove
from vance_cli.processes.views import input_waiting, list_json, llm_totals, show_json

if TYPE_CHECKING:
    from vance_cli.processes.model import Process
    from vance_cli.workspace import Workspace

app = typer.Typer(help="Create, list, inspect, wait for and stop processes; read their events.",
                  no_args_is_help=True, add_completion=False)


@app.command("create")
def create(
    ctx: typer.Context,
    recipe: Annotated[str, typer.Option("--recipe", "-r", help="Recipe name.")],
    name: Annotated[str | None, typer.Option(
        "--name", "-n", help="Process name, unique per session. Default: a slug of the steer, "
        "goal, title or recipe plus a short unique suffix (as delegate names one).")] = None,
    title: Annotated[str, typer.Option(help="Display title.")] = "",
    goal: Annotated[str, typer.Option(help="What the process is for.")] = "",
    steer: Annotated[str | None, typer.Option(help="Initial steer message.")] = None,
    param: ParamOpt = None,
    parent: Annotated[str | None, typer.Option(help="Parent process id.")] = None,
    yes_tools: YesToolsOpt = None,
    wait: WaitFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Start a process of RECIPE explicitly (no selector); its first turn runs."""
    if name is None:
        name = default_name(steer or goal or title or recipe)
    spec = ProcessSpec(recipe=recipe, name=name, title=title, goal=goal, steer=steer,
                       params=parse_assignments(param, "--param"), parent=parent,
                       yes_tools=tuple(yes_tools or ()))
    process = create_process(context.workspace(ctx), spec)
    process_turns.show_started(process.id, wait, as_json, ctx)


@app.command("list")
def list_(
    ctx: typer.Context,
    all_sessions: Annotated[bool, typer.Option(
        "--all-sessions", "-a", help="Every session of the tenant.")] = False,
    limit: Annotated[int | None, typer.Option("-n", "--limit", help="At most N, newest first.")
                     ] = None,
    status: Annotated[list[str] | None, typer.Option(
        "--status", "-s", metavar="STATUS",
        help="Only these statuses (repeatable or comma-separated): INIT, RUNNING, IDLE, "
             "BLOCKED, PAUSED, SUSPENDED, CLOSED, or 'open' for all but CLOSED.")] = None,
    flat: Annotated[bool, typer.Option(
        "--flat", "--children", help="Children as rows of their own, newest first, with a "
        "parent column (default: each under its parent).")] = False,
    as_json: JsonFlag = False,
) -> None:
    """List processes of this session, newest first; children under their parent."""
    ws = context.workspace(ctx)
    reap_stale(ws)
    processes = list_processes(ws, all_sessions=all_sessions, limit=limit,
                               statuses=parse_statuses(status or ()))
    if as_json:
        output.emit_json(list_json(ws, processes))
        return
    waiting = input_waiting(ws, processes)
    rows = [(p, 0) for p in processes] if flat else as_tree(processes)
    columns = ("id", *(("session",) if all_sessions else ()), "name",
               *(("parent",) if flat else ()), "recipe", "engine", "status", "created (UTC)")
    output.table(None, columns,
                 ((p.id, *((p.session,) if all_sessions else ()), p.name,
                   *((p.parent_process_id or "-",) if flat else ()), p.recipe, p.engine,
                   status_label(p, waiting[p.id]), p.created_at) for p, _ in rows),
                 caption=counted(len(processes), "process", "processes"),
                 shrink=("name", "parent", "session", "recipe", "engine", "created (UTC)",
                         "status"),
                 times=("created (UTC)",), tree=None if flat else ("name", [d for _, d in rows]))


def parse_statuses(values: list[str] | tuple[str, ...]) -> tuple[Status, ...]:
    """Return the statuses ``--status`` names (``open``: all but CLOSED).

    Raises:
        InputError: a value that is no status, naming the ones there are.
    """
    chosen: list[Status] = []
    for value in (v.strip() for raw in values for v in raw.split(",") if v.strip()):
        if value.lower() == "open":
            chosen += [s for s in Status if s is not Status.CLOSED]
        elif value.upper() in Status.__members__:
            chosen.append(Status[value.upper()])
        else:
            raise InputError(f"--status: unknown status '{value}' (one of "
                             f"{', '.join(s.value for s in Status)}, or open)", field="status")
    return tuple(dict.fromkeys(chosen))


YesFlag = Annotated[bool, typer.Option(
    "--yes", "-y", help="Do not ask for confirmation (needed without a terminal).")]
"""The ``--yes`` flag of the commands that remove processes."""


@app.command("rm")
def rm(
    ctx: typer.Context,
    idents: Annotated[list[str], typer.Argument(
        metavar="ID...", help="Process ids, names (this session) or unique id prefixes.")],
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Remove closed processes with their closed children, transcripts and events.

    Stop an open one first.
    """
    ws = context.workspace(ctx)
    doomed = plan_rm(ws, idents)
    _remove(ws, doomed, yes, as_json, ws.settings.lang)


@app.command("prune")
def prune(
    ctx: typer.Context,
    all_sessions: Annotated[bool, typer.Option(
        "--all-sessions", "-a", help="Every session of the tenant.")] = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Remove every closed process of this session (of the tenant with --all-sessions)."""
    ws = context.workspace(ctx)
    _remove(ws, plan_prune(ws, all_sessions), yes, as_json, ws.settings.lang)


def _remove(ws: Workspace, doomed: list[Process], yes: bool, as_json: bool, lang: str) -> None:
    """List what goes, confirm (unless --yes), remove, and report what was removed.

    An answer of no removes nothing and is no error (exit 0).
    """
    if doomed and not as_json:
        output.table(None, ("id", "name", "recipe", "status"),
                     ((p.id, p.name, p.recipe,
                       p.status.value + (f"/{p.close_reason}" if p.close_reason else ""))
                      for p in doomed), shrink=("name", "recipe"))
    declined = bool(doomed) and not yes and not confirm_removal(len(doomed), lang)
    removed = remove(ws, doomed) if doomed and not declined else []
    if as_json:
        output.emit_json({"removed": removed, "count": len(removed)})
    else:
        output.info("nothing removed" if declined else
                    f"removed {counted(len(removed), 'process', 'processes')}")


@app.command("show")
def show(
    ctx: typer.Context,
    ident: Annotated[str, typer.Argument(metavar="ID", help="Process id or unique prefix.")],
    as_json: JsonFlag = False,
) -> None:
    """Show one process."""
    ws = context.workspace(ctx)
    process = reap_and_load(ws, ident)
    if as_json:
        output.emit_json(show_json(ws, process))
    else:
        print_process(process, llm_totals(ws, process), input_waiting(ws, [process])[process.id],
                      engines=ws.engines)


@app.command("stop")
def stop(
    ctx: typer.Context,
    idents: Annotated[list[str], typer.Argument(
        metavar="ID...", help="Process ids, names (this session) or unique id prefixes.")],
    as_json: Annotated[bool, typer.Option(
        "--json", help="One JSON document; a list of them for several ids.")] = False,
) -> None:
    """Close processes as STOPPED and send their workers SIGTERM (no-op when already CLOSED).

    One line per process says what happened.
    """
    ws = context.workspace(ctx)
    results = [stop_process(ws, ident) for ident in dict.fromkeys(idents)]
    if as_json:
        documents = [r.to_json() for r in results]
        output.emit_json(documents[0] if len(documents) == 1 else documents)
        return
    for result in results:
        output.say(stop_line(result))


def stop_line(result: StopResult) -> str:
    """Return the one line ``process stop`` prints about one process."""
    process = result.process
    who = f"{process.id} ({process.name})"
    if not result.stopped:
        return f"{who} was already CLOSED/{process.close_reason}; nothing to stop"
    signalled = (f"; sent SIGTERM to worker pid {result.signalled_pid}"
                 if result.signalled_pid is not None else "")
    return f"stopped {who}{signalled}"


@app.command("events")
def events(
    ctx: typer.Context,
    for_: Annotated[str | None, typer.Option(
        "--for", metavar="PID",
        help="Recipient process id or prefix. Default: every process of this session.")] = None,
    follow: Annotated[bool, typer.Option(
        "--follow", "-f", help="Keep printing new events until Ctrl-C.")] = False,
    ack: Annotated[bool, typer.Option(
        "--ack", help="Mark the events shown as consumed (listing alone does not).")] = False,
    show_all: Annotated[bool, typer.Option(
        "--all", help="Include events already consumed.")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="One JSON list; with --follow, one JSON object per line.")] = False,
) -> None:
    """Show the pending queue: events for a process, e.g. a child that closed.

    Listing does not consume; --ack marks what was shown as consumed.
    """
    ws = context.workspace(ctx)
    query = resolve_query(ws, for_, include_consumed=show_all)
    if follow:
        for event in follow_events(ws, query, ack=ack):
            output.emit_json_line(event.to_json()) if as_json else print_event(event)
        return
    found = pending_events(ws, query)
    if as_json:
        output.emit_json([e.to_json() for e in found])
    elif not found:
        output.info("no pending events" if not show_all else "no events")
    for event in found if not as_json else ():
        print_event(event)
    if ack:
        ack_events(ws, [e.id for e in found])


app.command("wait")(process_turns.wait)
app.command("run")(process_turns.run)
app.command("steer")(process_turns.steer)
app.command("follow")(process_turns.follow)
app.command("result")(process_turns.result)
app.command("messages")(process_turns.messages)
