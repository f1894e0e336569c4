"""One module per command group of the ``vance`` command line."""

from __future__ import annotations
