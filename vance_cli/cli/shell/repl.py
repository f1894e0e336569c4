"""``vance shell``: an interactive session — plain text is delegated, slash commands do the rest.

Rules (docs/shell.md; the command table and dispatch live in ``shell_commands``,
the completer, history and keys in ``shell_complete``):
- On a terminal: a prompt-toolkit ``PromptSession`` drawn on the terminal
  (stderr, else ``/dev/tty``) while results go to stdout. History is the
  file ``paths.history_file`` in the state dir. Ctrl-C clears the line, Ctrl-D
  on an empty line leaves (exit 0), Esc Enter inserts a new line, Ctrl-X
  Ctrl-E edits the line in ``$VISUAL``/``$EDITOR`` and sends what was saved.
- ``/wizard NAME`` puts the rendered prompt into the next input buffer; Enter
  sends it to the selector, whatever it starts with (it is never read as a
  slash command), Ctrl-C discards it. It is not written to the history file.
  A long line wraps between words on the screen (``word_wrap.WordWrap``).
- Pending events of the session's processes (e.g. an async Slartibartfast
  run that finished) are shown before each prompt, each once per shell run.
- While the prompt waits, replies that background turns write for the
  session's top-level processes (arthur's report once a delegated child
  finished) are printed above it as they arrive (``ReplyPrinter``).
  Showing does **not** acknowledge them: the queue belongs to the recipient
  processes, and ``/process events --ack`` consumes explicitly. Events that
  were already pending when the shell started are counted, not printed.
- Stdin not a terminal: the lines of stdin are a script — no prompt, no
  history, no event notes; blank lines and ``#`` comments are skipped. The
  first line that fails stops the script, and its exit code is the shell's
  (as ``sh -e``); a ``NONE`` decision is not a failure. ``/wizard`` then
  needs every required value through ``--set`` and sends the prompt at once.

prompt_toolkit is imported only when the shell runs.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from vance_cli.base.paths import ensure
from vance_cli.base.text_input import decode_utf8
from vance_cli.cli import output
from vance_cli.cli.ask import wrap_words
from vance_cli.cli.commands.process_view import print_event
from vance_cli.cli.output import terminal_stream
from vance_cli.cli.shell.complete import ShellCompleter, ShellHistory, Sources, shell_bindings
from vance_cli.cli.shell.dispatch import Shell
from vance_cli.processes.events import EventQuery, pending_events
from vance_cli.processes.views import Reply, ReplyWatch

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from vance_cli.workspace import Workspace

PROMPT = "vance> "
"""The input prompt."""

TEXTS: Mapping[str, Mapping[str, str]] = {
    "en": {
        "intro": "vance shell — type a task for the selector, or /help. Ctrl-D leaves.",
        "backlog": "{count} pending event(s) in this session: /process events lists them.",
        "edit": "The prompt is in the input line: edit it, Enter sends it to the selector"
                " (Esc Enter: new line, Ctrl-X Ctrl-E: editor, Ctrl-C: discard).",
        "toolbar": " Enter: send · Esc Enter: new line · Ctrl-X Ctrl-E: editor · Ctrl-C: discard ",
    },
    "de": {
        "intro": "vance shell — eine Aufgabe für den Selector eingeben, oder /help."
                 " Strg-D beendet.",
        "backlog": "{count} offene(s) Ereignis(se) in dieser Sitzung: /process events"
                   " listet sie.",
        "edit": "Der Prompt steht in der Eingabezeile: bearbeiten, Enter sendet ihn an den"
                " Selector (Esc Enter: neue Zeile, Strg-X Strg-E: Editor, Strg-C: verwerfen).",
        "toolbar": " Enter: senden · Esc Enter: neue Zeile · Strg-X Strg-E: Editor ·"
                   " Strg-C: verwerfen ",
    },
}
"""The shell's own words on the terminal, German for ``de``, else English."""


def _texts(lang: str) -> Mapping[str, str]:
    return TEXTS["de" if lang.lower().startswith("de") else "en"]


