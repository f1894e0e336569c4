from __future__ import annotations

import pytest

from vance_cli.base.errors import DocumentError, LLMError
from vance_cli.recipes.loader import Recipe
from vance_cli.selector.decision import (
    Decision,
    Mode,
    NoneReason,
    SelectorFailure,
    match,
    none,
    none_for,
)

DECISION_KEYS = {"decision", "recipe", "engine", "rationale", "reason"}


@pytest.mark.parametrize(("reason", "eligible"), [
    (NoneReason.NO_RECIPES, True),
    (NoneReason.UNKNOWN_RECIPE, True),
    (NoneReason.LLM_NONE, True),
    (NoneReason.OFFLINE_NO_MATCH, True),
    (NoneReason.EMPTY_TASK, False),
    (NoneReason.LLM_ERROR, False),
    (NoneReason.TIMEOUT, False),
    (NoneReason.NO_JSON, False),
    (NoneReason.JSON_ERROR, False),
    (NoneReason.TRUNCATED, False),
    (NoneReason.INVALID_DECISION, False),
    (NoneReason.AMBIGUOUS, False),
    (NoneReason.SELECTOR_ERROR, False),
])
def test_fallback_eligibility(reason: NoneReason, eligible: bool) -> None:
    assert reason.fallback_eligible is eligible


def test_every_reason_is_in_the_table_above() -> None:
    assert len(NoneReason) == 13


def test_reason_codes_are_stable_strings() -> None:
    assert {r.value for r in NoneReason} == {
        "empty_task", "no_recipes", "llm_error", "timeout", "no_json", "json_error",
        "truncated", "invalid_decision", "ambiguous_reply", "unknown_recipe", "llm_none",
        "offline_no_match", "selector_error"}


@pytest.mark.parametrize(("failure", "reason", "prefix"), [
    (SelectorFailure(NoneReason.NO_JSON, "LLM reply has no JSON object"), NoneReason.NO_JSON,
     "LLM reply has no JSON object"),
    (LLMError("HTTP 500: boom"), NoneReason.LLM_ERROR, "LLM call failed: HTTP 500: boom"),
    (LLMError("timed out after 2 s", timeout=True), NoneReason.TIMEOUT,
     "LLM call failed: timed out after 2 s"),
    (DocumentError("bad template", path="p.md"), NoneReason.SELECTOR_ERROR,
     "selector cannot run: p.md: bad template"),
    (ZeroDivisionError("division by zero"), NoneReason.SELECTOR_ERROR,
     "selector failed unexpectedly: ZeroDivisionError: division by zero"),
])
def test_none_for_maps_each_failure(failure: BaseException, reason: NoneReason,
                                    prefix: str) -> None:
    got_reason, rationale = none_for(failure)
    assert got_reason is reason and rationale.startswith(prefix)


def test_decision_json_keys_are_pinned() -> None:
    recipe = Recipe(name="coding", engine="ford", description="d")
    made = match(recipe, "why", Mode.LLM)
    assert made.to_json() == {"decision": "MATCH", "recipe": "coding", "engine": "ford",
                              "rationale": "why", "reason": None}
    refused = none(NoneReason.LLM_NONE, "nothing", Mode.LLM)
    assert set(refused.to_json()) == DECISION_KEYS
    assert refused.to_json()["reason"] == "llm_none" and refused.engine is None


def test_with_trace_keeps_the_decision_frozen() -> None:
    made = none(NoneReason.EMPTY_TASK, "empty task description", Mode.PRECHECK)
    traced = made.with_trace(latency_ms=3.0)
    assert traced.trace.latency_ms == 3.0 and made.trace.latency_ms is None
    assert isinstance(traced, Decision)
