"""Follow-up links: conditions, templated labels and prefills, encoding and the round trip."""

from __future__ import annotations

from typing import Any

import pytest

from vance_cli.base.errors import InvalidWizardLink
from vance_cli.wizards.followups import (
    INSTRUCTIONS,
    append_followups,
    build_link,
    compile_followup,
    parse_link,
    resolve_followups,
    split_followups,
)
from vance_cli.wizards.model import FollowUp


def _compiled(**spec: Any) -> Any:
    return compile_followup(FollowUp.model_validate({"wizard": "next", **spec}))


@pytest.mark.parametrize("value", [
    "plain", "two words", "a+b=c&d", "100% (sure)", "ümläut — ß", "line\nbreak",
    "[brackets]", "#hash?query", "  padded  ", "quote\"'", "slash/and\\back", "tab\tend",
])
def test_link_values_survive_the_round_trip(value: str) -> None:
    uri = build_link("essay-mit-recipe", [("recipe", value), ("other", "x")])
    assert " " not in uri and "(" not in uri and ")" not in uri
    link = parse_link(uri)
    assert link.name == "essay-mit-recipe"
    assert link.values == (("recipe", value), ("other", "x"))


def test_link_shape_is_form_encoded_with_keys_in_order() -> None:
    uri = build_link("essay-mit-recipe", [("recipe", "my essay"), ("a", "1")])
    assert uri == "vance:/wizards/essay-mit-recipe?kind=wizard&recipe=my+essay&a=1"


@pytest.mark.parametrize(("uri", "message"), [
    ("https://example.com/wizards/x?kind=wizard", "not a vance link"),
    ("vance:/recipes/x?kind=wizard", "path must start with /wizards/"),
    ("vance:/wizards/x", "no kind"),
    ("vance:/wizards/x?kind=recipe", "kind=recipe"),
    ("vance:/wizards/../etc/passwd?kind=wizard", "bad wizard name"),
    ("vance:/wizards/?kind=wizard", "bad wizard name"),
    ("vance:/wizards/a%20b?kind=wizard", "bad wizard name"),
])
def test_bad_links_are_rejected_clearly(uri: str, message: str) -> None:
    with pytest.raises(InvalidWizardLink) as caught:
        parse_link(uri)
    assert message in caught.value.message and caught.value.exit_code == 2


def test_double_slash_form_is_accepted() -> None:
    assert parse_link("vance://wizards/gremium?kind=wizard&x=1").values == (("x", "1"),)


@pytest.mark.parametrize(("condition", "variables", "shown"), [
    (None, {}, True),
    ("name", {"name": "x"}, True),
    ("name", {"name": ""}, False),
    ("name", {}, False),
    ("{{ flag }}", {"flag": False}, False),
    ("{{ flag }}", {"flag": True}, True),
    ("n > 3", {"n": 5}, True),
    ("n > 3", {"n": "text"}, False),         # fails to evaluate → false
    ("items[9].x == 1", {"items": []}, False),
])
def test_condition(condition: str | None, variables: dict[str, Any], shown: bool) -> None:
    spec = _compiled(condition=condition)
    assert bool(resolve_followups([spec], variables, "en", "w")) is shown


def test_label_and_prefill_are_templates_and_empty_prefill_is_left_out() -> None:
    spec = _compiled(label={"de": "Mit „{{ r }}“ weiter", "en": "Continue with {{ r }}"},
                     prefill={"recipe": "{{ r }}", "audience": "{{ missing }}",
                              "fixed": "kept"})
    (link,) = resolve_followups([spec], {"r": "my essay"}, "de", "w")
    assert link.label == "Mit „my essay“ weiter"
    assert link.uri == "vance:/wizards/next?kind=wizard&recipe=my+essay&fixed=kept"
    (link,) = resolve_followups([spec], {"r": "x"}, "fr", "w")
    assert link.label == "Continue with x"


def test_empty_label_falls_back_to_the_wizard_name() -> None:
    for spec in (_compiled(), _compiled(label="{{ nothing }}")):
        (link,) = resolve_followups([spec], {}, "en", "w")
        assert link.label == "next"


@pytest.mark.parametrize("lang", ["de", "en", "fr"])
def test_instruction_line_in_german_or_english(lang: str) -> None:
    (link,) = resolve_followups([_compiled(label="Go [now]")], {}, lang, "w")
    text = append_followups("Prompt body\n\n", [link], lang)
    expected = INSTRUCTIONS["de" if lang == "de" else "en"]
    assert text == (f"Prompt body\n\n{expected}\n"
                    "- [Go \\[now\\]](vance:/wizards/next?kind=wizard)")
    assert append_followups("Body", [], lang) == "Body"


@pytest.mark.parametrize("lang", ["de", "en"])
def test_the_follow_up_block_splits_off_again(lang: str) -> None:
    links = resolve_followups([_compiled(label="Go (now) [x]"), _compiled(label="b")], {},
                              lang, "w")
    text = append_followups("Prompt body\n- a bullet of the task", links, lang)
    task, block = split_followups(text)
    assert task == "Prompt body\n- a bullet of the task"
    assert block.startswith(INSTRUCTIONS[lang]) and block.count("vance:/wizards/") == 2
    edited = text.replace("Prompt body", "Edited body") + "\n"
    assert split_followups(edited)[0] == "Edited body\n- a bullet of the task"


@pytest.mark.parametrize("text", [
    "Just a task",
    f"A task that quotes\n{INSTRUCTIONS['en']}\nand goes on",
    f"{INSTRUCTIONS['en']}\n- [x](https://example.org)",
])
def test_a_text_without_a_follow_up_block_stays_whole(text: str) -> None:
    assert split_followups(text) == (text, "")
