"""toolset(): a recipe's names to built-in tools; tool_context() from the settings; import cost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vance_cli.base.config import load_settings
from vance_cli.tools.registry import BUILTIN
from vance_cli.tools.toolset import UnknownTool, tool_context, tool_names, toolset


def test_names_without_allowed_tools_are_every_builtin_then_add_and_remove() -> None:
    assert tool_names(None) == tuple(BUILTIN)
    assert "run_command" not in tool_names(None, remove=["run_*", "write_file"])
    assert tool_names(["read_file"], add=["srv.search", "read_file"]) == ("read_file",
                                                                          "srv.search")
    assert tool_names(["read_file", "srv.a", "srv.b"], remove=["srv.*"]) == ("read_file",)


def test_toolset_gives_the_builtins_in_order_and_leaves_mcp_names() -> None:
    tools = toolset(["fetch_url", "srv.search", "read_file"])
    assert [t.name for t in tools] == ["fetch_url", "read_file"]
    for tool in toolset(list(BUILTIN)):
        definition = tool.definition()["function"]
        assert definition["parameters"]["type"] == "object"
        assert definition["description"] and "title" not in definition["parameters"]


def test_an_unknown_name_says_what_was_meant() -> None:
    with pytest.raises(UnknownTool) as caught:
        toolset(["read_files"])
    assert "did you mean 'read_file'" in caught.value.message
    assert caught.value.code == "unknown_tool"


def test_the_context_comes_from_the_settings(tmp_path: Path) -> None:
    settings = load_settings(environ={"VANCE_HOME": str(tmp_path / "vh"),
                                      "VANCE_TOOLS_FETCH_ALLOW_PRIVATE": "true",
                                      "VANCE_TOOLS_PYTHON_MEMORY_MB": "256"})
    context = tool_context(settings, project=tmp_path, home=tmp_path / "h")
    assert context.project == tmp_path.resolve()
    assert context.state_dir == settings.paths.state_dir.resolve()
    assert context.config_dir == settings.paths.config_dir.resolve()
    assert context.allow_private_urls
    assert context.options["tools.python.memory_mb"] == 256


@pytest.mark.parametrize("args", [["--help"], ["delegate", "--task", "Summarize this meeting",
                                               "--dry-run", "--json"]])
def test_light_paths_import_nothing_of_the_tools(args: list[str]) -> None:
    code = ("import sys\nfrom vance_cli.cli.boundary import run\n"
            f"run({args!r})\n"
            "sys.stderr.write('\\nMODULES=' + ','.join(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    loaded = proc.stderr.rsplit("MODULES=", 1)[1].split(",")
    assert [m for m in loaded if m.startswith("vance_cli.tools")] == []
