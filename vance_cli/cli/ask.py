"""Terminal prompts for wizards: the ``Asker`` of ``vance_cli.wizards.form``, on a real terminal.

Rules (docs/exit-codes.md; docs/wizards.md "Running a wizard"):
- Prompts render on the terminal — stderr when it is one, else ``/dev/tty`` —
  never on stdout, so ``vance wizard run X --print > prompt.txt`` stays clean.
- Field types: ``string``/``integer`` are text lines, ``password`` is masked,
  ``boolean`` is y/n, ``select``/``multi_select`` are menus, ``textarea``
  opens ``$VISUAL``/``$EDITOR`` through ``click.edit`` (which splits a command
  with arguments such as ``code --wait`` with ``shlex``), or a multi-line
  prompt when neither is set. Invalid answers are refused in place, with the
  reason right under the answer, and asked again; a refused prefill's reason
  stands right above its question (after the help).
- Questions, help and notes are wrapped between words to the terminal's
  width (a label continues indented under itself), never cut inside a word.
- questionary's ``ask()`` swallows Ctrl-C: only ``unsafe_ask()`` is used, so
  Ctrl-C raises KeyboardInterrupt; Ctrl-D is bound to raise EOFError in every
  prompt. The form walk turns both into ``Cancelled`` (exit 130).
- The finished prompt opens in an editable prompt-toolkit buffer with the
  shell's keys: Enter submits it, Esc Enter (or Alt-Enter) adds a new line.

questionary, prompt_toolkit and click are imported inside the functions that use them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import textwrap
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import click

from vance_cli.base.errors import InputError
from vance_cli.cli.output import terminal_stream
from vance_cli.wizards.form import Question, RepeatQuestion, StepQuestion
from vance_cli.wizards.model import FieldType

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

TEXTS: Mapping[str, Mapping[str, str]] = {
    "en": {
        "another": "Add another entry to “{label}”? ({count} so far)",
        "back": "Go back to step {number} (“{title}”) to change its answers?",
        "none": "(none)",
        "editor": "{label}: opening {editor} …",
        "multiline": "(Esc Enter to finish)",
        "edit_title": "The prompt — edit it, then press Enter to {action} (Esc Enter adds a "
                      "new line, Ctrl-C cancels):",
        "send": "send it to the selector",
        "print": "print it",
        "send_short": "send to the selector",
        "print_short": "print",
        "toolbar": " Enter: {action} · Esc Enter: new line · Ctrl-C: cancel ",
        "select_hint": "(Use arrow keys)",
        "checkbox_hint": "(Use arrow keys to move, <space> to select, <a> to toggle, "
                         "<i> to invert)",
        "editor_failed": "the editor failed ({error}); type the text here instead",
        "editor_unsaved": "the editor closed without saving",
        "yes": "Yes",
        "no": "No",
        "yes_keys": "yY",
        "remove": "Remove {count} closed process{es}?",
        "no_terminal": "refusing to remove {count} closed process{es} without confirmation: "
                       "stdin is not a terminal; pass --yes",
        "editor_gave_up": "no valid text from the editor after {tries} tries; type it here instead",
    },
    "de": {
        "another": "Noch einen Eintrag zu „{label}“ hinzufügen? (bisher {count})",
        "back": "Zurück zu Schritt {number} („{title}“), um die Antworten zu ändern?",
        "none": "(keine Angabe)",
        "editor": "{label}: öffne {editor} …",
        "multiline": "(Esc Enter zum Abschließen)",
        "edit_title": "Der Prompt — bearbeiten, dann Enter, um ihn {action} "
                      "(Esc Enter: neue Zeile, Strg-C bricht ab):",
        "send": "an den Selector zu senden",
        "print": "auszugeben",
        "send_short": "an den Selector senden",
        "print_short": "ausgeben",
        "toolbar": " Enter: {action} · Esc Enter: neue Zeile · Strg-C: abbrechen ",
        "select_hint": "(Pfeiltasten verwenden)",
        "checkbox_hint": "(Pfeiltasten bewegen, <Leertaste> wählt, <a> alle, "
                         "<i> umkehren)",
        "editor_failed": "der Editor ist fehlgeschlagen ({error}); Text bitte hier eingeben",
        "editor_unsaved": "der Editor wurde ohne Speichern geschlossen",
        "yes": "Ja",
        "no": "Nein",
        "yes_keys": "jJyY",
        "remove": "{count} geschlossene{n} Prozess{e} entfernen?",
        "no_terminal": "{count} geschlossene{n} Prozess{e} werden ohne Bestätigung nicht "
                       "entfernt: stdin ist kein Terminal; --yes angeben",
        "editor_gave_up": "nach {tries} Versuchen kein gültiger Text aus dem Editor; "
                          "Text bitte hier eingeben",
    },
}
"""The few words the terminal prompts add, German for ``de``, else English."""

EDITOR_TRIES = 3
"""Times the editor opens for one textarea before the text is typed in the terminal: an
editor that exits at once without saving would otherwise be relaunched in a tight loop."""


def _texts(lang: str) -> Mapping[str, str]:
    return TEXTS["de" if lang.lower().startswith("de") else "en"]


def editor_command(environ: Mapping[str, str] | None = None) -> str | None:
    """Return ``$VISUAL``, else ``$EDITOR`` (either may carry arguments), else None."""
    env = os.environ if environ is None else environ
    for key in ("VISUAL", "EDITOR"):
        value = env.get(key, "").strip()
        if value:
            return value
    return None


@contextlib.contextmanager
def _stdout_on_terminal() -> Iterator[None]:
    """While an editor runs, point fd 1 at the terminal when stdout is redirected.

    A terminal editor draws on its stdout; with ``--print > prompt.txt`` that
    would be the file.
    """
    try:
        redirected = not os.isatty(1)
    except (OSError, ValueError):  # pragma: no cover - no fd 1
        redirected = False
    tty = None
    if redirected:
        with contextlib.suppress(OSError):
            tty = os.open("/dev/tty", os.O_WRONLY)
    if tty is None:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(tty, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(tty)


def edit_in_editor(text: str, command: str) -> str | None:
    """Open ``text`` in the editor ``command`` (shlex-split by click) and return the result.

    Returns:
        The saved text with CRLF normalised, or None when the editor closed without saving.

    Raises:
        OSError: the editor could not be started or exited non-zero (message says which).
    """
    try:
        with _stdout_on_terminal():
            result = click.edit(text, editor=command, extension=".md", require_save=True)
    except click.ClickException as exc:
        raise OSError(exc.format_message()) from None
    return None if result is None else result.replace("\r\n", "\n")


class TerminalAsker:
    """Asks wizard questions with questionary / prompt-toolkit.

    Args:
        lang: session language for the few words added here.
        input: prompt-toolkit input (tests pass ``create_pipe_input()``); None: the terminal.
        output: prompt-toolkit output (tests pass ``DummyOutput()``); None: ``terminal_stream()``.
        environ: environment for ``$VISUAL``/``$EDITOR``; None: ``os.environ``.
    """

    def __init__(self, lang: str, input: Input | None = None, output: Output | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self.lang = lang
        self.texts = _texts(lang)
        self.input = input
        self.environ = environ
        if output is None:
            from prompt_toolkit.output import create_output

            output = create_output(stdout=terminal_stream())
        self.output = output

    # --- the Asker protocol -------------------------------------------------

    def ask(self, question: Question) -> Any:
        """Ask one field and return the raw answer (valid for ``question.check``)."""
        if question.help:
            self._say(question.help, "italic")
        if question.error:  # right above its question, the help before it
            self._say(f"✗ {question.error}", "class:error")
        kind = question.type
        if kind is FieldType.BOOLEAN:
            return self._confirm(question.label, bool(question.default))
        if kind is FieldType.SELECT:
            return self._select(question)
        if kind is FieldType.MULTI_SELECT:
            return self._checkbox(question)
        if kind is FieldType.TEXTAREA:
            return self._textarea(question)
        return self._text(question, password=kind is FieldType.PASSWORD)

    def another(self, question: RepeatQuestion) -> bool:
        """Ask whether to add another entry to a repeat field."""
        label = self.texts["another"].format(label=question.label, count=question.count)
        return self._confirm(label, False)

    def back(self, question: StepQuestion) -> bool:
        """Ask, after a step but the first, whether to go back one step (default: no)."""
        label = self.texts["back"].format(number=question.number - 1, title=question.previous)
        return self._confirm(label, False)

    def line(self, label: str, default: str) -> str:
        """Ask for one line of text, ``default`` in the buffer (a file name, say)."""
        import questionary

        return str(self._run(questionary.text(self._label(label), default=default,
                                              **self._io())))

    def confirm(self, label: str, default: bool) -> bool:
        """Ask a yes/no question (the wizard's "check" step)."""
        return self._confirm(label, default)

    def section(self, title: str) -> None:
        """Show a heading line on the terminal."""
        self._say(title, "bold")

    # --- the final buffer ---------------------------------------------------

    def edit_prompt(self, text: str, printing: bool) -> str:
        """Show the rendered prompt in an editable buffer; return it on Enter.

        The keys are the shell's input line's (``/wizard``): Enter sends, Esc Enter
        (Alt-Enter) adds a new line.

        Raises:
            KeyboardInterrupt: Ctrl-C.
            EOFError: Ctrl-D.
        """
        from prompt_toolkit import PromptSession

        action = self.texts["print" if printing else "send"]
        self._say(self.texts["edit_title"].format(action=action), "bold")
        from prompt_toolkit.key_binding import merge_key_bindings

        from vance_cli.cli.word_wrap import WordWrap  # heavy: prompt_toolkit

        session: PromptSession[str] = PromptSession(
            multiline=False, input=self.input, output=self.output, input_processors=[WordWrap()],
            key_bindings=merge_key_bindings([_cancel_bindings(), newline_bindings()]),
            prompt_continuation=lambda width, _n, _w: " " * width,
            bottom_toolbar=self.texts["toolbar"].format(
                action=self.texts["print_short" if printing else "send_short"]))
        return session.prompt("", default=text)

    # --- helpers ------------------------------------------------------------

    def _io(self) -> dict[str, Any]:
        return {"input": self.input, "output": self.output}

    def _say(self, text: str, style: str) -> None:
        from prompt_toolkit import print_formatted_text
        from prompt_toolkit.formatted_text import FormattedText

        print_formatted_text(FormattedText([(style, wrap_words(text, self._width()))]),
                             output=self.output)

    def _width(self) -> int:
        return self.output.get_size().columns

    def _label(self, label: str) -> str:
        """A question's text wrapped for the line it starts after questionary's ``? ``."""
        return wrap_label(label, self._width())

    def _run(self, question: Any) -> Any:
        app = question.application
        from prompt_toolkit.key_binding import merge_key_bindings

        app.key_bindings = merge_key_bindings([app.key_bindings, _cancel_bindings()]) \
            if app.key_bindings is not None else _cancel_bindings()
        return question.unsafe_ask()

    def _text(self, question: Question, password: bool = False) -> str:
        import questionary

        make = questionary.password if password else questionary.text
        default = "" if question.default is None or password else str(question.default)
        if question.type is FieldType.INTEGER and default:
            # shown as a default, not put in the buffer: typing replaces it instead of
            # appending to it; Enter alone takes it
            from prompt_toolkit.formatted_text import FormattedText

            answer = str(self._run(make(
                self._label(question.label),
                placeholder=FormattedText([("class:placeholder", default)]),
                validate=lambda text: question.check(text or default) or True,
                style=_PLACEHOLDER_STYLE(), **self._io())))
            return answer or default
        return str(self._run(make(
            self._label(question.label), default=default,
            validate=lambda answer: question.check(answer) or True, **self._io())))

    def _confirm(self, label: str, default: bool) -> bool:
        return ask_yes_no(label, default, self.lang, self.input, self.output)

    def _select(self, question: Question) -> str:
        import questionary

        choices = [questionary.Choice(title=label, value=value)
                   for value, label in question.choices]
        if not question.field.required:
            choices.append(questionary.Choice(title=self.texts["none"], value=""))
        values = [c.value for c in choices]
        default = question.default if question.default in values else None
        return str(self._run(questionary.select(
            self._label(question.label), choices=choices, default=default,
            instruction=self.texts["select_hint"], **self._io())))

    def _checkbox(self, question: Question) -> list[str]:
        import questionary

        chosen = set(question.default or ())
        choices = [questionary.Choice(title=label, value=value, checked=value in chosen)
                   for value, label in question.choices]
        answer = self._run(questionary.checkbox(
            self._label(question.label), choices=choices,
            instruction=self.texts["checkbox_hint"],
            validate=lambda picked: question.check(list(picked)) or True, **self._io()))
        return [str(v) for v in answer]

    def _textarea(self, question: Question) -> str:
        command = editor_command(self.environ)
        text = "" if question.default is None else str(question.default)
        for attempt in range(1, EDITOR_TRIES + 1 if command else 0):
            assert command is not None
            self._say(self.texts["editor"].format(label=question.label, editor=command), "bold")
            try:
                edited = edit_in_editor(text, command)
            except OSError as exc:
                self._say(self.texts["editor_failed"].format(error=exc), "class:error")
                break
            if edited is None:
                self._say(self.texts["editor_unsaved"], "class:error")
            text = text if edited is None else edited.rstrip("\n")
            error = question.check(text)
            if error is None:
                self._say(_echo(question.label, text), "")
                return text
            self._say(f"{question.path}: {error}", "class:error")
            if attempt == EDITOR_TRIES:
                self._say(self.texts["editor_gave_up"].format(tries=EDITOR_TRIES),
                          "class:error")
        return self._multiline(question, text)

    def _multiline(self, question: Question, default: str) -> str:
        import questionary

        return str(self._run(questionary.text(
            self._label(question.label), default=default, multiline=True,
            instruction=self.texts["multiline"],
            validate=lambda answer: question.check(answer) or True, **self._io())))


LABEL_INDENT = "  "
"""Continuation lines of a wrapped question start under its first word (after ``? ``)."""

MIN_WRAP = 20
"""Narrowest width, in cells, text is wrapped to (a tiny terminal still gets whole words)."""


def wrap_words(text: str, width: int, indent: str = "") -> str:
    """Return ``text`` wrapped between words to ``width`` cells; its own line breaks stay.

    Args:
        text: any text; each of its lines is wrapped on its own.
        width: the terminal's columns (a line ends one cell before, so the
            terminal never wraps it itself).
        indent: put before every line but the first.

    A word longer than a line (a URL) stays whole, on a line of its own.
    """
    lines: list[str] = []
    for line in text.split("\n"):
        lines += textwrap.wrap(line, width=max(MIN_WRAP, width - 1), subsequent_indent=indent,
                               initial_indent=indent if lines else "",
                               break_long_words=False, break_on_hyphens=False) or [""]
    return "\n".join(lines)


def wrap_label(label: str, width: int) -> str:
    """Return a question's text wrapped after questionary's ``? `` prefix and before its answer."""
    return wrap_words(label, width - len(LABEL_INDENT) - 1, LABEL_INDENT)


def _echo(label: str, text: str) -> str:
    """Return the line that echoes an editor's text: its first line, ``…`` when there is more."""
    lines = text.strip("\n").splitlines() or [""]
    more = " …" if len(lines) > 1 else ""
    return f"{label}: {lines[0].strip()}{more}"


def _PLACEHOLDER_STYLE() -> Any:
    """Questionary's style with a dim placeholder (an integer's default)."""
    from prompt_toolkit.styles import Style, merge_styles
    from questionary.constants import DEFAULT_STYLE

    return merge_styles([DEFAULT_STYLE, Style([("placeholder", "fg:#888888")])])


def newline_bindings() -> Any:
    """Esc Enter (or Alt-Enter) inserts a new line; Enter still submits the whole buffer.

    The keys of the shell's input line and of ``wizard run``'s final buffer (docs/wizards.md).
    """
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    return bindings


def _cancel_bindings() -> Any:
    """Key bindings that make Ctrl-D cancel any prompt (questionary binds only Ctrl-C)."""
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("c-d", eager=True)
    def _cancel(event: Any) -> None:
        event.app.exit(exception=EOFError, style="class:aborting")

    return bindings


def ask_yes_no(message: str, default: bool, lang: str, input: Input | None = None,
               output: Output | None = None) -> bool:
    """Ask a yes/no question on the terminal, in the session's language; return the answer.

    ``(Y/n)`` or ``(y/N)`` in English, ``(J/n)`` or ``(j/N)`` in German, where
    ``j`` answers yes (``y`` too); ``n`` no. A key only chooses and Enter
    submits (Enter alone takes the default), so a habitual "n⏎" never also
    answers the next question. The answer is shown as a word of the language.

    Args:
        message: the question.
        default: the answer Enter alone gives.
        lang: session language (``de…`` German, else English).
        input: prompt-toolkit input (tests pass a pipe); None: the terminal.
        output: prompt-toolkit output; None: ``terminal_stream()``.

    Raises:
        KeyboardInterrupt: Ctrl-C. EOFError: Ctrl-D.
    """
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings, merge_key_bindings
    from prompt_toolkit.keys import Keys
    from prompt_toolkit.output import create_output

    texts = _texts(lang)
    yes_key = texts["yes_keys"][0]
    hint = f"({yes_key.upper()}/n) " if default else f"({yes_key}/N) "
    state: dict[str, bool | None] = {"answer": None, "done": False}

    def tokens() -> FormattedText:
        parts = [("class:qmark", "?"), ("class:question", f" {label} ")]
        if not state["done"]:
            parts.append(("class:instruction", hint))
        if state["answer"] is not None:
            parts.append(("class:answer", texts["yes"] if state["answer"] else texts["no"]))
        return FormattedText(parts)

    bindings = KeyBindings()

    def choose(answer: bool | None) -> None:
        state["answer"] = answer

    for key in texts["yes_keys"]:
        bindings.add(key)(lambda _event: choose(True))
    for key in "nN":
        bindings.add(key)(lambda _event: choose(False))
    bindings.add(Keys.ControlH)(lambda _event: choose(None))

    @bindings.add(Keys.ControlM, eager=True)
    def _submit(event: Any) -> None:
        if state["answer"] is None:
            state["answer"] = default
        state["done"] = True
        event.app.exit(result=state["answer"])

    @bindings.add(Keys.ControlC, eager=True)
    def _interrupt(event: Any) -> None:
        event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    @bindings.add(Keys.Any)
    def _other(_event: Any) -> None:
        """Other keys insert nothing."""

    from questionary.styles import merge_styles_default

    output = output or create_output(stdout=terminal_stream())
    label = wrap_label(message, output.get_size().columns - len(hint))
    session: PromptSession[bool] = PromptSession(
        tokens, key_bindings=merge_key_bindings([bindings, _cancel_bindings()]),
        style=merge_styles_default([None]), input=input, output=output)
    return bool(session.app.run())


def confirm_removal(count: int, lang: str) -> bool:
    """Ask before removing ``count`` closed processes, as ``gh`` asks before deleting.

    On a terminal: a yes/no question, default no. Without one (stdin is not
    a terminal): refused, since nobody can answer; ``--yes`` skips the question.

    Returns:
        The answer: False (nothing is removed) is no error, and exits 0.

    Raises:
        InputError: stdin is not a terminal (exit 2, names ``--yes``).
    """
    words = {"count": count, "es": "" if count == 1 else "es", "n": "n" if count == 1 else "",
             "e": "" if count == 1 else "e"}
    texts = _texts(lang)
    if not sys.stdin.isatty():
        raise InputError(texts["no_terminal"].format(**words), field="yes")
    return ask_yes_no(texts["remove"].format(**words), False, lang)


TOOL_ANSWERS = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "a": "always",
                "always": "always"}
