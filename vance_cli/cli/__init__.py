"""The command-line layer: Typer commands that parse options, call one core function, print."""

from __future__ import annotations
