"""``vance recipe list | show | promote``: the recipe inventory as the selector sees it."""

from __future__ import annotations

from typing import Annotated

import typer

from vance_cli.base import yamlio
from vance_cli.base.wording import counted
from vance_cli.cli import context, output
from vance_cli.recipes import params as engine_params
from vance_cli.recipes import promote as promoting
from vance_cli.recipes.loader import find_recipe, load_recipes

app = typer.Typer(help="List and show recipes (the selector's inventory).",
                  no_args_is_help=True, add_completion=False)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]


@app.command("list")
def list_(
    ctx: typer.Context,
    show_all: Annotated[bool, typer.Option(
        "--all", help="Include hidden recipes: '_' names (generated _slart/…) and internal ones.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """List the recipes the selector chooses from (with --all, every recipe)."""
    ws = context.workspace(ctx)
    found = load_recipes(ws)
    engines = ws.catalog().names
    for line in found.left_out(engines):
        output.warn(line)
    recipes = list(found.recipes.values()) if show_all else found.inventory(engines)
    if as_json:
        output.emit_json([r.summary_json() for r in recipes])
        return
    output.table(None, ("name", "engine", "layer", "description"),
                 ((r.name, r.engine, r.layer.value, r.description) for r in recipes),
                 caption=counted(len(recipes), "recipe"), one_line=("description",))


@app.command("show")
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Recipe name, e.g. essay-pipeline.")],
    as_json: JsonFlag = False,
) -> None:
    """Show one recipe: engine, description, params with defaults, triggers, where it is."""
    ws = context.workspace(ctx)
    recipe = find_recipe(ws, name)
    data = recipe.to_json()
    data["engineParams"] = engine_params.effective(ws.engines.params_model(recipe.engine),
                                                   recipe.params)
    if as_json:
        output.emit_json(data)
        return
    shown = yamlio.dumps(data["engineParams"]).rstrip() if data["engineParams"] else ""
    output.fields([
        ("name", data["name"]), ("engine", data["engine"]), ("title", data["title"]),
        ("description", data["description"]),
        ("params", "".join(f"\n  {line}" for line in shown.splitlines()) or "none"),
        ("tags", ", ".join(data["tags"])), ("keywords", ", ".join(data["triggers"]["keywords"])),
        ("internal", data["internal"]), ("layer", data["layer"]), ("path", data["path"]),
    ])


@app.command("promote")
def promote(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(
        metavar="SOURCE", help="The recipe to copy, e.g. _slart/<run>/<name> (a generated one).")],
    name: Annotated[str, typer.Argument(metavar="NAME", help="The new recipe's name.")],
    force: Annotated[bool, typer.Option(
        "--force", help="Replace a recipe of that name (or shadow a bundled one).")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Copy a (generated) recipe into the project as NAME, checked; the selector sees it."""
    done = promoting.promote(context.workspace(ctx), source, name, force=force)
    if as_json:
        output.emit_json(done.to_json())
        return
    output.say(f"promoted {done.source.name} → {done.recipe.name} ({done.recipe.engine}):"
               f" {done.recipe.path}")
    if done.replaced:
        output.note(f"it replaces or shadows {done.replaced}")
