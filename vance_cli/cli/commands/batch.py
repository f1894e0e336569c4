"""``vance delegate --task-template T --items FILE|-``: one delegation per item, JSON lines out.

stdout holds exactly one JSON line per item, in item order (the delegate
``--json`` shape; a failed item adds ``error``); stderr gets warnings, a
spinner and a progress bar (terminal only) and the summary line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from vance_cli.base.errors import InputError, require_path
from vance_cli.cli import context, output
from vance_cli.cli.args import read_stdin_bytes
from vance_cli.delegate.batch import BatchRequest, start_batch
from vance_cli.delegate.batch_input import decode_items, parse_items

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
              fallback: FallbackRunner | None = None) -> int:
    """Run a batch, printing one JSON line per item and the summary; return the exit code.

    Raises:
        VanceError: as ``vance_cli.delegate.batch.start_batch`` (the boundary maps it).
    """
    run = start_batch(ws, request, progress=lambda: output.status(output.SELECTOR_SPINNER))
    for warning in run.warnings:
        output.warn(warning)
    try:
        with output.progress(run.total, PROGRESS_TEXT) as advance:
            for result in run.results(fallback):
                output.emit_json_line(result.to_json())
                advance()
    finally:
        output.info(run.summary.line())
    return run.summary.exit_code(require_match)


def command(ctx: typer.Context, *, task: str | None, template: str | None, items: str | None,
            items_format: ItemsFormat, name: str | None, title: str, steer: str | None,
            params: Mapping[str, Any], caller: str | None, dry_run: bool, require_match: bool,
            no_log: bool, fallback: FallbackRunner | None = None) -> int:
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
    return run_batch(context.workspace(ctx), request, require_match, fallback)
