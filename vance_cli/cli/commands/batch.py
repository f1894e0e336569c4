"""``vance delegate --task-template T --items FILE|-``: one delegation per item, JSON lines out.

stdout holds exactly one JSON line per item, in item order (the delegate
``--json`` shape; a failed item adds ``error``); stderr gets warnings, a
spinner and a progress bar (terminal only) and the summary line.

Once every item is decided, the started processes' first turns run in
background workers (``processes.start.start_all``: at most ``maxParallel`` of them);
with ``--wait`` the command waits until every one of those turns settled and
writes the lines afterwards, each with its process as it settled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from vance_cli.base.errors import EXIT_NO_TURN, EXIT_OK, EXIT_RUNTIME, InputError, require_path
from vance_cli.base.wording import counted
from vance_cli.cli import context, output
from vance_cli.cli.args import read_stdin_bytes
from vance_cli.delegate.batch import BatchRequest, ItemResult, start_batch
from vance_cli.delegate.batch_input import decode_items, parse_items
from vance_cli.processes.lifecycle import turn_failed, wait_process

if TYPE_CHECKING:
    from vance_cli.delegate.batch_input import Item
    from vance_cli.delegate.flow import FallbackRunner
    from vance_cli.delegate.request import ItemsFormat
    from vance_cli.workspace import Workspace

PROGRESS_TEXT = "Delegating"
"""Label of the progress bar (stderr, terminal only)."""


def read_items(source: str, fmt: ItemsFormat) -> list[Item]:
    """Read and split the items: the file ``source``, or stdin when it is ``-``.

    Raises:
        InputError: the file cannot be read or is not UTF-8.
    """
    if source == "-":

        data = read_stdin_bytes(
            "--items", "Reading items from stdin, one per line; end them with Ctrl-D.")
    else:
        require_path(source, "items file")
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read items file '{source}': {exc.strerror or exc}",
                             field="items") from None
    return parse_items(decode_items(data, source), fmt)


def run_batch(ws: Workspace, request: BatchRequest, require_match: bool = False,
              fallback: FallbackRunner | None = None, wait: bool = False) -> int:
    """Run a batch, printing one JSON line per item and the summary; return the exit code.

    Args:
        ws: the command's workspace.
        request: template, items and process options.
        require_match: exit 3 when an item ended NONE.
        fallback: the Slartibartfast runner for items decided one by one.
        wait: wait for every started turn; the lines come afterwards.

    Returns:
        The exit code: as the summary's; with ``wait``, 1 when a turn failed, else 75 when
        one could not run (docs/exit-codes.md).

    Raises:
        VanceError: as ``vance_cli.delegate.batch.start_batch`` (the boundary maps it).
    """
    run = start_batch(ws, request, progress=lambda: output.status(output.SELECTOR_SPINNER))
    for warning in run.warnings:
        output.warn(warning)
    results: list[ItemResult] = []
    try:
        with output.progress(run.total, PROGRESS_TEXT) as advance:
            for result in run.results(fallback):
                results.append(result)
                if not wait:
                    output.emit_json_line(result.to_json())
                advance()
    finally:
        output.info(run.summary.line())
    failed, no_turn = _start_turns(ws, results, wait)
    code = run.summary.exit_code(require_match)
    return code or (EXIT_RUNTIME if failed else EXIT_NO_TURN if no_turn else EXIT_OK)


def _start_turns(ws: Workspace, results: list[ItemResult], wait: bool) -> tuple[int, int]:
    """Start the items' first turns; with ``wait``, wait and print the lines.

    Returns:
        ``(failed, could not run)``: counts of the started processes' turns (``wait`` only).
    """
    from vance_cli.processes.start import start_all  # deferred: a dry run starts nothing

    ids = [r.result.started.id for r in results
           if r.result is not None and r.result.started is not None]
    started = {s.process.id: s for s in start_all(ws, ids)} if ids else {}
    workers = {s.worker_pid for s in started.values() if s.how == "background"}
    if ws.settings.team and workers:
        output.info(f"queued {counted(len(started), 'turn')} for the team's workers")
    elif workers:
        output.info(f"started {counted(len(started), 'turn')} in"
                    f" {counted(len(workers), 'background worker')}")
    if not wait:
        return 0, 0
    failed = no_turn = 0
    with output.status(f"waiting for {counted(len(started), 'turn')}"):
        for item in results:
            process = item.result.started if item.result is not None else None
            if item.result is not None and process is not None and process.id in started:
                how = started[process.id].how
                settled = wait_process(ws, process.id).process
                item = replace(item, result=item.result.with_process(settled))  # noqa: PLW2901
                failed += turn_failed(settled)
                no_turn += how != "background"
            output.emit_json_line(item.to_json())
    return failed, no_turn


def command(ctx: typer.Context, *, task: str | None, template: str | None, items: str | None,
            items_format: ItemsFormat, name: str | None, title: str, steer: str | None,
            params: Mapping[str, Any], caller: str | None, dry_run: bool, require_match: bool,
            no_log: bool, fallback: FallbackRunner | None = None, wait: bool = False) -> int:
    """Check the batch options, run the batch, and return the exit code."""
    if template is None:
        unused = "; --task is not used in batch mode" if task is not None else ""
        raise typer.BadParameter(f"needs --task-template T (the task for each item){unused}",
                                 param_hint="--items")
    if task is not None:
        raise typer.BadParameter("not used in batch mode: --task-template T gives the task "
                                 "for each item of --items", param_hint="--task")
    if items is None:
        raise typer.BadParameter("needs --items FILE|- (the batch's items)",
                                 param_hint="--task-template")
    request = BatchRequest(template=template, items=read_items(items, items_format),
                           name_prefix=name, title=title, steer=steer, params=params,
                           caller=caller, dry_run=dry_run, log_task=not no_log)
    return run_batch(context.workspace(ctx), request, require_match, fallback, wait)
