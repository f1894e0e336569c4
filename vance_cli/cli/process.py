"""``vance process create | list | show``: processes in the state database (DESIGN.md §4)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vance_cli.cli import context, output

if TYPE_CHECKING:
    from vance_cli.processes import Process

app = typer.Typer(help="Create, list and inspect processes.", no_args_is_help=True)

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
        pairs.append(("params", data["params"]))
    if data.get("result"):
        pairs.append(("result", data["result"]))
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
    from vance_cli.cli.args import parse_assignments
    from vance_cli.processes import ProcessSpec, create_process

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
    from vance_cli.processes import list_processes

    processes = list_processes(context.workspace(ctx), all_sessions=all_sessions, limit=limit)
    if as_json:
        output.emit_json([p.to_json() for p in processes])
        return
    output.table(None, ("id", "name", "recipe", "engine", "status", "created"),
                 ((p.id, p.name, p.recipe, p.engine,
                   p.status.value + (f"/{p.close_reason}" if p.close_reason else ""),
                   p.created_at) for p in processes),
                 caption=f"{len(processes)} processes")


@app.command("show")
def show(
    ctx: typer.Context,
    ident: Annotated[str, typer.Argument(metavar="ID", help="Process id or unique prefix.")],
    as_json: JsonFlag = False,
) -> None:
    """Show one process."""
    from vance_cli.processes import get_process

    process = get_process(context.workspace(ctx), ident)
    if as_json:
        output.emit_json(process.to_json())
    else:
        print_process(process)
