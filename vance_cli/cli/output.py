"""The sole printer of vance's command-line layer.

Rules (docs/exit-codes.md):
- ``--json`` output is one JSON document on stdout, written as plain text
  (never through Rich, which wraps at 80 columns and eats ``[brackets]``).
- Human output goes through Rich on stdout; Rich honours ``NO_COLOR``.
- Warnings and errors go to stderr as plain lines; spinners and progress go to
  stderr and only when stderr is a terminal. A table's title and caption
  (counts, notes) are diagnostics too: piped, they go to stderr only when
  stderr is a terminal.
- Untrusted text (tasks, LLM rationales, names, file content) may hold
  terminal control characters. Every human-output path here — ``fields``,
  ``table``, ``say``, ``info``/``warn``/``error``, spinners — shows C0/C1
  control characters as visible placeholders (``visible``: ESC → ``␛``),
  keeping only newline and tab where the layout needs them. ``--json`` and
  ``emit_text`` (a rendered prompt, which must stay exact) are untouched.
- Values are shown for people by one formatter, ``display``: booleans as
  ``true``/``false``, mappings and lists as compact JSON, None as empty.
- Rich is imported on first human output, never for ``--json``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache, wraps
from typing import TYPE_CHECKING, Any, ParamSpec, TextIO

from vance_cli.cli.words import header

if TYPE_CHECKING:
    import logging

    from rich.console import Console


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but tab and newline, DEL, and C1 controls: never written raw to a terminal."""
_CONTROL_ALL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Every C0/C1 control and DEL, for text that must stay on one line (spinners)."""
_LINE_BREAKS = re.compile(r"[ \t]*(?:\r\n|\r|\n)\s*")
MIN_ONE_LINE = 10
"""Narrowest width of a one-line column, in cells: the identifier columns come first."""
MIN_CUT = 4
"""Narrowest a shrinking column gets when the row still does not fit (three cells and
an ellipsis), so the columns that must stay whole do."""
_P = ParamSpec("_P")
ONE_LINE_READ = 2_000
"""Characters of a one-line cell read on a terminal: no terminal shows more on one line,
and measuring a megabyte cell takes seconds (a 4 MB task in ``vance log`` took 6 s)."""
ONE_LINE_BREAK = " \u23ce "
"""What a line break shows as in a cell cut to one line (`` ⏎ ``)."""


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode control pictures: ESC → ␛, NUL → ␀
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}"  # C1 controls have no picture


def visible(text: str, keep_layout: bool = True) -> str:
    r"""Return ``text`` with terminal control characters replaced by visible placeholders.

    Args:
        text: untrusted text about to be shown on a terminal.
        keep_layout: keep newline and tab (multi-line values); False replaces them too.

    Returns:
        The text; C0 controls show as Unicode control pictures (ESC → ``␛``),
        DEL as ``␡``, C1 controls as ``\x9b``.

    Rule: docs/exit-codes.md (human output).
    """
    return (_CONTROL if keep_layout else _CONTROL_ALL).sub(_picture, text)


def display(value: Any) -> str:
    """Return a value as people read it (the one formatter of ``fields`` and ``table``).

    Args:
        value: a cell or field value.

    Returns:
        ``""`` for None; ``true``/``false`` for booleans; compact JSON for
        mappings, lists and tuples; ``str(value)`` otherwise.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def release_stdout() -> None:
    """Point stdout at /dev/null after its reader went away (``| head`` closed the pipe).

    Later writes, and the interpreter's final flush, then succeed silently, so
    the command runs to its end and exits with its own code: the reader
    stopping early is not an error, and the exit code does not depend on how
    much output was still unwritten. Rule: docs/exit-codes.md ("``| head`` ends
    quietly").
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _to_stdout(write: Callable[_P, None]) -> Callable[_P, None]:
    """Decorate a stdout writer: a closed pipe releases stdout instead of raising."""

    @wraps(write)
    def safe(*args: _P.args, **kwargs: _P.kwargs) -> None:
        try:
            write(*args, **kwargs)
        except BrokenPipeError:
            release_stdout()

    return safe


@_to_stdout
def emit_json(data: Any) -> None:
    """Write ``data`` as one JSON document (UTF-8, newline) to stdout.

    Indented (2 spaces) on a terminal, for people; on one line when piped,
    so each document is one line (``jq``, JSON Lines, ``wc -l``).
    """
    if sys.stdout.isatty():
        text = json.dumps(data, ensure_ascii=False, indent=2)
    else:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


@_to_stdout
def emit_json_line(data: Any) -> None:
    """Write ``data`` as one compact JSON line to stdout (JSON-lines output)."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    sys.stdout.flush()


