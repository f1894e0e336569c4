"""``vance wizard list | show | run | render | check | open | lint`` (docs/wizards.md)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vance_cli.base.errors import Cancelled, DocumentError, InputError, require_path
from vance_cli.base.records import frozen
from vance_cli.base.text_input import decode_utf8
from vance_cli.base.wording import counted
from vance_cli.cli import context, output
from vance_cli.cli.args import parse_assignments, read_stdin
from vance_cli.cli.ask import TerminalAsker
from vance_cli.cli.commands.delegate import run_delegate
from vance_cli.delegate.request import DelegateRequest
from vance_cli.documents.cascade import Kind
from vance_cli.wizards.cards import record_use
from vance_cli.wizards.check import CheckResult, check_answers
from vance_cli.wizards.followups import parse_link, split_followups
from vance_cli.wizards.form import (
    fill_form,
    link_prefill,
    merge_prefill,
    read_values,
    require_complete,
    write_answers,
)
from vance_cli.wizards.listing import field_rows, group_wizards, listing_json, wizard_details
from vance_cli.wizards.loader import find_wizard, lint_cascade, lint_paths, load_cascade
from vance_cli.wizards.prompt import RenderContext, build_prompt

if TYPE_CHECKING:
    from vance_cli.wizards.form import Prefill
    from vance_cli.wizards.loader import LoadedWizard, WizardLoadReport
    from vance_cli.workspace import Workspace

app = typer.Typer(help="List, show, run and render prompt wizards.",
                  no_args_is_help=True, add_completion=False)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", "-s", metavar="KEY=VALUE",
    help="Prefill a field (repeatable); KEY:=JSON for lists and repeat entries.")]
ValuesOpt = Annotated[str | None, typer.Option(
    "--values", metavar="FILE|-", help="Values as a JSON or YAML mapping; '-' reads stdin.")]
NoInputOpt = Annotated[bool, typer.Option(
    "--no-input", help="Never prompt: every required value must be given.")]
PrintOpt = Annotated[bool, typer.Option(
    "--print", help="Print the prompt on stdout instead of sending it to the selector.")]
DryRunOpt = Annotated[bool, typer.Option(
    "--dry-run", help="Let the selector decide, but start no process (as vance delegate).")]
SaveAnswersOpt = Annotated[Path | None, typer.Option(
    "--save-answers", metavar="FILE",
    help="Write the answers as JSON to FILE; --values FILE replays them.")]
NameArg = Annotated[str, typer.Argument(help="Wizard name, e.g. gremium.")]

GIVE_VALUES = "give them with --set KEY=VALUE or --values FILE"
"""How ``run`` and ``open`` take values without a terminal (both have these options)."""

LINT_FAILED = 1
"""Exit code of ``vance wizard lint`` when a wizard is broken (as linters do; 2 = usage)."""


def _workspace(ctx: typer.Context) -> Workspace:
    return context.workspace(ctx)


def _wizards(ws: Workspace) -> Any:

    return ws.cascade(Kind.WIZARDS)


def _warn_problems(report: WizardLoadReport) -> None:
    for problem in report.problems:
        layer = f" ({problem.layer.value})" if problem.layer else ""
        output.warn(f"wizard '{problem.name}'{layer} left out: {problem.reason}")


@app.command("list")
def list_(
    ctx: typer.Context,
    category: Annotated[str | None, typer.Option(
        "--category", "-c", help="Only this category (any of its languages).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """List the wizards available in this project, grouped by category."""
    ws = _workspace(ctx)
    lang = ws.settings.lang
    report = load_cascade(_wizards(ws), ws.wizard_cache)
    _warn_problems(report)
    groups = group_wizards(report.wizards, ws.availability_id, lang, category)
    if as_json:
        output.emit_json(listing_json(groups, lang))
        return
    if not groups:
        output.info(f"no wizards available in project '{ws.availability_id}'")
        return
    rows = [(group.category, w.spec.title_in(lang), w.name,
             w.layer.value if w.layer else "", w.spec.description_in(lang))
            for group in groups for w in group.wizards]
    output.table(None, ("category", "title", "name", "layer", "description"), rows,
                 one_line=("description",), text=("title",), group=("category",))


@app.command("show")
def show(ctx: typer.Context, name: NameArg, as_json: JsonFlag = False) -> None:
    """Show a wizard's fields (never its templates)."""
    ws = _workspace(ctx)
    wizard = find_wizard(_wizards(ws), name)
    details = wizard_details(wizard, ws.settings.lang)
    if as_json:
        output.emit_json(details)
        return
    output.fields([(k, details[k]) for k in ("name", "title", "description", "category",
                                             "layer", "path")]
                  + [("availableIn", ", ".join(details["availableIn"]) or "everywhere")])
    output.table(None, ("field", "type", "label", "required", "default", "details"),
                 field_rows(wizard, ws.settings.lang), text=("label", "default", "details"))


