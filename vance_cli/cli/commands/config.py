"""``vance config show | get | path | set | unset``."""

from __future__ import annotations

from typing import Annotated

import typer

from vance_cli.base.config import mask_secret, set_config_value, spec_for, unset_config_value
from vance_cli.cli import context, output

app = typer.Typer(help="Show and change settings (config file, env, flags).",
                  no_args_is_help=True, add_completion=False)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]


@app.command("show")
def show(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Show every setting, its value and where it came from (secrets masked)."""
    items = context.settings(ctx).display_items()
    if as_json:
        output.emit_json({k: {"value": v, "origin": o} for k, v, o in items})
        return
    output.table(None, ("key", "value", "origin"), items, text=("value",))


KeyArg = Annotated[str, typer.Argument(metavar="KEY", help="Dotted key, e.g. llm.model.")]


@app.command("get")
def get(ctx: typer.Context, key: KeyArg, as_json: JsonFlag = False) -> None:
    """Print the value of KEY (secrets masked); its origin goes to stderr, or into --json."""
    spec_for(key)  # an unknown key: did you mean, before the settings are read
    value, origin = next((v, o) for k, v, o in context.settings(ctx).display_items() if k == key)
    if as_json:
        output.emit_json({"key": key, "value": value, "origin": origin})
        return
    output.emit_text(output.display(value))
    output.note(f"{key}: from {origin}")


@app.command("path")
def path(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Show the config file and the data and state folders."""
    paths = context.settings(ctx).paths
    data = {"config": str(paths.config_file), "data": str(paths.data_dir),
            "state": str(paths.state_dir), "database": str(paths.db_file)}
    if as_json:
        output.emit_json(data)
        return
    output.emit_text(str(paths.config_file))
    output.info(f"data: {paths.data_dir}\nstate: {paths.state_dir}")


@app.command("set")
def set_(
    ctx: typer.Context,
    key: KeyArg,
    value: Annotated[str, typer.Argument(
        metavar="VALUE", help="New value; an empty string removes the key.")],
) -> None:
    """Write KEY=VALUE into the config file (checked first; the file is replaced atomically)."""
    written = set_config_value(context.paths(ctx), key, value)
    shown = mask_secret(str(written)) if spec_for(key).secret and written else written
    output.info(f"{key} = {shown}" if written is not None else f"{key} removed")


@app.command("unset")
def unset(ctx: typer.Context, key: KeyArg) -> None:
    """Remove KEY from the config file: the environment or the default decides again."""
    removed = unset_config_value(context.paths(ctx), key)
    output.info(f"{key} removed" if removed else f"{key} is not set in the config file")
