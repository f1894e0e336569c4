"""The one place where exceptions become exit codes (docs/exit-codes.md).

- A ``VanceError`` becomes one stderr line (or its JSON with ``--json``) and
  its own exit code (2 input, 1 runtime, 130 cancelled).
- Ctrl-C (KeyboardInterrupt) and Ctrl-D (EOFError) become 130, no traceback.
- A usage error from the option parser exits 2 with its message on one
  line and a pointer to the command's ``--help`` (JSON too, with ``--json``).
- The environment refusing a write (``OSError`` of ``errors.STORAGE_ERRNOS``:
  permission denied, read-only file system, disk full) is a runtime error
  too (exit 1): one line naming the path, JSON with ``--json``, no
  traceback. So is a SQLite error of the database itself (``OperationalError``
  — locked, disk I/O, full — or a plain ``DatabaseError`` such as a corrupt
  file); SQLite errors that mean a bug of vance (``IntegrityError``,
  ``ProgrammingError`` …) stay unexpected, with their traceback under ``--debug``.
- Anything else exits 1 with one line; the traceback only with ``--debug``
  (or ``VANCE_DEBUG=1``).
- A closed stdout (``vance … | head``) ends quietly.
- SIGTERM (``vance process stop`` of a command that runs a turn in the
  foreground) ends the command cleanly — ``finally`` blocks run — with exit 143.

``report`` is the mapping; ``run`` (the ``vance`` command) and ``vance shell``
(each line) both use it, so a line in the shell fails exactly as the
command would.
"""

from __future__ import annotations

import errno
import gc
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import NoReturn

import click
import typer

from vance_cli.base import logs
from vance_cli.base.errors import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RUNTIME,
    VanceError,
    as_vance_error,
)
from vance_cli.base.signals import (
    EXIT_TERMINATED,
    WorkerTerminated,
    install_sigterm,
    restore_sigterm,
)
from vance_cli.base.text_input import check_utf8, first_invalid
from vance_cli.cli import output, words
from vance_cli.cli.app import app


