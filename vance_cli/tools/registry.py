"""The built-in tools, by name, each loaded from its module when first asked for.

Each module named here declares ``TOOL`` (``tools.tool.Tool``) or, for a
module with several, ``TOOLS`` (a tuple). Listing the names imports nothing.
"""

from __future__ import annotations

import importlib

from vance_cli.tools.tool import Tool

BUILTIN: dict[str, str] = {
    "read_file": "vance_cli.tools.files",
    "list_files": "vance_cli.tools.files",
    "search_files": "vance_cli.tools.files",
    "write_file": "vance_cli.tools.write",
    "run_command": "vance_cli.tools.command",
    "run_python": "vance_cli.tools.python_run",
    "fetch_url": "vance_cli.tools.fetch",
}
"""Built-in tool name → the module that declares it."""


def builtin(name: str) -> Tool:
    """Return the built-in tool ``name``.

    Raises:
        KeyError: no built-in tool has that name.
    """
    module = importlib.import_module(BUILTIN[name])
    tools: tuple[Tool, ...] = getattr(module, "TOOLS", ()) or (module.TOOL,)
    for tool in tools:
        if tool.name == name:
            return tool
    raise KeyError(name)
