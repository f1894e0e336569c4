"""Print the cost of the operator paths: stale detection on reads, catalog reload, record reads.

Run: python bench/bench_ops.py   (uses a temporary VANCE_HOME; prints numbers, asserts nothing)
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def timed(label: str, func: Callable[[], object], repeat: int = 20) -> None:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1000)
    print(f"{label:<58} median {statistics.median(samples):7.2f} ms"
          f"  max {max(samples):7.2f} ms  (n={repeat})")


def main() -> None:
    home = tempfile.mkdtemp(prefix="vance-bench-")
    os.environ["VANCE_HOME"] = home
    from vance_cli.base.config import load_settings
    from vance_cli.base.paths import bundled_dir
    from vance_cli.catalog.admin import reload_catalog
    from vance_cli.catalog.model import load_active
    from vance_cli.processes.lifecycle import reap_stale
    from vance_cli.processes.model import ProcessSpec, Status
    from vance_cli.processes.records import create_process, load_process, transition
    from vance_cli.workspace import Workspace

    ws = Workspace(load_settings())
    ids = [create_process(ws, ProcessSpec(recipe="coding", name=f"p{i}")).id for i in range(1000)]
    timed("reap_stale, 1000 processes, none RUNNING", lambda: reap_stale(ws))
    for pid in ids[:200]:
        transition(ws, pid, Status.RUNNING)
    timed("reap_stale, 1000 processes, 200 RUNNING and fresh", lambda: reap_stale(ws))
    timed("load_process (reap + read), 200 RUNNING", lambda: load_process(ws, ids[500]))

    project = Path(home) / "data/tenants/default/projects/default/recipes"
    project.mkdir(parents=True)
    for i in range(500):
        (project / f"r{i}.yaml").write_text(f"engine: ford\ndescription: recipe {i}\n")
    source = bundled_dir("catalog") / "engines.yaml"
    timed("catalog reload (validate + 517 recipes orphan scan + write)",
          lambda: reload_catalog(ws, source), repeat=10)
    timed("load_active (read the record)", lambda: load_active(ws.settings.paths), repeat=200)
    ws.close()
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
