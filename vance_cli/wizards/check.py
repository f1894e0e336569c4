"""``vance wizard check``: a wizard's ``validatorPrompt`` asked of the LLM (docs/wizards.md).

Rules:
- The ``validatorPrompt`` is rendered over the same variables as the
  ``promptTemplate`` (the values as far as they are valid, plus ``lang``,
  ``user``, ``project``); the LLM is asked through the constrained-output path
  (``llm.complete`` with a schema whose ``field`` is an enum of the wizard's
  top-level field names).
- The reply is ``{"suggestions": [{"field", "suggestion"}]}``. A suggestion
  naming a field the wizard does not have is dropped, with a note; so are
  blank ones.
- A check never blocks: every failure (no ``validatorPrompt``, no LLM, a
  refused call, an unreadable reply) is a note, never an error.
- Every call made is recorded in the state database's ``llm_calls`` (no
  process: ``process_id`` is null; purpose ``wizard-check``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vance_cli import llm
from vance_cli.base.errors import VanceError
from vance_cli.base.records import frozen
from vance_cli.base.replies import find_object
from vance_cli.base.sandbox import compile_template, render
from vance_cli.state import conversation
from vance_cli.wizards.validate import validate_form

if TYPE_CHECKING:
    from vance_cli.wizards.loader import LoadedWizard
    from vance_cli.wizards.prompt import RenderContext
    from vance_cli.workspace import Workspace

PURPOSE = "wizard-check"
"""The ``purpose`` of a check's row in ``llm_calls``."""

SYSTEM = ("You check the answers a person gave to a form before the prompt is sent. Reply with "
          "one JSON object {\"suggestions\": [{\"field\": NAME, \"suggestion\": TEXT}]}, naming "
          "only the form's fields: {fields}. Suggest only what would clearly improve an answer; "
          "an empty list is a good reply.")


@frozen
class Suggestion:
    """One suggestion: the field it is about and what to change."""

    field: str
    suggestion: str

    def to_json(self) -> dict[str, str]:
        """Return ``{"field", "suggestion"}``."""
        return {"field": self.field, "suggestion": self.suggestion}


@frozen
class CheckResult:
    """What a check found: suggestions for named fields, and notes about the check itself."""

    suggestions: tuple[Suggestion, ...] = ()
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return ``{"suggestions": [...], "notes": [...]}``."""
        return {"suggestions": [s.to_json() for s in self.suggestions],
                "notes": list(self.notes)}


def reply_schema(fields: list[str]) -> dict[str, Any]:
    """Return the JSON schema of a check's reply: ``field`` is one of ``fields``."""
    return {
        "type": "object",
        "properties": {"suggestions": {"type": "array", "items": {
            "type": "object",
            "properties": {"field": {"type": "string", "enum": fields},
                           "suggestion": {"type": "string"}},
            "required": ["field", "suggestion"], "additionalProperties": False}}},
        "required": ["suggestions"],
        "additionalProperties": False,
    }


def read_reply(text: str, fields: list[str]) -> CheckResult:
    """Read a check's reply: suggestions for known fields; unknown ones dropped with a note."""
    data = find_object(text)
    if data is None or not isinstance(data.get("suggestions"), list):
        return CheckResult(notes=("the LLM's reply held no suggestions list (ignored)",))
    kept: list[Suggestion] = []
    notes: list[str] = []
    for item in data["suggestions"]:
        if not isinstance(item, dict):
            continue
        name, text_ = str(item.get("field", "")), str(item.get("suggestion", "")).strip()
        if name not in fields:
            notes.append(f"dropped a suggestion for '{name}': not a field of this wizard")
        elif text_:
            kept.append(Suggestion(name, text_))
    return CheckResult(tuple(kept), tuple(notes))


def check_answers(ws: Workspace, wizard: LoadedWizard, raw: Mapping[str, Any],
                  context: RenderContext) -> CheckResult:
    """Run a wizard's ``validatorPrompt`` over ``raw``; never raises for the LLM's sake.

    Returns:
        The suggestions and notes (a note alone when nothing could be asked).

    Raises:
        RenderError: the ``validatorPrompt`` failed to render (the wizard's bug, not the LLM's).
    """
    source = wizard.spec.validator_prompt
    if source is None:
        return CheckResult(notes=(f"wizard '{wizard.name}' has no validatorPrompt: "
                                  "nothing to check",))
    if not ws.settings.llm_configured:
        return CheckResult(notes=("no LLM configured: the answers were not checked "
                                  "(set llm.base_url or llm.api_key)",))
    fields = [f.name for f in wizard.spec.fields]
    variables = {**validate_form(wizard.spec.fields, raw).values, "lang": context.lang,
                 "user": context.user, "project": context.project}
    text = render(compile_template(source), variables, wizard.name).strip()
    config = llm.LLMConfig.from_settings(ws.settings)
    messages = [{"role": "system", "content": SYSTEM.replace("{fields}", ", ".join(fields))},
                {"role": "user", "content": text}]
    try:
        answer = llm.complete(config, messages, reply_schema(fields))
    except VanceError as exc:
        _record(ws, config, None, exc.message)
        return CheckResult(notes=(f"the check could not run: {exc.message}",))
    _record(ws, config, answer, None)
    return read_reply(answer.text, fields)


def _record(ws: Workspace, config: llm.LLMConfig, answer: llm.Completion | None,
            error: str | None) -> None:
    with ws.db.transaction():
        conversation.add_llm_call(
            ws.db, None, None, PURPOSE, model=answer.model if answer else config.model,
            endpoint=llm.safe_endpoint(config.base_url),
            tokens_in=answer.prompt_tokens if answer else None,
            tokens_out=answer.completion_tokens if answer else None,
            latency_ms=answer.latency_ms if answer else None,
            finish_reason=answer.finish_reason if answer else None, error=error)
