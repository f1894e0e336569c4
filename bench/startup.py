"""Startup time of vance's light paths against the framework floor (prints numbers only).

Runs every command ``--runs`` times, interleaved round by round (so drifts in
machine load hit all commands alike), and prints the median wall time of
each, plus its ratio to the bare Typer app (``bench/typer_hello.py``).

Budgets (ratios to the bare Typer app): ``vance --help`` ≤ 1.3x, offline
``vance delegate --dry-run --json`` ≤ 1.6x. This script only reports them.

Usage: python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASK = "Write a short essay about the history of tea"
OFFLINE_TASK = "Summarize this meeting transcript into five bullet points"


def _vance() -> list[str]:
    script = Path(sys.executable).with_name("vance")
    return [str(script)] if script.exists() else [sys.executable, "-m", "vance_cli"]


def _commands() -> list[tuple[str, list[str], str | None]]:
    py, vance = [sys.executable], _vance()
    return [
        ("python -c pass", [*py, "-c", "pass"], None),
        ("typer hello (floor)", [*py, str(HERE / "typer_hello.py")], None),
        ("typer hello --help", [*py, str(HERE / "typer_hello.py"), "--help"], None),
        ("vance --help", [*vance, "--help"], "hello"),
        ("vance recipe list --json", [*vance, "recipe", "list", "--json"], "hello"),
        ("vance delegate --dry-run --json (trigger)",
         [*vance, "delegate", "--task", TASK, "--dry-run", "--json"], "hello"),
        ("vance delegate --dry-run --json (offline ranking)",
         [*vance, "delegate", "--task", OFFLINE_TASK, "--dry-run", "--json"], "hello"),
    ]


def _env(home: str) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE would make every run recompile vance's modules
    # (pip writes .pyc files for an installed package; an editable install
    # writes them on first import), which no real installation pays.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VANCE_", "OPENAI_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env["VANCE_HOME"] = home
    return env


def _time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="runs per command (default 21)")
    args = parser.parse_args()
    commands = _commands()
    samples: dict[str, list[float]] = {label: [] for label, _, _ in commands}
    with tempfile.TemporaryDirectory() as home:
        env = _env(home)
        for argv in (c[1] for c in commands):  # warm up: caches, database created
            _time(argv, env)
        for _ in range(args.runs):
            for label, argv, _ in commands:
                samples[label].append(_time(argv, env))
    medians = {label: statistics.median(values) * 1000 for label, values in samples.items()}
    floor = medians["typer hello (floor)"]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"median of {args.runs} interleaved runs")
    help_floor = medians["typer hello --help"]
    print(f"{'command':<52} {'ms':>7} {'x floor':>8} {'over floor':>10}")
    for label, _, _ in commands:
        base = help_floor if label.endswith("--help") and label != "typer hello --help" else floor
        print(f"{label:<52} {medians[label]:>7.1f} {medians[label] / floor:>8.2f}"
              f" {medians[label] - base:>8.1f}ms")
    print("budgets: vance --help <= 1.30x, offline delegate <= 1.60x (x floor = / typer hello)")
    print(f"vance --help / typer hello --help: {medians['vance --help'] / help_floor:.2f}x "
          "(both render Rich help)")


if __name__ == "__main__":
    main()
