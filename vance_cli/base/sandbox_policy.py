"""The load policy of every template, checked on its syntax tree in one walk.

A template is refused at load (``TemplateRejected``, with its line) when its
tree holds (docs/wizards.md "Templates"):

- ``{% include %}``, ``{% import %}``, ``{% from … import %}`` or
  ``{% extends %}`` (there is no loader: a template reads no other file);
- a literal reach for a name starting with ``_`` (``''.__class__``,
  ``x['__mro__']``, ``x|attr('__class__')``);
- what Jinja2's code generator would refuse, so a tree that passes compiles:
  an unknown filter or test, a block defined twice, an assignment to the
  ``loop`` variable, a macro ``caller`` argument without a default.

One walk over the tree (not one per rule): listing 1,000 wizards checks some
2,000 templates, and the listing needs no compiled code
(docs/decisions/0011-check-before-compile.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jinja2 import nodes

if TYPE_CHECKING:
    from jinja2 import Environment

FORBIDDEN_TAGS: Mapping[type[nodes.Node], str] = {
    nodes.Include: "include",
    nodes.Import: "import",
    nodes.FromImport: "from … import",
    nodes.Extends: "extends",
}
"""Tags rejected at load: a template is self-contained, with no file access."""

PRIVATE_PREFIX = "_"
"""Names starting with this are internals (``__class__``, ``_private``); never reachable."""


class TemplateRejected(ValueError):
    """A template that fails to parse or breaks the load policy.

    Attributes:
        reason: one line for a person.
        line: 1-based line in the template, when known.
        tag: the forbidden tag (``include`` …) when that is the reason.
        syntax: the template does not parse (else the policy refused it).
    """

    def __init__(self, reason: str, line: int | None = None, tag: str | None = None,
                 syntax: bool = False) -> None:
        where = f"line {line}: " if line else ""
        super().__init__(where + reason)
        self.reason = reason
        self.line = line
        self.tag = tag
        self.syntax = syntax


def check_tree(tree: nodes.Template, env: Environment) -> None:
    """Check a parsed template against the policy (see the module rules), in one walk.

    Raises:
        TemplateRejected: the first problem found, with its line.
    """
    blocks: set[str] = set()
    for node in tree.find_all(nodes.Node):
        problem = _problem(node, env, blocks)
        if problem is not None:
            reason, tag = problem
            raise TemplateRejected(reason, node.lineno, tag=tag)


def _private(value: Any) -> bool:
    return str(value).startswith(PRIVATE_PREFIX)


def _problem(node: nodes.Node, env: Environment,  # noqa: PLR0911 - one rule per node type
             blocks: set[str]) -> tuple[str, str | None] | None:
    """Return ``(reason, forbidden tag or None)`` for a node that breaks the policy."""
    tag = FORBIDDEN_TAGS.get(type(node))
    if tag is not None:
        return f"{{% {tag} %}} is not allowed in a template", tag
    if isinstance(node, nodes.Getattr) and _private(node.attr):
        return f"access to '{node.attr}' is not allowed", None
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) \
            and _private(node.arg.value):
        return f"access to '{node.arg.value}' is not allowed", None
    if isinstance(node, nodes.Filter):
        if node.name == "attr" and any(isinstance(a, nodes.Const) and _private(a.value)
                                       for a in node.args):
            return "attr() of a private name is not allowed", None
        if node.name not in env.filters:
            return f"no filter named '{node.name}'", None
    if isinstance(node, nodes.Test) and node.name not in env.tests:
        return f"no test named '{node.name}'", None
    if isinstance(node, nodes.Block):
        if node.name in blocks:
            return f"block '{node.name}' defined twice", None
        blocks.add(node.name)
    if isinstance(node, nodes.For) and "loop" in _names(node.target):
        return "cannot assign to the special loop variable 'loop'", None
    if isinstance(node, nodes.Macro | nodes.CallBlock) and _caller_without_default(node):
        return "a macro's 'caller' argument must be left out or given a default", None
    return None


def _names(target: nodes.Node) -> set[str]:
    """The names a loop target assigns (``x`` or ``a, (b, c)``)."""
    found = [target] if isinstance(target, nodes.Name) else target.find_all(nodes.Name)
    return {n.name for n in found if isinstance(n, nodes.Name)}


def _caller_without_default(node: nodes.Macro | nodes.CallBlock) -> bool:
    names = [arg.name for arg in node.args]
    if "caller" not in names:
        return False
    return names.index("caller") < len(names) - len(node.defaults)