def run(argv: Sequence[str] | None = None) -> int:
    """Run the vance command line and return its exit code (never raises).

    Args:
        argv: arguments without the program name; ``sys.argv[1:]`` when None.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    logs.before_warnings("cli", output.show_core_warnings)  # the core's warnings: vance: warning:
    previous = install_sigterm()  # SIGTERM ends any command cleanly, with exit 143
    command = typer.main.get_command(app)
    words.set_language("en")  # until the settings say otherwise (context.settings)
    try:
        check_argv(args)
        result = command.main(args=args, prog_name="vance", standalone_mode=False)
    except BaseException as exc:  # the boundary: every failure gets its exit code here
        return report(exc, as_json="--json" in args, debug=_debug(args),
                      command_path=lambda: _command_path(command, args))
    finally:
        restore_sigterm(previous)
        words.set_language("en")
    return result if isinstance(result, int) else 0


def report(exc: BaseException, *, as_json: bool, debug: bool, where: str = "",
           command_path: Callable[[], str] | None = None) -> int:
    """Report one exception the way vance reports every error; return its exit code.

    The one mapping from exceptions to exit codes, used by ``run`` and by
    ``vance shell`` for each line (docs/exit-codes.md).

    Args:
        exc: what a command raised.
        as_json: the command was given ``--json``: the error is also printed as JSON on stdout.
        debug: print the traceback of an unexpected error.
        where: prefix of the stderr line (``"line 3: "`` in a shell script).
        command_path: names the command for a usage error that has no click context.

    Returns:
        The exit code: the error's own, 2 usage, 130 cancelled, 1 anything else.

    Raises:
        BaseException: ``exc`` itself when it is a ``SystemExit`` that no broken pipe caused,
            or another non-``Exception`` it does not map (``GeneratorExit``).
    """
    known = as_vance_error(exc)  # a VanceError, or a storage or database failure
    if known is not None:
        return _report(known, as_json, where)
    if isinstance(exc, click.exceptions.Abort | KeyboardInterrupt | EOFError):
        output.info(words.word("cancelled"))
        return EXIT_INTERRUPTED
    if isinstance(exc, click.exceptions.ClickException | click.exceptions.Exit):
        return _click_error(exc, as_json, where, command_path)
    if isinstance(exc, SystemExit):
        return _system_exit(exc)
    if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
        return _quiet_broken_pipe()
    if not isinstance(exc, Exception):
        raise exc
    return _unexpected(exc, as_json, debug, where)


def _click_error(exc: click.exceptions.ClickException | click.exceptions.Exit, as_json: bool,
                 where: str, command_path: Callable[[], str] | None) -> int:
    """A command's own exit code, a group's help, or a usage error of the option parser."""
    if isinstance(exc, click.exceptions.Exit):  # a command's own exit code; it has said why
        return exc.exit_code
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):  # `vance config`: the group's help
        exc.show()
        return exc.exit_code
    return _parser_error(exc, as_json, where, command_path)


def _system_exit(exc: SystemExit) -> int:
    """SIGTERM ends the command with 143; click's exit on a broken stdout ends it quietly.

    Raises:
        SystemExit: ``exc`` itself, for any other exit.
    """
    if isinstance(exc, WorkerTerminated):  # SIGTERM (``vance process stop`` of this command)
        output.info("terminated")
        return EXIT_TERMINATED
    if isinstance(exc.__context__, OSError) and exc.__context__.errno == errno.EPIPE:
        return _quiet_broken_pipe()
    raise exc


def _debug(argv: Sequence[str]) -> bool:
    return "--debug" in argv or debug_from_env()


def debug_from_env() -> bool:
    """True when ``VANCE_DEBUG`` asks for tracebacks (set and not ``0``)."""
    return os.environ.get("VANCE_DEBUG", "") not in ("", "0")


def _quiet_broken_pipe() -> int:
    """A write outside ``output``'s writers (help text) hit a closed pipe: end quietly, exit 0.

    ``output``'s writers release stdout themselves and let the command end
    with its own code (``output.release_stdout``).
    """
    output.release_stdout()
    return EXIT_OK


def _report(exc: VanceError, as_json: bool, where: str) -> int:
    """Print a VanceError as one stderr line (and its JSON with --json); return its exit code."""
    if exc.exit_code == EXIT_INTERRUPTED:
        output.info(words.word("cancelled"))
    else:
        if as_json:
            output.emit_json(exc.to_json())
        output.error(where + exc.message)
    return exc.exit_code


def _parser_error(exc: click.exceptions.ClickException, as_json: bool, where: str,
                  command_path: Callable[[], str] | None) -> int:
    """Report an error of the option parser as every other error: one line, JSON with --json.

    A usage error (exit 2) ends with a pointer to the command's help instead
    of click's three-line usage block.
    """
    message = " ".join(exc.format_message().split()).removesuffix(".")
    if isinstance(exc, click.exceptions.NoSuchCommand):  # Typer and click both add "Did you mean"
        close = exc.possibilities or []
        message = f"No such command '{exc.command_name}'" + (
            f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else "")
    code = "error"
    if isinstance(exc, click.exceptions.UsageError):
        code = "usage_error"
        path = (exc.ctx.command_path if exc.ctx is not None
                else command_path() if command_path is not None else "vance")
        message += f" — see '{path} --help'"
    if as_json:
        output.emit_json({"error": code, "message": message})
    output.error(where + message)
    return exc.exit_code


def _command_path(root: click.Command, args: Sequence[str]) -> str:
    """Return ``vance <group> <command>`` as far as ``args`` name one (errors without context).

    Walks the command tree: options are skipped (with their value, when the
    option takes one), a word that names a sub-command descends.
    """
    command, path, given = root, ["vance"], iter(args)
    for word in given:
        if word.startswith("-"):
            param = next((p for p in command.params if word in p.opts), None)
            if param is not None and not getattr(param, "is_flag", False) \
                    and not getattr(param, "count", False):
                next(given, None)
            continue
        sub = subcommand(command, word)
        if sub is None:
            break
        command = sub
        path.append(word)
    return " ".join(path)


def subcommand(command: click.Command, name: str) -> click.Command | None:
    """Return the sub-command ``name`` of a group (loading it), or None (not a group, unknown)."""
    if not isinstance(command, click.Group):
        return None
    return command.get_command(click.Context(command), name)


def _unexpected(exc: BaseException, as_json: bool, debug: bool, where: str) -> int:
    """Report an error vance did not foresee: one stderr line, JSON with --json, exit 1."""
    text = f"{type(exc).__name__}: {exc}"
    if as_json:
        output.emit_json({"error": "unexpected_error", "message": text})
    if debug:
        traceback.print_exception(exc)
        output.error(where + text)
    else:
        output.error(f"{where}{text} (run with --debug for the traceback)")
    return EXIT_RUNTIME


ARG_PREVIEW = 40
"""Characters of a bad argument shown in its error message."""


def check_argv(args: Sequence[str]) -> None:
    """Refuse an argument that was not valid UTF-8, before any command sees it.

    Python decodes argv with ``surrogateescape``, so such an argument would
    fail much later, wherever it is first encoded (JSON, SQLite, the LLM
    request). The message names the argument, its neighbour option and the
    bad byte.

    Raises:
        InputError: the first such argument (exit 2).
    """
    for index, arg in enumerate(args):
        if first_invalid(arg) is None:
            continue
        shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        if len(shown) > ARG_PREVIEW:
            shown = shown[:ARG_PREVIEW] + "…"
        option = arg.partition("=")[0] if arg.startswith("--") and "=" in arg else None
        if option is None and index and args[index - 1].startswith("-"):
            option = args[index - 1]
        where = f", the value of {option}" if option else ""
        check_utf8(arg, f"argument {index + 1} ('{shown}'{where})", argument=index + 1)


def main() -> NoReturn:
    """Console-script entry point: run and exit with the code."""
    code = run()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_broken_pipe()  # the command's own exit code stands
    except OSError as exc:  # e.g. stdout on a full disk: the output is lost
        _quiet_broken_pipe()
        sys.stderr.write(f"vance: error: cannot write the output: {exc.strerror or exc}\n")
        code = EXIT_RUNTIME
    # The process ends here: the collector need not walk what is left (the operating system
    # takes the memory back), which spares a full collection at exit (docs/decisions/0012).
    gc.freeze()
    if code == EXIT_INTERRUPTED:  # cancelled: end now, with 130 (docs/exit-codes.md)
        _end_cancelled()
    sys.exit(code)


def _end_cancelled() -> NoReturn:
    """End a cancelled command at once with exit code 130.

    CPython's own exit can re-raise SIGINT after a Ctrl-C that vance handled
    (seen once in 30 runs on a loaded machine: "cancelled" printed, then the
    process killed by SIGINT), which a calling shell reads as a signal death.
    A cancelled command has nothing left to clean up: output and logs are
    flushed, the state database's writes are committed.
    """
    with suppress(OSError, ValueError):
        sys.stderr.flush()
    logging = sys.modules.get("logging")  # imported only when something logged
    if logging is not None:
        logging.shutdown()
    os._exit(EXIT_INTERRUPTED)
