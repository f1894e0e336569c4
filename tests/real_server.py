"""The real-model tier's server for tests marked ``real_model`` (docs/development.md).

``real_llm(tier)`` runs ``.ci/real-model start <tier>`` (idempotent: a running server is
reused) and returns its ``VANCE_LLM_BASE_URL`` and ``VANCE_LLM_MODEL``. The test is skipped,
saying what to run, when the tier is not set up (no venv with ``llama_cpp`` or no model
file under the cache), and ``conftest.py`` skips every ``real_model`` test unless the run
asks for them (``-m real_model``): a real model takes minutes on a small CPU.

Tiers, smallest first: ``tiny`` (SmolLM2-135M-Instruct Q4_1), ``small``
(Qwen2.5-Coder-0.5B-Instruct Q4_K_M), ``medium`` (Qwen2.5-Coder-1.5B-Instruct Q4). A test
names the smallest tier that shows its behaviour; ``$VANCE_REAL_MODEL_TIER`` raises every
test to at least that tier. The environment is read at import, before the autouse fixture
clears ``VANCE_*``.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / ".ci" / "real-model"
CACHE = Path(os.environ.get("VANCE_REAL_MODEL_CACHE") or "/var/cache/vance-real-model")
TIERS = ("tiny", "small", "medium")
FLOOR = os.environ.get("VANCE_REAL_MODEL_TIER") or "tiny"

START_TIMEOUT = 900
"""Seconds ``start`` may take: loading a 1.1 GB model on a busy machine."""

LLM_TIMEOUT = "600"
"""``VANCE_LLM_TIMEOUT`` for a real model: a reply on 2 shared cores takes long."""


@dataclass(frozen=True)
class RealServer:
    """A running tier server: its tier, ``…/v1`` URL and model alias."""

    tier: str
    base_url: str
    model: str

    def env(self) -> dict[str, str]:
        """Return the ``VANCE_LLM_*`` variables that point vance at this server."""
        return {"VANCE_LLM_BASE_URL": self.base_url, "VANCE_LLM_MODEL": self.model,
                "VANCE_LLM_TIMEOUT": LLM_TIMEOUT, "VANCE_LLM_MAX_RETRIES": "0"}


_started: dict[str, RealServer] = {}


def tier_for(wanted: str) -> str:
    """Return ``wanted`` raised to ``$VANCE_REAL_MODEL_TIER`` when that is larger."""
    floor = FLOOR if FLOOR in TIERS else "tiny"
    return max(wanted, floor, key=TIERS.index)


def set_up(tier: str) -> str | None:
    """Return why ``tier`` cannot run here, or None when it is set up."""
    if not any((CACHE / "venv" / "lib").glob("python3*/site-packages/llama_cpp/server")):
        return f"no llama-cpp-python[server] under {CACHE}/venv (run .ci/real-model setup {tier})"
    if not (CACHE / "models" / f"{tier}.gguf").is_file():
        return f"no {CACHE}/models/{tier}.gguf (run .ci/real-model setup {tier})"
    return None


def real_llm(tier: str) -> RealServer:
    """Start (or reuse) the server of ``tier`` (raised to the floor); skip when not set up."""
    tier = tier_for(tier)
    if tier in _started:
        return _started[tier]
    missing = set_up(tier)
    if missing:
        pytest.skip(missing)
    done = subprocess.run([str(SCRIPT), "start", tier], capture_output=True, text=True,
                          timeout=START_TIMEOUT, check=False)
    if done.returncode != 0:
        pytest.fail(f".ci/real-model start {tier} failed: {done.stderr.strip()[-500:]}")
    values = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    server = RealServer(tier, values["VANCE_LLM_BASE_URL"], values["VANCE_LLM_MODEL"])
    _started[tier] = server
    return server
