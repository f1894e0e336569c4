"""The UI-free form walk and the prefill sources."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import pytest

from vance_cli.base.errors import Cancelled, DocumentError, FormInvalid, InputError
from vance_cli.documents.cascade import Layer
from vance_cli.wizards.form import (
    Question,
    RepeatQuestion,
    fill_form,
    link_prefill,
    merge_prefill,
    read_values,
    require_complete,
)
from vance_cli.wizards.loader import parse_wizard
from vance_cli.wizards.prompt import RenderContext, build_prompt

WIZARD = parse_wizard({
    "title": "T",
    "promptTemplate": "{{ title }}|{% for m in members %}{{ m.name }}={{ m.age }};{% endfor %}"
                      "|{{ ok }}",
    "fields": [
        {"name": "title", "type": "string", "required": True, "label": {"de": "Titel"}},
        {"name": "members", "type": "repeat", "min": 1, "max": 3,
         "item": [{"name": "name", "type": "string", "required": True},
                  {"name": "age", "type": "integer", "integerMin": 0}]},
        {"name": "ok", "type": "boolean", "defaultValue": True},
    ],
}, "t", Layer.RESOURCE, Path("t.yaml"))


class ScriptedAsker:
    """Answers from a queue; refuses answers ``question.check`` rejects, like the terminal."""

    def __init__(self, *answers: Any) -> None:
        self.answers = deque(answers)
        self.log: list[str] = []

    def _next(self) -> Any:
        answer = self.answers.popleft()
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def ask(self, question: Question) -> Any:
        self.log.append(f"ask {question.path} default={question.default!r}"
                        + (f" error={question.error}" if question.error else ""))
        while True:
            answer = self._next()
            problem = question.check(answer)
            if problem is None:
                return answer
            self.log.append(f"refused {answer!r}: {problem}")

    def another(self, question: RepeatQuestion) -> bool:
        self.log.append(f"another {question.path} count={question.count} "
                        f"low={question.low} high={question.high}")
        return bool(self._next())

    def section(self, title: str) -> None:
        self.log.append(f"section {title}")


def test_walk_asks_in_order_refuses_invalid_and_loops_the_repeat() -> None:
    asker = ScriptedAsker("", "Council", "Ada", "x", "36", True, "Bob", "", True, "Cy", "1",
                          False)
    answers = fill_form(WIZARD.spec.fields, {}, asker, "en")
    assert asker.log == [
        "ask title default=None", "refused '': a value is required",
        "section members 1/3", "ask members[0].name default=None",
        "ask members[0].age default=None", "refused 'x': expected a whole number",
        "another members count=1 low=1 high=3",
        "section members 2/3", "ask members[1].name default=None",
        "ask members[1].age default=None",
        "another members count=2 low=1 high=3",
        "section members 3/3", "ask members[2].name default=None",
        "ask members[2].age default=None",
        "ask ok default=True",
    ]
    prompt = build_prompt(WIZARD, answers, RenderContext("en", "u", "p"))
    assert prompt.text == "Council|Ada=36;Bob=;Cy=1;|False"


def test_valid_prefills_are_skipped_and_invalid_ones_asked_with_their_error() -> None:
    asker = ScriptedAsker("7", False)
    answers = fill_form(WIZARD.spec.fields,
                        {"title": "T", "members": [{"name": "A", "age": "-1"}], "ok": "no"},
                        asker, "de")
    assert asker.log == [
        "section members 1/3",
        "ask members[0].age default='-1' error=members[0].age: muss mindestens 0 sein",
        "another members count=1 low=1 high=3",
    ]
    assert answers == {"title": "T", "members": [{"name": "A", "age": "7"}], "ok": "no"}


def test_too_many_prefilled_entries_are_cut_to_max_with_the_reason_shown() -> None:
    asker = ScriptedAsker()
    given = [{"name": str(i), "age": i} for i in range(5)]
    answers = fill_form(WIZARD.spec.fields, {"title": "T", "members": given, "ok": True},
                        asker, "en")
    assert asker.log[0] == "section members: allows at most 3 entries"
    assert answers["members"] == given[:3]


def test_invalid_scalar_prefill_is_shown_and_used_as_default() -> None:
    asker = ScriptedAsker("5", False)
    wizard = parse_wizard({"title": "T", "promptTemplate": "{{ n }}", "fields": [
        {"name": "n", "type": "integer", "integerMax": 9}]}, "n", Layer.RESOURCE, Path("n"))
    answers = fill_form(wizard.spec.fields, {"n": "12"}, asker, "en")
    assert asker.log == ["ask n default='12' error=n: must be at most 9"]
    assert answers == {"n": "5"}


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt(), EOFError()])
def test_ctrl_c_and_ctrl_d_cancel_with_the_partial_answers(interrupt: BaseException) -> None:
    asker = ScriptedAsker("Council", "Ada", interrupt)
    with pytest.raises(Cancelled) as caught:
        fill_form(WIZARD.spec.fields, {}, asker, "en")
    assert caught.value.exit_code == 130
    assert caught.value.partial == {"title": "Council", "members": [{"name": "Ada"}]}


def test_read_values_json_yaml_and_crlf_give_the_same_answers() -> None:
    yaml_lf = "title: Council\nmembers:\n  - name: Ada\n    age: 36\nnote: |\n  a\n  b\n"
    crlf = yaml_lf.replace("\n", "\r\n")
    as_json = '{"title": "Council", "members": [{"name": "Ada", "age": 36}], "note": "a\\nb\\n"}'
    parsed = [read_values(text, "f") for text in (yaml_lf, crlf, "\ufeff" + crlf, as_json)]
    assert all(p == parsed[0] for p in parsed)
    assert parsed[0]["note"] == "a\nb\n"
    assert read_values("", "f") == {}
    with pytest.raises(InputError):
        read_values("- a\n- b\n", "f")
    with pytest.raises(DocumentError):
        read_values("{bad", "f")


def test_merge_prefill_later_wins_and_reports_unknown_keys() -> None:
    prefill = merge_prefill(WIZARD.spec.fields, {"title": "A", "nope": 1}, {"title": "B"},
                            {"other": 2, "nope": 3})
    assert prefill.values == {"title": "B"} and prefill.unknown == ("nope", "other")


def test_link_prefill_drops_unknown_keys_and_repeat_fields() -> None:
    prefill = link_prefill(WIZARD.spec.fields, [("title", "T"), ("members", "x"),
                                                ("zzz", "1"), ("ok", "yes")])
    assert prefill.values == {"title": "T", "ok": "yes"} and prefill.unknown == ()


def test_require_complete_names_the_missing_fields() -> None:
    with pytest.raises(FormInvalid) as caught:
        require_complete(WIZARD.spec.fields, {"members": [{"age": "x"}]}, "stdin is not a terminal")
    message = caught.value.message
    assert message.startswith("missing values for title, members[0].name (stdin is not a")
    assert "invalid: members[0].age: expected_integer" in message
    assert caught.value.to_json()["errors"][0] == {"field": "title", "error": "required"}
    require_complete(WIZARD.spec.fields, {"title": "x", "members": [{"name": "A"}]})


@pytest.mark.parametrize(("why", "how", "tail"), [
    ("--no-input", None, "(--no-input)"),
    ("a script", "give them with /wizard w --values FILE",
     "(a script; give them with /wizard w --values FILE)"),
    (None, None, ""),
])
def test_require_complete_names_only_the_hint_its_caller_gives(
        why: str | None, how: str | None, tail: str) -> None:
    with pytest.raises(FormInvalid) as caught:
        require_complete(WIZARD.spec.fields, {}, why, how)
    assert caught.value.message == f"missing values for title {tail}".rstrip()
