"""``vance process wait | run | steer | follow | result | messages``: a process's turns.

The functions are registered on the ``process`` group by ``process.py``; each
parses its options, calls one core function and prints (docs/processes.md
"Turns").
"""

from __future__ import annotations

import json
import math
import time
from typing import Annotated

import typer

from vance_cli.base.errors import EXIT_NO_TURN, EXIT_RUNTIME, EXIT_TIMEOUT
from vance_cli.cli import context, output
from vance_cli.cli.commands.process_view import (
    IdArg,
    IdsArg,
    JsonFlag,
    WaitFlag,
    YesToolsOpt,
    print_process,
    process_pairs,
)
from vance_cli.cli.run import (
    TerminalSink,
    exit_code,
    run_here,
    run_started,
    sink_for,
    state_of,
    wait_exit_code,
    work_pairs,
)
from vance_cli.processes.follow import follow_output
from vance_cli.processes.inputs import Message, submit, transcript
from vance_cli.processes.lifecycle import reap_and_load, wait_process
from vance_cli.processes.model import StartHow, Status
from vance_cli.processes.start import Started, run_pending
from vance_cli.processes.views import input_waiting, message_number, result_json, steer_json


def _wait_seconds(value: float | None) -> float | None:
    """``--timeout`` of ``wait``: a finite number of seconds, 0 or more (0: look once)."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise typer.BadParameter(f"must be 0 or more seconds (a finite number), not {value:g}")
    return value


def wait(
    ctx: typer.Context,
    idents: IdsArg,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", "-t", metavar="S", callback=_wait_seconds,
        help="Give up after S seconds (exit 124). Default: wait until the turn settles.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Wait until the processes' turns settle: exit 0 settled, 1 failed, 124 timed out.

    With several ids it waits for each in turn, ``--timeout`` counting for all;
    ``--json`` prints a list then.
    """
    ws = context.workspace(ctx)
    deadline = None if timeout is None else time.monotonic() + timeout
    results = []
    with output.status(f"waiting for {' '.join(idents)}"):
        for ident in idents:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            results.append(wait_process(ws, ident, left))
    if as_json:
        documents = [r.to_json() for r in results]
        output.emit_json(documents[0] if len(idents) == 1 else documents)
    for result in results if not as_json else ():
        print_process(result.process, engines=ws.engines)
    for result in results:
        if result.timed_out:
            output.info(f"timed out after {result.waited:.1f} s; process {result.process.id}"
                        f" is still {result.process.status.value}")
    if any(r.timed_out for r in results):
        raise typer.Exit(EXIT_TIMEOUT)
    if any(r.failed for r in results):
        raise typer.Exit(EXIT_RUNTIME)
    waiting = input_waiting(ws, [r.process for r in results])
    unanswered = [r.process for r in results if waiting[r.process.id] and
                  r.process.status not in (Status.RUNNING, Status.CLOSED)]
    for process in unanswered:
        output.info(f"process {process.id} is {process.label} with its input waiting: no turn"
                    f" could run ('vance process run {process.id}' runs it)")
    if unanswered:
        raise typer.Exit(EXIT_NO_TURN)


