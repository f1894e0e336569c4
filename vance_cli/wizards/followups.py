"""Follow-up links: suggested next wizards appended to a prompt, and parsing them back.

Rules (docs/wizards.md "Follow-ups", "vance wizard open"):
- A follow-up is shown when its condition is truthy; a condition that fails
  to evaluate counts as false; no condition means always.
- Its label and prefill values are templates over the form values; an empty
  label falls back to the target wizard's name; a prefill value that renders
  empty is left out of the link.
- The link is ``vance:/wizards/<name>?kind=wizard&k=v…``, form-encoded (space →
  ``+``, everything else outside ``[A-Za-z0-9_.-~]`` percent-encoded as UTF-8,
  so ``(``, ``)``, ``&``, ``=`` and ``+`` in values survive), keys in
  declaration order. ``parse_link`` is its exact inverse.
- Shown links go under one instruction line (German for ``de``, English
  otherwise), as Markdown bullets ``- [label](link)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from vance_cli.base.errors import InvalidDocumentName, InvalidWizardLink, RenderError
from vance_cli.base.names import check_name
from vance_cli.base.records import frozen
from vance_cli.base.sandbox import (
    compile_condition,
    compile_template,
    condition_source,
    parse_template,
    render,
    truthy_text,
)

if TYPE_CHECKING:
    from jinja2 import Template

    from vance_cli.wizards.model import FollowUp

SCHEME = "vance"
"""URI scheme of wizard links."""
KIND = "wizard"
"""The ``kind`` query value that marks a wizard link."""

INSTRUCTIONS: Mapping[str, str] = {
    "de": "Wenn die Aufgabe oben erfolgreich erledigt ist, biete dem Nutzer diese "
          "nächsten Schritte als Links an:",
    "en": "Once the task above has been completed successfully, offer the user these "
          "next steps as links:",
}
"""The instruction line above the follow-up links, per language (``de``, else ``en``)."""

@frozen
class CompiledFollowUp:
    """A follow-up with its templates compiled at load.

    Attributes:
        wizard: target wizard name.
        labels: ``(language, text or template)`` in declared order.
        prefill: ``(key, text or template)`` in declared order.
        condition: compiled condition, or None (always shown).
    """

    wizard: str
    labels: tuple[tuple[str, Any], ...]
    prefill: tuple[tuple[str, Any], ...]
    condition: Template | None


@frozen
class FollowUpLink:
    """A follow-up as shown: its label and link.

    Attributes:
        wizard: target wizard name.
        label: rendered label (never empty).
        uri: ``vance:/wizards/<name>?kind=wizard&…``.
    """

    wizard: str
    label: str
    uri: str

    def to_json(self) -> dict[str, str]:
        """Return ``{"wizard", "label", "uri"}``."""
        return {"wizard": self.wizard, "label": self.label, "uri": self.uri}


@frozen
class WizardLink:
    """A parsed wizard link.

    Attributes:
        name: the wizard's name.
        values: ``(key, value)`` pairs in link order, ``kind`` removed.
    """

    name: str
    values: tuple[tuple[str, str], ...]


def _maybe_template(text: str) -> Any:

    return compile_template(text) if "{" in text else text


def check_followup(spec: FollowUp) -> None:
    """Check a follow-up's templates against the load policy without compiling them.

    Raises:
        TemplateRejected: a template does not parse or breaks the sandbox policy.
    """
    texts = [text for _lang, text in (spec.label.root if spec.label is not None else ())]
    texts += [value for _key, value in spec.prefill]
    for text in texts:
        if "{" in text:
            parse_template(text)
    if spec.condition:
        parse_template(condition_source(spec.condition))


def compile_followup(spec: FollowUp) -> CompiledFollowUp:
    """Compile a follow-up's label, prefill and condition.

    Raises:
        TemplateRejected: a template does not compile or breaks the sandbox policy.
    """
    labels = tuple((lang, _maybe_template(text)) for lang, text in
                   (spec.label.root if spec.label is not None else ()))
    prefill = tuple((key, _maybe_template(value)) for key, value in spec.prefill)
    condition = compile_condition(spec.condition) if spec.condition else None
    return CompiledFollowUp(spec.wizard, labels, prefill, condition)


def _text(value: Any, variables: Mapping[str, Any], wizard: str) -> str:

    return value if isinstance(value, str) else render(value, variables, wizard)


def _label(spec: CompiledFollowUp, variables: Mapping[str, Any], lang: str, owner: str) -> str:
    entries = dict(spec.labels)
    wanted = lang.lower()
    order = [wanted, re.split(r"[-_]", wanted)[0], "en", *entries]
    for key in order:
        if key in entries:
            text = " ".join(_text(entries[key], variables, owner).split())
            if text:
                return text
    return spec.wizard


def is_shown(spec: CompiledFollowUp, variables: Mapping[str, Any]) -> bool:
    """Return whether a follow-up's condition holds (an evaluation error counts as false)."""
    if spec.condition is None:
        return True
    try:
        return truthy_text(render(spec.condition, variables))
    except RenderError:
        return False


