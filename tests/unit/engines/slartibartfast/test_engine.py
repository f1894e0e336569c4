"""Slartibartfast end to end in the core: selector NONE → Slart → store → spawn (sync)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import build_file_tree, wait_until
from llm_server import ScriptedLLMServer

from vance_cli import llm
from vance_cli.base.config import load_settings
from vance_cli.delegate.flow import delegate
from vance_cli.delegate.request import DelegateRequest
from vance_cli.engines.slartibartfast import engine as engine_mod
from vance_cli.engines.slartibartfast.engine import bounded_config
from vance_cli.engines.slartibartfast.fallback import Fallback
from vance_cli.engines.slartibartfast.outcome import FallbackResult, Outcome
from vance_cli.engines.slartibartfast.start import slart_names
from vance_cli.processes.events import EventQuery, pending_events
from vance_cli.processes.lifecycle import close_process, stop_process
from vance_cli.processes.model import CloseReason, Process, ProcessSpec, Status
from vance_cli.processes.records import create_process, list_processes
from vance_cli.workspace import Workspace

TASK = "Turn off the kitchen lights"
NONE = '{"decision": "NONE", "recipe": null, "rationale": "No recipe controls devices."}'


def recipe(engine: str = "ford", name: str = "smart-home-control") -> str:
    """A reply as a real model writes it: thinking, prose, a fenced YAML recipe, prose."""
    return (f"<think>Lights are devices; a generalist with tools fits.</think>\n"
            f"Here is a recipe for this kind of task:\n\n```yaml\nname: {name}\n"
            f"title: Control smart-home devices\nengine: {engine}\ndescription: >-\n"
            f"  Switches smart-home devices such as lights on and off.\n"
            f"tags: [switch, control devices, schalten]\nparams:\n  confirm: true\n```\n\n"
            f"Let me know if you want changes.")


@pytest.fixture()
def server_env(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
               ) -> ScriptedLLMServer:
    for key, value in llm_server.env().items():
        monkeypatch.setenv(key, value)
    return llm_server


def _ws() -> Workspace:
    return Workspace(load_settings())


def _run(ws: Workspace, name: str | None = "lights", caller: str | None = None,
         timeout: float | None = None, task: str = TASK) -> FallbackResult:
    result = delegate(ws, DelegateRequest(task=task, name=name, caller=caller),
                      fallback=Fallback(timeout=timeout))
    assert isinstance(result.fallback, FallbackResult)
    return result.fallback


def _slart(ws: Workspace) -> list[Process]:
    return [p for p in list_processes(ws) if p.recipe == "slartibartfast"]


def _audit(ws: Workspace, slart: Process) -> dict[str, Any]:
    path = ws.write_folder / "recipes" / "_slart" / str(slart.params["runId"]) / "audit.json"
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_invalid_then_valid_recipe_is_generated_and_spawned(server_env: ScriptedLLMServer,
                                                            project_dir: Path) -> None:
    ws = _ws()
    caller = create_process(ws, ProcessSpec(recipe="discuss", name="me",
                                            params={"model": "big-model"}))
    server_env.reply(NONE)
    server_env.reply(recipe(engine="teleporter"))
    server_env.reply(recipe())
    fallback = _run(ws, caller=caller.id)
    assert fallback.outcome is Outcome.GENERATED, fallback.rationale
    name = fallback.recipe_name
    assert name is not None and name.startswith("_slart/") and name.endswith("/smart-home-control")
    assert fallback.recipe_path == f"recipes/{name}.yaml"
    assert (project_dir / fallback.recipe_path).is_file()
    spawned = fallback.process
    assert spawned is not None
    assert (spawned.recipe, spawned.engine, spawned.name, spawned.goal) == \
        (name, "ford", "lights", TASK)
    assert spawned.parent_process_id == caller.id and spawned.params == {"confirm": True}
    [slart] = _slart(ws)
    assert slart.name == "delegate-fallback-slart-lights"
    assert (slart.status, slart.close_reason, slart.parent_process_id) == \
        (Status.CLOSED, "DONE", caller.id)
    assert slart.outcome is not None and slart.outcome["recipeName"] == name
    assert slart.params["model"] == "big-model"
    audit = _audit(ws, slart)
    assert audit["state"] == "GENERATED" and len(audit["attempts"]) == 2
    first, second = audit["attempts"]
    assert "<think>" in first["rawReply"] and first["extracted"].startswith("name: smart-home")
    assert not first["valid"] and "teleporter" in first["errors"][0]
    assert second["valid"] and second["errors"] == []
    # the Slart calls: caller's model, no JSON mode, the repair quotes the problem
    slart_calls = [r.json for r in server_env.chat_requests[1:]]
    assert all(c["model"] == "big-model" and "response_format" not in c for c in slart_calls)
    repair = slart_calls[1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert "<think>" not in repair[2]["content"] and "teleporter" in repair[2]["content"]
    assert "engine 'teleporter' is not in the engine catalog" in repair[3]["content"]
    events = pending_events(ws, EventQuery(caller.id))
    assert [(e.source, e.payload["closeReason"]) for e in events] == [(slart.id, "DONE")]
    assert events[0].payload["outcome"]["recipePath"] == fallback.recipe_path


def test_a_budget_over_its_ceiling_is_repaired_before_the_recipe_is_stored(
        server_env: ScriptedLLMServer) -> None:
    """Issue 26 item 4: a generated recipe with turnSeconds 1e8 was stored and started."""
    ws = _ws()
    server_env.reply(NONE)
    server_env.reply(recipe().replace("  confirm: true\n",
                                      "  confirm: true\n  budget:\n    turnSeconds: 1e8\n"))
    server_env.reply(recipe())
    fallback = _run(ws)
    assert fallback.outcome is Outcome.GENERATED, fallback.rationale
    assert fallback.process is not None and fallback.process.params == {"confirm": True}
    [slart] = _slart(ws)
    first, second = _audit(ws, slart)["attempts"]
    assert first["errors"] == ["params.budget.turnSeconds 1e+08 is over the ceiling of 3600"
                               " (budget.max_turn_seconds): give a smaller value or leave it"
                               " out"]
    assert second["valid"]
    repair = server_env.chat_requests[2].json["messages"][-1]["content"]
    assert "over the ceiling of 3600 (budget.max_turn_seconds)" in repair


def test_stored_recipe_is_canonical_yaml(server_env: ScriptedLLMServer) -> None:
    server_env.reply(NONE)
    server_env.reply(recipe())
    fallback = _run(_ws())
    assert fallback.file is not None
    text = fallback.file.read_text(encoding="utf-8")
    assert text.startswith("# Generated by Slartibartfast (run ")
    assert "name:" not in text and text.index("title:") < text.index("engine:")


def test_repairs_are_bounded(server_env: ScriptedLLMServer,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_FALLBACK_MAX_REPAIRS", "1")
    ws = _ws()
    server_env.reply(NONE)
    server_env.reply(recipe(engine="teleporter"))
    server_env.reply("I would rather not.")
    fallback = _run(ws)
    assert fallback.outcome is Outcome.FAILED and fallback.process is None
    assert "no valid recipe after 2 tries" in fallback.rationale
    assert "the reply holds no recipe" in fallback.rationale
    assert "audit: recipes/_slart/" in fallback.rationale
    assert len(server_env.chat_requests) == 3
    [slart] = _slart(ws)
    assert (slart.close_reason, [p.recipe for p in list_processes(ws)]) == \
        ("STALE", ["slartibartfast"])
    audit = _audit(ws, slart)
    assert audit["state"] == "FAILED" and len(audit["attempts"]) == 2
    folder = ws.write_folder / "recipes" / "_slart" / audit["runId"]
    assert [p.name for p in folder.iterdir()] == ["audit.json"]


def test_cut_off_reply_is_repaired(server_env: ScriptedLLMServer) -> None:
    server_env.reply(NONE)
    server_env.reply(recipe(), finish_reason="length")
    server_env.reply(recipe())
    fallback = _run(_ws())
    assert fallback.outcome is Outcome.GENERATED
    assert "cut off at the token limit" in server_env.chat_requests[2].json["messages"][-1][
        "content"]


def test_llm_failure_inside_slart_fails_it(server_env: ScriptedLLMServer) -> None:
    ws = _ws()
    server_env.reply(NONE)
    server_env.fail(500, "model overloaded")
    fallback = _run(ws)
    assert fallback.outcome is Outcome.FAILED
    assert "LLM call failed: HTTP 500: model overloaded" in fallback.rationale
    [slart] = _slart(ws)
    assert slart.close_reason == "STALE"
    assert _audit(ws, slart)["attempts"][0]["llmError"].startswith(
        "HTTP 500: model overloaded (at 127.0.0.1:")


def test_cutoff_stops_slart_and_spawns_nothing(server_env: ScriptedLLMServer) -> None:
    ws = _ws()
    server_env.reply(NONE)
    never = threading.Event()  # the reply never comes: only the cutoff can end the run
    server_env.reply(recipe(), gate=never)
    fallback = _run(ws, timeout=1)
    assert fallback.outcome is Outcome.TIMED_OUT and fallback.process is None
    assert fallback.rationale.startswith("the fallback cutoff of 1 s passed")
    assert [p.status for p in list_processes(ws) if p.status is not Status.CLOSED] == []
    [slart] = _slart(ws)
    assert slart.close_reason == "STOPPED" and slart.outcome["timedOut"] is True  # type: ignore[index]
    assert _audit(ws, slart)["state"] == "TIMED_OUT"
    assert list(ws.write_folder.rglob("*.yaml")) == []


def test_a_stop_from_outside_ends_the_run(server_env: ScriptedLLMServer) -> None:
    ws = _ws()
    server_env.reply(NONE)
    server_env.reply(recipe(), gate=threading.Event())  # only the stop can end the run

    def stop_it() -> None:
        other = _ws()
        assert wait_until(lambda: [p for p in _slart(other) if p.status is Status.RUNNING])
        [running] = [p for p in _slart(other) if p.status is Status.RUNNING]
        stop_process(other, running.id)

    stopper = threading.Thread(target=stop_it)
    stopper.start()
    fallback = _run(ws)
    stopper.join()
    assert fallback.outcome is Outcome.FAILED and fallback.process is None
    assert fallback.rationale.startswith("Slartibartfast was stopped: stopped with 'vance process")
    [slart] = _slart(ws)
    assert _audit(ws, slart)["state"] == "STOPPED"
    assert list(ws.write_folder.rglob("*.yaml")) == []


def test_a_recipe_found_after_a_stop_is_not_stored(server_env: ScriptedLLMServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The store re-checks the process under the lock: a close in between discards the work."""
    review = engine_mod._review

    def review_then_closed(*args: Any, **kwargs: Any) -> Any:
        checked = review(*args, **kwargs)
        plan = args[3]
        close_process(_ws(), plan.process_id, CloseReason.STOPPED, {"reason": "by hand"})
        return checked

    monkeypatch.setattr(engine_mod, "_review", review_then_closed)
    ws = _ws()
    server_env.reply(NONE)
    server_env.reply(recipe())
    fallback = _run(ws)
    assert fallback.outcome is Outcome.FAILED and "was stopped: by hand" in fallback.rationale
    assert list(ws.write_folder.rglob("*.yaml")) == []
    [slart] = _slart(ws)
    assert _audit(ws, slart)["state"] == "STOPPED"


