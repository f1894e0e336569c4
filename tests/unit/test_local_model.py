"""The local model server's lifecycle (vance_cli/local_model.py): start on demand, one server
for racing commands, reuse, a stale record, stop; against a real HTTP process on 127.0.0.1
that stands in for ``llama_cpp.server`` (tests/workers/fake_llama_server.py)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import run_cli, wait_until

from vance_cli import llm, local_model
from vance_cli.base.config import load_settings
from vance_cli.base.errors import LocalModelError

FAKE = Path(__file__).resolve().parents[1] / "workers" / "fake_llama_server.py"


@pytest.fixture()
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-model.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 60)
    return path


@pytest.fixture()
def local_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, gguf: Path) -> Path:
    argv_log = tmp_path / "argv.jsonl"
    monkeypatch.setenv("VANCE_LLM_LOCAL_MODEL", str(gguf))
    monkeypatch.setenv("VANCE_LLM_LOCAL_COMMAND", shlex.join([sys.executable, str(FAKE)]))
    monkeypatch.setenv("FAKE_LLAMA_ARGV", str(argv_log))
    yield argv_log
    local_model.stop_server(load_settings().paths)  # never leave a server behind


def _starts(argv_log: Path) -> list[dict[str, object]]:
    if not argv_log.exists():
        return []
    return [json.loads(line) for line in argv_log.read_text().splitlines()]


def test_first_use_starts_a_server_that_config_points_at(local_env: Path, gguf: Path) -> None:
    settings = load_settings()
    config = llm.LLMConfig.from_settings(settings)
    server = local_model.read_record(settings.paths)
    assert server is not None
    assert config.base_url == server.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert config.model == "tiny-model" and config.api_key is None
    assert local_model.answers(server.port)
    (start,) = _starts(local_env)
    argv = start["argv"]
    assert argv[argv.index("--interrupt_requests") + 1] == "False"
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    assert argv[argv.index("--model") + 1] == str(gguf)
    assert start["pid"] == server.pid


def test_later_commands_reuse_the_server(local_env: Path) -> None:
    settings = load_settings()
    first = local_model.ensure_server(settings)
    again = local_model.ensure_server(load_settings())
    assert again == first
    assert len(_starts(local_env)) == 1


def test_a_busy_server_is_reused_not_replaced(local_env: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    busy = tmp_path / "busy"
    monkeypatch.setenv("FAKE_LLAMA_BUSY", str(busy))
    first = local_model.ensure_server(load_settings())
    busy.touch()  # from now on /v1/models waits, as while the model writes a reply
    try:
        assert not local_model.answers(first.port, timeout=0.5)
        assert local_model.ensure_server(load_settings()) == first
        assert local_model.server_status(load_settings().paths)[1] == "running"
    finally:
        busy.unlink()
    assert len(_starts(local_env)) == 1 and local_model.is_running(first)


def test_racing_commands_start_one_server(local_env: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    gate = tmp_path / "gate"
    monkeypatch.setenv("FAKE_LLAMA_GATE", str(gate))
    script = ("from vance_cli import local_model; from vance_cli.base.config import "
              "load_settings; print(local_model.ensure_server(load_settings()).port)")
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]
    assert wait_until(lambda: len(_starts(local_env)) >= 1)
    gate.touch()  # the one server may listen now
    ports = {proc.communicate(timeout=60)[0].strip() for proc in procs}
    assert [p.returncode for p in procs] == [0, 0]
    assert len(ports) == 1
    assert len(_starts(local_env)) == 1


def test_a_killed_server_leaves_a_record_that_the_next_use_replaces(local_env: Path) -> None:
    settings = load_settings()
    first = local_model.ensure_server(settings)
    os.killpg(first.pid, signal.SIGKILL)
    assert wait_until(lambda: not local_model.is_running(first))
    assert local_model.server_status(settings.paths)[1] == "gone"
    shown = run_cli(["model", "status"])
    assert shown.exit_code == 0 and "state: gone" in shown.stdout
    second = local_model.ensure_server(settings)
    assert second.pid != first.pid and local_model.answers(second.port)
    assert len(_starts(local_env)) == 2


def test_a_reused_pid_is_not_taken_for_the_server(local_env: Path) -> None:
    settings = load_settings()
    server = local_model.ensure_server(settings)
    other = local_model.Server(pid=os.getpid(), port=server.port, started="1",
                               model=server.model, command=server.command,
                               context=server.context, alias=server.alias)
    assert not local_model.is_running(other)  # same pid alive, but another start time


def test_another_model_replaces_the_server(local_env: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    first = local_model.ensure_server(load_settings())
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF-other")
    monkeypatch.setenv("VANCE_LLM_LOCAL_MODEL", str(other))
    second = local_model.ensure_server(load_settings())
    assert second.model == str(other) and second.alias == "other"
    assert wait_until(lambda: not local_model.is_running(first))


def test_model_stop_stops_it_and_status_says_so(local_env: Path) -> None:
    server = local_model.ensure_server(load_settings())
    shown = run_cli(["model", "status", "--json"])
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["state"] == "running"
    stopped = run_cli(["model", "stop", "--json"])
    assert stopped.exit_code == 0, stopped.stderr
    assert json.loads(stopped.stdout)["stopped"] is True
    assert not local_model.is_running(server)
    assert local_model.read_record(load_settings().paths) is None
    again = run_cli(["model", "stop"])
    assert again.exit_code == 0 and "no local model server was running" in again.stderr
    assert json.loads(run_cli(["model", "status", "--json"]).stdout)["state"] == "none"


def test_model_start_starts_it(local_env: Path) -> None:
    result = run_cli(["model", "start", "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["state"] == "running" and local_model.answers(data["port"])


def test_a_file_that_is_not_a_gguf_is_one_line(local_env: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"PK\3\4 not a model")
    monkeypatch.setenv("VANCE_LLM_LOCAL_MODEL", str(bad))
    result = run_cli(["model", "start"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"vance: error: llm.local_model {bad}: not a GGUF model file"
        " (it does not start with 'GGUF')"]
    assert _starts(local_env) == []


def test_a_missing_file_is_one_line(local_env: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_LLM_LOCAL_MODEL", str(tmp_path / "nope.gguf"))
    with pytest.raises(LocalModelError, match=r"nope.gguf: no such file$"):
        local_model.ensure_server(load_settings())


def test_the_default_command_without_the_extra_names_it(
        local_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VANCE_LLM_LOCAL_COMMAND")
    if all(local_model.importlib.util.find_spec(n) for n in local_model.SERVER_PACKAGES):
        pytest.skip("this interpreter has llama-cpp-python[server]")
    with pytest.raises(LocalModelError, match=r"needs the local extra .*vance\[local\]"):
        local_model.ensure_server(load_settings())
    assert _starts(local_env) == []


def test_a_server_that_exits_names_its_last_line(local_env: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_FAIL", "ModuleNotFoundError: No module named 'llama_cpp'")
    with pytest.raises(LocalModelError) as caught:
        local_model.ensure_server(load_settings())
    assert "exited (code 1) before it was ready: ModuleNotFoundError: No module named" \
        in caught.value.message
    assert "vance[local]" in caught.value.message
    assert local_model.read_record(load_settings().paths) is None


def test_a_server_not_ready_in_time_is_stopped(local_env: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_GATE", str(tmp_path / "never"))
    monkeypatch.setenv("VANCE_LLM_LOCAL_START_TIMEOUT", "0.5")
    with pytest.raises(LocalModelError, match=r"not ready within 0\.5 s") as caught:
        local_model.ensure_server(load_settings())
    assert caught.value.timeout
    (start,) = _starts(local_env)
    assert wait_until(lambda: not _alive(int(start["pid"])))


def _alive(pid: int) -> bool:
    stat = local_model._proc_stat(pid)
    return stat is not None and stat[0] != "Z"


def test_a_base_url_wins_over_the_local_model(local_env: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    assert llm.LLMConfig.from_settings(load_settings()).base_url == "http://127.0.0.1:9/v1"
    assert _starts(local_env) == []


def test_threads_of_one_process_share_the_start(local_env: Path) -> None:
    settings = load_settings()
    ports: list[int] = []
    threads = [threading.Thread(target=lambda: ports.append(
        local_model.ensure_server(settings).port)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(set(ports)) == 1 and len(ports) == 3


def test_the_selector_and_a_detached_worker_use_the_one_server(
        local_env: Path, llm_server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_UPSTREAM", llm_server.url)
    monkeypatch.setenv("VANCE_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("VANCE_SELECTOR_COMBINE", "llm")  # the selector asks the server too
    llm_server.reply('{"decision": "MATCH", "recipe": "quick-lookup", "rationale": "a fact"}')
    llm_server.reply("The capital of Peru is Lima.")
    created = run_cli(["delegate", "--task", "What is the capital of Peru?", "--json"])
    assert created.exit_code == 0, created.stderr
    assert json.loads(created.stdout)["process"], created.stdout
    process = json.loads(created.stdout)["process"]["id"]
    waited = run_cli(["process", "wait", process, "--timeout", "60"])
    assert waited.exit_code == 0, waited.stdout + waited.stderr
    assert "Lima" in run_cli(["process", "result", process]).stdout
    assert len(llm_server.requests) == 2  # the selector's call and the worker's turn
    assert len(_starts(local_env)) == 1


@pytest.mark.parametrize("args", [["--help"], ["model", "--help"],
                                  ["delegate", "--task", "Summarize this meeting transcript",
                                   "--dry-run", "--json"]])
def test_light_paths_never_load_the_local_model_module(args: list[str]) -> None:
    code = ("import sys\nfrom vance_cli.cli.boundary import run\n"
            f"run({args!r})\nsys.stderr.write('\\nLOADED=' + str('vance_cli.local_model' in "
            "sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    loaded = proc.stderr.rsplit("LOADED=", 1)[1].strip()
    assert loaded == ("True" if args[0] == "model" else "False")  # model: the control


def test_model_stop_after_a_crash_removes_the_record(local_env: Path) -> None:
    server = local_model.ensure_server(load_settings())
    os.killpg(server.pid, signal.SIGKILL)
    assert wait_until(lambda: not local_model.is_running(server))
    result = run_cli(["model", "stop"])
    assert result.exit_code == 0
    assert f"(pid {server.pid}) had already exited; removed its record" in result.stderr
    assert local_model.read_record(load_settings().paths) is None


def test_a_command_stopped_while_the_server_starts_leaves_no_server(
        local_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_GATE", str(tmp_path / "never"))
    script = ("from vance_cli import local_model; from vance_cli.base.config import "
              "load_settings; local_model.ensure_server(load_settings())")
    proc = subprocess.Popen([sys.executable, "-c", script])
    assert wait_until(lambda: len(_starts(local_env)) == 1)
    proc.send_signal(signal.SIGINT)  # Ctrl-C while it waits for readiness
    assert proc.wait(timeout=60) != 0
    (start,) = _starts(local_env)
    assert wait_until(lambda: not _alive(int(start["pid"])))
    assert local_model.read_record(load_settings().paths) is None
