"""``vance recipe list | show``: the recipe inventory as the selector sees it."""

from __future__ import annotations

from typing import Annotated

import typer

from vance_cli.base.wording import counted
from vance_cli.cli import context, output
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
        output.emit_json([
            {"name": r.name, "engine": r.engine, "title": r.title, "description": r.description,
             "layer": r.layer.value, "hidden": r.hidden}
            for r in recipes
        ])
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
    """Show one recipe: engine, description, params, triggers and where it comes from."""
    recipe = find_recipe(context.workspace(ctx), name)
    if as_json:
        output.emit_json(recipe.to_json())
        return
    data = recipe.to_json()
    output.fields([
        ("name", data["name"]), ("engine", data["engine"]), ("title", data["title"]),
        ("description", data["description"]), ("params", data["params"]),
        ("tags", ", ".join(data["tags"])), ("keywords", ", ".join(data["triggers"]["keywords"])),
        ("internal", data["internal"]), ("layer", data["layer"]), ("path", data["path"]),
    ])
