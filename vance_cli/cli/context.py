"""Build the core's Settings and Workspace from a Typer context's global options."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from vance_cli.base.config import load_settings
from vance_cli.base.paths import Paths
from vance_cli.cli import output, words
from vance_cli.workspace import Workspace

if TYPE_CHECKING:
    from vance_cli.base.config import Settings


def settings(ctx: typer.Context) -> Settings:
    """Resolve settings from the global flags on ``ctx`` (flags > env > file > defaults).

    Warnings (unknown config keys) are printed to stderr once.
    """
    root = ctx.find_root()
    cached = root.meta.get("vance.settings")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    opts = root.obj
    resolved = load_settings(flags=opts.flags if opts else {}, home=opts.home if opts else None)
    for message in resolved.warnings:
        output.warn(message)
    words.set_language(resolved.lang)
    root.meta["vance.settings"] = resolved
    return resolved


def paths(ctx: typer.Context) -> Paths:
    """Resolve only the folders (``--home``, ``VANCE_HOME``, platformdirs) from ``ctx``.

    For commands that must work while a setting is invalid: ``vance config set``
    is how such a setting gets fixed.
    """
    opts = ctx.find_root().obj
    return Paths.resolve(opts.home if opts else None)


def workspace(ctx: typer.Context) -> Workspace:
    """Return the command's Workspace (built once per invocation, closed at exit)."""
    root = ctx.find_root()
    ws = root.meta.get("vance.workspace")
    if ws is None:
        ws = Workspace(settings(ctx))
        root.meta["vance.workspace"] = ws
        root.call_on_close(ws.close)
    return ws
