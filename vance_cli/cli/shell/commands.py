"""``vance shell``: the slash-command table and the parsing of input lines (docs/shell.md).

Rules:
- A line that starts with ``/`` is a slash command, ``/name arguments…``
  (names are matched case-insensitively; ``/exit`` is ``/quit``). ``//text``
  is the task ``/text``, for a task that starts with a slash. Any other
  non-blank line is a task for the selector.
- Arguments are split as a POSIX shell splits them (quotes group words),
  except ``/delegate``'s task, which is kept verbatim (apostrophes in a
  task are common).
- An unknown command is a usage error (exit 2) naming close commands
  ("did you mean /wizard?").

Pure functions: nothing here prints or imports a UI library.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from vance_cli.base.errors import InputError
from vance_cli.base.names import close_matches
from vance_cli.base.records import frozen


@frozen
class SlashCommand:
    """One slash command of the shell.

    Attributes:
        name: what follows the slash, e.g. ``"wizard"``.
        usage: the synopsis ``/help`` shows.
        summary: one line on what it does.
        aliases: other names that run it (``exit`` for ``quit``).
        group: the ``vance`` command it passes its arguments to, or None when
            the shell handles it itself.
    """

    name: str
    usage: str
    summary: str
    aliases: tuple[str, ...] = ()
    group: str | None = None


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("wizard", "/wizard [NAME] [--set KEY=VALUE]... [--values FILE] [--dry-run]",
                 "fill a wizard; its prompt lands in the input line, Enter sends it"),
    SlashCommand("wizards", "/wizards", "show the quick-start cards: a number opens a wizard"),
    SlashCommand("delegate", "/delegate [--dry-run] [--no-fallback] [--async-fallback] TASK",
                 "send TASK to the selector as a new task"),
    SlashCommand("new", "/new", "end the conversation: the next plain text is a new task"),
    SlashCommand("process", "/process list | show ID | result ID | messages ID | steer ID TEXT"
                 " | wait ID | stop ID | rm ID | prune | events …",
                 "processes of this session, as 'vance process'", group="process"),
    SlashCommand("catalog", "/catalog show | reload [--file FILE] | validate FILE",
                 "the engine catalog, as 'vance catalog'", group="catalog"),
    SlashCommand("recipe", "/recipe list | show NAME",
                 "the recipe inventory, as 'vance recipe'", group="recipe"),
    SlashCommand("log", "/log [-n N]", "the selector's decision log, as 'vance log'",
                 group="log"),
    SlashCommand("help", "/help [COMMAND]", "list the slash commands, or one command's help"),
    SlashCommand("quit", "/quit", "leave the shell (so do /exit and Ctrl-D)", aliases=("exit",)),
)
"""Every slash command, in the order ``/help`` lists them."""

_DELEGATE = next(c for c in COMMANDS if c.name == "delegate")

SUMMARIES_DE: dict[str, str] = {
    "wizard": "einen Wizard ausfüllen; sein Prompt landet in der Eingabezeile, Enter sendet ihn",
    "wizards": "die Schnellstart-Karten zeigen: eine Zahl öffnet einen Wizard",
    "delegate": "TASK als neue Aufgabe an den Selector senden",
    "new": "das Gespräch beenden: der nächste Text ist eine neue Aufgabe",
    "process": "Prozesse dieser Sitzung, wie 'vance process'",
    "catalog": "der Engine-Katalog, wie 'vance catalog'",
    "recipe": "das Rezept-Inventar, wie 'vance recipe'",
    "log": "das Entscheidungsprotokoll des Selectors, wie 'vance log'",
    "help": "die Slash-Befehle auflisten, oder die Hilfe eines Befehls",
    "quit": "die Shell verlassen (ebenso /exit und Strg-D)",
}
"""The summaries ``/help`` shows in a German session (``summary`` is the English one)."""

DRY_RUN = "--dry-run"
"""The flag ``/wizard`` and ``/delegate`` take: decide only, start no process."""

NO_FALLBACK = "--no-fallback"
"""``/delegate``: on NONE, no Slartibartfast fallback (as ``vance delegate --no-fallback``)."""

ASYNC_FALLBACK = "--async-fallback"
"""``/delegate``: the fallback runs in the background (as ``vance delegate --async-fallback``)."""

DELEGATE_FLAGS: tuple[tuple[str, str], ...] = (
    (DRY_RUN, "decide only; start no process"),
    (NO_FALLBACK, "on NONE, no Slartibartfast fallback"),
    (ASYNC_FALLBACK, "run the fallback in the background"),
)
"""The flags ``/delegate`` takes before its task, with a few words each."""

SET_OPTIONS = ("--set", "-s")
"""``/wizard`` prefill options, as ``vance wizard run --set``."""

VALUES_OPTION = "--values"
"""``/wizard`` values file option, as ``vance wizard run --values`` (a file only: the
shell's stdin is its own input)."""


def find_command(name: str) -> SlashCommand | None:
    """Return the command called ``name`` (or one of its aliases), case-insensitively."""
    wanted = name.lower()
    for command in COMMANDS:
        if wanted == command.name or wanted in command.aliases:
            return command
    return None


def command_names() -> list[str]:
    """Return every name a slash command answers to (aliases included), table order."""
    return [n for c in COMMANDS for n in (c.name, *c.aliases)]


def unknown_command(name: str) -> InputError:
    """Return the error for an unknown ``/name``: close names as "did you mean", else /help."""
    close = close_matches(name.lower(), command_names(), limit=3)
    hint = (f"did you mean {' or '.join('/' + c for c in close)}?" if close
            else "/help lists the commands")
    return InputError(f"unknown command '/{name}' — {hint}", command=name,
                      close=[f"/{c}" for c in close])


@frozen
class ParsedLine:
    """One input line, classified.

    Attributes:
        kind: ``"empty"``, ``"task"`` or ``"command"``.
        text: the task (``task``) or the command's argument text (``command``).
        name: the command name as typed, without the slash (``command`` only).
    """

    kind: str
    text: str = ""
    name: str = ""


def parse_line(line: str) -> ParsedLine:
    """Classify an input line: blank, a task, or ``/name args``.

    Args:
        line: the line as typed (a wizard's prompt may span several lines).

    Returns:
        The ParsedLine; ``//text`` is the task ``/text``.

    Rule: docs/shell.md.
    """
    text = line.strip()
    if not text:
        return ParsedLine("empty")
    if text.startswith("//"):
        return ParsedLine("task", text[1:])
    if not text.startswith("/"):
        return ParsedLine("task", text)
    head, _, rest = text[1:].partition(" ")
    first_line, newline, more = head.partition("\n")
    if newline:  # "/name\nmore": the arguments start on the next line
        head, rest = first_line, more + (" " + rest if rest else "")
    return ParsedLine("command", rest.strip(), head.strip())


def split_arguments(text: str) -> list[str]:
    """Split a command's arguments as a POSIX shell would (quotes group words).

    Raises:
        InputError: unbalanced quotes.
    """
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise InputError(f"cannot split the arguments: {exc}") from None


@frozen
class WizardArgs:
    """What ``/wizard`` was given.

    Attributes:
        name: the wizard, or None to list them.
        sets: ``KEY=VALUE`` prefills, in order.
        dry_run: decide only when the prompt is sent.
        values: a JSON or YAML values file, read before the ``--set`` values.
    """

    name: str | None
    sets: tuple[str, ...] = ()
    dry_run: bool = False
    values: str | None = None


def parse_wizard_args(words: Sequence[str]) -> WizardArgs:
    """Parse ``/wizard [NAME] [--set K=V]... [--values FILE] [--dry-run]`` (options anywhere).

    Raises:
        InputError: an unknown option, ``--set``/``--values`` without a value,
            ``--values -`` (stdin is the shell's input), or two names.
    """
    name: str | None = None
    sets: list[str] = []
    values: str | None = None
    dry_run = False
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word == DRY_RUN:
            dry_run = True
        elif word in SET_OPTIONS:
            if not rest:
                raise InputError(f"{word} needs KEY=VALUE")
            sets.append(rest.pop(0))
        elif word.startswith("--set="):
            sets.append(word.removeprefix("--set="))
        elif word == VALUES_OPTION or word.startswith(VALUES_OPTION + "="):
            if word == VALUES_OPTION and not rest:
                raise InputError(f"{VALUES_OPTION} needs FILE (JSON or YAML)")
            values = rest.pop(0) if word == VALUES_OPTION else word.split("=", 1)[1]
            if values == "-":
                raise InputError(f"/wizard {VALUES_OPTION} takes a file: the shell's stdin is"
                                 " its own input")
        elif word.startswith("-"):
            raise InputError(f"/wizard has no option '{word}' (it takes --set KEY=VALUE,"
                             f" {VALUES_OPTION} FILE and {DRY_RUN})")
        elif name is None:
            name = word
        else:
            raise InputError(f"/wizard takes one wizard name, got '{name}' and '{word}'")
    return WizardArgs(name, tuple(sets), dry_run, values)


@frozen
class DelegateArgs:
    """``/delegate``'s flags and task.

    Attributes:
        task: the task, verbatim.
        dry_run: ``--dry-run``.
        fallback: False with ``--no-fallback``.
        background: ``--async-fallback``.
    """

    task: str
    dry_run: bool = False
    fallback: bool = True
    background: bool = False


def parse_delegate_args(text: str) -> DelegateArgs:
    """Split ``/delegate [FLAG]... TASK`` into its flags and the task, which stays verbatim.

    Flags are the words at the start that begin with ``--``, up to the first
    other word (or ``--``, which ends them); an unknown one is an error, never
    task text.

    Raises:
        InputError: an unknown flag, ``--no-fallback`` with ``--async-fallback``, or no task.
    """
    flags: set[str] = set()
    rest = text.strip()
    while rest.startswith("--"):
        word = rest.split(maxsplit=1)[0]
        after = rest[len(word):].strip()
        if word == "--":
            rest = after
            break
        if word not in dict(DELEGATE_FLAGS):
            known = ", ".join(flag for flag, _ in DELEGATE_FLAGS)
            raise InputError(f"/delegate: unknown option {word} (known: {known}; put -- "
                             "before a task that starts with --)")
        flags.add(word)
        rest = after
    if {NO_FALLBACK, ASYNC_FALLBACK} <= flags:
        raise InputError(f"/delegate: {NO_FALLBACK} and {ASYNC_FALLBACK} exclude each other")
    if not rest:
        raise InputError(f"usage: {_DELEGATE.usage}")
    return DelegateArgs(rest, DRY_RUN in flags, NO_FALLBACK not in flags,
                        ASYNC_FALLBACK in flags)
