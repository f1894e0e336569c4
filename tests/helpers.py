"""Test helpers: declare document trees inline, run the CLI in-process."""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vance_cli.workspace import Workspace


REPO = Path(__file__).resolve().parents[1]
"""The repository root (tests may read its docs, data and bundled documents)."""

TESTS = REPO / "tests"
"""The tests folder: ``data/``, ``golden/``, ``workers/``."""


def build_file_tree(root: Path, spec: Mapping[str, str | bytes]) -> None:
    """Write files below ``root``: relative path → dedented text (or raw bytes)."""
    for rel, content in spec.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")


@dataclass
class CliResult:
    """Exit code and the two output streams of one in-process ``vance`` run."""

    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """Parse stdout as one JSON document."""
        return json.loads(self.stdout)


def run_cli(args: Sequence[str], input: str | bytes | None = None,
            env: Mapping[str, str | None] | None = None) -> CliResult:
    """Run ``vance ARGS`` in-process through the real boundary (exit-code mapping included)."""
    from typer.testing import CliRunner

    from vance_cli.cli import output
    from vance_cli.cli.boundary import run

    output.console.cache_clear()
    output.err_console.cache_clear()
    runner = CliRunner()
    with runner.isolation(input=input, env=env) as (out, err, _mixed):
        code = run(list(args))
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        return CliResult(code, out.getvalue().decode(), err.getvalue().decode())


def slart_recipe_reply(engine: str = "ford", name: str = "smart-home-control") -> str:
    """A Slartibartfast reply as real models send it: <think>, prose, a fenced YAML recipe."""
    return (f"<think>\nThe task is about devices. Maybe engine: marvin? No, one job.\n</think>\n"
            f"Sure — here is a reusable recipe:\n\n```yaml\nname: {name}\n"
            f"title: Control smart-home devices\nengine: {engine}\n"
            f"description: >-\n  Switches smart-home devices such as lights, heating and\n"
            f"  blinds through their home-automation interface.\n"
            f"tags: [switch, control devices, schalten]\n```\n\nHope this helps!")


def make_process(ws: Workspace, name: str, parent: str | None = None) -> str:
    """Create a ``coding`` process named ``name`` (under ``parent``); return its id."""
    from vance_cli.processes.model import ProcessSpec
    from vance_cli.processes.records import create_process

    return create_process(ws, ProcessSpec(recipe="coding", name=name, parent=parent)).id


WAIT = 60.0
"""Seconds a test waits for a state before it fails: generous, so a busy machine only slows
the suite down, never fails it (speed is measured in bench/, not here)."""


def wait_until(condition: Callable[[], object], timeout: float = WAIT,
               interval: float = 0.02) -> bool:
    """Poll ``condition`` until truthy or ``timeout`` seconds passed; return the last check."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return bool(condition())
        time.sleep(interval)
    return True
