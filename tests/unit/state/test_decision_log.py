from __future__ import annotations

from vance_cli.base.config import load_settings
from vance_cli.recipes.loader import Recipe
from vance_cli.selector.decision import Mode, NoneReason, Trace, match, none
from vance_cli.state.decision_log import LogEntry, recent, record, task_hash
from vance_cli.workspace import Workspace

TRACE = Trace(model="m", endpoint="http://127.0.0.1:1/v1", json_mode="json_schema",
              raw_reply='{"decision": "MATCH"}', finish_reason="stop", prompt_tokens=9,
              completion_tokens=2, latency_ms=12.5)
JSON_KEYS = {"id", "createdAt", "session", "taskHash", "task", "mode", "model", "endpoint",
             "jsonMode", "rawReply", "finishReason", "decision", "recipe", "reason",
             "rationale", "latencyMs", "promptTokens", "completionTokens", "processId",
             "dryRun"}


def _ws() -> Workspace:
    return Workspace(load_settings())


def test_record_and_read_back() -> None:
    ws = _ws()
    recipe = Recipe(name="coding", engine="ford", description="d")
    record(ws.db, "default", "s1", "fix the bug", match(recipe, "code", Mode.LLM, TRACE),
           process_id="p1")
    record(ws.db, "default", "s2", "lights", none(NoneReason.OFFLINE_NO_MATCH, "no", Mode.OFFLINE),
           dry_run=True)
    record(ws.db, "other", "s1", "elsewhere", none(NoneReason.EMPTY_TASK, "e", Mode.PRECHECK))
    newest, oldest = recent(ws.db, "default")
    assert isinstance(newest, LogEntry) and newest.task == "lights" and newest.dry_run
    assert (oldest.decision, oldest.recipe, oldest.model, oldest.process_id) == \
        ("MATCH", "coding", "m", "p1")
    assert (oldest.prompt_tokens, oldest.completion_tokens, oldest.latency_ms) == (9, 2, 12.5)
    assert oldest.task_hash == task_hash("fix the bug") and len(oldest.task_hash) == 64
    assert set(oldest.to_json()) == JSON_KEYS
    assert [e.task for e in recent(ws.db, "default", limit=1)] == ["lights"]


def test_private_tasks_keep_only_the_hash() -> None:
    ws = _ws()
    decision = none(NoneReason.LLM_NONE, "Nothing handles 'my secret plan'", Mode.LLM, TRACE)
    record(ws.db, "default", "s", "my secret plan", decision, keep_task=False)
    [entry] = recent(ws.db, "default")
    assert entry.task is None and entry.raw_reply is None and entry.rationale is None
    assert entry.task_hash == task_hash("my secret plan")
    assert entry.reason == "llm_none" and entry.model == "m"
    row = ws.db.query_one("SELECT * FROM decisions")
    assert row is not None and "secret" not in " ".join(str(v) for v in tuple(row))