@_to_stdout
def emit_text(text: str) -> None:
    """Write raw text to stdout exactly as given (e.g. a rendered prompt), plus a final newline."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def terminal_stream() -> TextIO:
    """Return the stream prompts are drawn on: stderr when it is a terminal, else ``/dev/tty``.

    Falls back to stderr when there is no controlling terminal.
    """
    if sys.stderr.isatty():
        return sys.stderr
    try:
        return open("/dev/tty", "w", encoding="utf-8")  # lives as long as the run
    except OSError:
        return sys.stderr


@cache
def console() -> Console:
    """Return the Rich console for human output on stdout.

    A closed pipe releases stdout (``release_stdout``) and quiets the console,
    instead of Rich's own ``SystemExit(1)``: the command ends with its own code.
    """
    from rich.console import Console

    class _Stdout(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            release_stdout()

    return _Stdout(highlight=False, soft_wrap=True, emoji=False)  # ":warning:" stays text


@cache
def err_console() -> Console:
    """Return the Rich console on stderr (diagnostics, prompts' companions)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, emoji=False)


def escape(text: str) -> str:
    """Escape Rich markup in untrusted text (recipe descriptions, tasks)."""
    from rich.markup import escape as _escape

    return _escape(text)


def warn(message: str) -> None:
    """Write ``vance: warning: <message>`` to stderr (control characters made visible)."""
    sys.stderr.write(f"vance: warning: {visible(message)}\n")
    sys.stderr.flush()


@cache
def _warning_handler() -> type[logging.Handler]:
    """The handler class of ``show_core_warnings`` (made when first needed, with ``logging``)."""
    import logging  # stdlib, off the light paths: only a logged warning needs it

    class WarningHandler(logging.Handler):
        """Shows a logged warning of the core as a ``vance: warning:`` line."""

        def emit(self, record: logging.LogRecord) -> None:
            """Write one record as a warning line on stderr."""
            warn(record.getMessage())

    return WarningHandler


def show_core_warnings() -> None:
    """Route warnings the core logs to stderr, once per process (the core never prints).

    The command line calls it before the core writes a warning (``base.logs``), and
    ``vance mcp`` before it serves (its handlers log through ``logging`` themselves).
    """
    import logging  # stdlib, off the light paths: only a logged warning needs it

    logger = logging.getLogger("vance_cli")
    handler = _warning_handler()
    if not any(isinstance(h, handler) for h in logger.handlers):
        logger.addHandler(handler(logging.WARNING))
        logger.propagate = False


def error(message: str) -> None:
    """Write ``vance: error: <message>`` to stderr (control characters made visible)."""
    sys.stderr.write(f"vance: error: {visible(message)}\n")
    sys.stderr.flush()


def info(message: str) -> None:
    """Write a plain informational line to stderr (kept off stdout so pipes stay clean)."""
    sys.stderr.write(visible(message) + "\n")
    sys.stderr.flush()


def note(message: str) -> None:
    """Write a diagnostic line to stderr only when stderr is a terminal (counts, captions).

    Rule: docs/exit-codes.md (diagnostics only on a TTY).
    """
    if sys.stderr.isatty():
        info(message)


@_to_stdout
def stream_text(piece: str) -> None:
    """Write a piece of a streamed answer to stdout at once (control characters made visible)."""
    sys.stdout.write(visible(piece))
    sys.stdout.flush()


@_to_stdout
def say(message: str) -> None:
    """Write a human line to stdout (control characters made visible; no Rich markup)."""
    sys.stdout.write(visible(message) + "\n")
    sys.stdout.flush()


@_to_stdout
def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]],
          caption: str | None = None, one_line: Sequence[str] = (), text: Sequence[str] = (),
          group: Sequence[str] = (), shrink: Sequence[str] = (),
          times: Sequence[str] = (), tree: tuple[str, Sequence[int]] | None = None) -> None:
    """Print a table to stdout; cells go through ``display`` and ``visible``.

    On a terminal: a Rich table (cells escaped). Identifier columns (every
    column not in ``text`` or ``one_line``: names, ids, engines, status …)
    never wrap; they are cut with an ellipsis only when the terminal is too
    narrow for them. ``text`` columns wrap and take the remaining width;
    ``one_line`` columns show on one line (line breaks as `` ⏎ ``), cut with
    an ellipsis. Piped: one tab-separated line per row — every row complete
    — and no header, as ``gh`` does, so ``cut``, ``grep`` and ``awk`` work
    (tabs and newlines inside cells become spaces); the title and caption go
    to stderr only when stderr is a terminal.

    Args:
        title: shown above the table, or None.
        columns: column headers.
        rows: cell values, one sequence per row (see ``display``).
        caption: shown below the table (terminal), or None.
        one_line: columns cut to one line with an ellipsis instead of wrapping.
        text: free-text columns that wrap.
        group: columns whose value is shown only where it changes from the
            row above (terminal only; piped rows stay complete).
        times: columns of ISO-8601 UTC timestamps, shown as ``MM-DD HH:MM``
            on a terminal; piped rows keep the exact timestamp.
        shrink: identifier columns that give way first, in this order, down
            to ``MIN_ONE_LINE`` cells, when the row is wider than the terminal
            (e.g. a long generated name before the id one acts on).
        tree: (column, depth of each row): on a terminal that column's cell is
            indented under the row above it (``└`` at depth 1 and more), so
            children show under their parent; piped cells stay as they are.

    Rule: docs/exit-codes.md (human output, diagnostics only on a TTY).
    """
    raw = [[display(cell) for cell in row] for row in rows]
    if not sys.stdout.isatty():
        for row in raw:
            sys.stdout.write("\t".join(visible(" ".join(cell.split())) for cell in row) + "\n")
        sys.stdout.flush()
        for line in (title, caption):
            if line:
                note(line)
        return
    from rich.cells import cell_len
    from rich.table import Table

    cells = [[visible(_one_line(cell) if column in one_line else
                      short_time(cell) if column in times else cell)
              for column, cell in zip(columns, row, strict=False)] for row in raw]
    if tree is not None:
        _indent(cells, columns.index(tree[0]), tree[1])
    _blank_repeats(columns, cells, group)
    grid = Table(title=title, caption=caption, header_style="bold", expand=False)
    # natural widths in terminal cells (a CJK letter takes two)
    width = {c: max([cell_len(header(c))] + [cell_len(r[i]) for r in cells])
             for i, c in enumerate(columns)}
    fixed = sum(width[c] + 3 for c in columns if c not in one_line)
    spare = max(MIN_ONE_LINE, (console().width - fixed - 4) // max(1, len(one_line)))
    natural = {c: min(spare, width[c]) if c in one_line else width[c]
               for c in columns if c not in text}
    limits = _give_way(natural, shrink, console().width - 3 * len(columns) - 1)
    for column in columns:
        shown = header(column)
        if column in one_line:
            grid.add_column(shown, overflow="ellipsis", no_wrap=True, max_width=spare)
        elif column in text:
            grid.add_column(shown, overflow="fold")
        else:
            grid.add_column(shown, overflow="ellipsis", no_wrap=True,
                            max_width=limits.get(column))
    for row in cells:
        grid.add_row(*(escape(cell) for cell in row))
    console().print(grid)


def short_time(timestamp: str) -> str:
    """Return ``MM-DD HH:MM`` of an ISO-8601 timestamp (``2026-11-30T03:47:19.822Z``).

    Text that is not such a timestamp is returned unchanged.
    """
    if len(timestamp) >= 16 and timestamp[4] == "-" and timestamp[10] == "T":
        return timestamp[5:16].replace("T", " ")
    return timestamp


def _give_way(widths: dict[str, int], shrink: Sequence[str], budget: int) -> dict[str, int]:
    """Return max widths for ``shrink`` columns so the row fits ``budget`` cells.

    Args:
        widths: natural width of each non-wrapping column, in cells.
        shrink: the columns that may narrow, first to give way first.
        budget: cells available for content (terminal width minus borders).

    Returns:
        ``{column: max_width}`` for the columns that had to narrow; each keeps
        at least ``MIN_ONE_LINE`` cells (or its natural width when smaller)
        while that is enough, else at least ``MIN_CUT`` cells: the columns
        not in ``shrink`` (the id one acts on) stay whole.
    """
    excess = sum(widths.values()) - budget
    limits: dict[str, int] = {}
    for floor in (MIN_ONE_LINE, MIN_CUT):
        for column in shrink:
            if excess <= 0:
                return limits
            now = limits.get(column, widths.get(column, 0))
            cut = min(excess, now - floor)
            if cut > 0:
                limits[column] = now - cut
                excess -= cut
    return limits


def _one_line(cell: str) -> str:
    text = cell.strip()
    cut = text[:ONE_LINE_READ] + ("…" if len(text) > ONE_LINE_READ else "")
    return _LINE_BREAKS.sub(ONE_LINE_BREAK, cut).replace("\t", " ")


def _indent(cells: list[list[str]], column: int, depths: Sequence[int]) -> None:
    """Indent ``column`` of each row by its depth: two cells a level, then ``└ ``."""
    for row, depth in zip(cells, depths, strict=False):
        if depth > 0:
            row[column] = "  " * (depth - 1) + "└ " + row[column]


def _blank_repeats(columns: Sequence[str], cells: list[list[str]], group: Sequence[str]) -> None:
    for index, column in enumerate(columns):
        if column not in group:
            continue
        previous = None
        for row in cells:
            current = row[index]
            if current == previous:
                row[index] = ""
            previous = current


@_to_stdout
def fields(pairs: Iterable[tuple[str, Any]], title: str | None = None, *,
           err: bool = False) -> None:
    """Print ``label: value`` lines (labels bold; values through ``display``, made visible).

    Args:
        pairs: (label, value) pairs, in order.
        title: a bold line above them, or None.
        err: print on stderr (the metadata beside an answer on stdout).
    """
    out = err_console() if err else console()
    if title:
        out.print(f"[bold]{escape(visible(title))}[/bold]", soft_wrap=True)
    for label, value in pairs:
        # soft_wrap: one line per field on stderr too, as on stdout (a pipe is not 80 columns)
        out.print(f"[bold]{escape(visible(label))}:[/bold] {escape(visible(display(value)))}",
                  soft_wrap=True)


SELECTOR_SPINNER = "Asking the selector…"
"""Shown on stderr (terminal only) while the selector's LLM is called."""


class Spinner:
    """A spinner on stderr that runs until ``stop`` (terminal only; a no-op elsewhere).

    Args:
        message: the line beside the spinner.
    """

    def __init__(self, message: str) -> None:
        self._status = None
        if sys.stderr.isatty():
            self._status = err_console().status(escape(visible(message, keep_layout=False)))
            self._status.start()

    def stop(self) -> None:
        """Stop and clear the spinner (again: nothing)."""
        if self._status is not None:
            self._status.stop()
            self._status = None


@contextmanager
def status(message: str) -> Iterator[None]:
    """Show a spinner on stderr while the block runs, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield
        return
    with err_console().status(escape(visible(message, keep_layout=False))):
        yield


@contextmanager
def progress(total: int, description: str) -> Iterator[Callable[[], None]]:
    """Show a progress bar on stderr while the block runs (terminal only).

    Shown only when stderr is a terminal and stdout is not: lines streamed to
    a terminal stdout would tear through the bar (and show the progress
    themselves). stdout is never redirected into the bar; writes to stderr
    (warnings) are printed above it.

    Yields:
        A function that advances the bar by one step (a no-op without a bar).
    """
    if not sys.stderr.isatty() or sys.stdout.isatty() or total <= 0:
        yield lambda: None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=err_console(), transient=True,
                   redirect_stdout=False)
    with bar:
        task = bar.add_task(escape(visible(description, keep_layout=False)), total=total)
        yield lambda: bar.advance(task)
