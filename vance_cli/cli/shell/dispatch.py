"""``vance shell``: running one line — a task, or a slash command (docs/shell.md).

Rules:
- A task goes through ``cli.delegate.run_delegate``: the code path and the
  output of ``vance delegate --task TEXT``.
- ``/process``, ``/catalog``, ``/recipe`` and ``/log`` run the very Typer
  commands of ``vance process …`` etc. (same options, output, errors and
  exit codes), in a sub-context that shares the shell's workspace — and so
  its global flags. ``/catalog reload`` therefore activates the catalog for
  every later command of the session (and of every other one: the active
  catalog is one record in the state dir).
- ``/wizard NAME`` fills the form on the terminal, renders the prompt and
  hands it back (``LineResult.prefill``) for the REPL to put into its own
  input buffer; Enter then sends it as a task (``send_task``). Without a
  terminal (a script on stdin) every required value must come from
  ``--values FILE`` or ``--set`` (later wins) and the prompt is sent at once.
- A failing line never ends the shell: ``run_line`` returns its exit code,
  after one line on stderr (a VanceError's message, a usage error, or
  ``Type: message`` for a bug — the traceback only with ``--debug``).
  Ctrl-C inside a command (the form, the LLM call, a wait) cancels just
  that command (code 130).

Neither prompt_toolkit nor questionary is imported here at module level.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import typer

from vance_cli.base.errors import (
    EXIT_NO_TURN,
    EXIT_OK,
    InputError,
    VanceError,
)
from vance_cli.base.names import close_matches
from vance_cli.base.records import frozen
from vance_cli.cli import context, output, words
from vance_cli.cli.args import parse_assignments
from vance_cli.cli.ask import TerminalAsker
from vance_cli.cli.boundary import debug_from_env, report, subcommand
from vance_cli.cli.commands.delegate import run_delegate
from vance_cli.cli.commands.wizard import offer_check, read_values_option
from vance_cli.cli.run import exit_code, run_started, work_pairs
from vance_cli.cli.shell.cards import print_cards
from vance_cli.cli.shell.commands import (
    COMMANDS,
    SUMMARIES_DE,
    ParsedLine,
    SlashCommand,
    WizardArgs,
    find_command,
    parse_delegate_args,
    parse_line,
    parse_wizard_args,
    split_arguments,
    unknown_command,
)
from vance_cli.delegate.request import DelegateRequest
from vance_cli.documents.cascade import Kind
from vance_cli.processes.inputs import submit
from vance_cli.processes.model import Process, Status
from vance_cli.wizards.cards import record_use, top_cards
from vance_cli.wizards.followups import split_followups
from vance_cli.wizards.form import fill_form, merge_prefill, require_complete, write_answers
from vance_cli.wizards.loader import find_wizard
from vance_cli.wizards.prompt import RenderContext, build_prompt

if TYPE_CHECKING:
    import typer
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from vance_cli.workspace import Workspace


SAVE_ANSWERS = {"en": ("Save the answers to a file?", "File"),
                "de": ("Die Antworten in einer Datei speichern?", "Datei")}
"""The shell's offer after a wizard run (docs/shell.md)."""


@frozen
class LineResult:
    """What running one line did.

    Attributes:
        code: its exit code (0 success; as the matching ``vance`` command).
        quit: the line asked to leave the shell.
        prefill: text for the next input buffer (a wizard's rendered prompt).
        dry_run: the prefill, once sent, only decides (``/wizard --dry-run``).
    """

    code: int = EXIT_OK
    quit: bool = False
    prefill: str | None = None
    dry_run: bool = False


