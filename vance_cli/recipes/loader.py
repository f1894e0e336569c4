"""Recipes: named, reusable workflows bound to an engine, and the selector's inventory.

Rules (docs/documents.md "Recipes"; docs/delegate.md, step 2):
- A recipe is ``recipes/<name>.yaml`` with ``engine`` and ``description``
  (required), optional ``title``, ``params`` (mapping), ``tags`` (strings),
  ``triggers.keywords`` (strings) and ``internal`` (boolean).
- Recipes cascade project → tenant → bundled; the first layer wins.
- One broken file never hides the others: it is reported as a problem and
  left out.
- The inventory the selector sees is every recipe minus names starting with
  ``_`` (so ``_slart/…`` is out) and minus ``internal: true`` — and, given
  the active catalog's engines, minus recipes whose engine it lacks (they
  could never start: a warning names each, ``left_out``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import DocumentError, UnknownRecipe
from vance_cli.base.names import close_matches
from vance_cli.base.records import frozen
from vance_cli.documents.cascade import DocumentRef, Kind, Layer, load_yaml
from vance_cli.ranking import terms as recipe_terms
from vance_cli.recipes.references import missing_references

if TYPE_CHECKING:
    from vance_cli.documents.cache import DocumentCache
    from vance_cli.recipes.references import EngineRules
    from vance_cli.workspace import Workspace

CACHE_KIND = "recipe"
"""Kind tag of recipe entries in the parsed-document cache."""

@frozen
class Recipe:
    """A parsed recipe.

    Attributes:
        name: document name, e.g. ``"essay-pipeline"`` or ``"_slart/<runId>/x"``.
        engine: engine name (checked against the active catalog when spawned).
        description: what it does; the selector's main evidence.
        title: short display title ("" when absent).
        params: default process params, overlaid by the caller's.
        tags: free-form labels (also ranked by the offline selector).
        keywords: ``triggers.keywords``, lower-cased (the trigger fast path).
        internal: hidden from the selector's inventory.
        prompt: the engine's instructions (a template; "" when absent).
        layer: where it came from.
        path: its file.
    """

    name: str
    engine: str
    description: str
    title: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    internal: bool = False
    prompt: str = ""
    layer: Layer = Layer.RESOURCE
    path: Path | None = None

    @property
    def hidden(self) -> bool:
        """True when the selector must not see it (``_`` name or ``internal: true``)."""
        return self.internal or self.name.startswith("_")

    def to_cache(self) -> dict[str, Any]:
        """Return the parsed content (no name, layer or path) for the document cache."""
        return {"engine": self.engine, "description": self.description, "title": self.title,
                "params": dict(self.params), "tags": list(self.tags),
                "keywords": list(self.keywords), "internal": self.internal,
                "prompt": self.prompt}

    @classmethod
    def from_content(cls, data: Mapping[str, Any], name: str, layer: Layer = Layer.RESOURCE,
                     path: Path | None = None) -> Recipe:
        """Build a recipe from validated content (``schema.RecipeDocument.to_cache``)."""
        return cls(name=name, engine=data["engine"], description=data["description"],
                   title=data["title"], params=data["params"], tags=tuple(data["tags"]),
                   keywords=tuple(data["keywords"]), internal=data["internal"],
                   prompt=data.get("prompt", ""), layer=layer, path=path)

    def summary_json(self) -> dict[str, Any]:
        """Return the recipe as one entry of ``vance recipe list --json``."""
        return {"name": self.name, "engine": self.engine, "title": self.title,
                "description": self.description, "layer": self.layer.value,
                "hidden": self.hidden}

    def to_json(self) -> dict[str, Any]:
        """Return the recipe as ``vance recipe show --json`` prints it."""
        return {
            "name": self.name, "engine": self.engine, "title": self.title,
            "description": self.description, "params": dict(self.params),
            "tags": list(self.tags), "triggers": {"keywords": list(self.keywords)},
            "internal": self.internal, "prompt": self.prompt or None,
            "layer": self.layer.value, "path": str(self.path) if self.path else None,
        }


@frozen
class DocumentProblem:
    """A document left out because it failed to load.

    Attributes:
        name: document name.
        layer: where it sits.
        path: its file.
        reason: one line, with the line number when known.
    """

    name: str
    layer: Layer
    path: Path
    reason: str

    def to_json(self) -> dict[str, Any]:
        """Return ``{"name", "layer", "path", "reason"}``."""
        return {"name": self.name, "layer": self.layer.value, "path": str(self.path),
                "reason": self.reason}


@frozen
class RecipeSet:
    """All recipes over the cascade, plus the files that failed to load.

    Attributes:
        recipes: name → Recipe, sorted by name.
        problems: broken files, left out of ``recipes``.
    """

    recipes: Mapping[str, Recipe]
    problems: tuple[DocumentProblem, ...] = ()

    def inventory(self, engines: Collection[str] | None = None) -> list[Recipe]:
        """Return the selector's inventory: visible recipes in stable (name) order.

        Args:
            engines: the active catalog's engine names; a recipe whose engine is
                not among them is left out. None: no engine check.
        """
        return [r for r in self.recipes.values()
                if not r.hidden and (engines is None or r.engine in engines)]

    def left_out(self, engines: Collection[str]) -> tuple[str, ...]:
        """Return one warning line per recipe the inventory leaves out: broken or engine-less.

        Args:
            engines: the active catalog's engine names.
        """
        lines = [f"recipe '{p.name}' left out: {p.reason}" for p in self.problems]
        lines += [f"recipe '{r.name}' left out: its engine '{r.engine}' is not in the active "
                  "engine catalog ('vance catalog show')"
                  for r in self.recipes.values() if not r.hidden and r.engine not in engines]
        return tuple(lines)

    def get(self, name: str) -> Recipe:
        """Return recipe ``name``.

        Raises:
            UnknownRecipe: not loaded; carries up to 5 close names and the visible ones.
        """
        try:
            return self.recipes[name]
        except KeyError:
            visible = [r.name for r in self.inventory()]
            raise UnknownRecipe(name, close_matches(name, list(self.recipes)), visible) from None


def parse_recipe(data: Any, name: str, layer: Layer = Layer.RESOURCE,
                 path: Path | None = None, *, rules: EngineRules | None = None) -> Recipe:
    """Check raw recipe data against the recipe schema and build a Recipe.

    Args:
        data: the YAML document (must be a mapping).
        name: its document name.
        layer: origin layer.
        path: its file, for messages.
        rules: the engines' params schemas (``Workspace.engines``); None: params unchecked.

    Returns:
        The Recipe.

    Raises:
        DocumentError: the document breaks the schema (every problem named, up to three).
    """
    from vance_cli.recipes import schema  # heavy: pydantic, only when a file is parsed

    try:
        content = schema.validate(data, rules)
    except ValueError as exc:
        raise DocumentError(str(exc), path=str(path) if path else name) from None
    return Recipe.from_content(content, name, layer, path)


def load_recipe_file(ref: DocumentRef, cache: DocumentCache | None = None, *,
                     rules: EngineRules | None = None) -> Recipe:
    """Read and parse the recipe a cascade lookup found.

    Args:
        ref: the document.
        rules: the engines' params schemas (``Workspace.engines``); None: params unchecked.
        cache: parsed-document cache; a hit skips the YAML parser and the
            ranking's analysis of the text (``recipe_terms``; kept for visible
            recipes), and a broken file's problem is remembered as well.

    Raises:
        DocumentError: unreadable, invalid YAML (with position) or invalid recipe.
    """
    if ref.problem is not None:  # a folder of the layer that cannot be read
        raise DocumentError(ref.problem, path=str(ref.path))
    signature = cache.signature(ref.path) if cache else None
    cached = cache.get(ref.path, CACHE_KIND, signature) if cache else None
    if isinstance(cached, dict):
        problem = cached.get("problem")
        if isinstance(problem, dict):
            raise DocumentError(problem["reason"], path=problem["path"], line=problem["line"],
                                column=problem["column"])
        recipe = Recipe.from_content(cached, ref.name, ref.layer, ref.path)
        recipe_terms.remember(recipe, cached.get("analysis"))
        return recipe

    try:
        recipe = parse_recipe(load_yaml(ref), ref.name, ref.layer, ref.path, rules=rules)
    except DocumentError as exc:
        if cache:
            cache.put(ref.path, CACHE_KIND, signature, {"problem": {
                "reason": exc.reason, "path": exc.path, "line": exc.line, "column": exc.column}})
        raise
    value = recipe.to_cache()
    if cache and _json_safe(value):
        if not recipe.hidden:  # the selector never ranks a hidden recipe
            value["analysis"] = recipe_terms.to_cache(recipe_terms.analyse(recipe))
        cache.put(ref.path, CACHE_KIND, signature, value)
    return recipe


def _json_safe(value: Any) -> bool:
    """True when ``value`` survives a JSON round trip unchanged (e.g. no integer keys)."""
    try:
        return bool(json.loads(json.dumps(value)) == value)
    except (TypeError, ValueError):
        return False


def load_recipes(ws: Workspace) -> RecipeSet:
    """Load every recipe over the cascade; broken files become problems.

    Args:
        ws: the workspace whose recipe cascade is read (and whose document cache is used).

    Returns:
        A RecipeSet; never raises for a single bad file. A recipe whose params
        name a recipe that is not there is left out too (``references``).
    """
    recipes: dict[str, Recipe] = {}
    problems: list[DocumentProblem] = []
    cache = ws.document_cache
    for ref in ws.cascade(Kind.RECIPES).list():
        try:
            recipes[ref.name] = load_recipe_file(ref, cache, rules=ws.engines)
        except DocumentError as exc:
            problems.append(DocumentProblem(ref.name, ref.layer, ref.path, exc.message))
    cache.save()
    known = set(recipes)
    for recipe in list(recipes.values()):  # one that names a missing recipe could not run
        missing = missing_references(ws.engines, recipe.engine, recipe.params, known)
        if missing:
            del recipes[recipe.name]
            path = recipe.path if recipe.path is not None else Path(recipe.name)
            problems.append(DocumentProblem(recipe.name, recipe.layer, path,
                                            f"{path}: {'; '.join(missing)}"))
    return RecipeSet(recipes=recipes, problems=tuple(problems))


def find_recipe(ws: Workspace, name: str) -> Recipe:
    """Resolve one recipe through the cascade (any name, hidden ones included).

    Raises:
        InvalidDocumentName: the name is not a valid document name.
        UnknownRecipe: no layer has it (with close names and the visible ones).
        DocumentError: the file that the cascade found is broken.
    """
    ref = ws.cascade(Kind.RECIPES).find(name)
    if ref is None:
        return load_recipes(ws).get(name)  # raises UnknownRecipe with suggestions
    cache = ws.document_cache
    try:
        return load_recipe_file(ref, cache, rules=ws.engines)
    finally:
        cache.save()
