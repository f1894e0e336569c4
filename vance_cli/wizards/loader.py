"""Loading wizards: fail-fast per file, a report over all of them, templates compiled at load.

Rules (docs/wizards.md "Loading"; docs/documents.md "The cascade"):
- One file fails on its first problem class: invalid YAML (with line and
  column), a schema error (missing required key, unknown key, unknown field
  type …, up to three listed with their paths), a default value that fails its
  own field's validation, or a template that does not compile or breaks the
  sandbox policy. The reason names what and where.
- A broken file never hides another: ``load_cascade`` returns a
  ``WizardLoadReport`` with every wizard, OK or with its reason.
- The cascade decides which file a name means (first layer wins). When that
  file is broken the name is broken: a lower layer's copy is *not* used
  instead, since the override the person wrote would silently vanish.
- ``lint_*`` checks every file, shadowed ones included.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from vance_cli.base import schema, yamlio
from vance_cli.base.errors import DocumentError, PathNotFound, UnknownWizard, WizardBroken
from vance_cli.base.gc_pause import collector_paused
from vance_cli.base.names import check_name, close_matches
from vance_cli.base.records import frozen
from vance_cli.base.sandbox import TemplateRejected, compile_template, parse_template
from vance_cli.documents.cache import pack_yaml, unpack_yaml
from vance_cli.documents.cascade import Cascade, Layer, load_yaml
from vance_cli.wizards.conditions import check_conditions
from vance_cli.wizards.followups import check_followup, compile_followup
from vance_cli.wizards.model import FieldType, Wizard, WizardField
from vance_cli.wizards.validate import check_field, is_missing

if TYPE_CHECKING:
    from jinja2 import Template

    from vance_cli.documents.cache import DocumentCache
    from vance_cli.wizards.followups import CompiledFollowUp

CACHE_KIND = "wizard"
"""Kind tag of wizard entries in the parsed-document cache: the raw YAML of a wizard
that loaded completely (schema, defaults, templates), or a broken one's reason."""




class _Compiled:
    """The compiled templates of one wizard, filled on first use (a cached listing skips them)."""

    __slots__ = ("value",)

    def __init__(self, value: tuple[Template, tuple[CompiledFollowUp, ...]] | None = None):
        self.value = value


@frozen
class LoadedWizard:
    """A wizard that loaded: its schema, origin and compiled templates.

    Attributes:
        name: document name (the file name).
        layer: where it came from (None for a file linted by path).
        path: its file.
        spec: the parsed schema.
        compiled: its templates; compiled at load, or on first use when the
            wizard came from the listing cache (which holds only wizards whose
            templates compiled).
    """

    name: str
    layer: Layer | None
    path: Path
    spec: Wizard
    compiled: _Compiled = dataclass_field(default_factory=_Compiled, compare=False, repr=False)

    @property
    def template(self) -> Template:
        """The compiled ``promptTemplate``."""
        return self._templates()[0]

    @property
    def followups(self) -> tuple[CompiledFollowUp, ...]:
        """The compiled ``suggestedFollowUps``."""
        return self._templates()[1]

    def _templates(self) -> tuple[Template, tuple[CompiledFollowUp, ...]]:
        if self.compiled.value is None:
            try:
                self.compiled.value = _compile(self.spec)
            except ValueError as exc:  # the file changed meaning under a stale cache entry
                raise WizardBroken(f"wizard '{self.name}' is broken: {exc}",
                                   path=str(self.path), name=self.name) from None
        return self.compiled.value

    def summary(self, lang: str) -> dict[str, Any]:
        """Return the listing entry: name, title, description, category, icon, layer, path."""
        return {
            "name": self.name, "title": self.spec.title_in(lang),
            "description": self.spec.description_in(lang),
            "category": self.spec.category_in(lang), "icon": self.spec.icon,
            "layer": self.layer.value if self.layer else None, "path": str(self.path),
        }


@frozen
class LoadOutcome:
    """One wizard file's load result.

    Attributes:
        name: document name.
        layer: where it sits (None for a file linted by path).
        path: its file.
        wizard: the loaded wizard, or None when broken.
        reason: why it is broken (one line), or None.
    """

    name: str
    layer: Layer | None
    path: Path
    wizard: LoadedWizard | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """True when the wizard loaded."""
        return self.wizard is not None

    def to_json(self) -> dict[str, Any]:
        """Return ``{"name", "layer", "path", "ok", "reason"}``."""
        return {"name": self.name, "layer": self.layer.value if self.layer else None,
                "path": str(self.path), "ok": self.ok, "reason": self.reason}


