"""``showIf``: whether a field is asked, from the answers before it (docs/wizards.md).

Rules:
- A ``showIf`` is a Jinja2 expression (or a ``{{ … }}`` / ``{% … %}`` text), evaluated
  in the template sandbox over the typed values of the fields before it on the same
  level (an entry's fields see that entry), plus ``lang``, ``user``, ``project`` when
  given.
- It is shown when the result is truthy (``truthy_text``); an evaluation error counts
  as hidden, as a follow-up's condition does.
- Compiled conditions are cached by their text: a form asks them again after every
  answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from jinja2 import nodes

from vance_cli.base.sandbox import (
    TemplateRejected,
    compile_condition,
    condition_source,
    parse_template,
    render_text,
    truthy_text,
)
from vance_cli.wizards.model import RESERVED_NAMES

if TYPE_CHECKING:
    from jinja2 import Template

    from vance_cli.wizards.model import WizardField


@lru_cache(maxsize=1024)
def _compiled(source: str) -> Template:
    return compile_condition(source)


def is_shown(field: WizardField, values: Mapping[str, Any]) -> bool:
    """Return whether ``field`` is asked given the typed ``values`` before it."""
    if field.show_if is None:
        return True
    try:
        return truthy_text(render_text(_compiled(field.show_if), values))
    except Exception:  # an evaluation error hides the field, as a follow-up's condition
        return False


@lru_cache(maxsize=4096)
def condition_names(source: str) -> frozenset[str]:
    """Return the variables a condition reads (cached by text: copies of a wizard share it).

    Raises:
        TemplateRejected: it does not parse or breaks the sandbox policy.
    """
    tree = parse_template(condition_source(source))
    # a walk of the tree, not jinja2.meta (which runs the code generator: a listing of
    # 1,000 wizards checks every showIf)
    return frozenset(node.name for node in tree.find_all(nodes.Name) if node.ctx == "load")


def check_conditions(fields: Sequence[WizardField], prefix: str) -> None:
    """Raise ValueError for a ``showIf`` that does not parse or names an unknown or later field.

    Args:
        fields: one level of a form, in the order asked.
        prefix: the path of that level for messages (``fields``, ``fields[2].item``).
    """
    names = [f.name for f in fields]
    for index, field in enumerate(fields):
        where = f"{prefix}[{index}].showIf"
        if field.show_if is not None:
            try:
                used = condition_names(field.show_if)
            except TemplateRejected as exc:
                raise ValueError(f"{where}: {exc}") from None
            for name in sorted(used - RESERVED_NAMES):
                if name == field.name:
                    raise ValueError(f"{where}: '{name}' is the field itself")
                if name in names[index + 1:]:
                    raise ValueError(f"{where}: '{name}' is a later field (a showIf sees only "
                                     "the answers before it)")
                if name not in names:
                    raise ValueError(f"{where}: '{name}' is not a field")
        if field.item:
            check_conditions(field.item, f"{prefix}[{index}].item")