class Shell:
    """Runs shell lines against one workspace; never raises for a failing line.

    Args:
        ctx: the ``vance shell`` command's Typer context (global flags, workspace).
        dry_run: every task of the session only decides (``vance shell --dry-run``).
        interactive: a person at a terminal (wizards ask; their prompt is edited first).
        debug: print tracebacks of unexpected errors.
        term_input: prompt-toolkit input for wizard forms (tests); None: the terminal.
        term_output: prompt-toolkit output for wizard forms (tests); None: the terminal.
    """

    def __init__(self, ctx: typer.Context, *, dry_run: bool = False, interactive: bool = True,
                 debug: bool = False, term_input: Input | None = None,
                 term_output: Output | None = None) -> None:
        self.ctx = ctx
        self.dry_run = dry_run
        self.interactive = interactive
        self.debug = debug
        self.term_input = term_input
        self.term_output = term_output
        self.listening: str | None = None
        self.cards: dict[str, str] = {}
        """Key → wizard of the quick-start cards on screen; empty once a message was sent."""
        self._listening_recipe = ""
        self.handlers: dict[str, Callable[[str], LineResult]] = {
            "wizard": self._wizard, "delegate": self._delegate, "help": self._help,
            "new": self._new, "wizards": self._cards,
            "quit": lambda _text: LineResult(quit=True),
        }

    @property
    def ws(self) -> Workspace:
        """The session's workspace (built once, closed when the shell ends)."""
        return context.workspace(self.ctx)

    # --- entry points -------------------------------------------------------

    def run_line(self, line: str, where: str = "") -> LineResult:
        """Run one input line; errors become one stderr line and a non-zero code.

        Args:
            line: as typed.
            where: prefix for error lines (``"line 3: "`` in a script).
        """
        parsed = parse_line(line)
        if parsed.kind == "empty":
            return LineResult()
        self.ws.refresh_catalog()  # a reload from another terminal applies from this line
        cards, self.cards = self.cards, {}  # the cards are gone after the first message
        if parsed.kind == "task" and parsed.text.strip() in cards:
            name = cards[parsed.text.strip()]
            return self._guard(lambda: self._wizard(name), where)
        if parsed.kind == "task":
            return self.send_task(parsed.text, where=where)
        as_json = parsed.name.lower() not in ("delegate", "wizard") and \
            "--json" in parsed.text.split()
        return self._guard(lambda: self._command(parsed), where, as_json)

    def send_task(self, text: str, dry_run: bool = False, where: str = "") -> LineResult:
        """Send plain text: to the process that listens, else to the selector.

        A process listens after a task of this shell started it and its turn
        settled waiting (``IDLE``, ``BLOCKED``): the text is its next message,
        and its turn runs here (as ``vance process steer ID TEXT --wait``).
        Otherwise the text is a task, exactly as ``vance delegate --task TEXT
        --wait`` takes it.

        Args:
            text: the line (a typed line, or a wizard's edited prompt).
            dry_run: decide only (also when the shell runs with ``--dry-run``).
            where: prefix for error lines.
        """
        task = text.strip()
        if not task:
            output.info("the prompt is empty: nothing sent")
            return LineResult()
        if self.listening is not None and not (dry_run or self.dry_run):
            return self._guard(lambda: self._reply(task), where)
        return self._guard(lambda: self._send(task, dry_run or self.dry_run), where)

    @property
    def prompt_label(self) -> str:
        """Who takes plain text: ``recipe id`` of the listening process, or "" (the selector)."""
        if self.listening is None:
            return ""
        return f"{self._listening_recipe} {self.listening[:6]}"

    def listen(self, process: Process | None) -> None:
        """Let ``process`` take the next plain text when its turn settled waiting, else nobody."""
        waiting = process is not None and process.status in (Status.IDLE, Status.BLOCKED) \
            and process.turns > 0
        self.listening = process.id if waiting and process is not None else None
        self._listening_recipe = process.recipe if waiting and process is not None else ""

    # --- commands -----------------------------------------------------------

    def _command(self, parsed: ParsedLine) -> LineResult:
        command = find_command(parsed.name)
        if command is None:
            raise unknown_command(parsed.name)
        if command.group is not None:
            return self._passthrough(command, split_arguments(parsed.text))
        return self.handlers[command.name](parsed.text)

    def _send(self, task: str, dry_run: bool, fallback: bool = True,
              background: bool = False) -> LineResult:
        self.listen(None)
        decide_on, block = split_followups(task)  # a /wizard prompt's links stay out
        request = DelegateRequest(task=task, dry_run=dry_run,
                                  decide_on=decide_on if block else None)
        done = run_delegate(self.ws, request, wait=True, fallback=fallback,
                            background=background)
        if done.started is not None and done.started.how == "foreground":
            self.listen(done.started.process)
        code = done.exit_code  # a task that waits for an LLM is said so, not a failed line
        return LineResult(EXIT_OK if code == EXIT_NO_TURN else code)

    def _reply(self, text: str) -> LineResult:
        """Send a message to the listening process and run its turn here."""
        assert self.listening is not None
        process_id = self.listening
        self.listen(None)  # a failure below leaves nobody listening
        submit(self.ws, process_id, text)
        started = run_started(self.ws, process_id, wait=True, as_json=False)
        self.listen(started.process)
        if started.report is not None and started.report.failed:
            output.fields(work_pairs(started))
        return LineResult(exit_code(started.report))

    def _new(self, _text: str) -> LineResult:
        """``/new``: the next plain text is a new task for the selector."""
        if self.listening is not None:
            output.info(f"process {self.listening} no longer listens; text goes to the selector")
        self.listen(None)
        return LineResult()

    def _delegate(self, text: str) -> LineResult:
        args = parse_delegate_args(text)
        return self._send(args.task, args.dry_run or self.dry_run, args.fallback,
                          args.background)  # always a new task

    def group(self, name: str) -> Any:
        """Return the Click command behind ``vance NAME`` (a group or a single command)."""
        command = subcommand(self.ctx.find_root().command, name)
        assert command is not None, name  # every slash command names a real group
        return command

    def _passthrough(self, command: SlashCommand, args: list[str]) -> LineResult:
        assert command.group is not None
        target = self.group(command.group)
        subcommands = target.list_commands(self.ctx) if isinstance(target, click.Group) else None
        if subcommands is not None:
            if not args:
                args = ["--help"]
            elif not args[0].startswith("-") and args[0] not in subcommands:
                raise _unknown_subcommand(command.name, args[0], subcommands)
        return self._invoke(command.group, f"/{command.name}", args)

    def _invoke(self, group: str, label: str, args: list[str]) -> LineResult:
        """Run ``vance GROUP ARGS`` as ``LABEL ARGS``, sharing the shell's workspace."""
        target = self.group(group)
        with target.make_context(label, args, parent=self._base_context()) as sub:
            target.invoke(sub)
        return LineResult()

    def _base_context(self) -> Any:
        """A parent context without a name, so usage lines read ``/process show …``.

        It shares the real root's ``meta`` (where the workspace is cached) and
        ``obj`` (the global flags); the workspace is built first through the
        real root, so it is closed with it.
        """
        root = self.ctx.find_root()
        _ = self.ws
        base = click.Context(root.command, obj=root.obj,
                             help_option_names=list(root.help_option_names))
        base._meta = root.meta
        return base

    def show_cards(self) -> None:
        """Draw the quick-start cards (docs/shell.md); their keys open them until the next line."""
        found = top_cards(self.ws)
        self.cards = {card.key: card.name for card in found}
        print_cards(found, self.ws.settings.lang)

    def _cards(self, _text: str) -> LineResult:
        self.show_cards()
        return LineResult()

    def _wizard(self, text: str) -> LineResult:
        args = parse_wizard_args(split_arguments(text))
        if args.name is None:
            return self._invoke("wizard", "/wizard", ["list"])
        prompt = self._fill_wizard(args)
        if not self.interactive:
            return self._send(prompt, args.dry_run or self.dry_run)
        return LineResult(prefill=prompt, dry_run=args.dry_run)

    def _fill_wizard(self, args: WizardArgs) -> str:
        """Ask the form (on a terminal) and return the rendered prompt."""
        assert args.name is not None
        ws = self.ws
        wizard = find_wizard(ws.cascade(Kind.WIZARDS), args.name)

        prefill = merge_prefill(wizard.spec.fields, read_values_option(args.values),
                                parse_assignments(list(args.sets), "--set"))
        for key in prefill.unknown:
            output.warn(f"'{key}' is not a field of wizard '{wizard.name}' (ignored)")
        lang = ws.settings.lang
        if self.interactive:

            asker = TerminalAsker(lang, input=self.term_input, output=self.term_output)
            answers = fill_form(wizard.spec.fields, prefill.values, asker, lang,
                            wizard.spec.steps_in(lang))
            offer_check(ws, wizard, answers, lang, asker)
        else:
            require_complete(wizard.spec.fields, prefill.values,
                             "the shell reads a script (stdin is not a terminal)",
                             f"give them with /wizard {args.name} --set KEY=VALUE"
                             " or --values FILE")
            answers = dict(prefill.values)
        text = build_prompt(wizard, answers, RenderContext.of(ws)).text
        record_use(ws.db, ws.settings.tenant, wizard.name)
        if self.interactive:
            self._offer_save(asker, wizard.name, answers)
        return text

    def _offer_save(self, asker: TerminalAsker, name: str, answers: Mapping[str, Any]) -> None:
        """After a run, offer to save the answers (as copier keeps its answers file)."""
        question, where = SAVE_ANSWERS["de" if words.german() else "en"]
        try:
            if not asker.confirm(question, False):
                return
            path = asker.line(where, f"{name}-answers.json").strip()
        except (KeyboardInterrupt, EOFError):
            return
        if path:
            write_answers(Path(path).expanduser(), answers)
            output.info(f"answers saved to {path}; replay them with /wizard {name} "
                        f"--values {path}")

    def _help(self, text: str) -> LineResult:
        try:  # the session language (context.settings sets it); a broken config: English
            context.settings(self.ctx)
        except VanceError:
            pass
        args = split_arguments(text)
        if args:
            name = args[0].lstrip("/")
            command = find_command(name)
            if command is None:
                raise unknown_command(name)
            if command.group is not None:
                return self._passthrough(command, [*args[1:], "--help"])
            german = words.german()
            output.fields([("Aufruf" if german else "usage", command.usage),
                           ("tut" if german else "does", _summary(command))])
            return LineResult()
        output.table(None, ("command", "what it does"),
                     ((c.usage, _summary(c)) for c in COMMANDS),
                     caption=words.word("Anything else is a task for the selector, as "
                                        "'vance delegate'."),
                     text=("command", "what it does"))
        return LineResult()

    # --- errors -------------------------------------------------------------

    def _guard(self, action: Callable[[], LineResult], where: str,
               as_json: bool = False) -> LineResult:
        """Run ``action``; turn every failure into one stderr line and an exit code.

        Failures are reported by ``boundary.report``, as ``vance`` reports
        them; with ``as_json`` (a ``--json`` command) an error is also printed
        as its JSON document on stdout. A closed stdout ends the shell.
        """
        try:
            return action()
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise
            code = report(exc, as_json=as_json, debug=self._debug, where=where)
        except Exception as exc:  # one line, and the shell goes on
            code = report(exc, as_json=as_json, debug=self._debug, where=where)
        except KeyboardInterrupt as exc:  # Ctrl-C cancels the line, not the shell
            code = report(exc, as_json=as_json, debug=self._debug, where=where)
        return LineResult(code)

    @property
    def _debug(self) -> bool:
        return self.debug or debug_from_env()


def _summary(command: SlashCommand) -> str:
    """A command's summary in the session language."""
    return SUMMARIES_DE.get(command.name, command.summary) if words.german() else command.summary


def _unknown_subcommand(command: str, word: str, subcommands: Iterable[str]) -> InputError:

    names = sorted(subcommands)
    close = close_matches(word, names, limit=3)
    hint = f" — did you mean {' or '.join(close)}?" if close else ""
    return InputError(f"/{command} has no subcommand '{word}'{hint} (it has {', '.join(names)})",
                      command=command, close=close)