class EventWatch:
    """Finds the session's pending events that this shell has not shown yet (never acks).

    Args:
        ws: the shell's workspace (tenant, session).
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.last_id = 0

    def start(self) -> int:
        """Mark every event pending now as seen; return how many there are."""
        backlog = pending_events(self.ws, EventQuery())
        if backlog:
            self.last_id = backlog[-1].id
        return len(backlog)

    def new(self) -> list[Any]:
        """Return the pending events that arrived since the last call, oldest first."""
        fresh = pending_events(self.ws, EventQuery(), after_id=self.last_id)
        if fresh:
            self.last_id = fresh[-1].id
        return fresh


def _say(term: Output, text: str, style: str = "") -> None:
    from prompt_toolkit import print_formatted_text
    from prompt_toolkit.formatted_text import FormattedText

    print_formatted_text(FormattedText([(style, wrap_words(text, term.get_size().columns))]),
                         output=term)


def _show_events(watch: EventWatch) -> None:

    for event in watch.new():
        print_event(event)


REPLY_POLL = 0.5
"""Seconds between two looks for replies of background turns while the prompt waits."""


class ReplyPrinter:
    """While the prompt waits, prints the replies background turns write (arthur's report).

    A daemon thread asks ``ReplyWatch`` every ``REPLY_POLL`` seconds and prints
    what it finds above the prompt (prompt-toolkit's ``run_in_terminal``), as
    ``[recipe id] reply``; the prompt is drawn again below it.

    Args:
        session: the running ``PromptSession``.
        watch: the replies to look for (marked before each prompt).
    """

    def __init__(self, session: Any, watch: ReplyWatch) -> None:
        self.session, self.watch = session, watch
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vance-replies", daemon=True)

    def __enter__(self) -> ReplyPrinter:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        try:
            db = self.watch.open()
        except Exception:  # no database to watch: nothing to print
            return
        try:
            self._watch(db)
        finally:
            db.close()

    def _watch(self, db: Any) -> None:
        while not self._stop.wait(REPLY_POLL):
            try:
                found = self.watch.new(db)
            except Exception:  # a busy database costs this look only
                continue
            app = self.session.app
            if found and app.loop is not None and not self._stop.is_set():
                app.loop.call_soon_threadsafe(self._print, app, found)

    @staticmethod
    def _print(app: Any, found: list[Reply]) -> None:
        from prompt_toolkit.application import run_in_terminal
        from prompt_toolkit.application.current import set_app

        def show() -> None:
            for reply in found:
                output.say(f"[{reply.recipe} {reply.process_id[:6]}] {reply.text}")

        with set_app(app):
            run_in_terminal(show)


def run_interactive(shell: Shell, term_input: Input | None = None,
                    term_output: Output | None = None) -> int:
    """Run the REPL until /quit or Ctrl-D; return the exit code (0).

    Args:
        shell: the dispatcher (its workspace, flags).
        term_input: prompt-toolkit input (tests pass a pipe); None: the terminal.
        term_output: prompt-toolkit output (tests pass ``DummyOutput``); None:
            the terminal stream (stderr, else ``/dev/tty``).

    Rule: docs/shell.md.
    """
    from prompt_toolkit import PromptSession
    from prompt_toolkit.output import create_output
    from prompt_toolkit.utils import get_cwidth

    from vance_cli.cli.word_wrap import WordWrap  # heavy: prompt_toolkit

    ws = shell.ws
    texts = _texts(ws.settings.lang)
    term = term_output or create_output(stdout=terminal_stream())
    ensure(ws.settings.paths.history_file.parent)
    history = ShellHistory(str(ws.settings.paths.history_file))
    sources = Sources(shell)
    session: PromptSession[str] = PromptSession(
        history=history, completer=ShellCompleter(sources), key_bindings=shell_bindings(),
        input=term_input, output=term, enable_open_in_editor=True, tempfile_suffix=".md",
        complete_while_typing=True, prompt_continuation=lambda width, _n, _w: " " * width,
        # a long line (a wizard's prompt) wraps between words, each row after the prompt
        input_processors=[WordWrap(lambda: get_cwidth(str(session.message)))])
    watch = EventWatch(ws)
    replies = ReplyWatch(ws)
    _say(term, texts["intro"], "bold")
    backlog = watch.start()
    shell.show_cards()  # the session is empty: no message yet
    if backlog:
        _say(term, texts["backlog"].format(count=backlog))
    pending: tuple[str, bool] | None = None
    while True:
        _show_events(watch)
        sources.refresh()
        history.private_next = pending is not None
        # Set on the session, not passed: prompt() keeps the last toolbar when given None.
        session.bottom_toolbar = texts["toolbar"] if pending else None
        replies.mark(ws.db)  # this shell's own turns printed their replies
        try:
            label = "" if pending else shell.prompt_label
            with ReplyPrinter(session, replies):
                line = session.prompt(f"[{label}] {PROMPT}" if label else PROMPT,
                                      default=pending[0] if pending else "")
        except KeyboardInterrupt:  # Ctrl-C: the line (or a wizard's prompt) is dropped
            pending = None
            continue
        except EOFError:
            return 0
        finally:
            history.private_next = False
        if pending is not None:
            result = shell.send_task(line, dry_run=pending[1])
        else:
            result = shell.run_line(line)
        pending = None
        if result.quit:
            return 0
        if result.prefill is not None:
            _say(term, texts["edit"], "italic")
            pending = (result.prefill, result.dry_run)


def run_script(shell: Shell, lines: Iterable[str]) -> int:
    """Run a script of shell lines (stdin not a terminal); stop at the first failure.

    Args:
        shell: the dispatcher (non-interactive).
        lines: the script's lines, with or without their newlines.

    Returns:
        0 when every line succeeded (or ``/quit`` came first), else the exit
        code of the first line that failed.
    """
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        result = shell.run_line(line, where=f"line {number}: ")
        if result.quit:
            return 0
        if result.code != 0:
            return result.code
    return 0


def script_lines() -> Iterator[str]:
    """Yield the lines of stdin, each checked to be UTF-8 (a bad line stops the script)."""
    for number, raw in enumerate(sys.stdin.buffer, start=1):
        yield decode_utf8(raw, f"stdin line {number}", line=number)
