"""``vance recipe promote``: a generated recipe becomes a recipe of the project.

Rules (docs/documents.md "Promote"):
- The source is any recipe the cascade finds, typically one Slartibartfast
  wrote (``_slart/<run>/<name>``, hidden from the selector). It is checked
  like any recipe (the recipe schema and its engine's params) before
  anything is written.
- The new name is one segment (no ``/``) that does not start with ``_`` or
  ``.``; the copy goes to the write folder's ``recipes/<name>.yaml`` (the
  project layer, else the tenant layer), written atomically, the source's
  text kept as written below one comment line that says where it came from.
- A name some layer already has is refused unless ``force``: the copy would
  replace the project's recipe or shadow a bundled one.
- From then on the selector sees it like every visible recipe.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from vance_cli.base import files, yamlio
from vance_cli.base.clock import utc_now
from vance_cli.base.errors import DocumentError, InputError
from vance_cli.base.files import atomic_write_text
from vance_cli.base.names import check_name
from vance_cli.base.records import frozen
from vance_cli.documents.cascade import EXTENSIONS, Kind
from vance_cli.recipes.loader import Recipe, find_recipe, parse_recipe

if TYPE_CHECKING:
    from vance_cli.workspace import Workspace


NAME_MAX = 64
"""Longest name of a promoted recipe, in characters (as Slartibartfast's names)."""

DOCUMENT_MODE = 0o644
"""Permissions of the written recipe: a document others in the project may read."""


@frozen
class Promoted:
    """What ``promote`` wrote.

    Attributes:
        recipe: the new recipe, as the cascade now finds it.
        source: the recipe it was copied from.
        replaced: the path of a recipe of that name it replaces or shadows, else None.
    """

    recipe: Recipe
    source: Recipe
    replaced: Path | None = None

    def to_json(self) -> dict[str, object]:
        """Return ``{"name", "engine", "source", "path", "layer", "replaced"}``."""
        return {"name": self.recipe.name, "engine": self.recipe.engine,
                "source": self.source.name, "path": str(self.recipe.path),
                "layer": self.recipe.layer.value,
                "replaced": str(self.replaced) if self.replaced else None}


def check_new_name(name: str) -> str:
    """Return a valid name for a promoted recipe.

    Raises:
        InputError: not one segment, starting with ``_`` or ``.``, ending in ``.yaml``,
            or longer than ``NAME_MAX``.
    """
    clean = check_name(name.strip())
    if clean.lower().endswith(EXTENSIONS[Kind.RECIPES]):
        raise InputError(f"recipe name '{clean}' ends in '{EXTENSIONS[Kind.RECIPES]}': give the"
                         f" name without it ('{clean[:-len(EXTENSIONS[Kind.RECIPES])]}')",
                         field="name")
    if len(clean) > NAME_MAX:
        raise InputError(f"recipe name is {len(clean)} characters long; at most {NAME_MAX}",
                         field="name")
    if "/" in clean:
        raise InputError(f"recipe name '{clean}' must be one name without '/'", field="name")
    if clean.startswith(("_", ".")):
        raise InputError(f"recipe name '{clean}' must not start with '_' or '.': those names"
                         " are hidden from the selector", field="name")
    return clean


def promote(ws: Workspace, source: str, name: str, *, force: bool = False) -> Promoted:
    """Copy the recipe ``source`` to ``recipes/<name>.yaml`` of the write folder, checked.

    Args:
        ws: workspace.
        source: the recipe to copy (e.g. ``_slart/20261201-ab12/council-shop``).
        name: the new recipe's name.
        force: replace or shadow a recipe of that name.

    Returns:
        What was written.

    Raises:
        UnknownRecipe, InvalidDocumentName: no such source.
        DocumentError: the source is broken (its problems named); nothing is written.
        InputError: a bad new name, one that exists without ``force``, or a source whose
            engine is not in the active catalog.
        StorageError: the file cannot be written.
    """
    new_name = check_new_name(name)
    original = find_recipe(ws, source)
    if original.path is None:
        raise DocumentError(f"recipe '{source}' has no file to copy")
    try:
        text = files.read_limited(original.path, yamlio.MAX_DOCUMENT_BYTES).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError, files.FileRefused) as exc:
        raise DocumentError(f"cannot read recipe '{source}': {exc}",
                            path=str(original.path)) from None
    parse_recipe(yamlio.loads(text, source=str(original.path)), new_name, rules=ws.engines)
    if original.engine not in ws.catalog().names:
        raise InputError(f"recipe '{original.name}' runs engine '{original.engine}', which is not"
                         " in the active engine catalog ('vance catalog show'); promoted, the"
                         " selector would never see it", field="source")
    existing = ws.cascade(Kind.RECIPES).find(new_name)
    if existing is not None and not force:
        raise InputError(f"recipe '{new_name}' exists already ({existing.layer.value}:"
                         f" {existing.path}); choose another name, or --force to replace it",
                         field="name")
    target = ws.write_folder / Kind.RECIPES.value / (new_name + EXTENSIONS[Kind.RECIPES])
    header = f"# promoted from {original.name} on {utc_now()[:10]}\n"
    atomic_write_text(target, header + text, mode=DOCUMENT_MODE)
    return Promoted(find_recipe(ws, new_name), original,
                    existing.path if existing is not None else None)
