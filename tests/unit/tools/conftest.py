"""A tool context over a temporary project, home and vance folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from vance_cli.tools.tool import ToolContext


@pytest.fixture
def context(tmp_path: Path) -> ToolContext:
    """A context whose project, home, state and config folders live under ``tmp_path``."""
    for name in ("project", "userhome", "vance/state", "vance/config"):
        (tmp_path / name).mkdir(parents=True)
    return ToolContext(project=(tmp_path / "project").resolve(),
                       home=(tmp_path / "userhome").resolve(),
                       state_dir=(tmp_path / "vance/state").resolve(),
                       config_dir=(tmp_path / "vance/config").resolve())
