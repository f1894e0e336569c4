"""The core never imports a UI library; startup paths stay light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import vance_cli

CORE = Path(vance_cli.__file__).parent
UI = ("typer", "rich", "questionary", "prompt_toolkit", "click")
ENTRY_POINTS = ("__main__.py", "background.py")
"""Programs, not library code: they may print and exit."""


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_modules_import_no_ui_library() -> None:
    offenders = {}
    for path in CORE.rglob("*.py"):
        rel = path.relative_to(CORE)
        if rel.parts[0] in ("cli",) or rel.name in ENTRY_POINTS:
            continue
        bad = _imports(path) & set(UI)
        if bad:
            offenders[str(rel)] = bad
    assert offenders == {}


def test_core_never_prints_or_exits() -> None:
    offenders = []
    for path in CORE.rglob("*.py"):
        rel = path.relative_to(CORE)
        if rel.parts[0] == "cli" or rel.name in ENTRY_POINTS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("print", "exit", "quit"):
                offenders.append(f"{rel}:{node.lineno}")
            if isinstance(node, ast.Attribute) and node.attr in ("exit", "argv") and \
                    isinstance(node.value, ast.Name) and node.value.id == "sys":
                offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []


def _modules_after(*args: str) -> set[str]:
    code = (
        "import sys\n"
        "from vance_cli.cli.boundary import run\n"
        f"code = run({list(args)!r})\n"
        "sys.stderr.write('\\nMODULES=' + ','.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    line = proc.stderr.rsplit("MODULES=", 1)[1]
    return {m.split(".")[0] for m in line.split(",")}


def test_light_commands_import_no_heavy_module() -> None:
    for args in (["--help"], ["recipe", "list", "--json"], ["catalog", "show", "--json"]):
        loaded = _modules_after(*args)
        heavy = loaded & {"openai", "questionary", "prompt_toolkit", "jinja2",
                          "numpy", "httpx"}
        assert heavy == set(), (args, heavy)
    assert "rich" not in _modules_after("recipe", "list", "--json")


OFFLINE_DELEGATE = ("delegate", "--task", "Summarize this meeting transcript", "--dry-run",
                    "--json")


def test_offline_delegate_imports_no_llm_prompt_or_ui_module() -> None:
    for args in (OFFLINE_DELEGATE,
                 ("delegate", "--task", "Write a short essay about tea", "--dry-run", "--json")):
        loaded = _modules_after(*args)
        heavy = loaded & {"openai", "httpx", "httpx2", "jinja2", "json_repair", "questionary",
                          "prompt_toolkit", "rich", "numpy"}
        assert heavy == set(), (args, heavy)
