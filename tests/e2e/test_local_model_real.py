"""``llm.local_model`` against a real llama.cpp server and GGUF (marker ``real_model``).

With only ``llm.local_model`` set (no server started by hand, no base URL), ``vance
delegate "What is the capital of Peru?" --wait`` starts the server, answers, and leaves the
server for the next command until ``vance model stop`` (docs/configuration.md#local-models).

The model and the python that has ``llama_cpp`` come from the real-model tier's cache
(``.ci/real-model``; ``$VANCE_REAL_MODEL_CACHE``, default /var/cache/vance-real-model):
``venv/bin/python`` (or ``venv-local/bin/python``) and ``models/<tier>.gguf``, tier ``small``
(Qwen2.5-Coder-0.5B-Instruct Q4: the smallest whose answer names Lima; the offline selector
routes the task confidently, so no LLM selector call is needed), raised by
``$VANCE_REAL_MODEL_TIER`` (``real_server.tier_for``). Skipped, saying what is missing,
when the tier is not set up, and unless asked for with ``-m real_model``.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from real_server import tier_for

from vance_cli import local_model
from vance_cli.base.config import load_settings

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(900)]

CACHE = Path(os.environ.get("VANCE_REAL_MODEL_CACHE") or "/var/cache/vance-real-model")
TIER = tier_for("small")


def _llama_python() -> Path | None:
    for venv in ("venv", "venv-local"):
        python = CACHE / venv / "bin" / "python"
        if python.exists() and any((CACHE / venv / "lib").glob("python3*/site-packages/"
                                                               "llama_cpp/server")):
            return python
    return None


@pytest.fixture()
def real_local_model(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Path:
    if "real_model" not in (request.config.getoption("-m") or ""):
        pytest.skip("a real model takes minutes: run with -m real_model")
    python = _llama_python()
    gguf = CACHE / "models" / f"{TIER}.gguf"
    if python is None:
        pytest.skip(f"no venv with llama-cpp-python[server] under {CACHE} "
                    "(run .ci/real-model setup)")
    if not gguf.is_file():
        pytest.skip(f"no {gguf} (run .ci/real-model setup {TIER})")
    monkeypatch.setenv("VANCE_LLM_LOCAL_MODEL", str(gguf))
    monkeypatch.setenv("VANCE_LLM_LOCAL_COMMAND",
                       shlex.join([str(python), "-m", "llama_cpp.server"]))
    monkeypatch.setenv("VANCE_LLM_TIMEOUT", "600")  # a CPU shared by many
    monkeypatch.setenv("VANCE_LLM_LOCAL_START_TIMEOUT", "600")
    yield gguf
    local_model.stop_server(load_settings().paths)


def _vance(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vance_cli", *args], capture_output=True,
                          text=True, timeout=850, env=os.environ.copy())


def test_delegate_answers_with_only_a_gguf_configured(real_local_model: Path) -> None:
    paths = load_settings().paths
    assert local_model.read_record(paths) is None  # no server started by hand
    result = _vance("delegate", "What is the capital of Peru?", "--wait")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lima" in result.stdout.lower(), result.stdout
    server = local_model.read_record(paths)
    assert server is not None and local_model.answers(server.port)
    assert server.model == str(real_local_model)
    status = json.loads(_vance("model", "status", "--json").stdout)
    assert status["state"] == "running" and status["pid"] == server.pid
    stopped = _vance("model", "stop")
    assert stopped.returncode == 0 and f"pid {server.pid}" in stopped.stderr
    assert not local_model.is_running(server)
