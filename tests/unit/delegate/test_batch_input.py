"""Batch input: items (plain lines, JSON lines, CRLF, BOM) and the task template."""

from __future__ import annotations

import pytest

from vance_cli.base.errors import InputError, TaskTemplateError
from vance_cli.delegate.batch_input import (
    MAX_TASK_CHARS,
    NEEDS_AN_ITEM,
    PLACEHOLDER,
    SAYS_NOTHING,
    STEER_LABEL,
    TASK_LABEL,
    TITLE_LABEL,
    Item,
    ItemsFormat,
    TaskTemplate,
    decode_items,
    item_context,
    parse_items,
)


@pytest.mark.parametrize(("text", "fmt", "expected"), [
    ("a\nb\n", ItemsFormat.AUTO, [(1, 1, "a"), (2, 2, "b")]),
    ("a\r\nb\r\n", ItemsFormat.AUTO, [(1, 1, "a"), (2, 2, "b")]),
    ("a\rb", ItemsFormat.AUTO, [(1, 1, "a"), (2, 2, "b")]),
    ("\n  \n a b \n\n\tc\n", ItemsFormat.AUTO, [(1, 3, "a b"), (2, 5, "c")]),
    ("", ItemsFormat.AUTO, []),
    ("\u200b\u200d\ufeff\n \u2060 \na\n", ItemsFormat.AUTO, [(1, 3, "a")]),  # blank lines
    ("one\u2028two\n", ItemsFormat.AUTO, [(1, 1, "one\u2028two")]),  # only LF/CR/CRLF split
    ('{"a": 1}\n', ItemsFormat.LINES, [(1, 1, '{"a": 1}')]),
    ('\n  {"a": 1}\r\n{"b": [2]}\n', ItemsFormat.AUTO, [(1, 2, {"a": 1}), (2, 3, {"b": [2]})]),
    ('{"a": 1}\n', ItemsFormat.JSONL, [(1, 1, {"a": 1})]),
])
def test_parse_items(text: str, fmt: ItemsFormat, expected: list[tuple]) -> None:
    items = parse_items(text, fmt)
    assert [(i.number, i.line, i.value) for i in items] == expected
    assert all(i.problem is None for i in items)


@pytest.mark.parametrize(("line", "problem"), [
    ("{oops", "invalid JSON"),
    ("[1, 2]", "expected a JSON object, got list"),
    ('"text"', "expected a JSON object, got str"),
    ("plain words", "invalid JSON"),
])
def test_bad_json_lines_are_items_with_a_problem(line: str, problem: str) -> None:
    items = parse_items('{"ok": true}\n' + line + '\n{"ok": false}\n')
    assert [i.value for i in items] == [{"ok": True}, None, {"ok": False}]
    assert items[1].problem is not None and items[1].problem.startswith(problem)
    with pytest.raises(InputError) as caught:
        TaskTemplate("x {{ item }}").render(items[1])
    assert caught.value.message == f"item 2 (line 2): {problem}" or \
        caught.value.message.startswith(f"item 2 (line 2): {problem}: ")


def test_forced_jsonl_reads_a_plain_first_line_as_a_bad_item() -> None:
    items = parse_items('plain\n{"a": 1}\n', ItemsFormat.JSONL)
    assert items[0].problem is not None and items[1].value == {"a": 1}


def test_decode_items_tolerates_a_bom_and_rejects_other_encodings() -> None:
    assert decode_items("\ufeffa\n".encode(), "f.txt") == "a\n"
    with pytest.raises(InputError,
                       match=r"items file 'f\.txt' is not valid UTF-8 \(byte 0xe9 at offset 0\)"):
        decode_items("é".encode("latin-1"), "f.txt")
    with pytest.raises(InputError, match=r"stdin \(--items -\) is not valid UTF-8"):
        decode_items(b"\xff", "-")


def test_context_keys_item_and_index_win() -> None:
    item = Item(3, 7, {"item": "shadowed", "index": 99, "topic": "tea"})
    ctx = item_context(item)
    assert ctx["item"] == item.value and ctx["index"] == 3 and ctx["topic"] == "tea"
    assert item_context(Item(1, 1, "line")) == {"item": "line", "index": 1}


@pytest.mark.parametrize(("source", "shape"), [
    ("Translate {{ item }} into French", "Translate … into French"),
    ("Summarize {{ item.url }} for {{ audience }}", "Summarize … for …"),
    ("Ask {{ item['who'] | upper }} about {{ item.a.b.c }}", f"Ask {PLACEHOLDER} about …"),
    ("Plan{% if item.urgent %} urgently{% endif %}: {{ item }}", "Plan: …"),
    ("Review{% for x in item.files %} {{ x }}{% endfor %} now", "Review now"),
    ("Constant task", "Constant task"),
    ("{{ item }}", None),  # nothing but the item: the shape says nothing
    (" {{ item }} … {{ index }}. ", None),
    ("{{ item + 1 }} apples", None),  # cannot render without a real item
])
def test_shape(source: str, shape: str | None) -> None:
    assert TaskTemplate(source).shape() == shape


