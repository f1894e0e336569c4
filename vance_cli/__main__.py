"""``python -m vance_cli``: same as the ``vance`` command."""

from __future__ import annotations

from vance_cli.cli.boundary import main

main()
