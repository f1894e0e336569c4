"""``vance delegate`` with the sync Slartibartfast fallback, through the real openai client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_cli
from helpers import slart_recipe_reply as recipe
from llm_server import ScriptedLLMServer

RESULT_KEYS = ["decision", "recipe", "engine", "rationale", "reason", "process", "fallback"]
FALLBACK_KEYS = ["outcome", "slartProcessId", "recipeName", "recipePath", "rationale"]
TASK = "Turn off the kitchen lights"
NONE = ('```json\n{"decision": "NONE", "recipe": null, '
        '"rationale": "No recipe controls smart-home devices."}\n```')


def caller() -> str:
    result = run_cli(["process", "create", "--recipe", "discuss", "--name", "me", "--json"])
    assert result.exit_code == 0, result.stderr
    return str(result.json()["id"])


def processes() -> list[dict[str, object]]:
    return run_cli(["process", "list", "--json"]).json()  # type: ignore[no-any-return]


def test_acceptance_invalid_then_valid_is_generated_and_spawned(
        llm_server: ScriptedLLMServer, project_dir: Path) -> None:
    me = caller()
    for reply in (NONE, recipe(engine="teleporter"), recipe()):
        llm_server.reply(reply)
    result = run_cli(["delegate", "--task", TASK, "--caller", me, "--name", "lights", "--json"],
                     env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    data = result.json()
    assert list(data) == RESULT_KEYS and list(data["fallback"]) == FALLBACK_KEYS
    assert (data["decision"], data["recipe"], data["engine"], data["reason"]) == \
        ("NONE", None, None, "llm_none")
    fallback = data["fallback"]
    assert fallback["outcome"] == "GENERATED"
    name, path = fallback["recipeName"], fallback["recipePath"]
    run_id = name.split("/")[1]
    assert name == f"_slart/{run_id}/smart-home-control"
    assert path == f"recipes/_slart/{run_id}/smart-home-control.yaml"
    assert (project_dir / path).is_file()
    spawned = data["process"]
    assert (spawned["recipe"], spawned["engine"], spawned["name"], spawned["parentProcessId"]) \
        == (name, "ford", "lights", me)
    shown = run_cli(["process", "show", spawned["id"], "--json"]).json()
    assert (shown["recipe"], shown["parentProcessId"], shown["goal"]) == (name, me, TASK)
    slart = run_cli(["process", "show", fallback["slartProcessId"], "--json"]).json()
    assert (slart["name"], slart["recipe"], slart["status"], slart["closeReason"],
            slart["parentProcessId"]) == ("delegate-fallback-slart-lights", "slartibartfast",
                                          "CLOSED", "DONE", me)
    audit = json.loads((project_dir / "recipes" / "_slart" / run_id / "audit.json").read_text())
    assert audit["state"] == "GENERATED"
    assert [(a["attempt"], a["valid"]) for a in audit["attempts"]] == [(1, False), (2, True)]
    assert "engine 'teleporter' is not in the engine catalog" in audit["attempts"][0]["errors"][0]
    assert all(a["rawReply"].startswith("<think>") for a in audit["attempts"])


def test_generated_recipes_are_hidden_but_listable_and_spawnable(
        llm_server: ScriptedLLMServer) -> None:
    for reply in (NONE, recipe()):
        llm_server.reply(reply)
    data = run_cli(["delegate", "--task", TASK, "--json"], env=llm_server.env()).json()
    name = data["fallback"]["recipeName"]
    visible = [r["name"] for r in run_cli(["recipe", "list", "--json"]).json()]
    assert name not in visible and "coding" in visible
    listed = {r["name"]: r for r in run_cli(["recipe", "list", "--all", "--json"]).json()}
    assert listed[name]["hidden"] is True and listed[name]["layer"] == "PROJECT"
    assert name in run_cli(["recipe", "list", "--all"]).stdout
    created = run_cli(["process", "create", "--recipe", name, "--name", "again", "--json"])
    assert created.exit_code == 0, created.stderr
    assert (created.json()["recipe"], created.json()["engine"]) == (name, "ford")
    assert run_cli(["recipe", "show", name, "--json"]).json()["engine"] == "ford"


def test_slow_slart_is_cut_off(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(NONE)
    llm_server.reply(recipe(), delay=6)
    result = run_cli(["delegate", "--task", TASK, "--fallback-timeout", "1", "--json"],
                     env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    data = result.json()
    assert (data["decision"], data["process"], data["fallback"]["outcome"]) == \
        ("NONE", None, "TIMED_OUT")
    assert data["fallback"]["recipeName"] is None
    listed = processes()
    assert [p["recipe"] for p in listed] == ["slartibartfast"]  # nothing spawned
    assert [(p["status"], p["closeReason"]) for p in listed] == [("CLOSED", "STOPPED")]
    human = run_cli(["process", "show", str(listed[0]["id"])])
    assert "timedOut" in human.stdout


def test_human_output_of_a_timeout(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(NONE)
    llm_server.reply(recipe(), delay=5)
    result = run_cli(["delegate", "--task", TASK, "--fallback-timeout", "1"],
                     env=llm_server.env())
    assert "fallback: TIMED_OUT: the fallback cutoff of 1 s passed" in " ".join(
        result.stdout.split())
    assert "audit:" in result.stdout and "process:" not in result.stdout


def test_human_output_of_a_generated_recipe(llm_server: ScriptedLLMServer) -> None:
    for reply in (NONE, recipe()):
        llm_server.reply(reply)
    out = " ".join(run_cli(["delegate", "--task", TASK], env=llm_server.env()).stdout.split())
    assert "decision: NONE" in out and "process: " in out
    assert "fallback: GENERATED: Slartibartfast designed the new recipe '_slart/" in out
    assert "new recipe: _slart/" in out and "smart-home-control.yaml" in out


def test_no_llm_configured_is_failed_with_a_how_to() -> None:
    data = run_cli(["delegate", "--task", "Turn off the lights", "--json"]).json()
    assert (data["reason"], data["fallback"]["outcome"], data["fallback"]["slartProcessId"]) == \
        ("offline_no_match", "FAILED", None)
    assert "vance config set llm.base_url" in data["fallback"]["rationale"]
    assert "VANCE_LLM_BASE_URL" in data["fallback"]["rationale"]
    human = run_cli(["delegate", "--task", "Turn off the lights"])
    assert human.exit_code == 0 and human.stderr == ""
    text = " ".join(human.stdout.split())
    assert "fallback: no new recipe: no LLM is configured" in text
    assert "to enable it: vance config set llm.base_url" in text
    assert "FAILED" not in text
    assert processes() == []


def test_llm_failure_has_no_fallback_and_says_why(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(500, "model overloaded")
    data = run_cli(["delegate", "--task", TASK, "--json"], env=llm_server.env()).json()
    assert (data["reason"], data["fallback"]) == ("llm_error", None)
    assert data["rationale"].startswith("LLM call failed: HTTP 500: model overloaded (at ")
    assert " — no Slartibartfast fallback" in data["rationale"]
    llm_server.reply("no json at all")
    human = run_cli(["delegate", "--task", TASK], env=llm_server.env())
    assert "no Slartibartfast fallback: the selector's reply was unusable" in " ".join(
        human.stdout.split())
    assert len(llm_server.chat_requests) == 2 and processes() == []


def test_no_fallback_and_dry_run_never_ask_slart(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(NONE)
    plain = run_cli(["delegate", "--task", TASK, "--no-fallback", "--json"],
                    env=llm_server.env()).json()
    assert (plain["decision"], plain["fallback"]) == ("NONE", None)
    assert plain["rationale"] == "No recipe controls smart-home devices."
    llm_server.reply(NONE)
    dry = run_cli(["delegate", "--task", TASK, "--dry-run"], env=llm_server.env())
    assert "fallback: not run (dry run)" in dry.stdout
    assert len(llm_server.chat_requests) == 2 and processes() == []


def test_two_none_delegates_with_one_name(llm_server: ScriptedLLMServer) -> None:
    for reply in (NONE, recipe(engine="x"), recipe(engine="y"), recipe(engine="z"),
                  NONE, recipe()):
        llm_server.reply(reply)
    first = run_cli(["delegate", "--task", TASK, "--name", "lights", "--json"],
                    env=llm_server.env())
    second = run_cli(["delegate", "--task", TASK, "--name", "lights", "--json"],
                     env=llm_server.env())
    assert (first.exit_code, second.exit_code) == (0, 0), second.stderr
    assert first.json()["fallback"]["outcome"] == "FAILED"
    assert second.json()["fallback"]["outcome"] == "GENERATED"
    names = sorted(str(p["name"]) for p in processes())
    assert names == ["delegate-fallback-slart-lights", "delegate-fallback-slart-lights-2",
                     "lights"]


@pytest.mark.parametrize("args", [
    ["--no-fallback", "--async-fallback"],
    ["--no-fallback", "--fallback-timeout", "5"],
    ["--fallback-timeout", "0"],
    ["--fallback-timeout", "-3"],
    ["--fallback-timeout", "soon"],
    ["--fallback-timeout", "nan"],
    ["--fallback-timeout", "inf"],
    ["--fallback-timeout", "1e9"],
])
def test_bad_fallback_flags_exit_2(args: list[str]) -> None:
    result = run_cli(["delegate", "--task", "Turn off the lights", *args])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert processes() == []
    if args[0] == "--fallback-timeout" and args[1] != "soon":
        # the flag and fallback.timeout share one rule (config.check_seconds); a usage error
        assert ("vance: error: Invalid value for --fallback-timeout: must be more than 0 and at"
                " most 604800") in result.stderr
        assert result.stderr.rstrip().endswith("— see 'vance delegate --help'")


def test_a_bad_configured_timeout_is_an_input_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(NONE)
    result = run_cli(["delegate", "--task", TASK, "--json"],
                     env={**llm_server.env(), "VANCE_FALLBACK_TIMEOUT": "1e12"})
    assert result.exit_code == 2
    # The setting is refused when read, naming its key and source, before any LLM call.
    assert result.stderr.startswith(
        "vance: error: fallback.timeout (env:VANCE_FALLBACK_TIMEOUT): must be more than 0 and "
        "at most 604800 seconds (a week), not 1e12")
    assert llm_server.chat_requests == []


def test_timeout_comes_from_config(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(NONE)
    llm_server.reply(recipe(), delay=5)
    data = run_cli(["delegate", "--task", TASK, "--json"],
                   env={**llm_server.env(), "VANCE_FALLBACK_TIMEOUT": "1"}).json()
    assert data["fallback"]["outcome"] == "TIMED_OUT"
    assert "cutoff of 1 s" in data["fallback"]["rationale"]


def test_the_cutoff_holds_whatever_the_reply(llm_server: ScriptedLLMServer) -> None:
    import os
    import subprocess
    import sys

    llm_server.reply(NONE)
    for _ in range(3):
        llm_server.reply("<think>" * 14285)
    env = {**os.environ, **llm_server.env()}
    proc = subprocess.run([sys.executable, "-m", "vance_cli", "delegate", "--task", TASK,
                           "--fallback-timeout", "3", "--json"], capture_output=True, text=True,
                          env=env, timeout=30)  # proves it ends; bench/replies.py measures
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["fallback"]["outcome"] in ("FAILED", "TIMED_OUT")


def test_ctrl_c_during_a_sync_fallback_says_cancelled(llm_server: ScriptedLLMServer) -> None:
    import os
    import signal
    import subprocess
    import sys
    import threading

    from helpers import wait_until

    llm_server.reply(NONE)
    llm_server.reply(recipe(), gate=threading.Event())  # Slartibartfast waits for its reply
    cli = subprocess.Popen([sys.executable, "-m", "vance_cli", "delegate", "--task", TASK],
                           env={**os.environ, **llm_server.env(timeout=60)},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: len(llm_server.chat_requests) == 2)
        cli.send_signal(signal.SIGINT)
        _out, err = cli.communicate(timeout=20)
    finally:
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 130
    assert err.strip().splitlines()[-1] == "cancelled"
    [slart] = processes()
    assert (slart["status"], slart["closeReason"]) == ("CLOSED", "STOPPED")