def run(
    ctx: typer.Context,
    idents: IdsArg,
    yes_tools: YesToolsOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Run the processes' pending turns here, one after the other (retries STALE ones).

    E.g. once an LLM is configured (before: exit 75, as ``--wait``). ``--json``
    prints the process, or a list of them for several ids.
    """
    ws = context.workspace(ctx)
    found = [reap_and_load(ws, ident) for ident in idents]  # every id checked before a turn
    ids = [p.id for p in found]
    no_llm = {} if ws.settings.llm_configured else input_waiting(ws, found)
    documents, codes = [], []
    for process in found:
        process_id = process.id
        if not as_json:  # the --wait shape: what runs (stderr), the answer (stdout)
            output.fields([("process", f"{process.id} ({process.name}, {state_of(process)})")],
                          err=True)
        if no_llm.get(process_id):  # no turn can run: said and coded as --wait does
            if not as_json:
                output.fields(work_pairs(Started(process, StartHow.WAITING_FOR_LLM)), err=True)
            documents.append(process.to_json())
            codes.append(EXIT_NO_TURN)
            continue
        sink = sink_for(as_json, yes_tools=tuple(yes_tools or ()))
        try:
            report = run_pending(ws, process_id, sink=sink)
            if isinstance(sink, TerminalSink):
                sink.finish(report.reply)
        finally:
            if isinstance(sink, TerminalSink):
                sink.end()
        documents.append(report.process.to_json())
        codes.append(exit_code(report))
        if as_json:
            continue
        if report.failed:
            output.error(f"process {report.process.id} failed: {report.reason}")
        elif report.number is None:
            output.info(f"nothing to run: process {report.process.id} has no waiting input")
    if as_json:
        output.emit_json(documents[0] if len(ids) == 1 else documents)
    raise typer.Exit(max(codes))


def steer(
    ctx: typer.Context,
    ident: IdArg,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The message for the process.")],
    yes_tools: YesToolsOpt = None,
    wait: WaitFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Send the process a message; its next turn runs (background, or here with --wait).

    A process BLOCKED on a tool call waiting for approval takes ``yes`` or ``no``.
    """
    ws = context.workspace(ctx)
    process_id = reap_and_load(ws, ident).id
    message = submit(ws, process_id, text, yes_tools=tuple(yes_tools or ()))
    queued = ("queued", f"message #{message_number(ws, process_id, message)} of {process_id}")
    if wait and not as_json:
        done = run_here(ws, process_id, [queued])
        raise typer.Exit(wait_exit_code(done))
    started = run_started(ws, process_id, wait=wait, as_json=as_json)
    if as_json:
        output.emit_json(steer_json(message, started.process))
    else:  # no turn ran here: say where it went
        output.fields([queued, *work_pairs(started)])
    raise typer.Exit(wait_exit_code(started) if wait else exit_code(started.report))


def follow(ctx: typer.Context, ident: IdArg) -> None:
    """Show the live output of the process's running turn until it settles (1: it failed)."""
    ws = context.workspace(ctx)
    sink = TerminalSink(live=True)  # the live output, as it comes, on a pipe too
    followed = follow_output(ws, reap_and_load(ws, ident), sink.text)
    process = followed.process
    if not followed.shown and process.result:  # nothing was running: the latest result
        sink.text(process.result)
    sink.end()
    failed = process.status is Status.CLOSED and process.close_reason != "DONE"
    if failed:
        output.error(f"process {process.id} is {process.status.value}/{process.close_reason}:"
                     f" {(process.outcome or {}).get('reason', '')}".rstrip(": "))
    raise typer.Exit(EXIT_RUNTIME if failed else 0)


def result(ctx: typer.Context, ident: IdArg, as_json: JsonFlag = False) -> None:
    """Print the process's latest result (exit 1 when it has none yet)."""
    process = reap_and_load(context.workspace(ctx), ident)
    if as_json:
        output.emit_json(result_json(process))
    elif process.result:
        output.emit_text(process.result)
    if not process.result:
        state = process.status.value + (f"/{process.close_reason}" if process.close_reason
                                        else "")
        output.info(f"process {process.id} has no result yet ({state})")
        raise typer.Exit(EXIT_RUNTIME)


def messages(ctx: typer.Context, ident: IdArg, as_json: JsonFlag = False) -> None:
    """Show the process's transcript: inputs, replies, events and notes, oldest first."""
    ws = context.workspace(ctx)
    process = reap_and_load(ws, ident)
    found = transcript(ws, process.id)
    if as_json:
        output.emit_json([m.to_json() for m in found])
        return
    output.table(None, ("#", "turn", "role", "kind", "time", "model", "tokens", "text"),
                 ((number, m.turn if m.turn is not None else "pending", m.role, m.kind,
                   m.created_at,
                   m.model, f"{m.tokens_in or 0}/{m.tokens_out or 0}" if m.model else "",
                   tool_text(m) if m.role == "tool" else m.content)
                  for number, m in enumerate(found, 1)),
                 caption=f"{len(found)} messages of {process.id}", text=("text",),
                 times=("time",))


def tool_text(message: Message) -> str:
    """Return a tool call's row text: the call, the gate's decision, the time, the result."""
    meta = message.meta
    args = json.dumps(meta.get("arguments") or {}, ensure_ascii=False)
    state = "ok" if meta.get("ok") else ("failed" if meta.get("allowed") else "refused")
    return (f"{meta.get('tool')} {args} → {state} ({meta.get('decision')},"
            f" {meta.get('ms', 0):.0f} ms{', cut' if meta.get('cut') else ''})\n"
            f"{message.content}")


def show_started(process_id: str, wait: bool, as_json: bool, ws_ctx: typer.Context) -> None:
    """Run a freshly created process's first turn as ``create --wait`` asks (shared helper).

    With ``--wait`` (not ``--json``) the process's lines come first on stderr,
    then the answer alone on stdout (``cli.run.run_here``).
    """
    ws = context.workspace(ws_ctx)
    if wait and not as_json:
        done = run_here(ws, process_id, process_pairs(reap_and_load(ws, process_id),
                                                       engines=ws.engines))
        raise typer.Exit(wait_exit_code(done))
    started = run_started(ws, process_id, wait=wait, as_json=as_json)
    if as_json:
        output.emit_json(started.process.to_json())
    else:
        print_process(started.process, engines=ws.engines)
        output.fields(work_pairs(started))
    raise typer.Exit(wait_exit_code(started) if wait else exit_code(started.report))
