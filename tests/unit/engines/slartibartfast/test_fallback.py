"""The delegate flow's fallback rules: when the runner is called, and what a skipped one says."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.delegate.flow import delegate
from vance_cli.delegate.request import DelegateRequest
from vance_cli.processes.model import Process
from vance_cli.selector.decision import Decision, NoneReason
from vance_cli.state.decision_log import recent
from vance_cli.workspace import Workspace


@dataclass(frozen=True)
class _Outcome:
    process: Process | None = None

    def to_json(self) -> dict[str, Any]:
        return {"outcome": "FAILED", "slartProcessId": None, "recipeName": None,
                "recipePath": None, "rationale": "test"}


@pytest.mark.parametrize(("reason", "note"), [
    (NoneReason.NO_RECIPES, None),
    (NoneReason.OFFLINE_NO_MATCH, None),
    (NoneReason.LLM_NONE, None),
    (NoneReason.UNKNOWN_RECIPE, None),
    (NoneReason.EMPTY_TASK, None),
    (NoneReason.LLM_ERROR, "the LLM call failed"),
    (NoneReason.TIMEOUT, "the LLM call failed"),
    (NoneReason.NO_JSON, "reply was unusable"),
    (NoneReason.JSON_ERROR, "reply was unusable"),
    (NoneReason.TRUNCATED, "reply was unusable"),
    (NoneReason.INVALID_DECISION, "reply was unusable"),
    (NoneReason.AMBIGUOUS, "reply was unusable"),
    (NoneReason.SELECTOR_ERROR, "the selector could not run"),
])
def test_no_fallback_note(reason: NoneReason, note: str | None) -> None:
    text = reason.no_fallback_note
    if note is None:
        assert text is None
    else:
        assert text is not None and text.startswith("no Slartibartfast fallback: ")
        assert note in text


def test_skipped_fallback_is_explained_but_the_log_keeps_the_selector_rationale(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    calls: list[Decision] = []

    def runner(_ws: Workspace, _r: DelegateRequest, decision: Decision) -> _Outcome:
        calls.append(decision)
        return _Outcome()

    ws = Workspace(load_settings())
    llm_server.fail(500, "down")
    result = delegate(ws, DelegateRequest(task="Turn off the lights"), fallback=runner)
    failed = "LLM call failed: HTTP 500: down (at " + llm_server.url.split("//")[1].split("/")[0]
    assert result.to_json()["rationale"] == (
        f"{failed}) — no Slartibartfast fallback: the LLM call failed, "
        "and Slartibartfast would call the same endpoint")
    assert recent(ws.db, "default")[0].rationale == f"{failed})"
    llm_server.fail(500, "down")
    plain = delegate(ws, DelegateRequest(task="Turn off the lights"))
    assert plain.to_json()["rationale"] == f"{failed})"
    assert calls == []


def test_dry_run_never_calls_the_runner() -> None:
    calls: list[Decision] = []

    def runner(_ws: Workspace, _r: DelegateRequest, decision: Decision) -> _Outcome:
        calls.append(decision)
        return _Outcome()

    ws = Workspace(load_settings())
    result = delegate(ws, DelegateRequest(task="Turn off the lights", dry_run=True),
                      fallback=runner)
    assert result.fallback is None and calls == []
    delegate(ws, DelegateRequest(task="Turn off the lights"), fallback=runner)
    assert [d.reason for d in calls] == [NoneReason.OFFLINE_NO_MATCH]