def test_no_llm_configured_fails_without_a_process() -> None:
    ws = _ws()
    fallback = _run(ws, task="Turn off the lights")
    assert fallback.outcome is Outcome.FAILED and fallback.slart_process_id is None
    assert "vance config set llm.base_url" in fallback.rationale
    assert "VANCE_LLM_BASE_URL" in fallback.rationale
    assert list_processes(ws) == []


def test_dry_run_never_runs_slart(server_env: ScriptedLLMServer) -> None:
    server_env.reply(NONE)
    result = delegate(_ws(), DelegateRequest(task=TASK, dry_run=True), fallback=Fallback())
    assert result.fallback is None and len(server_env.chat_requests) == 1


def test_llm_failure_gets_no_fallback_and_says_why(server_env: ScriptedLLMServer) -> None:
    server_env.fail(500, "down")
    result = delegate(_ws(), DelegateRequest(task=TASK), fallback=Fallback())
    data = result.to_json()
    assert (data["reason"], data["fallback"]) == ("llm_error", None)
    assert data["rationale"].startswith("LLM call failed: HTTP 500: down (at 127.0.0.1:")
    assert " — no Slartibartfast fallback: the LLM call failed" in data["rationale"]
    assert len(server_env.chat_requests) == 1


def test_same_name_twice_gets_a_numbered_slart_name(server_env: ScriptedLLMServer) -> None:
    ws = _ws()
    for reply in (NONE, "no idea", "still no idea", "nope", NONE, recipe()):
        server_env.reply(reply)
    first = _run(ws)
    second = _run(ws)
    assert (first.outcome, second.outcome) == (Outcome.FAILED, Outcome.GENERATED)
    assert sorted(p.name for p in _slart(ws)) == ["delegate-fallback-slart-lights",
                                                 "delegate-fallback-slart-lights-2"]
    assert second.process is not None and second.process.name == "lights"


