"""Print how long ``vance delegate --async-fallback`` takes to return, and a sync fallback run.

Run: python bench/bench_fallback.py   (temporary VANCE_HOME, a scripted LLM server on
127.0.0.1 from tests/llm_server.py; prints numbers, asserts nothing)

Cases, each a real ``python -m vance_cli`` process, wall time until it exits:
- async, selector NONE without an LLM call (every recipe hidden: ``no_recipes``):
  what the async fallback itself costs on top of CLI start-up;
- async, selector NONE from the LLM: adds the selector's call (``openai`` import);
- sync, selector NONE from the LLM, Slart valid on the first try: the whole fallback;
- the bare ``vance --version`` start-up and the same ``no_recipes`` NONE with
  ``--no-fallback``, for reference (the difference is what the async fallback adds).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from llm_server import ScriptedLLMServer

NONE = '{"decision": "NONE", "recipe": null, "rationale": "nothing fits"}'
RECIPE = ("```yaml\nname: smart-home-control\ntitle: Smart home\nengine: ford\n"
          "description: Switches devices.\n```")
REPEAT = 7


def run(env: dict[str, str], *args: str, settle: float = 0.0) -> float:
    time.sleep(settle)  # let earlier background workers finish: they compete for the CPU
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "vance_cli", *args], env=env,
                          capture_output=True, text=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    if "--json" in args:
        json.loads(proc.stdout)
    return elapsed


def report(label: str, samples: list[float]) -> None:
    print(f"{label:<62} median {statistics.median(samples):7.1f} ms"
          f"  min {min(samples):7.1f}  max {max(samples):7.1f}  (n={len(samples)})")


def main() -> None:
    home = tempfile.mkdtemp(prefix="vance-bench-")
    server = ScriptedLLMServer().start()
    env = {**os.environ, "VANCE_HOME": home, **server.env()}
    hidden = Path(home) / "data/tenants/default/projects/hidden/recipes"
    hidden.mkdir(parents=True)
    from vance_cli.base.paths import bundled_dir

    for path in (bundled_dir("catalog") / "recipes").glob("*.yaml"):
        (hidden / path.name).write_text("engine: ford\ndescription: hidden\ninternal: true\n")
    task = ["delegate", "--task", "Turn off the kitchen lights"]
    report("vance --version", [run(env, "--version") for _ in range(REPEAT)])
    report("no fallback, no selector LLM call (no_recipes)",
           [run(env, "--project", "hidden", *task, "--no-fallback", "--json")
            for _ in range(REPEAT)])
    samples = []
    for _ in range(REPEAT):
        server.reply(RECIPE)
        samples.append(run(env, "--project", "hidden", *task, "--async-fallback", "--json",
                           settle=2.0))
    report("async fallback, no selector LLM call (no_recipes)", samples)
    samples = []
    for _ in range(REPEAT):
        server.reply(NONE)
        server.reply(RECIPE)
        samples.append(run(env, *task, "--async-fallback", "--json", settle=2.0))
    report("async fallback, selector NONE from the LLM", samples)
    samples = []
    for _ in range(REPEAT):
        server.reply(NONE)
        server.reply(RECIPE)
        samples.append(run(env, *task, "--json"))
    report("sync fallback, selector NONE + Slart (1 try) + spawn", samples)
    time.sleep(2)  # let the background workers finish before the server goes
    server.stop()
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
