"""vance: delegate tasks to the right recipe of an LLM think system, and fill prompt wizards.

The core library (everything outside ``vance_cli.cli``) never prints, exits
or imports a UI library; the ``vance`` command is a thin layer over it.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