def test_render_strict_but_tests_are_false() -> None:
    template = TaskTemplate("Fix {{ item.bug }}{% if item.urgent %} now{% endif %}")
    assert template.render(Item(1, 1, {"bug": "#12", "urgent": True})) == "Fix #12 now"
    assert template.render(Item(2, 2, {"bug": "#13"})) == "Fix #13"
    with pytest.raises(TaskTemplateError, match=r"item 3 \(line 5\).*has no attribute 'bug'"):
        template.render(Item(3, 5, {"other": 1}))
    with pytest.raises(TaskTemplateError, match="'topic' is undefined"):
        TaskTemplate("About {{ topic }}").render(Item(1, 1, "plain"))


def test_braces_and_jinja_in_items_are_plain_text() -> None:
    item = Item(1, 1, "{{ 7 * 7 }} {% raw %} {item}")
    assert TaskTemplate("Do {{ item }}").render(item) == "Do {{ 7 * 7 }} {% raw %} {item}"


@pytest.mark.parametrize("source", [
    "{{ range(10**8) | list }}",
    "{{ item.a.__class__ }}",
])
def test_sandbox_refusals_are_the_items_error(source: str) -> None:
    with pytest.raises(TaskTemplateError, match="item 1 "):
        TaskTemplate(source.replace(".__class__", "|attr('_' ~ '_class__')")).render(
            Item(1, 1, {"a": 1}))


@pytest.mark.parametrize("source", ["{{ item.__class__.__mro__ }}", "{{ ''.__class__ }}"])
def test_a_reach_for_internals_is_refused_at_once(source: str) -> None:
    with pytest.raises(TaskTemplateError) as caught:
        TaskTemplate(source)
    assert caught.value.message.startswith("task template (--task-template) is not allowed: "
                                           "access to '__")
    assert caught.value.exit_code == 2


def test_output_is_capped() -> None:
    template = TaskTemplate("{% for i in range(10000) %}{{ item }}{% endfor %}")
    with pytest.raises(TaskTemplateError, match=f"longer than {MAX_TASK_CHARS}"):
        template.render(Item(1, 1, "x" * 200))


# Hostile templates end with the item's error, in the same sandbox as the wizards'
# (before: the stock sandbox ran {{ 'a' * 10**9 }} for 49.6 s in 4.8 GB).
@pytest.mark.timeout(10)
@pytest.mark.parametrize("source", [
    "{{ 'a' * 10**9 }}",
    "{{ 'x'|center(10**9) }}",
    "{{ lipsum(10**6) }}",
    "{% for a in range(10000) %}{% for b in range(10000) %}{% for c in range(10000) %}"
    "{% endfor %}{% endfor %}{% endfor %}",
])
def test_hostile_templates_are_the_items_error(source: str) -> None:
    with pytest.raises(TaskTemplateError, match="item 1 "):
        TaskTemplate(source).render(Item(1, 1, "x"))


@pytest.mark.parametrize(("source", "tag"), [
    ('Translate {{ item }} {% include "/etc/passwd" %}', "include"),
    ("{% import 'macros' as m %}{{ item }}", "import"),
    ("{% from 'm' import x %}{{ item }}", "from … import"),
    ("{% extends 'base' %}", "extends"),
    ("ok\n{% if item %}{% include item %}{% endif %}", "include"),
])
@pytest.mark.parametrize("label", [TASK_LABEL, TITLE_LABEL, STEER_LABEL])
def test_templates_that_read_other_files_are_rejected_at_once(source: str, tag: str,
                                                               label: str) -> None:
    with pytest.raises(TaskTemplateError) as caught:
        TaskTemplate(source, label)
    assert caught.value.message.startswith(f"{label} uses {{% {tag} %}} (line ")
    assert "include, import and extends are not allowed" in caught.value.message
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("label", [TASK_LABEL, TITLE_LABEL, STEER_LABEL])
def test_an_undefined_variable_names_the_template_and_the_variable(label: str) -> None:
    with pytest.raises(TaskTemplateError) as caught:
        TaskTemplate("Hi {{ nope }}", label).render(Item(3, 4, {"name": "Ann"}))
    assert caught.value.message == (f"item 3 (line 4): {label}: 'nope' is undefined"
                                    " (this item has: index, item, name)")


@pytest.mark.parametrize(("source", "why"), [
    ("{{ item }}", SAYS_NOTHING),
    ("{{ item * 2 }} items", NEEDS_AN_ITEM),
    ("Translate {{ item }}", ""),
])
def test_shape_or_why_says_why_the_template_is_not_asked(source: str, why: str) -> None:
    shape, reason = TaskTemplate(source).shape_or_why()
    assert reason == why and (shape is None) == bool(why)


def test_a_template_that_does_not_compile_fails_at_once() -> None:
    with pytest.raises(TaskTemplateError, match=r"does not compile: .*\(line 2\)") as info:
        TaskTemplate("ok\n{% if %}")
    assert info.value.exit_code == 2
