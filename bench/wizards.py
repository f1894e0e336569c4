"""Wizard timings: load + compile of the bundled wizards, one render, and CLI wall time.

Also the listing of 1,005 wizards (the bundled five and 1,000 copies over the
four layers, as ``bench/scale.py`` builds them), cold (no document cache) and
warm, as ``vance wizard list --json`` in a new process: wall and CPU time.
The budget for the cold listing is 2.5 s (docs/benchmarks.md "Wizards").

Prints numbers; asserts nothing. Run: ``python bench/wizards.py [--wizards 1000]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
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


def _listing(wizards: int) -> None:
    """Print cold and warm ``vance wizard list --json`` over ``wizards`` copies."""
    sys.path.insert(0, str(ROOT / "bench"))
    import scale

    with tempfile.TemporaryDirectory(prefix="vance-bench-wizards-") as tmp:
        pythonpath, home = scale.build_tree(Path(tmp), 10, wizards)
        env = scale._env(pythonpath, home)

        def once(cold: bool) -> tuple[float, float]:
            if cold:
                shutil.rmtree(home / "state" / "cache", ignore_errors=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "vance_cli", "wizard", "list", "--json"],
                           env=env, stdout=subprocess.DEVNULL, check=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

        once(True)  # compile the package copy's bytecode, as an installation has it
        for label, cold in (("cold", True), ("warm", False)):
            runs = [once(cold) for _ in range(3)]
            print(f"vance wizard list --json, {wizards + 5} wizards, {label}: wall median "
                  f"{statistics.median(r[0] for r in runs) * 1000:.0f} ms, CPU median "
                  f"{statistics.median(r[1] for r in runs) * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wizards", type=int, default=1000)
    wizards = parser.parse_args().wizards
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
    if wizards:
        _listing(wizards)


if __name__ == "__main__":
    main()
