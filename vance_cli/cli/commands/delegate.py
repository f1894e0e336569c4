"""``vance delegate``: say what you need; the selector picks the recipe and starts the process.

``run_delegate`` is the shared entry for other commands (wizards, the
shell): it delegates one request and gets the started process's first turn
run (``delegate.start.delegate_and_start``, with ``cli.run``'s live output:
in the background, or here with ``--wait``) and prints the result the same
way. With ``--wait`` the decision lines come first, on
stderr, then the answer on stdout (``cli.run.run_here``).
"""

# No ``from __future__ import annotations``: Typer reads the command's annotations on every
# run, and string ones cost an eval each (docs/decisions/0012-startup-path.md).
from typing import TYPE_CHECKING, Annotated

import typer

from vance_cli.base.errors import EXIT_NO_MATCH, EXIT_OK, EXIT_RUNTIME
from vance_cli.base.records import frozen
from vance_cli.cli import context, output
from vance_cli.cli.args import parse_assignments, piped_stdin, read_stdin
from vance_cli.cli.commands.fallback import check_flags, fallback_pairs, make_runner
from vance_cli.delegate.flow import DelegateResult
from vance_cli.delegate.request import DelegateRequest, ItemsFormat, with_material
from vance_cli.delegate.start import delegate_and_start
from vance_cli.workspace import Workspace

if TYPE_CHECKING:
    from vance_cli.processes.start import Started


YesToolsOpt = Annotated[list[str] | None, typer.Option(
    "--yes-tools", metavar="NAME", help="Let the turn call tool NAME (or a pattern: srv.*) "
    "without asking; repeatable; for this command only.")]
"""``--yes-tools``, as ``process_view.YesToolsOpt`` (not imported: that module stays off the
delegate path)."""

def read_task(value: str) -> str:
    """Return the task: ``value`` itself, or stdin when it is ``-`` (white space trimmed)."""
    if value != "-":
        return value.strip()

    return read_stdin("--task", "Reading the task from stdin; end it with Ctrl-D.").strip()


def print_result(result: DelegateResult, as_json: bool = False,
                 started: "Started | None" = None) -> None:
    """Print a delegate result: its JSON document (docs/delegate.md), or fields for people.

    Args:
        result: what the delegate decided and started.
        as_json: print the JSON document.
        started: how the started process's turns were run (people are told), or None.
    """
    if as_json:
        output.emit_json(result.to_json())
        return
    pairs = decision_pairs(result)
    if started is not None:
        from vance_cli.cli.run import work_pairs  # deferred: only a started process has them

        pairs += work_pairs(started)
    output.fields(pairs)


def decision_pairs(result: DelegateResult) -> list[tuple[str, object]]:
    """Return the lines that show a delegate's decision and its process to people."""
    data = result.to_json()
    pairs: list[tuple[str, object]] = [("decision", data["decision"])]
    if data["recipe"]:
        pairs += [("recipe", data["recipe"]), ("engine", data["engine"])]
    else:
        pairs.append(("reason", data["reason"]))
    pairs.append(("rationale", data["rationale"]))
    process = data["process"]
    if process:
        shown = result.current or result.started
        status = shown.label if shown is not None else process["status"]
        pairs.append(("process", f"{process['id']} ({process['name']}, {status})"))
    elif result.dry_run and data["recipe"]:
        pairs.append(("process", "none (dry run: nothing started)"))
    pairs += fallback_pairs(result)
    return pairs


@frozen
class Delegated:
    """What ``run_delegate`` did.

    Attributes:
        result: the delegate result (its process as it is after the turns ran).
        started: how the started process's turns were run, or None (nothing started).
    """

    result: DelegateResult
    started: "Started | None"
    waited: bool = False

    @property
    def exit_code(self) -> int:
        """1: the selector's LLM call or a foreground turn failed; 75: no turn could run.

        75 (``--wait`` only) means the input waits, e.g. no LLM is configured.
        """
        reason = self.result.decision.reason
        if reason is not None and reason.llm_failed:
            return EXIT_RUNTIME
        if self.started is None:
            return EXIT_OK
        from vance_cli.cli.run import exit_code, wait_exit_code  # deferred: a turn ran

        return wait_exit_code(self.started) if self.waited else exit_code(self.started.report)


def run_delegate(ws: Workspace, request: DelegateRequest, as_json: bool = False, *,
                 fallback: bool = True, background: bool = False,
                 fallback_timeout: float | None = None, wait: bool = False,
                 wait_whole_runs: bool = False) -> Delegated:
    """Delegate one request, run its process, print the result (delegate, wizards, the shell).

    Args:
        ws: the command's workspace.
        request: task and process options.
        as_json: print the JSON document instead of human output.
        fallback: run the Slartibartfast fallback for a NONE that means "nothing fits".
        background: run it in a detached worker (``--async-fallback``).
        fallback_timeout: its cutoff in seconds; None → ``fallback.timeout``.
        wait: run the started process's first turn here (streaming) instead of a worker.
        wait_whole_runs: run here, even without ``wait``, a process its engine runs
            whole (a wizard waits for Slartibartfast, as the fallback does, to name
            the new recipe).

    Returns:
        What was decided and started, for callers that act on it (exit codes, follow-ups).

    Raises:
        VanceError: as ``vance_cli.delegate.flow.delegate`` (the boundary maps it).
        KeyboardInterrupt: Ctrl-C in a foreground turn (it settled IDLE first).
    """
    def run(result: DelegateResult, here: bool) -> "Started":
        from vance_cli.cli.run import run_here, run_started  # deferred: a turn runs

        assert result.started is not None
        if here and not as_json:
            return run_here(ws, result.started.id, decision_pairs(result))
        return run_started(ws, result.started.id, wait=here, as_json=as_json)

    done = delegate_and_start(
        ws, request, progress=lambda: output.status(output.SELECTOR_SPINNER),
        fallback=make_runner(fallback, background, fallback_timeout), wait=wait,
        wait_whole_runs=wait_whole_runs, warn=output.warn, starter=run)
    if not (done.here and not as_json):  # run_here printed the decision before the turn
        print_result(done.result, as_json, done.started)
    return Delegated(done.result, done.started, waited=wait)


