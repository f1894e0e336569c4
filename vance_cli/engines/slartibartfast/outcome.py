"""The fallback's outcome: the delegate JSON's ``fallback``; how a closed Slart run maps to it."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.base.records import frozen
from vance_cli.engines.slartibartfast.audit import AUDIT_FILE, Audit, layer_path

if TYPE_CHECKING:
    from vance_cli.processes.whole import Process





class Outcome(StrEnum):
    """``fallback.outcome`` values (docs/delegate.md)."""

    GENERATED = "GENERATED"
    """A recipe was generated (and, in sync mode, spawned)."""
    FAILED = "FAILED"
    """Slartibartfast could not run or found no valid recipe; nothing spawned."""
    TIMED_OUT = "TIMED_OUT"
    """The cutoff passed first; Slart was stopped; nothing spawned."""
    PENDING = "PENDING"
    """Async: Slartibartfast runs on in a background worker."""


@frozen
class FallbackResult:
    """The ``fallback`` object of the delegate output, plus what people are shown.

    Attributes:
        outcome: see ``Outcome``.
        rationale: one or two sentences on what happened and why.
        slart_process_id: the Slart process, or None when none was created.
        recipe_name: ``_slart/<runId>/<name>``, when a recipe was generated.
        recipe_path: ``recipes/_slart/<runId>/<name>.yaml`` (relative to the layer).
        process: the process started from the generated recipe (sync), else None.
        file: the generated recipe's file on disk (not in the JSON).
        audit_file: the run's ``audit.json`` on disk (not in the JSON).
        notify: the process whose queue gets the end event (async; not in the JSON).
        code: a short machine tag for people's output, e.g. ``no_llm`` (not in the JSON).
    """

    outcome: Outcome
    rationale: str
    slart_process_id: str | None = None
    recipe_name: str | None = None
    recipe_path: str | None = None
    process: Process | None = None
    file: Path | None = None
    audit_file: Path | None = None
    notify: str | None = None
    code: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return exactly docs/delegate.md's ``fallback`` keys."""
        return {"outcome": self.outcome.value, "slartProcessId": self.slart_process_id,
                "recipeName": self.recipe_name, "recipePath": self.recipe_path,
                "rationale": self.rationale}


def outcome_of(slart: Process, audit: Audit) -> FallbackResult:
    """Map a closed Slart process to the fallback result (before any spawn).

    ``DONE`` → GENERATED with the recipe; ``STOPPED`` by the cutoff →
    TIMED_OUT; any other close → FAILED with the reason; the audit's
    layer-relative path is named in every rationale but success.
    """
    result = dict(slart.outcome or {})
    audit_path = layer_path(str(slart.params.get("runId")), AUDIT_FILE)
    base = FallbackResult(Outcome.FAILED, "", slart.id, audit_file=audit.path)
    reason = str(result.get("reason") or slart.close_reason or "unknown")
    if slart.close_reason == "DONE":
        name, path = result.get("recipeName"), result.get("recipePath")
        return _replace(base, outcome=Outcome.GENERATED, recipe_name=name, recipe_path=path,
                        file=Path(result["file"]) if result.get("file") else None,
                        rationale=f"Slartibartfast designed the new recipe '{name}'")
    if slart.close_reason == "STOPPED" and result.get("timedOut"):
        return _replace(base, outcome=Outcome.TIMED_OUT, rationale=(
            f"{reason}; Slartibartfast was stopped and nothing was started "
            f"(audit: {audit_path})"))
    what = "was stopped" if slart.close_reason == "STOPPED" else "failed"
    return _replace(base, rationale=f"Slartibartfast {what}: {reason} (audit: {audit_path})")


def _replace(result: FallbackResult, **changes: Any) -> FallbackResult:

    return replace(result, **changes)
