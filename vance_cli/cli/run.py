"""Running a process's turns from the command line: live output, what people are told, exit codes.

- In the foreground (``--wait``, ``vance process run``, the shell) the
  answer streams to stdout as it arrives on a terminal; on a pipe the
  settled turn's answer is written whole (never with ``--json``); progress
  lines go to stderr, on a terminal only.
- In the background, people are told where the work runs and how to get
  the answer (``vance process wait``, ``result``, ``follow``).
- Without an LLM the process waits ``IDLE``; people are told how to
  configure one and how to run the waiting turn afterwards.
- Exit codes: 0 when the turn settled (``IDLE``, ``BLOCKED``, ``DONE``), 1 when
  it failed (``STALE``, with the reason; ``STOPPED``); Ctrl-C is 130.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import EXIT_NO_TURN, EXIT_OK, EXIT_RUNTIME
from vance_cli.cli import output
from vance_cli.processes.next_steps import Happened, NextSteps, Step, next_steps
from vance_cli.processes.runtime import TurnReport
from vance_cli.processes.start import Started, start
from vance_cli.processes.turn import NullSink, TurnSink

if TYPE_CHECKING:
    from vance_cli.processes.model import Process
    from vance_cli.workspace import Workspace

LLM_HINT = ("configure one with 'vance config set llm.base_url URL' (any OpenAI-compatible "
            "endpoint, or VANCE_LLM_BASE_URL; 'vance config show' lists every setting)")
"""How to get an LLM, for processes that wait for one."""


class TerminalSink:
    """A running turn's live output for people: the answer on stdout, progress on stderr.

    On a terminal the answer streams in as it arrives, a spinner on stderr
    (terminal only) until its first piece; text that follows a progress line
    (the next phase of an orchestrator) starts after a blank line, so the
    answers printed one after another stay apart. On a pipe only the turn's
    answer is written, whole, once the turn settled (``finish``): a script
    reading stdout gets the result, not the text of every worker an
    orchestrator ran on the way.

    Args:
        live: stream every piece; None: when stdout is a terminal.
        waiting: the spinner's line until the first piece, or None for no spinner.
    """

    yes_tools: tuple[str, ...] = ()
    """Tools the command allows without asking (``--yes-tools``)."""

    def __init__(self, live: bool | None = None, waiting: str | None = None) -> None:
        self.live = sys.stdout.isatty() if live is None else live
        self.ask_tool = self._ask_tool if sys.stdin.isatty() else None
        """Asks the person about a tool call (the gate's ``ask``); None: no one to ask."""
        self.wrote = False
        self._ends_with_newline = True
        self._gap = False
        self._spinner = output.Spinner(waiting) if waiting is not None else None

    def text(self, piece: str) -> None:
        """Write a piece of the answer to stdout at once (on a terminal)."""
        if not piece or not self.live:
            return
        self._stop_spinner()
        if self._gap and not piece.startswith("\n"):
            output.stream_text("\n" if self._ends_with_newline else "\n\n")
        self._gap = False
        output.stream_text(piece)
        self.wrote = True
        self._ends_with_newline = piece.endswith("\n")

    def status(self, line: str) -> None:
        """Write a progress line to stderr (terminal only); later text starts apart."""
        self._stop_spinner()
        self._gap = self.wrote
        if sys.stderr.isatty():
            self.end()  # a progress line never lands in the middle of an answer's line
            output.note(line)

    def _ask_tool(self, tool: str, arguments: Mapping[str, Any]) -> str:
        """Ask whether the turn may call ``tool`` with ``arguments``: yes, no or always."""
        from vance_cli.cli.ask import ask_tool_call  # deferred: prompt-toolkit, only to ask

        self._stop_spinner()
        self.end()
        return ask_tool_call(tool, arguments)

    def finish(self, reply: str | None) -> None:
        """Write the settled turn's answer unless it streamed here.

        On a pipe it is written whole; on a terminal only when nothing
        streamed (an engine that runs a whole process, as Slartibartfast,
        leaves its result — the new recipe and how to use it — only there).
        """
        self._stop_spinner()
        if (self.live and self.wrote) or not reply:
            return
        output.stream_text(reply)
        self.wrote = True
        self._ends_with_newline = reply.endswith("\n")

    def end(self) -> None:
        """End the answer with a line break (so the lines that follow start on their own)."""
        self._stop_spinner()
        if self.wrote and not self._ends_with_newline:
            output.stream_text("\n")
            self._ends_with_newline = True

    def _stop_spinner(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None


WAITING = "waiting for the answer…"
"""The spinner's line until a foreground turn's first token (stderr, terminal only)."""


def sink_for(as_json: bool, spinner: bool = True, yes_tools: tuple[str, ...] = ()) -> TurnSink:
    """Return the sink of a foreground turn: none with ``--json``, the terminal otherwise.

    Args:
        as_json: the command prints JSON (no live output).
        spinner: show the spinner until the first token (a turn runs here).
        yes_tools: tools the command allows without asking (``--yes-tools``).
    """
    sink = NullSink() if as_json else TerminalSink(waiting=WAITING if spinner else None)
    sink.yes_tools = yes_tools
    return sink


def run_started(ws: Workspace, process_id: str, *, wait: bool, as_json: bool) -> Started:
    """Get a process's pending turns run (``processes.start``) with the command's live output.

    Raises:
        KeyboardInterrupt: Ctrl-C in a foreground turn (it settled IDLE first).
    """
    sink = sink_for(as_json, spinner=wait)
    try:
        started = start(ws, process_id, wait=wait, sink=sink)
        if isinstance(sink, TerminalSink) and started.report is not None:
            sink.finish(started.report.reply)
        return started
    finally:
        if isinstance(sink, TerminalSink):
            sink.end()


def run_here(ws: Workspace, process_id: str, pairs: list[tuple[str, Any]]) -> Started:
    """Run a process's pending turns here in the shape every ``--wait`` prints.

    First ``pairs`` (what is known before the turn: the decision, the
    process, the queued message) on stderr; a spinner until the first token
    (terminal only); the answer on stdout (streamed on a terminal, whole on
    a pipe); then, on stderr, what went wrong or why no turn ran
    (``work_pairs``). So a pipe's stdout holds the answer alone
    (docs/processes.md "Where turns run").

    Raises:
        KeyboardInterrupt: Ctrl-C in the turn (it settled IDLE first).
    """
    output.fields(pairs, err=True)
    started = run_started(ws, process_id, wait=True, as_json=False)
    after = work_pairs(started)
    if after:
        output.fields(after, err=True)
    return started


def state_of(process: Process) -> str:
    """Return a process's status as people read it, e.g. ``IDLE`` or ``CLOSED/FAILED``."""
    return process.label


def work_pairs(started: Started) -> list[tuple[str, Any]]:
    """Return the lines that tell people where the work of a process runs (may be empty).

    They render ``processes.next_steps``: ``work`` says what happened, ``then``
    the commands to run next.
    """
    return render_steps(next_steps(started))


def render_steps(view: NextSteps) -> list[tuple[str, Any]]:
    """Return a ``NextSteps`` view as ``work`` / ``then`` lines (may be empty)."""
    process, happened = view.process, view.happened
    if happened is Happened.BACKGROUND:
        work = f"runs in the background ({view.where})"
    elif happened is Happened.WAITING_FOR_LLM:
        work = f"waits for an LLM: no LLM is configured; {LLM_HINT}"
    elif happened is Happened.RUNNING:
        work = (f"a turn is under way ({view.where}); it takes the new input"
                " next")
    elif happened is Happened.CLOSED:
        work = f"none: the process is {process.label}" + (
            f" ({view.reason})" if view.reason else "")
    elif happened is Happened.NO_ENGINE:
        work = f"none: engine '{process.engine}' has no local implementation yet"
    elif happened is Happened.FAILED:
        work = f"failed: {view.reason}"
    else:
        return []
    then = _commands(process.id, view.steps)
    return [("work", work)] + ([("then", then)] if then else [])


_COMMANDS = {Step.WAIT: "vance process wait {pid}", Step.RESULT: "vance process result {pid}",
             Step.RUN: "vance process run {pid}"}
"""The command of each next step (``Step.FOLLOW`` is offered as the alternative to these)."""


def _commands(pid: str, steps: tuple[Step, ...]) -> str:
    """The ``then`` line: the steps' commands, ``;``-separated (empty: nothing to run)."""
    line = "; ".join(_COMMANDS[s].format(pid=pid) for s in steps if s in _COMMANDS)
    if Step.FOLLOW in steps:
        line += f" (or vance process follow {pid})"
    return line


def exit_code(report: TurnReport | None) -> int:
    """Return 0 for a settled turn (or none), 1 for a failed one."""
    return EXIT_RUNTIME if report is not None and report.failed else EXIT_OK


def wait_exit_code(started: Started) -> int:
    """Return the exit code of a ``--wait``: 0 settled, 1 failed, 75 when no turn could run.

    Rule: docs/exit-codes.md (75: the input waits — no LLM, a closed process …).
    """
    if next_steps(started).input_waits:
        return EXIT_NO_TURN
    return exit_code(started.report)
