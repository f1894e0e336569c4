"""The house plan holds: no import cycles, imports at module top, no UI library in the core,
startup paths light (docs/architecture.md, docs/decisions/0003-imports.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

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


TEAM_LIBRARIES = frozenset({"psycopg", "psycopg_pool", "psycopg_binary", "procrastinate"})
"""Team mode's libraries (docs/teams.md): never imported while ``state.url`` is unset."""


def test_light_commands_import_no_heavy_module() -> None:
    for args in (["--help"], ["recipe", "list", "--json"], ["catalog", "show", "--json"],
                 ["mcp", "--help"]):
        loaded = _modules_after(*args)
        heavy = loaded & {"openai", "questionary", "prompt_toolkit", "jinja2",
                          "numpy", "httpx", "mcp", "mcp_types", "uvicorn", "starlette",
                          *TEAM_LIBRARIES}
        assert heavy == set(), (args, heavy)
    assert "rich" not in _modules_after("recipe", "list", "--json")


def test_with_state_url_unset_no_team_library_is_imported() -> None:
    for args in (["process", "list", "--json"], ["migrate"], ["log", "--json"],
                 ["process", "follow", "0123abcd"]):
        assert _modules_after(*args) & TEAM_LIBRARIES == set(), args


OFFLINE_DELEGATE = ("delegate", "--task", "Summarize this meeting transcript", "--dry-run",
                    "--json")


def test_offline_delegate_imports_no_llm_prompt_or_ui_module() -> None:
    for args in (OFFLINE_DELEGATE,
                 ("delegate", "--task", "Write a short essay about tea", "--dry-run", "--json")):
        loaded = _modules_after(*args)
        heavy = loaded & {"openai", "httpx", "httpx2", "jinja2", "json_repair", "questionary",
                          "prompt_toolkit", "rich", "numpy", "mcp", "mcp_types", "uvicorn",
                          *TEAM_LIBRARIES}
        assert heavy == set(), (args, heavy)


HEAVY_LIBRARIES = frozenset({"jinja2", "prompt_toolkit", "questionary", "rich", "openai",
                             "json_repair", "filelock", "platformdirs", "pydantic", "yaml",
                             "uvicorn", "mcp", "anyio", *TEAM_LIBRARIES})
"""Third-party modules that may be imported inside a function (each costs a CLI start-up)."""

OFF_PATH_STDLIB = frozenset({"secrets", "tempfile", "glob", "logging", "importlib"})
"""Standard-library modules that ``vance --help`` and an offline ``vance delegate --dry-run``
never need, imported where they are used (docs/decisions/0012-startup-path.md)."""

MARKERS = ("# heavy:", "# deferred:")
"""An internal import inside a function names why it is there (docs/decisions/0003-imports.md)."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level(tree: ast.Module) -> set[ast.AST]:
    """Statements at module level, including the bodies of ``if``/``try`` there."""
    top: set[ast.AST] = set()
    for node in tree.body:
        top.add(node)
        if isinstance(node, ast.If | ast.Try):
            top |= set(node.body)
    return top


def test_imports_inside_functions_are_heavy_libraries_or_say_why() -> None:
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text)
        top = _top_level(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or node in top:
                continue
            module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            root = (module or "").split(".")[0]
            if root == "vance_cli":
                if not any(m in lines[node.lineno - 1] for m in MARKERS):
                    offenders.append(f"{_module_name(path)}:{node.lineno} imports {module}")
            elif root not in HEAVY_LIBRARIES | OFF_PATH_STDLIB:
                offenders.append(f"{_module_name(path)}:{node.lineno} imports {module} lazily")
    assert offenders == []


def _runtime_graph() -> dict[str, set[str]]:
    """Module → the vance modules it imports at run time (``TYPE_CHECKING`` blocks excluded)."""
    modules = {_module_name(p): p for p in CORE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        checking = {n for node in tree.body if isinstance(node, ast.If)
                    and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                    for n in ast.walk(node)}
        found: set[str] = set()
        for node in ast.walk(tree):
            if node in checking or not isinstance(node, ast.ImportFrom | ast.Import):
                continue
            targets = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                       else [a.name for a in node.names])
            for target in targets:
                if isinstance(node, ast.ImportFrom):
                    subs = [f"{target}.{a.name}" for a in node.names]
                    found |= {s for s in subs if s in modules}
                if target in modules:
                    found.add(target)
        graph[name] = found - {name}
    return graph


def test_no_import_cycles() -> None:
    graph = _runtime_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert cycles == []


def test_the_cycle_check_finds_a_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a planted edge back from the state layer is a cycle."""
    graph = _runtime_graph()
    assert "vance_cli.state.db" in graph["vance_cli.workspace"]
    graph["vance_cli.state.db"].add("vance_cli.workspace")
    monkeypatch.setattr(sys.modules[__name__], "_runtime_graph", lambda: graph)
    with pytest.raises(AssertionError):
        test_no_import_cycles()