def build_link(name: str, values: Sequence[tuple[str, str]]) -> str:
    """Return ``vance:/wizards/<name>?kind=wizard&k=v…`` (form-encoded, keys in order).

    Args:
        name: the wizard's document name.
        values: ``(key, value)`` pairs.
    """
    query = urlencode([("kind", KIND), *values])
    return f"{SCHEME}:/wizards/{name}?{query}"


def resolve_followups(specs: Sequence[CompiledFollowUp], variables: Mapping[str, Any],
                      lang: str, owner: str) -> list[FollowUpLink]:
    """Return the follow-ups to show, labels and links rendered over ``variables``.

    Args:
        specs: compiled follow-ups in declared order.
        variables: the form values plus ``lang``, ``user``, ``project``.
        lang: session language for the label.
        owner: the wizard being rendered (for error messages).

    Raises:
        RenderError: a label or prefill template failed.
    """
    shown: list[FollowUpLink] = []
    for spec in specs:
        if not is_shown(spec, variables):
            continue
        pairs = [(key, _text(value, variables, owner)) for key, value in spec.prefill]
        pairs = [(key, value) for key, value in pairs if value.strip()]
        shown.append(FollowUpLink(spec.wizard, _label(spec, variables, lang, owner),
                                  build_link(spec.wizard, pairs)))
    return shown


def _markdown_label(label: str) -> str:
    return re.sub(r"([\\\[\]])", r"\\\1", label)


def append_followups(prompt: str, links: Sequence[FollowUpLink], lang: str) -> str:
    """Return ``prompt`` with the instruction line and one bullet per link appended.

    Rule: docs/wizards.md "Follow-ups".
    """
    if not links:
        return prompt
    instruction = INSTRUCTIONS["de" if lang.lower().startswith("de") else "en"]
    bullets = "\n".join(f"- [{_markdown_label(link.label)}]({link.uri})" for link in links)
    return f"{prompt.rstrip()}\n\n{instruction}\n{bullets}"


_LINK_BULLET = re.compile(r"- \[.*\]\(vance:/{1,2}wizards/[^\s)]*\)")
"""A follow-up bullet as ``append_followups`` writes it."""


def split_followups(text: str) -> tuple[str, str]:
    """Split a prompt into the task and its follow-up block (instruction line and links).

    The block is recognised as ``append_followups`` writes it: an instruction
    line of any language, then only link bullets, at the end of the text (an
    edited prompt still splits while the block is intact).

    Returns:
        ``(task, block)``; ``(text, "")`` when the text ends in no follow-up block.

    Rule: docs/wizards.md "Follow-ups" (the selector decides without the block).
    """
    lines = text.rstrip().split("\n")
    instructions = {line.strip() for line in INSTRUCTIONS.values()}
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index].strip()
        if line in instructions:
            rest = lines[index + 1:]
            if rest and all(_LINK_BULLET.fullmatch(r.strip()) for r in rest):
                return "\n".join(lines[:index]).rstrip(), "\n".join(lines[index:])
            break
        if not _LINK_BULLET.fullmatch(line):
            break
    return text, ""


def parse_link(uri: str) -> WizardLink:
    """Parse a wizard link back into its name and values (``kind`` removed).

    Accepts ``vance:/wizards/<name>?…`` and ``vance://wizards/<name>?…``.

    Raises:
        InvalidWizardLink: another scheme, not under ``wizards/``, no
            ``kind=wizard``, or a name ``check_name`` rejects.

    Rule: docs/wizards.md "Running a wizard".
    """
    parts = urlsplit(uri.strip())
    if parts.scheme != SCHEME:
        raise InvalidWizardLink(f"not a vance link (expected '{SCHEME}:/wizards/<name>?"
                                f"kind=wizard…'): {uri}", uri)
    path = (parts.netloc + parts.path) if parts.netloc else parts.path
    path = path.lstrip("/")
    if not path.startswith("wizards/"):
        raise InvalidWizardLink(f"not a wizard link (path must start with /wizards/): {uri}", uri)
    name = path.removeprefix("wizards/")
    try:
        check_name(name)
    except InvalidDocumentName as exc:
        raise InvalidWizardLink(f"bad wizard name in link: {exc.message}", uri) from None
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kinds = [value for key, value in pairs if key == "kind"]
    if kinds != [KIND]:
        found = f"kind={kinds[0]}" if kinds else "no kind"
        raise InvalidWizardLink(f"not a wizard link ({found}; expected kind=wizard): {uri}",
                                uri)
    return WizardLink(name, tuple((k, v) for k, v in pairs if k != "kind"))