def _task_and_material(task: str | None, instruction: str | None) -> tuple[str, str | None]:
    """Return the task and what the selector decides on (``decide_on``), from the two forms.

    ``--task TEXT|-`` is the whole task; the argument TASK is an instruction
    that text piped beside it completes (docs/delegate.md "Material").

    Raises:
        typer.BadParameter: neither form was given.
    """
    if task is None and instruction is None:
        raise typer.BadParameter("missing: give the task (as TASK or --task TEXT; or "
                                 "--task-template T --items FILE for a batch)",
                                 param_hint="--task")
    if task is not None or instruction == "-":
        return read_task(task if task is not None else "-"), None
    assert instruction is not None
    return with_material(instruction, piped_stdin("material beside the task"))


app = typer.Typer(add_completion=False)
"""The ``vance delegate`` command (loaded on demand by ``cli.app``)."""


@app.command("delegate")
def command(
    ctx: typer.Context,
    instruction: Annotated[str | None, typer.Argument(
        metavar="[TASK]", show_default=False,
        help="The task in plain words ('-': read it from stdin). Text piped on stdin beside "
             "it is material: the selector decides on TASK, the process gets both.")] = None,
    task: Annotated[str | None, typer.Option(
        "--task", "-t", help="The task in plain words, or '-' to read it from stdin.")] = None,
    name: Annotated[str | None, typer.Option(
        "--name", "-n", help="Process name (default: slug of the task + short suffix).")] = None,
    title: Annotated[str, typer.Option(help="Process title (default: the recipe's).")] = "",
    steer: Annotated[str | None, typer.Option(help="Initial steer message.")] = None,
    param: Annotated[list[str] | None, typer.Option(
        "--param", "-p", help="KEY=VALUE or KEY:=JSON; repeatable; overlays recipe params.")
    ] = None,
    caller: Annotated[str | None, typer.Option(
        help="Calling process id: its recipe's params.model is used; it becomes the parent.",
        metavar="PID")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Decide only; start no process.")] = False,
    require_match: Annotated[bool, typer.Option(
        "--require-match", help="Exit 3 when the decision is NONE.")] = False,
    no_log: Annotated[bool, typer.Option(
        "--no-log", help="Keep the task private: the decision log stores only its hash.")
    ] = False,
    no_fallback: Annotated[bool, typer.Option(
        "--no-fallback", help="On NONE, do not let Slartibartfast design a new recipe.")
    ] = False,
    async_fallback: Annotated[bool, typer.Option(
        "--async-fallback", help="Run Slartibartfast in the background and return at once "
        "(PENDING); its end is an event for --caller (else the session root).")] = False,
    fallback_timeout: Annotated[float | None, typer.Option(
        "--fallback-timeout", metavar="S",
        help="Stop Slartibartfast after S seconds (default: config fallback.timeout, 240).")
    ] = None,
    yes_tools: YesToolsOpt = None,
    wait: Annotated[bool, typer.Option(
        "--wait", "-w", help="Run the process's first turn here and wait for the answer "
        "(it streams in on a terminal); exit 1 if the turn fails. Batch: wait for every "
        "item's turn.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    task_template: Annotated[str | None, typer.Option(
        "--task-template", metavar="T", help="Batch: a Jinja2 task template over each item "
        "({{ item }}, or a JSON item's keys); JSON lines out, one per item.")] = None,
    items: Annotated[str | None, typer.Option(
        "--items", metavar="FILE|-", help="Batch: the items, one a line (plain text or JSON "
        "objects); '-' reads stdin.")] = None,
    items_format: Annotated[ItemsFormat, typer.Option(
        "--items-format", help="Batch: read items as plain lines or JSON lines (auto: JSON "
        "when the first line starts with '{').")] = ItemsFormat.AUTO,
) -> None:
    """Pick the recipe for a task (or NONE) and start a process for it; or one per item."""
    check_flags(no_fallback, async_fallback, fallback_timeout)
    if instruction is not None and task is not None:
        raise typer.BadParameter("give the task once: as the argument TASK or with --task",
                                 param_hint="--task")
    if task_template is not None or items is not None:

        from vance_cli.cli.commands import batch  # deferred: only a batch needs it

        raise typer.Exit(batch.command(
            ctx, task=task if instruction is None else instruction, template=task_template,
            items=items, items_format=items_format,
            name=name, title=title, steer=steer, params=parse_assignments(param, "--param"),
            caller=caller, dry_run=dry_run, require_match=require_match, no_log=no_log,
            fallback=make_runner(not no_fallback, async_fallback, fallback_timeout), wait=wait))
    text, decide_on = _task_and_material(task, instruction)
    request = DelegateRequest(
        task=text, name=name, title=title, steer=steer,
        params=parse_assignments(param, "--param"), caller=caller, dry_run=dry_run,
        log_task=not no_log, decide_on=decide_on, yes_tools=tuple(yes_tools or ()),
    )
    done = run_delegate(context.workspace(ctx), request, as_json, fallback=not no_fallback,
                        background=async_fallback, fallback_timeout=fallback_timeout, wait=wait)
    if done.exit_code:  # the LLM failed: not "nothing fits", even with --require-match
        raise typer.Exit(done.exit_code)
    if require_match and not done.result.decision.matched:
        raise typer.Exit(EXIT_NO_MATCH)
