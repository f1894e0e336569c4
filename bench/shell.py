"""Print what ``vance shell`` costs: time to the first prompt, and completion latency.

- first prompt: ``vance shell`` started in a pseudo-terminal until ``vance>`` shows;
- a one-line script (``/help`` on a pipe), start to exit;
- the completer per key press: slash commands, wizard names (cold: the
  listing is parsed; warm: cached until the next prompt), process ids with
  1000 processes in the session.

Run: python bench/shell.py [--runs N]   (temporary VANCE_HOME; prints numbers, asserts nothing)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable


def _report(label: str, samples: list[float]) -> None:
    print(f"{label:<52} median {statistics.median(samples):8.2f} ms"
          f"  max {max(samples):8.2f} ms  (n={len(samples)})")


def timed(label: str, func: Callable[[], object], repeat: int = 50) -> None:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1000)
    _report(label, samples)


def first_prompt(runs: int, env: dict[str, str]) -> None:
    import pexpect

    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        child = pexpect.spawn(sys.executable, ["-m", "vance_cli", "shell"], env=env,
                              encoding="utf-8", timeout=60, dimensions=(40, 120))
        child.expect("vance>")
        samples.append((time.perf_counter() - start) * 1000)
        child.send("\x04")
        child.expect(pexpect.EOF)
        child.close()
    _report("vance shell: start to first prompt (pty)", samples)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "vance_cli", "shell"], input="/help\n", env=env,
                       capture_output=True, text=True, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    _report("printf '/help' | vance shell (script mode)", samples)


def completion(env: dict[str, str]) -> None:
    os.environ.update(env)
    import typer
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from vance_cli.cli.app import app
    from vance_cli.cli.shell.complete import ShellCompleter, Sources
    from vance_cli.cli.shell.dispatch import Shell
    from vance_cli.processes.model import ProcessSpec
    from vance_cli.processes.records import create_process

    root = typer.main.get_command(app)
    with root.make_context("vance", ["shell"]) as ctx:
        shell = Shell(ctx, interactive=False)
        sources = Sources(shell)
        completer = ShellCompleter(sources)
        event = CompleteEvent()

        def complete(text: str) -> list[object]:
            return list(completer.get_completions(Document(text), event))

        def cold() -> None:
            sources.refresh()
            complete("/wizard ")

        timed("complete '/wiz'", lambda: complete("/wiz"))
        timed("complete '/wizard ' cold (5 wizards parsed)", cold)
        timed("complete '/wizard ' warm (cached)", lambda: complete("/wizard "))
        timed("complete '/process ' (subcommands)", lambda: complete("/process "))
        for i in range(1000):
            create_process(shell.ws, ProcessSpec(recipe="translate", name=f"p{i}"))
        timed("complete '/process show ' (1000 processes)", lambda: complete("/process show "))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    home = tempfile.mkdtemp(prefix="vance-bench-shell-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VANCE_", "OPENAI_"))}
    env.update({"VANCE_HOME": home, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"})
    first_prompt(runs, env)
    completion(env)


if __name__ == "__main__":
    main()
