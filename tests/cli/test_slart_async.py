"""``vance delegate --async-fallback``: real ``vance`` processes and a detached worker.

The detached worker is always a real process. ``vance`` itself runs as a
separate program where its own process is the point (it returns while the
worker goes on, it is killed, or it is the sync fallback's worker);
commands that only read or wait run in-process through the real boundary.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import CliResult, build_file_tree, run_cli, wait_until
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.base.paths import bundled_dir
from vance_cli.processes.lifecycle import is_pid_alive
from vance_cli.processes.records import load_process
from vance_cli.workspace import Workspace

TASK = "Turn off the kitchen lights"
NONE = '{"decision": "NONE", "recipe": null, "rationale": "No recipe controls devices."}'
RECIPE = ("<think>one device job: ford</think>\n```yaml\nname: smart-home-control\n"
          "title: Control smart-home devices\nengine: ford\ndescription: >-\n"
          "  Switches smart-home devices on and off.\ntags: [switch, schalten]\n```\nDone.")
FAST = {"VANCE_HEARTBEAT_INTERVAL": "0.1", "VANCE_STALE_TIMEOUT": "2"}


@pytest.fixture()
def env(llm_server: ScriptedLLMServer) -> dict[str, str]:
    return {**os.environ, **llm_server.env()}


@pytest.fixture(autouse=True)
def no_stray_workers() -> Iterator[None]:
    """Kill any worker a failed test left behind (the worker pid is on the process row)."""
    yield
    db_file = Workspace(load_settings()).settings.paths.db_file
    if not db_file.exists():
        return
    ws = Workspace(load_settings())
    rows = ws.db.query("SELECT worker_pid FROM processes WHERE worker_pid IS NOT NULL")
    ws.close()
    for (pid,) in rows:
        if pid != os.getpid() and is_pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


def vance(env: dict[str, str], *args: str, timeout: float = 60
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vance_cli", *args], capture_output=True,
                          text=True, env=env, timeout=timeout, check=False)


def cli(env: dict[str, str], *args: str) -> CliResult:
    """``vance ARGS`` in-process (through the real boundary), with ``env`` set."""
    return run_cli(args, env=env)


def cli_json(env: dict[str, str], *args: str) -> Any:
    result = cli(env, *args, "--json")
    assert result.exit_code == 0, result.stderr
    return result.json()


def hide_every_recipe(project_dir: Path) -> None:
    """Override each bundled recipe as internal: the inventory is empty (NONE, no LLM call).

    Each keeps the rest of its content (its engine decides which code runs it).
    """
    recipes = bundled_dir("catalog") / "recipes"
    build_file_tree(project_dir, {
        f"recipes/{p.name}": "".join(line for line in p.read_text().splitlines(keepends=True)
                                     if not line.startswith("internal:")) + "internal: true\n"
        for p in recipes.glob("*.yaml")})


def worker_log(slart_id: str) -> str:
    path = Workspace(load_settings()).settings.paths.logs_dir / f"process-{slart_id}.log"
    return path.read_text(encoding="utf-8") if path.exists() else "(no log)"


def test_async_returns_at_once_and_notifies_the_caller(
        llm_server: ScriptedLLMServer, env: dict[str, str], project_dir: Path) -> None:
    hide_every_recipe(project_dir)  # the selector answers NONE without an LLM call
    gate = threading.Event()  # Slart's reply waits until the CLI has returned
    llm_server.reply(RECIPE, gate=gate)
    # a caller whose engine does not act on events (ford): the event stays in its queue
    me = cli_json(env, "process", "create", "--recipe", "coding", "--name", "me")["id"]
    result = vance(env, "delegate", "--task", TASK, "--caller", me, "--async-fallback",
                   "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["decision"], data["reason"], data["process"]) == ("NONE", "no_recipes", None)
    fallback = data["fallback"]
    assert (fallback["outcome"], fallback["recipeName"], fallback["recipePath"]) == \
        ("PENDING", None, None)
    slart = fallback["slartProcessId"]
    # the CLI has exited; the worker is still waiting for the slow reply
    running = cli_json(env, "process", "show", slart)
    assert (running["status"], running["parentProcessId"]) == ("RUNNING", me), worker_log(slart)
    assert cli_json(env, "process", "events", "--for", me) == []
    gate.set()  # now the worker gets its reply
    waited = cli(env, "process", "wait", slart, "--timeout", "30")
    assert waited.exit_code == 0, (waited.stdout, worker_log(slart))
    [event] = cli_json(env, "process", "events", "--for", me)
    assert (event["kind"], event["source"], event["payload"]["closeReason"]) == \
        ("child_closed", slart, "DONE")
    generated = event["payload"]["outcome"]
    assert generated["recipeName"].endswith("/smart-home-control")
    assert (project_dir / generated["recipePath"]).is_file()
    human = cli(env, "process", "events", "--for", me)
    assert generated["recipePath"] in human.stdout
    # async never spawns the generated recipe
    recipes = {p["recipe"] for p in cli_json(env, "process", "list")}
    assert recipes == {"coding", "slartibartfast"}
    assert "ended DONE" in worker_log(slart)


def test_async_with_an_llm_selector_does_not_wait_for_slart(
        llm_server: ScriptedLLMServer, env: dict[str, str]) -> None:
    llm_server.reply(NONE)
    gate = threading.Event()
    llm_server.reply(RECIPE, gate=gate)  # answered only after the CLI returned
    result = cli(env, "delegate", "--task", TASK, "--async-fallback", "--json")
    data = result.json()
    assert data["fallback"]["outcome"] == "PENDING"
    slart = data["fallback"]["slartProcessId"]
    gate.set()
    assert cli(env, "process", "wait", slart, "--timeout", "30").exit_code == 0


def test_without_caller_the_session_root_gets_the_event(
        llm_server: ScriptedLLMServer, env: dict[str, str], project_dir: Path) -> None:
    hide_every_recipe(project_dir)
    llm_server.reply(RECIPE)
    llm_server.reply("no recipe today")
    llm_server.reply("still none")
    llm_server.reply("none again")
    first = cli(env, "delegate", "--task", TASK, "--name", "lights", "--async-fallback",
                "--json").json()["fallback"]
    assert cli(env, "process", "wait", first["slartProcessId"]).exit_code == 0
    second = cli(env, "delegate", "--task", TASK, "--name", "lights", "--async-fallback",
                 "--json").json()["fallback"]
    assert second["outcome"] == "PENDING", second
    failed = cli(env, "process", "wait", second["slartProcessId"], "--timeout", "30")
    assert failed.exit_code == 1  # closed, not DONE
    listed = {p["name"]: p for p in cli_json(env, "process", "list")}
    root = listed["_session-root"]
    assert root["recipe"] == "session-root"
    assert {listed["delegate-fallback-slart-lights"]["parentProcessId"],
            listed["delegate-fallback-slart-lights-2"]["parentProcessId"]} == {root["id"]}
    events = cli_json(env, "process", "events", "--for", root["id"])
    assert [e["payload"]["closeReason"] for e in events] == ["DONE", "STALE"]
    assert "no valid recipe after 3 tries" in events[1]["payload"]["outcome"]["reason"]
    assert "auditPath" in events[1]["payload"]["outcome"]


def test_sigkilled_worker_is_reported_stale(llm_server: ScriptedLLMServer,
                                            env: dict[str, str], project_dir: Path) -> None:
    env = {**env, **FAST}  # heartbeat every 0.1 s, stale after 2 s
    hide_every_recipe(project_dir)
    llm_server.reply(RECIPE, delay=30)
    me = cli_json(env, "process", "create", "--recipe", "coding", "--name", "me")["id"]
    data = cli(env, "delegate", "--task", TASK, "--caller", me, "--async-fallback",
               "--json").json()
    slart = data["fallback"]["slartProcessId"]
    ws = Workspace(load_settings())
    pid = load_process(ws, slart).worker_pid
    ws.close()
    assert pid is not None and is_pid_alive(pid)
    deadline = time.monotonic() + 20
    while not llm_server.chat_requests and time.monotonic() < deadline:
        time.sleep(0.05)  # mid-run: the worker has sent its request
    assert llm_server.chat_requests, worker_log(slart)
    os.kill(pid, signal.SIGKILL)
    # a gone pid is stale at the next read (no timeout to wait for); SIGKILL takes a moment
    assert wait_until(lambda: not is_pid_alive(pid))
    shown = cli_json(env, "process", "show", slart)
    assert (shown["status"], shown["closeReason"]) == ("CLOSED", "STALE")
    assert f"worker process {pid} is gone" in shown["outcome"]["reason"]
    [event] = cli_json(env, "process", "events", "--for", me)
    assert event["payload"]["closeReason"] == "STALE"
    audit = json.loads(Path(shown["params"]["auditFile"]).read_text(encoding="utf-8"))
    assert audit["state"] == "STALE" and f"worker process {pid} is gone" in audit["reason"]
    assert audit["finishedAt"] and audit["slartProcessId"] == slart


def test_sigkilled_sync_delegate_leaves_a_final_audit(
        llm_server: ScriptedLLMServer, env: dict[str, str], project_dir: Path) -> None:
    env = {**env, **FAST}
    hide_every_recipe(project_dir)
    llm_server.reply(RECIPE, delay=30)
    delegate = subprocess.Popen([sys.executable, "-m", "vance_cli", "delegate", "--task", TASK],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 30
        while not llm_server.chat_requests and time.monotonic() < deadline:
            time.sleep(0.05)  # Slartibartfast has asked the LLM: its audit says RUNNING
        assert llm_server.chat_requests
    finally:
        delegate.kill()
        delegate.wait(10)
    ws = Workspace(load_settings())  # read the row as stored: no stale detection yet
    [(slart_id, params)] = ws.db.query(
        "SELECT id, params FROM processes WHERE recipe = 'slartibartfast'")
    ws.close()
    path = Path(json.loads(params)["auditFile"])
    assert json.loads(path.read_text(encoding="utf-8"))["state"] == "RUNNING"  # died mid-run
    shown = cli_json(env, "process", "show", slart_id)  # the dead worker is detected
    assert (shown["status"], shown["closeReason"]) == ("CLOSED", "STALE")
    audit = json.loads(path.read_text(encoding="utf-8"))
    assert audit["state"] == "STALE" and audit["reason"] == shown["outcome"]["reason"]


def test_stop_ends_the_background_worker(llm_server: ScriptedLLMServer,
                                         env: dict[str, str], project_dir: Path) -> None:
    hide_every_recipe(project_dir)
    llm_server.reply(RECIPE, delay=30)
    data = cli(env, "delegate", "--task", TASK, "--async-fallback", "--json").json()
    slart = data["fallback"]["slartProcessId"]
    ws = Workspace(load_settings())
    pid = load_process(ws, slart).worker_pid
    ws.close()
    assert pid is not None
    # the start line: its SIGTERM handler is in place (a loaded machine may take a while)
    assert wait_until(lambda: f"worker {pid}: process" in worker_log(slart)), worker_log(slart)
    stopped = cli_json(env, "process", "stop", slart)
    assert stopped["signalledPid"] == pid, (stopped, worker_log(slart))
    assert wait_until(lambda: not is_pid_alive(pid)), worker_log(slart)
    shown = cli_json(env, "process", "show", slart)
    assert (shown["status"], shown["closeReason"]) == ("CLOSED", "STOPPED")
    assert "received SIGTERM" in worker_log(slart)
    audit_file = next((project_dir / "recipes" / "_slart").glob("*/audit.json"))
    assert json.loads(audit_file.read_text())["state"] == "STOPPED"


def test_async_cutoff_stops_the_worker(llm_server: ScriptedLLMServer, env: dict[str, str],
                                       project_dir: Path) -> None:
    hide_every_recipe(project_dir)
    llm_server.reply(RECIPE, delay=10)
    data = cli(env, "delegate", "--task", TASK, "--async-fallback", "--fallback-timeout", "1",
               "--json").json()
    slart = data["fallback"]["slartProcessId"]
    waited = cli(env, "process", "wait", slart, "--timeout", "20", "--json")
    assert waited.exit_code == 1
    process = waited.json()["process"]
    assert (process["closeReason"], process["outcome"]["timedOut"]) == ("STOPPED", True)


def test_stop_of_a_sync_fallback_ends_that_cli(llm_server: ScriptedLLMServer,
                                               env: dict[str, str], project_dir: Path) -> None:
    """In sync mode the CLI itself is Slart's worker: 'process stop' ends it (143), cleanly."""
    hide_every_recipe(project_dir)
    llm_server.reply(RECIPE, delay=30)
    cli = subprocess.Popen([sys.executable, "-m", "vance_cli", "delegate", "--task", TASK,
                            "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        deadline = time.monotonic() + 20
        while not llm_server.chat_requests and time.monotonic() < deadline:
            time.sleep(0.05)
        [slart] = [p for p in cli_json(env, "process", "list")
                   if p["recipe"] == "slartibartfast"]
        stopped = cli_json(env, "process", "stop", slart["id"])
        assert stopped["signalledPid"] == cli.pid
        assert cli.wait(timeout=10) == 143
    finally:
        if cli.poll() is None:
            cli.kill()
        cli.communicate()
    shown = cli_json(env, "process", "show", slart["id"])
    assert (shown["status"], shown["closeReason"]) == ("CLOSED", "STOPPED")
    assert [p["recipe"] for p in cli_json(env, "process", "list")] == ["slartibartfast"]
    audit_file = next((project_dir / "recipes" / "_slart").glob("*/audit.json"))
    assert json.loads(audit_file.read_text())["state"] == "STOPPED"


def test_worker_sees_the_same_tenant_project_session_and_folder(
        llm_server: ScriptedLLMServer, env: dict[str, str], vance_home: Path) -> None:
    """Flags and the working folder reach the detached worker: it writes where the CLI would."""
    work = Path.cwd() / "repo" / "sub"
    work.mkdir(parents=True)
    (work.parent / ".vance").mkdir()  # a project folder found upwards, as git finds .git
    llm_server.reply(NONE)
    llm_server.reply(RECIPE)
    scope = ["--tenant", "acme", "--project", "rockets", "--session", "s7"]
    result = subprocess.run([sys.executable, "-m", "vance_cli", *scope, "delegate", "--task",
                             TASK, "--async-fallback", "--json"], env=env, cwd=work,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    slart = json.loads(result.stdout)["fallback"]["slartProcessId"]
    waited = cli(env, *scope, "process", "wait", slart, "--timeout", "30", "--json")
    assert waited.exit_code == 0, (waited.stdout, waited.stderr, worker_log(slart))
    process = waited.json()["process"]
    assert process["session"] == "s7"
    assert Path(process["outcome"]["file"]).is_relative_to(work.parent / ".vance" / "recipes")
    assert not (vance_home / "data" / "tenants" / "acme" / "projects" / "rockets").exists()
    [root] = [p for p in cli_json(env, *scope, "process", "list")
              if p["name"] == "_session-root"]
    [event] = cli_json(env, *scope, "process", "events", "--for", root["id"])
    assert event["source"] == slart
    assert cli_json(env, "process", "list") == []  # nothing in the default tenant/session


def test_a_worker_that_cannot_start_is_failed_with_a_plain_reason(
        llm_server: ScriptedLLMServer, env: dict[str, str], project_dir: Path) -> None:
    hide_every_recipe(project_dir)
    logs = Workspace(load_settings()).settings.paths.logs_dir
    logs.parent.mkdir(parents=True, exist_ok=True)
    logs.write_text("a file where the log folder belongs")
    result = cli(env, "delegate", "--task", TASK, "--async-fallback", "--json")
    assert result.exit_code == 0, result.stderr
    data = result.json()
    fallback = data["fallback"]
    assert fallback["outcome"] == "FAILED"
    assert fallback["rationale"].startswith(
        "Slartibartfast cannot start: the background worker could not be started: ")
    slart = cli_json(env, "process", "show", fallback["slartProcessId"])
    assert (slart["status"], slart["closeReason"]) == ("CLOSED", "STALE")
    assert llm_server.chat_requests == []  # no recipe was asked for
