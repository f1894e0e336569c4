"""``vance process create | list | show | wait | stop | events``: processes (docs/processes.md)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Annotated

import typer

from vance_cli.base.errors import EXIT_RUNTIME, EXIT_TIMEOUT
from vance_cli.base.wording import counted
from vance_cli.cli import context, output
from vance_cli.cli.args import parse_assignments
from vance_cli.processes.events import ack_events, follow_events, pending_events, resolve_query
from vance_cli.processes.lifecycle import reap_and_load, reap_stale, stop_process, wait_process
from vance_cli.processes.model import ProcessSpec
from vance_cli.processes.records import create_process, list_processes

if TYPE_CHECKING:
    from vance_cli.processes.events import Event
    from vance_cli.processes.model import Process

app = typer.Typer(help="Create, list, inspect, wait for and stop processes; read their events.",
                  no_args_is_help=True, add_completion=False)
IdArg = Annotated[str, typer.Argument(metavar="ID", help="Process id or unique prefix.")]

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
ParamOpt = Annotated[list[str] | None, typer.Option(
    "--param", "-p", help="KEY=VALUE (string) or KEY:=JSON; repeatable; overlays recipe params.")]


def print_process(process: Process) -> None:
    """Print one process for people (used by create, show and delegate)."""
    data = process.to_json()
    pairs = [("id", data["id"]), ("name", data["name"]), ("recipe", data["recipe"]),
             ("engine", data["engine"]), ("status", data["status"])]
    if data["closeReason"]:
        pairs.append(("close reason", data["closeReason"]))
    if data["parentProcessId"]:
        pairs.append(("parent", data["parentProcessId"]))
    pairs += [("session", data["session"]), ("title", data["title"]),
              ("created", data["createdAt"])]
    if data["params"]:
        pairs.append(("params", json.dumps(data["params"], ensure_ascii=False)))
    if data.get("result"):
        pairs.append(("result", json.dumps(data["result"], ensure_ascii=False)))
    output.fields(pairs)


@app.command("create")
def create(
    ctx: typer.Context,
    recipe: Annotated[str, typer.Option("--recipe", "-r", help="Recipe name.")],
    name: Annotated[str, typer.Option("--name", "-n", help="Process name, unique per session.")],
    title: Annotated[str, typer.Option(help="Display title.")] = "",
    goal: Annotated[str, typer.Option(help="What the process is for.")] = "",
    steer: Annotated[str | None, typer.Option(help="Initial steer message.")] = None,
    param: ParamOpt = None,
    parent: Annotated[str | None, typer.Option(help="Parent process id.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Start a process of RECIPE explicitly (no selector)."""
    spec = ProcessSpec(recipe=recipe, name=name, title=title, goal=goal, steer=steer,
                       params=parse_assignments(param, "--param"), parent=parent)
    process = create_process(context.workspace(ctx), spec)
    if as_json:
        output.emit_json(process.to_json())
    else:
        print_process(process)


@app.command("list")
def list_(
    ctx: typer.Context,
    all_sessions: Annotated[bool, typer.Option(
        "--all-sessions", "-a", help="Every session of the tenant.")] = False,
    limit: Annotated[int | None, typer.Option("-n", "--limit", help="At most N, newest first.")
                     ] = None,
    as_json: JsonFlag = False,
) -> None:
    """List processes of this session, newest first."""
    ws = context.workspace(ctx)
    reap_stale(ws)
    processes = list_processes(ws, all_sessions=all_sessions, limit=limit)
    if as_json:
        output.emit_json([p.to_json() for p in processes])
        return
    columns = ("id", *(("session",) if all_sessions else ()), "name", "recipe", "engine",
               "status", "created (UTC)")
    output.table(None, columns,
                 ((p.id, *((p.session,) if all_sessions else ()), p.name, p.recipe, p.engine,
                   p.status.value + (f"/{p.close_reason}" if p.close_reason else ""),
                   p.created_at) for p in processes),
                 caption=counted(len(processes), "process", "processes"),
                 shrink=("name", "session", "recipe"), times=("created (UTC)",))


@app.command("show")
def show(
    ctx: typer.Context,
    ident: Annotated[str, typer.Argument(metavar="ID", help="Process id or unique prefix.")],
    as_json: JsonFlag = False,
) -> None:
    """Show one process."""
    process = reap_and_load(context.workspace(ctx), ident)
    if as_json:
        output.emit_json(process.to_json())
    else:
        print_process(process)


def _wait_seconds(value: float | None) -> float | None:
    """``--timeout`` of ``wait``: a finite number of seconds, 0 or more (0: look once)."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise typer.BadParameter(f"must be 0 or more seconds (a finite number), not {value:g}")
    return value


@app.command("wait")
def wait(
    ctx: typer.Context,
    ident: IdArg,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", "-t", metavar="S", callback=_wait_seconds,
        help="Give up after S seconds (exit 124). Default: wait until it closes.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Wait until a process is CLOSED: exit 0 if DONE, 1 if closed otherwise, 124 on timeout."""
    with output.status(f"waiting for {ident}"):
        result = wait_process(context.workspace(ctx), ident, timeout)
    if as_json:
        output.emit_json(result.to_json())
    else:
        print_process(result.process)
    if result.timed_out:
        output.info(f"timed out after {result.waited:.1f} s;"
                    f" the process is still {result.process.status.value}")
        raise typer.Exit(EXIT_TIMEOUT)
    if not result.done:
        raise typer.Exit(EXIT_RUNTIME)


@app.command("stop")
def stop(ctx: typer.Context, ident: IdArg, as_json: JsonFlag = False) -> None:
    """Close a process as STOPPED and send its worker SIGTERM (no-op when already CLOSED)."""
    result = stop_process(context.workspace(ctx), ident)
    if as_json:
        output.emit_json(result.to_json())
    else:
        print_process(result.process)
    process = result.process
    if not result.stopped:
        output.info(f"process {process.id} was already CLOSED/{process.close_reason};"
                    " nothing to stop")
    elif result.signalled_pid is not None:
        output.info(f"sent SIGTERM to worker pid {result.signalled_pid}")


def print_event(event: Event) -> None:
    """Print one event for people: id, time, kind, what it is about, then its data."""
    data = dict(event.payload)
    if event.kind == "child_closed":
        about = (f"{data.get('name')} ({event.source}) closed {data.get('closeReason')}"
                 f" — for {event.recipient}")
        detail = data.get("result")
    else:
        about = f"from {event.source or '-'} for {event.recipient}"
        detail = data
    state = "" if event.consumed_at is None else f" [consumed {event.consumed_at}]"
    output.say(f"#{event.id} {event.created_at} {event.kind}: {about}{state}")
    if detail:
        output.say("    " + json.dumps(detail, ensure_ascii=False))


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
