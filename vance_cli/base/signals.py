"""SIGTERM as an exception: a stopped worker unwinds through its ``finally`` blocks and exits 143.

Light on purpose (only ``signal`` and ``threading``): a worker's entry point
installs the handler before it loads anything else.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

EXIT_TERMINATED = 128 + signal.SIGTERM
"""Exit code of a worker ended by SIGTERM (143), as shells report it."""


class WorkerTerminated(SystemExit):
    """Raised in the worker's main thread when it receives SIGTERM (exit code 143)."""

    def __init__(self) -> None:
        super().__init__(EXIT_TERMINATED)


def install_sigterm() -> Any:
    """In the main thread, make SIGTERM raise ``WorkerTerminated``; return the old handler.

    Returns None (and changes nothing) in any other thread; pass the result
    to ``restore_sigterm``.
    """
    if threading.current_thread() is not threading.main_thread():
        return None

    def _terminate(signum: int, frame: FrameType | None) -> None:
        raise WorkerTerminated

    return signal.signal(signal.SIGTERM, _terminate)


def restore_sigterm(previous: Any) -> None:
    """Put back the SIGTERM handler ``install_sigterm`` replaced (None: nothing to do)."""
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def stop_cause(exc: BaseException) -> BaseException | None:
    """Return the ``WorkerTerminated`` or ``KeyboardInterrupt`` that ``exc`` is or wraps.

    A signal that arrives while a class is being created (a module still loading)
    reaches the caller as Python 3.11's ``RuntimeError: Error calling __set_name__ …``,
    with the stop as its ``__cause__``.

    Args:
        exc: what ended a run.

    Returns:
        The stop found along ``exc`` and its causes, or None.
    """
    seen: BaseException | None = exc
    for _ in range(16):  # a cause chain is short; a cycle must not hang the worker
        if seen is None:
            return None
        if isinstance(seen, WorkerTerminated | KeyboardInterrupt):
            return seen
        seen = seen.__cause__
    return None
