"""The delegate flow: selector → process_create, decision log, fallback plug-in point."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import build_file_tree
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.base.errors import DuplicateProcessName, InputError, ProcessNotFound
from vance_cli.delegate import flow as delegate_module
from vance_cli.delegate.flow import delegate
from vance_cli.delegate.request import DelegateRequest, default_name, slugify
from vance_cli.processes.model import Process, ProcessSpec
from vance_cli.processes.records import create_process, list_processes
from vance_cli.selector.decision import Decision, NoneReason
from vance_cli.state.decision_log import recent
from vance_cli.workspace import Workspace

RESULT_KEYS = ["decision", "recipe", "engine", "rationale", "reason", "process", "fallback"]
ESSAY = "Write a short essay about the history of tea"


def _ws() -> Workspace:
    return Workspace(load_settings())


@pytest.mark.parametrize(("task", "slug"), [
    (ESSAY, "write-a-short-essay-about-the-history-of"),
    ("Übersetze diese E-Mail ins Englische!", "uebersetze-diese-e-mail-ins-englische"),
    ("Straße über Äpfel und Öl", "strasse-ueber-aepfel-und-oel"),
    ("GROẞE GRÜẞE", "grosse-gruesse"),
    ("Crème brûlée à Málaga, façade", "creme-brulee-a-malaga-facade"),
    ("\uff26\uff55\uff4c\uff4c \uff57\uff49\uff44\uff54\uff48", "full-width"),  # NFKD
    ("Обзор кода", "обзор-кода"),  # other scripts stay

    ("   ", "task"),
    ("{{ }} !!!", "task"),
    ("a" * 60, "a" * 40),
    ("snake_case_words here", "snake-case-words-here"),
])
def test_slugify(task: str, slug: str) -> None:
    assert slugify(task) == slug


@pytest.mark.parametrize(("one", "other"), [
    ("Übung", "U\u0308bung"),  # precomposed and decomposed umlaut
    ("Straße", "STRASSE"), ("Straße", "strasse"), ("GROẞ", "groß"),
    ("Äpfel", "aepfel"), ("café", "cafe\u0301"),
])
def test_the_same_text_gives_the_same_slug(one: str, other: str) -> None:
    assert slugify(one) == slugify(other)


def test_default_name_has_a_random_suffix() -> None:
    names = {default_name(ESSAY) for _ in range(20)}
    assert len(names) == 20
    assert all(n.startswith("write-a-short-essay-about-the-history-of-") for n in names)
    assert all(len(n.rsplit("-", 1)[1]) == 6 for n in names)


def test_match_starts_the_process_with_the_task_as_goal() -> None:
    ws = _ws()
    request = DelegateRequest(task=ESSAY, title="Tea", steer="Keep it short",
                              params={"words": 300, "tone": "light"})
    result = delegate(ws, request)
    assert result.decision.recipe is not None and result.process is not None
    process = result.process
    assert (process.recipe, process.engine, process.goal) == ("essay-pipeline", "vogon", ESSAY)
    assert (process.title, process.steer_content) == ("Tea", "Keep it short")
    assert {k: process.params[k] for k in ("words", "tone")} == {"words": 300, "tone": "light"}
    assert "phases" in process.params  # overlaid on the recipe's own
    assert process.status.value == "IDLE" and process.parent_process_id is None
    assert list(result.to_json()) == RESULT_KEYS
    assert result.to_json()["process"] == process.to_json()
    [entry] = recent(ws.db, "default")
    assert entry.process_id == process.id and entry.mode == "trigger" and not entry.dry_run


def test_dry_run_starts_nothing_but_logs() -> None:
    ws = _ws()
    result = delegate(ws, DelegateRequest(task=ESSAY, dry_run=True))
    assert result.decision.recipe is not None and result.process is None
    assert result.to_json()["process"] is None and list_processes(ws) == []
    [entry] = recent(ws.db, "default")
    assert entry.dry_run and entry.process_id is None


def test_none_returns_without_a_process() -> None:
    result = delegate(_ws(), DelegateRequest(task="Turn off the lights"))
    data = result.to_json()
    assert list(data) == RESULT_KEYS
    assert (data["decision"], data["recipe"], data["engine"], data["process"],
            data["fallback"]) == ("NONE", None, None, None, None)
    assert data["reason"] == "offline_no_match"


def test_given_name_is_used_and_a_taken_one_fails_before_the_selector(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws()
    first = delegate(ws, DelegateRequest(task=ESSAY, name="tea"))
    assert first.process is not None and first.process.name == "tea"
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    with pytest.raises(DuplicateProcessName):
        delegate(_ws(), DelegateRequest(task="Render this in French", name="tea"))
    with pytest.raises(InputError):
        delegate(_ws(), DelegateRequest(task="Render this in French", name="  "))
    assert llm_server.requests == [] and len(recent(ws.db, "default")) == 1


def test_name_taken_between_selection_and_create_is_still_an_error_and_logged(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws()
    import vance_cli.delegate.flow as selector_package  # where delegate() calls select()

    real_select = selector_package.select

    def select_then_race(*args: object, **kwargs: object) -> Decision:
        decision = real_select(*args, **kwargs)  # type: ignore[arg-type]
        create_process(ws, ProcessSpec(recipe="coding", name="tea"))  # a concurrent delegate
        return decision

    monkeypatch.setattr(selector_package, "select", select_then_race)
    with pytest.raises(DuplicateProcessName):
        delegate(ws, DelegateRequest(task=ESSAY, name="tea"))
    [entry] = recent(ws.db, "default")
    assert entry.decision == "MATCH" and entry.process_id is None


def test_taken_default_name_is_retried_with_a_fresh_suffix(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws()
    create_process(ws, ProcessSpec(recipe="coding", name="taken"))
    names = iter(["taken", "taken", "fresh-one"])
    monkeypatch.setattr(delegate_module, "default_name", lambda _task: next(names))
    result = delegate(ws, DelegateRequest(task=ESSAY))
    assert result.process is not None and result.process.name == "fresh-one"


def test_caller_gives_model_and_parent(llm_server: ScriptedLLMServer, project_dir: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    build_file_tree(project_dir, {"recipes/lead.yaml": "engine: arthur\ndescription: lead\n"
                                                       "params: {model: caller-model}\n"})
    ws = _ws()
    caller = create_process(ws, ProcessSpec(recipe="lead", name="lead-1"))
    llm_server.reply('{"decision": "MATCH", "recipe": "translate", "rationale": "T."}')
    result = delegate(ws, DelegateRequest(task="Render this in French", caller=caller.id[:6]))
    assert llm_server.chat_requests[0].json["model"] == "caller-model"
    assert result.process is not None and result.process.parent_process_id == caller.id


def test_caller_params_model_beats_its_recipe(llm_server: ScriptedLLMServer,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    ws = _ws()
    caller = create_process(ws, ProcessSpec(recipe="discuss", name="c",
                                            params={"model": "override"}))
    llm_server.reply('{"decision": "NONE", "recipe": null, "rationale": "n"}')
    delegate(ws, DelegateRequest(task="hmm", caller=caller.id, dry_run=True))
    assert llm_server.chat_requests[0].json["model"] == "override"


def test_unknown_caller_is_an_input_error() -> None:
    with pytest.raises(ProcessNotFound):
        delegate(_ws(), DelegateRequest(task=ESSAY, caller="feedfacefeedface"))


@dataclass(frozen=True)
class _Outcome:
    process: Process | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"outcome": "FAILED", "slartProcessId": None, "recipeName": None,
                "recipePath": None, "rationale": self.reason}


def test_fallback_runs_only_for_nothing_fits(llm_server: ScriptedLLMServer,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[NoneReason | None] = []

    def runner(_ws: Workspace, _request: DelegateRequest, decision: Decision) -> _Outcome:
        calls.append(decision.reason)
        return _Outcome(None, f"ran for {decision.reason}")

    ws = _ws()
    offline = delegate(ws, DelegateRequest(task="Turn off the lights"), fallback=runner)
    assert offline.to_json()["fallback"]["rationale"] == "ran for offline_no_match"
    assert delegate(ws, DelegateRequest(task=ESSAY), fallback=runner).fallback is None
    assert delegate(ws, DelegateRequest(task=""), fallback=runner).fallback is None
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    llm_server.fail(500, "down")
    failed = delegate(_ws(), DelegateRequest(task="Turn off the lights"), fallback=runner)
    assert failed.decision.reason is NoneReason.LLM_ERROR and failed.fallback is None
    assert calls == [NoneReason.OFFLINE_NO_MATCH]


def test_recipe_problems_become_warnings(project_dir: Path) -> None:
    build_file_tree(project_dir, {"recipes/broken.yaml": "engine: [\n"})
    result = delegate(_ws(), DelegateRequest(task=ESSAY, dry_run=True))
    assert len(result.warnings) == 1 and result.warnings[0].startswith("recipe 'broken' left out")


def test_slug_of_a_huge_task_reads_only_its_head() -> None:
    from vance_cli.delegate.request import SLUG_SOURCE_MAX, slugify

    head = "Write a short essay about the history of tea "
    huge = head + "x" * (5 * 1024 * 1024)
    assert slugify(huge) == slugify(head) == "write-a-short-essay-about-the-history-of"
    assert slugify(" " * SLUG_SOURCE_MAX + "late words") == "task"
