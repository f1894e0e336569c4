"""The one place where exceptions become exit codes (DESIGN.md §3 "Exit codes").

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
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from vance_cli.errors import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RUNTIME,
    STORAGE_ERRNOS,
    StateError,
    StorageError,
    VanceError,
)

if TYPE_CHECKING:
    from click.exceptions import ClickException


def _wants_json(argv: Sequence[str]) -> bool:
    return "--json" in argv


def _debug(argv: Sequence[str]) -> bool:
    return "--debug" in argv or os.environ.get("VANCE_DEBUG", "") not in ("", "0")


def _quiet_broken_pipe() -> int:
    """A write outside ``output``'s writers (help text) hit a closed pipe: end quietly, exit 0.

    ``output``'s writers release stdout themselves and let the command end
    with its own code (``output.release_stdout``).
    """
    from vance_cli.cli import output

    output.release_stdout()
    return EXIT_OK


def run(argv: Sequence[str] | None = None) -> int:  # noqa: PLR0911 - one return per exception kind
    """Run the vance command line and return its exit code (never raises).

    Args:
        argv: arguments without the program name; ``sys.argv[1:]`` when None.
    """
    import typer
    import click

    from vance_cli.cli import output
    from vance_cli.cli.app import app

    args = list(sys.argv[1:] if argv is None else argv)
    command = typer.main.get_command(app)
    try:
        check_argv(args)
        result = command.main(args=args, prog_name="vance", standalone_mode=False)
    except VanceError as exc:
        return _report(exc, args)
    except (KeyboardInterrupt, EOFError, typer.Abort):
        output.info("cancelled")
        return EXIT_INTERRUPTED
    except click.exceptions.NoArgsIsHelpError as exc:  # `vance config`: the group's help
        exc.show()
        return exc.exit_code
    except click.exceptions.ClickException as exc:
        return _parser_error(exc, args)
    except SystemExit as exc:  # click turns a broken stdout into exit 1 even when not standalone
        context = exc.__context__
        if isinstance(context, OSError) and context.errno == errno.EPIPE:
            return _quiet_broken_pipe()
        raise
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            return _quiet_broken_pipe()
        if exc.errno in STORAGE_ERRNOS:
            return _report(StorageError.from_os_error(exc), args)
        return _unexpected(exc, args)
    except Exception as exc:  # the boundary: anything else is a bug, exit 1
        sqlite3 = sys.modules.get("sqlite3")  # loaded whenever the state was touched
        if sqlite3 is not None and (isinstance(exc, sqlite3.OperationalError)
                                    or type(exc) is sqlite3.DatabaseError):
            return _report(StateError(f"state database error: {exc}"), args)
        return _unexpected(exc, args)
    return result if isinstance(result, int) else 0


def _report(exc: VanceError, args: Sequence[str]) -> int:
    """Print a VanceError as one stderr line (and its JSON with --json); return its exit code."""
    from vance_cli.cli import output

    if exc.exit_code == EXIT_INTERRUPTED:
        output.info("cancelled")
    else:
        if _wants_json(args):
            output.emit_json(exc.to_json())
        output.error(exc.message)
    return exc.exit_code


def _parser_error(exc: ClickException, args: Sequence[str]) -> int:
    """Report an error of the option parser as every other error: one line, JSON with --json.

    A usage error (exit 2) ends with a pointer to the command's help instead
    of click's three-line usage block.
    """
    import click

    from vance_cli.cli import output

    message = " ".join(exc.format_message().split()).removesuffix(".")
    code = "error"
    if isinstance(exc, click.exceptions.UsageError):
        code = "usage_error"
        path = exc.ctx.command_path if exc.ctx is not None else _command_path(args)
        message += f" — see '{path} --help'"
    if _wants_json(args):
        output.emit_json({"error": code, "message": message})
    output.error(message)
    return exc.exit_code


def _command_path(args: Sequence[str]) -> str:
    """Return ``vance <group> <command>`` as far as ``args`` name one (errors without context).

    Walks the command tree: options are skipped (with their value, when the
    option takes one), a word that names a sub-command descends.
    """
    import typer

    from vance_cli.cli.app import app

    command = typer.main.get_command(app)
    path, words = ["vance"], iter(args)
    for word in words:
        if word.startswith("-"):
            param = next((p for p in command.params if word in p.opts), None)
            if param is not None and not getattr(param, "is_flag", False) \
                    and not getattr(param, "count", False):
                next(words, None)
            continue
        sub = getattr(command, "commands", {}).get(word)
        if sub is None:
            break
        command = sub
        path.append(word)
    return " ".join(path)


def _unexpected(exc: BaseException, args: Sequence[str]) -> int:
    """Report an error vance did not foresee: one stderr line, JSON with --json, exit 1."""
    from vance_cli.cli import output

    if _wants_json(args):
        output.emit_json({"error": "unexpected_error",
                          "message": f"{type(exc).__name__}: {exc}"})
    if _debug(args):
        import traceback

        traceback.print_exception(exc)
        output.error(f"{type(exc).__name__}: {exc}")
    else:
        output.error(f"{type(exc).__name__}: {exc} (run with --debug for the traceback)")
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
    from vance_cli.text_input import check_utf8, first_invalid

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
    sys.exit(code)
