"""``vance shell``'s prompt-toolkit pieces: the completer, the history and the key bindings.

Completion (docs/shell.md), only for lines that start with ``/``:
- the first word: the slash commands (aliases included), with their summaries;
- ``/wizard ``: the wizard names of the listing (``availableIn`` applies, as
  in ``vance wizard list``), titles in the session language; after ``--set``
  the wizard's field names (``topic=``);
- ``/process ``, ``/catalog ``, ``/recipe ``: the subcommands of the
  ``vance`` group, then their options (``--timeout``); process ids of this
  session after ``show``, ``wait``, ``stop``, ``rm`` and ``--for``; file paths after
  ``--file`` and ``/catalog validate``;
- ``/help ``: the command names.

The names come from a ``Sources`` object, so tests can call the completer
with plain ``Document`` values. The wizard listing is cached until the next
prompt (``Sources.refresh``): parsing every wizard on each key press would
cost a few milliseconds each.

This module imports prompt_toolkit at the top: only ``vance shell`` imports it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings

from vance_cli.cli.ask import newline_bindings
from vance_cli.cli.shell.commands import (
    COMMANDS,
    DELEGATE_FLAGS,
    DRY_RUN,
    SET_OPTIONS,
    find_command,
)
from vance_cli.cli.shell.dispatch import Shell
from vance_cli.documents.cascade import Kind
from vance_cli.processes.records import list_processes
from vance_cli.wizards.listing import is_available
from vance_cli.wizards.loader import load_cascade

if TYPE_CHECKING:
    from vance_cli.wizards.loader import LoadedWizard

Choice = tuple[str, str]
"""A completion and its one-line description."""

PROCESS_ID_COMMANDS = frozenset({"show", "wait", "stop", "rm"})
"""``/process`` subcommands whose first argument is a process id."""

ID_OPTIONS = frozenset({"--for"})
"""Options whose value is a process id."""

PATH_OPTIONS = frozenset({"--file", "-f", "--values"})
"""Options whose value is a file."""

PROCESS_ID_LIMIT = 50
"""Newest processes offered as ids (more would flood the menu)."""


class Sources:
    """What the completer offers, read from the shell's workspace and its Typer commands.

    Args:
        shell: the running shell.
    """

    def __init__(self, shell: Shell) -> None:
        self.shell = shell
        self._wizards: list[LoadedWizard] | None = None

    def refresh(self) -> None:
        """Forget cached listings (called before each prompt: files may have changed)."""
        self._wizards = None

    def commands(self) -> list[Choice]:
        """Return every slash-command name with its summary."""
        return [(name, c.summary) for c in COMMANDS for name in (c.name, *c.aliases)]

    def subcommands(self, group: str) -> list[Choice]:
        """Return the subcommands of ``vance GROUP`` with their short help (empty for a command)."""
        target = self.shell.group(group)
        subs = getattr(target, "commands", None) or {}
        return [(name, sub.get_short_help_str(limit=60)) for name, sub in sorted(subs.items())
                if not sub.hidden]

    def options(self, group: str, sub: str | None) -> list[Choice]:
        """Return the options of ``vance GROUP [SUB]`` (long and short forms)."""
        target = self.shell.group(group)
        if sub is not None:
            target = (getattr(target, "commands", None) or {}).get(sub)
            if target is None:
                return []
        found: list[Choice] = []
        for param in target.params:
            if getattr(param, "param_type_name", "") != "option" or param.hidden:
                continue
            for opt in (*param.opts, *param.secondary_opts):
                found.append((opt, (param.help or "").split(".")[0]))
        return [*found, ("--help", "show the help")]

    def _loaded_wizards(self) -> list[LoadedWizard]:
        if self._wizards is None:

            ws = self.shell.ws
            report = load_cascade(ws.cascade(Kind.WIZARDS), ws.wizard_cache)
            self._wizards = [w for w in report.wizards
                             if is_available(w.spec.available_in, ws.availability_id)]
        return self._wizards

    def wizards(self) -> list[Choice]:
        """Return the listed wizards' names with their titles (session language)."""
        lang = self.shell.ws.settings.lang
        return sorted((w.name, w.spec.title_in(lang)) for w in self._loaded_wizards())

    def wizard_fields(self, name: str) -> list[Choice]:
        """Return the top-level field names of wizard ``name`` (empty when unknown)."""
        lang = self.shell.ws.settings.lang
        for wizard in self._loaded_wizards():
            if wizard.name == name:
                return [(f.name, f.label_in(lang)) for f in wizard.spec.fields]
        return []

    def process_ids(self) -> list[Choice]:
        """Return this session's newest processes: id, with name and status."""
        return [(p.id, f"{p.name} · {p.status.value}")
                for p in list_processes(self.shell.ws, limit=PROCESS_ID_LIMIT)]


