"""How the LLM and the offline selector combine (docs/delegate.md, selector.combine)."""

from __future__ import annotations

import json

import pytest
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.selector.core import select
from vance_cli.selector.decision import Mode, NoneReason
from vance_cli.workspace import Workspace

CONFIDENT = "Summarize this meeting transcript into five bullet points"
"""The offline selector's confident MATCH: the cue 'summarize' heads the request."""

UNSURE = "Gather recent articles about solid-state batteries and list the references"
"""An offline MATCH (web-research) on two words, no cue heading it, no phrase: not
confident."""

WORDY = "Add a CSV export feature to the billing service: requirements, design, code, tests"
"""An offline MATCH (waterfall-feature) on four words of the task: confident."""

UNSURE_NONE = "Draw a mind map about the Python programming language"
"""An offline NONE by the threshold, not by a rule: not confident."""


def _online(server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch,
            combine: str | None) -> Workspace:
    for key, value in server.env(combine=combine).items():
        monkeypatch.setenv(key, value)
    return Workspace(load_settings())


def _reply(decision: str, recipe: str | None, rationale: str = "because") -> str:
    return json.dumps({"decision": decision, "recipe": recipe, "rationale": rationale})


def test_offline_first_takes_a_confident_decision_without_a_call(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    decision = select(_online(llm_server, monkeypatch, None), CONFIDENT)
    assert decision.recipe is not None and decision.recipe.name == "document-summary"
    assert decision.mode is Mode.OFFLINE and llm_server.chat_requests == []
    assert "the LLM was not asked (selector.combine offline-first)" in decision.rationale


def test_offline_first_asks_when_unsure_and_shows_the_shortlist(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    llm_server.reply(_reply("MATCH", "coding", "it is code"))
    decision = select(_online(llm_server, monkeypatch, None), UNSURE)
    assert decision.recipe is not None and decision.recipe.name == "coding"
    assert decision.mode is Mode.LLM
    user = llm_server.chat_requests[0].json["messages"][-1]["content"]
    assert "best candidates, best first: `web-research`, " in user


def test_an_offline_none_shows_the_llm_no_shortlist(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    llm_server.reply(_reply("NONE", None, "a drawing"))
    decision = select(_online(llm_server, monkeypatch, None), UNSURE_NONE)
    assert (decision.decision, decision.reason) == ("NONE", NoneReason.LLM_NONE)
    user = llm_server.chat_requests[0].json["messages"][-1]["content"]
    assert UNSURE_NONE in user and "candidates" not in user and "`translate`" not in user


@pytest.mark.parametrize("combine", ["offline-first", "llm-checked"])
def test_an_llm_none_does_not_overrule_an_unsure_offline_match(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, combine: str) -> None:
    llm_server.reply(_reply("NONE", None, "nothing fits"))
    decision = select(_online(llm_server, monkeypatch, combine), UNSURE)
    assert decision.recipe is not None and decision.recipe.name == "web-research"
    assert "the LLM answered NONE (nothing fits), but an LLM NONE does not overrule an " \
        f"offline match (selector.combine {combine})" in decision.rationale
    assert decision.trace.raw_reply  # the LLM's answer stays in the decision log


def test_llm_alone_keeps_its_none_against_an_unsure_offline_match(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    llm_server.reply(_reply("NONE", None, "nothing fits"))
    decision = select(_online(llm_server, monkeypatch, "llm"), UNSURE)
    assert (decision.decision, decision.reason) == ("NONE", NoneReason.LLM_NONE)


def test_llm_checked_a_confident_match_beats_an_llm_none(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    llm_server.reply(_reply("NONE", None, "no recipe summarises"))
    decision = select(_online(llm_server, monkeypatch, "llm-checked"), CONFIDENT)
    assert decision.recipe is not None and decision.recipe.name == "document-summary"
    assert "the LLM answered NONE (no recipe summarises)" in decision.rationale
    assert "cue 'summarize' heads the request" in decision.rationale
    assert decision.trace.raw_reply  # the LLM's answer stays in the decision log


def test_llm_checked_another_match_of_the_llm_stands(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    llm_server.reply(_reply("MATCH", "analyze", "weigh it"))
    decision = select(_online(llm_server, monkeypatch, "llm-checked"), CONFIDENT)
    assert decision.recipe is not None and decision.recipe.name == "analyze"


def test_llm_alone_keeps_its_none(llm_server: ScriptedLLMServer,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    llm_server.reply(_reply("NONE", None, "nothing fits"))
    decision = select(_online(llm_server, monkeypatch, "llm"), CONFIDENT)
    assert (decision.decision, decision.reason) == ("NONE", NoneReason.LLM_NONE)


@pytest.mark.parametrize("combine", ["offline-first", "llm-checked"])
def test_an_unusable_llm_answer_leaves_the_offline_match(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, combine: str) -> None:
    llm_server.fail(503, "overloaded", headers={"x-should-retry": "false"})
    decision = select(_online(llm_server, monkeypatch, combine), UNSURE)
    assert decision.recipe is not None and decision.recipe.name == "web-research"
    assert "the LLM gave no usable answer (llm_error" in decision.rationale


def test_four_words_of_the_task_are_confident(llm_server: ScriptedLLMServer,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    decision = select(_online(llm_server, monkeypatch, None), WORDY)
    assert decision.recipe is not None and decision.recipe.name == "waterfall-feature"
    assert "4 words of the task" in decision.rationale and llm_server.chat_requests == []


def test_an_llm_failure_with_an_offline_none_is_still_the_failure(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    llm_server.fail(503, "overloaded", headers={"x-should-retry": "false"})
    decision = select(_online(llm_server, monkeypatch, None), UNSURE_NONE)
    assert decision.reason is NoneReason.LLM_ERROR


def test_a_prompt_over_the_context_window_is_asked_again_short(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    llm_server.fail(400, "Requested tokens (3310) exceed context window of 2048")
    llm_server.reply(_reply("MATCH", "coding"))
    decision = select(_online(llm_server, monkeypatch, "llm"), UNSURE)
    assert decision.recipe is not None and decision.recipe.name == "coding"
    full, short = (r.json["messages"] for r in llm_server.chat_requests)
    assert len(short[0]["content"]) < len(full[0]["content"]) / 3
    assert UNSURE in short[-1]["content"]


def test_the_system_message_does_not_depend_on_the_task(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _online(llm_server, monkeypatch, "llm")
    for task in (UNSURE, UNSURE_NONE):
        llm_server.reply(_reply("NONE", None))
        select(ws, task)
    first, second = (r.json["messages"] for r in llm_server.chat_requests)
    assert first[0] == second[0] and first[-1] != second[-1]


def test_an_offline_decision_beside_an_llm_does_not_say_no_llm_is_configured(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    decision = select(_online(llm_server, monkeypatch, None), CONFIDENT)
    assert decision.rationale.startswith("offline selector: 'document-summary' matched")
    assert "no LLM configured" not in decision.rationale
