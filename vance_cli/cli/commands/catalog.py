"""``vance catalog show | validate | reload``: the engine catalog (docs/catalog.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vance_cli.base.errors import InputError
from vance_cli.base.wording import counted
from vance_cli.catalog.admin import catalog_status, reload_catalog, validate_catalog_file
from vance_cli.cli import context, output

if TYPE_CHECKING:
    from vance_cli.catalog.admin import CatalogCheck

app = typer.Typer(help="Show, validate and reload the engine catalog.",
                  no_args_is_help=True, add_completion=False)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
AllowOrphans = Annotated[bool, typer.Option(
    "--allow-orphans",
    help="Accept a catalog that lacks an engine some recipe names (listed as a warning).")]


@app.command("show")
def show(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Show the active engine catalog, which file it came from and since when."""
    ws = context.workspace(ctx)
    status = catalog_status(ws)
    if status.active.warning:
        output.warn(status.active.warning)
    if as_json:
        output.emit_json(status.to_json())
        return
    catalog = status.active.catalog
    since = f" since {catalog.activated_at}" if catalog.activated_at else " (default)"
    output.table(None, ("engine", "purpose", "when to use", "not for"),
                 ((e.name, e.purpose, e.when_to_use, e.not_for)
                  for e in catalog.engines.values()),
                 caption=f"active catalog: {catalog.source}{since}",
                 text=("purpose", "when to use", "not for"))
    for name in status.without_code:
        output.note(f"engine '{name}' has no code here (no bundled engine, no installed plugin):"
                    " its processes cannot run")
    if status.reload_pending:
        setting = "catalog.file" if ws.settings.catalog_file else "the shared catalog"
        output.info(f"{setting} {status.configured_file} differs from the active catalog;"
                    " run 'vance catalog reload' to activate it")


def _report_problems(check: CatalogCheck) -> None:
    for problem in check.problems:
        output.error(str(problem))
    for orphan in check.orphans:
        line = (f"recipe '{orphan.name}' ({orphan.layer.value}, {orphan.path}) uses engine"
                f" '{orphan.engine}', which {check.file} does not have")
        output.warn(line) if check.allow_orphans else output.error(line)
    if check.orphans and not check.allow_orphans:
        output.info(f"{counted(len(check.orphans), 'recipe')} would lose"
                    f" {'its' if len(check.orphans) == 1 else 'their'} engine; add the engine,"
                    " or pass --allow-orphans to accept that")


@app.command("validate")
def validate(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="Catalog YAML file to check.")],
    allow_orphans: AllowOrphans = False,
    as_json: JsonFlag = False,
) -> None:
    """Check a catalog file without activating it (exit 0 valid, 1 invalid)."""
    check = validate_catalog_file(context.workspace(ctx), file, allow_orphans=allow_orphans)
    if as_json:
        output.emit_json(check.to_json())
    else:
        _report_problems(check)
        if check.ok and check.catalog is not None:
            output.say(f"{check.file}: valid, {counted(len(check.catalog.names), 'engine')}"
                       f" ({', '.join(check.catalog.names)})")
    if not check.ok:
        raise typer.Exit(1)


@app.command("reload")
def reload(
    ctx: typer.Context,
    file: Annotated[str | None, typer.Option(
        "--file", "-f", metavar="FILE",
        help="Catalog file (default: catalog.file or VANCE_ENGINE_CATALOG, else"
             " catalog/engines.yaml of documents.shared).")] = None,
    bundled: Annotated[bool, typer.Option(
        "--bundled", help="Go back to the catalog shipped with vance.")] = False,
    allow_orphans: AllowOrphans = False,
    as_json: JsonFlag = False,
) -> None:
    """Validate a catalog file and make it the active catalog, atomically.

    On any problem nothing changes: the previous catalog stays active, the
    problems are printed (file:line: problem) and the exit code is 1.
    """
    if bundled and file:
        raise InputError("--file and --bundled exclude each other")
    result = reload_catalog(context.workspace(ctx), file, bundled=bundled,
                            allow_orphans=allow_orphans)
    if as_json:
        output.emit_json(result.to_json())
    else:
        _report_problems(result.check)
    if not result.activated:
        if not as_json:
            output.info(f"catalog not reloaded; still active: {result.active.source}"
                        + (f" (since {result.active.activated_at})"
                           if result.active.activated_at else ""))
        raise typer.Exit(1)
    if not as_json:
        output.say(f"activated {result.active.source}:"
                   f" {counted(len(result.active.names), 'engine')}"
                   f" ({', '.join(result.active.names)}) at {result.active.activated_at}")