"""What the tool question takes (a first letter is enough); Enter alone is no."""


def ask_tool_call(tool: str, arguments: Mapping[str, Any], input: Input | None = None,
                  output: Output | None = None) -> str:
    """Ask once whether a turn may call ``tool`` with ``arguments`` (the gate's ``ask``).

    The call is shown whole (arguments as JSON, long values cut); the answer is
    ``yes``, ``no`` or ``always`` (for this process). Enter alone, Ctrl-D or any
    other word is no.

    Raises:
        KeyboardInterrupt: Ctrl-C (the turn stops).
    """
    from prompt_toolkit import PromptSession
    from prompt_toolkit.output import create_output

    shown = json.dumps(dict(arguments), ensure_ascii=False, indent=2)
    if len(shown) > 2000:
        shown = shown[:2000] + "\n…"
    stream = terminal_stream()
    stream.write(f"\nThe turn wants to call the tool {tool} with:\n{shown}\n")
    stream.flush()
    session: PromptSession[str] = PromptSession(
        input=input, output=output or create_output(stdout=stream))
    try:
        answer = session.prompt(f"Allow {tool}? [y]es / [n]o / [a]lways for this process: ")
    except EOFError:
        return "no"
    return TOOL_ANSWERS.get(answer.strip().lower(), "no")
