"""The wizard sandbox: load-time policy, render-time policy, syntax rules."""

from __future__ import annotations

from typing import Any

import pytest

from vance_cli.base.errors import RenderError
from vance_cli.base.sandbox import (
    MAX_OUTPUT_CHARS,
    TemplateRejected,
    compile_condition,
    compile_template,
    render,
)


def _render(source: str, **variables: Any) -> str:
    return render(compile_template(source), variables, "t")


@pytest.mark.parametrize(("source", "reason"), [
    ("{{ ''.__class__.__mro__ }}", "is not allowed"),
    ("{{ ''.__class__ }}", "access to '__class__' is not allowed"),
    ("{{ x['__globals__'] }}", "access to '__globals__' is not allowed"),
    ("{{ x|attr('__class__') }}", "attr() of a private name"),
    ("{{ x._private }}", "access to '_private'"),
    ("{% include 'other.txt' %}", "{% include %} is not allowed"),
    ("{% import 'macros.txt' as m %}", "{% import %} is not allowed"),
    ("{% from 'macros.txt' import m %}", "{% from … import %} is not allowed"),
    ("{% extends 'base.txt' %}", "{% extends %} is not allowed"),
    ("line\n{% for x in %}", "line 2"),
    ("{{ x ", "line 1"),
])
def test_policy_and_syntax_fail_at_load(source: str, reason: str) -> None:
    with pytest.raises(TemplateRejected) as caught:
        compile_template(source)
    assert reason in str(caught.value)


@pytest.mark.parametrize(("source", "variables"), [
    ("{{ x|attr(name) }}", {"x": "", "name": "__class__"}),
    ("{{ x[name] }}", {"x": "", "name": "__class__"}),
    ("{{ f[name] }}", {"f": len, "name": "__self__"}),
    ("{{ (x|attr(a))|attr(b) }}", {"x": "", "a": "__class__", "b": "__mro__"}),
])
def test_dynamic_private_access_is_a_render_error_not_internals(source: str,
                                                               variables: Any) -> None:
    with pytest.raises(RenderError) as caught:
        render(compile_template(source), variables, "t")
    assert "is not allowed" in caught.value.message
    assert "<class" not in caught.value.message


@pytest.mark.parametrize(("source", "limit"), [
    ("{{ 'x' * 2000000 }}", "output limit"),
    ("{% for i in range(100000) %}{% endfor %}", "range()"),
    ("{{ 10 ** 1000 }}", "exponent"),
    ("{% for i in range(2000) %}{{ 'y' * 999 }}{% endfor %}", "exceeds 1,000,000"),
    ("{{ 1 / 0 }}", "division"),
    ("{{ x.upper(1, 2, 3) }}", "rendering failed"),
])
def test_resource_limits_and_runtime_errors_become_one_render_error(source: str,
                                                                   limit: str) -> None:
    with pytest.raises(RenderError) as caught:
        _render(source, x="a")
    assert limit in caught.value.message
    assert caught.value.exit_code == 1 and caught.value.wizard == "t"


def test_output_just_below_the_cap_renders() -> None:
    text = _render("{{ 'z' * n }}", n=MAX_OUTPUT_CHARS)
    assert len(text) == MAX_OUTPUT_CHARS


def test_undefined_renders_empty_also_when_chained() -> None:
    assert _render("[{{ missing }}|{{ a.b.c }}|{{ a.b.c | upper }}]") == "[||]"
    assert _render("{% if a.b.c %}yes{% else %}no{% endif %}") == "no"
    assert _render("{% for x in nothing %}x{% endfor %}done") == "done"


def test_no_html_escaping() -> None:
    assert _render("{{ v }}", v="<b>&\"'</b>") == "<b>&\"'</b>"


def test_elseif_is_accepted_as_elif_outside_raw_blocks() -> None:
    source = ("{% if n == 1 %}one{% elseif n == 2 %}two{%- elseif n == 3 %}three"
              "{% else %}many{% endif %}")
    assert [_render(source, n=n) for n in (1, 2, 3, 4)] == ["one", "two", "three", "many"]
    assert _render("{% raw %}{% elseif %}{% endraw %}") == "{% elseif %}"


def test_block_tags_eat_their_newline_so_lists_render_one_item_a_line() -> None:
    source = "Items:\n{% for i in items %}\n- {{ i }}\n{% endfor %}\nEnd\n"
    assert _render(source, items=["a", "b", "c"]) == "Items:\n- a\n- b\n- c\nEnd"


def test_conditions_as_expression_or_template() -> None:
    for source in ("name and n > 1", "{{ name and n > 1 }}"):
        condition = compile_condition(source)
        assert render(condition, {"name": "x", "n": 2}).strip() in ("true", "True")
        assert render(condition, {"name": "", "n": 2}).strip() in ("", "False", "")
    with pytest.raises(TemplateRejected):
        compile_condition("x.__class__")