def read_values_option(values: str | None) -> dict[str, Any]:
    """Read ``--values FILE|-`` (JSON or YAML); ``{}`` when not given.

    Raises:
        DocumentError: unreadable, not UTF-8, or not valid JSON/YAML.
        InputError: not a mapping.
    """
    if values is None:
        return {}
    if values == "-":

        return read_values(read_stdin(
            "--values", "Reading values (JSON or YAML) from stdin; end them with Ctrl-D."),
            "<stdin>")

    require_path(values, "values file")
    try:
        data = Path(values).read_bytes()
    except OSError as exc:
        raise DocumentError(f"cannot read values file: {exc.strerror}", path=values) from None
    return read_values(decode_utf8(data, f"values file '{values}'", field="--values"), values)


def _prefill(wizard: LoadedWizard, values: str | None, sets: list[str] | None,
             link: Mapping[str, Any] | None = None) -> Prefill:
    """Merge the prefills: a link's values, then ``--values``, then ``--set`` (later wins)."""
    prefill = merge_prefill(wizard.spec.fields, link or {}, read_values_option(values),
                            parse_assignments(sets, "--set"))
    for key in prefill.unknown:
        output.warn(f"'{key}' is not a field of wizard '{wizard.name}' (ignored)")
    return prefill


@app.command("render")
def render(
    ctx: typer.Context, name: NameArg, values: ValuesOpt = None, set_: SetOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Render a wizard's prompt from values, without asking anything."""
    ws = _workspace(ctx)
    wizard = find_wizard(_wizards(ws), name)
    prefill = _prefill(wizard, values, set_)
    prompt = build_prompt(wizard, prefill.values, RenderContext.of(ws))
    if as_json:
        output.emit_json(prompt.to_json())
    else:
        output.emit_text(prompt.text)


def print_check(result: CheckResult) -> None:
    """Print a check's suggestions (``field: suggestion``) and notes, or that there were none."""
    for note in result.notes:
        output.warn(note)
    for item in result.suggestions:
        output.info(f"{item.field}: {item.suggestion}")
    if not result.suggestions and not result.notes:
        output.info("no suggestions: the answers look fine")


@app.command("check")
def check(
    ctx: typer.Context, name: NameArg, values: ValuesOpt = None, set_: SetOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Ask the LLM to check the answers with the wizard's validatorPrompt; never fails them.

    Prints suggestions as FIELD: TEXT (or {"suggestions": [{field, suggestion}]} with
    --json) and exits 0, also when no LLM is configured.
    """
    ws = _workspace(ctx)
    wizard = find_wizard(_wizards(ws), name)
    prefill = _prefill(wizard, values, set_)
    result = check_answers(ws, wizard, prefill.values, RenderContext.of(ws))
    if as_json:
        for note in result.notes:
            output.warn(note)
        output.emit_json(result.to_json())
    else:
        print_check(result)


def offer_check(ws: Workspace, wizard: LoadedWizard, answers: Mapping[str, Any],
                lang: str, asker: Any) -> None:
    """Offer the final step's "check" before "send" (a wizard with a validatorPrompt only).

    Asks whether to check the answers with the LLM first, and prints what it suggests.
    """
    if wizard.spec.validator_prompt is None:
        return
    if not asker.confirm(CHECK_QUESTION["de" if lang.lower().startswith("de") else "en"],
                         False):
        return
    print_check(check_answers(ws, wizard, answers, RenderContext.of(ws)))


CHECK_QUESTION = {"en": "Check the answers with the LLM before sending?",
                  "de": "Die Antworten vor dem Senden vom LLM prüfen lassen?"}
"""The question of the "check" step (docs/wizards.md "Checking answers")."""


@app.command("run")
def run(
    ctx: typer.Context, name: NameArg, set_: SetOpt = None, values: ValuesOpt = None,
    no_input: NoInputOpt = False, print_: PrintOpt = False, dry_run: DryRunOpt = False,
    as_json: JsonFlag = False, save_answers: SaveAnswersOpt = None,
) -> None:
    """Fill a wizard on the terminal, edit the prompt, and send it to the selector."""
    ws = _workspace(ctx)
    wizard = find_wizard(_wizards(ws), name)
    flow = _Flow(no_input=no_input, print_only=print_, dry_run=dry_run, as_json=as_json,
                 stdin_used=values == "-", save_answers=save_answers)
    _run_flow(ctx, wizard, _prefill(wizard, values, set_), flow)


@app.command("open")
def open_(
    ctx: typer.Context,
    uri: Annotated[str, typer.Argument(
        metavar="URI", help="A link such as 'vance:/wizards/NAME?kind=wizard&key=value'.")],
    set_: SetOpt = None, values: ValuesOpt = None,
    no_input: NoInputOpt = False, print_: PrintOpt = False, dry_run: DryRunOpt = False,
    as_json: JsonFlag = False,
) -> None:
    """Run the wizard a follow-up link names, with the link's values prefilled.

    --values and --set complete or override them: the link first, then
    --values, then --set (later wins).
    """
    link = parse_link(uri)
    ws = _workspace(ctx)
    wizard = find_wizard(_wizards(ws), link.name)
    flow = _Flow(no_input=no_input, print_only=print_, dry_run=dry_run, as_json=as_json,
                 stdin_used=values == "-")
    linked = link_prefill(wizard.spec.fields, link.values).values
    _run_flow(ctx, wizard, _prefill(wizard, values, set_, linked), flow)


@frozen
class _Flow:
    """How ``run``/``open`` proceed: the flags that shape asking and submitting."""

    no_input: bool = False
    print_only: bool = False
    dry_run: bool = False
    as_json: bool = False
    stdin_used: bool = False
    save_answers: Path | None = None


def _run_flow(ctx: typer.Context, wizard: LoadedWizard, prefill: Prefill, flow: _Flow) -> None:
    """Ask (on a terminal), render, let the person edit, then print or delegate."""
    ws = _workspace(ctx)
    lang = ws.settings.lang
    interactive = not flow.no_input and not flow.stdin_used and sys.stdin.isatty()
    asker = None
    if interactive:

        asker = TerminalAsker(lang)
        answers = fill_form(wizard.spec.fields, prefill.values, asker, lang,
                            wizard.spec.steps_in(lang))
    else:
        why = ("--no-input" if flow.no_input else
               "stdin holds the values" if flow.stdin_used else "stdin is not a terminal")
        require_complete(wizard.spec.fields, prefill.values, why, GIVE_VALUES)
        answers = dict(prefill.values)
    text = build_prompt(wizard, answers, RenderContext.of(ws)).text
    if interactive:
        record_use(ws.db, ws.settings.tenant, wizard.name)
    if flow.save_answers is not None:
        write_answers(flow.save_answers, answers)
        output.info(f"answers saved to {flow.save_answers}; replay them with --values "
                    f"{flow.save_answers}")
    if asker is not None:
        offer_check(ws, wizard, answers, lang, asker)
        text = _edited(asker, text, flow.print_only)
    if flow.print_only:
        output.emit_json({"prompt": text}) if flow.as_json else output.emit_text(text)
        return
    _submit(ws, text, flow)


def _edited(asker: Any, text: str, print_only: bool) -> str:

    try:
        edited = str(asker.edit_prompt(text, print_only))
    except (KeyboardInterrupt, EOFError):
        raise Cancelled() from None
    if not edited.strip():
        raise InputError("the prompt is empty: nothing to send")
    return edited


def _submit(ws: Workspace, text: str, flow: _Flow) -> None:
    """Send the prompt to the delegate selector: the code path and output of ``vance delegate``."""
    decide_on, block = split_followups(text)  # the links are for the assistant, not the selector
    request = DelegateRequest(task=text, dry_run=flow.dry_run,
                              decide_on=decide_on if block else None)
    # a whole run (Slartibartfast) runs here, not in the background: it then prints the
    # new recipe's name and how to start and promote it, as the fallback does
    done = run_delegate(ws, request, flow.as_json, wait_whole_runs=True)
    if done.exit_code:  # the selector's LLM call or the first turn failed
        raise typer.Exit(done.exit_code)


@app.command("lint")
def lint(
    ctx: typer.Context,
    paths: Annotated[list[Path] | None, typer.Argument(
        metavar="[PATH]...", help="Wizard files or folders; none: every layer.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Check wizard files: each one OK or the reason it fails to load (exit 1 if any fails)."""
    report = lint_paths(paths) if paths else lint_cascade(_wizards(_workspace(ctx)))
    if as_json:
        output.emit_json(report.to_json())
    else:
        output.table(None, ("wizard", "layer", "result"),
                     ((o.name, o.layer.value if o.layer else str(o.path),
                       "OK" if o.ok else f"BROKEN: {o.reason}") for o in report.outcomes),
                     caption=f"{counted(len(report.outcomes), 'wizard')},"
                             f" {len(report.problems)} broken", text=("result",))
    if not report.ok:
        raise typer.Exit(LINT_FAILED)
