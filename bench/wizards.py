"""Wizard timings: load + compile of the bundled wizards, one render, and CLI wall time.

Prints numbers; asserts nothing. Run: ``python bench/wizards.py``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _best(fn, repeat: int = 20) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000, statistics.median(times) * 1000


def main() -> None:
    home = tempfile.mkdtemp(prefix="vance-bench-")
    os.environ["VANCE_HOME"] = home
    from vance_cli.base.config import load_settings
    from vance_cli.documents.cascade import Kind
    from vance_cli.wizards.form import read_values
    from vance_cli.wizards.loader import find_wizard, load_cascade
    from vance_cli.wizards.prompt import RenderContext, build_prompt
    from vance_cli.workspace import Workspace

    ws = Workspace(load_settings())
    cascade = ws.cascade(Kind.WIZARDS)
    start = time.perf_counter()
    load_cascade(cascade)  # first call: imports jinja2 and pydantic models
    print(f"first load of the bundled wizards (imports included): "
          f"{(time.perf_counter() - start) * 1000:.1f} ms")
    best, median = _best(lambda: load_cascade(cascade))
    print(f"load + compile 5 bundled wizards: best {best:.2f} ms, median {median:.2f} ms")
    wizard = find_wizard(cascade, "gremium")
    answers = read_values((ROOT / "tests/data/wizards/gremium.yaml").read_text(), "gremium")
    context = RenderContext("en", "anna", "default")
    best, median = _best(lambda: build_prompt(wizard, answers, context), repeat=200)
    print(f"validate + render gremium: best {best:.3f} ms, median {median:.3f} ms")
    for args in (["--help"], ["wizard", "list", "--json"],
                 ["wizard", "render", "gremium", "--values",
                  str(ROOT / "tests/data/wizards/gremium.yaml"), "--json"]):
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "vance_cli", *args], capture_output=True,
                           check=False)
            runs.append(time.perf_counter() - start)
        print(f"vance {' '.join(args[:2])}: best {min(runs) * 1000:.0f} ms, "
              f"median {statistics.median(runs) * 1000:.0f} ms (wall, new process)")


if __name__ == "__main__":
    main()