def test_slart_names_stay_within_the_name_limit() -> None:
    names = slart_names("n" * 300)
    assert len(names) == 12 and len(set(names)) == 12
    assert all(len(n) <= 200 for n in names)
    assert slart_names("x")[:3] == ["delegate-fallback-slart-x", "delegate-fallback-slart-x-2",
                                    "delegate-fallback-slart-x-3"]


def test_generated_recipes_go_into_a_vance_folder(server_env: ScriptedLLMServer,
                                                  tmp_path: Path) -> None:
    work = Path.cwd()
    (work / ".vance").mkdir()
    server_env.reply(NONE)
    server_env.reply(recipe())
    fallback = _run(Workspace(load_settings(), cwd=work))
    assert fallback.file is not None
    assert fallback.file.is_relative_to(work / ".vance" / "recipes" / "_slart")


def test_broken_prompt_override_fails_with_the_file(server_env: ScriptedLLMServer,
                                                    project_dir: Path) -> None:
    build_file_tree(project_dir, {"prompts/slartibartfast.md": "no parts here\n"})
    server_env.reply(NONE)
    fallback = _run(_ws())
    assert fallback.outcome is Outcome.FAILED
    assert "slartibartfast.md" in fallback.rationale and "repair" in fallback.rationale


def test_prompt_override_without_the_task_fails_before_any_slart_request(
        server_env: ScriptedLLMServer, project_dir: Path) -> None:
    build_file_tree(project_dir, {"prompts/slartibartfast.md":
                                  "Design a recipe.\n<!-- user -->\nGo: {{ marker }}\n"
                                  "<!-- repair -->\nFix {{ errors|join(', ') }}\n"})
    server_env.reply(NONE)
    server_env.reply(recipe())  # would be used if Slart asked: it must not
    fallback = _run(_ws())
    assert fallback.outcome is Outcome.FAILED
    assert str(project_dir / "prompts" / "slartibartfast.md") in fallback.rationale
    assert "never uses the variable 'task'" in fallback.rationale
    assert len(server_env.chat_requests) == 1  # the selector's; Slartibartfast sent none
    assert "answer" in server_env.chat_requests[0].json["response_format"]["json_schema"][
        "schema"]["properties"]
    assert [p.name for p in list_processes(_ws()) if p.recipe != "slartibartfast"] == []


