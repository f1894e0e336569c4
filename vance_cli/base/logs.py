"""The core's warnings: written to ``logging``, which is imported with the first one.

The core never prints (docs/architecture.md). A warning a person should see
(a close hook that failed) goes to the ``vance_cli.*`` logger of the module
that writes it, and the program decides how warnings show: the command line
as ``vance: warning:`` lines on stderr, the detached worker in its log.
Importing ``logging`` costs every start-up a few milliseconds and almost no
run writes a warning, so ``warn`` imports it, and a program says how its
warnings show with ``before_warnings``, which runs before each warning is
written (docs/decisions/0012-startup-path.md).
"""

from __future__ import annotations

from collections.abc import Callable

_setups: dict[str, Callable[[], None]] = {}


def before_warnings(name: str, setup: Callable[[], None]) -> None:
    """Run ``setup`` before each warning the core writes from now on.

    Args:
        name: what the setup is for; a second call with the same name replaces the first.
        setup: makes the warnings show (installs a ``logging`` handler, once);
            it must be cheap when there is nothing left to do.
    """
    _setups[name] = setup


def warn(logger: str, message: str) -> None:
    """Write ``message`` as a warning of the logger named ``logger`` (a ``vance_cli.*`` name)."""
    import logging  # stdlib, off the light paths: a run seldom warns

    for setup in list(_setups.values()):
        setup()
    logging.getLogger(logger).warning(message)
