"""From form values to the finished prompt: validate, render, append follow-ups.

Rules (docs/wizards.md "Validation", "Render", "Follow-ups"):
- Values are validated first; any error stops here with every error
  (``FormInvalid``), nothing is rendered.
- The template sees each field's typed value plus ``lang``, ``user`` and
  ``project`` (the project id ``availableIn`` uses: ``_tenant`` without one).
- The rendered text loses leading and trailing blank lines; follow-ups go
  below it under their instruction line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import RenderError
from vance_cli.base.records import frozen
from vance_cli.base.sandbox import MAX_OUTPUT_CHARS, render
from vance_cli.wizards.followups import FollowUpLink, append_followups, resolve_followups
from vance_cli.wizards.validate import require_valid

if TYPE_CHECKING:
    from vance_cli.wizards.loader import LoadedWizard
    from vance_cli.workspace import Workspace


@frozen
class RenderContext:
    """The built-in template variables.

    Attributes:
        lang: session language (``de``, ``en`` …).
        user: user name.
        project: project id (``_tenant`` without a project).
    """

    lang: str
    user: str
    project: str

    @classmethod
    def of(cls, workspace: Workspace) -> RenderContext:
        """Return the context of a workspace's settings."""
        settings = workspace.settings
        return cls(settings.lang, settings.user, workspace.availability_id)


@frozen
class RenderedPrompt:
    """A finished prompt.

    Attributes:
        wizard: the wizard's name.
        text: the prompt, follow-ups included.
        values: the validated, typed values it was rendered from.
        followups: the follow-up links shown.
    """

    wizard: str
    text: str
    values: Mapping[str, Any]
    followups: tuple[FollowUpLink, ...] = ()

    def to_json(self) -> dict[str, str]:
        """Return ``{"prompt": text}`` (docs/wizards.md ``vance wizard render``)."""
        return {"prompt": self.text}


def build_prompt(wizard: LoadedWizard, raw: Mapping[str, Any],
                 context: RenderContext) -> RenderedPrompt:
    """Validate ``raw`` and render the wizard's prompt with its follow-ups.

    Args:
        wizard: a loaded wizard.
        raw: field name → raw value (typed answers, ``--set`` text, file data).
        context: ``lang``, ``user``, ``project``.

    Returns:
        The prompt.

    Raises:
        FormInvalid: a value failed validation (carries every error).
        RenderError: the template failed, or the prompt exceeds the output limit.

    Rule: docs/wizards.md.
    """
    values = require_valid(wizard.spec.fields, raw)
    variables = {**values, "lang": context.lang, "user": context.user,
                 "project": context.project}
    body = render(wizard.template, variables, wizard.name).strip("\n").rstrip()
    links = resolve_followups(wizard.followups, variables, context.lang, wizard.name)
    text = append_followups(body, links, context.lang)
    if len(text) > MAX_OUTPUT_CHARS:
        raise RenderError(f"wizard '{wizard.name}': the prompt exceeds "
                          f"{MAX_OUTPUT_CHARS:,} characters", wizard=wizard.name)
    return RenderedPrompt(wizard.name, text, values, tuple(links))