@pytest.mark.parametrize(("timeout", "retries", "remaining", "expected"), [
    (30.0, 2, 240.0, (30.0, 2)),
    (30.0, 2, 70.0, (30.0, 1)),
    (30.0, 2, 10.0, (10.0, 0)),
    (30.0, 0, 0.0, (0.05, 0)),
])
def test_each_request_fits_in_the_time_left(timeout: float, retries: int, remaining: float,
                                            expected: tuple[float, int]) -> None:
    config = llm.LLMConfig("http://127.0.0.1:1/v1", None, "m", timeout, retries, "json_schema")
    bounded = bounded_config(config, remaining)
    assert (bounded.timeout, bounded.max_retries, bounded.json_mode) == (*expected, "none")


def test_a_name_taken_meanwhile_keeps_the_recipe_but_fails_the_start(
        server_env: ScriptedLLMServer) -> None:
    ws = _ws()
    server_env.reply(NONE)
    gate = threading.Event()  # the recipe comes once the name is taken
    server_env.reply(recipe(), gate=gate)

    def take_the_name() -> None:
        try:
            assert wait_until(lambda: len(server_env.chat_requests) >= 2)
            create_process(_ws(), ProcessSpec(recipe="coding", name="lights"))
        finally:
            gate.set()

    taker = threading.Thread(target=take_the_name)
    taker.start()
    fallback = _run(ws)
    taker.join()
    assert fallback.outcome is Outcome.FAILED and fallback.process is None
    assert fallback.recipe_name is not None and fallback.file is not None
    assert fallback.file.is_file()
    assert f"start it with 'vance process create --recipe {fallback.recipe_name}" in \
        fallback.rationale
    assert "already exists" in fallback.rationale


def test_a_tenant_can_give_slartibartfast_its_own_model(server_env: ScriptedLLMServer,
                                                        tenant_dir: Path) -> None:
    build_file_tree(tenant_dir, {"recipes/slartibartfast.yaml": """
        engine: slartibartfast
        description: Design a new recipe.
        internal: true
        params: {model: designer-model}
    """})
    server_env.reply(NONE)
    server_env.reply(recipe())
    assert _run(_ws()).outcome is Outcome.GENERATED
    models = [r.json["model"] for r in server_env.chat_requests]
    assert models == ["test-model", "designer-model"]


def test_offline_none_with_the_fallback_on_stays_light() -> None:
    """A fresh install's NONE runs the fallback (FAILED: no LLM) without loading the LLM stack."""
    import subprocess
    import sys

    code = ("import sys\nfrom vance_cli.cli.boundary import run\n"
            "run(['delegate', '--task', 'Turn off the lights', '--json'])\n"
            "sys.stderr.write('\\nMODULES=' + ','.join(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert '"outcome":"FAILED"' in proc.stdout
    loaded = {m.split(".")[0] for m in proc.stderr.rsplit("MODULES=", 1)[1].split(",")}
    assert loaded & {"openai", "httpx", "jinja2", "json_repair", "rich"} == set()
    assert "vance_cli" in loaded
