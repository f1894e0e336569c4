"""Driving the real ``vance`` program in a pseudo-terminal (pexpect), and terminal keys.

One place for what every interactive test needs: the keystrokes a terminal
sends (``Key``), a pattern for Rich's style codes (``ANSI``), ``spawn_vance``
(the real program in a pty, with Ctrl-C working even when the test run
itself was started in the background), ``end`` and ``finish``.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path

import pexpect

TIMEOUT = 30
"""Seconds one expectation may wait (a cold Python start plus imports on a slow machine)."""

ANSI = r"(?:\x1b\[[0-9;]*m)*"
"""Rich's style codes that may surround a label on a terminal."""


class Key(StrEnum):
    """Keystrokes as a terminal sends them."""

    ENTER = "\r"
    TAB = "\t"
    SPACE = " "
    BACKSPACE = "\x7f"
    ESC_ENTER = "\x1b\r"
    UP = "\x1b[A"
    DOWN = "\x1b[B"
    CTRL_C = "\x03"
    CTRL_D = "\x04"
    CTRL_E = "\x05"
    CTRL_X = "\x18"
    END_OF_BUFFER = "\x1b>"  # Esc > (emacs): move to the end of the buffer


def _default_sigint() -> None:
    # A test run started in the background of a non-interactive shell (`pytest &`, many CI
    # runners) inherits SIGINT ignored, and Python keeps an ignored SIGINT: Ctrl-C in the
    # pty would then do nothing. The program under test gets the default back.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn_vance(args: Sequence[str], *, env: Mapping[str, str] | None = None,
                cwd: Path | None = None, dimensions: tuple[int, int] = (50, 200),
                term: str = "xterm", log: Path | None = None) -> pexpect.spawn:
    """Start ``python -m vance_cli ARGS`` in a pseudo-terminal.

    Args:
        args: the command line after ``vance``.
        env: variables added to the test's environment (which holds the test's VANCE_HOME).
        cwd: working directory (default: the test's).
        dimensions: (rows, columns) of the terminal.
        term: the TERM value.
        log: file that receives everything the terminal showed (appended).
    """
    full_env = {**os.environ, "TERM": term, "PROMPT_TOOLKIT_NO_CPR": "1",
                "PYTHONUNBUFFERED": "1", "COLUMNS": str(dimensions[1]), **(env or {})}
    child = pexpect.spawn(sys.executable, ["-m", "vance_cli", *args], env=full_env,
                          cwd=str(cwd) if cwd else None, encoding="utf-8", timeout=TIMEOUT,
                          dimensions=dimensions, preexec_fn=_default_sigint)
    if log is not None:
        child.logfile_read = open(log, "a", encoding="utf-8")
    return child


def end(child: pexpect.spawn) -> int:
    """Wait for the program to end (EOF, then its exit), close the terminal; return the status.

    The exit is waited for, not guessed: ``close()`` alone pauses 0.1 s and then
    signals a program that is still on its way out, which changes its status.
    """
    child.expect(pexpect.EOF)
    child.wait()
    child.ptyproc.delayafterclose = 0  # it has exited: nothing to give time to
    child.close()
    return child.exitstatus  # type: ignore[no-any-return]


def finish(child: pexpect.spawn) -> tuple[int, str]:
    """Wait for the program to end; return its exit status and the terminal log ("" without)."""
    end(child)
    logfile = child.logfile_read
    if logfile is None:
        return child.exitstatus, ""
    logfile.close()
    return child.exitstatus, Path(logfile.name).read_text(encoding="utf-8")