@frozen
class WizardLoadReport:
    """Every wizard file looked at, OK or with its reason.

    Attributes:
        outcomes: in name order (for a cascade: one per name, first layer wins).
    """

    outcomes: tuple[LoadOutcome, ...]

    @property
    def wizards(self) -> tuple[LoadedWizard, ...]:
        """The wizards that loaded."""
        return tuple(o.wizard for o in self.outcomes if o.wizard is not None)

    @property
    def problems(self) -> tuple[LoadOutcome, ...]:
        """The files that did not load."""
        return tuple(o for o in self.outcomes if not o.ok)

    @property
    def ok(self) -> bool:
        """True when every file loaded."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """Return ``{"ok": bool, "wizards": [outcome, …]}``."""
        return {"ok": self.ok, "wizards": [o.to_json() for o in self.outcomes]}


def _check_defaults(fields: Sequence[WizardField], prefix: str) -> None:

    for index, field in enumerate(fields):
        where = f"{prefix}[{index}]"
        if not is_missing(field.default_value):
            _, errors = check_field(field, field.default_value)
            if errors:
                raise ValueError(f"{where}.defaultValue: {errors[0].error.value}")
        if field.type is FieldType.REPEAT:
            _check_defaults(field.item, f"{where}.item")


def _compile(spec: Wizard) -> tuple[Template, tuple[CompiledFollowUp, ...]]:

    try:
        template = compile_template(spec.prompt_template)
    except TemplateRejected as exc:
        raise ValueError(f"promptTemplate {exc}") from None
    if spec.validator_prompt is not None:
        try:  # compiled again by the check: a wizard whose check cannot run is broken here
            compile_template(spec.validator_prompt)
        except TemplateRejected as exc:
            raise ValueError(f"validatorPrompt {exc}") from None
    followups = []
    for index, followup in enumerate(spec.suggested_follow_ups):
        try:
            followups.append(compile_followup(followup))
        except TemplateRejected as exc:
            raise ValueError(f"suggestedFollowUps[{index}]: template {exc}") from None
    return template, tuple(followups)


def _check(spec: Wizard) -> None:
    """Check every template against the load policy without compiling (a listing's need)."""
    try:
        parse_template(spec.prompt_template)
    except TemplateRejected as exc:
        raise ValueError(f"promptTemplate {exc}") from None
    if spec.validator_prompt is not None:
        try:
            parse_template(spec.validator_prompt)
        except TemplateRejected as exc:
            raise ValueError(f"validatorPrompt {exc}") from None
    for index, followup in enumerate(spec.suggested_follow_ups):
        try:
            check_followup(followup)
        except TemplateRejected as exc:
            raise ValueError(f"suggestedFollowUps[{index}]: template {exc}") from None


def parse_wizard(data: Any, name: str, layer: Layer | None, path: Path,
                 compile: bool = True) -> LoadedWizard:
    """Check raw wizard data and compile its templates.

    Args:
        data: the YAML document.
        name: its document name.
        layer: origin layer.
        path: its file, for messages.
        compile: compile the templates now; False only checks them (parse and
            load policy, which covers what the compiler refuses) and leaves
            compiling to first use: a listing renders nothing.

    Returns:
        The loaded wizard.

    Raises:
        DocumentError: the first problem class found (see the module docstring).
    """
    if not isinstance(data, dict):
        found = "an empty file" if data is None else type(data).__name__
        raise DocumentError(f"expected a mapping at the top level, found {found}",
                            path=str(path))
    try:
        spec = Wizard.model_validate(data)
    except ValidationError as exc:
        raise DocumentError(schema.reason(exc, Wizard), path=str(path)) from None
    try:
        _check_defaults(spec.fields, "fields")
        check_conditions(spec.fields, "fields")
        compiled = _Compiled(_compile(spec)) if compile else _Compiled()
        if not compile:
            _check(spec)
    except ValueError as exc:
        raise DocumentError(str(exc), path=str(path)) from None
    return LoadedWizard(name, layer, path, spec, compiled)


def load_outcome(name: str, layer: Layer | None, path: Path,
                 cache: DocumentCache | None = None, compile: bool = True,
                 root: Path | None = None, problem: str | None = None) -> LoadOutcome:
    """Load one wizard file and return its outcome (never raises for a broken file).

    Args:
        name: document name.
        layer: origin layer.
        path: its file.
        cache: parsed-document cache: a hit skips YAML, defaults and template
            compilation (a broken file's reason is remembered too).
        compile: compile the templates now (``parse_wizard``); a listing only checks them.
        root: the layer's folder: a link leading out of it is refused.
        problem: why the entry cannot be read at all (an unreadable folder).
    """
    if problem is not None:
        return LoadOutcome(name, layer, path, reason=problem)
    signature = cache.signature(path) if cache else None
    if cache is not None:
        hit = _from_cache(cache.get(path, CACHE_KIND, signature), name, layer, path)
        if hit is not None:
            return hit
    data: Any = None
    try:
        data = yamlio.load_file(path, root)
        outcome = LoadOutcome(name, layer, path,
                              wizard=parse_wizard(data, name, layer, path, compile))
    except DocumentError as exc:
        reason = exc.reason
        if exc.line is not None:
            reason = f"line {exc.line}" + (f":{exc.column}" if exc.column else "") + f": {reason}"
        outcome = LoadOutcome(name, layer, path, reason=reason)
    if cache is not None:
        packed = pack_yaml(data) if outcome.ok else None
        if outcome.reason is not None:
            cache.put(path, CACHE_KIND, signature, {"problem": outcome.reason})
        elif packed is not None:
            cache.put(path, CACHE_KIND, signature, {"yaml": packed})
    return outcome


def _from_cache(entry: Any, name: str, layer: Layer | None, path: Path) -> LoadOutcome | None:
    """Rebuild an outcome from a cache entry; None when there is no usable one."""
    if not isinstance(entry, dict):
        return None
    if isinstance(entry.get("problem"), str):
        return LoadOutcome(name, layer, path, reason=entry["problem"])
    try:
        spec = Wizard.model_validate(unpack_yaml(entry.get("yaml")))
    except ValueError:  # not an entry this version wrote (ValidationError too): parse again
        return None
    return LoadOutcome(name, layer, path, wizard=LoadedWizard(name, layer, path, spec))


def load_cascade(cascade: Cascade, cache: DocumentCache | None = None) -> WizardLoadReport:
    """Load every wizard name of the cascade (first layer wins), broken ones reported.

    Args:
        cascade: the wizards cascade.
        cache: parsed-document cache (``Workspace.wizard_cache``); saved at the end.

    Rule: docs/wizards.md "Loading"; docs/documents.md "The cascade". The garbage
    collector waits until the load is done (``gc_pause``).
    """
    with collector_paused():
        report = WizardLoadReport(tuple(load_outcome(ref.name, ref.layer, ref.path, cache,
                                                     compile=False, root=ref.root,
                                                     problem=ref.problem)
                                        for ref in cascade.list()))
        if cache is not None:
            cache.save()
    return report


def find_wizard(cascade: Cascade, name: str) -> LoadedWizard:
    """Look a wizard up through the cascade and load it.

    Raises:
        InvalidDocumentName: the name is malformed (checked before disk access).
        UnknownWizard: no layer has it; carries close names and all names.
        WizardBroken: the file that wins fails to load (with the reason).
    """
    check_name(name)
    ref = cascade.find(name)
    if ref is None:
        names = cascade.names()
        raise UnknownWizard(name, close_matches(name, names), names)
    try:
        return parse_wizard(load_yaml(ref), ref.name, ref.layer, ref.path)
    except DocumentError as exc:
        raise WizardBroken(f"wizard '{name}' is broken: {exc.reason}", path=str(ref.path),
                           line=exc.line, column=exc.column, name=name) from None


def lint_cascade(cascade: Cascade) -> WizardLoadReport:
    """Load every wizard file of every layer, shadowed ones included, in layer order."""
    outcomes: list[LoadOutcome] = []
    with collector_paused():
        for layer in cascade.layers:
            unreadable: list[tuple[str, Path, str]] = []
            outcomes += [load_outcome(name, layer.layer, path, root=layer.root)
                         for name, path in layer.iter_documents(cascade.kind, unreadable)]
            outcomes += [LoadOutcome(label, layer.layer, folder, reason=reason)
                         for label, folder, reason in unreadable]
    return WizardLoadReport(tuple(outcomes))


def lint_paths(paths: Iterable[Path]) -> WizardLoadReport:
    """Load the given wizard files, or every ``*.yaml`` below given folders.

    The name of each is its file name without ``.yaml``; its layer is None (a
    file given by path belongs to no layer).

    Raises:
        PathNotFound: a path that does not exist (exit 2).
    """
    outcomes: list[LoadOutcome] = []
    for path in paths:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*.yaml") if p.is_file())
        elif path.is_file():
            files = [path]
        else:
            raise PathNotFound(str(path))
        with collector_paused():
            outcomes += [load_outcome(f.stem, None, f) for f in files]
    return WizardLoadReport(tuple(outcomes))