def _matching(word: str, choices: Iterable[Choice], prefix: str = "",
              suffix: str = "") -> Iterator[Completion]:
    lowered = word.lower()
    for value, meta in choices:
        text = prefix + value + suffix
        if text.lower().startswith(lowered):
            yield Completion(text, start_position=-len(word), display_meta=meta)


class ShellCompleter(Completer):
    """Completes slash commands and their arguments (see the module docstring).

    Args:
        sources: where names come from.
    """

    def __init__(self, sources: Any) -> None:
        self.sources = sources
        self.paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document,
                        complete_event: CompleteEvent) -> Iterator[Completion]:
        """Yield completions for the word before the cursor (nothing for a plain task)."""
        text = document.text_before_cursor
        if not text.startswith("/") or text.startswith("//") or "\n" in text:
            return
        words = text.split()
        word = "" if text[-1].isspace() else words[-1]
        done = words if word == "" else words[:-1]
        if not done:
            yield from _matching(word, self.sources.commands(), prefix="/")
            return
        command = find_command(done[0][1:])
        if command is None:
            return
        args = done[1:]
        if command.name == "help":
            if not args:
                yield from _matching(word.lstrip("/"), self.sources.commands())
        elif command.name == "wizard":
            yield from self._wizard(args, word, complete_event)
        elif command.name == "delegate":
            if all(a.startswith("--") for a in args) and word.startswith("-"):
                yield from _matching(word, [f for f in DELEGATE_FLAGS if f[0] not in args])
        elif command.group is not None:
            yield from self._group(command.group, args, word, complete_event)

    def _wizard(self, args: list[str], word: str, event: CompleteEvent) -> Iterator[Completion]:
        if args and args[-1] in SET_OPTIONS:
            names = [a for a in args if not a.startswith("-") and "=" not in a]
            if names:
                yield from _matching(word, self.sources.wizard_fields(names[0]), suffix="=")
            return
        if word.startswith("-"):
            yield from _matching(word, [("--set", "prefill a field: KEY=VALUE"),
                                        (DRY_RUN, "decide only; start no process")])
            return
        positional = [a for i, a in enumerate(args)
                      if not a.startswith("-") and (i == 0 or args[i - 1] not in SET_OPTIONS)]
        if not positional:
            yield from _matching(word, self.sources.wizards())

    def _group(self, group: str, args: list[str], word: str,
               event: CompleteEvent) -> Iterator[Completion]:
        subs = self.sources.subcommands(group)
        if subs and not args:
            if word.startswith("-"):
                yield from _matching(word, self.sources.options(group, None))
            else:
                yield from _matching(word, subs)
            return
        sub = args[0] if subs else None
        previous = args[-1] if args else ""
        if previous in PATH_OPTIONS or (group == "catalog" and sub == "validate"
                                         and len(args) == 1 and not word.startswith("-")):
            yield from self.paths.get_completions(Document(word), event)
        elif previous in ID_OPTIONS or (group == "process" and sub in PROCESS_ID_COMMANDS
                                        and len(args) == 1 and not word.startswith("-")):
            yield from _matching(word, self.sources.process_ids())
        elif word.startswith("-"):
            yield from _matching(word, self.sources.options(group, sub))


class ShellHistory(FileHistory):
    """The shell's history file; a line marked private stays in memory only.

    A wizard's prompt is kept out of the file: it can be long and may hold
    a ``password`` field's answer. Up-arrow still finds it in this session.
    """

    def __init__(self, filename: str) -> None:
        super().__init__(filename)
        self.private_next = False

    def store_string(self, string: str) -> None:
        """Append ``string`` to the file, unless the line was marked private."""
        if self.private_next:
            self.private_next = False
            return
        super().store_string(string)


def shell_bindings() -> KeyBindings:
    """Esc Enter (or Alt-Enter) inserts a new line; Enter still sends the whole buffer."""
    return cast("KeyBindings", newline_bindings())
