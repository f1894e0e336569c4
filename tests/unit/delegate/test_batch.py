"""The batch flow: one decision on the template's shape, per-item fallback, names, summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from vance_cli.base.config import load_settings
from vance_cli.delegate.batch import BatchRequest, BatchSummary, ItemResult, run_batch, start_batch
from vance_cli.delegate.batch_input import parse_items
from vance_cli.delegate.request import DelegateRequest
from vance_cli.processes.model import Process, ProcessSpec
from vance_cli.processes.records import create_process, list_processes
from vance_cli.selector.decision import Decision
from vance_cli.workspace import Workspace


def _ws() -> Workspace:
    return Workspace(load_settings())


def _request(items: str, template: str = "Write a short essay about {{ item }}",
             **kw: Any) -> BatchRequest:
    return BatchRequest(template=template, items=parse_items(items), **kw)


@dataclass(frozen=True)
class FakeOutcome:
    """What a fallback runner returns (the Slartibartfast plug-in point)."""

    task: str

    @property
    def process(self) -> Process | None:
        return None

    def to_json(self) -> dict[str, Any]:
        return {"outcome": "FAILED", "rationale": f"fake for {self.task}"}


def test_template_match_spawns_one_process_per_item_in_order() -> None:
    ws = _ws()
    seen: list[ItemResult] = []
    summary = run_batch(ws, _request("tea\ncoffee\nwater\n"), on_result=seen.append)
    assert [r.item.number for r in seen] == [1, 2, 3]
    assert [r.task for r in seen] == [f"Write a short essay about {x}"
                                      for x in ("tea", "coffee", "water")]
    names = [r.result.process.name for r in seen if r.result and r.result.process]
    suffix = names[0].rsplit("-", 1)[1]
    assert names == [f"tea-1-{suffix}", f"coffee-2-{suffix}", f"water-3-{suffix}"]
    assert (summary.items, summary.selector_calls, summary.matched, summary.none,
            summary.failed) == (3, 1, 3, 0, 0)
    assert summary.template is not None and summary.template.mode.value == "trigger"
    assert len(list_processes(ws)) == 3


def test_a_taken_derived_name_gets_a_fresh_suffix(monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws()
    run = start_batch(ws, _request("tea\ncoffee\n"))
    create_process(ws, ProcessSpec(recipe="coding", name=f"coffee-2-{run.suffix}"))
    results = list(run.results())
    names = [r.result.process.name for r in results if r.result and r.result.process]
    assert names[0] == f"tea-1-{run.suffix}"
    assert names[1].startswith("coffee-2-") and names[1] != f"coffee-2-{run.suffix}"
    assert not any(r.failed for r in results)


def test_the_fallback_runs_per_item_only_for_eligible_nones() -> None:
    calls: list[tuple[str, str | None]] = []

    def runner(_ws: Workspace, request: DelegateRequest, decision: Decision) -> FakeOutcome:
        calls.append((request.task, decision.reason.value if decision.reason else None))
        return FakeOutcome(request.task)

    items = "Turn off the lights\nWrite a short essay about tea\nBook a flight\n"
    seen: list[ItemResult] = []
    summary = run_batch(_ws(), _request(items, template="{{ item }}"), on_result=seen.append,
                        fallback=runner)
    assert calls == [("Turn off the lights", "offline_no_match"),
                     ("Book a flight", "offline_no_match")]
    assert [r.to_json()["fallback"] for r in seen] == [
        {"outcome": "FAILED", "rationale": "fake for Turn off the lights"}, None,
        {"outcome": "FAILED", "rationale": "fake for Book a flight"}]
    assert (summary.selector_calls, summary.matched, summary.none) == (3, 1, 2)


def test_a_none_on_the_template_never_runs_the_fallback_for_the_template() -> None:
    calls: list[str] = []

    def runner(_ws: Workspace, request: DelegateRequest, _d: Decision) -> FakeOutcome:
        calls.append(request.task)
        return FakeOutcome(request.task)

    run_batch(_ws(), _request("kitchen\n", template="Turn off the lights in the {{ item }}"),
              fallback=runner)
    assert calls == ["Turn off the lights in the kitchen"]  # the item's, not the shape's


def test_an_unexpected_exception_is_the_items_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import vance_cli.delegate.batch as processes  # where the batch calls process_create

    real = processes.create_process
    count = {"n": 0}

    def flaky(ws: Workspace, spec: ProcessSpec, **options: Any) -> Process:
        count["n"] += 1
        if count["n"] == 2:
            raise RuntimeError("disk on fire")
        return real(ws, spec, **options)

    monkeypatch.setattr(processes, "create_process", flaky)
    seen: list[ItemResult] = []
    summary = run_batch(_ws(), _request("a\nb\nc\n"), on_result=seen.append)
    assert [r.failed for r in seen] == [False, True, False]
    error = seen[1].to_json()["error"]
    assert error["code"] == "vance_error" and "RuntimeError: disk on fire" in error["message"]
    assert summary.failed == 1 and summary.exit_code() == 1


@pytest.mark.parametrize(("counts", "require_match", "code"), [
    ((0, 0), False, 0),
    ((2, 0), False, 0),
    ((2, 0), True, 3),
    ((0, 1), True, 1),
    ((2, 1), True, 1),  # a failure outranks a NONE
])
def test_exit_code(counts: tuple[int, int], require_match: bool, code: int) -> None:
    none, failed = counts
    summary = BatchSummary(3, 1, 3 - none - failed, none, failed, None)
    assert summary.exit_code(require_match) == code


def test_name_prefix_and_title_and_steer_templates() -> None:
    seen: list[ItemResult] = []
    run_batch(_ws(), _request("tea\ncoffee\n", name_prefix="essay", title="On {{ item }}",
                              steer="{{ index }} of 2", params={"words": 300}),
              on_result=seen.append)
    processes = [r.result.process for r in seen if r.result and r.result.process]
    assert [(p.name, p.title, p.steer_content, dict(p.params)["words"]) for p in processes] == [
        ("essay-1", "On tea", "1 of 2", 300), ("essay-2", "On coffee", "2 of 2", 300)]


def test_summary_counts_one_item_in_the_singular() -> None:
    line = BatchSummary(1, 1, 1, 0, 0, None).line()
    assert line.startswith("batch: 1 item; 1 selector call (")
    assert BatchSummary(2, 0, 0, 2, 0, None).line().startswith("batch: 2 items; 0 selector calls")
