"""Parsing of repeated ``KEY=VALUE`` options (``--param``, ``--set``).

``K=V`` gives the string ``V``; ``K:=JSON`` gives the parsed JSON value
(``n:=3``, ``flags:='["a","b"]'``), as httpie's raw-JSON items.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Sequence
from typing import Any

from vance_cli.base.errors import InputError
from vance_cli.base.text_input import decode_utf8
from vance_cli.cli import output


def parse_assignments(items: Sequence[str] | None, option: str) -> dict[str, Any]:
    """Parse ``KEY=VALUE`` / ``KEY:=JSON`` items into a dict (later items win).

    Args:
        items: the option's values, in command-line order.
        option: the option name for messages, e.g. ``"--param"``.

    Raises:
        InputError: an item without ``=``, an empty key, or invalid JSON after ``:=``.
    """
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip(" :"):
            raise InputError(f"{option} expects KEY=VALUE (or KEY:=JSON), got {item!r}")
        if key.endswith(":"):
            key = key[:-1]
            try:
                out[key.strip()] = json.loads(value)
            except json.JSONDecodeError as exc:
                raise InputError(f"{option} {key}:= needs JSON ({exc.msg}); for text use "
                                 f"{key}={value}" if value else
                                 f"{option} {key}:= needs JSON; for text use {key}=VALUE"
                                 ) from None
        else:
            out[key.strip()] = value
    return out


def read_stdin_bytes(option: str, hint: str) -> bytes:
    """Read all of stdin as bytes (``--task -``, ``--values -``, ``--items -``).

    Args:
        option: the option that asked for stdin, for messages, e.g. ``"--task"``.
        hint: shown (stderr) when stdin is a terminal, e.g. how to end the input.

    Raises:
        InputError: stdin is closed (``<&-``) or missing.
    """
    stream = sys.stdin
    if stream is None or stream.closed:
        raise InputError(f"{option} - reads stdin, but stdin is closed", field=option)
    if stream.isatty():
        output.info(hint)
    return stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode(
        "utf-8", "surrogateescape")


def piped_stdin(what: str) -> str | None:
    """Return stdin's text when it is a pipe or a file (``cat f | vance …``), else None.

    A terminal, a closed stdin or anything else (a socket, ``/dev/null``) gives
    None without reading, so an interactive ``vance delegate "…"`` never waits.

    Args:
        what: names the input in an encoding error, e.g. ``"material beside the task"``.

    Raises:
        InputError: the piped text is not UTF-8.
    """
    stream = sys.stdin
    if stream is None or stream.closed or stream.isatty():
        return None
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):  # no file descriptor (an in-process test's stdin)
        mode = None
    if mode is not None and not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode(
        "utf-8", "surrogateescape")
    return decode_utf8(data, f"stdin ({what})", field="stdin")


def read_stdin(option: str, hint: str) -> str:
    """Read all of stdin as UTF-8 text (``--task -``, ``--values -``).

    Args:
        option: the option that asked for stdin, for messages, e.g. ``"--task"``.
        hint: shown (stderr) when stdin is a terminal.

    Raises:
        InputError: stdin is closed or not valid UTF-8.
    """
    return decode_utf8(read_stdin_bytes(option, hint), f"stdin ({option} -)", field=option)
